/**
 * Suite SEV: schema evolution (an append or overwrite with `schemaMode`, MERGE with
 * `schemaEvolution`, type widening on write, ALTER COLUMN TYPE) against concurrent writers, through
 * the real engine, in the style of the OTS matrix: each record runs schedule S1 (the loser stages,
 * the winner commits, the loser commits) once with every flag off and once with every flag on, and
 * states the outcome and the final ids.
 *
 * Delta's rules: each of these writes commits a `metaData` action, so a concurrent writer that
 * loses to one aborts (`DELTA_METADATA_CHANGED`), and a metadata change is never reconciled. What
 * the evolving write itself reads is that of the write without evolution: an append reads nothing
 * (it commits beside a concurrent append); a schema overwrite replaces every row, so it reads the
 * whole table; an overwrite with `replaceWhere` reads its predicate. Because it changes the
 * metadata, a concurrent blind append counts against what it read even under WriteSerializable
 * (Delta checks blind appends too for a transaction that changed the metadata): a schema
 * overwrite aborts where a plain overwrite would commit beside the append (OWS-07), and an append
 * outside a `replaceWhere` range is reconciled only through Case 1, with the flags on.
 *
 * Table U: `id long` holding 0..99 in two files of 50, deletion vectors on (T(100, 2)); the
 * widening records add a nullable `n int` and `delta.enableTypeWidening=true` first.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { buildChangeColumnType } from '../../../src/ops/type-widening-alter.js'
import type { DeltaTable } from '../../../src/table/delta-table.js'
import {
  aborted,
  committed,
  idsOf,
  liveIds,
  type Op,
  openTable,
  run,
  settle,
  span,
  tableT,
} from './harness.js'

const ALL = span(0, 100)
const BIG = 2n ** 40n

const append =
  (ids: readonly number[]): Op =>
  (t) =>
    t.append(ids.map((i) => ({ id: BigInt(i) })))
const appendNewColumn =
  (ids: readonly number[]): Op =>
  (t) =>
    t.append(
      ids.map((i) => ({ id: BigInt(i), note: `n${i}` })),
      { schemaMode: 'merge' },
    )
const appendWider =
  (ids: readonly number[]): Op =>
  (t) =>
    t.append(
      ids.map((i) => ({ id: BigInt(i), n: BIG })),
      { schemaMode: 'merge' },
    )
const changeType =
  (column: string, type: string): Op =>
  (t) =>
    t.stage(async (ctx) => buildChangeColumnType(ctx, column, type))
const del =
  (where: string): Op =>
  (t) =>
    t.delete(where)
const overwriteSchema =
  (ids: readonly number[]): Op =>
  (t) =>
    t.append(
      ids.map((i) => ({ id: BigInt(i), city: 'Oslo' })),
      { mode: 'overwrite', schemaMode: 'overwrite' },
    )
const replaceWhereMerge =
  (where: string, ids: readonly number[]): Op =>
  (t) =>
    t.append(
      ids.map((i) => ({ id: BigInt(i), note: 'r' })),
      { mode: 'overwrite', replaceWhere: where, schemaMode: 'merge' },
    )
const upsert =
  (ids: readonly number[], schemaEvolution: boolean): Op =>
  (t) =>
    t.merge(
      ids.map((i) => ({ id: BigInt(i), note: `m${i}` })),
      {
        on: 'target.id = source.id',
        whenMatched: [{ update: '*' }],
        whenNotMatched: [{ insert: '*' }],
        schemaEvolution,
      },
    )

interface Expect {
  readonly outcome: 'commit' | 'abort'
  readonly ids: readonly number[]
  readonly code?: string
}

interface PairRecord {
  readonly id: string
  readonly name: string
  /** Adds `n int` and enables type widening before the pair runs. */
  readonly widening?: true
  readonly loser: Op
  readonly winner: Op
  readonly off: Expect
  readonly on: Expect
}

const APPEND = 'DELTA_CONCURRENT_APPEND'
const METADATA = 'DELTA_METADATA_CHANGED'

