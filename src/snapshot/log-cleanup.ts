/**
 * Expired log cleanup through an engine: lists `_delta_log/` up to the first commit inside the
 * retention window, times the checkpointed commits the way time travel does, and deletes what
 * `log/log-cleanup.ts` says may go. See that module for the rule and why every version inside the
 * retention window stays readable.
 */
import type { ActionRow, Engine } from '../engine/engine.js'
import { FileNotFoundError } from '../errors/index.js'
import {
  completeCheckpointVersions,
  expiredLogFiles,
  sidecarNamingCheckpoints,
  unreferencedSidecars,
} from '../log/log-cleanup.js'
import { type FileMetaLike, latestVersion, type SegmentCommit } from '../log/log-segment.js'
import type { Version } from '../protocol/actions.js'
import { commitKey, LOG_DIR, parseLogFileName, SIDECAR_DIR } from '../protocol/log-files.js'
import { booleanProperty, logRetentionMillis } from '../protocol/table-properties.js'
import type { FileMeta } from '../storage/object-store.js'
import { historyTimeline, inCommitTimestampStart, readCommitInfo } from './commit-timestamps.js'
import { readLastCheckpointHint } from './load-snapshot.js'
import { parseLogBytes } from './log-reader.js'
import type { Snapshot } from './snapshot.js'

/** The table property that turns automatic cleanup after checkpoints on and off. */
export const ENABLE_EXPIRED_LOG_CLEANUP = 'delta.enableExpiredLogCleanup'

/** How many log files are deleted at once. */
const DELETE_CONCURRENCY = 16

/** Options of {@link cleanUpExpiredLogs}. */
export interface LogCleanupOptions {
  /** Decide and report, delete nothing. */
  readonly dryRun?: boolean | undefined
  /** The clock (ms since the epoch); the cutoff is this minus `delta.logRetentionDuration`. */
  readonly nowMs?: number | undefined
  /** Stops the cleanup between two deletes; what was deleted stays deleted. */
  readonly signal?: AbortSignal | undefined
}

/** A log file cleanup could not delete, or (without `key`) a cleanup that failed as a whole. */
export interface LogCleanupFailure {
  readonly key: string | undefined
  readonly message: string
  readonly cause: unknown
}

/** What an expired log cleanup did. */
export interface LogCleanupResult {
  readonly dryRun: boolean
  /**
   * Files last modified before this instant (ms since the epoch) were eligible; for a cleanup
   * that failed before it knew the retention, the clock.
   */
  readonly cutoff: number
  /**
   * The checkpoint every version inside the window is rebuilt from: only files of older
   * versions were eligible. `undefined` when no checkpoint is older than the cutoff.
   */
  readonly boundary: Version | undefined
  /**
   * Store keys deleted (in a dry run: that would be): log files ascending by version, then the
   * V2 sidecars no remaining checkpoint names.
   */
  readonly files: readonly string[]
  /** Their total size in bytes. */
  readonly bytes: number
  /** Deletes that failed; the files stay, and the next cleanup tries them again. */
  readonly failures: readonly LogCleanupFailure[]
}

/**
 * Whether the table cleans up expired log files after each checkpoint
 * (`delta.enableExpiredLogCleanup`, default true as in Delta).
 *
 * @param snapshot - the table state
 * @returns the flag
 * @throws {InvalidArgumentError} when the property is not a boolean
 */
export function expiredLogCleanupEnabled(snapshot: Snapshot): boolean {
  return booleanProperty(snapshot.properties, ENABLE_EXPIRED_LOG_CLEANUP, true)
}

/**
 * Deletes the `_delta_log/` files no version inside the retention window
 * (`delta.logRetentionDuration`, default 30 days) needs: the files of versions below the newest
 * checkpoint whose commit is older than the cutoff, when they are themselves older than it.
 * The boundary is also never above the version `_last_checkpoint` names, so the hint keeps
 * pointing at a checkpoint that exists. Time travel to any version inside the window keeps
 * working; to an older one it fails with `VersionNotFoundError`. Files are deleted in ascending
 * version order, so a cleanup stopped part way leaves every version from the boundary on. Then
 * the V2 sidecars (`_delta_log/_sidecars/`) that no remaining checkpoint names and that are
 * older than the cutoff are deleted too.
 *
 * @param engine - the table's engine
 * @param snapshot - the table state whose properties decide the retention; checkpoints above
 *   its version are not considered
 * @param options - dry run, clock, stop signal
 * @returns what was (or would be) deleted, and the deletes that failed
 * @throws {InvalidArgumentError} when `delta.logRetentionDuration` is not an interval
 * @throws {StorageError} when the log cannot be listed or read
 */
