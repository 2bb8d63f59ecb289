/**
 * The public surface of the package root and of each subpath entry, pinned: removing or renaming
 * an export is a breaking change and must show up here, and so must a test tool or a backend
 * detail that reaches the root. The error classes carry their stable codes.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import * as api from '../src/index.js'
import * as duckdb from '../src/subpaths/duckdb.js'
import * as engine from '../src/subpaths/engine.js'
import * as azure from '../src/subpaths/storage-azure.js'
import * as gcs from '../src/subpaths/storage-gcs.js'
import * as s3 from '../src/subpaths/storage-s3.js'
import * as testing from '../src/subpaths/testing.js'

describe('public API', () => {
  it('exports exactly this surface', () => {
    assert.deepEqual(Object.keys(api).sort(), [
      'CONFLICT_FLAG_KEYS',
      'ChangeDataFileNotFoundError',
      'ChangeDataRangeError',
      'CheckConstraintViolationError',
      'ClusteringWithZOrderByError',
      'ColumnChangeRefusedError',
      'ColumnMappingModeChangeError',
      'ColumnMappingRequiredError',
      'CommitStateUnknownError',
      'ConcurrentAppendError',
      'ConcurrentDeleteDeleteError',
      'ConcurrentDeleteReadError',
      'ConcurrentModificationError',
      'ConcurrentTransactionError',
      'ConcurrentVacuumError',
      'ConstraintAlreadyExistsError',
      'ConstraintNotFoundError',
      'DeltaError',
      'DeltaTable',
      'FileAlreadyExistsError',
      'FileNotFoundError',
      'GeneratedColumnMismatchError',
      'IdentityColumnError',
      'InternalError',
      'InvalidArgumentError',
      'InvalidDeletionVectorError',
      'InvalidPredicateError',
      'InvalidTableError',
      'MaxCommitRetriesError',
      'MetadataChangedError',
      'MissingChangeDataError',
      'NewConstraintViolationError',
      'ProtocolChangedError',
      'ReplaceWhereMismatchError',
      'ResourceExhaustedError',
      'RestoreFilesMissingError',
      'RowIdAssignmentWithoutStatsError',
      'RowTrackingNotEnabledError',
      'Snapshot',
      'StorageError',
      'TableAlreadyExistsError',
      'TableChanges',
      'TableClosedError',
      'TableNotFoundError',
      'TableScan',
      'Transaction',
      'UnknownTablePropertyError',
      'UnsupportedError',
      'UnsupportedProtocolVersionError',
      'UnsupportedTableFeatureError',
      'VersionNotFoundError',
      'clusteringOf',
      'createLocalStore',
      'createMemoryStore',
      'generatedColumnsOf',
      'identityColumnsOf',
      'isDeltaError',
      'openStore',
      'parseConflictFlags',
      'parseDdlSchema',
      'parseExpression',
      'parsePredicate',
      'redactLocation',
      'toJSONRow',
    ])
  })

  it('delta-rlc/engine exports the default engine; the rest of it is types', () => {
    assert.deepEqual(Object.keys(engine).sort(), ['createDefaultEngine'])
  })

  it('delta-rlc/storage/azure, /storage/s3 and /storage/gcs export their store and location parser', () => {
    assert.deepEqual(Object.keys(azure).sort(), ['createAzureStore', 'parseAzureLocation'])
    assert.deepEqual(Object.keys(s3).sort(), ['createS3Store', 'parseS3Location'])
    assert.deepEqual(Object.keys(gcs).sort(), ['createGcsStore', 'parseGcsLocation'])
  })

  it('delta-rlc/duckdb exports the DuckDB instance, result streams, the snapshot view, its sandbox and the value conversion', () => {
    assert.deepEqual(Object.keys(duckdb).sort(), [
      'checkReadOnlyQuery',
      'createDuckDbInstance',
      'createSnapshotView',
      'lockDownConnection',
      'openStream',
      'streamChunks',
      'toPlainValue',
    ])
  })

  it('delta-rlc/testing exports the wrapping stores and the physical readers', () => {
    assert.deepEqual(Object.keys(testing).sort(), [
      'LOG_DIR',
      'advanceSnapshot',
      'columnSpecs',
      'commitKey',
      'createDelayStore',
      'createFaultyStore',
      'decodeAddPath',
      'listLogFrom',
      'lit',
      'loadDeletionVector',
      'loadSnapshot',
      'parseLogFileName',
      'parseOptimizeSourceComposition',
      'passThroughStore',
      'readCommit',
    ])
  })

  it('no subpath export is also a root export: each name has one entry point', () => {
    const root = new Set(Object.keys(api))
    for (const [name, entry] of Object.entries({ engine, azure, s3, duckdb, testing })) {
      for (const key of Object.keys(entry)) assert.ok(!root.has(key), `${key} of ${name} is also at the root`)
    }
  })

  it('conflict errors carry the codes of api.md', () => {
    const ctx = { winnerVersion: 3n, winnerOperation: 'DELETE' }
    const cases: Array<[api.ConcurrentModificationError, api.DeltaErrorCode]> = [
      [new api.ConcurrentAppendError(ctx), 'DELTA_CONCURRENT_APPEND'],
      [new api.ConcurrentDeleteReadError(ctx), 'DELTA_CONCURRENT_DELETE_READ'],
      [new api.ConcurrentDeleteDeleteError(ctx), 'DELTA_CONCURRENT_DELETE_DELETE'],
      [new api.MetadataChangedError(ctx), 'DELTA_METADATA_CHANGED'],
      [new api.ProtocolChangedError(ctx), 'DELTA_PROTOCOL_CHANGED'],
      [new api.ConcurrentTransactionError(ctx), 'DELTA_CONCURRENT_TRANSACTION'],
      [new api.ConcurrentVacuumError({ ...ctx, missing: true }), 'DELTA_CONCURRENT_VACUUM'],
    ]
    for (const [err, code] of cases) {
      assert.equal(err.code, code)
      assert.ok(err instanceof api.ConcurrentModificationError && err instanceof api.DeltaError)
      assert.match(err.message, /version 3 \(DELETE\)/)
      assert.ok(api.isDeltaError(err, code))
      assert.ok(!api.isDeltaError(err, 'DELTA_INVALID_ARGUMENT'))
    }
  })

  it('isDeltaError narrows to the classes of the codes it is given, and takes only known codes', () => {
    const err: unknown = new api.TableNotFoundError('/nowhere')
    if (api.isDeltaError(err, 'DELTA_TABLE_NOT_FOUND', 'DELTA_VERSION_NOT_FOUND')) {
      const narrowed: api.TableNotFoundError | api.VersionNotFoundError = err
      assert.equal(narrowed.code, 'DELTA_TABLE_NOT_FOUND')
    } else assert.fail('a TableNotFoundError has the code DELTA_TABLE_NOT_FOUND')
    assert.ok(api.isDeltaError(err))
    assert.ok(!api.isDeltaError(new Error('plain')))
    // @ts-expect-error: a misspelt code is a type error, not a check that never matches.
    assert.ok(!api.isDeltaError(err, 'DELTA_TABLE_NOT_FOUNDD'))
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
