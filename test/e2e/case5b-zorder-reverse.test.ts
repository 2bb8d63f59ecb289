/**
 * Case 5b end to end (design beyond-rlc 7.5, tests C5-01 to C5-06, C5-08 and C5-11): a DELETE or
 * UPDATE on a table with row tracking and deletion vectors loses to an OPTIMIZE that relocated
 * the files it took rows out of (Z-order, or a bin-pack without Case 4 tags). With
 * `optimize.zorder.conflictReconciliation.reverse.enabled` the DML finds the rows it kept the
 * stable ids of in the winner's outputs, masks them there and commits: the deleted ids are gone,
 * every other id is live exactly once, and the outputs' deletion vectors hold exactly the rows
 * sought. A winner that does not declare the ids preserved, an output without ids, statistics
 * that exclude the output holding a row, or a budget overrun aborts it.
 */
import assert from 'node:assert/strict'
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { ConcurrentModificationError } from '../../src/errors/index.js'
import { serializeCommit } from '../../src/protocol/action-json.js'
import type { Action } from '../../src/protocol/actions.js'
import { commitKey } from '../../src/protocol/log-files.js'
import { DeltaTable } from '../../src/table/delta-table.js'
import { addsOf, commitActions, liveWithRowIds, relocationTable, removesOf } from './ops-support.js'

const FLAG = 'optimize.zorder.conflictReconciliation.reverse.enabled'
const ON = { [FLAG]: true }

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

/** The relocation table in a fresh temp directory. */
async function fourFiles(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'delta-rlc-case5b-'))
  roots.push(root)
  return relocationTable(root)
}

type Winner = 'zorder' | 'bin-pack'

/** The relocations C5-01 runs against; the other tests use the first. */
const WINNERS: readonly Winner[] = ['zorder', 'bin-pack']
const RELOCATION: Winner = WINNERS[0]!

function runOptimize(table: DeltaTable, winner: Winner): Promise<unknown> {
  return winner === 'zorder' ? table.optimize({ zOrderBy: ['x', 'y'] }) : table.optimize()
}

/**
 * Begins a DML on `dir` (with `flags`), lets `winner` commit, then commits the DML.
 *
 * @returns the DML's commit result, or the error it failed with
 */