export async function cleanUpExpiredLogs(
  engine: Engine,
  snapshot: Snapshot,
  options: LogCleanupOptions = {},
): Promise<LogCleanupResult> {
  const { signal } = options
  const dryRun = options.dryRun === true
  const cutoff = (options.nowMs ?? Date.now()) - logRetentionMillis(snapshot.properties)
  const empty0 = { dryRun, cutoff, boundary: undefined, files: [], bytes: 0, failures: [] }
  if (await firstCommitInsideWindow(engine, cutoff, signal)) return Object.freeze(empty0)
  const listing = await listOlderThan(engine, cutoff, signal)
  const hint = await readLastCheckpointHint(engine, signal)
  const boundary = await cleanupBoundary(engine, snapshot, listing, hint?.version, cutoff, signal)
  const expired = boundary === undefined ? [] : expiredLogFiles(listing, boundary, cutoff).files
  if (dryRun) {
    const gone = new Set(expired.map((f) => f.key))
    const sidecars = await staleSidecars(engine, gone, cutoff, signal)
    const files = [...expired, ...sidecars]
    let bytes = 0
    for (const f of files) bytes += f.size
    return Object.freeze({
      dryRun,
      cutoff,
      boundary,
      files: Object.freeze(files.map((f) => f.key)),
      bytes,
      failures: [],
    })
  }
  const logs = await deleteFiles(engine, expired, signal)
  // Sidecars go after the checkpoints: one a failed delete left in place keeps what it names.
  const sidecars = await staleSidecars(engine, new Set(logs.deleted.map((f) => f.key)), cutoff, signal)
  const named = await deleteFiles(engine, sidecars, signal)
  const files: string[] = []
  let bytes = 0
  for (const f of [...logs.deleted, ...named.deleted]) {
    files.push(f.key)
    bytes += f.size
  }
  const failures = [...logs.failures, ...named.failures]
  return Object.freeze({
    dryRun,
    cutoff,
    boundary,
    files: Object.freeze(files),
    bytes,
    failures: Object.freeze(failures),
  })
}

/** Deletes files with a few requests in flight; what fails is reported, not thrown. */
async function deleteFiles(
  engine: Engine,
  targets: readonly FileMetaLike[],
  signal: AbortSignal | undefined,
): Promise<{ deleted: FileMetaLike[]; failures: LogCleanupFailure[] }> {
  const failures: LogCleanupFailure[] = []
  const done = new Array<boolean>(targets.length).fill(false)
  let next = 0
  const stopped = (): boolean => signal?.aborted === true
  // Every worker ends before the call returns or throws: no delete is left running after it.
  const worker = async (): Promise<void> => {
    while (next < targets.length && !stopped()) {
      const i = next++
      const f = targets[i] as FileMetaLike
      try {
        await engine.storage.delete(f.key, { signal })
        done[i] = true
      } catch (err) {
        if (stopped()) return
        failures.push({ key: f.key, message: err instanceof Error ? err.message : String(err), cause: err })
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(DELETE_CONCURRENCY, targets.length) }, worker))
  signal?.throwIfAborted()
  return { deleted: targets.filter((_, i) => done[i]), failures }
}

/**
 * The V2 sidecars no remaining checkpoint names, older than the cutoff (Delta's metadata
 * cleanup deletes them with the checkpoints that named them). Costs one listing of
 * `_delta_log/_sidecars/`; only when an old sidecar is there does it list the log and read the
 * top-level files of the checkpoints that remain (small: a checkpoint with sidecars keeps its
 * file actions in them). A checkpoint that cannot be read keeps every sidecar.
 */
