import type { Engine } from '../engine/engine.js'
import {
  FileNotFoundError,
  InvalidArgumentError,
  type InvalidTableError,
  isDeltaError,
  TableNotFoundError,
  VersionNotFoundError,
} from '../errors/index.js'
import { type FileMetaLike, type LogSegment, planLogSegment } from '../log/log-segment.js'
import { LogReplay } from '../log/replay.js'
import type { Version } from '../protocol/actions.js'
import {
  checkpointFileName,
  commitFileName,
  type LastCheckpoint,
  LOG_DIR,
  multiPartCheckpointFileName,
  parseLastCheckpoint,
  parseLogFileName,
} from '../protocol/log-files.js'
import { tableRootOf } from '../protocol/log-paths.js'
import { decodeAddPath } from '../protocol/partition-values.js'
import { checkReadSupported } from '../protocol/table-features.js'
import type { FileMeta } from '../storage/object-store.js'
import { snapshotCommitTimestamp, versionAtTimestamp } from './commit-timestamps.js'
import { listLogFrom, parseLogBytes, readCommitBatches, readListedLogFile } from './log-reader.js'
import { CheckpointActionSink, readCheckpointParquet } from './read-checkpoint.js'
import { Snapshot } from './snapshot.js'

/** Which version to load. */
export interface LoadSnapshotOptions {
  /** An exact version. */
  readonly version?: Version | number | undefined
  /** The latest version committed at or before this instant (Date, ms since epoch, or ISO text). */
  readonly timestamp?: Date | number | string | undefined
  readonly signal?: AbortSignal | undefined
}

/**
 * Builds the snapshot of a table: lists the log, picks the newest usable checkpoint, replays the
 * commits after it, and checks that this library can read the result.
 *
 * A timestamp is resolved against every commit still in the log (see {@link versionAtTimestamp}),
 * which needs the latest version's metadata: the latest snapshot is loaded first, and returned
 * as is when the timestamp selects it.
 *
 * @param engine - storage and Parquet access, rooted at the table
 * @param location - the table location, for messages
 * @param selector - version or timestamp for time travel; latest when empty
 * @returns the snapshot
 * @throws {TableNotFoundError} when the log has neither commit nor checkpoint
 * @throws {VersionNotFoundError} when the requested version or timestamp is not in the log
 * @throws {InvalidTableError} on a malformed or incomplete log
 * @throws {UnsupportedProtocolVersionError | UnsupportedTableFeatureError} when the table needs
 *   a reader capability this library lacks
 */
export async function loadSnapshot(
  engine: Engine,
  location: string,
  selector: LoadSnapshotOptions = {},
): Promise<Snapshot> {
  if (selector.version !== undefined && selector.timestamp !== undefined) {
    throw new InvalidArgumentError('Pass either a version or a timestamp to time travel, not both', {
      argument: 'timestamp',
    })
  }
  const signal = selector.signal
  const targetVersion = selector.version === undefined ? undefined : toVersion(selector.version)
  if (targetVersion !== undefined && targetVersion < 0n) {
    throw new VersionNotFoundError(`version ${targetVersion}`)
  }
  if (selector.timestamp === undefined) {
    const hint = await readLastCheckpointHint(engine, signal)
    // Latest or a recent version: the listing can start at the checkpoint the hint names (and
    // falls back to a full listing if that checkpoint is unusable). An older version needs the
    // whole log.
    const useHint = hint !== undefined && (targetVersion === undefined || targetVersion >= hint.version)
    return buildSnapshot(engine, location, targetVersion, useHint ? hint : undefined, signal)
  }
  const wanted = toMillis(selector.timestamp)
  const listing = await listLog(engine, '', signal)
  if (listing.length === 0) throw new TableNotFoundError(location)
  const latest = await buildSnapshot(engine, location, undefined, undefined, signal, listing)
  const version = await versionAtTimestamp(engine, listing, latest, wanted, signal)
  if (version === latest.version) return latest
  return buildSnapshot(engine, location, version, undefined, signal, listing)
}

/**
 * Lists (unless given a full listing), plans, reads and replays one version.
 *
 * @param hint - the `_last_checkpoint` hint to start the listing at, when usable for the target
 * @param fullListing - a listing of the whole log already made
 */
