/**
 * The public surface of the package root, pinned: removing or renaming an export is a
 * breaking change and must show up here. The error classes carry their stable codes.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import * as api from '../src/index.js'

describe('public API', () => {
  it('exports exactly this surface', () => {
    assert.deepEqual(Object.keys(api).sort(), [
      'CONFLICT_FLAG_KEYS',
      'CommitStateUnknownError',
      'ConcurrentAppendError',
      'ConcurrentDeleteDeleteError',
      'ConcurrentDeleteReadError',
      'ConcurrentModificationError',
      'ConcurrentTransactionError',
      'DeltaError',
      'DeltaTable',
      'FileAlreadyExistsError',
      'FileNotFoundError',
      'InternalError',
      'InvalidArgumentError',
      'InvalidDeletionVectorError',
      'InvalidPredicateError',
      'InvalidTableError',
      'MaxCommitRetriesError',
      'MetadataChangedError',
      'ProtocolChangedError',
      'RowIdAssignmentWithoutStatsError',
      'RowTrackingNotEnabledError',
      'Snapshot',
      'StorageError',
      'TableAlreadyExistsError',
      'TableNotFoundError',
      'TableScan',
      'Transaction',
      'UnsupportedError',
      'UnsupportedProtocolVersionError',
      'UnsupportedTableFeatureError',
      'VersionNotFoundError',
      'createAzureStore',
      'createDefaultEngine',
      'createDuckDbInstance',
      'createFaultyStore',
      'createLocalStore',
      'createMemoryStore',
      'createS3Store',
      'createSnapshotView',
      'isDeltaError',
      'openStore',
      'openStream',
      'parseConflictFlags',
      'parseDdlSchema',
      'parseExpression',
      'parsePredicate',
      'streamChunks',
      'toJSONRow',
    ])
  })

  it('conflict errors carry the codes of api.md', () => {
    const ctx = { winnerVersion: 3n, winnerOperation: 'DELETE' }
    const cases: Array<[api.ConcurrentModificationError, string]> = [
      [new api.ConcurrentAppendError(ctx), 'DELTA_CONCURRENT_APPEND'],
      [new api.ConcurrentDeleteReadError(ctx), 'DELTA_CONCURRENT_DELETE_READ'],
      [new api.ConcurrentDeleteDeleteError(ctx), 'DELTA_CONCURRENT_DELETE_DELETE'],
      [new api.MetadataChangedError(ctx), 'DELTA_METADATA_CHANGED'],
      [new api.ProtocolChangedError(ctx), 'DELTA_PROTOCOL_CHANGED'],
      [new api.ConcurrentTransactionError(ctx), 'DELTA_CONCURRENT_TRANSACTION'],
    ]
    for (const [err, code] of cases) {
      assert.equal(err.code, code)
      assert.ok(err instanceof api.ConcurrentModificationError && err instanceof api.DeltaError)
      assert.match(err.message, /version 3 \(DELETE\)/)
      assert.ok(api.isDeltaError(err, code))
    }
  })

  it('the six reconciliation flags of api.md are accepted, with or without the Spark prefix', () => {
    const keys = [
      'rowLevelConcurrency.enabled',
      'conflictDetection.dataSkipping.enabled',
      'conflictDetection.dataSkipping.valueExact.enabled',
      'conflictDetection.excludeNoDataChangeFiles.enabled',
      'optimize.conflictReconciliation.enabled',
      'optimize.conflictReconciliation.reverse.enabled',
    ]
    for (const k of keys) {
      assert.ok(api.CONFLICT_FLAG_KEYS.includes(k), k)
      api.parseConflictFlags({ [k]: true })
      api.parseConflictFlags({ [`spark.databricks.delta.${k}`]: true })
    }
    assert.throws(() => api.parseConflictFlags({ 'no.such.flag': true }), { code: 'DELTA_INVALID_ARGUMENT' })
  })
})
