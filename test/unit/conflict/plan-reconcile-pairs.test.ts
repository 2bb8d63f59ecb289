/**
 * Each conflict case's fetch plan against its reconcile: run on the same inputs, the reconcile
 * reads no deletion vector and asks no row question the plan did not list. Every deletion vector
 * of a scenario is on offer, so a reconcile that strays past its plan reads one and is caught;
 * the row questions the plan asks are answered over in-memory rows by the row oracle, as the
 * commit loop answers them with the data plane. The same holds for the whole checker against
 * `planConflictFetches`, with every flag on and the transaction carried from winner to winner.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { dataSkippingCase } from '../../../src/conflict/case1-data-skipping.js'
import { dvUnionPhase } from '../../../src/conflict/case2-dv-union.js'
import { forwardRemapPhase } from '../../../src/conflict/case4a-forward-remap.js'
import { reverseRemapPhase } from '../../../src/conflict/case4b-reverse-remap.js'
import { checkConflicts } from '../../../src/conflict/check-conflicts.js'
import type { FetchedFacts, FetchPlan } from '../../../src/conflict/fetched-facts.js'
import { type ConflictFlags, parseConflictFlags } from '../../../src/conflict/flags.js'
import type { PhaseInput, PlanInput, RowLevelPhase } from '../../../src/conflict/phase.js'
import { planConflictFetches } from '../../../src/conflict/plan-fetches.js'
import type { TransactionInfo } from '../../../src/conflict/transaction-info.js'
import type { WinningCommitSummary } from '../../../src/conflict/winning-commit.js'
import { initDeletionVectors } from '../../../src/dv/initialization.js'
import type { Action, AddFile, DeletionVectorDescriptor } from '../../../src/protocol/actions.js'
import { compaction, dmlWinner, dvUpdate, optimizeLoser, source } from './compaction-fixture.js'
import {
  A,
  add,
  DV_PROTOCOL,
  DvStore,
  dvMeta,
  flagsWith,
  loser,
  meta,
  outcomeOf,
  removeOf,
  winner,
} from './factories.js'
import { answerRowQueries, idRows, type TableRows } from './row-oracle.js'

await initDeletionVectors()

// === Recording the facts a reconcile reads ===

/** A map that remembers every key looked up in it. */
class RecordingMap<V> extends Map<string, V> {
  readonly asked = new Set<string>()

  override get(key: string): V | undefined {
    this.asked.add(key)
    return super.get(key)
  }

  override has(key: string): boolean {
    this.asked.add(key)
    return super.has(key)
  }
}

/** What a reconcile read beyond its plan, and how many facts it read at all. */
interface Audit {
  readonly unplanned: readonly string[]
  readonly read: number
}

/**
 * Offers every deletion vector of `store` and the oracle's answers to the planned row questions,
 * runs `reconcile` on them, and lists the lookups the plan does not cover.
 */
function audited<T>(
  plan: FetchPlan,
  store: DvStore,
  rows: TableRows,
  reconcile: (fetched: FetchedFacts) => T,
): { readonly result: T; readonly audit: Audit } {
  const offered = store.facts()
  const answered = answerRowQueries(plan, rows, offered)
  const deletionVectors = new RecordingMap(offered.deletionVectors)
  const rowMatches = new RecordingMap(answered.rowMatches)
  const result = reconcile({ deletionVectors, rowMatches })
  const plannedDvs = new Set(plan.deletionVectors.map((d) => d.key))
  const plannedRows = new Set(plan.rowQueries.map((q) => q.key))
  const unplanned = [
    ...[...deletionVectors.asked].filter((k) => !plannedDvs.has(k)).map((k) => `deletion vector ${k}`),
    ...[...rowMatches.asked].filter((k) => !plannedRows.has(k)).map((k) => `row question ${k}`),
  ]
  return { result, audit: { unplanned, read: deletionVectors.asked.size + rowMatches.asked.size } }
}

// === Scenarios: real small commits ===