async function buildSnapshot(
  engine: Engine,
  location: string,
  targetVersion: Version | undefined,
  hint: LastCheckpoint | undefined,
  signal: AbortSignal | undefined,
  fullListing?: FileMeta[],
  partialListing?: FileMeta[],
): Promise<Snapshot> {
  let early: EarlyCheckpointRead | undefined
  try {
    if (fullListing === undefined && partialListing === undefined && hint !== undefined) {
      early = startHintedCheckpointRead(engine, hint, signal)
    }
    return await buildFromListing(
      engine,
      location,
      targetVersion,
      hint,
      signal,
      early,
      fullListing,
      partialListing,
    )
  } finally {
    // An early read the plan did not take must end before the engine may be closed.
    await early?.settled
  }
}

async function buildFromListing(
  engine: Engine,
  location: string,
  targetVersion: Version | undefined,
  hint: LastCheckpoint | undefined,
  signal: AbortSignal | undefined,
  early: EarlyCheckpointRead | undefined,
  fullListing: FileMeta[] | undefined,
  partialListing: FileMeta[] | undefined,
): Promise<Snapshot> {
  let listing: FileMeta[]
  let partial = false
  if (fullListing !== undefined) {
    listing = fullListing
  } else if (partialListing !== undefined && hint !== undefined) {
    listing = partialListing
    partial = true
  } else {
    const fromName = hint === undefined ? undefined : hintListingStart(hint)
    listing = await listLog(engine, fromName ?? '', signal)
    partial = fromName !== undefined
    if (listing.length === 0 && partial) {
      listing = await listLog(engine, '', signal)
      partial = false
    }
  }
  if (listing.length === 0) throw new TableNotFoundError(location)

  let segment: LogSegment
  try {
    segment = planLogSegment(listing, {
      targetVersion,
      lastCheckpoint: partial ? hint : undefined,
      location,
    })
  } catch (err) {
    // The partial listing may miss older commits when the hinted checkpoint is unusable, or see
    // nothing at all when the hint names a version beyond the log.
    if (!partial || !isDeltaError(err, 'DELTA_INVALID_TABLE', 'DELTA_TABLE_NOT_FOUND')) throw err
    listing = await listLog(engine, '', signal)
    partial = false
    segment = planLogSegment(listing, { targetVersion, location })
  }

  let replay: LogReplay
  for (;;) {
    try {
      replay = await readSegment(engine, segment, signal, early)
      early = undefined
      break
    } catch (err) {
      // An unreadable checkpoint is not the end when older state can rebuild the same version:
      // plan again without it, and report the original error only if that fails too.
      const cp = segment.checkpoint
      if (
        !cp ||
        !isDeltaError(err, 'DELTA_INVALID_TABLE') ||
        (err as InvalidTableError).reason !== 'invalid-checkpoint'
      ) {
        throw err
      }
      const bad = new Set(cp.files.map((f) => f.key))
      if (partial) listing = await listLog(engine, '', signal)
      partial = false
      listing = listing.filter((f) => !bad.has(f.key) && !isCheckpointOf(f.key, cp.version))
      try {
        segment = planLogSegment(listing, { targetVersion: segment.version, location })
      } catch {
        throw err
      }
    }
  }
  const state = replay.finish()
  checkReadSupported(state.protocol)
  for (const add of state.activeFiles.values()) if (!isPlainKey(add.path)) decodeAddPath(add.path)
  const timestamp = await snapshotCommitTimestamp(engine, segment, state, signal)
  return new Snapshot({ version: segment.version, state, logSegment: segment, timestamp, location })
}

/**
 * Builds the snapshot at `targetVersion` from a listing of the log that starts at version
 * `start` rather than at the beginning (the listing a snapshot advance made): planned from the
 * newest complete checkpoint the listing holds, and, when the listing cannot rebuild the target,
 * from a listing of the whole log, exactly as a fresh load falls back.
 *
 * @internal used by `advanceSnapshot`
 */
export function snapshotFromListing(
  engine: Engine,
  location: string,
  listing: FileMeta[],
  start: Version,
  targetVersion: Version,
  signal: AbortSignal | undefined,
): Promise<Snapshot> {
  const hint: LastCheckpoint = { version: start }
  return buildSnapshot(engine, location, targetVersion, hint, signal, undefined, listing)
}

