/**
 * Case 6 at the checker: the row reads its plan lists, and its verdict on the rows the loop
 * returns for them, for the winner shapes no engine operation writes on purpose (a deletion
 * vector that shrank, a copy whose source was not removed, a missing answer).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  encodeKeyTuple,
  MergeKeySetBuilder,
  type MergeReadSet,
} from '../../../src/conflict/case6-merge-read-set.js'
import type { FetchedFacts, ReadRow, RowReadRequest } from '../../../src/conflict/fetched-facts.js'
import { planConflictFetches } from '../../../src/conflict/plan-fetches.js'
import {
  createReadPredicate,
  createTransactionInfo,
  type TransactionInfo,
} from '../../../src/conflict/transaction-info.js'
import { summarizeWinningCommit } from '../../../src/conflict/winning-commit.js'
import { initDeletionVectors } from '../../../src/dv/index.js'
import { parsePredicate } from '../../../src/expressions/index.js'
import {
  type Action,
  createAddFile,
  createProtocol,
  createRemoveFile,
} from '../../../src/protocol/actions.js'
import { A, check, DV_PROTOCOL, flagsWith, inlineDv, meta } from './factories.js'

// The inline deletion vectors below are built when the module loads.
await initDeletionVectors()

const FLAGS = flagsWith({ mergeRowLevelConflicts: true })
const KEY = [{ name: 'id', type: 'long' }] as const

function readSet(keys: readonly bigint[]): MergeReadSet {
  const set = new MergeKeySetBuilder(100, keys.length)
  for (const k of keys) set.add(encodeKeyTuple([k], KEY)!)
  return {
    keyColumns: KEY,
    keys: set.build(),
    keyFilter: parsePredicate(`id IN (${keys.join(', ')})`),
    notMatchedBySource: undefined,
    wholeTable: false,
  }
}

const file = (path: string, o: { dv?: number[]; base?: bigint; version?: bigint; rows?: number } = {}) =>
  createAddFile({
    path,
    partitionValues: {},
    size: 100n,
    modificationTime: 1n,
    dataChange: true,
    deletionVector: o.dv === undefined ? undefined : inlineDv(o.dv),
    baseRowId: o.base,
    defaultRowCommitVersion: o.version,
    ...(o.rows === undefined ? {} : { stats: `{"numRecords":${o.rows}}` }),
  })

const removal = (f: ReturnType<typeof file>) =>
  createRemoveFile({
    path: f.path,
    deletionTimestamp: 10n,
    dataChange: true,
    extendedFileMetadata: true,
    partitionValues: {},
    size: f.size,
    deletionVector: f.deletionVector,
    baseRowId: f.baseRowId,
    defaultRowCommitVersion: f.defaultRowCommitVersion,
  })

function mergeLoser(o: {
  rowTracking?: boolean
  reads: readonly ReturnType<typeof file>[]
}): TransactionInfo {
  const metadata = meta(
    { id: 'long', v: 'int' },
    [],
    o.rowTracking ? { 'delta.enableDeletionVectors': 'true', 'delta.enableRowTracking': 'true' } : {},
  )
  const protocol = o.rowTracking
    ? createProtocol({
        minReaderVersion: 3,
        minWriterVersion: 7,
        readerFeatures: ['deletionVectors'],
        writerFeatures: ['deletionVectors', 'domainMetadata', 'rowTracking'],
      })
    : DV_PROTOCOL
  return createTransactionInfo({
    readVersion: 1n,
    operation: 'MERGE',
    isolationLevel: 'WriteSerializable',
    readPredicates: [createReadPredicate({ mergeRead: readSet([5n]) })],
    readFiles: o.reads,
    actions: [A.add(file('loser-insert.parquet'))],
    metadata,
    protocol,
  })
}

const winnerOf = (actions: readonly Action[], preserved = false) =>
  summarizeWinningCommit(2n, [
    {
      commitInfo: {
        operation: 'MERGE',
        isBlindAppend: false,
        ...(preserved ? { tags: { 'delta.rowTracking.preserved': 'true' } } : {}),
      },
    },
    ...actions,
  ])

/** The facts the loop would load: each planned read answered by `answer(request)`. */
function facts(
  reads: readonly RowReadRequest[],
  answer: (r: RowReadRequest) => readonly ReadRow[] | undefined,
): FetchedFacts {
  const rowReads = new Map<string, readonly ReadRow[]>()
  for (const r of reads) {
    const rows = answer(r)
    if (rows !== undefined) rowReads.set(r.key, rows)
  }
  return { deletionVectors: new Map(), rowMatches: new Map(), rowReads }
}

