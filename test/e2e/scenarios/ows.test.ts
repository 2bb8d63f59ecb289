/**
 * Suite OWS: overwrite (whole table, replaceWhere, dynamic partition overwrite) and RESTORE
 * against concurrent writers, through the real engine, in the style of the OTS matrix: each
 * record runs schedule S1 (the loser stages, the winner commits, the loser commits) once with
 * every flag off and once with every flag on, and states the outcome and the final ids of both.
 *
 * What each reads is Delta's: an overwrite reads every live file (`TRUE`), a replaceWhere reads
 * its predicate and the files it may select, a dynamic partition overwrite reads the partitions
 * its rows land in, RESTORE reads the whole table. Partition predicates are exact at file level,
 * so a winner in another partition never conflicts; a data predicate needs Case 1 (data skipping)
 * to let an append elsewhere through.
 *
 * Two rules of Delta's checker shape the records. Under WriteSerializable (the default) a blind
 * append's files are not checked against the loser's reads, so an overwrite commits after a
 * concurrent append into its range and the appended rows stay (as if the append came after): the
 * append-into-the-range abort is a Serializable record. And a winner's metadata identical to the
 * loser's read metadata is no change here (a RESTORE that sets back the same metadata), where
 * Delta aborts on any metadata action; a RESTORE that sets back older metadata aborts the loser.
 *
 * Tables: P is `id long, p int` partitioned by `p`, ids 0..49 in p=0 and 50..99 in p=1 (one
 * file each, versions 1 and 2); U is ids 0..99 unpartitioned in two files of 50 (versions 1 and
 * 2); M is U with a table property set at version 3. All have deletion vectors on.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { DeltaTable } from '../../../src/table/delta-table.js'
import {
  aborted,
  type Conflicts,
  committed,
  createTable,
  fromTemplate,
  idsOf,
  liveIds,
  type Op,
  openTable,
  run,
  setTableProperties,
  settle,
  span,
  tableT,
} from './harness.js'

const ALL = span(0, 100)

/** Table P: partitioned by p, ids 0..49 in p=0 and 50..99 in p=1. */
async function tableP(): Promise<string> {
  return fromTemplate('OWS-P', async (dir) => {
    const t = await createTable(dir, {
      schema: 'id long, p int',
      partitionBy: ['p'],
      properties: { 'delta.enableDeletionVectors': 'true' },
    })
    await t.append(span(0, 50).map((i) => ({ id: BigInt(i), p: 0 })))
    await t.append(span(50, 100).map((i) => ({ id: BigInt(i), p: 1 })))
  })
}

const inP = (ids: readonly number[], p: number) => ids.map((i) => ({ id: BigInt(i), p }))
const inU = (ids: readonly number[]) => ids.map((i) => ({ id: BigInt(i) }))

const append =
  (rows: readonly Record<string, unknown>[]): Op =>
  (t) =>
    t.append(rows)
const overwrite =
  (rows: readonly Record<string, unknown>[], replaceWhere?: string): Op =>
  (t) =>
    t.append(rows, replaceWhere === undefined ? { mode: 'overwrite' } : { mode: 'overwrite', replaceWhere })
const dynamic =
  (rows: readonly Record<string, unknown>[]): Op =>
  (t) =>
    t.append(rows, { mode: 'overwrite', partitionOverwriteMode: 'dynamic' })
const del =
  (where: string): Op =>
  (t) =>
    t.delete(where)
const restore =
  (version: number): Op =>
  (t) =>
    t.restore({ version })
const optimize: Op = (t) => t.optimize()

/** An outcome and the ids it leaves. */
interface Expect {
  readonly outcome: 'commit' | 'abort'
  readonly ids: readonly number[]
  /** For an abort: the error code. */
  readonly code?: string
  /** For a commit: the reconciliations it took, in order (none when absent). */
  readonly reconciled?: readonly string[]
}

interface PairRecord {
  readonly id: string
  readonly name: string
  readonly table: 'P' | 'U' | 'M'
  /** The loser's isolation level (default the table's: WriteSerializable). */
  readonly isolation?: 'Serializable'
  readonly loser: Op
  readonly winner: Op
  readonly off: Expect
  readonly on: Expect
}

const APPEND = 'DELTA_CONCURRENT_APPEND'
const DELETE_READ = 'DELTA_CONCURRENT_DELETE_READ'
const METADATA = 'DELTA_METADATA_CHANGED'

/** P after replaceWhere p = 0 with ids 1000, 1001 and nothing else. */
const P_REPLACED0 = idsOf(span(50, 100), [], [1000, 1001])

