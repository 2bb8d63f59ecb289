/**
 * When each commit happened, as time travel, history and snapshots report it (protocol.md
 * section 11): the commit file's modification time, or its In-Commit Timestamp from the version
 * those were enabled at.
 */
import type { Engine } from '../engine/engine.js'
import {
  FileNotFoundError,
  InvalidArgumentError,
  InvalidTableError,
  isDeltaError,
  VersionNotFoundError,
} from '../errors/index.js'
import {
  type FileMetaLike,
  type LogSegment,
  monotonicCommitTimestamps,
  type SegmentCommit,
  timeTravelCommits,
  versionAtOrBeforeTimestamp,
} from '../log/log-segment.js'
import type { ReplayedState } from '../log/replay.js'
import type { CommitInfo, Metadata, Protocol, Version } from '../protocol/actions.js'
import { parseCommitBytes, parseFirstCommitAction } from '../protocol/log-files.js'
import { isFeatureActive } from '../protocol/table-features.js'
import { inCommitTimestampEnablement } from '../protocol/table-properties.js'

/** From which version a table's commits carry In-Commit Timestamps. */
export interface InCommitTimestampStart {
  /** The first version with an In-Commit Timestamp (0 when enabled at creation). */
  readonly version: Version
  /**
   * That version's In-Commit Timestamp (`delta.inCommitTimestampEnablementTimestamp`);
   * `undefined` when enabled at creation, when every commit has one.
   */
  readonly timestamp: bigint | undefined
}

/**
 * Whether, and from which version, commits of a table carry In-Commit Timestamps: the
 * `inCommitTimestamp` feature is supported and `delta.enableInCommitTimestamps` is true. The
 * enablement properties say where they start; without them, they start at version 0.
 *
 * A property value that cannot be parsed counts as "not enabled": file modification times still
 * order the commits, where refusing would make the table unreadable.
 *
 * @param protocol - the table protocol at the version that decides (the latest for time travel)
 * @param metadata - the table metadata at that version
 * @returns where In-Commit Timestamps start, or `undefined` when they are not enabled
 */
export function inCommitTimestampStart(
  protocol: Protocol,
  metadata: Metadata,
): InCommitTimestampStart | undefined {
  try {
    if (!isFeatureActive(protocol, metadata, 'inCommitTimestamp')) return undefined
    const since = inCommitTimestampEnablement(metadata.configuration)
    return Object.freeze(
      since === undefined
        ? { version: 0n, timestamp: undefined }
        : { version: since.version, timestamp: since.timestamp },
    )
  } catch (err) {
    if (err instanceof InvalidArgumentError) return undefined
    throw err
  }
}

/** How much of a commit file is read first to find its leading `commitInfo`. */
const COMMIT_INFO_PREFIX_BYTES = 64 * 1024

/**
 * The `commitInfo` of a commit, read from the start of its file: with In-Commit Timestamps it
 * is the first line, so a large commit is not read whole. A commitInfo further down (a writer
 * that broke that rule) is still found, by reading the whole file.
 *
 * @param engine - storage access
 * @param commit - the commit file
 * @param signal - cancels the reads
 * @returns the commitInfo, or `undefined` when the commit has none
 * @throws {InvalidTableError} when the file is malformed, or disappeared since it was listed
 */
export async function readCommitInfo(
  engine: Engine,
  commit: SegmentCommit,
  signal?: AbortSignal,
): Promise<CommitInfo | undefined> {
  const { key } = commit.file
  const ctx = { path: key, version: commit.version }
  const whole = commit.file.size > 0 && commit.file.size <= COMMIT_INFO_PREFIX_BYTES
  let bytes = await readCommitRange(engine, commit, whole ? undefined : COMMIT_INFO_PREFIX_BYTES, signal)
  let complete = whole || bytes.length < COMMIT_INFO_PREFIX_BYTES
  let first = parseFirstCommitAction(bytes, complete, ctx)
  if (!first.found) {
    bytes = await readCommitRange(engine, commit, undefined, signal)
    complete = true
    first = parseFirstCommitAction(bytes, true, ctx)
  }
  if (first.action !== undefined && 'commitInfo' in first.action) return first.action.commitInfo
  if (!complete) bytes = await readCommitRange(engine, commit, undefined, signal)
  for (const a of parseCommitBytes(bytes, ctx)) if ('commitInfo' in a) return a.commitInfo
  return undefined
}

