/**
 * The pure rule of expired log cleanup: which checkpoints are complete, and which files below a
 * boundary are old enough to go.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  completeCheckpointVersions,
  expiredLogFiles,
  sidecarNamingCheckpoints,
  unreferencedSidecars,
} from '../../../src/log/log-cleanup.js'
import type { FileMetaLike } from '../../../src/log/log-segment.js'

const pad = (v: number) => String(v).padStart(20, '0')
const file = (name: string, lastModified: number): FileMetaLike => ({
  key: `_delta_log/${name}`,
  size: 10,
  lastModified,
})

describe('completeCheckpointVersions', () => {
  it('counts classic and V2 checkpoints, and multi-part ones only with every part', () => {
    const listing = [
      file(`${pad(10)}.checkpoint.parquet`, 0),
      file(`${pad(20)}.checkpoint.0000000001.0000000002.parquet`, 0),
      file(`${pad(30)}.checkpoint.0000000001.0000000002.parquet`, 0),
      file(`${pad(30)}.checkpoint.0000000002.0000000002.parquet`, 0),
      file(`${pad(40)}.checkpoint.80a083e8-7026-4e79-81be-64bd76c43a11.json`, 0),
      file(`${pad(50)}.json`, 0),
      file('_last_checkpoint', 0),
      file(`_sidecars/${pad(60)}.checkpoint.parquet`, 0),
    ]
    assert.deepEqual(completeCheckpointVersions(listing), [10n, 30n, 40n])
  })
})

describe('expiredLogFiles', () => {
  it('returns every kind of log file below the boundary older than the cutoff, ascending, and keeps the rest', () => {
    const old = 1_000
    const young = 5_000
    const listing = [
      file(`${pad(3)}.json`, old),
      file(`${pad(0)}.json`, old),
      file(`${pad(1)}.json`, old),
      file(`${pad(1)}.crc`, old),
      file(`${pad(2)}.checkpoint.parquet`, young),
      file(`${pad(2)}.json`, old),
      file(`${pad(0)}.${pad(2)}.compacted.json`, old),
      file(`${pad(2)}.${pad(4)}.compacted.json`, old),
      file(`${pad(4)}.checkpoint.parquet`, old),
      file(`${pad(4)}.json`, old),
      file(`${pad(5)}.json`, old),
      file('_last_checkpoint', old),
      file(`.${pad(1)}.json.crc`, old),
      file(`_sidecars/${pad(1)}.parquet`, old),
      file(`_staged_commits/${pad(1)}.json`, old),
    ]
    const result = expiredLogFiles(listing, 4n, 2_000)
    assert.deepEqual(
      result.files.map((f) => f.key),
      [
        `_delta_log/${pad(0)}.json`,
        `_delta_log/${pad(1)}.crc`,
        `_delta_log/${pad(1)}.json`,
        // A Hadoop checksum file follows its file.
        `_delta_log/.${pad(1)}.json.crc`,
        `_delta_log/${pad(0)}.${pad(2)}.compacted.json`,
        `_delta_log/${pad(2)}.json`,
        `_delta_log/${pad(3)}.json`,
      ],
    )
    assert.equal(result.keptYoung, 1, 'the checkpoint at 2 was written after the cutoff')
  })

  it('deletes nothing at boundary 0', () => {
    assert.deepEqual(expiredLogFiles([file(`${pad(0)}.json`, 0)], 0n, 10).files, [])
  })
})

describe('sidecarNamingCheckpoints', () => {
  it('lists V2 and single-file checkpoints that remain, never multi-part ones or commits', () => {
    const listing = [
      file(`${pad(1)}.checkpoint.parquet`, 0),
      file(`${pad(2)}.checkpoint.0000000001.0000000002.parquet`, 0),
      file(`${pad(3)}.checkpoint.80a083e8-7026-4e79-81be-64bd76c43a11.json`, 0),
      file(`${pad(4)}.checkpoint.80a083e8-7026-4e79-81be-64bd76c43a12.parquet`, 0),
      file(`${pad(5)}.checkpoint.parquet`, 0),
      file(`${pad(5)}.json`, 0),
    ]
    const gone = new Set([`_delta_log/${pad(1)}.checkpoint.parquet`])
    assert.deepEqual(
      sidecarNamingCheckpoints(listing, gone).map((c) => [c.version, c.format]),
      [
        [3n, 'json'],
        [4n, 'parquet'],
        [5n, 'parquet'],
      ],
    )
  })
})

describe('unreferencedSidecars', () => {
  it('returns old sidecars no checkpoint names, with their checksum files; named or young ones stay', () => {
    const side = (name: string, lastModified: number) => file(`_sidecars/${name}`, lastModified)
    const sidecars = [
      side('b.parquet', 1_000),
      side('.b.parquet.crc', 1_000),
      side('a.parquet', 1_000),
      side('.a.parquet.crc', 1_000),
      side('young.parquet', 5_000),
      side('old.parquet', 1_000),
    ]
    const referenced = new Set(['_delta_log/_sidecars/a.parquet'])
    assert.deepEqual(
      unreferencedSidecars(sidecars, referenced, 2_000).map((f) => f.key),
      [
        '_delta_log/_sidecars/.b.parquet.crc',
        '_delta_log/_sidecars/b.parquet',
        '_delta_log/_sidecars/old.parquet',
      ],
    )
  })
})
