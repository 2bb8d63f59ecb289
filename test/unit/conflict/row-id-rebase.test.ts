/**
 * The conflict checker re-bases a losing commit's fresh row ids over each winner (Delta's
 * `reassignOverlappingRowIds` and `reassignRowCommitVersions`): above the winner's high-water
 * mark, with the commit version of the next attempt, and the read mark carried to the next winner.
 */
import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import { createTransactionInfo, type TransactionInfo } from '../../../src/conflict/transaction-info.js'
import { initDeletionVectors } from '../../../src/dv/index.js'
import {
  type Action,
  type AddFile,
  createAddFile,
  createProtocol,
  isAdd,
  isDomainMetadata,
} from '../../../src/protocol/actions.js'
import { rowTrackingDomain } from '../../../src/protocol/row-tracking.js'
import { A, add, check, dvMeta, inlineDv, removeOf, winner } from './factories.js'

const RT_PROTOCOL = createProtocol({
  minReaderVersion: 3,
  minWriterVersion: 7,
  readerFeatures: ['deletionVectors'],
  writerFeatures: ['deletionVectors', 'domainMetadata', 'rowTracking'],
})

/** An add of `n` rows with the given row-tracking fields. */
function rowsFile(path: string, n: number, baseRowId?: bigint, version?: bigint): AddFile {
  return createAddFile({
    ...add(path, { stats: { numRecords: n } }),
    baseRowId,
    defaultRowCommitVersion: version,
  })
}

/** A loser that read version 1 (mark `readMark`) and commits `actions`. */
function rowTrackingLoser(
  actions: readonly Action[],
  readMark: bigint | undefined,
  tracked = true,
): TransactionInfo {
  return createTransactionInfo({
    readVersion: 1n,
    operation: 'WRITE',
    isolationLevel: 'WriteSerializable',
    actions,
    metadata: dvMeta(),
    protocol: RT_PROTOCOL,
    rowTracking: tracked ? { readHighWaterMark: readMark } : undefined,
  })
}

function addsOf(txn: TransactionInfo): AddFile[] {
  return txn.actions.filter(isAdd).map((a) => a.add)
}

function marksOf(txn: TransactionInfo): string[] {
  return txn.actions.filter(isDomainMetadata).map((a) => a.domainMetadata.configuration)
}

function okTxn(result: ReturnType<typeof check>): TransactionInfo {
  assert.equal(result.kind, 'ok')
  return result.kind === 'ok' ? result.txn : assert.fail('conflict')
}

describe('row-id re-base in the conflict checker', () => {
  before(() => initDeletionVectors())

  it('moves a losing append above the winner mark and to the version after the winner', () => {
    // Read mark 9; the loser assigned 10..11 at version 2, the winner took 10..14 at version 2.
    const txn = rowTrackingLoser(
      [A.add(rowsFile('mine.parquet', 2, 10n, 2n)), { domainMetadata: rowTrackingDomain(11n) }],
      9n,
    )
    const w = winner(2n, [
      A.add(rowsFile('theirs.parquet', 5, 10n, 2n)),
      { domainMetadata: rowTrackingDomain(14n) },
    ])
    const out = okTxn(check(txn, w))
    const [mine] = addsOf(out)
    assert.equal(mine?.baseRowId, 15n)
    assert.equal(mine?.defaultRowCommitVersion, 3n)
    assert.deepEqual(marksOf(out), ['{"rowIdHighWaterMark":16}'])
    assert.equal(out.rowTracking?.readHighWaterMark, 14n)
  })

  it('keeps ids but moves the commit version past a winner that assigned none', () => {
    const txn = rowTrackingLoser(
      [A.add(rowsFile('mine.parquet', 3, 10n, 2n)), { domainMetadata: rowTrackingDomain(12n) }],
      9n,
    )
    const old = rowsFile('old.parquet', 4, 0n, 0n)
    const dvWinner = winner(2n, [
      A.remove(removeOf(old)),
      A.add(createAddFile({ ...old, deletionVector: inlineDv([1]) })),
    ])
    const out = okTxn(check(txn, dvWinner))
    const [mine] = addsOf(out)
    assert.equal(mine?.baseRowId, 10n)
    assert.equal(mine?.defaultRowCommitVersion, 3n)
    assert.deepEqual(marksOf(out), ['{"rowIdHighWaterMark":12}'])
    assert.equal(out.rowTracking?.readHighWaterMark, 9n)
  })

  it('threads the mark through successive winners so no two commits share an id', () => {
    let txn = rowTrackingLoser(
      [A.add(rowsFile('mine.parquet', 2, 10n, 2n)), { domainMetadata: rowTrackingDomain(11n) }],
      9n,
    )
    txn = okTxn(
      check(
        txn,
        winner(2n, [A.add(rowsFile('w2.parquet', 3, 10n, 2n)), { domainMetadata: rowTrackingDomain(12n) }]),
      ),
    )
    txn = okTxn(
      check(
        txn,
        winner(3n, [A.add(rowsFile('w3.parquet', 1, 13n, 3n)), { domainMetadata: rowTrackingDomain(13n) }]),
      ),
    )
    const [mine] = addsOf(txn)
    assert.equal(mine?.baseRowId, 14n)
    assert.equal(mine?.defaultRowCommitVersion, 4n)
    assert.deepEqual(marksOf(txn), ['{"rowIdHighWaterMark":15}'])
  })

  it('leaves a recommitted file (a DV delete) with the ids and version it inherited', () => {
    const old = rowsFile('old.parquet', 4, 3n, 0n)
    const txn = rowTrackingLoser(
      [A.remove(removeOf(old)), A.add(createAddFile({ ...old, deletionVector: inlineDv([0]) }))],
      9n,
    )
    const out = okTxn(
      check(
        txn,
        winner(2n, [
          A.add(rowsFile('theirs.parquet', 5, 10n, 2n)),
          { domainMetadata: rowTrackingDomain(14n) },
        ]),
      ),
    )
    const [kept] = addsOf(out)
    assert.equal(kept?.baseRowId, 3n)
    assert.equal(kept?.defaultRowCommitVersion, 0n)
    assert.deepEqual(marksOf(out), [])
  })

  it('changes nothing for a transaction on a table that assigns no row ids', () => {
    const actions = [A.add(rowsFile('mine.parquet', 2))]
    const txn = rowTrackingLoser(actions, undefined, false)
    const out = okTxn(
      check(
        txn,
        winner(2n, [A.add(rowsFile('theirs.parquet', 5, 0n, 2n)), { domainMetadata: rowTrackingDomain(4n) }]),
      ),
    )
    assert.deepEqual(out.actions, txn.actions)
    assert.equal(out.rowTracking, undefined)
  })
})
