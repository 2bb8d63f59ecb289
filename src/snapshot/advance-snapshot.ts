/**
 * Snapshot advance: the snapshot at a newer version, built from an older one by reading only
 * what was committed after it.
 */
import type { Engine } from '../engine/engine.js'
import { FileNotFoundError, InternalError, isDeltaError } from '../errors/index.js'
import type { LogSegment, SegmentCommit } from '../log/log-segment.js'
import { advanceReplayedState } from '../log/replay.js'
import type { Version } from '../protocol/actions.js'
import { checkpointFileName, isCheckpointFileName, LOG_DIR, parseLogFileName } from '../protocol/log-files.js'
import { decodeAddPath } from '../protocol/partition-values.js'
import { checkReadSupported } from '../protocol/table-features.js'
import type { FileMeta } from '../storage/object-store.js'
import { appendAll } from '../util/arrays.js'
import { snapshotCommitTimestamp } from './commit-timestamps.js'
import { readLastCheckpointHint, snapshotFromListing } from './load-snapshot.js'
import { commitsOf, listCommits, listLogFrom, readCommitBatches } from './log-reader.js'
import { Snapshot } from './snapshot.js'

/** Options of {@link advanceSnapshot}. */
export interface AdvanceOptions {
  /** Advance to this version at most (the newest when absent). */
  readonly toVersion?: Version | undefined
  readonly signal?: AbortSignal | undefined
}

/**
 * The snapshot at the newest version (or at `toVersion`), from `snapshot`: reads the commits after
 * its version and applies them to its state, sharing the file maps instead of copying them, so
 * the cost is in the new commits' actions, not in the size of the table. The result equals a
 * fresh load of the same version field for field (the same state, log segment and timestamp).
 *
 * A complete checkpoint newer than the one `snapshot` was built from (up to the target, the
 * snapshot's own version included) is loaded instead of replaying across it, because a fresh
 * load starts from it and its content is not the replay of the commits before it: a
 * checkpoint writer drops expired tombstones by its own clock and marks every file
 * `dataChange: false`. Checkpoints come every `delta.checkpointInterval` commits, so this is one
 * checkpoint read per interval. Where listing costs the whole directory
 * (`listingReadsWholeDirectory`), new commits are found by probing their names, and a newer
 * checkpoint by the `_last_checkpoint` hint.
 *
 * @param engine - the table's engine
 * @param snapshot - the snapshot to advance
 * @param options - target version, signal
 * @returns the newer snapshot, or `snapshot` itself when nothing newer was committed
 * @throws like `loadSnapshot` when the newer log cannot be read
 */
export async function advanceSnapshot(
  engine: Engine,
  snapshot: Snapshot,
  options: AdvanceOptions = {},
): Promise<Snapshot> {
  const { signal, toVersion } = options
  const from = snapshot.version + 1n
  if (toVersion !== undefined && toVersion < from) return snapshot
  // Checkpoints newer than the one the state was built from: a fresh load would start there.
  const known = snapshot.state.checkpointVersion ?? -1n
  let listing: FileMeta[] | undefined
  let commits: SegmentCommit[]
  if (engine.storage.listingReadsWholeDirectory === true) {
    commits = await listCommits(engine, from, toVersion, signal)
    if (commits.length === 0) return snapshot
    const newest = (commits.at(-1) as SegmentCommit).version
    const hint = await readLastCheckpointHint(engine, signal)
    if (hint !== undefined && hint.version > known && hint.version <= newest) {
      listing = await listLogFrom(engine, hint.version, signal)
    } else {
      // The hint names no checkpoint in range (none, or one past the target): a classic one
      // is found by its name; other kinds are only found through the hint.
      listing = await probeClassicCheckpoint(engine, snapshot, commits, known, signal)
    }
  } else {
    // From the snapshot's own version: its checkpoint, written just after its commit, is there.
    listing = await listLogFrom(engine, snapshot.version, signal)
    commits = commitsOf(listing, from, toVersion)
  }
  const target = commits.at(-1)?.version ?? snapshot.version
  if (listing !== undefined && hasCheckpointIn(listing, known + 1n, target)) {
    const start = firstVersionOf(listing) ?? snapshot.version
    try {
      return await snapshotFromListing(engine, snapshot.location, listing, start, target, signal)
    } catch (err) {
      // Planning from the newer checkpoint failed (an incomplete or unreadable one, a log
      // cleaned up meanwhile): replaying the commits still gives the state at `target`.
      if (!isDeltaError(err, 'DELTA_INVALID_TABLE')) throw err
    }
  }
  if (commits.length === 0) return snapshot
  return replayCommits(engine, snapshot, commits, signal)
}

