/**
 * The read files a losing transaction carries from one winner to the next: every file its read
 * depends on, as the winner left the table, whatever a reconciliation pruned for that winner.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { readFilesAfterWinner } from '../../../src/conflict/carried-read-files.js'
import type { ConflictCheckResult } from '../../../src/conflict/check-conflicts.js'
import { planConflictFetches } from '../../../src/conflict/plan-fetches.js'
import type { TransactionInfo } from '../../../src/conflict/transaction-info.js'
import { initDeletionVectors } from '../../../src/dv/initialization.js'
import { createAddFile } from '../../../src/protocol/actions.js'
import { compaction, dmlWinner, dvUpdate, optimizeLoser, output, source } from './compaction-fixture.js'
import {
  A,
  add,
  check,
  DV_PROTOCOL,
  DvStore,
  flagsWith,
  loser,
  meta,
  outcomeOf,
  removeOf,
  winner,
} from './factories.js'

await initDeletionVectors()

const m = meta({ id: 'long' }, [], { 'delta.enableDeletionVectors': 'true' })
const mPart = meta({ id: 'long', p: 'string' }, ['p'], { 'delta.enableDeletionVectors': 'true' })

/** A DELETE that read `where` over `files` and deletes nothing of them (the checks need a read). */
function reader(files: readonly ReturnType<typeof add>[], where: string, metadata = m): TransactionInfo {
  return loser({
    metadata,
    protocol: DV_PROTOCOL,
    files,
    reads: [{ scan: where }],
    actions: [A.add(add('mine.parquet'))],
    operation: 'MERGE',
  })
}

const keys = (files: ReadonlyMap<string, unknown>): string[] => [...files.keys()].sort()

describe('readFilesAfterWinner', () => {
  const a = add('a.parquet')
  const b = add('b.parquet')

  it('keeps a file the winner did not remove, as it was read', () => {
    const txn = reader([a, b], 'id >= 0')
    const w = dmlWinner(2n, [A.add(add('c.parquet'))])
    const out = readFilesAfterWinner(txn, w)
    assert.deepEqual(keys(out), ['a.parquet', 'b.parquet'])
    assert.equal(out.get('a.parquet'), txn.readFiles.get('a.parquet'))
  })

  it('keeps a path the winner updated with a deletion vector, as the winner re-added it', () => {
    const txn = reader([a, b], 'id >= 0')
    const store = new DvStore()
    const w = dmlWinner(2n, dvUpdate(b, store.dv('w', [3])))
    const out = readFilesAfterWinner(txn, w)
    assert.deepEqual(keys(out), ['a.parquet', 'b.parquet'])
    assert.equal(out.get('b.parquet'), w.addedFilesByPath.get('b.parquet'))
    assert.notEqual(out.get('b.parquet')?.deletionVector, undefined)
  })

  it('replaces a file removed whole by every file the winner added (copy-on-write)', () => {
    const txn = reader([a, b], 'id >= 0')
    const w = dmlWinner(
      2n,
      [A.remove(removeOf(b)), A.add(add('b2.parquet')), A.add(add('img.parquet'))],
      'UPDATE',
    )
    assert.deepEqual(keys(readFilesAfterWinner(txn, w)), ['a.parquet', 'b2.parquet', 'img.parquet'])
  })

  it('on a partitioned table takes on only the added files a read may select', () => {
    const x = add('x.parquet', { part: { p: 'x' } })
    const y = add('y.parquet', { part: { p: 'y' } })
    const txn = reader([x, y], "p = 'x'", mPart)
    assert.deepEqual(keys(txn.readFiles), ['x.parquet'])
    const w = dmlWinner(2n, [
      A.remove(removeOf(x)),
      A.add(add('x2.parquet', { part: { p: 'x' } })),
      A.add(add('y2.parquet', { part: { p: 'y' } })),
    ])
    assert.deepEqual(keys(readFilesAfterWinner(txn, w)), ['x2.parquet'])
  })

  it('takes on nothing when the winner removed no file the transaction read', () => {
    const txn = reader([a], 'id >= 0')
    const w = dmlWinner(2n, [A.remove(removeOf(b)), A.add(add('b2.parquet'))], 'UPDATE')
    assert.deepEqual(keys(readFilesAfterWinner(txn, w)), ['a.parquet'])
  })

  it('gives a compaction loser no new file: its own removes keep its sources checked', () => {
    const sources = [source(0), source(1)]
    const txn = optimizeLoser(sources)
    const w = dmlWinner(2n, [A.remove(removeOf(sources[0]!)), A.add(add('cow.parquet'))])
    assert.deepEqual(keys(readFilesAfterWinner(txn, w)), ['s1.parquet'])
  })
})

describe('a later winner is checked against the files an earlier reconciled winner left', () => {
  // An append-only reader (it read id = 50 and only adds) loses to a compaction of the file it
  // read (Case 3 drops that removal), then to a DELETE with a deletion vector on the compaction's
  // output. Case 1b drops the output's re-add from the added-files check because its removal is
  // checked against the read files: the output must be one of them.
  const flags = flagsWith({
    dataSkipping: true,
    dataSkippingValueExact: true,
    excludeNoDataChangeFiles: true,
  })
  const s0 = source(0)
  const out = output([s0])
  const txn = reader([s0], 'id = 50')
  const first = winner(2n, compaction([s0]), { operation: 'OPTIMIZE', blind: false })
  const store = new DvStore()
  const second = dmlWinner(3n, [
    A.remove(removeOf(out)),
    A.add(createAddFile({ ...out, dataChange: true, deletionVector: store.dv('w', [50]) })),
  ])

  function afterFirst(): TransactionInfo {
    const r1: ConflictCheckResult = check(txn, first, flags, store.facts())
    assert.equal(outcomeOf(r1), 'ok')
    if (r1.kind !== 'ok') throw new TypeError('unreachable')
    assert.deepEqual(keys(r1.txn.readFiles), ['out.parquet'])
    return r1.txn
  }

  it('aborts when the rows the DELETE removed may match the read', () => {
    const carried = afterFirst()
    const r2 = check(carried, second, flags, store.facts())
    assert.equal(outcomeOf(r2), 'ConcurrentDeleteReadError')
  })

  it('commits when Case 1b proves the removed rows match no read', () => {
    const carried = afterFirst()
    const plan = planConflictFetches(carried, second, flags)
    assert.equal(plan.rowQueries.length, 1)
    const r2 = check(carried, second, flags, store.facts(new Map([[plan.rowQueries[0]!.key, false]])))
    assert.equal(outcomeOf(r2), 'ok')
    if (r2.kind === 'ok') {
      assert.deepEqual(
        r2.reconciliations.map((x) => x.kind),
        ['case1b-delete-read', 'case1b-delete-read'],
      )
    }
  })
})