/** A loser and the winners it meets in version order, with the bitmaps and rows behind them. */
interface Scenario {
  readonly name: string
  readonly txn: TransactionInfo
  readonly winners: readonly WinningCommitSummary[]
  readonly store: DvStore
  readonly rows: TableRows
  /** The case's verdict per winner. */
  readonly expect: readonly string[]
}

/** The 100-row file `f.parquet` (physical row r holds id r), with a read-time deletion vector. */
function fileF(dv?: DeletionVectorDescriptor): AddFile {
  return add('f.parquet', {
    stats: { numRecords: 100, min: { id: 0 }, max: { id: 99 } },
    ...(dv ? { dv } : {}),
  })
}

/** Rows of T(300,3) and of `f.parquet`, in physical order. */
const ROWS: TableRows = new Map([
  ['f.parquet', idRows(0, 100)],
  ['s0.parquet', idRows(0, 100)],
  ['s1.parquet', idRows(100, 200)],
  ['s2.parquet', idRows(200, 300)],
])

/** Case 2: a losing DV delete on `f.parquet` against winning DV deletes on it. */
function dvUnionScenarios(): Scenario[] {
  const race = (
    name: string,
    loserRows: readonly number[],
    winnerRows: readonly (readonly number[])[],
    expect: readonly string[],
  ): Scenario => {
    const store = new DvStore()
    const read = fileF(store.dv('base', [0]))
    const txn = loser({
      metadata: dvMeta(),
      protocol: DV_PROTOCOL,
      files: [read],
      reads: [{ scan: 'id = 10' }],
      actions: dvUpdate(read, store.dv('loser', [0, ...loserRows])),
      operation: 'DELETE',
    })
    let pre = read
    const winners = winnerRows.map((rows, i) => {
      const post = store.dv(`winner${i}`, rows)
      const w = dmlWinner(BigInt(i + 2), dvUpdate(pre, post))
      pre = { ...read, deletionVector: post }
      return w
    })
    return { name, txn, winners, store, rows: ROWS, expect }
  }
  return [
    race('disjoint deletions merge', [10], [[0, 20]], ['reconciled']),
    race('a row deleted by both is refused', [10], [[0, 10]], ['unchanged']),
    race('a winner that restored a row is refused', [10], [[20]], ['unchanged']),
    race(
      'two winners in turn compose',
      [10],
      [
        [0, 20],
        [0, 20, 30],
      ],
      ['reconciled', 'reconciled'],
    ),
  ]
}

/** Case 4a: a losing OPTIMIZE of T(300,3) (s1 with a read-time DV) against winning DMLs. */
function forwardRemapScenarios(): Scenario[] {
  const race = (
    name: string,
    winnerActions: (s1: AddFile, store: DvStore) => readonly (readonly Action[])[],
    expect: readonly string[],
  ): Scenario => {
    const store = new DvStore()
    const sources = [source(0), source(1, store.dv('base', [0])), source(2)]
    const txn = optimizeLoser(sources)
    const winners = winnerActions(sources[1]!, store).map((actions, i) => dmlWinner(BigInt(i + 2), actions))
    return { name, txn, winners, store, rows: ROWS, expect }
  }
  return [
    race('a winner deletion on a source is remapped', (s1, store) => [dvUpdate(s1, store.dv('w', [0, 50]))], [
      'reconciled',
    ]),
    race(
      'a source removed whole loses its remaining rows in the output',
      (s1) => [[A.remove(removeOf(s1))]],
      ['reconciled'],
    ),
    race(
      'two winners on the same source compose',
      (s1, store) => {
        const first = store.dv('w1', [0, 50])
        return [dvUpdate(s1, first), dvUpdate({ ...s1, deletionVector: first }, store.dv('w2', [0, 50, 60]))]
      },
      ['reconciled', 'reconciled'],
    ),
    race('a winner that restored a row is refused', (s1, store) => [dvUpdate(s1, store.dv('w', [50]))], [
      'unchanged',
    ]),
  ]
}

