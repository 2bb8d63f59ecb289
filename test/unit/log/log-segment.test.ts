import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { InvalidTableError, TableNotFoundError, VersionNotFoundError } from '../../../src/errors/index.js'
import {
  earliestReconstructableVersion,
  type FileMetaLike,
  type LogSegment,
  latestVersion,
  monotonicCommitTimestamps,
  planLogSegment,
  versionAtOrBeforeTimestamp,
} from '../../../src/log/log-segment.js'
import { parseLastCheckpoint } from '../../../src/protocol/log-files.js'
import {
  GOLDEN_SKIP,
  goldenExpected,
  goldenTables,
  logListing,
  readLogFile,
} from '../protocol/golden-logs.js'

const v20 = (v: number): string => String(v).padStart(20, '0')
const commit = (v: number, lastModified = 1000 + v): FileMetaLike => ({
  key: `_delta_log/${v20(v)}.json`,
  size: 10,
  lastModified,
})
const classic = (v: number): FileMetaLike => ({
  key: `_delta_log/${v20(v)}.checkpoint.parquet`,
  size: 10,
  lastModified: 1,
})
const part = (v: number, p: number, n: number): FileMetaLike => ({
  key: `_delta_log/${v20(v)}.checkpoint.${String(p).padStart(10, '0')}.${String(n).padStart(10, '0')}.parquet`,
  size: 10,
  lastModified: 1,
})
const v2 = (v: number, uuid: string, ext = 'json'): FileMetaLike => ({
  key: `_delta_log/${v20(v)}.checkpoint.${uuid}.${ext}`,
  size: 10,
  lastModified: 1,
})
const other = (key: string): FileMetaLike => ({ key, size: 1, lastModified: 1 })
const commits = (from: number, to: number): FileMetaLike[] => {
  const out: FileMetaLike[] = []
  for (let v = from; v <= to; v++) out.push(commit(v))
  return out
}
const UUID_A = '00000000-0000-0000-0000-00000000000a'
const UUID_B = '00000000-0000-0000-0000-00000000000b'

function shape(s: LogSegment): { version: bigint; checkpoint?: string; commits: bigint[]; last?: bigint } {
  return {
    version: s.version,
    ...(s.checkpoint
      ? { checkpoint: `${s.checkpoint.kind}@${s.checkpoint.version}:${s.checkpoint.files.length}` }
      : {}),
    commits: s.commits.map((c) => c.version),
    ...(s.lastCommit ? { last: s.lastCommit.version } : {}),
  }
}

function invalid(reason: string, pattern?: RegExp): (e: unknown) => boolean {
  return (e) =>
    e instanceof InvalidTableError &&
    e.reason === reason &&
    (pattern === undefined || pattern.test(e.message))
}

