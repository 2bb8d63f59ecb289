/**
 * Case 1: conflict-time data skipping (scenarios.md suites CDS, DRC and MSK), at the action level.
 * Row questions of the fetch plan are answered over in-memory rows by the real row evaluator,
 * as the commit loop answers them with the data plane.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  deleteReadVerdict,
  filterFilesByStats,
  valueExactRulesOut,
} from '../../../src/conflict/case1-data-skipping.js'
import type { ConflictCheckResult } from '../../../src/conflict/check-conflicts.js'
import type { FetchedFacts } from '../../../src/conflict/fetched-facts.js'
import { type ConflictFlags, DEFAULT_CONFLICT_FLAGS } from '../../../src/conflict/flags.js'
import { planConflictFetches } from '../../../src/conflict/plan-fetches.js'
import { createReadMatcher } from '../../../src/conflict/read-matcher.js'
import { createTransactionInfo, type ReadPredicate } from '../../../src/conflict/transaction-info.js'
import { summarizeWinningCommit } from '../../../src/conflict/winning-commit.js'
import { initDeletionVectors } from '../../../src/dv/initialization.js'
import type { Action, AddFile, Metadata } from '../../../src/protocol/actions.js'
import {
  A,
  add,
  check,
  DV_PROTOCOL,
  flagsWith,
  inlineDv,
  LEGACY_PROTOCOL,
  loser,
  meta,
  outcomeOf,
  type ReadSpec,
  readOf,
  removeOf,
  winner,
} from './factories.js'
import { answerRowQueries, idRows, type TableRows } from './row-oracle.js'

await initDeletionVectors()

const STATS_ON = flagsWith({ dataSkipping: true })
const EXACT_ON = flagsWith({ dataSkipping: true, dataSkippingValueExact: true })
const T = meta({ id: 'long' }, [], { 'delta.isolationLevel': 'Serializable' })

/** An add holding `ids` (rows in that order), with min/max stats unless `noStats`. */
function fileOf(
  path: string,
  ids: readonly number[],
  o: { noStats?: boolean; dv?: readonly number[] } = {},
): AddFile {
  const min = Math.min(...ids)
  const max = Math.max(...ids)
  return add(path, {
    size: BigInt(ids.length * 8),
    ...(o.noStats ? {} : { stats: { numRecords: ids.length, min: { id: min }, max: { id: max } } }),
    ...(o.dv ? { dv: inlineDv(o.dv) } : {}),
  })
}

const range = (from: number, to: number, step = 1) => idRows(from, to, step).map((r) => Number(r.id))
/** The standard table T(1000,10): file i holds ids [100i, 100i + 100). */
const tenFiles = Array.from({ length: 10 }, (_, i) => fileOf(`f${i}.parquet`, range(100 * i, 100 * i + 100)))
const tenRows: [string, ReturnType<typeof idRows>][] = tenFiles.map((f, i) => [
  f.path,
  idRows(100 * i, 100 * i + 100),
])

interface Race {
  readonly metadata?: Metadata
  readonly files: readonly AddFile[]
  readonly rows: TableRows
  readonly reads: readonly ReadSpec[]
  readonly exact?: string
  readonly loser: readonly Action[]
  readonly winner: readonly Action[]
  readonly winnerBlind?: boolean
  readonly flags: ConflictFlags
}

function race(r: Race): { result: ConflictCheckResult; facts: FetchedFacts } {
  const metadata = r.metadata ?? T
  let txn = loser({
    metadata,
    protocol: DV_PROTOCOL,
    files: r.files,
    reads: r.reads,
    actions: r.loser,
    operation: 'DELETE',
  })
  if (r.exact !== undefined) {
    // A MERGE source-key read: cheap pre-filter for stats, exact key set for the row tier.
    const read = txn.readPredicates[0]!
    txn = createTransactionInfo({
      ...txn,
      readFiles: txn.readFiles.values(),
      readPredicates: [{ ...read, exactDataPredicate: readOf(r.exact, metadata).dataPredicate }],
    })
  }
  const w = winner(2n, r.winner, {
    operation: 'WRITE',
    ...(r.winnerBlind === undefined ? {} : { blind: r.winnerBlind }),
  })
  const plan = planConflictFetches(txn, w, r.flags)
  const facts = answerRowQueries(plan, r.rows, { deletionVectors: new Map(), rowMatches: new Map() })
  return { result: check(txn, w, r.flags, facts), facts }
}

