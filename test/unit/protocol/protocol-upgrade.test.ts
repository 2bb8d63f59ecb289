/**
 * The protocol an existing table needs once its properties change (`protocolWithRequiredFeatures`),
 * and the check of a property a caller sets (`checkSettableProperty`, `settablePropertyRefusal`).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { InvalidArgumentError } from '../../../src/errors/index.js'
import { createProtocol, type Protocol } from '../../../src/protocol/actions.js'
import { parseDdlSchema } from '../../../src/protocol/schema.js'
import { protocolWithRequiredFeatures } from '../../../src/protocol/table-features.js'
import { checkSettableProperty, settablePropertyRefusal } from '../../../src/protocol/table-properties.js'

const proto = (r: number, w: number, rf?: string[], wf?: string[]): Protocol =>
  createProtocol({ minReaderVersion: r, minWriterVersion: w, readerFeatures: rf, writerFeatures: wf })

describe('protocolWithRequiredFeatures', () => {
  it('returns the same protocol when nothing new is needed', () => {
    const p = proto(1, 2)
    assert.equal(protocolWithRequiredFeatures(p, { 'delta.appendOnly': 'true', owner: 'x' }), p)
    const dv = proto(3, 7, ['deletionVectors'], ['deletionVectors'])
    assert.equal(protocolWithRequiredFeatures(dv, { 'delta.enableDeletionVectors': 'true' }), dv)
  })

  it('stays legacy while every new feature has a legacy version', () => {
    assert.deepEqual(
      protocolWithRequiredFeatures(proto(1, 2), { 'delta.constraints.p': 'a > 0' }),
      proto(1, 3),
    )
    assert.deepEqual(
      protocolWithRequiredFeatures(proto(1, 3), { 'delta.enableChangeDataFeed': 'true' }),
      proto(1, 4),
    )
  })

  it('moves a legacy protocol to table features, listing what its versions implied', () => {
    assert.deepEqual(
      protocolWithRequiredFeatures(proto(1, 3), { 'delta.enableDeletionVectors': 'true' }),
      proto(3, 7, ['deletionVectors'], ['appendOnly', 'invariants', 'checkConstraints', 'deletionVectors']),
    )
    assert.deepEqual(
      protocolWithRequiredFeatures(proto(1, 2), { 'delta.feature.rowTracking': 'supported' }),
      proto(1, 7, undefined, ['appendOnly', 'invariants', 'rowTracking', 'domainMetadata']),
    )
  })

  it('adds to a table-features protocol, reader features included, never dropping one', () => {
    const p = proto(1, 7, undefined, ['domainMetadata', 'appendOnly'])
    assert.deepEqual(
      protocolWithRequiredFeatures(p, { 'delta.checkpointPolicy': 'v2' }),
      proto(3, 7, ['v2Checkpoint'], ['domainMetadata', 'appendOnly', 'v2Checkpoint']),
    )
    const schema = parseDdlSchema('t timestamp_ntz')
    assert.deepEqual(
      protocolWithRequiredFeatures(proto(3, 7, ['deletionVectors'], ['deletionVectors']), {}, schema),
      proto(3, 7, ['deletionVectors', 'timestampNtz'], ['deletionVectors', 'timestampNtz']),
    )
  })

  it('refuses an unknown feature name', () => {
    assert.throws(
      () => protocolWithRequiredFeatures(proto(1, 2), { 'delta.feature.noSuchThing': 'supported' }),
      InvalidArgumentError,
    )
  })
})

describe('checkSettableProperty', () => {
  it('accepts user properties and defined delta properties with valid values', () => {
    for (const [k, v] of [
      ['owner', 'anything'],
      ['delta.appendOnly', 'TRUE'],
      ['delta.logRetentionDuration', 'interval 30 days'],
      ['delta.checkpointInterval', '20'],
      ['delta.targetFileSize', '64mb'],
      ['delta.isolationLevel', 'WriteSerializable'],
      ['delta.feature.deletionVectors', 'supported'],
      ['delta.dataSkippingStatsColumns', 'a,b'],
    ] as const) {
      assert.equal(checkSettableProperty(k, v), undefined, k)
    }
  })

  it('refuses invalid values, naming the property', () => {
    for (const [k, v] of [
      ['delta.appendOnly', 'yes'],
      ['delta.logRetentionDuration', 'forever'],
      ['delta.checkpointInterval', '0'],
      ['delta.isolationLevel', 'SnapshotIsolation'],
      ['delta.checkpointPolicy', 'v3'],
    ] as const) {
      assert.throws(
        () => checkSettableProperty(k, v),
        (e: unknown) => e instanceof InvalidArgumentError && e.argument === k,
      )
    }
  })

  it('tells unknown delta keys from the ones Delta sets itself', () => {
    assert.equal(settablePropertyRefusal('delta.appendOnyl'), 'unknown')
    assert.equal(settablePropertyRefusal('delta.constraints.p'), 'reserved')
    assert.equal(settablePropertyRefusal('delta.rowTracking.materializedRowIdColumnName'), 'reserved')
    assert.equal(settablePropertyRefusal('delta.inCommitTimestampEnablementVersion'), 'reserved')
    assert.equal(settablePropertyRefusal('delta.columnMapping.maxColumnId'), 'reserved')
    assert.equal(settablePropertyRefusal('spark.sql.anything'), undefined)
  })
})