async function staleSidecars(
  engine: Engine,
  gone: ReadonlySet<string>,
  cutoff: number,
  signal: AbortSignal | undefined,
  attempts = 3,
): Promise<FileMetaLike[]> {
  const old: FileMeta[] = []
  for await (const f of engine.storage.listFrom(SIDECAR_DIR, { signal })) {
    if (f.key.startsWith(SIDECAR_DIR) && f.lastModified < cutoff) old.push(f)
  }
  if (old.length === 0) return []
  const log: FileMeta[] = []
  for await (const f of engine.storage.listFrom(LOG_DIR, { signal })) log.push(f)
  const referenced = new Set<string>()
  const note = (row: unknown): void => {
    const path = (row as { sidecar?: { path?: unknown } } | null)?.sidecar?.path
    if (typeof path === 'string') referenced.add(`${SIDECAR_DIR}${path}`)
  }
  try {
    for (const cp of sidecarNamingCheckpoints(log, gone)) {
      if (cp.format === 'json') {
        const bytes = await engine.storage.read(cp.file.key, undefined, { signal })
        for (const a of parseLogBytes(bytes, cp.file.key, cp.version)) note(a)
        continue
      }
      const onRows = (rows: readonly ActionRow[]): void => {
        for (const r of rows) {
          if (typeof r !== 'string') note(r)
          else if (r.includes('"sidecar"')) note(JSON.parse(r))
        }
      }
      const parquet = engine.parquet
      if (parquet.readActionRowBatches !== undefined)
        await parquet.readActionRowBatches([cp.file.key], onRows, { signal })
      else onRows(await parquet.readActionRows([cp.file.key], { signal }))
    }
  } catch (err) {
    // A checkpoint deleted meanwhile names nothing any more; any other failure keeps everything.
    if (err instanceof FileNotFoundError && attempts > 1)
      return staleSidecars(engine, gone, cutoff, signal, attempts - 1)
    signal?.throwIfAborted()
    return []
  }
  return unreferencedSidecars(old, referenced, cutoff)
}

/**
 * Whether commit 0 is still there and was written at or after `cutoff`. Then nothing has expired
 * (every later commit's time is at least its time) and a cleanup needs no listing: one request
 * decides it on a log younger than the retention, the common case of a commit that checkpoints.
 */
async function firstCommitInsideWindow(
  engine: Engine,
  cutoff: number,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  try {
    return (await engine.storage.head(commitKey(0n), { signal })).lastModified >= cutoff
  } catch (err) {
    if (err instanceof FileNotFoundError) return false
    throw err
  }
}

/**
 * The log files listed before the first commit file modified at or after `cutoff`. Nothing from
 * there on can matter: a commit's time is at least its file's modification time (times are made
 * increasing, and an In-Commit Timestamp later than its file would only move the boundary down),
 * so no checkpoint from that version on is older than the cutoff, and every file a cleanup may
 * delete is of an older version, which sorts before it. The listing stops there instead of
 * reading the whole log: once a log has been cleaned, a cleanup reads only the files that
 * expired since, plus about one checkpoint interval.
 */
async function listOlderThan(
  engine: Engine,
  cutoff: number,
  signal: AbortSignal | undefined,
): Promise<FileMeta[]> {
  const out: FileMeta[] = []
  for await (const f of engine.storage.listFrom(LOG_DIR, { signal })) {
    if (f.lastModified >= cutoff && parseLogFileName(f.key.slice(LOG_DIR.length))?.type === 'commit') break
    out.push(f)
  }
  return out
}

/**
 * The newest complete checkpoint at or below both the snapshot's version and the hint's whose
 * commit time (as time travel and history give it) is before `cutoff`. Commit times increase
 * with the version, so a binary search reads only a few In-Commit Timestamps.
 */
async function cleanupBoundary(
  engine: Engine,
  snapshot: Snapshot,
  listing: Parameters<typeof historyTimeline>[0],
  hintVersion: Version | undefined,
  cutoff: number,
  signal: AbortSignal | undefined,
): Promise<Version | undefined> {
  // The listing may end before the snapshot's version: the timeline runs to the newest version
  // it shows.
  const listed = latestVersion(listing)
  if (listed === undefined) return undefined
  let upTo = snapshot.version
  if (listed < upTo) upTo = listed
  const timeline = historyTimeline(listing, {
    version: upTo,
    protocol: snapshot.protocol,
    metadata: snapshot.metadata,
  })
  const commits = new Map<Version, SegmentCommit>()
  for (const c of timeline.commits) commits.set(c.version, c)
  const limit = hintVersion !== undefined && hintVersion < snapshot.version ? hintVersion : snapshot.version
  // Only a checkpoint whose commit is still listed has a known commit time.
  const candidates: SegmentCommit[] = []
  for (const v of completeCheckpointVersions(listing)) {
    const commit = commits.get(v)
    if (v <= limit && commit !== undefined) candidates.push(commit)
  }
  const ictFrom = inCommitTimestampStart(snapshot.protocol, snapshot.metadata)?.version
  const timeOf = async (c: SegmentCommit): Promise<number> => {
    const info =
      ictFrom !== undefined && c.version >= ictFrom ? await readCommitInfo(engine, c, signal) : undefined
    return timeline.timestampOf(c, info)
  }
  let lo = -1
  let hi = candidates.length - 1
  // Candidates up to lo are before the cutoff, those after hi are not.
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1
    if ((await timeOf(candidates[mid] as SegmentCommit)) < cutoff) lo = mid
    else hi = mid - 1
  }
  return lo < 0 ? undefined : (candidates[lo] as SegmentCommit).version
}