/** Case 4b: a losing DML on T(300,3) (s1 with a read-time DV) against a winning compaction. */
function reverseRemapScenarios(): Scenario[] {
  const race = (
    name: string,
    loserActions: (s1: AddFile, store: DvStore) => readonly Action[],
    expect: readonly string[],
  ): Scenario => {
    const store = new DvStore()
    const sources = [source(0), source(1, store.dv('base', [0])), source(2)]
    const txn = loser({
      metadata: dvMeta(),
      protocol: DV_PROTOCOL,
      files: sources,
      reads: [{ scan: 'id = 150' }],
      actions: loserActions(sources[1]!, store),
      operation: 'DELETE',
    })
    const w = winner(2n, compaction(sources), { operation: 'OPTIMIZE', blind: false })
    return { name, txn, winners: [w], store, rows: ROWS, expect }
  }
  return [
    race(
      'a losing deletion is remapped onto the output',
      (s1, store) => dvUpdate(s1, store.dv('loser', [0, 50])),
      ['reconciled'],
    ),
    race('a source the loser removed whole is remapped', (s1) => [A.remove(removeOf(s1))], ['reconciled']),
    race(
      'a loser whose deletion vector lost its read-time row is refused',
      (s1, store) => dvUpdate(s1, store.dv('loser', [50])),
      ['unchanged'],
    ),
  ]
}

/** Case 1: an appending reader of f0 (ids 0..99) and f1 (ids 100..199) against a winner. */
function dataSkippingScenarios(): Scenario[] {
  const T = meta({ id: 'long' }, [], { 'delta.isolationLevel': 'Serializable' })
  const stats = (from: number) => ({ numRecords: 100, min: { id: from }, max: { id: from + 99 } })
  const race = (
    name: string,
    where: string,
    winnerActions: (files: readonly AddFile[], store: DvStore) => readonly Action[],
    expect: string,
  ): Scenario => {
    const store = new DvStore()
    const files = [
      add('f0.parquet', { stats: stats(0) }),
      add('f1.parquet', { stats: stats(100), dv: store.dv('base', [0, 1]) }),
    ]
    const txn = loser({
      metadata: T,
      protocol: DV_PROTOCOL,
      files,
      reads: [{ scan: where }],
      actions: [A.add(add('loser.parquet'))],
      operation: 'WRITE',
    })
    const w = winner(2n, winnerActions(files, store), { operation: 'WRITE', blind: false })
    const rows: TableRows = new Map([
      ['f0.parquet', idRows(0, 100)],
      ['f1.parquet', idRows(100, 200)],
      ['odd.parquet', idRows(1001, 1100, 2)],
      ['even.parquet', idRows(1000, 1100, 2)],
    ])
    return { name, txn, winners: [w], store, rows, expect: [expect] }
  }
  const added = (path: string, from: number) =>
    A.add(add(path, { size: 400n, stats: { numRecords: 50, min: { id: from }, max: { id: from + 98 } } }))
  const reAdd = (f1: AddFile, post: DeletionVectorDescriptor) => dvUpdate(f1, post)
  return [
    race(
      'an added file with no matching row is skipped',
      'id % 2 = 1',
      () => [added('even.parquet', 1000)],
      'ok',
    ),
    race(
      'an added file with a matching row conflicts',
      'id % 2 = 1',
      () => [added('odd.parquet', 1001)],
      'ConcurrentAppendError',
    ),
    race(
      'a re-add whose deletion vector grew carries no new row, and its deleted rows match no read',
      'id % 1000 > 150',
      (files, store) => reAdd(files[1]!, store.dv('post', [0, 1, 2, 3])),
      'ok',
    ),
    race(
      'a re-add that restored a row is not asked about and conflicts',
      'id % 2 = 1',
      (files, store) => reAdd(files[1]!, store.dv('post', [1, 5])),
      'ConcurrentAppendError',
    ),
    race(
      'a removed file whose rows match no read is ignored',
      'id % 1000 = 500',
      (files) => [A.remove(removeOf(files[0]!))],
      'ok',
    ),
    race(
      'a removed file whose rows match a read conflicts',
      'id % 2 = 1',
      (files) => [A.remove(removeOf(files[0]!))],
      'ConcurrentDeleteReadError',
    ),
  ]
}

