/**
 * Leave-one-out over the reconciliation flags: each flag's reconcile scenario runs once with
 * `conflicts: 'all'`, where it reconciles through that flag's case, and once with every flag on
 * but that one, where it must not: it aborts with the exact error code, from the exact check, or
 * (where another flag's path also proves it) commits through that other case, named here. The
 * "off means abort" tests elsewhere turn every flag off together, so a reconcile reached through
 * another flag's path would go unnoticed there.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createLocalStore } from '../../src/storage/index.js'
import type { DeltaTable } from '../../src/table/delta-table.js'
import type { Transaction } from '../../src/table/transaction.js'
import {
  type Conflicts,
  type Op,
  type Outcome,
  openTable,
  preCommitHookStore,
  run,
  s1,
  settle,
  span,
  tableT,
  writeFiles,
} from './scenarios/harness.js'

/** Every boolean flag, by its option key. */
const FLAGS = [
  'rowLevelConcurrency.enabled',
  'conflictDetection.dataSkipping.enabled',
  'conflictDetection.dataSkipping.valueExact.enabled',
  'conflictDetection.excludeNoDataChangeFiles.enabled',
  'optimize.conflictReconciliation.enabled',
  'optimize.conflictReconciliation.reverse.enabled',
  'optimize.zorder.conflictReconciliation.enabled',
  'optimize.zorder.conflictReconciliation.reverse.enabled',
  'merge.sourceKeyReadPredicate.enabled',
  'merge.rowLevelConflicts.enabled',
] as const

type Flag = (typeof FLAGS)[number]

const allBut = (off: readonly Flag[]): Conflicts =>
  Object.fromEntries(FLAGS.map((k) => [k, !off.includes(k)]))

const SERIALIZABLE = { 'delta.isolationLevel': 'Serializable' }

/** A scenario: a fresh table, then the loser's outcome against its winner under `conflicts`. */
type Scenario = (conflicts: Conflicts) => Promise<{ loser: Outcome; table: DeltaTable }>

/** Schedule S1 on a fresh copy of T(n, f): both handles carry `conflicts`. */
const pair =
  (n: number, f: number, loser: Op, winner: Op, properties: Record<string, string> = {}): Scenario =>
  async (conflicts) => {
    const dir = await tableT(n, f, { properties })
    const l = await openTable(dir, conflicts)
    const w = await openTable(dir, conflicts)
    return { loser: (await s1([l, loser], [w, winner])).loser, table: w }
  }

/** An OPTIMIZE that loses: the winner commits just before the OPTIMIZE's commit goes through. */
const optimizeLoses =
  (n: number, f: number, options: { zOrderBy?: string[] }, winner: Op): Scenario =>
  async (conflicts) => {
    const dir = await tableT(n, f)
    const w = await openTable(dir, conflicts)
    const store = preCommitHookStore(createLocalStore(dir), () => run(w, winner))
    const l = await openTable(dir, conflicts, store)
    return { loser: await settle(l.optimize(options)), table: w }
  }

/** A reader that appends: it scans `where`, then commits a file of new ids (no DML). */
const readThenAppend =
  (n: number, f: number, where: string, winner: Op): Scenario =>
  async (conflicts) => {
    const dir = await tableT(n, f)
    const l = await openTable(dir, conflicts)
    const w = await openTable(dir, conflicts)
    const adds = await writeFiles(
      l,
      span(5000, 5003).map((i) => ({ id: BigInt(i) })),
    )
    const txn = await l.begin()
    await txn.scan({ where }).toArray()
    await run(w, winner)
    txn.stageActions(
      adds.map((add) => ({ add })),
      { operation: 'WRITE' },
    )
    return { loser: await settle(txn.commit()), table: w }
  }

const del =
  (where: string): Op =>
  (t: Transaction) =>
    t.delete(where)
const append =
  (...ids: number[]): Op =>
  (t) =>
    t.append(ids.map((id) => ({ id: BigInt(id) })))