const kinds = (r: ConflictCheckResult) =>
  r.kind === 'ok' ? r.reconciliations.map((x) => `${x.kind}:${x.detail.files?.join('+')}`) : []

describe('Case 1 stats and value-exact tiers against a concurrent append (CDS)', () => {
  const appended = fileOf('w.parquet', range(1000, 1100))
  const evens = fileOf('w.parquet', range(1000, 1100, 2))
  const rows = (w: AddFile, ids: number[]): TableRows =>
    new Map([...tenRows, [w.path, ids.map((id) => ({ id: BigInt(id) }))]])
  const deleteLoser = () => [
    A.remove(removeOf(tenFiles[0]!)),
    A.add(fileOf('rewritten.parquet', range(50, 100))),
  ]

  const table: readonly [string, string, AddFile, number[], ConflictFlags, string, string[]][] = [
    [
      'CDS-01 disjoint ranges are skipped',
      'id < 50',
      appended,
      range(1000, 1100),
      STATS_ON,
      'ok',
      ['case1-data-skipping:w.parquet'],
    ],
    [
      'CDS-02 overlapping ranges still conflict',
      'id >= 950',
      appended,
      range(1000, 1100),
      STATS_ON,
      'ConcurrentAppendError',
      [],
    ],
    [
      'CDS-03 feature disabled',
      'id < 50',
      appended,
      range(1000, 1100),
      DEFAULT_CONFLICT_FLAGS,
      'ConcurrentAppendError',
      [],
    ],
    [
      'CDS-04 missing stats still conflict',
      'id < 50',
      fileOf('w.parquet', range(1000, 1100), { noStats: true }),
      range(1000, 1100),
      STATS_ON,
      'ConcurrentAppendError',
      [],
    ],
    [
      'CDS-10 value-exact reconciles a modulo predicate stats cannot skip',
      'id % 2 = 1',
      evens,
      range(1000, 1100, 2),
      EXACT_ON,
      'ok',
      ['case1-data-skipping:w.parquet'],
    ],
    [
      'CDS-11 value-exact disabled: the modulo predicate still conflicts',
      'id % 2 = 1',
      evens,
      range(1000, 1100, 2),
      STATS_ON,
      'ConcurrentAppendError',
      [],
    ],
    [
      'value-exact finds a matching row: conflict',
      'id % 2 = 0',
      evens,
      range(1000, 1100, 2),
      EXACT_ON,
      'ConcurrentAppendError',
      [],
    ],
  ]
  for (const [id, where, w, ids, flags, expected, reconciled] of table) {
    it(`${id}: ${expected}`, () => {
      const { result } = race({
        files: tenFiles,
        rows: rows(w, ids),
        reads: [{ scan: where }],
        loser: deleteLoser(),
        winner: [A.add(w)],
        flags,
      })
      assert.equal(outcomeOf(result), expected)
      assert.deepEqual(kinds(result), reconciled)
      if (result.kind === 'conflict') assert.equal(result.error.file, 'w.parquet')
    })
  }

  it('CDS-06 a non-blind loser with no read predicates still conflicts with a blind append', () => {
    const { result } = race({
      files: tenFiles,
      rows: new Map(),
      reads: [],
      loser: [A.add(add('loser.parquet')), A.remove(removeOf(tenFiles[3]!))],
      winner: [A.add(add('winner.parquet'))],
      winnerBlind: true,
      flags: EXACT_ON,
    })
    assert.equal(outcomeOf(result), 'ConcurrentAppendError')
  })

  it('a whole-table read is never pruned', () => {
    const { result } = race({
      files: tenFiles,
      rows: rows(appended, range(1000, 1100)),
      reads: [{ scan: 'id < 50' }, { wholeTable: true }],
      loser: deleteLoser(),
      winner: [A.add(appended)],
      flags: EXACT_ON,
    })
    assert.equal(outcomeOf(result), 'ConcurrentAppendError')
  })

  it('an unanswered value-exact question keeps the candidates', () => {
    const txn = loser({
      metadata: T,
      files: tenFiles,
      reads: [{ scan: 'id % 2 = 1' }],
      actions: deleteLoser(),
      operation: 'DELETE',
    })
    const w = winner(2n, [A.add(evens)])
    assert.equal(planConflictFetches(txn, w, EXACT_ON).rowQueries.length, 1)
    assert.equal(outcomeOf(check(txn, w, EXACT_ON)), 'ConcurrentAppendError')
  })

  it('survivors above valueExact.maxBytes are not scanned and keep conflicting', () => {
    const txn = loser({
      metadata: T,
      files: tenFiles,
      reads: [{ scan: 'id % 2 = 1' }],
      actions: deleteLoser(),
      operation: 'DELETE',
    })
    const w = winner(2n, [A.add(evens)])
    const small = { ...EXACT_ON, valueExactMaxBytes: 10 }
    assert.deepEqual(planConflictFetches(txn, w, small).rowQueries, [])
    const facts = answerRowQueries(planConflictFetches(txn, w, EXACT_ON), rows(evens, range(1000, 1100, 2)), {
      deletionVectors: new Map(),
      rowMatches: new Map(),
    })
    assert.equal(outcomeOf(check(txn, w, small, facts)), 'ConcurrentAppendError')
    assert.equal(outcomeOf(check(txn, w, EXACT_ON, facts)), 'ok')
  })
})

