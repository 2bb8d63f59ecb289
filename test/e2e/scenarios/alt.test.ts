/**
 * Suite ALT: ALTER TABLE (properties, columns, CHECK constraints, NOT NULL) against concurrent
 * writers, through the real engine, in the style of the OTS matrix: each record runs schedule S1
 * (the loser stages, the winner commits, the loser commits) once with every flag off and once
 * with every flag on, and states the outcome and the final ids.
 *
 * Delta's rules: a winner's metadata change aborts every loser (`DELTA_METADATA_CHANGED`), and a
 * metadata change is never reconciled. What an ALTER reads is Delta's: setting a property or
 * adding a column reads nothing, so it commits beside a concurrent append or DELETE; adding a
 * CHECK constraint or NOT NULL checks every row, so it reads the whole table and aborts when a
 * concurrent commit changes data (an OPTIMIZE, which changes none, lets it through once Case 3
 * excludes files without data change).
 *
 * Table U: `id long` holding 0..99 in two files of 50, deletion vectors on (T(100, 2)).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  buildAddColumns,
  buildAddConstraint,
  buildDropConstraint,
  buildSetNotNull,
  buildSetProperties,
} from '../../../src/ops/alter.js'
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

const append =
  (ids: readonly number[]): Op =>
  (t) =>
    t.append(ids.map((i) => ({ id: BigInt(i) })))
const del =
  (where: string): Op =>
  (t) =>
    t.delete(where)
const update: Op = (t) => t.update({ set: { id: 'id + 1000' }, where: 'id = 7' })
const optimize: Op = (t) => t.optimize()
const setProperties =
  (properties: Readonly<Record<string, string>>): Op =>
  (t) =>
    t.stage(async (ctx) => buildSetProperties(ctx, properties))
const addColumns =
  (ddl: string): Op =>
  (t) =>
    t.stage(async (ctx) => buildAddColumns(ctx, ddl))
const addConstraint =
  (name: string, expr: string): Op =>
  (t) =>
    t.stage((ctx) => buildAddConstraint(ctx, name, expr))
const dropConstraint =
  (name: string): Op =>
  (t) =>
    t.stage(async (ctx) => buildDropConstraint(ctx, name, false))
const setNotNull =
  (column: string): Op =>
  (t) =>
    t.stage((ctx) => buildSetNotNull(ctx, column))

interface Expect {
  readonly outcome: 'commit' | 'abort'
  readonly ids: readonly number[]
  readonly code?: string
}

interface PairRecord {
  readonly id: string
  readonly name: string
  /** A constraint the table has before the pair runs. */
  readonly constraint?: readonly [string, string]
  readonly loser: Op
  readonly winner: Op
  readonly off: Expect
  readonly on: Expect
}

const APPEND = 'DELTA_CONCURRENT_APPEND'
const DELETE_READ = 'DELTA_CONCURRENT_DELETE_READ'
const METADATA = 'DELTA_METADATA_CHANGED'