const upsert =
  (...ids: number[]): Op =>
  (t) =>
    t.merge(
      ids.map((id) => ({ id: BigInt(id) })),
      { on: 'target.id = source.id', whenMatched: [{ delete: true }], whenNotMatched: [{ insert: '*' }] },
    )
/** An upsert of key 10 whose NOT MATCHED BY SOURCE clause reads every row (no key predicate). */
const upsertBySource: Op = (t) =>
  t.merge([{ id: 10n }], {
    on: 'target.id = source.id',
    whenMatched: [{ delete: true }],
    whenNotMatched: [{ insert: '*' }],
    whenNotMatchedBySource: [{ if: 'target.id > 1000', delete: true }],
  })
const optimize =
  (zOrderBy?: string[]): Op =>
  (t) =>
    t.optimize(zOrderBy === undefined ? {} : { zOrderBy })

interface Row {
  readonly flag: Flag
  readonly scenario: string
  readonly run: Scenario
  /**
   * Flags off in both runs, when another flag's case would decide the scenario first and hide this
   * flag's: the row is then "all but these", then "all but these and the flag".
   */
  readonly base?: readonly Flag[]
  /** The reconciliation kind the flag's case records with every flag on (but `base`). */
  readonly kind: string
  /** With every flag on but this one: the abort, or the other case that proves it instead. */
  readonly without: { readonly code: string; readonly check: string } | { readonly reconciledBy: string }
}

const ROWS: readonly Row[] = [
  {
    flag: 'rowLevelConcurrency.enabled',
    scenario: 'two DELETEs of different rows of one file',
    run: pair(100, 1, del('id = 10'), del('id = 20')),
    kind: 'case2-dv-union',
    without: { code: 'DELTA_CONCURRENT_DELETE_DELETE', check: 'checkDeletedFilesAgainstDeletedFiles' },
  },
  {
    flag: 'conflictDetection.dataSkipping.enabled',
    scenario: 'a DELETE against an append whose file its predicate cannot select (Serializable)',
    run: pair(100, 2, del('id = 10'), append(500), SERIALIZABLE),
    kind: 'case1-data-skipping',
    without: { code: 'DELTA_CONCURRENT_APPEND', check: 'checkAddedFilesThatShouldHaveBeenRead' },
  },
  {
    flag: 'conflictDetection.dataSkipping.valueExact.enabled',
    scenario: 'a reader of id = 50 against a DELETE of other rows of the file it read',
    run: readThenAppend(100, 1, 'id = 50', del('id < 10')),
    kind: 'case1b-delete-read',
    without: { code: 'DELTA_CONCURRENT_APPEND', check: 'checkAddedFilesThatShouldHaveBeenRead' },
  },
  {
    flag: 'conflictDetection.excludeNoDataChangeFiles.enabled',
    scenario: 'a reader that appends against an OPTIMIZE of the files it read',
    run: readThenAppend(100, 2, 'id >= 0', optimize()),
    kind: 'case3-no-data-change',
    without: { code: 'DELTA_CONCURRENT_APPEND', check: 'checkAddedFilesThatShouldHaveBeenRead' },
  },
  {
    flag: 'optimize.conflictReconciliation.enabled',
    scenario: 'an OPTIMIZE against a DELETE in one of its sources',
    run: optimizeLoses(100, 2, {}, del('id = 10')),
    kind: 'case4a-forward-remap',
    without: { code: 'DELTA_CONCURRENT_DELETE_READ', check: 'checkDeletedFilesAgainstReadFiles' },
  },
  {
    flag: 'optimize.conflictReconciliation.reverse.enabled',
    scenario: 'a DELETE against an OPTIMIZE of its file',
    run: pair(100, 2, del('id = 10'), optimize()),
    kind: 'case4b-reverse-remap',
    without: { code: 'DELTA_CONCURRENT_DELETE_READ', check: 'checkDeletedFilesAgainstReadFiles' },
  },
  {
    flag: 'optimize.zorder.conflictReconciliation.enabled',
    scenario: 'a Z-order OPTIMIZE against a DELETE in one of its sources',
    run: optimizeLoses(100, 2, { zOrderBy: ['id'] }, del('id = 10')),
    kind: 'case5a-zorder-forward',
    without: { code: 'DELTA_CONCURRENT_DELETE_READ', check: 'checkDeletedFilesAgainstReadFiles' },
  },
  {
    flag: 'optimize.zorder.conflictReconciliation.reverse.enabled',
    scenario: 'a DELETE against a Z-order OPTIMIZE of its file (row tracking)',
    run: pair(100, 2, del('id = 10'), optimize(['id']), { 'delta.enableRowTracking': 'true' }),
    kind: 'case5b-zorder-reverse',
    without: { code: 'DELTA_CONCURRENT_DELETE_READ', check: 'checkDeletedFilesAgainstReadFiles' },
  },
  {
    flag: 'merge.sourceKeyReadPredicate.enabled',
    scenario: 'a MERGE of key 10 against an append of key 500 (Serializable), Case 6 off',
    run: pair(100, 2, upsert(10), append(500), SERIALIZABLE),
    // With Case 6 on, Case 6 proves this MERGE first (the next test shows it).
    base: ['merge.rowLevelConflicts.enabled'],
    kind: 'case1-data-skipping',
    without: { code: 'DELTA_CONCURRENT_APPEND', check: 'checkAddedFilesThatShouldHaveBeenRead' },
  },
  {
    flag: 'merge.rowLevelConflicts.enabled',
    scenario: 'a MERGE reading every row (NOT MATCHED BY SOURCE) against a DELETE of a row no clause acts on',
    run: pair(100, 2, upsertBySource, del('id = 60')),
    kind: 'case6-merge-rows',
    without: { code: 'DELTA_CONCURRENT_DELETE_READ', check: 'checkDeletedFilesAgainstReadFiles' },
  },
]