describe('planLogSegment', () => {
  it('replays every commit from 0 when there is no checkpoint', () => {
    assert.deepEqual(shape(planLogSegment(commits(0, 3))), {
      version: 3n,
      commits: [0n, 1n, 2n, 3n],
      last: 3n,
    })
  })

  it('starts from the newest checkpoint at or below the target', () => {
    const files = [...commits(0, 13), classic(5), classic(10)]
    assert.deepEqual(shape(planLogSegment(files)), {
      version: 13n,
      checkpoint: 'classic@10:1',
      commits: [11n, 12n, 13n],
      last: 13n,
    })
    assert.deepEqual(shape(planLogSegment(files, { targetVersion: 7n })), {
      version: 7n,
      checkpoint: 'classic@5:1',
      commits: [6n, 7n],
      last: 7n,
    })
    assert.deepEqual(shape(planLogSegment(files, { targetVersion: 10n })), {
      version: 10n,
      checkpoint: 'classic@10:1',
      commits: [],
      last: 10n,
    })
  })

  it('works when the commits up to the checkpoint were cleaned up', () => {
    const s = planLogSegment([classic(10), ...commits(11, 12)])
    assert.deepEqual(shape(s), { version: 12n, checkpoint: 'classic@10:1', commits: [11n, 12n], last: 12n })
    const atCheckpoint = planLogSegment([classic(10)])
    assert.deepEqual(shape(atCheckpoint), { version: 10n, checkpoint: 'classic@10:1', commits: [] })
  })

  it('uses a multi-part checkpoint only when all parts are listed, parts in order', () => {
    const complete = planLogSegment([...commits(0, 3), part(2, 2, 2), part(2, 1, 2)])
    assert.equal(complete.checkpoint?.kind, 'multi-part')
    assert.deepEqual(
      complete.checkpoint?.files.map((f) => f.key.slice(-29)),
      ['0000000001.0000000002.parquet', '0000000002.0000000002.parquet'],
    )
    const incomplete = planLogSegment([...commits(0, 3), part(2, 1, 3), part(2, 3, 3), classic(1)])
    assert.deepEqual(shape(incomplete), {
      version: 3n,
      checkpoint: 'classic@1:1',
      commits: [2n, 3n],
      last: 3n,
    })
  })

  it('prefers a classic checkpoint over V2 and multi-part ones of the same version, deterministically', () => {
    const files = [...commits(0, 4), part(3, 1, 1), v2(3, UUID_B), v2(3, UUID_A, 'parquet'), classic(3)]
    assert.equal(planLogSegment(files).checkpoint?.kind, 'classic')
    const noClassic = files.filter((f) => !f.key.endsWith('.checkpoint.parquet'))
    const picked = planLogSegment(noClassic).checkpoint
    assert.equal(picked?.kind, 'v2')
    assert.ok(picked?.files[0]?.key.includes(UUID_A))
    assert.equal(planLogSegment([...noClassic].reverse()).checkpoint?.files[0]?.key, picked?.files[0]?.key)
  })

  it('ignores hidden .crc files, sidecars, staged commits, checksums, compactions and files outside the log', () => {
    const files = [
      ...commits(0, 2),
      other('_delta_log/.00000000000000000003.json.crc'),
      other('_delta_log/.00000000000000000002.checkpoint.parquet.crc'),
      other(`_delta_log/_sidecars/${v20(2)}.checkpoint.0000000001.0000000001.${UUID_A}.parquet`),
      other(`_delta_log/_staged_commits/${v20(3)}.${UUID_A}.json`),
      other(`_delta_log/_commits/${v20(3)}.json`),
      other(`_delta_log/${v20(3)}.crc`),
      other(`_delta_log/${v20(0)}.${v20(3)}.compacted.json`),
      other('_delta_log/_last_checkpoint'),
      other(`${v20(9)}.json`),
    ]
    assert.deepEqual(shape(planLogSegment(files)), { version: 2n, commits: [0n, 1n, 2n], last: 2n })
  })

  it('picks the newest checkpoint from the listing whatever a stale hint says', () => {
    const files = [...commits(0, 12), classic(5), classic(10)]
    const stale = parseLastCheckpoint('{"version":5,"size":3}')
    assert.equal(planLogSegment(files, { lastCheckpoint: stale }).checkpoint?.version, 10n)
  })

  it('ignores a hint pointing at a missing or incomplete checkpoint when the listing is complete', () => {
    const hint = parseLastCheckpoint('{"version":10,"size":3,"parts":2}')
    const files = [...commits(0, 12), part(10, 1, 2)]
    assert.deepEqual(shape(planLogSegment(files, { lastCheckpoint: hint })).commits.length, 13)
  })

  it('asks for a full listing when a listing started at an unusable hint cannot rebuild the target', () => {
    const hint = parseLastCheckpoint('{"version":10,"size":3}')
    assert.throws(
      () => planLogSegment(commits(10, 12), { lastCheckpoint: hint }),
      invalid('missing-version', /hinted checkpoint 10/),
    )
  })

  it('refuses a gap in the commits with versions-not-contiguous', () => {
    assert.throws(
      () => planLogSegment([commit(0), commit(2)]),
      invalid('versions-not-contiguous', /versions are not contiguous: \[0, 2\] \(version 1 is missing\)/),
    )
    assert.throws(
      () => planLogSegment([classic(10), commit(11), commit(13), commit(14)]),
      invalid('versions-not-contiguous', /\[10, 11, 13, 14\].*version 12/),
    )
    assert.throws(
      () => planLogSegment([...commits(0, 2), commit(4)], { targetVersion: 3n }),
      invalid('versions-not-contiguous', /\[0, 1, 2, 4\].*version 3/),
    )
  })

  it('refuses a log without checkpoint and without commit 0 with missing-version', () => {
    assert.throws(() => planLogSegment(commits(5, 7)), invalid('missing-version', /no commit 0/))
  })

  it('refuses versions outside the log with VersionNotFoundError and the available range', () => {
    const files = [classic(5), ...commits(5, 8)]
    const check = (target: bigint, earliest: bigint | undefined) => (e: unknown) =>
      e instanceof VersionNotFoundError && e.requested === `version ${target}` && e.earliest === earliest
    assert.throws(() => planLogSegment(files, { targetVersion: 9n }), check(9n, 5n))
    assert.throws(() => planLogSegment(files, { targetVersion: 2n }), check(2n, 5n))
    assert.throws(() => planLogSegment(files, { targetVersion: -1n }), check(-1n, 5n))
  })

  it('throws TableNotFoundError for a log without commit or complete checkpoint', () => {
    const check = (e: unknown) => e instanceof TableNotFoundError && e.location === '/data/t'
    assert.throws(() => planLogSegment([], { location: '/data/t' }), check)
    assert.throws(
      () =>
        planLogSegment([other('_delta_log/_last_checkpoint'), other('_delta_log/.x.crc'), part(3, 1, 2)], {
          location: '/data/t',
        }),
      check,
    )
  })
})

