/**
 * Case 5a end to end (design beyond-rlc 7.4, tests C5-07 and C5-10): a Z-order OPTIMIZE loses to
 * a DELETE that commits while the OPTIMIZE writes. With `optimize.zorder.conflictReconciliation.enabled`
 * it remaps the winner's deletions through the permutation it kept while writing, with or without
 * row tracking, and commits; a winner that deleted a whole source has that source fully masked in
 * the outputs. A winner whose pre-image of a source is not the deletion vector the OPTIMIZE read
 * (a different base, S4) aborts it, and so does the flag being off.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { ConcurrentModificationError } from '../../src/errors/index.js'
import type { AddFile } from '../../src/protocol/actions.js'
import { createAddFile, createRemoveFile } from '../../src/protocol/actions.js'
import { DeltaTable } from '../../src/table/delta-table.js'
import { addsOf, closeHooked, commitActions, openWithHook, removesOf } from './ops-support.js'

const FLAG = 'optimize.zorder.conflictReconciliation.enabled'

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

/** Three files of 40 rows (ids 0..119), spread over x and y. */
async function threeFiles(properties: Record<string, string>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'delta-rlc-case5a-'))
  roots.push(root)
  const dir = join(root, 't')
  const table = await DeltaTable.create(dir, {
    schema: 'id long not null, x int, y int',
    properties: { 'delta.enableDeletionVectors': 'true', ...properties },
  })
  try {
    for (let f = 0; f < 3; f++) {
      await table.append(
        Array.from({ length: 40 }, (_, i) => {
          const k = f * 40 + i
          return { id: BigInt(k), x: (k * 37) % 101, y: (k * 53) % 89 }
        }),
      )
    }
  } finally {
    await table.close()
  }
  return dir
}

/** Live rows as sorted `"id,x,y"` (with `@row id` when tracked). */
async function live(table: DeltaTable, tracked = false): Promise<string[]> {
  const rows = await table.scan({ withRowTracking: tracked }).toArray()
  return rows
    .map((r) => `${r.id},${r.x},${r.y}${tracked ? `@${r._row_id}` : ''}`)
    .sort((a, b) => Number(a.split(',')[0]) - Number(b.split(',')[0]))
}

function without(rows: readonly string[], ids: ReadonlySet<number>): string[] {
  return rows.filter((r) => !ids.has(Number(r.split(',')[0])))
}

/** A Z-order OPTIMIZE of `dir` during which `winner` commits; returns its outcome. */
async function zOrderLosingTo(
  dir: string,
  flags: Record<string, boolean>,
  winner: (other: DeltaTable) => Promise<unknown>,
): Promise<{ loser: DeltaTable; result: Awaited<ReturnType<DeltaTable['optimize']>> | Error }> {
  const other = await DeltaTable.open(dir)
  const loser = await openWithHook(dir, 'zOrder', () => winner(other), { conflicts: flags })
  try {
    const result = await loser.optimize({ zOrderBy: ['x', 'y'] }).catch((e: unknown) => e as Error)
    return { loser, result }
  } finally {
    await other.close()
  }
}