describe('Case 1 filters (CDS unit records)', () => {
  const matcher = createReadMatcher(T)
  const reads = (...sets: (readonly string[])[]): { readPredicates: ReadPredicate[] } => ({
    readPredicates: sets.map((filters) =>
      readOf(filters.length === 0 ? undefined : filters.join(' AND '), T),
    ),
  })
  const kept = (r: { readPredicates: ReadPredicate[] }, files = tenFiles) =>
    filterFilesByStats(files, r, matcher).kept.map((f) => f.path)

  it('CDS-08 predicates inside one read are ANDed', () => {
    assert.deepEqual(kept(reads(['id >= 200', 'id < 300'])), ['f2.parquet'])
    assert.equal(kept(reads(['id >= 200'])).length, 8)
  })

  it('CDS-09 reads are ORed, and a read without predicates keeps everything', () => {
    assert.deepEqual(kept(reads(['id >= 200', 'id < 300'], ['id >= 800'])), [
      'f2.parquet',
      'f8.parquet',
      'f9.parquet',
    ])
    assert.equal(kept(reads(['id >= 200', 'id < 300'], [])).length, 10)
  })

  function valueExact(files: readonly AddFile[], fileRows: TableRows, filters: readonly string[]): number {
    const txn = loser({
      metadata: T,
      files,
      reads: [{ scan: filters.length === 0 ? undefined : filters.join(' AND ') }],
      actions: [A.remove(removeOf(files[0]!))],
      operation: 'DELETE',
    })
    const w = winner(
      2n,
      files.map((f) => A.add(f)),
    )
    const facts = answerRowQueries(planConflictFetches(txn, w, EXACT_ON), fileRows, {
      deletionVectors: new Map(),
      rowMatches: new Map(),
    })
    return valueExactRulesOut(files, { txn, winner: w, flags: EXACT_ON }, matcher, facts) ? 0 : files.length
  }
  const even = fileOf('even.parquet', range(0, 100, 2))
  const odd = fileOf('odd.parquet', range(1, 100, 2))
  const evenRows: TableRows = new Map([['even.parquet', idRows(0, 100, 2)]])
  const bothRows: TableRows = new Map([...evenRows, ['odd.parquet', idRows(1, 100, 2)]])

  it('CDS-13 a value-exact scan drops a file whose rows never match and keeps one that does', () => {
    assert.equal(valueExact([even], evenRows, ['id % 2 = 1']), 0)
    assert.equal(valueExact([even], evenRows, ['id % 2 = 0']), 1)
    assert.equal(kept(reads(['id % 2 = 1']), [even]).length, 1)
    assert.equal(valueExact([even], evenRows, []), 1)
  })

  it('CDS-14 the value-exact scan is one existence question for all candidates', () => {
    assert.equal(valueExact([odd, even], bothRows, ['id % 2 = 1']), 2)
    assert.equal(valueExact([odd, even], bothRows, ['id % 2 = 0']), 2)
    assert.equal(valueExact([odd, even], bothRows, ['id % 2 = 5']), 0)
  })

  it('CDS-15 a predicate on a missing column keeps every file (fail-safe)', () => {
    assert.equal(kept(reads(['does_not_exist = 1'])).length, 10)
    assert.equal(valueExact(tenFiles, new Map(tenRows), ['does_not_exist = 1']), 10)
  })
})

