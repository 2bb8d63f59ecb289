/**
 * Suite RLC of scenarios.md (RowLevelConcurrencySuite, Case 2: same file, disjoint rows, union of
 * deletion vectors) through the real engine. The default table is ids 0..99 in one file with
 * deletion vectors on; physical row r holds id r. Each record runs its schedule and checks the
 * outcome, the live ids, the DV cardinalities, and the reconciliation or the error it implies.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { DeltaTable } from '../../../src/table/delta-table.js'
import {
  aborted,
  assertReconciled,
  type Conflicts,
  commitActions,
  committed,
  dvCards,
  FLAG,
  flags,
  idsOf,
  liveFiles,
  liveIds,
  type Op,
  type Outcome,
  openTable,
  run,
  s1,
  s2,
  setTableProperties,
  span,
  tableT,
} from './harness.js'

const ON = flags(FLAG.rowLevel)
const ALL = span(0, 100)

const del =
  (id: number): Op =>
  (t) =>
    t.delete(`id = ${id}`)
const update =
  (id: number, to: number): Op =>
  (t) =>
    t.update({ where: `id = ${id}`, set: { id: String(to) } })
const mergeDelete =
  (id: number): Op =>
  (t) =>
    t.merge([{ id: BigInt(id) }], { on: 'target.id = source.id', whenMatched: [{ delete: true }] })
const mergeUpdate =
  (id: number, to: number): Op =>
  (t) =>
    t.merge([{ id: BigInt(id) }], {
      on: 'target.id = source.id',
      whenMatched: [{ update: { id: String(to) } }],
    })

/** The default table: one file of ids 0..99 (optionally partitioned by a constant `p`). */
async function defaultTable(
  conflicts: Conflicts,
  options: { partitioned?: boolean; properties?: Record<string, string> } = {},
): Promise<{ dir: string; table: DeltaTable }> {
  const dir = await tableT(100, 1, {
    properties: options.properties ?? {},
    ...(options.partitioned ? { partition: { column: 'p', value: 0 } } : {}),
  })
  const table = await openTable(dir, conflicts)
  const snap = await table.snapshot()
  assert.equal(snap.properties['delta.enableDeletionVectors'], 'true')
  assert.equal((await liveFiles(table)).length, 1)
  return { dir, table }
}

interface PairRecord {
  readonly id: string
  readonly name: string
  readonly conflicts: Conflicts
  readonly loser: Op
  readonly winner: Op
  /** The winner's operation as the log records it. */
  readonly winnerOperation: string
  readonly expect: 'commit' | 'abort'
  readonly ids: readonly number[]
  readonly dvCards: readonly number[]
  /** For an abort: the refusal reason the error must carry (or 'none'). */
  readonly refused?: RegExp | 'none'
  readonly check?: string
}

