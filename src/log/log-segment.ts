/**
 * Log segment planning: from a listing of `_delta_log/`, which checkpoint and which commits
 * rebuild the table at a version (protocol.md section 1.6), plus the version bounds and the
 * timestamp rule time travel needs. Pure: the caller lists, this module decides what to read.
 */
import { InvalidTableError, TableNotFoundError, VersionNotFoundError } from '../errors/index.js'
import type { Version } from '../protocol/actions.js'
import { type LastCheckpoint, LOG_DIR, parseLogFileName } from '../protocol/log-files.js'
import { appendAll } from '../util/arrays.js'

/** One listed file (a store `FileMeta` fits). */
export interface FileMetaLike {
  /** Key relative to the table root, e.g. `_delta_log/00000000000000000003.json`. */
  readonly key: string
  readonly size: number
  /** Milliseconds since the epoch. */
  readonly lastModified: number
}

/** How a checkpoint is stored. */
export type CheckpointKind = 'classic' | 'multi-part' | 'v2'

/** The checkpoint a segment starts from. */
export interface SegmentCheckpoint {
  readonly version: Version
  readonly kind: CheckpointKind
  /**
   * The files to read: one for classic and V2 (the top-level file; its sidecars are found inside
   * it), every part in part order for multi-part.
   */
  readonly files: readonly FileMetaLike[]
}

/** A commit file of a segment. */
export interface SegmentCommit {
  readonly version: Version
  readonly file: FileMetaLike
}

/** What to read to rebuild the table at {@link LogSegment.version}. */
export interface LogSegment {
  readonly version: Version
  /** The newest complete checkpoint at or below `version`, if any. */
  readonly checkpoint?: SegmentCheckpoint
  /** Commits after the checkpoint (from 0 without one) up to `version`, ascending, contiguous. */
  readonly commits: readonly SegmentCommit[]
  /**
   * The commit file of `version` itself when it is listed, also when `version` is the
   * checkpoint's (its commitInfo and In-Commit Timestamp are not in the checkpoint).
   */
  readonly lastCommit?: SegmentCommit
}

/** Options of {@link planLogSegment}. */
export interface PlanLogSegmentOptions {
  /** The version to rebuild; the latest when absent. */
  readonly targetVersion?: Version | undefined
  /**
   * The `_last_checkpoint` hint, when the listing was started at its version rather than at the
   * start of the log. The hint never picks the checkpoint (the listing does), but it tells the
   * planner that older files may simply not have been listed: a target that the listing cannot
   * rebuild then gives `InvalidTableError('missing-version')`, and the caller lists the whole log
   * and plans again without the hint.
   */
  readonly lastCheckpoint?: LastCheckpoint | undefined
  /** The table location, for the `TableNotFoundError` message. */
  readonly location?: string | undefined
}

interface CheckpointCandidate {
  readonly kind: CheckpointKind
  readonly files: readonly FileMetaLike[]
  /** Tie-break among checkpoints of one version: classic, then V2 by name, then multi-part. */
  readonly rank: string
}

interface ClassifiedListing {
  readonly commits: ReadonlyMap<Version, FileMetaLike>
  /** Complete checkpoints by version, best first. */
  readonly checkpoints: ReadonlyMap<Version, readonly CheckpointCandidate[]>
}

function classify(files: readonly FileMetaLike[]): ClassifiedListing {
  const commits = new Map<Version, FileMetaLike>()
  const singles = new Map<Version, CheckpointCandidate[]>()
  const multi = new Map<Version, Map<number, Map<number, FileMetaLike>>>()
  for (const f of files) {
    if (!f.key.startsWith(LOG_DIR)) continue
    const name = f.key.slice(LOG_DIR.length)
    if (name.includes('/')) continue
    const parsed = parseLogFileName(name)
    if (parsed === undefined) continue
    switch (parsed.type) {
      case 'commit':
        commits.set(parsed.version, f)
        break
      case 'checkpoint':
      case 'v2-checkpoint': {
        const list = singles.get(parsed.version) ?? []
        const kind = parsed.type === 'checkpoint' ? 'classic' : 'v2'
        list.push({ kind, files: Object.freeze([f]), rank: `${kind === 'classic' ? 0 : 1}:${name}` })
        singles.set(parsed.version, list)
        break
      }
      case 'multi-part-checkpoint': {
        const byParts = multi.get(parsed.version) ?? new Map<number, Map<number, FileMetaLike>>()
        const parts = byParts.get(parsed.parts) ?? new Map<number, FileMetaLike>()
        parts.set(parsed.part, f)
        byParts.set(parsed.parts, parts)
        multi.set(parsed.version, byParts)
        break
      }
      default:
        break
    }
  }
  const checkpoints = new Map<Version, CheckpointCandidate[]>(singles)
  for (const [version, byParts] of multi) {
    for (const [count, parts] of byParts) {
      // A multi-part checkpoint counts only when every part is listed.
      if (parts.size !== count) continue
      const ordered = [...parts.entries()].sort((a, b) => a[0] - b[0]).map(([, f]) => f)
      const list = checkpoints.get(version) ?? []
      list.push({
        kind: 'multi-part',
        files: Object.freeze(ordered),
        rank: `2:${String(count).padStart(10, '0')}`,
      })
      checkpoints.set(version, list)
    }
  }
  for (const list of checkpoints.values())
    list.sort((a, b) => (a.rank < b.rank ? -1 : a.rank > b.rank ? 1 : 0))
  return { commits, checkpoints }
}