describe('Case 1b delete/read refinement (DRC)', () => {
  const whole = fileOf('p.parquet', range(0, 100))
  const pRows: TableRows = new Map([['p.parquet', idRows(0, 100)]])
  const matcher = createReadMatcher(T)

  function verdictFor(where: string | undefined, post: 'dv' | 'none', rowsMap: TableRows = pRows) {
    const txn = loser({
      metadata: T,
      files: [whole],
      reads: [{ scan: where }],
      actions: [A.add(add('loser.parquet'))],
      operation: 'WRITE',
    })
    const actions = [A.remove(removeOf(whole))]
    if (post === 'dv') actions.push(A.add({ ...whole, deletionVector: inlineDv(range(0, 10)) }))
    const w = summarizeWinningCommit(2n, [A.commitInfo('DELETE', false), ...actions])
    const verdict = deleteReadVerdict(w.removedFiles[0]!, txn, w, matcher)
    if (verdict.kind !== 'query') return verdict.kind
    const facts = answerRowQueries({ deletionVectors: [], rowQueries: [verdict.query] }, rowsMap, {
      deletionVectors: new Map(),
      rowMatches: new Map(),
    })
    return facts.rowMatches.get(verdict.query.key) === false ? 'no-match' : 'conflict'
  }

  const unit: readonly [string, string | undefined, 'dv' | 'none', string][] = [
    ['DRC-01 DV delete of [0,10), read id < 5', 'id < 5', 'dv', 'conflict'],
    ['DRC-01 read id < 10', 'id < 10', 'dv', 'conflict'],
    ['DRC-01 read id >= 50', 'id >= 50', 'dv', 'no-match'],
    ['DRC-01 read id >= 10', 'id >= 10', 'dv', 'no-match'],
    ['DRC-02 whole-file removal, read id < 5', 'id < 5', 'none', 'conflict'],
    ['DRC-02 whole-file removal, read id >= 200', 'id >= 200', 'none', 'no-match'],
    ['DRC-04 a read with no eligible filter', undefined, 'none', 'conflict'],
    ['DRC-05 a predicate on a missing column', 'does_not_exist = 1', 'none', 'conflict'],
  ]
  for (const [id, where, post, expected] of unit) {
    it(`${id}: ${expected}`, () => {
      assert.equal(verdictFor(where, post), expected)
    })
  }

  it('a file the data plane could not answer for counts as a conflict', () => {
    assert.equal(verdictFor('id >= 50', 'dv', new Map()), 'conflict')
  })

  const evenFile = fileOf('even.parquet', range(0, 100, 2))
  const evenRows: TableRows = new Map([['even.parquet', idRows(0, 100, 2)]])
  const races: readonly [string, string, ConflictFlags, string][] = [
    ['DRC-06 an odd reader vs the whole-file delete of the all-even file', 'id % 2 = 1', EXACT_ON, 'ok'],
    ['DRC-07 an even reader vs the same delete', 'id % 2 = 0', EXACT_ON, 'ConcurrentDeleteReadError'],
    ['DRC-08 the flags off', 'id % 2 = 1', DEFAULT_CONFLICT_FLAGS, 'ConcurrentDeleteReadError'],
    ['only the stats flag on', 'id % 2 = 1', STATS_ON, 'ConcurrentDeleteReadError'],
  ]
  for (const [id, where, flags, expected] of races) {
    it(`${id}: ${expected}`, () => {
      const { result } = race({
        metadata: meta({ id: 'long' }),
        files: [evenFile],
        rows: evenRows,
        reads: [{ scan: where }],
        loser: [A.add(add('loser.parquet'))],
        winner: [A.remove(removeOf(evenFile))],
        winnerBlind: false,
        flags,
      })
      assert.equal(outcomeOf(result), expected)
      if (expected === 'ok') assert.deepEqual(kinds(result), ['case1b-delete-read:even.parquet'])
    })
  }

  const morRaces: readonly [string, string, string][] = [
    ['DRC-10 merge-on-read: a reader of id >= 50 vs a DV delete of [0,10)', 'id >= 50', 'ok'],
    ['DRC-11 merge-on-read: a reader of id < 5 vs the same delete', 'id < 5', 'ConcurrentDeleteReadError'],
  ]
  for (const [id, where, expected] of morRaces) {
    it(`${id}: ${expected}`, () => {
      const m = meta({ id: 'long' }, [], { 'delta.enableDeletionVectors': 'true' })
      const { result } = race({
        metadata: m,
        files: [whole],
        rows: pRows,
        reads: [{ scan: where }],
        loser: [A.add(add('loser.parquet'))],
        winner: [A.remove(removeOf(whole)), A.add({ ...whole, deletionVector: inlineDv(range(0, 10)) })],
        winnerBlind: false,
        flags: EXACT_ON,
      })
      assert.equal(outcomeOf(result), expected)
      if (expected === 'ok') {
        // The re-add carries no new row (added-files check) and the removed rows match no read.
        assert.deepEqual(kinds(result), ['case1b-delete-read:p.parquet', 'case1b-delete-read:p.parquet'])
      }
    })
  }

  it('a re-add that undeleted rows is not excluded from the added-files check', () => {
    const dvFile = fileOf('p.parquet', range(0, 100), { dv: [1, 2, 3] })
    const { result } = race({
      metadata: meta({ id: 'long' }, [], { 'delta.enableDeletionVectors': 'true' }),
      files: [dvFile],
      rows: pRows,
      reads: [{ scan: 'id >= 50' }],
      loser: [A.add(add('loser.parquet'))],
      winner: [A.remove(removeOf(dvFile)), A.add({ ...dvFile, deletionVector: inlineDv([1, 60]) })],
      winnerBlind: false,
      flags: EXACT_ON,
    })
    assert.equal(outcomeOf(result), 'ConcurrentAppendError')
  })
})