const PAIRS: readonly PairRecord[] = [
  {
    id: 'OWS-01',
    name: 'replaceWhere on a partition vs a blind append into it: WriteSerializable commits, the appended row stays',
    table: 'P',
    loser: overwrite(inP([1000, 1001], 0), 'p = 0'),
    winner: append(inP([2000], 0)),
    off: { outcome: 'commit', ids: idsOf(P_REPLACED0, [], [2000]) },
    on: { outcome: 'commit', ids: idsOf(P_REPLACED0, [], [2000]) },
  },
  {
    id: 'OWS-02',
    name: 'replaceWhere on a partition loses to an append into that partition (Serializable)',
    table: 'P',
    isolation: 'Serializable',
    loser: overwrite(inP([1000, 1001], 0), 'p = 0'),
    winner: append(inP([2000], 0)),
    off: { outcome: 'abort', code: APPEND, ids: idsOf(ALL, [], [2000]) },
    on: { outcome: 'abort', code: APPEND, ids: idsOf(ALL, [], [2000]) },
  },
  {
    id: 'OWS-03',
    name: 'replaceWhere on a partition commits after an append into another partition (Serializable)',
    table: 'P',
    isolation: 'Serializable',
    loser: overwrite(inP([1000, 1001], 0), 'p = 0'),
    winner: append(inP([2000], 1)),
    off: { outcome: 'commit', ids: idsOf(P_REPLACED0, [], [2000]) },
    on: { outcome: 'commit', ids: idsOf(P_REPLACED0, [], [2000]) },
  },
  {
    id: 'OWS-04',
    name: 'replaceWhere on a data column vs an append outside it: aborts file-level, reconciles through Case 1 (Serializable)',
    table: 'U',
    isolation: 'Serializable',
    loser: overwrite(inU([5]), 'id < 10'),
    winner: append(inU([500])),
    off: { outcome: 'abort', code: APPEND, ids: idsOf(ALL, [], [500]) },
    on: { outcome: 'commit', ids: idsOf(ALL, span(0, 10), [5, 500]), reconciled: ['case1-data-skipping'] },
  },
  {
    id: 'OWS-05',
    name: 'replaceWhere on a data column loses to an append inside it (Serializable)',
    table: 'U',
    isolation: 'Serializable',
    loser: overwrite(inU([5]), 'id < 10'),
    winner: append(inU([7])),
    off: { outcome: 'abort', code: APPEND, ids: idsOf(ALL, [], [7]) },
    on: { outcome: 'abort', code: APPEND, ids: idsOf(ALL, [], [7]) },
  },
  {
    id: 'OWS-06',
    name: 'a whole-table overwrite loses to any append (Serializable)',
    table: 'P',
    isolation: 'Serializable',
    loser: overwrite(inP([1000], 0)),
    winner: append(inP([2000], 1)),
    off: { outcome: 'abort', code: APPEND, ids: idsOf(ALL, [], [2000]) },
    on: { outcome: 'abort', code: APPEND, ids: idsOf(ALL, [], [2000]) },
  },
  {
    id: 'OWS-07',
    name: 'a whole-table overwrite vs a blind append: WriteSerializable commits, the appended row stays',
    table: 'P',
    loser: overwrite(inP([1000], 0)),
    winner: append(inP([2000], 1)),
    off: { outcome: 'commit', ids: [1000, 2000] },
    on: { outcome: 'commit', ids: [1000, 2000] },
  },
  {
    id: 'OWS-08',
    name: 'dynamic partition overwrite commits after an append into a partition it does not touch (Serializable)',
    table: 'P',
    isolation: 'Serializable',
    loser: dynamic(inP([1000, 1001], 0)),
    winner: append(inP([2000], 1)),
    off: { outcome: 'commit', ids: idsOf(P_REPLACED0, [], [2000]) },
    on: { outcome: 'commit', ids: idsOf(P_REPLACED0, [], [2000]) },
  },
  {
    id: 'OWS-09',
    name: 'dynamic partition overwrite loses to an append into a partition it replaces (Serializable)',
    table: 'P',
    isolation: 'Serializable',
    loser: dynamic(inP([1000, 1001], 0)),
    winner: append(inP([2000], 0)),
    off: { outcome: 'abort', code: APPEND, ids: idsOf(ALL, [], [2000]) },
    on: { outcome: 'abort', code: APPEND, ids: idsOf(ALL, [], [2000]) },
  },
  {
    id: 'OWS-10',
    name: 'replaceWhere loses to a DELETE that removes a file it removes',
    table: 'P',
    loser: overwrite(inP([1000, 1001], 0), 'p = 0'),
    winner: del('p = 0'),
    off: { outcome: 'abort', code: DELETE_READ, ids: span(50, 100) },
    on: { outcome: 'abort', code: DELETE_READ, ids: span(50, 100) },
  },
  {
    id: 'OWS-11',
    name: 'replaceWhere loses to a DELETE that gives a file it removes a deletion vector (the re-added file is checked first)',
    table: 'P',
    loser: overwrite(inP([1000, 1001], 0), 'p = 0'),
    winner: del('p = 0 AND id < 25'),
    off: { outcome: 'abort', code: APPEND, ids: span(25, 100) },
    on: { outcome: 'abort', code: DELETE_READ, ids: span(25, 100) },
  },
  {
    id: 'OWS-12',
    name: 'replaceWhere on a data column vs a DELETE in a file it did not read: aborts file-level, reconciles through Case 1',
    table: 'U',
    loser: overwrite(inU([5]), 'id < 10'),
    winner: del('id = 70'),
    off: { outcome: 'abort', code: APPEND, ids: idsOf(ALL, [70]) },
    on: { outcome: 'commit', ids: idsOf(ALL, [...span(0, 10), 70], [5]), reconciled: ['case1b-delete-read'] },
  },
  {
    id: 'OWS-13',
    name: 'RESTORE loses to a blind append (it reads the whole table)',
    table: 'U',
    loser: restore(1),
    winner: append(inU([500])),
    off: { outcome: 'abort', code: APPEND, ids: idsOf(ALL, [], [500]) },
    on: { outcome: 'abort', code: APPEND, ids: idsOf(ALL, [], [500]) },
  },
  {
    id: 'OWS-14',
    name: 'RESTORE vs an OPTIMIZE: aborts file-level; Case 4b remaps its removal of a compacted file into the output',
    table: 'U',
    loser: restore(1),
    winner: optimize,
    off: { outcome: 'abort', code: APPEND, ids: ALL },
    on: { outcome: 'commit', ids: span(0, 50), reconciled: ['case4b-reverse-remap'] },
  },
  {
    id: 'OWS-15',
    name: 'RESTORE loses to a DELETE',
    table: 'U',
    loser: restore(1),
    winner: del('id = 3'),
    off: { outcome: 'abort', code: APPEND, ids: idsOf(ALL, [3]) },
    on: { outcome: 'abort', code: DELETE_READ, ids: idsOf(ALL, [3]) },
  },
  {
    id: 'OWS-16',
    name: 'a blind append after a RESTORE that leaves the metadata as it was commits (identical metadata is no change)',
    table: 'U',
    loser: append(inU([500])),
    winner: restore(1),
    off: { outcome: 'commit', ids: idsOf(span(0, 50), [], [500]) },
    on: { outcome: 'commit', ids: idsOf(span(0, 50), [], [500]) },
  },
  {
    id: 'OWS-17',
    name: 'replaceWhere after a RESTORE that removed only files it did not read commits',
    table: 'U',
    loser: overwrite(inU([5]), 'id < 10'),
    winner: restore(1),
    off: { outcome: 'commit', ids: idsOf(span(0, 50), span(0, 10), [5]) },
    on: { outcome: 'commit', ids: idsOf(span(0, 50), span(0, 10), [5]) },
  },
  {
    id: 'OWS-18',
    name: 'an append loses to a RESTORE that sets an older metadata back',
    table: 'M',
    loser: append(inU([500])),
    winner: restore(2),
    off: { outcome: 'abort', code: METADATA, ids: ALL },
    on: { outcome: 'abort', code: METADATA, ids: ALL },
  },
  {
    id: 'OWS-19',
    name: 'a RESTORE that sets an older metadata back loses to an append',
    table: 'M',
    loser: restore(2),
    winner: append(inU([500])),
    off: { outcome: 'abort', code: APPEND, ids: idsOf(ALL, [], [500]) },
    on: { outcome: 'abort', code: APPEND, ids: idsOf(ALL, [], [500]) },
  },
]