const reconciled = (o: Outcome): string[] => {
  if (o.kind === 'aborted')
    assert.fail(`expected a reconcile, got ${o.error.code} in ${o.error.check}: ${o.error.message}`)
  assert.equal(o.result.committed, true)
  return [...new Set(o.result.reconciliations.map((r) => r.kind))]
}

describe("leave-one-out: each flag's scenario with every other flag on", () => {
  it('covers every flag', () => {
    assert.deepEqual(
      ROWS.map((r) => r.flag),
      [...FLAGS],
    )
  })

  for (const row of ROWS) {
    it(`${row.flag} off, every other flag on: ${row.scenario}`, async () => {
      const base = row.base ?? []
      const on = await row.run(base.length === 0 ? 'all' : allBut(base))
      assert.deepEqual(reconciled(on.loser), [row.kind], `with ${row.flag} on, ${row.kind} reconciles it`)
      const off = await row.run(allBut([...base, row.flag]))
      if ('reconciledBy' in row.without) {
        assert.deepEqual(reconciled(off.loser), [row.without.reconciledBy])
        return
      }
      if (off.loser.kind === 'committed') {
        assert.fail(
          `with ${row.flag} off it committed through ${off.loser.result.reconciliations.map((r) => r.kind).join(', ') || 'no reconciliation'}`,
        )
      }
      assert.equal(off.loser.error.code, row.without.code)
      assert.equal(off.loser.error.check, row.without.check)
    })
  }

  it('merge.sourceKeyReadPredicate.enabled off, Case 6 on: Case 6 proves the same MERGE instead', async () => {
    const row = ROWS.find((r) => r.flag === 'merge.sourceKeyReadPredicate.enabled')!
    const { loser } = await row.run(allBut([row.flag]))
    assert.deepEqual(reconciled(loser), ['case6-merge-rows'])
  })

  it('merge.rowLevelConflicts.enabled off: a MERGE whose source keys its read names is proven by Case 1b instead', async () => {
    // The MERGE's source-key read predicate (id IN (10, 500)) does not select the deleted row 60.
    const { loser } = await pair(
      100,
      2,
      upsert(10, 500),
      del('id = 60'),
      SERIALIZABLE,
    )(allBut(['merge.rowLevelConflicts.enabled']))
    assert.deepEqual(reconciled(loser), ['case1b-delete-read'])
  })
})