/** Applies `commits` (contiguous, right after `snapshot`) to its state. */
async function replayCommits(
  engine: Engine,
  snapshot: Snapshot,
  commits: readonly SegmentCommit[],
  signal: AbortSignal | undefined,
): Promise<Snapshot> {
  const batches = await readCommitBatches(engine, commits, signal)
  const tableRoot = engine.storage.localPath?.('') ?? engine.storage.root
  const state = advanceReplayedState(snapshot.state, batches, { tableRoot })
  if (state.protocol !== snapshot.protocol) checkReadSupported(state.protocol)
  // The same check a fresh load makes of every file, here of the new ones only.
  for (const b of batches) for (const a of b.actions) if ('add' in a) decodeAddPath(a.add.path)
  const old = snapshot.logSegment
  const segmentCommits: SegmentCommit[] = []
  appendAll(segmentCommits, old.commits)
  appendAll(segmentCommits, commits)
  const last = commits.at(-1)
  if (last === undefined) throw new InternalError('a snapshot advance replayed no commit')
  const segment: LogSegment = Object.freeze({
    version: last.version,
    ...(old.checkpoint === undefined ? {} : { checkpoint: old.checkpoint }),
    commits: Object.freeze(segmentCommits),
    lastCommit: last,
  })
  const timestamp = await snapshotCommitTimestamp(engine, segment, state, signal)
  return new Snapshot({
    version: last.version,
    state,
    logSegment: segment,
    timestamp,
    location: snapshot.location,
  })
}

/**
 * The newest classic checkpoint from the snapshot's version on (and newer than `known`), with the
 * commit files after it, as a listing; `undefined` when there is none.
 */
async function probeClassicCheckpoint(
  engine: Engine,
  snapshot: Snapshot,
  commits: readonly SegmentCommit[],
  known: Version,
  signal: AbortSignal | undefined,
): Promise<FileMeta[] | undefined> {
  const low = snapshot.version > known ? snapshot.version : known + 1n
  const newest = commits.at(-1)?.version ?? snapshot.version
  const versions: Version[] = []
  for (let v = newest; v >= low; v--) versions.push(v)
  const found = await Promise.all(
    versions.map(async (v) => {
      try {
        return await engine.storage.head(`${LOG_DIR}${checkpointFileName(v)}`, { signal })
      } catch (err) {
        if (err instanceof FileNotFoundError) return undefined
        throw err
      }
    }),
  )
  const index = found.findIndex((f) => f !== undefined)
  if (index < 0) return undefined
  const version = versions[index] as Version
  const listing: FileMeta[] = [found[index] as FileMeta]
  const own = snapshot.logSegment.lastCommit
  if (own !== undefined && own.version >= version) listing.push(own.file)
  for (const c of commits) if (c.version >= version) listing.push(c.file)
  return listing
}

function hasCheckpointIn(listing: readonly FileMeta[], from: Version, to: Version): boolean {
  for (const f of listing) {
    const name = parseLogFileName(f.key.slice(LOG_DIR.length))
    if (name === undefined || !isCheckpointFileName(name)) continue
    if (name.version >= from && name.version <= to) return true
  }
  return false
}

function firstVersionOf(listing: readonly FileMeta[]): Version | undefined {
  let first: Version | undefined
  for (const f of listing) {
    const name = parseLogFileName(f.key.slice(LOG_DIR.length))
    if (name?.version !== undefined && (first === undefined || name.version < first)) first = name.version
  }
  return first
}