async function dmlLosingTo(
  dir: string,
  flags: Record<string, boolean | number>,
  dml: (txn: Awaited<ReturnType<DeltaTable['begin']>>) => Promise<unknown>,
  winner: (other: DeltaTable) => Promise<unknown>,
) {
  const loser = await DeltaTable.open(dir, { conflicts: flags })
  const other = await DeltaTable.open(dir)
  try {
    const txn = await loser.begin()
    await dml(txn)
    await winner(other)
    return await txn.commit().catch((e: unknown) => e as Error)
  } finally {
    await other.close()
    await loser.close()
  }
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

/** The rows without their row ids. */
function valuesOf(rows: ReadonlyMap<number, string>): Map<number, string> {
  return new Map([...rows].map(([id, r]) => [id, r.split('@')[0]!]))
}

function without(rows: ReadonlyMap<number, string>, ids: Iterable<number>): Map<number, string> {
  const out = new Map(rows)
  for (const id of ids) out.delete(id)
  return out
}

describe('Case 5b: a DML that loses to a relocating OPTIMIZE', () => {
  for (const winner of WINNERS) {
    it(`C5-01 a DELETE with deletion vectors commits, its rows masked in the ${winner} outputs`, async () => {
      const dir = await fourFiles()
      const before = await liveWithRowIds(dir)
      const deleted = [3, 17, 60, 61, 120, 199]
      const result = await dmlLosingTo(
        dir,
        ON,
        (txn) => txn.delete(`id IN (${deleted.join(', ')})`),
        (other) => runOptimize(other, winner),
      )
      assert.ok(!(result instanceof Error), String(result))
      assert.ok(result.committed)
      assert.deepEqual(
        result.reconciliations.map((r) => [r.kind, r.winnerOperation, r.detail.rows]),
        [['case5b-zorder-reverse', 'OPTIMIZE', deleted.length]],
      )
      assert.deepEqual(await liveWithRowIds(dir), without(before, deleted))
      // The DML's commit re-adds the outputs with exactly the six rows masked, and touches no source.
      const actions = await commitActions(dir, result.version)
      const adds = addsOf(actions)
      assert.equal(
        adds.reduce((n, a) => n + Number(a.deletionVector?.cardinality ?? 0n), 0),
        deleted.length,
      )
      assert.ok(adds.every((a) => a.dataChange && a.baseRowId !== undefined))
      assert.deepEqual(
        removesOf(actions)
          .map((r) => r.path)
          .sort(),
        adds.map((a) => a.path).sort(),
      )
      assert.equal(await deletedInLiveFiles(dir), deleted.length)
    })
  }

  it('C5-02 an UPDATE commits: one live copy per id, new values visible, old ones masked', async () => {
    const dir = await fourFiles()
    const before = await liveWithRowIds(dir)
    const updated = [5, 55, 105, 155, 156]
    const result = await dmlLosingTo(
      dir,
      ON,
      (txn) => txn.update({ where: `id IN (${updated.join(', ')})`, set: { v: "'new'" } }),
      (other) => runOptimize(other, RELOCATION),
    )
    assert.ok(!(result instanceof Error), String(result))
    assert.deepEqual(
      result.reconciliations.map((r) => [r.kind, r.detail.rows]),
      [['case5b-zorder-reverse', updated.length]],
    )
    const after = await liveWithRowIds(dir)
    const expected = new Map(before)
    for (const id of updated) {
      const [values, rowId] = before.get(id)!.split('@')
      const [x, y] = values!.split(',')
      expected.set(id, `${x},${y},new@${rowId}`)
    }
    assert.deepEqual(after, expected)
    assert.equal(await deletedInLiveFiles(dir), updated.length)
  })

  it('C5-02 a MERGE that updates, deletes and inserts commits: updated ids live once, deleted gone, inserts new', async () => {
    const dir = await fourFiles()
    const before = await liveWithRowIds(dir)
    const result = await dmlLosingTo(
      dir,
      ON,
      (txn) =>
        txn.merge(
          [
            { id: 8n, x: 0, y: 0, v: 'merged' },
            { id: 108n, x: 0, y: 0, v: 'gone' },
            { id: 500n, x: 1, y: 2, v: 'inserted' },
          ],
          {
            on: 'target.id = source.id',
            whenMatched: [{ if: "source.v = 'gone'", delete: true }, { update: { v: 'source.v' } }],
            whenNotMatched: [{ insert: '*' }],
          },
        ),
      (other) => runOptimize(other, RELOCATION),
    )
    assert.ok(!(result instanceof Error), String(result))
    assert.deepEqual(
      result.reconciliations.map((r) => [r.kind, r.detail.rows]),
      [['case5b-zorder-reverse', 2]],
    )
    const after = await liveWithRowIds(dir)
    const [values8, id8] = before.get(8)!.split('@')
    const [x8, y8] = values8!.split(',')
    assert.equal(after.get(8), `${x8},${y8},merged@${id8}`)
    assert.equal(after.has(108), false)
    assert.match(after.get(500) ?? '', /^1,2,inserted@\d+$/)
    assert.ok(![...before.values()].some((r) => r.endsWith(`@${after.get(500)!.split('@')[1]}`)))
    const expected = without(before, [8, 108])
    for (const [id, r] of expected) assert.equal(after.get(id), r)
    assert.equal(after.size, before.size)
    assert.equal(await deletedInLiveFiles(dir), 2)
  })

  it('C5-03 a DELETE that removes a whole file masks all of its rows in the outputs, once each', async () => {
    const dir = await fourFiles()
    const before = await liveWithRowIds(dir)
    // Ids 50..99 are the whole second file; 7 is one row of the first.
    const gone = [7, ...Array.from({ length: 50 }, (_, i) => 50 + i)]
    const result = await dmlLosingTo(
      dir,
      ON,
      (txn) => txn.delete('id = 7 OR (id >= 50 AND id < 100)'),
      (other) => runOptimize(other, RELOCATION),
    )
    assert.ok(!(result instanceof Error), String(result))
    assert.deepEqual(
      result.reconciliations.map((r) => [r.kind, r.detail.rows]),
      [['case5b-zorder-reverse', gone.length]],
    )
    assert.deepEqual(await liveWithRowIds(dir), without(before, gone))
    assert.equal(await deletedInLiveFiles(dir), gone.length)
  })

  it('C5-04 rows of files that were earlier OPTIMIZE outputs are found by their materialized ids', async () => {
    const dir = await fourFiles()
    const first = await DeltaTable.open(dir)
    try {
      // The sources of the race are outputs of this OPTIMIZE: their ids are materialized and
      // differ from baseRowId + position.
      await (RELOCATION === 'zorder' ? first.optimize({ zOrderBy: ['y'] }) : first.optimize())
      await first.append([{ id: 1000n, x: 1, y: 1, v: 'late' }])
    } finally {
      await first.close()
    }
    const before = await liveWithRowIds(dir)
    const deleted = [0, 42, 77, 150, 1000]
    const result = await dmlLosingTo(
      dir,
      ON,
      (txn) => txn.delete(`id IN (${deleted.join(', ')})`),
      (other) => runOptimize(other, RELOCATION),
    )
    assert.ok(!(result instanceof Error), String(result))
    assert.deepEqual(
      result.reconciliations.map((r) => [r.kind, r.detail.rows]),
      [['case5b-zorder-reverse', deleted.length]],
    )
    assert.deepEqual(await liveWithRowIds(dir), without(before, deleted))
  })

  it('is off by default: the DML aborts', async () => {
    const dir = await fourFiles()
    const before = await liveWithRowIds(dir)
    const result = await dmlLosingTo(
      dir,
      {},
      (txn) => txn.delete('id = 3'),
      (other) => runOptimize(other, RELOCATION),
    )
    assert.ok(result instanceof ConcurrentModificationError, String(result))
    // The abort names the flag that would have reconciled it: Case 4b comes first for a
    // bin-pack that recorded where each source's rows went (P3), Case 5b for a Z-order.
    assert.match(
      result.hint ?? '',
      RELOCATION === 'zorder'
        ? /`optimize\.zorder\.conflictReconciliation\.reverse\.enabled`/
        : /`optimize\.conflictReconciliation\.reverse\.enabled`/,
    )
    assert.deepEqual(await liveWithRowIds(dir), before)
  })
})

/** Relocates one source file by committing a byte copy of it, as a foreign writer could. */
async function relocateByCopy(dir: string, options: { readonly preservedTag: boolean }): Promise<void> {
  const table = await DeltaTable.open(dir)
  try {
    const snap = await table.snapshot()
    const source = snap.activeFiles()[0]!
    const copy = `copy-${source.path}`
    await copyFile(join(dir, source.path), join(dir, copy))
    const mark = BigInt(
      JSON.parse(snap.state.domainMetadata.get('delta.rowTracking')!.configuration).rowIdHighWaterMark,
    )
    const rows = BigInt(JSON.parse(source.stats!).numRecords)
    const version = snap.version + 1n
    const actions: Action[] = [
      {
        commitInfo: {
          timestamp: BigInt(Date.now()),
          operation: 'OPTIMIZE',
          ...(options.preservedTag ? { tags: { 'delta.rowTracking.preserved': 'true' } } : {}),
        },
      },
      {
        remove: {
          ...source,
          dataChange: false,
          deletionTimestamp: BigInt(Date.now()),
          extendedFileMetadata: true,
        },
      },
      {
        add: {
          ...source,
          path: copy,
          dataChange: false,
          baseRowId: mark + 1n,
          defaultRowCommitVersion: version,
        },
      },
      {
        domainMetadata: {
          domain: 'delta.rowTracking',
          configuration: JSON.stringify({ rowIdHighWaterMark: Number(mark + rows) }),
          removed: false,
        },
      },
    ]
    await writeFile(join(dir, commitKey(version)), serializeCommit(actions), { flag: 'wx' })
  } finally {
    await table.close()
  }
}

describe('Case 5b refuses on any doubt', () => {
  it('C5-05 a winner that does not declare the row ids preserved aborts the DML', async () => {
    const dir = await fourFiles()
    const before = await liveWithRowIds(dir)
    const result = await dmlLosingTo(
      dir,
      ON,
      (txn) => txn.delete('id < 3'),
      (other) => relocateByCopy(other.location, { preservedTag: false }),
    )
    assert.ok(result instanceof ConcurrentModificationError, String(result))
    assert.match(result.message, /does not declare delta\.rowTracking\.preserved=true/)
    // Nothing deleted (the copy gave its rows fresh ids, as a writer that preserves none does).
    assert.deepEqual(valuesOf(await liveWithRowIds(dir)), valuesOf(before))
  })

  it('C5-05 an output without materialized row ids aborts the DML', async () => {
    const dir = await fourFiles()
    const result = await dmlLosingTo(
      dir,
      ON,
      (txn) => txn.delete('id < 3'),
      (other) => relocateByCopy(other.location, { preservedTag: true }),
    )
    assert.ok(result instanceof ConcurrentModificationError, String(result))
    assert.match(result.message, /rows of the OPTIMIZE outputs have no materialized row id/)
  })

  it('C5-06 statistics that exclude the output holding a row abort the DML instead of skipping the row', async () => {
    const dir = await fourFiles()
    const before = await liveWithRowIds(dir)
    const result = await dmlLosingTo(
      dir,
      ON,
      (txn) => txn.delete('id = 17'),
      async (other) => {
        await runOptimize(other, RELOCATION)
        // A writer whose statistics lie: every output claims x values no row has.
        const version = (await other.snapshot()).version
        const path = join(dir, commitKey(version))
        const text = await readFile(path, 'utf8')
        await writeFile(
          path,
          text
            .replace(
              /\\"minValues\\":\{\\"id\\":(-?\d+),\\"x\\":-?\d+/g,
              '\\"minValues\\":{\\"id\\":$1,\\"x\\":5000',
            )
            .replace(
              /\\"maxValues\\":\{\\"id\\":(-?\d+),\\"x\\":-?\d+/g,
              '\\"maxValues\\":{\\"id\\":$1,\\"x\\":6000',
            ),
        )
      },
    )
    assert.ok(result instanceof ConcurrentModificationError, String(result))
    assert.match(result.message, /1 of the 1 row ids sought are not in the OPTIMIZE outputs/)
    assert.deepEqual(await liveWithRowIds(dir), before)
  })

  it('C5-11 too many row ids sought aborts with the budget named', async () => {
    const dir = await fourFiles()
    const result = await dmlLosingTo(
      dir,
      { ...ON, 'optimize.zorder.conflictReconciliation.reverse.maxRowIds': 2 },
      (txn) => txn.delete('id IN (1, 2, 3)'),
      (other) => runOptimize(other, RELOCATION),
    )
    assert.ok(result instanceof ConcurrentModificationError, String(result))
    assert.match(result.message, /Case 5b budget exceeded: 3 row ids sought, more than 2 \(maxRowIds\)/)
  })

  it('C5-11 too many candidate outputs aborts with the budget named', async () => {
    const dir = await fourFiles()
    const result = await dmlLosingTo(
      dir,
      { ...ON, 'optimize.zorder.conflictReconciliation.reverse.maxCandidateFiles': 1 },
      (txn) => txn.delete('id < 200'),
      (other) => other.optimize({ zOrderBy: ['x', 'y'], targetFileSize: 2048 }),
    )
    assert.ok(result instanceof ConcurrentModificationError, String(result))
    assert.match(
      result.message,
      /Case 5b budget exceeded: \d+ OPTIMIZE outputs may hold the rows, more than 1 \(maxCandidateFiles\)/,
    )
  })
})

describe('Case 5b with other winners in between', () => {
  it('C5-08 OPTIMIZE, then a DELETE on its output, then the losing DELETE: both deletions hold', async () => {
    const dir = await fourFiles()
    const before = await liveWithRowIds(dir)
    const result = await dmlLosingTo(
      dir,
      { ...ON, 'rowLevelConcurrency.enabled': true },
      (txn) => txn.delete('id IN (10, 110)'),
      async (other) => {
        await runOptimize(other, RELOCATION)
        await other.delete('id IN (11, 111)')
      },
    )
    assert.ok(!(result instanceof Error), String(result))
    assert.deepEqual(
      result.reconciliations.map((r) => r.kind),
      ['case5b-zorder-reverse', 'case2-dv-union'],
    )
    assert.deepEqual(await liveWithRowIds(dir), without(before, [10, 110, 11, 111]))
    assert.equal(await deletedInLiveFiles(dir), 4)
  })

  it('C5-08 the same with an overlapping row aborts the losing DELETE', async () => {
    const dir = await fourFiles()
    const result = await dmlLosingTo(
      dir,
      { ...ON, 'rowLevelConcurrency.enabled': true },
      (txn) => txn.delete('id IN (10, 110)'),
      async (other) => {
        await runOptimize(other, RELOCATION)
        await other.delete('id IN (10)')
      },
    )
    assert.ok(result instanceof ConcurrentModificationError, String(result))
  })
})
