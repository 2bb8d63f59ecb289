/**
 * Case 5b against a relocation whose output already carries a deletion vector (design beyond-rlc
 * 7.8, edge 11), checked through the checker with the row-id lookup answered: conservation counts
 * the output's live rows, a hit on a live position is added to the output's deletion vector, a
 * hit on a position that deletion vector already deletes is a same-row conflict (S5), and an
 * output whose live rows are not the sources' aborts (S3).
 *
 * The table: source `F` of four rows (ids 100..103 at positions 0..3) whose row 0 (id 100) an
 * earlier DELETE removed; the OPTIMIZE wrote them to `O` in the order 103, 102, 100, 101 and
 * masked id 100 there (position 2), as Case 5a does.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { removedRows } from '../../../src/conflict/case5b-removed-rows.js'
import { checkConflicts } from '../../../src/conflict/check-conflicts.js'
import { readDeletionVector } from '../../../src/conflict/deletion-vectors.js'
import type { FetchedFacts } from '../../../src/conflict/fetched-facts.js'
import { planConflictFetches } from '../../../src/conflict/plan-fetches.js'
import { createTransactionInfo } from '../../../src/conflict/transaction-info.js'
import { summarizeWinningCommit } from '../../../src/conflict/winning-commit.js'
import { initDeletionVectors } from '../../../src/dv/initialization.js'
import { createAction, createProtocol, isAdd, isRemove } from '../../../src/protocol/actions.js'
import { A, add, flagsWith, inlineDv, meta, remove } from './factories.js'

await initDeletionVectors()

const PROTOCOL = createProtocol({
  minReaderVersion: 3,
  minWriterVersion: 7,
  readerFeatures: ['deletionVectors'],
  writerFeatures: ['deletionVectors', 'rowTracking', 'domainMetadata'],
})
const METADATA = meta({ id: 'long' }, [], {
  'delta.enableDeletionVectors': 'true',
  'delta.enableRowTracking': 'true',
  'delta.rowTracking.materializedRowIdColumnName': '_rid',
  'delta.rowTracking.materializedRowCommitVersionColumnName': '_rcv',
})
const FLAGS = flagsWith({ optimizeZOrderReverseReconciliation: true })
const STATS = { numRecords: 4, min: { id: 100 }, max: { id: 103 } }
const WINNER_VERSION = 5n

/** The OPTIMIZE: `F` removed under the earlier DELETE's deletion vector, `O` with `outputDv`. */
function optimizeWinner(outputDv: readonly number[]) {
  return summarizeWinningCommit(WINNER_VERSION, [
    createAction('commitInfo', {
      operation: 'OPTIMIZE',
      operationParameters: { zOrderBy: '["id"]' },
      tags: { 'delta.rowTracking.preserved': 'true' },
    }),
    A.remove(remove('F', { dataChange: false, stats: STATS, dv: inlineDv([0]) })),
    A.add(add('O', { dataChange: false, stats: STATS, dv: inlineDv(outputDv) })),
  ])
}

/** A DELETE that read `F` under the earlier DELETE's deletion vector and takes out `ids`. */
function deleteOf(positions: readonly number[], ids: readonly bigint[]) {
  return createTransactionInfo({
    readVersion: 3n,
    operation: 'DELETE',
    isolationLevel: 'WriteSerializable',
    readFiles: [add('F', { stats: STATS, dv: inlineDv([0]) })],
    actions: [
      A.remove(remove('F', { stats: STATS, dv: inlineDv([0]) })),
      A.add(add('F', { stats: STATS, dv: inlineDv([0, ...positions]) })),
    ],
    metadata: METADATA,
    protocol: PROTOCOL,
    removedRowIds: {
      files: new Map([['F', removedRows(ids, false, [])!]]),
      preservedImageRows: 0,
    },
  })
}

/** The facts the loop would load: the ids found in `O` at `positions`. */
function found(positions: readonly number[], ids: readonly bigint[]): FetchedFacts {
  return {
    deletionVectors: new Map(),
    rowMatches: new Map(),
    rowIdLookups: new Map([
      [
        `case5b:${WINNER_VERSION}`,
        { kind: 'found', files: new Map([['O', { positions, ids }]]), nullRows: 0 },
      ],
    ]),
  }
}

describe('Case 5b: a relocation whose output already masks rows', () => {
  it('masks the found row on top of the output deletion vector', () => {
    const txn = deleteOf([1], [101n])
    const winner = optimizeWinner([2])
    const plan = planConflictFetches(txn, winner, FLAGS)
    assert.deepEqual(
      plan.rowIdLookups?.map((l) => [l.key, [...l.ids], l.files.map((f) => f.path)]),
      [[`case5b:${WINNER_VERSION}`, [101n], ['O']]],
    )
    const result = checkConflicts(txn, winner, FLAGS, found([3], [101n]))
    assert.equal(result.kind, 'ok', result.kind === 'conflict' ? result.error.message : '')
    if (result.kind !== 'ok') return
    assert.deepEqual(
      result.reconciliations.map((r) => [r.kind, r.detail.rows]),
      [['case5b-zorder-reverse', 1]],
    )
    const adds = result.txn.actions.filter(isAdd).map((a) => a.add)
    const removes = result.txn.actions.filter(isRemove).map((a) => a.remove)
    // F is no longer touched; O is removed under its current deletion vector and re-added with
    // that one and the new row.
    assert.deepEqual(
      adds.map((a) => a.path),
      ['O'],
    )
    assert.deepEqual(
      removes.map((r) => [r.path, r.deletionVector?.cardinality]),
      [['O', 1n]],
    )
    const dv = readDeletionVector(adds[0]!.deletionVector, found([], []))
    assert.deepEqual(dv?.toArray(), [2, 3])
  })

  it('aborts when a found row is one the output already deletes, and deletes nothing twice', () => {
    // Id 100 is at output position 2, which the OPTIMIZE masked for the earlier DELETE.
    const txn = deleteOf([1], [100n])
    const result = checkConflicts(txn, optimizeWinner([2]), FLAGS, found([2], [100n]))
    assert.equal(result.kind, 'conflict')
    if (result.kind !== 'conflict') return
    assert.match(
      result.error.message,
      /a row this transaction takes out is already deleted in the OPTIMIZE output/,
    )
  })

  it('aborts when the output live rows are not the live rows relocated', () => {
    // The output masks nothing, so it holds 4 live rows for the source's 3.
    const txn = deleteOf([1], [101n])
    const result = checkConflicts(txn, optimizeWinner([]), FLAGS, found([3], [101n]))
    assert.equal(result.kind, 'conflict')
    if (result.kind !== 'conflict') return
    assert.match(result.error.message, /the live rows of the winner outputs are not exactly the live rows/)
  })
})
