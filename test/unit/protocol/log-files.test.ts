import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { InvalidArgumentError } from '../../../src/errors/index.js'
import {
  checkpointFileName,
  checksumFileName,
  commitFileName,
  commitKey,
  compactedFileName,
  type LogFileName,
  multiPartCheckpointFileName,
  parseLastCheckpoint,
  parseLogFileName,
  serializeLastCheckpoint,
  v2CheckpointFileName,
} from '../../../src/protocol/log-files.js'
import { GOLDEN_SKIP, goldenTables, logFileNames, readLogFile } from './golden-logs.js'

describe('parseLogFileName', () => {
  const cases: [string, LogFileName | undefined][] = [
    ['00000000000000000003.json', { type: 'commit', name: '00000000000000000003.json', version: 3n }],
    [
      '00000000000000000010.checkpoint.parquet',
      { type: 'checkpoint', name: '00000000000000000010.checkpoint.parquet', version: 10n },
    ],
    [
      '00000000000000000001.checkpoint.0000000002.0000000003.parquet',
      {
        type: 'multi-part-checkpoint',
        name: '00000000000000000001.checkpoint.0000000002.0000000003.parquet',
        version: 1n,
        part: 2,
        parts: 3,
      },
    ],
    [
      '00000000000000000002.checkpoint.6374b053-df23-479b-b2cf-c9c550132b49.json',
      {
        type: 'v2-checkpoint',
        name: '00000000000000000002.checkpoint.6374b053-df23-479b-b2cf-c9c550132b49.json',
        version: 2n,
        uuid: '6374b053-df23-479b-b2cf-c9c550132b49',
        format: 'json',
      },
    ],
    [
      '00000000000000000040.00000000000000000042.compacted.json',
      {
        type: 'compacted',
        name: '00000000000000000040.00000000000000000042.compacted.json',
        version: 42n,
        startVersion: 40n,
      },
    ],
    ['00000000000000000042.crc', { type: 'checksum', name: '00000000000000000042.crc', version: 42n }],
    ['_last_checkpoint', { type: 'last-checkpoint', name: '_last_checkpoint' }],
    [
      '99999999999999999999.json',
      { type: 'commit', name: '99999999999999999999.json', version: 99999999999999999999n },
    ],
    // Not Delta log files:
    ['.00000000000000000003.json.crc', undefined],
    ['.00000000000000000010.checkpoint.parquet.crc', undefined],
    ['._last_checkpoint.crc', undefined],
    ['0000000000000000003.json', undefined],
    ['00000000000000000003.json.tmp', undefined],
    ['00000000000000000003.JSON', undefined],
    ['_delta_log/00000000000000000003.json', undefined],
    ['00000000000000000001.checkpoint.0000000004.0000000003.parquet', undefined],
    ['00000000000000000001.checkpoint.0000000000.0000000003.parquet', undefined],
    ['00000000000000000002.checkpoint.6374B053-DF23-479B-B2CF-C9C550132B49.json', undefined],
    ['00000000000000000042.00000000000000000040.compacted.json', undefined],
    [
      '00000000000000000002.checkpoint.0000000001.0000000002.bd1885fd-6ec0-4370-b0f5-43b5162fd4de.parquet',
      undefined,
    ],
    ['_commits', undefined],
  ]
  for (const [name, expected] of cases) {
    it(`classifies '${name}'`, () => {
      assert.deepEqual(parseLogFileName(name), expected)
    })
  }
})