function compareVersions(a: Version, b: Version): number {
  return a < b ? -1 : a > b ? 1 : 0
}

function maxOf(versions: Iterable<Version>): Version | undefined {
  let max: Version | undefined
  for (const v of versions) if (max === undefined || v > max) max = v
  return max
}

function latestOf(listing: ClassifiedListing): Version | undefined {
  const a = maxOf(listing.commits.keys())
  const b = maxOf(listing.checkpoints.keys())
  if (a === undefined) return b
  if (b === undefined) return a
  // Math.max does not take bigints.
  if (a > b) return a
  return b
}

function earliestOf(listing: ClassifiedListing, latest: Version): Version | undefined {
  const versions = [...new Set([...listing.commits.keys(), ...listing.checkpoints.keys()])].sort(
    compareVersions,
  )
  // Which listed versions can be rebuilt: a checkpoint, commit 0, or a commit right after a
  // version that can be rebuilt.
  const rebuildable = new Set<Version>()
  let prev: Version | undefined
  for (const v of versions) {
    const fromPrev = prev !== undefined && prev === v - 1n && rebuildable.has(prev) && listing.commits.has(v)
    if (listing.checkpoints.has(v) || (v === 0n && listing.commits.has(0n)) || fromPrev) rebuildable.add(v)
    prev = v
  }
  if (!rebuildable.has(latest)) return undefined
  let earliest = latest
  while (rebuildable.has(earliest - 1n)) earliest -= 1n
  return earliest
}

/**
 * The latest version a listing of `_delta_log/` shows: the newest commit or complete checkpoint.
 *
 * @param files - the listing
 * @returns the version, or `undefined` when there is no commit and no complete checkpoint
 */
export function latestVersion(files: readonly FileMetaLike[]): Version | undefined {
  return latestOf(classify(files))
}

/**
 * The earliest version time travel can rebuild from a listing: every version from it up to the
 * latest has a complete checkpoint, or commit 0, or a contiguous chain of commits from one.
 *
 * @param files - the listing of `_delta_log/`
 * @returns the version, or `undefined` when not even the latest version can be rebuilt
 */
export function earliestReconstructableVersion(files: readonly FileMetaLike[]): Version | undefined {
  const listing = classify(files)
  const latest = latestOf(listing)
  return latest === undefined ? undefined : earliestOf(listing, latest)
}

function formatVersions(versions: readonly Version[]): string {
  const shown = versions.length <= 20 ? versions : [...versions.slice(0, 10), '...', ...versions.slice(-5)]
  return `[${shown.join(', ')}]`
}

/**
 * Plans the log segment that rebuilds the table at a version: the newest complete checkpoint at
 * or below it (a multi-part checkpoint counts only with all its parts; among complete checkpoints
 * of one version, classic first, then V2, then multi-part) and the contiguous commits after it.
 * Files outside `_delta_log/` itself (sidecars, staged commits) and names that are not Delta log
 * files (hidden `.crc` side files) are ignored.
 *
 * @param files - the listing of `_delta_log/` (keys relative to the table root), in any order
 * @param options - target version, the hint the listing started from, the table location
 * @returns the segment
 * @throws {TableNotFoundError} when the listing holds no commit and no complete checkpoint
 * @throws {VersionNotFoundError} when the target is negative, above the latest version, or older
 *   than the earliest version the log can rebuild
 * @throws {InvalidTableError} `versions-not-contiguous` when a commit between the checkpoint and
 *   the target is missing; `missing-version` when there is no checkpoint and no commit 0 to start
 *   from (or, with a hint, when the listing may simply be too short)
 */