async function readCommitRange(
  engine: Engine,
  commit: SegmentCommit,
  length: number | undefined,
  signal: AbortSignal | undefined,
): Promise<Uint8Array> {
  try {
    return await engine.storage.read(
      commit.file.key,
      length === undefined ? undefined : { offset: 0, length },
      { signal },
    )
  } catch (err) {
    if (err instanceof FileNotFoundError) {
      throw new InvalidTableError(
        'missing-version',
        `Log file ${commit.file.key} of version ${commit.version} disappeared while reading`,
        {
          version: commit.version,
          path: commit.file.key,
          cause: err,
          hint: 'Log cleanup removed it concurrently; retry, or time travel to a newer version.',
        },
      )
    }
    throw err
  }
}

/**
 * The In-Commit Timestamp of a commit.
 *
 * @param engine - storage access
 * @param commit - the commit file
 * @param signal - cancels the reads
 * @returns the timestamp, ms since the epoch
 * @throws {InvalidTableError} (`malformed-commit`) when the commit carries none
 */
export async function readInCommitTimestamp(
  engine: Engine,
  commit: SegmentCommit,
  signal?: AbortSignal,
): Promise<bigint> {
  const ict = (await readCommitInfo(engine, commit, signal))?.inCommitTimestamp
  if (ict === undefined) {
    throw new InvalidTableError(
      'malformed-commit',
      `Commit ${commit.file.key} (version ${commit.version}) has no commitInfo.inCommitTimestamp, although the table enables In-Commit Timestamps for it`,
      {
        path: commit.file.key,
        version: commit.version,
        hint: 'A writer that does not implement In-Commit Timestamps wrote this commit; time travel by version still works.',
      },
    )
  }
  return ict
}

/**
 * The commit time of the version a snapshot describes: its In-Commit Timestamp when the
 * snapshot's own metadata enables them for that version, else its commit file's modification
 * time. Only when the commit file itself is gone (log cleanup kept just the checkpoint) is the
 * checkpoint file's time used, as the best remaining clue.
 *
 * @param engine - storage access
 * @param segment - the segment the snapshot was built from
 * @param state - the replayed state
 * @param signal - cancels the reads
 * @returns ms since the epoch
 */
export async function snapshotCommitTimestamp(
  engine: Engine,
  segment: LogSegment,
  state: ReplayedState,
  signal?: AbortSignal,
): Promise<number> {
  const own = segment.lastCommit
  const fallback = own?.file.lastModified ?? segment.checkpoint?.files[0]?.lastModified ?? 0
  const start = inCommitTimestampStart(state.protocol, state.metadata)
  if (own === undefined || start === undefined || segment.version < start.version) return fallback
  const replayed = state.latestCommitInfo?.inCommitTimestamp
  if (replayed !== undefined) return Number(replayed)
  try {
    return Number(await readInCommitTimestamp(engine, own, signal))
  } catch (err) {
    // A plain read must not fail for want of a timestamp; time travel by timestamp reports it.
    if (isDeltaError(err, 'DELTA_INVALID_TABLE')) return fallback
    throw err
  }
}

// === Time travel by timestamp ===

/** What timestamp resolution needs to know of the latest version. */
export interface LatestVersionInfo {
  readonly version: Version
  readonly protocol: Protocol
  readonly metadata: Metadata
}

function isoOf(ms: bigint): string {
  const d = new Date(Number(ms))
  return Number.isNaN(d.getTime()) ? `${ms} ms` : d.toISOString()
}

/**
 * The version a timestamp selects, by Delta's rules: the latest commit whose timestamp is at or
 * before it, among every commit still in the log from the earliest reconstructable version.
 * Commit file modification times are made strictly increasing first (clock skew, copies); with
 * In-Commit Timestamps, a timestamp at or after the enablement timestamp is searched among the
 * commits from the enablement version by their In-Commit Timestamps (a binary search that reads
 * only the first line of a few commit files), an earlier one among the commits before it by
 * file times.
 *
 * @param engine - storage access, for In-Commit Timestamps
 * @param listing - the whole listing of `_delta_log/`
 * @param latest - the latest version and what decides how its commits are timed
 * @param timestamp - the requested instant, ms since the epoch
 * @param signal - cancels the reads
 * @returns the version
 * @throws {VersionNotFoundError} when the timestamp is before the earliest reachable commit
 *   (the message names its version and time) or after the latest commit
 * @throws {InvalidTableError} when a commit that must carry an In-Commit Timestamp has none
 */
