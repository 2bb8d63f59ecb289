import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { InvalidArgumentError } from '../../../src/errors/index.js'
import {
  checkpointInterval,
  checkpointPolicy,
  checkpointWriteStatsAsJson,
  checkpointWriteStatsAsStruct,
  columnMappingModeProperty,
  dataSkippingNumIndexedCols,
  dataSkippingStatsColumns,
  deletedFileRetentionMillis,
  deletionVectorsEnabled,
  inCommitTimestampEnablement,
  logRetentionMillis,
  parseInterval,
  parseTableProperties,
  randomPrefixLength,
  targetFileSize,
} from '../../../src/protocol/table-properties.js'

const DAY = 24 * 3600 * 1000

describe('parseInterval', () => {
  const cases: [string, number][] = [
    ['interval 7 days', 7 * DAY],
    ['interval 1 week', 7 * DAY],
    ['30 days', 30 * DAY],
    ['INTERVAL 2 hours 30 minutes', 2.5 * 3600 * 1000],
    ['interval 1 day 1 second', DAY + 1000],
    ['interval 1.5 seconds', 1500],
    ['interval 500 milliseconds', 500],
    ['interval 0 days', 0],
  ]
  for (const [text, ms] of cases) {
    it(`reads '${text}'`, () => {
      assert.equal(parseInterval(text), ms)
    })
  }

  for (const text of [
    '',
    'interval',
    '7',
    'interval 1 month',
    'interval 2 years',
    'interval x days',
    'interval 3 fortnights',
    'interval -1 days',
  ]) {
    it(`refuses '${text}'`, () => {
      assert.throws(() => parseInterval(text), InvalidArgumentError)
    })
  }
})

describe('table property accessors', () => {
  it('give Delta defaults for an empty configuration', () => {
    assert.deepEqual(parseTableProperties({}), {
      enableDeletionVectors: false,
      appendOnly: false,
      checkpointInterval: 10,
      logRetentionMillis: 30 * DAY,
      deletedFileRetentionMillis: 7 * DAY,
      columnMappingMode: 'none',
      checkpointPolicy: 'classic',
      enableInCommitTimestamps: false,
      dataSkippingNumIndexedCols: 32,
      dataSkippingStatsColumns: undefined,
      enableChangeDataFeed: false,
      enableRowTracking: false,
      checkpointWriteStatsAsJson: true,
      checkpointWriteStatsAsStruct: false,
      targetFileSize: 128 * 1024 * 1024,
    })
  })

  it('read the values a table sets', () => {
    const config = {
      'delta.enableDeletionVectors': 'TRUE',
      'delta.checkpointInterval': '2',
      'delta.logRetentionDuration': 'interval 60 days',
      'delta.deletedFileRetentionDuration': 'interval 1 hours',
      'delta.columnMapping.mode': 'name',
      'delta.checkpointPolicy': 'v2',
      'delta.dataSkippingNumIndexedCols': '-1',
      'delta.dataSkippingStatsColumns': 'a, b.c',
      'delta.randomizeFilePrefixes': 'true',
      'delta.inCommitTimestampEnablementVersion': '5',
      'delta.inCommitTimestampEnablementTimestamp': '1700000000000',
    }
    assert.equal(deletionVectorsEnabled(config), true)
    assert.equal(checkpointInterval(config), 2)
    assert.equal(logRetentionMillis(config), 60 * DAY)
    assert.equal(deletedFileRetentionMillis(config), 3600 * 1000)
    assert.equal(columnMappingModeProperty(config), 'name')
    assert.equal(checkpointPolicy(config), 'v2')
    assert.equal(dataSkippingNumIndexedCols(config), -1)
    assert.deepEqual(dataSkippingStatsColumns(config), ['a', 'b.c'])
    assert.equal(randomPrefixLength(config), 2)
    assert.deepEqual(inCommitTimestampEnablement(config), { version: 5n, timestamp: 1700000000000n })
    const statsFormat = {
      'delta.checkpoint.writeStatsAsJson': 'FALSE',
      'delta.checkpoint.writeStatsAsStruct': 'true',
    }
    assert.equal(checkpointWriteStatsAsJson(statsFormat), false)
    assert.equal(checkpointWriteStatsAsStruct(statsFormat), true)
  })

  const invalid: [string, Record<string, string>, (c: Record<string, string>) => unknown][] = [
    ['delta.enableDeletionVectors', { 'delta.enableDeletionVectors': 'yes' }, deletionVectorsEnabled],
    ['delta.checkpointInterval', { 'delta.checkpointInterval': '0' }, checkpointInterval],
    ['delta.checkpointInterval', { 'delta.checkpointInterval': 'ten' }, checkpointInterval],
    [
      'delta.deletedFileRetentionDuration',
      { 'delta.deletedFileRetentionDuration': '1 month' },
      deletedFileRetentionMillis,
    ],
    ['delta.columnMapping.mode', { 'delta.columnMapping.mode': 'physical' }, columnMappingModeProperty],
    ['delta.checkpointPolicy', { 'delta.checkpointPolicy': 'v3' }, checkpointPolicy],
    [
      'delta.checkpoint.writeStatsAsStruct',
      { 'delta.checkpoint.writeStatsAsStruct': 'yes' },
      checkpointWriteStatsAsStruct,
    ],
    [
      'delta.checkpoint.writeStatsAsJson',
      { 'delta.checkpoint.writeStatsAsJson': '0' },
      checkpointWriteStatsAsJson,
    ],
    [
      'delta.dataSkippingNumIndexedCols',
      { 'delta.dataSkippingNumIndexedCols': '-2' },
      dataSkippingNumIndexedCols,
    ],
    [
      'delta.inCommitTimestampEnablementTimestamp',
      { 'delta.inCommitTimestampEnablementVersion': '5' },
      inCommitTimestampEnablement,
    ],
  ]
  for (const [key, config, read] of invalid) {
    it(`refuse an invalid ${key} naming the property`, () => {
      assert.throws(
        () => read(config),
        (e: unknown) => e instanceof InvalidArgumentError && e.argument === key && e.message.includes(key),
      )
    })
  }
})

describe('delta.targetFileSize', () => {
  const MiB = 1024 * 1024
  const sizes: [string, number][] = [
    ['134217728', 128 * MiB],
    ['100mb', 100 * MiB],
    ['1MB', MiB],
    ['1 g', 1024 * MiB],
    ['512k', 512 * 1024],
    ['64b', 64],
  ]
  for (const [text, bytes] of sizes) {
    it(`reads '${text}' as ${bytes} bytes`, () => {
      assert.equal(targetFileSize({ 'delta.targetFileSize': text }), bytes)
    })
  }
  for (const text of ['0', '-1', '1.5mb', '10 parsecs', 'mb', '']) {
    it(`refuses '${text}', naming the property`, () => {
      assert.throws(
        () => targetFileSize({ 'delta.targetFileSize': text }),
        (e: unknown) => e instanceof InvalidArgumentError && e.argument === 'delta.targetFileSize',
      )
    })
  }
})
