/**
 * Case 5b against a Z-order OPTIMIZE whose outputs already carry deletion vectors (design
 * beyond-rlc 7.8, edge 11): the OPTIMIZE lost to a DELETE while it wrote and reconciled through
 * Case 5a, so its outputs mask the rows that DELETE removed. A DML that read before both then
 * loses to the DELETE (Case 2) and to the OPTIMIZE (Case 5b): it commits, its rows masked on top
 * of the outputs' deletion vectors, unless it deletes a row the DELETE deleted first, which
 * aborts it and is never applied twice. A DML that only read relocated files commits as it is.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { ConcurrentModificationError } from '../../src/errors/index.js'
import { DeltaTable } from '../../src/table/delta-table.js'
import {
  addsOf,
  closeHooked,
  commitActions,
  liveWithRowIds,
  openWithHook,
  relocationTable,
} from './ops-support.js'

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

/** The relocation table in a fresh temp directory. */
async function fourFiles(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'delta-rlc-case5b-dv-'))
  roots.push(root)
  return relocationTable(root)
}

function without(rows: ReadonlyMap<number, string>, ids: Iterable<number>): Map<number, string> {
  const out = new Map(rows)
  for (const id of ids) out.delete(id)
  return out
}

/** Deletion-vector cardinality over the live files of the table. */
async function deletedInLiveFiles(dir: string): Promise<number> {
  const table = await DeltaTable.open(dir)
  try {
    return (await table.snapshot())
      .activeFiles()
      .reduce((n, f) => n + Number(f.deletionVector?.cardinality ?? 0n), 0)
  } finally {
    await table.close()
  }
}

type Txn = Awaited<ReturnType<DeltaTable['begin']>>

/**
 * A DML staged on the table as it is, then a Z-order OPTIMIZE during which `dmlWinner` commits
 * (the OPTIMIZE reconciles through Case 5a, its outputs carrying deletion vectors), then the DML's
 * commit. Everything runs with `conflicts: 'all'`.
 *
 * @returns the DML's commit result or error, and the OPTIMIZE's commit version
 */
async function dmlAfterReconciledZOrder(dir: string, dml: (txn: Txn) => Promise<unknown>, dmlWinner: string) {
  const loser = await DeltaTable.open(dir, { conflicts: 'all' })
  const other = await DeltaTable.open(dir)
  const zorder = await openWithHook(dir, 'zOrder', () => other.delete(dmlWinner), { conflicts: 'all' })
  try {
    const txn = await loser.begin()
    await dml(txn)
    const optimized = await zorder.optimize({ zOrderBy: ['x', 'y'] })
    assert.ok(optimized.committed)
    assert.deepEqual(
      optimized.reconciliations.map((r) => r.kind),
      ['case5a-zorder-forward'],
    )
    const outputs = addsOf(await commitActions(dir, optimized.version))
    assert.ok(
      outputs.some((o) => (o.deletionVector?.cardinality ?? 0n) > 0n),
      'the OPTIMIZE outputs carry deletion vectors',
    )
    const result = await txn.commit().catch((e: unknown) => e as Error)
    return { result, optimizedVersion: optimized.version }
  } finally {
    await closeHooked(zorder)
    await other.close()
    await loser.close()
  }
}

describe('Case 5b against a Z-order OPTIMIZE that reconciled Case 5a (outputs with deletion vectors)', () => {
  it('a DELETE commits: its rows and the earlier DELETE rows are both gone, every other id live once', async () => {
    const dir = await fourFiles()
    const before = await liveWithRowIds(dir)
    const { result, optimizedVersion } = await dmlAfterReconciledZOrder(
      dir,
      (txn) => txn.delete('id IN (10, 110, 160)'),
      'id IN (11, 111)',
    )
    assert.ok(!(result instanceof Error), String(result))
    assert.ok(result.committed)
    assert.deepEqual(
      result.reconciliations.map((r) => r.kind),
      ['case2-dv-union', 'case5b-zorder-reverse'],
    )
    assert.equal(result.reconciliations[1]!.detail.rows, 3)
    assert.equal(BigInt(result.reconciliations[1]!.winnerVersion), optimizedVersion)
    assert.deepEqual(await liveWithRowIds(dir), without(before, [10, 110, 160, 11, 111]))
    // The outputs' deletion vectors are the OPTIMIZE's (2 rows) with the DML's 3 added.
    assert.equal(await deletedInLiveFiles(dir), 5)
  })

  it('an UPDATE commits: one live copy per updated id, on its row id, with the new value', async () => {
    const dir = await fourFiles()
    const before = await liveWithRowIds(dir)
    const updated = [12, 62, 112]
    const { result } = await dmlAfterReconciledZOrder(
      dir,
      (txn) => txn.update({ where: `id IN (${updated.join(', ')})`, set: { v: "'new'" } }),
      'id IN (13, 113)',
    )
    assert.ok(!(result instanceof Error), String(result))
    assert.deepEqual(
      result.reconciliations.map((r) => r.kind),
      ['case2-dv-union', 'case5b-zorder-reverse'],
    )
    const expected = without(before, [13, 113])
    for (const id of updated) {
      const [values, rowId] = before.get(id)!.split('@')
      const [x, y] = values!.split(',')
      expected.set(id, `${x},${y},new@${rowId}`)
    }
    assert.deepEqual(await liveWithRowIds(dir), expected)
    assert.equal(await deletedInLiveFiles(dir), 2 + updated.length)
  })

  it('a DELETE of a row the earlier DELETE removed (remapped into the outputs by Case 5a) aborts and deletes nothing twice', async () => {
    const dir = await fourFiles()
    const before = await liveWithRowIds(dir)
    const { result } = await dmlAfterReconciledZOrder(
      dir,
      (txn) => txn.delete('id IN (20, 120)'),
      'id IN (20)',
    )
    assert.ok(result instanceof ConcurrentModificationError, String(result))
    // It loses to the earlier DELETE first (the same row, Case 2), before the OPTIMIZE is reached.
    assert.match(result.message, /The winning commit is version \d+ \(DELETE\)/)
    // Only the winner's deletion holds; the losing DELETE's other row is still live.
    assert.deepEqual(await liveWithRowIds(dir), without(before, [20]))
    assert.equal(await deletedInLiveFiles(dir), 1)
  })
})