describe('MERGE source-key read predicates feeding Case 1 (MSK, action level)', () => {
  const file1 = fileOf('file1.parquet', range(0, 50))
  const file2 = fileOf('file2.parquet', range(50, 100))
  const base: [string, ReturnType<typeof idRows>][] = [
    ['file1.parquet', idRows(0, 50)],
    ['file2.parquet', idRows(50, 100)],
  ]
  const dvOn = meta({ id: 'long', v: 'int' }, [], { 'delta.enableDeletionVectors': 'true' })
  /** An upsert of `keys` as a DV-based MERGE: a DV on the file holding each existing key, one new file. */
  function upsert(keys: readonly number[], newPath: string): Action[] {
    const actions: Action[] = []
    for (const [f, lo] of [
      [file1, 0],
      [file2, 50],
    ] as const) {
      const hits = keys.filter((k) => k >= lo && k < lo + 50).map((k) => k - lo)
      if (hits.length > 0)
        actions.push(A.remove(removeOf(f)), A.add({ ...f, deletionVector: inlineDv(hits) }))
    }
    actions.push(A.add(fileOf(newPath, [...keys])))
    return actions
  }
  function msk(
    loserKeys: readonly number[],
    winnerKeys: readonly number[],
    keyPredicate: boolean,
    insertOnly = false,
  ) {
    const inSet = `id IN (${loserKeys.join(', ')})`
    const winnerActions = insertOnly
      ? [
          A.add(
            fileOf(
              'w-new.parquet',
              winnerKeys.filter((k) => k >= 100),
            ),
          ),
        ]
      : upsert(winnerKeys, 'w-new.parquet')
    const loserActions = insertOnly
      ? [A.add(fileOf('l-new.parquet', [...loserKeys]))]
      : upsert(loserKeys, 'l-new.parquet')
    return race({
      metadata: dvOn,
      files: [file1, file2],
      rows: new Map([...base, ['w-new.parquet', winnerKeys.map((id) => ({ id: BigInt(id) }))]]),
      reads: [{ scan: keyPredicate ? inSet : undefined }],
      loser: loserActions,
      winner: winnerActions,
      winnerBlind: false,
      flags: EXACT_ON,
    }).result
  }

  /** MSK-02: without DVs the winner rewrites file1 (its rows plus the new key) copy-on-write. */
  function mskCopyOnWrite(): ConflictCheckResult {
    const rewritten = fileOf('w-new.parquet', [...range(0, 50), 1000])
    return race({
      metadata: meta({ id: 'long', v: 'int' }),
      files: [file1, file2],
      rows: new Map([...base, ['w-new.parquet', [...idRows(0, 50), { id: 1000n }]]]),
      reads: [{ scan: 'id IN (60, 500)' }],
      loser: [A.remove(removeOf(file2)), A.add(fileOf('l-new.parquet', [...range(50, 100), 500]))],
      winner: [A.remove(removeOf(file1)), A.add(rewritten)],
      winnerBlind: false,
      flags: EXACT_ON,
    }).result
  }

  const table: readonly [string, () => ConflictCheckResult, string][] = [
    ['MSK-01 disjoint keys {60,500} vs {10,1000}', () => msk([60, 500], [10, 1000], true), 'ok'],
    ['MSK-02 the same with deletion vectors off (copy-on-write)', mskCopyOnWrite, 'ok'],
    [
      'MSK-03 the source-key predicate off: the MERGE read the whole table',
      () => msk([60, 500], [10, 1000], false),
      'conflict',
    ],
    ['MSK-05 both MERGEs update key 60', () => msk([60], [60], true), 'conflict'],
    ['MSK-09 insert-only MERGEs with disjoint new keys', () => msk([500], [1000, 10], true, true), 'ok'],
    [
      'MSK-09 insert-only MERGEs inserting the same new key',
      () => msk([700], [2000, 700], true, true),
      'conflict',
    ],
  ]
  for (const [id, run, expected] of table) {
    it(`${id}: ${expected}`, () => {
      const result = run()
      assert.equal(result.kind, expected)
    })
  }

  it('MSK-06 a range pre-filter with an exact key set: the exact keys decide', () => {
    const keys = range(1000, 5000, 2)
    const raceWith = (winnerKeys: number[]) =>
      race({
        metadata: dvOn,
        files: [file1, file2],
        rows: new Map([...base, ['w-new.parquet', winnerKeys.map((id) => ({ id: BigInt(id) }))]]),
        reads: [{ scan: 'id BETWEEN 1000 AND 4998' }],
        exact: `id IN (${keys.join(', ')})`,
        loser: [A.add(fileOf('l-new.parquet', keys))],
        winner: upsert(winnerKeys, 'w-new.parquet'),
        winnerBlind: false,
        flags: EXACT_ON,
      }).result
    assert.equal(raceWith([10, 1001]).kind, 'ok')
    assert.equal(outcomeOf(raceWith([1002])), 'ConcurrentAppendError')
  })

  it('MSK-10 a NOT MATCHED BY SOURCE clause records no key predicate: conflict', () => {
    assert.equal(msk([60], [10, 1000], false).kind, 'conflict')
  })
})

describe('Case 1 does nothing for a blind-append loser or with no flags', () => {
  it('plans no row question for a blind append', () => {
    const txn = createTransactionInfo({
      readVersion: 1n,
      operation: 'WRITE',
      isolationLevel: 'Serializable',
      actions: [A.add(add('mine.parquet'))],
      metadata: T,
      protocol: LEGACY_PROTOCOL,
    })
    const w = winner(2n, [A.add(fileOf('w.parquet', [1]))])
    assert.deepEqual(planConflictFetches(txn, w, EXACT_ON), { deletionVectors: [], rowQueries: [] })
    assert.equal(check(txn, w, EXACT_ON).kind, 'ok')
  })
})
