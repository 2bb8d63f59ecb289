/**
 * Suite MSK of scenarios.md (MergeSourceKeyReadPredicateSuite: the MERGE records "target key in
 * the source keys" as its read predicate, which Case 1 can then prove disjoint) through the real
 * engine. The table is (id long, v int): ids 0..49 and 50..99 in two files, v = 0. Every race
 * runs with both data-skipping tiers on and the source-key predicate as the record says; the
 * result is "committed" or the conflict error's class name.
 *
 * Spark reports the pre-filter choice in a usage event. There are no usage events here: the
 * event records check the same choice on the predicate the MERGE records (`sourceKeyPredicate`
 * over the MERGE's own plan), and the statements' results.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { MergeOptions } from '../../../src/ops/merge-clauses.js'
import { planMerge } from '../../../src/ops/merge-clauses.js'
import { sourceKeyPredicate } from '../../../src/ops/merge-source-keys.js'
import type { DeltaTable } from '../../../src/table/delta-table.js'
import {
  type Conflicts,
  createTable,
  FLAG,
  liveFiles,
  liveRows,
  openTable,
  settle,
  span,
  tableDir,
} from './harness.js'

type Source = readonly Readonly<Record<string, unknown>>[]
type Merge = readonly [Source, MergeOptions]

const ON_ID = 'target.id = source.id'
const sourceOf = (keys: readonly number[], v: number): Source => keys.map((k) => ({ id: BigInt(k), v }))
const upsert = (keys: readonly number[], v: number): Merge => [
  sourceOf(keys, v),
  { on: ON_ID, whenMatched: [{ update: { v: 'source.v' } }], whenNotMatched: [{ insert: '*' }] },
]
const insertOnly = (keys: readonly number[], v: number): Merge => [
  sourceOf(keys, v),
  { on: ON_ID, whenNotMatched: [{ insert: '*' }] },
]

/** The "allConfs" of the suite: both skipping tiers, the source-key predicate as given. */
function allConfs(sourceKeys: boolean, threshold?: number): Conflicts {
  return {
    [FLAG.skipping]: true,
    [FLAG.valueExact]: true,
    [FLAG.mergeKeys]: sourceKeys,
    ...(threshold === undefined ? {} : { [FLAG.mergeKeysThreshold]: threshold }),
  }
}

/** The suite's table: two single-file writes, then deletion vectors as the record says. */
async function keyTable(dv: boolean): Promise<string> {
  const dir = await tableDir()
  const table = await createTable(dir, {
    schema: 'id long, v int',
    properties: { 'delta.enableDeletionVectors': String(dv) },
  })
  await table.append(span(0, 50).map((i) => ({ id: BigInt(i), v: 0 })))
  await table.append(span(50, 100).map((i) => ({ id: BigInt(i), v: 0 })))
  assert.equal((await liveFiles(table)).length, 2)
  return dir
}

/** Schedule R: the loser MERGE to pre-commit, the winner MERGE fully, then the loser commits. */
async function raceR(table: DeltaTable, loser: Merge, winner: Merge): Promise<string> {
  const txn = await table.begin()
  await txn.merge(...loser)
  const w = await table.merge(...winner)
  assert.ok(w.committed)
  const outcome = await settle(txn.commit())
  return outcome.kind === 'committed' ? 'committed' : outcome.error.name
}

/** v of each listed id (undefined when absent), and the row count with its distinct-id count. */
async function state(table: DeltaTable, ids: readonly number[]) {
  const rows = await liveRows(table)
  const byId = new Map(rows.map((r) => [r.id, r.v]))
  return {
    v: ids.map((id) => [id, byId.get(id)]),
    rows: rows.length,
    distinct: byId.size,
  }
}