describe('Case 5b: a DML that only read relocated files', () => {
  it('commits as it is: the relocation changed no row it read', async () => {
    const dir = await fourFiles()
    const loser = await DeltaTable.open(dir, { conflicts: 'all' })
    const other = await DeltaTable.open(dir)
    let txn: Txn | undefined
    // While the OPTIMIZE writes: a row is appended, and a DELETE begins that takes it out. Its
    // predicate is not prunable by statistics, so it reads the files the OPTIMIZE relocates too.
    const zorder = await openWithHook(
      dir,
      'zOrder',
      async () => {
        await other.append([{ id: 1000n, x: 1, y: 1, v: 'late' }])
        txn = await loser.begin()
        await txn.delete('id + 0 = 1000')
      },
      { conflicts: 'all' },
    )
    try {
      const optimized = await zorder.optimize({ zOrderBy: ['x', 'y'] })
      assert.ok(optimized.committed)
      const before = await liveWithRowIds(dir)
      assert.equal(before.size, 201)
      const result = await txn!.commit()
      assert.ok(result.committed)
      assert.deepEqual(
        result.reconciliations.map((r) => [r.kind, r.detail.rows]),
        [['case5b-zorder-reverse', 0]],
      )
      assert.deepEqual(await liveWithRowIds(dir), without(before, [1000]))
      // The OPTIMIZE outputs are untouched: no deletion vector anywhere.
      assert.equal(await deletedInLiveFiles(dir), 0)
    } finally {
      await closeHooked(zorder)
      await other.close()
      await loser.close()
    }
  })
})

describe('Case 5b: the abort names the reason of the phase that speaks for a Z-order winner', () => {
  const ALL_ON = {
    'rowLevelConcurrency.enabled': true,
    'optimize.conflictReconciliation.reverse.enabled': true,
    'optimize.zorder.conflictReconciliation.reverse.enabled': true,
    'merge.rowLevelConflicts.enabled': true,
    'optimize.zorder.conflictReconciliation.reverse.maxRowIds': 1,
  }
  const dmls: readonly [string, (txn: Txn) => Promise<unknown>][] = [
    ['a DELETE', (txn) => txn.delete('id IN (1, 51)')],
    [
      'a MERGE',
      (txn) =>
        txn.merge(
          [
            { id: 1n, x: 0, y: 0, v: 'a' },
            { id: 51n, x: 0, y: 0, v: 'b' },
          ],
          { on: 'target.id = source.id', whenMatched: [{ update: { v: 'source.v' } }] },
        ),
    ],
  ]
  for (const [name, dml] of dmls) {
    it(`${name} refused by Case 5b's budget says so, not Case 4b's or Case 6's reason`, async () => {
      const dir = await fourFiles()
      const before = await liveWithRowIds(dir)
      const loser = await DeltaTable.open(dir, { conflicts: ALL_ON })
      const other = await DeltaTable.open(dir)
      try {
        const txn = await loser.begin()
        await dml(txn)
        await other.optimize({ zOrderBy: ['x', 'y'] })
        const result = await txn.commit().catch((e: unknown) => e as Error)
        assert.ok(result instanceof ConcurrentModificationError, String(result))
        assert.match(result.message, /Case 5b budget exceeded: 2 row ids sought, more than 1 \(maxRowIds\)/)
        assert.doesNotMatch(result.message, /composition|Case 6/)
      } finally {
        await other.close()
        await loser.close()
      }
      // Nothing changed but the layout: every row on its id.
      assert.deepEqual(await liveWithRowIds(dir), before)
    })
  }
})