describe('log file names', () => {
  it('are zero-padded and parse back', () => {
    assert.equal(commitFileName(3n), '00000000000000000003.json')
    assert.equal(commitKey(3n), '_delta_log/00000000000000000003.json')
    assert.equal(checkpointFileName(10n), '00000000000000000010.checkpoint.parquet')
    assert.equal(
      multiPartCheckpointFileName(1n, 1, 2),
      '00000000000000000001.checkpoint.0000000001.0000000002.parquet',
    )
    assert.equal(checksumFileName(7n), '00000000000000000007.crc')
    assert.equal(compactedFileName(0n, 5n), '00000000000000000000.00000000000000000005.compacted.json')
    const uuid = '6374b053-df23-479b-b2cf-c9c550132b49'
    for (const name of [
      commitFileName(12345678901234567n),
      checkpointFileName(0n),
      multiPartCheckpointFileName(9n, 3, 3),
      v2CheckpointFileName(2n, uuid, 'parquet'),
      checksumFileName(1n),
      compactedFileName(1n, 2n),
    ]) {
      assert.ok(parseLogFileName(name), name)
    }
  })

  it('refuse versions and parts out of range', () => {
    assert.throws(() => commitFileName(-1n), InvalidArgumentError)
    assert.throws(() => commitFileName(10n ** 20n), InvalidArgumentError)
    assert.throws(() => multiPartCheckpointFileName(1n, 3, 2), InvalidArgumentError)
    assert.throws(() => v2CheckpointFileName(1n, 'not-a-uuid', 'json'), InvalidArgumentError)
    assert.throws(() => compactedFileName(5n, 5n), InvalidArgumentError)
  })
})

describe('parseLastCheckpoint', () => {
  it('reads the fields and round-trips through serializeLastCheckpoint', () => {
    const text = '{"version":10,"size":13,"parts":2,"sizeInBytes":16479,"numOfAddFiles":6,"checksum":"abc"}'
    const hint = parseLastCheckpoint(text)
    assert.deepEqual(hint, {
      version: 10n,
      size: 13,
      parts: 2,
      sizeInBytes: 16479,
      numOfAddFiles: 6,
      checksum: 'abc',
    })
    assert.equal(serializeLastCheckpoint(hint as NonNullable<typeof hint>), text)
  })

  it('writes the hint a checkpoint writer builds', () => {
    assert.equal(
      serializeLastCheckpoint({ version: 12n, size: 5, sizeInBytes: 100, numOfAddFiles: 2 }),
      '{"version":12,"size":5,"sizeInBytes":100,"numOfAddFiles":2}',
    )
  })

  const unusable = [
    '',
    '{"version":10',
    'null',
    '[]',
    '{"size":1}',
    '{"version":"10"}',
    '{"version":-1}',
    '{"version":1,"size":"x"}',
    '{"version":1.5}',
  ]
  for (const text of unusable) {
    it(`ignores the unusable hint ${JSON.stringify(text)}`, () => {
      assert.equal(parseLastCheckpoint(text), undefined)
    })
  }
})

describe('golden table log names and hints', { skip: GOLDEN_SKIP }, () => {
  it('classify every file of every _delta_log/, hidden .crc files as not Delta', () => {
    for (const table of goldenTables()) {
      for (const name of logFileNames(table)) {
        const parsed = parseLogFileName(name)
        if (name.startsWith('.')) assert.equal(parsed, undefined, `${table}/${name}`)
        else assert.ok(parsed, `${table}/${name}`)
      }
    }
  })

  it('read every _last_checkpoint, including the V2 summary with its actions and sidecars', () => {
    const seen: string[] = []
    for (const table of goldenTables()) {
      if (!logFileNames(table).includes('_last_checkpoint')) continue
      const hint = parseLastCheckpoint(readLogFile(table, '_last_checkpoint'))
      assert.ok(hint, table)
      seen.push(`${table}@${hint.version}`)
    }
    assert.ok(seen.includes('multi-part-checkpoint@1'), seen.join())
    const v2 = parseLastCheckpoint(readLogFile('v2-checkpoint-json', '_last_checkpoint'))
    assert.equal(
      v2?.v2Checkpoint?.path,
      '00000000000000000002.checkpoint.6374b053-df23-479b-b2cf-c9c550132b49.json',
    )
    assert.equal(v2?.v2Checkpoint?.sidecarFiles?.length, 2)
    assert.deepEqual(
      v2?.v2Checkpoint?.nonFileActions?.map((a) => Object.keys(a)[0]),
      ['protocol', 'metaData', 'checkpointMetadata'],
    )
    assert.equal(parseLastCheckpoint(readLogFile('multi-part-checkpoint', '_last_checkpoint'))?.parts, 2)
  })
})