const row = (id: bigint, key: bigint, version: bigint | null = null): ReadRow => ({
  id,
  version,
  values: [key],
})
const dvPositions = (r: RowReadRequest) => r.file.deletionVector?.cardinality

describe('Case 6 at the checker', () => {
  const f1 = file('f1.parquet', { dv: [1] })
  const update = [A.remove(removal(f1)), A.add(file('f1.parquet', { dv: [1, 2] }))]

  it('plans a key read of the pre- and post-image of a deletion-vector update, and resolves it when no removed row is read', () => {
    const txn = mergeLoser({ reads: [f1] })
    const w = winnerOf(update)
    const plan = planConflictFetches(txn, w, FLAGS)
    assert.equal(plan.rowReads?.length, 2)
    assert.deepEqual(
      plan.rowReads?.map((r) => r.file.path),
      ['f1.parquet', 'f1.parquet'],
    )
    const result = check(
      txn,
      w,
      FLAGS,
      facts(plan.rowReads!, () => []),
    )
    assert.equal(result.kind, 'ok')
    assert.deepEqual(result.kind === 'ok' ? result.reconciliations.map((r) => r.kind) : [], [
      'case6-merge-rows',
    ])
  })

  it('conflicts when the removed row holds a key of the source', () => {
    const txn = mergeLoser({ reads: [f1] })
    const w = winnerOf(update)
    const plan = planConflictFetches(txn, w, FLAGS)
    // Position 2 (key 5) is live before and deleted after.
    const answered = facts(plan.rowReads!, (r) =>
      dvPositions(r) === 1n ? [row(0n, 5n), row(2n, 5n)] : [row(0n, 5n)],
    )
    const result = check(txn, w, FLAGS, answered)
    assert.equal(result.kind, 'conflict')
    assert.match(
      result.kind === 'conflict' ? (result.error.reconcileRefused ?? '') : '',
      /deleted or updated key \(id = 5\)/,
    )
  })

  describe('a deletion-vector update of a file whose row count the statistics give', () => {
    const counted = file('f1.parquet', { dv: [1], rows: 10 })
    const grown = [A.remove(removal(counted)), A.add(file('f1.parquet', { dv: [1, 2], rows: 10 }))]

    it('plans one read of the rows the new vector takes out, not of the pre- and post-image', () => {
      const plan = planConflictFetches(mergeLoser({ reads: [counted] }), winnerOf(grown), FLAGS)
      assert.equal(plan.rowReads?.length, 1)
      const [r] = plan.rowReads!
      assert.equal(r!.file.deletionVector?.cardinality, 1n, 'read under the old vector')
      assert.equal(r!.onlyDeletedBy?.cardinality, 2n, 'only the rows the new one deletes')
    })

    it('conflicts when a taken row is in the read set, and resolves when none is', () => {
      const txn = mergeLoser({ reads: [counted] })
      const w = winnerOf(grown)
      const plan = planConflictFetches(txn, w, FLAGS)
      assert.equal(
        check(
          txn,
          w,
          FLAGS,
          facts(plan.rowReads!, () => [row(2n, 5n)]),
        ).kind,
        'conflict',
      )
      assert.equal(
        check(
          txn,
          w,
          FLAGS,
          facts(plan.rowReads!, () => [row(2n, 6n)]),
        ).kind,
        'ok',
      )
    })

    it('refuses without the answer, naming a vector that shrank as a reason', () => {
      const txn = mergeLoser({ reads: [counted] })
      const w = winnerOf(grown)
      const result = check(
        txn,
        w,
        FLAGS,
        facts(planConflictFetches(txn, w, FLAGS).rowReads!, () => undefined),
      )
      assert.equal(result.kind, 'conflict')
      assert.match(
        result.kind === 'conflict' ? (result.error.reconcileRefused ?? '') : '',
        /could not be read within the budget, or its deletion vector shrank/,
      )
    })
  })

  it('conflicts when a deletion vector shrank and brought back a row of the read set', () => {
    const f = file('f1.parquet', { dv: [1, 2] })
    const shrink = [A.remove(removal(f)), A.add(file('f1.parquet', { dv: [1] }))]
    const txn = mergeLoser({ reads: [f] })
    const w = winnerOf(shrink)
    const plan = planConflictFetches(txn, w, FLAGS)
    const answered = facts(plan.rowReads!, (r) =>
      dvPositions(r) === 2n ? [row(0n, 5n)] : [row(0n, 5n), row(2n, 5n)],
    )
    const result = check(txn, w, FLAGS, answered)
    assert.equal(result.kind, 'conflict')
    assert.match(
      result.kind === 'conflict' ? (result.error.reconcileRefused ?? '') : '',
      /brought back a row/,
    )
  })

  it('conflicts when an answer is missing', () => {
    const txn = mergeLoser({ reads: [f1] })
    const w = winnerOf(update)
    const plan = planConflictFetches(txn, w, FLAGS)
    const result = check(
      txn,
      w,
      FLAGS,
      facts(plan.rowReads!, () => undefined),
    )
    assert.equal(result.kind, 'conflict')
    assert.match(result.kind === 'conflict' ? (result.error.reconcileRefused ?? '') : '', /could not be read/)
  })

  describe('with row tracking and the preserved tag', () => {
    const src = file('src.parquet', { base: 100n, version: 1n })
    const out = file('out.parquet', { base: 200n, version: 2n })
    const rewrite = [A.remove(removal(src)), A.add(out)]

    it('a copied row (stable id and commit version kept, its source removed) is not a change', () => {
      const txn = mergeLoser({ rowTracking: true, reads: [src] })
      const w = winnerOf(rewrite, true)
      const plan = planConflictFetches(txn, w, FLAGS)
      assert.ok(plan.rowReads!.every((r) => r.ids === 'stable'))
      const answered = facts(plan.rowReads!, () => [row(103n, 5n, 1n)])
      const result = check(txn, w, FLAGS, answered)
      assert.equal(result.kind, 'ok')
    })

    it('a "copy" whose key differs from its source is a change', () => {
      const txn = mergeLoser({ rowTracking: true, reads: [src] })
      const w = winnerOf(rewrite, true)
      const plan = planConflictFetches(txn, w, FLAGS)
      const answered = facts(plan.rowReads!, (r) =>
        r.file.path === 'out.parquet' ? [row(103n, 5n, 1n)] : [row(103n, 6n, 1n)],
      )
      assert.equal(check(txn, w, FLAGS, answered).kind, 'conflict')
    })

    it('a copy without its source removed is a change', () => {
      const txn = mergeLoser({ rowTracking: true, reads: [src] })
      const w = winnerOf([A.add(out)], true)
      const plan = planConflictFetches(txn, w, FLAGS)
      const answered = facts(plan.rowReads!, () => [row(103n, 5n, 1n)])
      const result = check(txn, w, FLAGS, answered)
      assert.equal(result.kind, 'conflict')
      assert.match(
        result.kind === 'conflict' ? (result.error.reconcileRefused ?? '') : '',
        /as a copy of a row it did not remove/,
      )
    })

    it('without the preserved tag the same rewrite counts every row as changed', () => {
      const txn = mergeLoser({ rowTracking: true, reads: [src] })
      const w = winnerOf(rewrite, false)
      const plan = planConflictFetches(txn, w, FLAGS)
      assert.ok(plan.rowReads!.every((r) => r.ids === 'position'))
      const answered = facts(plan.rowReads!, () => [row(3n, 5n)])
      assert.equal(check(txn, w, FLAGS, answered).kind, 'conflict')
    })
  })
})