/** Table M: U with a table property set at version 3, so that RESTORE to 2 changes the metadata. */
async function tableM(): Promise<string> {
  return fromTemplate('OWS-M', async (dir) => {
    const { cp } = await import('node:fs/promises')
    await cp(await tableT(100, 2), dir, { recursive: true })
    const t = await openTable(dir)
    await setTableProperties(t, { 'owner.team': 'ingest' })
  })
}

async function open(kind: 'P' | 'U' | 'M', conflicts: Conflicts): Promise<DeltaTable> {
  const dir = kind === 'P' ? await tableP() : kind === 'M' ? await tableM() : await tableT(100, 2)
  return openTable(dir, conflicts)
}

describe('OWS: overwrite and RESTORE against concurrent writers', () => {
  for (const record of PAIRS) {
    for (const [flags, expect] of [
      ['off', record.off],
      ['on', record.on],
    ] as const) {
      it(`${record.id} flags ${flags}: ${record.name}`, async () => {
        const table = await open(record.table, flags === 'on' ? 'all' : 'none')
        try {
          const txn = await table.begin(
            record.isolation === undefined ? {} : { isolationLevel: record.isolation },
          )
          await record.loser(txn)
          const winner = await run(table, record.winner)
          const result = { winner, loser: await settle(txn.commit()) }
          if (expect.outcome === 'commit') {
            const r = committed(result.loser)
            assert.equal(r.version, result.winner.version + 1n)
            assert.deepEqual(
              r.reconciliations.map((x) => x.kind),
              expect.reconciled ?? [],
            )
          } else {
            aborted(result.loser, { code: expect.code, winnerVersion: result.winner.version })
          }
          assert.deepEqual(await liveIds(table), expect.ids)
        } finally {
          await table.close()
        }
      })
    }
  }
})