/** The pre-filter the MERGE records, computed from its own plan (the event of the records). */
async function preFilterOf(table: DeltaTable, merge: Merge, threshold: number) {
  const plan = planMerge(await table.snapshot(), merge[0], merge[1])
  const p = sourceKeyPredicate(plan.keys, merge[0], threshold)
  return p === undefined
    ? undefined
    : { kind: p.kind, distinctKeys: p.distinctKeys, keyColumns: plan.keys.length }
}

describe('MSK: MERGE source-key read predicate (feeds Case 1)', () => {
  for (const [id, dv] of [
    ['MSK-01', true],
    ['MSK-02', false],
  ] as const) {
    it(`${id} disjoint keys: loser commits, both MERGEs applied (deletionVectors=${dv})`, async () => {
      const table = await openTable(await keyTable(dv), allConfs(true))
      const txn = await table.begin()
      await txn.merge(...upsert([60, 500], 2))
      const w = await table.merge(...upsert([10, 1000], 1))
      const outcome = await settle(txn.commit())
      assert.equal(outcome.kind, 'committed')
      // The winner's new file spans [10, 1000]: only the value-exact tier proves it disjoint.
      const kinds = outcome.kind === 'committed' ? outcome.result.reconciliations : []
      assert.ok(kinds.every((r) => r.winnerVersion === w.version && r.winnerOperation === 'MERGE'))
      assert.deepEqual(
        kinds.map((r) => r.kind),
        dv ? ['case1-data-skipping', 'case1b-delete-read'] : ['case1-data-skipping'],
      )
      assert.deepEqual(await state(table, [10, 60, 500, 1000]), {
        v: [
          [10, 1],
          [60, 2],
          [500, 2],
          [1000, 1],
        ],
        rows: 102,
        distinct: 102,
      })
    })
  }

  it('MSK-03 feature off: disjoint keys still conflict (key-only ON reads the whole table)', async () => {
    const table = await openTable(await keyTable(true), allConfs(false))
    assert.equal(await raceR(table, upsert([60, 500], 2), upsert([10, 1000], 1)), 'ConcurrentAppendError')
  })

  it('MSK-05 same existing key updated by both MERGEs: loser aborts', async () => {
    const table = await openTable(await keyTable(true), allConfs(true))
    assert.notEqual(await raceR(table, upsert([60], 2), upsert([60], 1)), 'committed')
    assert.deepEqual((await state(table, [60])).v, [[60, 1]])
  })

  it('MSK-06 more source keys than inSetThreshold: range pre-filter, the exact key match decides', async () => {
    const table = await openTable(await keyTable(true), allConfs(true, 10_000))
    const keys = span(0, 20_000).map((i) => 1000 + 2 * i)
    assert.deepEqual(await preFilterOf(table, upsert(keys, 2), 10_000), {
      kind: 'range',
      distinctKeys: 20_000,
      keyColumns: 1,
    })
    // 1001 falls inside the range [1000, 40998] but is not one of the keys.
    assert.equal(await raceR(table, upsert(keys, 2), upsert([10, 1001], 1)), 'committed')
    // Control: the winner updates one of the keys.
    assert.notEqual(await raceR(table, upsert(keys, 3), upsert([1002], 1)), 'committed')
    const s = await state(table, [1001, 1002])
    assert.deepEqual(s.v, [
      [1001, 1],
      [1002, 1],
    ])
    assert.equal(s.rows, 100 + 20_000 + 1)
    assert.equal(s.distinct, s.rows)
  })

  it('MSK-07 tiny inSetThreshold only changes the pre-filter: disjoint keys still commit', async () => {
    const dir = await keyTable(true)
    for (const t of [1, 0]) {
      const table = await openTable(dir, allConfs(true, t))
      assert.equal((await preFilterOf(table, upsert([60, 500 + t], 2), t))?.kind, 'range')
      // The winner's new key 300 + t lies inside the loser's key range.
      assert.equal(
        await raceR(table, upsert([60, 500 + t], 2), upsert([10, 300 + t], 1)),
        'committed',
        `t=${t}`,
      )
    }
    const s = await state(await openTable(dir), [])
    assert.equal(s.rows, 104)
    assert.equal(s.distinct, 104)
  })

  it('MSK-09 insert-only MERGE: disjoint new keys commit, the same new key aborts', async () => {
    const table = await openTable(await keyTable(true), allConfs(true))
    assert.equal(await raceR(table, insertOnly([500], 2), insertOnly([1000, 10], 1)), 'committed')
    assert.equal(
      await raceR(table, insertOnly([700], 2), insertOnly([2000, 700], 1)),
      'ConcurrentAppendError',
    )
    const ids = (await liveRows(table)).map((r) => r.id)
    for (const key of [500, 1000, 700]) assert.equal(ids.filter((x) => x === key).length, 1, `id ${key} once`)
  })

  it('MSK-10 NOT MATCHED BY SOURCE reads every target row: no source-key predicate, conflicts', async () => {
    const table = await openTable(await keyTable(true), allConfs(true))
    const loser: Merge = [
      sourceOf([60], 2),
      {
        on: ON_ID,
        whenMatched: [{ update: { v: 'source.v' } }],
        whenNotMatchedBySource: [{ if: 'target.id = 1000', delete: true }],
      },
    ]
    assert.notEqual(await raceR(table, loser, upsert([10, 1000], 1)), 'committed')
  })

  it('MSK-11 event: IN pre-filter within inSetThreshold, range above, keys de-duplicated', async () => {
    const table = await openTable(await keyTable(true), allConfs(true, 2))
    const statements: readonly [Merge, unknown][] = [
      [insertOnly([1, 2, 2], 5), { kind: 'inSet', distinctKeys: 2, keyColumns: 1 }],
      [upsert([1, 2, 3], 6), { kind: 'range', distinctKeys: 3, keyColumns: 1 }],
      [
        [[{ id: null, v: 7 }], { on: ON_ID, whenMatched: [{ update: { v: 'source.v' } }] }],
        // A NULL key matches nothing: the recorded predicate selects no row.
        { kind: 'empty', distinctKeys: 0, keyColumns: 1 },
      ],
    ]
    for (const [merge, expected] of statements) {
      assert.deepEqual(await preFilterOf(table, merge, 2), expected)
      await table.merge(...merge)
    }
    assert.deepEqual((await state(table, [1, 2, 3, 4])).v, [
      [1, 6],
      [2, 6],
      [3, 6],
      [4, 0],
    ])
  })

  it('MSK-12 event: no equi-join key between target and source -> not attempted', async () => {
    const table = await openTable(await keyTable(true), allConfs(true))
    const merge: Merge = [
      sourceOf([60], 9),
      { on: 'target.id < source.id AND target.id >= 59', whenMatched: [{ update: { v: 'source.v' } }] },
    ]
    assert.equal(await preFilterOf(table, merge, 10_000), undefined)
    await table.merge(...merge)
    assert.deepEqual((await state(table, [58, 59, 60])).v, [
      [58, 0],
      [59, 9],
      [60, 0],
    ])
  })

  it('MSK-13 event: multi-column key, MERGE result unchanged', async () => {
    const table = await openTable(await keyTable(true), allConfs(true))
    const merge: Merge = [
      [
        { id: 60n, v: 0, nv: 3 },
        { id: 61n, v: 0, nv: 3 },
        { id: 62n, v: 1, nv: 3 },
      ],
      { on: 'target.id = source.id AND target.v = source.v', whenMatched: [{ update: { v: 'source.nv' } }] },
    ]
    assert.deepEqual(await preFilterOf(table, merge, 10_000), {
      kind: 'inSet',
      distinctKeys: 3,
      keyColumns: 2,
    })
    await table.merge(...merge)
    assert.deepEqual((await state(table, [60, 61, 62])).v, [
      [60, 3],
      [61, 3],
      [62, 0],
    ])
  })
})