describe('Case 5a: a Z-order OPTIMIZE that loses to a DELETE', () => {
  for (const tracked of [false, true]) {
    it(`C5-07 remaps the winner's deletions through the kept permutation (${tracked ? 'with' : 'without'} row tracking)`, async () => {
      const dir = await threeFiles(tracked ? { 'delta.enableRowTracking': 'true' } : {})
      const reader = await DeltaTable.open(dir)
      const before = await live(reader, tracked)
      await reader.close()
      const deleted = new Set([3, 17, 41, 42, 99])
      const { loser, result } = await zOrderLosingTo(dir, { [FLAG]: true }, (other) =>
        other.delete('id IN (3, 17, 41, 42, 99)'),
      )
      try {
        assert.ok(!(result instanceof Error), String(result))
        assert.ok(result.committed)
        assert.deepEqual(
          result.reconciliations.map((r) => [r.kind, r.winnerOperation, r.detail.rows]),
          [['case5a-zorder-forward', 'DELETE', 5]],
        )
        assert.deepEqual(await live(loser, tracked), without(before, deleted))
        const actions = await commitActions(dir, result.version)
        const adds = addsOf(actions)
        const removes = removesOf(actions)
        assert.ok([...adds, ...removes].every((a) => !a.dataChange))
        // The outputs hide exactly the five rows; every source's tombstone removes what is live.
        assert.equal(
          adds.reduce((n, a) => n + Number(a.deletionVector?.cardinality ?? 0n), 0),
          5,
        )
        assert.equal(removes.length, 3)
        const snap = await loser.snapshot()
        assert.deepEqual(
          snap
            .activeFiles()
            .map((f) => f.path)
            .sort(),
          adds.map((a) => a.path).sort(),
        )
      } finally {
        await closeHooked(loser)
      }
    })
  }

  it('C5-07 a winner that deletes a whole source has it fully masked in the outputs', async () => {
    const dir = await threeFiles({ 'delta.enableRowTracking': 'true' })
    const reader = await DeltaTable.open(dir)
    const before = await live(reader, true)
    await reader.close()
    const { loser, result } = await zOrderLosingTo(dir, { [FLAG]: true }, (other) =>
      other.delete('id >= 40 AND id < 80'),
    )
    try {
      assert.ok(!(result instanceof Error), String(result))
      assert.deepEqual(
        result.reconciliations.map((r) => [r.kind, r.detail.rows]),
        [['case5a-zorder-forward', 40]],
      )
      const gone = new Set(Array.from({ length: 40 }, (_, i) => 40 + i))
      assert.deepEqual(await live(loser, true), without(before, gone))
      // The removed source is not removed twice: its tombstone was dropped.
      const actions = await commitActions(dir, result.version)
      assert.equal(removesOf(actions).length, 2)
    } finally {
      await closeHooked(loser)
    }
  })

  it('successive winners on one source compose against the re-pointed tombstone', async () => {
    const dir = await threeFiles({})
    const reader = await DeltaTable.open(dir)
    await reader.delete('id = 5')
    const before = await live(reader)
    await reader.close()
    const { loser, result } = await zOrderLosingTo(dir, { [FLAG]: true }, async (other) => {
      await other.delete('id = 6')
      await other.delete('id IN (7, 50)')
    })
    try {
      assert.ok(!(result instanceof Error), String(result))
      assert.deepEqual(
        result.reconciliations.map((r) => [r.kind, r.detail.rows]),
        [
          ['case5a-zorder-forward', 1],
          ['case5a-zorder-forward', 2],
        ],
      )
      assert.deepEqual(await live(loser), without(before, new Set([6, 7, 50])))
    } finally {
      await closeHooked(loser)
    }
  })

  it('aborts with the flag off, and the winner stands', async () => {
    const dir = await threeFiles({})
    const reader = await DeltaTable.open(dir)
    const before = await live(reader)
    const { loser, result } = await zOrderLosingTo(dir, {}, (other) => other.delete('id = 17'))
    try {
      assert.ok(result instanceof ConcurrentModificationError, String(result))
      assert.deepEqual(await live(reader), without(before, new Set([17])))
      assert.equal((await reader.snapshot()).activeFiles().length, 3)
    } finally {
      await closeHooked(loser)
      await reader.close()
    }
  })

  it('C5-10 aborts when the winner removed a source under another deletion vector than the OPTIMIZE read (a different base)', async () => {
    const dir = await threeFiles({})
    const reader = await DeltaTable.open(dir)
    await reader.delete('id = 1')
    const before = await live(reader)
    const { loser, result } = await zOrderLosingTo(dir, { [FLAG]: true }, async (other) => {
      // A DELETE the OPTIMIZE reconciles, then a writer that removes the source as if it had no
      // deletion vector and re-adds it with the one it has: that winner's pre-image is not the
      // base the OPTIMIZE's tombstone now removes.
      await other.delete('id = 2')
      const snap = await other.snapshot()
      const f = snap.activeFiles().find((a) => a.deletionVector !== undefined) as AddFile
      const { deletionVector: _dv, ...bare } = f
      const txn = await other.begin()
      txn.stageActions(
        [
          { remove: createRemoveFile({ ...bare, deletionTimestamp: 1n, dataChange: true }) },
          { add: createAddFile({ ...f, dataChange: true }) },
        ],
        { operation: 'DELETE' },
      )
      await txn.commit()
    })
    try {
      assert.ok(
        result instanceof ConcurrentModificationError,
        result instanceof Error
          ? `${result.name}: ${result.message}`
          : JSON.stringify(result.reconciliations),
      )
      assert.match(`${result.message} ${result.hint}`, /a different base/)
      assert.deepEqual(await live(reader), without(before, new Set([2])))
      assert.equal((await reader.snapshot()).activeFiles().length, 3)
    } finally {
      await closeHooked(loser)
      await reader.close()
    }
  })
})