const PAIRS: readonly PairRecord[] = [
  {
    id: 'SEV-01',
    name: "an append loses to an append with schemaMode: 'merge' that adds a column",
    loser: append([500]),
    winner: appendNewColumn([600]),
    off: { outcome: 'abort', code: METADATA, ids: idsOf(ALL, [], [600]) },
    on: { outcome: 'abort', code: METADATA, ids: idsOf(ALL, [], [600]) },
  },
  {
    id: 'SEV-02',
    name: "an append with schemaMode: 'merge' loses to an append: it read nothing, so it commits",
    loser: appendNewColumn([600]),
    winner: append([500]),
    off: { outcome: 'commit', ids: idsOf(ALL, [], [500, 600]) },
    on: { outcome: 'commit', ids: idsOf(ALL, [], [500, 600]) },
  },
  {
    id: 'SEV-03',
    name: "a DELETE loses to an overwrite with schemaMode: 'overwrite'",
    loser: del('id = 3'),
    winner: overwriteSchema([900, 901]),
    off: { outcome: 'abort', code: METADATA, ids: [900, 901] },
    on: { outcome: 'abort', code: METADATA, ids: [900, 901] },
  },
  {
    id: 'SEV-04',
    name: 'a schema overwrite loses to an append: it read the whole table',
    loser: overwriteSchema([900]),
    winner: append([500]),
    off: { outcome: 'abort', code: APPEND, ids: idsOf(ALL, [], [500]) },
    on: { outcome: 'abort', code: APPEND, ids: idsOf(ALL, [], [500]) },
  },
  {
    id: 'SEV-05',
    name: "an overwrite with replaceWhere and schemaMode: 'merge' loses to an append into its range",
    loser: replaceWhereMerge('id < 10', [1, 2]),
    winner: append([5]),
    off: { outcome: 'abort', code: APPEND, ids: [...ALL, 5].sort((a, b) => a - b) },
    on: { outcome: 'abort', code: APPEND, ids: [...ALL, 5].sort((a, b) => a - b) },
  },
  {
    id: 'SEV-06',
    name: "an overwrite with replaceWhere and schemaMode: 'merge' vs an append outside its range: aborts file-level, reconciles through Case 1",
    loser: replaceWhereMerge('id < 10', [1, 2]),
    winner: append([500]),
    off: { outcome: 'abort', code: APPEND, ids: idsOf(ALL, [], [500]) },
    on: { outcome: 'commit', ids: idsOf(ALL, [0, 3, 4, 5, 6, 7, 8, 9], [500]) },
  },
  {
    id: 'SEV-07',
    name: 'a MERGE loses to a MERGE with schema evolution',
    loser: upsert([7, 700], false),
    winner: upsert([8, 800], true),
    off: { outcome: 'abort', code: METADATA, ids: idsOf(ALL, [], [800]) },
    on: { outcome: 'abort', code: METADATA, ids: idsOf(ALL, [], [800]) },
  },
  {
    id: 'SEV-08',
    name: 'an append loses to an append that widens a column',
    widening: true,
    loser: append([500]),
    winner: appendWider([600]),
    off: { outcome: 'abort', code: METADATA, ids: idsOf(ALL, [], [600]) },
    on: { outcome: 'abort', code: METADATA, ids: idsOf(ALL, [], [600]) },
  },
  {
    id: 'SEV-09',
    name: 'an append that widens a column loses to an append: it read nothing, so it commits',
    widening: true,
    loser: appendWider([600]),
    winner: append([500]),
    off: { outcome: 'commit', ids: idsOf(ALL, [], [500, 600]) },
    on: { outcome: 'commit', ids: idsOf(ALL, [], [500, 600]) },
  },
  {
    id: 'SEV-10',
    name: 'an append loses to ALTER COLUMN TYPE',
    widening: true,
    loser: append([500]),
    winner: changeType('n', 'long'),
    off: { outcome: 'abort', code: METADATA, ids: ALL },
    on: { outcome: 'abort', code: METADATA, ids: ALL },
  },
  {
    id: 'SEV-11',
    name: 'ALTER COLUMN TYPE loses to an append: it read nothing, so it commits',
    widening: true,
    loser: changeType('n', 'long'),
    winner: append([500]),
    off: { outcome: 'commit', ids: idsOf(ALL, [], [500]) },
    on: { outcome: 'commit', ids: idsOf(ALL, [], [500]) },
  },
]

async function widen(table: DeltaTable): Promise<void> {
  await table.alter.setProperties({ 'delta.enableTypeWidening': 'true' })
  await table.alter.addColumns('n int')
}

describe('SEV: schema evolution on write against concurrent writers', () => {
  for (const record of PAIRS) {
    for (const [flags, expect] of [
      ['off', record.off],
      ['on', record.on],
    ] as const) {
      it(`${record.id} flags ${flags}: ${record.name}`, async () => {
        const table = await openTable(await tableT(100, 2), flags === 'on' ? 'all' : 'none')
        try {
          if (record.widening === true) await widen(table)
          const txn = await table.begin()
          await record.loser(txn)
          const winner = await run(table, record.winner)
          const loser = await settle(txn.commit())
          if (expect.outcome === 'commit') {
            assert.equal(committed(loser).version, winner.version + 1n)
          } else {
            aborted(loser, { code: expect.code, winnerVersion: winner.version })
          }
          assert.deepEqual(await liveIds(table), expect.ids)
        } finally {
          await table.close()
        }
      })
    }
  }
})