const PAIRS: readonly PairRecord[] = [
  {
    id: 'ALT-01',
    name: 'an append loses to SET TBLPROPERTIES',
    loser: append([500]),
    winner: setProperties({ 'owner.team': 'ingest' }),
    off: { outcome: 'abort', code: METADATA, ids: ALL },
    on: { outcome: 'abort', code: METADATA, ids: ALL },
  },
  {
    id: 'ALT-02',
    name: 'a DELETE loses to ADD COLUMNS',
    loser: del('id = 3'),
    winner: addColumns('note string'),
    off: { outcome: 'abort', code: METADATA, ids: ALL },
    on: { outcome: 'abort', code: METADATA, ids: ALL },
  },
  {
    id: 'ALT-03',
    name: 'an UPDATE loses to ADD CONSTRAINT',
    loser: update,
    winner: addConstraint('small', 'id < 100000'),
    off: { outcome: 'abort', code: METADATA, ids: ALL },
    on: { outcome: 'abort', code: METADATA, ids: ALL },
  },
  {
    id: 'ALT-04',
    name: 'an append loses to DROP CONSTRAINT',
    constraint: ['small', 'id < 100000'],
    loser: append([500]),
    winner: dropConstraint('small'),
    off: { outcome: 'abort', code: METADATA, ids: ALL },
    on: { outcome: 'abort', code: METADATA, ids: ALL },
  },
  {
    id: 'ALT-05',
    name: 'SET TBLPROPERTIES loses to an append: it read nothing, so it commits',
    loser: setProperties({ 'owner.team': 'ingest' }),
    winner: append([500]),
    off: { outcome: 'commit', ids: idsOf(ALL, [], [500]) },
    on: { outcome: 'commit', ids: idsOf(ALL, [], [500]) },
  },
  {
    id: 'ALT-06',
    name: 'ADD COLUMNS loses to a DELETE: it read nothing, so it commits',
    loser: addColumns('note string'),
    winner: del('id = 3'),
    off: { outcome: 'commit', ids: idsOf(ALL, [3]) },
    on: { outcome: 'commit', ids: idsOf(ALL, [3]) },
  },
  {
    id: 'ALT-07',
    name: 'ADD CONSTRAINT loses to an append: it read the whole table',
    loser: addConstraint('small', 'id < 100000'),
    winner: append([500]),
    off: { outcome: 'abort', code: APPEND, ids: idsOf(ALL, [], [500]) },
    on: { outcome: 'abort', code: APPEND, ids: idsOf(ALL, [], [500]) },
  },
  {
    id: 'ALT-08',
    // The DELETE re-adds the file it marked (a new deletion vector): file-level, the added-files
    // check, which runs first, meets it; with the flags on, the removed-files check reports it.
    name: 'ADD CONSTRAINT loses to a DELETE: it read the whole table',
    loser: addConstraint('small', 'id < 100000'),
    winner: del('id = 3'),
    off: { outcome: 'abort', code: APPEND, ids: idsOf(ALL, [3]) },
    on: { outcome: 'abort', code: DELETE_READ, ids: idsOf(ALL, [3]) },
  },
  {
    id: 'ALT-09',
    name: 'SET NOT NULL loses to an append: it read the whole table',
    loser: setNotNull('id'),
    winner: append([500]),
    off: { outcome: 'abort', code: APPEND, ids: idsOf(ALL, [], [500]) },
    on: { outcome: 'abort', code: APPEND, ids: idsOf(ALL, [], [500]) },
  },
  {
    id: 'ALT-10',
    name: 'ADD CONSTRAINT loses to an OPTIMIZE: file-level aborts, Case 3 lets it through (no row changed)',
    loser: addConstraint('small', 'id < 100000'),
    winner: optimize,
    // Without Case 3 the OPTIMIZE's outputs are files the whole-table read should have seen.
    off: { outcome: 'abort', code: APPEND, ids: ALL },
    on: { outcome: 'commit', ids: ALL },
  },
  {
    id: 'ALT-11',
    name: 'ADD COLUMNS loses to ADD CONSTRAINT: two metadata changes',
    loser: addColumns('note string'),
    winner: addConstraint('small', 'id < 100000'),
    off: { outcome: 'abort', code: METADATA, ids: ALL },
    on: { outcome: 'abort', code: METADATA, ids: ALL },
  },
]

describe('ALT: ALTER TABLE against concurrent writers', () => {
  for (const record of PAIRS) {
    for (const [flags, expect] of [
      ['off', record.off],
      ['on', record.on],
    ] as const) {
      it(`${record.id} flags ${flags}: ${record.name}`, async () => {
        const table = await openTable(await tableT(100, 2), flags === 'on' ? 'all' : 'none')
        try {
          if (record.constraint !== undefined) {
            await table.alter.addConstraint(record.constraint[0], record.constraint[1])
          }
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