export async function versionAtTimestamp(
  engine: Engine,
  listing: readonly FileMetaLike[],
  latest: LatestVersionInfo,
  timestamp: number,
  signal?: AbortSignal,
): Promise<Version> {
  const wanted = BigInt(Math.floor(timestamp))
  const commits = timeTravelCommits(listing, latest.version)
  const start = inCommitTimestampStart(latest.protocol, latest.metadata)
  const byFileTime = start === undefined ? commits : commits.filter((c) => c.version < start.version)
  const byIct = start === undefined ? [] : commits.filter((c) => c.version >= start.version)
  const first = commits[0]
  if (first === undefined) {
    throw new VersionNotFoundError(
      `timestamp ${isoOf(wanted)}: no commit file from the earliest reconstructable version on is left in the log`,
    )
  }
  const ictOf = cachedIct(engine, signal)
  const useIct = start !== undefined && (start.timestamp === undefined || wanted >= start.timestamp)
  if (!useIct || byIct.length === 0) {
    if (byFileTime.length === 0) {
      // Asked for a time before In-Commit Timestamps, whose commits cleanup removed.
      const earliest = byIct[0] as SegmentCommit
      throw beforeEarliest(wanted, earliest.version, await ictOf(earliest), latest.version)
    }
    return versionAtOrBeforeTimestamp(
      byFileTime.map((c) => ({ version: c.version, timestamp: c.file.lastModified })),
      wanted,
      { endsAtLatest: byIct.length === 0, latestVersion: latest.version },
    )
  }
  const last = byIct[byIct.length - 1] as SegmentCommit
  const lastTs = await ictOf(last)
  if (wanted > lastTs) {
    throw new VersionNotFoundError(
      `timestamp ${isoOf(wanted)}, which is after the latest commit (version ${last.version} at ${isoOf(lastTs)})`,
      (byFileTime[0] ?? first).version,
      latest.version,
    )
  }
  const head = byIct[0] as SegmentCommit
  const headTs = await ictOf(head)
  if (wanted < headTs) throw beforeEarliest(wanted, head.version, headTs, latest.version)
  // In-Commit Timestamps increase strictly with the version: binary search, reading a few files.
  let lo = 0
  let hi = byIct.length - 1
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1
    if ((await ictOf(byIct[mid] as SegmentCommit)) <= wanted) lo = mid
    else hi = mid - 1
  }
  return (byIct[lo] as SegmentCommit).version
}

function beforeEarliest(wanted: bigint, version: Version, at: bigint, latest: Version): VersionNotFoundError {
  return new VersionNotFoundError(
    `timestamp ${isoOf(wanted)}, which is before the earliest commit (version ${version} at ${isoOf(at)})`,
    version,
    latest,
    { beforeEarliest: true },
  )
}

function cachedIct(engine: Engine, signal: AbortSignal | undefined): (c: SegmentCommit) => Promise<bigint> {
  const cache = new Map<Version, bigint>()
  return async (c) => {
    const known = cache.get(c.version)
    if (known !== undefined) return known
    const ts = await readInCommitTimestamp(engine, c, signal)
    cache.set(c.version, ts)
    return ts
  }
}

// === History ===

/**
 * The commits `history()` lists and their times, consistent with time travel: every commit
 * from the earliest reconstructable version, timed by its In-Commit Timestamp from the version
 * those start at (taken from `infos`), before it by its file modification time made strictly
 * increasing.
 *
 * @param listing - the whole listing of `_delta_log/`
 * @param latest - the latest version and what decides how its commits are timed
 * @returns the commits ascending, with a function giving a commit's time from its commitInfo
 */
export function historyTimeline(
  listing: readonly FileMetaLike[],
  latest: LatestVersionInfo,
): {
  readonly commits: readonly SegmentCommit[]
  readonly timestampOf: (commit: SegmentCommit, info: CommitInfo | undefined) => number
} {
  const commits = timeTravelCommits(listing, latest.version)
  const start = inCommitTimestampStart(latest.protocol, latest.metadata)
  const fileTimes = new Map<Version, number>()
  const beforeIct = start === undefined ? commits : commits.filter((c) => c.version < start.version)
  for (const t of monotonicCommitTimestamps(
    beforeIct.map((c) => ({ version: c.version, timestamp: c.file.lastModified })),
  )) {
    fileTimes.set(t.version, Number(t.timestamp))
  }
  return {
    commits,
    timestampOf: (commit, info) => {
      const ict = info?.inCommitTimestamp
      if (start !== undefined && commit.version >= start.version && ict !== undefined) return Number(ict)
      return fileTimes.get(commit.version) ?? commit.file.lastModified
    },
  }
}