/** Where a listing guided by the hint starts, or `undefined` when the hint names no log file. */
function hintListingStart(hint: LastCheckpoint): string | undefined {
  try {
    return commitFileName(hint.version).slice(0, 20)
  } catch (err) {
    // A version no file name can carry: the hint is ignored and the whole log listed.
    if (err instanceof InvalidArgumentError) return undefined
    throw err
  }
}

// === Reading the segment ===

/**
 * A read of the checkpoint the `_last_checkpoint` hint names, started before the log is listed:
 * the data plane reads it on its own threads while the listing runs, and the plan takes it when
 * it picks that checkpoint (it nearly always does).
 */
interface EarlyCheckpointRead {
  readonly version: Version
  /** The Parquet keys read, in part order. */
  readonly keys: readonly string[]
  /** The replay the checkpoint's actions were pushed to, as they were read. */
  readonly replay: Promise<LogReplay>
  /** Resolves once the read has ended, whatever its outcome. */
  readonly settled: Promise<void>
}

/**
 * The most parts of a multi-part checkpoint read on the hint's word, before the listing confirms
 * them. Writers split a checkpoint into parts of millions of actions each (Spark: 5,000,000 by
 * default), so 1,000 parts is a table of billions of files; a hint naming more is not trusted
 * with the allocation, and the listing decides (see docs/troubleshooting.md, "Limits on hostile
 * logs").
 */
export const MAX_EARLY_READ_PARTS = 1000

/** Starts reading the hinted checkpoint, or `undefined` when the hint does not name its files. */
function startHintedCheckpointRead(
  engine: Engine,
  hint: LastCheckpoint,
  signal: AbortSignal | undefined,
): EarlyCheckpointRead | undefined {
  // A V2 checkpoint's file name is not in the hint's version and part count.
  if (hint.v2Checkpoint !== undefined) return undefined
  // The part count is the hint's word only, and nothing is listed yet to check it against: a
  // count no real checkpoint has is left to the listing, which reads the parts it shows.
  if (hint.parts !== undefined && (hint.parts < 1 || hint.parts > MAX_EARLY_READ_PARTS)) return undefined
  let keys: string[]
  try {
    keys =
      hint.parts === undefined
        ? [`${LOG_DIR}${checkpointFileName(hint.version)}`]
        : Array.from(
            { length: hint.parts },
            (_, i) => `${LOG_DIR}${multiPartCheckpointFileName(hint.version, i + 1, hint.parts as number)}`,
          )
  } catch (err) {
    // A version or part count no file name carries: the listing decides alone.
    if (err instanceof InvalidArgumentError) return undefined
    throw err
  }
  if (keys.length === 0) return undefined
  const into = newReplay(engine)
  const replay = readCheckpoint(engine, keys, hint.version, signal, into).then(() => into)
  // Its failure matters only if the plan takes it (it is then awaited); otherwise it is dropped.
  const settled = replay.then(
    () => undefined,
    () => undefined,
  )
  return { version: hint.version, keys, replay, settled }
}

/** Whether the early read is of exactly the checkpoint files the segment plans to read. */
function isEarlyReadOf(
  early: EarlyCheckpointRead,
  version: Version,
  files: readonly FileMetaLike[],
): boolean {
  return (
    early.version === version &&
    files.length === early.keys.length &&
    files.every((f, i) => f.key === early.keys[i])
  )
}

/** Reads the segment into a replay: the checkpoint's actions as they are read, then the commits. */
async function readSegment(
  engine: Engine,
  segment: LogSegment,
  signal: AbortSignal | undefined,
  early?: EarlyCheckpointRead,
): Promise<LogReplay> {
  const cp = segment.checkpoint
  let replay: LogReplay
  if (cp !== undefined && early !== undefined && isEarlyReadOf(early, cp.version, cp.files)) {
    replay = await early.replay
  } else {
    replay = newReplay(engine)
    if (cp !== undefined) {
      await readCheckpoint(
        engine,
        cp.files.map((f) => f.key),
        cp.version,
        signal,
        replay,
      )
    }
  }
  const commits = await readCommitBatches(engine, segment.commits, signal)
  for (const c of commits) replay.push(c)
  return replay
}