export function planLogSegment(
  files: readonly FileMetaLike[],
  options: PlanLogSegmentOptions = {},
): LogSegment {
  const listing = classify(files)
  const latest = latestOf(listing)
  if (latest === undefined) throw new TableNotFoundError(options.location ?? LOG_DIR)
  const target = options.targetVersion ?? latest
  if (target < 0n || target > latest) {
    const earliest = options.lastCheckpoint === undefined ? earliestOf(listing, latest) : undefined
    throw new VersionNotFoundError(`version ${target}`, earliest, earliest === undefined ? undefined : latest)
  }

  let checkpointVersion: Version | undefined
  for (const v of listing.checkpoints.keys()) {
    if (v <= target && (checkpointVersion === undefined || v > checkpointVersion)) checkpointVersion = v
  }
  const start = checkpointVersion === undefined ? 0n : checkpointVersion + 1n
  const inRange = [...listing.commits.keys()].filter((v) => v >= start && v <= target).sort(compareVersions)

  if (checkpointVersion === undefined && inRange[0] !== 0n) {
    const earliest = options.lastCheckpoint === undefined ? earliestOf(listing, latest) : undefined
    if (earliest !== undefined && target < earliest) {
      throw new VersionNotFoundError(`version ${target}`, earliest, latest, { beforeEarliest: true })
    }
    const listed = formatVersions([...listing.commits.keys()].sort(compareVersions))
    const why =
      options.lastCheckpoint === undefined
        ? 'the log has no checkpoint at or before it and no commit 0'
        : `the listing (started at the hinted checkpoint ${options.lastCheckpoint.version}) has no usable checkpoint at or before it`
    throw new InvalidTableError(
      'missing-version',
      `Cannot rebuild version ${target}: ${why} (commits listed: ${listed})`,
      {
        version: target,
        hint: 'Log files are missing; restore them, or time travel to a version the log still covers.',
      },
    )
  }

  const expectedCount = target - start + 1n
  const contiguous =
    BigInt(inRange.length) === expectedCount && inRange.every((v, i) => v === start + BigInt(i))
  if (!contiguous) {
    const shown: Version[] = checkpointVersion === undefined ? [] : [checkpointVersion]
    appendAll(shown, inRange)
    if (shown.at(-1) !== target) {
      // Show where the log resumes after the gap, when it does.
      const next = [...listing.commits.keys()]
        .filter((v) => v > target)
        .reduce<Version | undefined>((a, b) => (a === undefined || b < a ? b : a), undefined)
      if (next !== undefined) shown.push(next)
    }
    let missing = start
    for (const v of inRange) {
      if (v !== missing) break
      missing++
    }
    throw new InvalidTableError(
      'versions-not-contiguous',
      `Cannot rebuild version ${target}: versions are not contiguous: ${formatVersions(shown)} (version ${missing} is missing)`,
      {
        version: missing,
        hint: 'A commit file is missing from _delta_log; restore it, or the table cannot be read.',
      },
    )
  }

  const commits = Object.freeze(
    inRange.map((v) => Object.freeze({ version: v, file: listing.commits.get(v) as FileMetaLike })),
  )
  const best = checkpointVersion === undefined ? undefined : listing.checkpoints.get(checkpointVersion)?.[0]
  const lastFile = listing.commits.get(target)
  const segment: LogSegment = {
    version: target,
    ...(best === undefined || checkpointVersion === undefined
      ? {}
      : { checkpoint: Object.freeze({ version: checkpointVersion, kind: best.kind, files: best.files }) }),
    commits,
    ...(lastFile === undefined ? {} : { lastCommit: Object.freeze({ version: target, file: lastFile }) }),
  }
  return Object.freeze(segment)
}

// === Timestamps ===

/** A commit and the time it was made, in milliseconds since the epoch. */
export interface CommitTimestamp {
  readonly version: Version
  /** The commit file's modification time, or its In-Commit Timestamp when those are enabled. */
  readonly timestamp: number | bigint
}

/**
 * Delta's adjustment of commit timestamps: file modification times can go backwards (clock
 * skew, copies), so each timestamp is raised to at least the previous one plus 1 ms. In-Commit
 * Timestamps already increase strictly and pass through unchanged.
 *
 * @param commits - commits with their raw timestamps, in any order
 * @returns the commits ascending by version with adjusted timestamps (bigint ms)
 */