const PAIRS: readonly PairRecord[] = [
  {
    id: 'RLC-01',
    name: 'disjoint concurrent DELETEs on the same file both commit by merging deletion vectors',
    conflicts: ON,
    loser: del(10),
    winner: del(20),
    winnerOperation: 'DELETE',
    expect: 'commit',
    ids: idsOf(ALL, [10, 20]),
    dvCards: [2],
  },
  {
    id: 'RLC-04',
    name: 'overlapping concurrent DELETEs still conflict',
    conflicts: ON,
    loser: del(10),
    winner: del(10),
    winnerOperation: 'DELETE',
    expect: 'abort',
    ids: idsOf(ALL, [10]),
    dvCards: [1],
    refused: /both transactions deleted the same 1 row/,
  },
  {
    id: 'RLC-05',
    name: 'feature disabled: disjoint concurrent DELETEs still conflict',
    conflicts: 'none',
    loser: del(10),
    winner: del(20),
    winnerOperation: 'DELETE',
    expect: 'abort',
    ids: idsOf(ALL, [20]),
    dvCards: [1],
    refused: 'none',
  },
  {
    id: 'RLC-07',
    name: 'DELETE (loser) vs UPDATE (winner): winner image file conservatively conflicts',
    conflicts: ON,
    loser: del(10),
    winner: update(20, 1020),
    winnerOperation: 'UPDATE',
    expect: 'abort',
    ids: idsOf(ALL, [20], [1020]),
    dvCards: [1],
    // The same-file DVs merged; the image file is what conflicts.
    check: 'checkAddedFilesThatShouldHaveBeenRead',
  },
  {
    id: 'RLC-08',
    name: 'overlapping UPDATE vs UPDATE (same row) still conflict',
    conflicts: ON,
    loser: update(20, 1010),
    winner: update(20, 2020),
    winnerOperation: 'UPDATE',
    expect: 'abort',
    ids: idsOf(ALL, [20], [2020]),
    dvCards: [1],
  },
  {
    id: 'RLC-09',
    name: 'disjoint concurrent MERGE matched-deletes on the same file both commit by merging DVs',
    conflicts: ON,
    loser: mergeDelete(10),
    winner: mergeDelete(20),
    winnerOperation: 'MERGE',
    expect: 'commit',
    ids: idsOf(ALL, [10, 20]),
    dvCards: [2],
  },
  {
    id: 'RLC-11',
    name: 'overlapping concurrent MERGE matched-deletes still conflict',
    conflicts: ON,
    loser: mergeDelete(10),
    winner: mergeDelete(10),
    winnerOperation: 'MERGE',
    expect: 'abort',
    ids: idsOf(ALL, [10]),
    dvCards: [1],
    refused: /both transactions deleted the same 1 row/,
  },
  {
    id: 'RLC-12',
    name: 'DELETE (loser) vs MERGE matched-update (winner): winner image file conservatively conflicts',
    conflicts: ON,
    loser: del(10),
    winner: mergeUpdate(20, 1020),
    winnerOperation: 'MERGE',
    expect: 'abort',
    ids: idsOf(ALL, [20], [1020]),
    dvCards: [1],
    check: 'checkAddedFilesThatShouldHaveBeenRead',
  },
]

/** Checks a pair record's outcome and returns the loser's result when it committed. */
async function checkPair(
  record: Pick<PairRecord, 'expect' | 'ids' | 'dvCards' | 'refused' | 'check' | 'winnerOperation'>,
  table: DeltaTable,
  dir: string,
  result: { winner: { version: bigint }; loser: Outcome },
): Promise<void> {
  if (record.expect === 'commit') {
    const r = committed(result.loser)
    const file = (await commitActions(dir, result.winner.version)).flatMap((a) =>
      'add' in a ? [a.add.path] : [],
    )
    assertReconciled(r, [
      {
        kind: 'case2-dv-union',
        winnerVersion: result.winner.version,
        winnerOperation: record.winnerOperation,
        files: file,
        rows: 1,
      },
    ])
    assert.equal(r.version, result.winner.version + 1n)
  } else {
    aborted(result.loser, {
      winnerVersion: result.winner.version,
      winnerOperation: record.winnerOperation,
      ...(record.refused === undefined ? {} : { refused: record.refused }),
      ...(record.check === undefined ? {} : { check: record.check }),
    })
  }
  assert.deepEqual(await liveIds(table), record.ids)
  assert.deepEqual(await dvCards(table), record.dvCards)
}