function newReplay(engine: Engine): LogReplay {
  return new LogReplay({ tableRoot: tableRootOf(engine.storage) })
}

/**
 * Reads a checkpoint's files and pushes their actions to `replay` as they are decoded: the rows
 * of a checkpoint are never all held at once, so memory follows the distinct actions, not the
 * rows (docs/troubleshooting.md, "Limits on hostile logs").
 */
async function readCheckpoint(
  engine: Engine,
  keys: readonly string[],
  version: Version,
  signal: AbortSignal | undefined,
  replay: LogReplay,
): Promise<void> {
  const sink = new CheckpointActionSink((actions) => replay.push({ version, actions, fromCheckpoint: true }))
  const parquetKeys = keys.filter((k) => k.endsWith('.parquet'))
  for (const key of keys) {
    if (key.endsWith('.json')) {
      const bytes = await readListedLogFile(engine, key, version, signal)
      for (const a of parseLogBytes(bytes, key, version)) sink.push(a)
    }
  }
  await readCheckpointParquet(engine, parquetKeys, version, sink, signal)
  sink.flush()
}

// === Listing and hints ===

function isCheckpointOf(key: string, version: Version): boolean {
  const name = parseLogFileName(key.slice(LOG_DIR.length))
  return name !== undefined && name.version === version && name.type.includes('checkpoint')
}

/** Lists the log from a 20-digit version name prefix (the whole log from `''`). */
async function listLog(
  engine: Engine,
  fromName: string,
  signal: AbortSignal | undefined,
): Promise<FileMeta[]> {
  return listLogFrom(engine, fromName === '' ? undefined : BigInt(fromName), signal)
}

/**
 * The `_last_checkpoint` hint, or `undefined` when it is missing or unreadable.
 *
 * @internal
 */
export async function readLastCheckpointHint(
  engine: Engine,
  signal: AbortSignal | undefined,
): Promise<LastCheckpoint | undefined> {
  let bytes: Uint8Array
  try {
    bytes = await engine.storage.read(`${LOG_DIR}_last_checkpoint`, undefined, { signal })
  } catch (err) {
    // The hint only saves listing time: whatever keeps it from being read, the log is listed.
    signal?.throwIfAborted()
    if (err instanceof FileNotFoundError || isDeltaError(err)) return undefined
    throw err
  }
  try {
    return parseLastCheckpoint(new TextDecoder().decode(bytes))
  } catch {
    // A file too large to decode is no more a hint than a malformed one.
    return undefined
  }
}

// === Small helpers ===

/**
 * Whether `path` is a relative key `decodeAddPath` accepts as it is, found in one scan: not
 * empty, no scheme or leading `/` (absolute), no `%` (encoded), no backslash or NUL, and no
 * empty, `.` or `..` segment. Every other path goes to `decodeAddPath`, which accepts it or
 * throws its own error; on a large table nearly every path is plain.
 */
function isPlainKey(path: string): boolean {
  let segmentStart = 0
  for (let i = 0; i <= path.length; i++) {
    const c = i === path.length ? 47 : path.charCodeAt(i)
    if (c === 47) {
      // '/': the segment before it must hold something other than '.' or '..'.
      const length = i - segmentStart
      if (length === 0) return false
      if (length <= 2 && path.charCodeAt(segmentStart) === 46) {
        if (length === 1 || path.charCodeAt(segmentStart + 1) === 46) return false
      }
      segmentStart = i + 1
    } else if (c === 37 || c === 58 || c === 92 || c === 0) {
      // '%', ':', '\\', NUL
      return false
    }
  }
  return true
}

function toVersion(v: Version | number): Version {
  if (typeof v === 'bigint') return v
  if (!Number.isSafeInteger(v)) throw new VersionNotFoundError(`version ${v}`)
  return BigInt(v)
}

function toMillis(t: Date | number | string): number {
  const ms = t instanceof Date ? t.getTime() : typeof t === 'number' ? t : Date.parse(t)
  if (!Number.isFinite(ms)) throw new VersionNotFoundError(`timestamp ${String(t)} (not a valid timestamp)`)
  return ms
}