export function monotonicCommitTimestamps(
  commits: readonly CommitTimestamp[],
): readonly { readonly version: Version; readonly timestamp: bigint }[] {
  const sorted = [...commits].sort((a, b) => compareVersions(a.version, b.version))
  const out: { readonly version: Version; readonly timestamp: bigint }[] = []
  let prev: bigint | undefined
  for (const c of sorted) {
    let ts = BigInt(c.timestamp)
    if (prev !== undefined && ts <= prev) ts = prev + 1n
    out.push(Object.freeze({ version: c.version, timestamp: ts }))
    prev = ts
  }
  return Object.freeze(out)
}

function isoOf(ms: bigint): string {
  const d = new Date(Number(ms))
  return Number.isNaN(d.getTime()) ? `${ms} ms` : d.toISOString()
}

/** Options of {@link versionAtOrBeforeTimestamp}. */
export interface TimestampSearchOptions {
  /**
   * Whether the commits end at the table's latest version (the default). When they do not (the
   * file-time commits before In-Commit Timestamps were enabled), a timestamp after the last of
   * them selects it instead of being refused.
   */
  readonly endsAtLatest?: boolean
  /** The latest version, for the range named in errors when the commits stop before it. */
  readonly latestVersion?: Version
}

/**
 * The commits time travel by timestamp can land on: every listed commit file from the earliest
 * reconstructable version up to `latest` (a version whose commit file was cleaned up, leaving
 * only its checkpoint, has no commit time and is reachable by version only).
 *
 * @param files - the listing of `_delta_log/`
 * @param latest - the latest version (default: the latest the listing shows)
 * @returns the commits, ascending by version; empty when not even the latest version can be
 *   rebuilt
 */
export function timeTravelCommits(
  files: readonly FileMetaLike[],
  latest?: Version,
): readonly SegmentCommit[] {
  const listing = classify(files)
  const last = latest ?? latestOf(listing)
  if (last === undefined) return Object.freeze([])
  const earliest = earliestOf(listing, last)
  if (earliest === undefined) return Object.freeze([])
  const out: SegmentCommit[] = []
  for (const [version, file] of listing.commits) {
    if (version >= earliest && version <= last) out.push(Object.freeze({ version, file }))
  }
  out.sort((a, b) => compareVersions(a.version, b.version))
  return Object.freeze(out)
}

/**
 * The version a timestamp selects for time travel, by Delta's rule: the latest commit whose
 * (monotonically adjusted) timestamp is at or before the requested one.
 *
 * @param commits - every commit time travel may land on (from the earliest reconstructable
 *   one), with file modification times or In-Commit Timestamps, in any order
 * @param timestamp - the requested instant, milliseconds since the epoch
 * @param options - whether the commits end at the latest version
 * @returns the selected version
 * @throws {VersionNotFoundError} when there is no commit, or the timestamp is before the first
 *   commit or after the latest one
 */
export function versionAtOrBeforeTimestamp(
  commits: readonly CommitTimestamp[],
  timestamp: number | bigint,
  options: TimestampSearchOptions = {},
): Version {
  const wanted = BigInt(typeof timestamp === 'number' ? Math.floor(timestamp) : timestamp)
  const adjusted = monotonicCommitTimestamps(commits)
  const first = adjusted[0]
  const last = adjusted.at(-1)
  if (first === undefined || last === undefined) {
    throw new VersionNotFoundError(`timestamp ${isoOf(wanted)}: the table has no commits`)
  }
  const latest = options.latestVersion ?? last.version
  if (wanted < first.timestamp) {
    throw new VersionNotFoundError(
      `timestamp ${isoOf(wanted)}, which is before the earliest commit (version ${first.version} at ${isoOf(first.timestamp)})`,
      first.version,
      latest,
      { beforeEarliest: true },
    )
  }
  if (wanted > last.timestamp && options.endsAtLatest !== false) {
    throw new VersionNotFoundError(
      `timestamp ${isoOf(wanted)}, which is after the latest commit (version ${last.version} at ${isoOf(last.timestamp)})`,
      first.version,
      last.version,
    )
  }
  let lo = 0
  let hi = adjusted.length - 1
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1
    if ((adjusted[mid] as { timestamp: bigint }).timestamp <= wanted) lo = mid
    else hi = mid - 1
  }
  return (adjusted[lo] as { version: Version }).version
}