describe('version bounds', () => {
  it('latestVersion counts commits and complete checkpoints', () => {
    assert.equal(latestVersion([...commits(0, 3), classic(4)]), 4n)
    assert.equal(latestVersion([...commits(0, 3), part(4, 1, 2)]), 3n)
    assert.equal(latestVersion([]), undefined)
  })

  const cases: [string, FileMetaLike[], bigint | undefined][] = [
    ['a full log', commits(0, 5), 0n],
    ['a cleaned-up log', [classic(5), ...commits(4, 9)], 5n],
    ['a log with a gap bridged by a checkpoint', [...commits(0, 3), ...commits(6, 12), classic(8)], 8n],
    ['two checkpoints with every commit after the first', [classic(2), classic(6), ...commits(3, 8)], 2n],
    ['a log whose head cannot be rebuilt', [...commits(0, 3), commit(5)], undefined],
  ]
  for (const [name, files, expected] of cases) {
    it(`earliestReconstructableVersion of ${name}`, () => {
      assert.equal(earliestReconstructableVersion(files), expected)
    })
  }
})

describe('timestamp time travel', () => {
  const start = 1540415658000
  const min = 60_000
  const travel = [
    { version: 0n, timestamp: start },
    { version: 1n, timestamp: start + 20 * min },
    { version: 2n, timestamp: start + 40 * min },
  ]

  const selects: [string, number, bigint][] = [
    ['an exact first commit time', start, 0n],
    ['10 minutes in', start + 10 * min, 0n],
    ['an exact middle commit time', start + 20 * min, 1n],
    ['30 minutes in', start + 30 * min, 1n],
    ['the exact latest commit time', start + 40 * min, 2n],
  ]
  for (const [name, ts, version] of selects) {
    it(`selects version ${version} for ${name}`, () => {
      assert.equal(versionAtOrBeforeTimestamp(travel, ts), version)
      assert.equal(versionAtOrBeforeTimestamp([...travel].reverse(), BigInt(ts)), version)
    })
  }

  it('refuses a timestamp after the latest commit or before the first', () => {
    assert.throws(
      () => versionAtOrBeforeTimestamp(travel, start + 50 * min),
      (e: unknown) =>
        e instanceof VersionNotFoundError &&
        /after the latest commit \(version 2/.test(e.requested) &&
        e.latest === 2n,
    )
    assert.throws(
      () => versionAtOrBeforeTimestamp(travel, start - 1),
      (e: unknown) =>
        e instanceof VersionNotFoundError &&
        /before the earliest commit/.test(e.requested) &&
        e.earliest === 0n,
    )
    assert.throws(() => versionAtOrBeforeTimestamp([], start), VersionNotFoundError)
  })

  it('adjusts file times that go backwards to be strictly increasing', () => {
    const skewed = [
      { version: 0n, timestamp: 100 },
      { version: 1n, timestamp: 100 },
      { version: 2n, timestamp: 50 },
      { version: 3n, timestamp: 200 },
    ]
    assert.deepEqual(
      monotonicCommitTimestamps(skewed).map((c) => c.timestamp),
      [100n, 101n, 102n, 200n],
    )
    assert.equal(versionAtOrBeforeTimestamp(skewed, 101), 1n)
    assert.equal(versionAtOrBeforeTimestamp(skewed, 150), 2n)
  })
})

describe('golden table logs', { skip: GOLDEN_SKIP }, () => {
  const checkpointUsed: Record<string, string> = {
    'basic-with-inserts-deletes-checkpoint': 'classic@10:1',
    checkpoint: 'classic@10:1',
    'corrupted-last-checkpoint': 'classic@10:1',
    'dv-partitioned-with-checkpoint': 'classic@10:1',
    'dv-with-columnmapping': 'classic@10:1',
    'multi-part-checkpoint': 'multi-part@1:2',
    'only-checkpoint-files': 'classic@2:1',
    'v2-checkpoint-json': 'v2@2:1',
    'v2-checkpoint-parquet': 'v2@2:1',
  }

  it('plan the latest version of every table, with its checkpoint, and refuse versions-not-contiguous', () => {
    const expected = goldenExpected()
    for (const table of goldenTables()) {
      const listing = logListing(table)
      if (table === 'versions-not-contiguous') {
        assert.throws(() => planLogSegment(listing), invalid('versions-not-contiguous', /\[0, 2\]/))
        continue
      }
      const text = listing.some((f) => f.key.endsWith('_last_checkpoint'))
        ? readLogFile(table, '_last_checkpoint')
        : ''
      const s = shape(planLogSegment(listing, { lastCheckpoint: parseLastCheckpoint(text) }))
      assert.equal(s.version, BigInt(expected[table]?.latestVersion ?? -1), table)
      assert.equal(s.checkpoint, checkpointUsed[table], table)
      assert.equal(earliestReconstructableVersion(listing), 0n, table)
    }
  })

  it('plan every older version of a checkpointed table from commit 0 or the checkpoint', () => {
    const listing = logListing('dv-partitioned-with-checkpoint')
    for (let v = 0n; v <= 15n; v++) {
      const s = planLogSegment(listing, { targetVersion: v })
      assert.equal(s.version, v)
      assert.equal(s.checkpoint?.version, v >= 10n ? 10n : undefined)
      assert.equal(s.commits.length, Number(v >= 10n ? v - 10n : v + 1n))
    }
  })
})