describe('RLC: same-file deletion-vector union (Case 2)', () => {
  for (const record of PAIRS) {
    it(`${record.id} ${record.name}`, async () => {
      const { dir, table } = await defaultTable(record.conflicts)
      const result = await s1([table, record.loser], [table, record.winner])
      await checkPair(record, table, dir, result)
    })
  }

  it('RLC-02 disjoint concurrent DELETEs reconcile on a file that already carries a base DV', async () => {
    const { dir, table } = await defaultTable(ON)
    await run(table, del(5))
    assert.deepEqual(await dvCards(table), [1])
    const result = await s1([table, del(10)], [table, del(20)])
    await checkPair(
      { expect: 'commit', ids: idsOf(ALL, [5, 10, 20]), dvCards: [3], winnerOperation: 'DELETE' },
      table,
      dir,
      result,
    )
  })

  it('RLC-06 deletion vectors disabled: row-level concurrency gate is off, disjoint DELETEs conflict', async () => {
    const { table } = await defaultTable(ON)
    await setTableProperties(table, { 'delta.enableDeletionVectors': 'false' })
    const result = await s1([table, del(10)], [table, del(20)])
    // Both DELETEs rewrote the file copy-on-write: there is no DV pair to merge.
    aborted(result.loser, { winnerVersion: result.winner.version, refused: 'none' })
    assert.deepEqual(await liveIds(table), idsOf(ALL, [20]))
    assert.deepEqual(await dvCards(table), [])
  })

  it('RLC-14 three concurrent disjoint DELETEs on the same file all commit', async () => {
    const { table } = await defaultTable(ON)
    const result = await s2([table, del(10)], [table, del(20)], [table, del(30)])
    const r = committed(result.loser)
    const w1 = result.winners[0]!
    const w2 = result.winners[1]!
    // A reconciles against each winner in turn; after B its tombstone carries B's DV, which is
    // exactly C's pre-image.
    assertReconciled(r, [
      { kind: 'case2-dv-union', winnerVersion: w1.version, winnerOperation: 'DELETE', rows: 1 },
      { kind: 'case2-dv-union', winnerVersion: w2.version, winnerOperation: 'DELETE', rows: 1 },
    ])
    assert.deepEqual(await liveIds(table), idsOf(ALL, [10, 20, 30]))
    assert.deepEqual(await dvCards(table), [3])
  })

  it("RLC-16 disjoint concurrent DELETEs on a partitioned table's file both commit", async () => {
    const { dir, table } = await defaultTable(ON, { partitioned: true })
    assert.deepEqual((await table.snapshot()).partitionColumns, ['p'])
    const result = await s1([table, del(10)], [table, del(20)])
    await checkPair(
      { expect: 'commit', ids: idsOf(ALL, [10, 20]), dvCards: [2], winnerOperation: 'DELETE' },
      table,
      dir,
      result,
    )
  })

  it("RLC-17 row tracking: reconciled disjoint DELETEs preserve surviving rows' stable row IDs", async () => {
    const { table } = await defaultTable(ON, { properties: { 'delta.enableRowTracking': 'true' } })
    const rowIds = async (): Promise<Map<string, bigint>> => {
      const rows = await table.scan({ withRowTracking: true }).toArray()
      return new Map(rows.map((r) => [String(r.id), r._row_id as bigint]))
    }
    const before = await rowIds()
    const file = (await liveFiles(table))[0]!
    assert.notEqual(file.baseRowId, undefined)
    const result = await s1([table, del(10)], [table, del(20)])
    committed(result.loser)
    assert.deepEqual(await liveIds(table), idsOf(ALL, [10, 20]))
    assert.deepEqual(await dvCards(table), [2])
    const after = (await liveFiles(table))[0]!
    assert.equal(after.path, file.path)
    assert.equal(after.baseRowId, file.baseRowId)
    before.delete('10')
    before.delete('20')
    assert.deepEqual(await rowIds(), before, 'every surviving row keeps its stable row id')
  })

  it('RLC-18 change data feed: reconciled disjoint DELETEs each emit one delete at their own version', async () => {
    const { dir, table } = await defaultTable(ON, { properties: { 'delta.enableChangeDataFeed': 'true' } })
    const result = await s1([table, del(10)], [table, del(20)])
    const r = committed(result.loser)
    assert.deepEqual(await liveIds(table), idsOf(ALL, [10, 20]))
    assert.deepEqual(await dvCards(table), [2])
    // Each commit carries the change files of its own delete.
    for (const version of [result.winner.version, r.version]) {
      const cdc = (await commitActions(dir, version)).filter((a) => 'cdc' in a)
      assert.equal(cdc.length, 1, `version ${version} has one change file`)
    }
    // And the feed reads them back: the winner's row at its version, the reconciled loser's at its own.
    const feed = await table.changes({ startingVersion: result.winner.version }).toArray()
    assert.deepEqual(
      feed.map((c) => [c._commit_version, c._change_type, Number(c.id)]),
      [
        [result.winner.version, 'delete', 20],
        [r.version, 'delete', 10],
      ],
    )
  })

  it('RLC-19 Serializable: a MERGE matched-delete (read-then-modify) reconciles vs a concurrent DELETE', async () => {
    const { dir, table } = await defaultTable(ON, { properties: { 'delta.isolationLevel': 'Serializable' } })
    const result = await s1([table, mergeDelete(10)], [table, del(20)])
    await checkPair(
      { expect: 'commit', ids: idsOf(ALL, [10, 20]), dvCards: [2], winnerOperation: 'DELETE' },
      table,
      dir,
      result,
    )
  })
})