// === The cases under test ===

/** One case: its flags, its plan, and its reconcile reduced to a verdict and the next transaction. */
interface CaseUnderTest {
  readonly name: string
  readonly flags: ConflictFlags
  readonly plan: (input: PlanInput) => FetchPlan
  readonly reconcile: (input: PhaseInput) => { readonly txn: TransactionInfo; readonly verdict: string }
  readonly scenarios: () => Scenario[]
}

function phase(p: RowLevelPhase): CaseUnderTest['reconcile'] {
  return (input) => {
    const outcome = p.reconcile(input)
    return { txn: outcome.txn, verdict: outcome.resolvedPaths.length > 0 ? 'reconciled' : 'unchanged' }
  }
}

const CASES: readonly CaseUnderTest[] = [
  {
    name: 'Case 1 (data skipping, value-exact, delete/read)',
    flags: flagsWith({ dataSkipping: true, dataSkippingValueExact: true }),
    plan: dataSkippingCase.plan,
    // Case 1 reconciles inside the file checks, which call its three questions.
    reconcile: (input) => {
      const result = checkConflicts(input.txn, input.winner, input.flags, input.fetched)
      return { txn: result.kind === 'ok' ? result.txn : input.txn, verdict: outcomeOf(result) }
    },
    scenarios: dataSkippingScenarios,
  },
  {
    name: 'Case 2 (deletion-vector union)',
    flags: flagsWith({ rowLevelConcurrency: true }),
    plan: dvUnionPhase.plan,
    reconcile: phase(dvUnionPhase),
    scenarios: dvUnionScenarios,
  },
  {
    name: 'Case 4a (forward compaction remap)',
    flags: flagsWith({ optimizeReconciliation: true }),
    plan: forwardRemapPhase.plan,
    reconcile: phase(forwardRemapPhase),
    scenarios: forwardRemapScenarios,
  },
  {
    name: 'Case 4b (reverse compaction remap)',
    flags: flagsWith({ optimizeReverseReconciliation: true }),
    plan: reverseRemapPhase.plan,
    reconcile: phase(reverseRemapPhase),
    scenarios: reverseRemapScenarios,
  },
]

describe('each case reconciles only from facts its own plan fetched', () => {
  for (const c of CASES) {
    describe(c.name, () => {
      for (const s of c.scenarios()) {
        it(s.name, () => {
          let txn = s.txn
          const verdicts: string[] = []
          s.winners.forEach((w) => {
            const plan = c.plan({ txn, winner: w, flags: c.flags })
            const { result, audit } = audited(plan, s.store, s.rows, (fetched) =>
              c.reconcile({ txn, winner: w, flags: c.flags, fetched }),
            )
            assert.deepEqual(audit.unplanned, [], `winner ${w.version}: read beyond the plan`)
            assert.ok(audit.read > 0, `winner ${w.version}: the reconcile read no fact`)
            verdicts.push(result.verdict)
            txn = result.txn
          })
          assert.deepEqual(verdicts, s.expect)
        })
      }
    })
  }
})

describe('the checker reads only facts planConflictFetches fetched, with every flag on', () => {
  const ALL = parseConflictFlags('all')
  for (const c of CASES) {
    it(`over the scenarios of ${c.name}`, () => {
      let read = 0
      for (const s of c.scenarios()) {
        let txn = s.txn
        for (const w of s.winners) {
          const plan = planConflictFetches(txn, w, ALL)
          const { result, audit } = audited(plan, s.store, s.rows, (fetched) =>
            checkConflicts(txn, w, ALL, fetched),
          )
          assert.deepEqual(audit.unplanned, [], `${s.name}, winner ${w.version}: read beyond the plan`)
          read += audit.read
          if (result.kind !== 'ok') break
          txn = result.txn
        }
      }
      assert.ok(read > 0, 'the checker read no fact')
    })
  }
})
