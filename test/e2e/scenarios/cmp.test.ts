/**
 * Suite CMP: column mapping changes (turning it on, DROP COLUMNS, RENAME COLUMN) against
 * concurrent writers, through the real engine, in the style of the OTS matrix: each record runs
 * schedule S1 (the loser stages, the winner commits, the loser commits) once with every flag off
 * and once with every flag on, and states the outcome and the final ids.
 *
 * Delta's rules: each of these changes is a metadata change, so every loser to one aborts with
 * `DELTA_METADATA_CHANGED` (the protocol upgrade that turning column mapping on commits is
 * adopted first: the feature is inactive under the loser's metadata); none is ever reconciled. None reads
 * anything, so one that loses to an append or a DELETE commits beside it, and the rows that
 * commit wrote read under the new schema.
 *
 * Table U: `id long` holding 0..99 in two files of 50, deletion vectors on (T(100, 2)), and a
 * nullable `note string` added before the pair runs. Records marked `mapped` create it with
 * `delta.columnMapping.mode=name`.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { buildDropColumns, buildRenameColumn, buildSetProperties } from '../../../src/ops/alter.js'
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
const MAPPED = { 'delta.columnMapping.mode': 'name' }

const append =
  (ids: readonly number[]): Op =>
  (t) =>
    t.append(ids.map((i) => ({ id: BigInt(i), note: `n${i}` })))
const del =
  (where: string): Op =>
  (t) =>
    t.delete(where)
const update: Op = (t) => t.update({ set: { note: "'x'" }, where: 'id = 7' })
const merge: Op = (t) =>
  t.merge([{ id: 7n, note: 'm' }], { on: 'target.id = source.id', whenMatched: [{ update: '*' }] })
const optimize: Op = (t) => t.optimize()
const enableMapping: Op = (t) => t.stage(async (ctx) => buildSetProperties(ctx, MAPPED))
const dropNote: Op = (t) => t.stage(async (ctx) => buildDropColumns(ctx, ['note'], false))
const renameNote: Op = (t) => t.stage(async (ctx) => buildRenameColumn(ctx, 'note', 'remark'))

interface Expect {
  readonly outcome: 'commit' | 'abort'
  readonly ids: readonly number[]
  readonly code?: string
  /** The table's columns after the pair, in order. */
  readonly columns: readonly string[]
}

interface PairRecord {
  readonly id: string
  readonly name: string
  /** Whether the table is created with column mapping. */
  readonly mapped: boolean
  readonly loser: Op
  readonly winner: Op
  readonly off: Expect
  readonly on: Expect
}

const METADATA = 'DELTA_METADATA_CHANGED'
const both = (e: Expect): Pick<PairRecord, 'off' | 'on'> => ({ off: e, on: e })

const PAIRS: readonly PairRecord[] = [
  {
    id: 'CMP-01',
    name: 'an append loses to DROP COLUMNS',
    mapped: true,
    loser: append([500]),
    winner: dropNote,
    ...both({ outcome: 'abort', code: METADATA, ids: ALL, columns: ['id'] }),
  },
  {
    id: 'CMP-02',
    name: 'a DELETE loses to RENAME COLUMN',
    mapped: true,
    loser: del('id = 3'),
    winner: renameNote,
    ...both({ outcome: 'abort', code: METADATA, ids: ALL, columns: ['id', 'remark'] }),
  },
  {
    id: 'CMP-03',
    name: 'an UPDATE loses to turning column mapping on (its protocol upgrade is adopted, its metadata is not)',
    mapped: false,
    loser: update,
    winner: enableMapping,
    ...both({ outcome: 'abort', code: METADATA, ids: ALL, columns: ['id', 'note'] }),
  },
  {
    id: 'CMP-04',
    name: 'a MERGE loses to RENAME COLUMN',
    mapped: true,
    loser: merge,
    winner: renameNote,
    ...both({ outcome: 'abort', code: METADATA, ids: ALL, columns: ['id', 'remark'] }),
  },
  {
    id: 'CMP-05',
    name: 'an OPTIMIZE loses to DROP COLUMNS: its retry needs an unchanged schema',
    mapped: true,
    loser: optimize,
    winner: dropNote,
    ...both({ outcome: 'abort', code: METADATA, ids: ALL, columns: ['id'] }),
  },
  {
    id: 'CMP-06',
    name: 'DROP COLUMNS loses to an append: it read nothing, so it commits',
    mapped: true,
    loser: dropNote,
    winner: append([500]),
    ...both({ outcome: 'commit', ids: idsOf(ALL, [], [500]), columns: ['id'] }),
  },
  {
    id: 'CMP-07',
    name: 'RENAME COLUMN loses to a DELETE: it read nothing, so it commits',
    mapped: true,
    loser: renameNote,
    winner: del('id = 3'),
    ...both({ outcome: 'commit', ids: idsOf(ALL, [3]), columns: ['id', 'remark'] }),
  },
  {
    id: 'CMP-08',
    name: 'turning column mapping on loses to an append: it commits, and the appended file reads',
    mapped: false,
    loser: enableMapping,
    winner: append([500]),
    ...both({ outcome: 'commit', ids: idsOf(ALL, [], [500]), columns: ['id', 'note'] }),
  },
  {
    id: 'CMP-09',
    name: 'RENAME COLUMN loses to DROP COLUMNS: two metadata changes',
    mapped: true,
    loser: renameNote,
    winner: dropNote,
    ...both({ outcome: 'abort', code: METADATA, ids: ALL, columns: ['id'] }),
  },
]

describe('CMP: column mapping changes against concurrent writers', () => {
  for (const record of PAIRS) {
    for (const [flags, expect] of [
      ['off', record.off],
      ['on', record.on],
    ] as const) {
      it(`${record.id} flags ${flags}: ${record.name}`, async () => {
        const dir = await tableT(100, 2, record.mapped ? { properties: MAPPED } : {})
        const table = await openTable(dir, flags === 'on' ? 'all' : 'none')
        try {
          await table.alter.addColumns('note string')
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
          const snap = await table.snapshot()
          assert.deepEqual(
            snap.schema.fields.map((f) => f.name),
            expect.columns,
          )
          // Every live row reads under the final schema; the appended row keeps its note.
          const rows = await table.scan().toArray()
          const row500 = rows.find((r) => r.id === 500n)
          if (row500 !== undefined && expect.columns.includes('note')) assert.equal(row500.note, 'n500')
        } finally {
          await table.close()
        }
      })
    }
  }
})
