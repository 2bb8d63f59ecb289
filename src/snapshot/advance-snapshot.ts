/**
 * Snapshot advance: the snapshot at a newer version, built from an older one by reading only
 * what was committed after it.
 */
import type { Engine } from '../engine/engine.js'
import { FileNotFoundError, InternalError, isDeltaError } from '../errors/index.js'
import type { LogSegment, SegmentCommit } from '../log/log-segment.js'
import { advanceReplayedState, type ReplayBatch } from '../log/replay.js'
import type { Action, Version } from '../protocol/actions.js'
import {
  checkpointFileName,
  isCheckpointFileName,
  type LastCheckpoint,
  LOG_DIR,
  parseLogFileName,
} from '../protocol/log-files.js'
import { tableRootOf } from '../protocol/log-paths.js'
import { decodeAddPath } from '../protocol/partition-values.js'
import { checkReadSupported } from '../protocol/table-features.js'
import type { FileMeta } from '../storage/object-store.js'
import { appendAll } from '../util/arrays.js'
import { snapshotCommitTimestamp } from './commit-timestamps.js'
import { readLastCheckpointHint, snapshotFromListing } from './load-snapshot.js'
import { commitsOf, listCommits, listLogBlock, listLogFrom, readCommitBatches } from './log-reader.js'
import { Snapshot } from './snapshot.js'

/**
 * A commit this process wrote right after a snapshot's version: its actions, parsed from the
 * bytes that were put, so they are exactly what a read of the file gives.
 */
export interface KnownCommit {
  readonly version: Version
  readonly actions: readonly Action[]
  /** Its file's metadata as a `head` gives it, when the put reported it. */
  readonly file?: FileMeta | undefined
}

/** Options of {@link advanceSnapshot}. */
export interface AdvanceOptions {
  /** Advance to this version at most (the newest when absent). */
  readonly toVersion?: Version | undefined
  /**
   * The commit right after the snapshot, when the caller wrote it: it is not read again, and
   * the probe for it also asks for the one after it.
   */
  readonly known?: KnownCommit | undefined
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
 * (`listingReadsWholeDirectory`) but the store lists by prefix (`listPrefix`), one listing of the
 * block of versions from the oldest that may hold a newer checkpoint to the first not known to
 * exist finds both; a writer advancing across its own commit then makes that one request. Where
 * it cannot (no prefix listing, a range across blocks of 10 versions, commits up to the block's
 * end), new commits are found by probing their names, and a newer checkpoint by its name or the
 * `_last_checkpoint` hint; these probes and the commit reads run together, so an advance by a
 * few commits costs two round trips, and one when nothing is new.
 *
 * @param engine - the table's engine
 * @param snapshot - the snapshot to advance
 * @param options - target version, the caller's own next commit, signal
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
  const known = options.known?.version === from ? options.known : undefined
  // Checkpoints newer than the one the state was built from: a fresh load would start there.
  const knownCheckpoint = snapshot.state.checkpointVersion ?? -1n
  let listing: FileMeta[] | undefined
  let commits: SegmentCommit[]
  let batches: ReplayBatch[] | undefined
  const wholeDirectory = engine.storage.listingReadsWholeDirectory === true
  const block = wholeDirectory
    ? await newCommitsInBlock(engine, from, knownCheckpoint, known, toVersion, signal)
    : undefined
  if (block !== undefined) {
    if (block.commits.length === 0) return snapshot
    listing = block.files
    commits = block.commits
  } else if (wholeDirectory) {
    const low = snapshot.version > knownCheckpoint ? snapshot.version : knownCheckpoint + 1n
    // The caller's own commit is there: the hint is asked for with the probe.
    const early = known === undefined ? undefined : readLastCheckpointHint(engine, signal)
    // Settled even when the probe fails, so that no rejection is left unobserved.
    early?.catch(() => undefined)
    if (known?.file !== undefined) {
      // Its file is known too: only the versions after it are probed.
      const own: SegmentCommit = Object.freeze({ version: known.version, file: known.file })
      commits = [own]
      if (toVersion === undefined || toVersion > known.version)
        appendAll(commits, await listCommits(engine, from + 1n, toVersion, signal))
    } else {
      commits = await listCommits(engine, from, toVersion, signal, known === undefined ? 1 : 2)
    }
    if (commits.length === 0) return snapshot
    const newest = (commits.at(-1) as SegmentCommit).version
    // Only the caller's own commit is new: a checkpoint of it, or of the version before it, can
    // only be another writer's made since, and checkpoint writers point the hint at what they
    // write, so the hint alone is asked. Otherwise classic checkpoints are also found by name,
    // whatever the hint says.
    const onlyOwn = known !== undefined && commits.length === 1
    const [hint, found, read] = await Promise.all([
      early ?? readLastCheckpointHint(engine, signal),
      onlyOwn ? [] : headClassicCheckpoints(engine, versionsDown(newest, low), signal),
      commitBatches(engine, commits, known, signal),
    ])
    batches = read
    listing = classicCheckpointListing(snapshot, commits, found)
    const hinted = hint !== undefined && hint.version > knownCheckpoint && hint.version <= newest
    if (hinted && versionOf(listing?.[0]) < hint.version) {
      const named = isClassicHint(hint) ? await headClassicCheckpoints(engine, [hint.version], signal) : []
      // A multi-part or V2 checkpoint (a hint need not say which) is found by a listing.
      listing =
        named.length > 0
          ? classicCheckpointListing(snapshot, commits, named)
          : await listLogFrom(engine, hint.version, signal)
    }
  } else {
    // From the snapshot's own version: its checkpoint, written just after its commit, is there.
    listing = await listLogFrom(engine, snapshot.version, signal)
    commits = commitsOf(listing, from, toVersion)
  }
  const target = commits.at(-1)?.version ?? snapshot.version
  if (listing !== undefined && hasCheckpointIn(listing, knownCheckpoint + 1n, target)) {
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
  batches ??= await commitBatches(engine, commits, known, signal)
  return replayCommits(engine, snapshot, commits, batches, signal)
}

/**
 * The new commits from one prefix listing of the block of versions that holds both the oldest
 * version a newer checkpoint may have (`knownCheckpoint + 1`: a late checkpoint of a version
 * before the snapshot's counts, as a fresh load would start from it) and the first version not
 * known to exist. The listing names every checkpoint of those versions as it stands, so it
 * finds them at least as surely as the `_last_checkpoint` hint would, in one request instead of
 * a probe and the hint.
 *
 * @returns the block's files and the contiguous commits from `from` in it; `undefined` when the
 *   store cannot list by prefix, the versions span more than one block of 10, or the commits run
 *   to the block's end (more may follow it), and the caller then probes
 */
async function newCommitsInBlock(
  engine: Engine,
  from: Version,
  knownCheckpoint: Version,
  known: KnownCommit | undefined,
  toVersion: Version | undefined,
  signal: AbortSignal | undefined,
): Promise<{ files: FileMeta[]; commits: SegmentCommit[] } | undefined> {
  // The caller's own commit exists: the first unknown version is the one after it.
  const unknown = known === undefined ? from : from + 1n
  const high = toVersion !== undefined && toVersion < unknown ? toVersion : unknown
  const block = await listLogBlock(engine, knownCheckpoint + 1n, high, signal)
  if (block === undefined) return undefined
  const commits = commitsOf(block.files, from, toVersion)
  // A listing that misses the commit the caller just wrote is not to be trusted for the rest.
  if (known !== undefined && commits[0]?.version !== known.version) return undefined
  const newest = commits.at(-1)?.version
  if (newest === block.last && (toVersion === undefined || toVersion > newest)) return undefined
  return { files: block.files, commits }
}

/**
 * The replay batches of `commits`: read, but for the caller's own commit (the first one, when
 * `known` names it), whose content is taken as given.
 */
async function commitBatches(
  engine: Engine,
  commits: readonly SegmentCommit[],
  known: KnownCommit | undefined,
  signal: AbortSignal | undefined,
): Promise<ReplayBatch[]> {
  const own = known !== undefined && commits[0]?.version === known.version ? known : undefined
  const batches = await readCommitBatches(engine, own === undefined ? commits : commits.slice(1), signal)
  if (own !== undefined)
    batches.unshift({ version: own.version, actions: own.actions, fromCheckpoint: false })
  return batches
}

/** Applies `commits` (contiguous, right after `snapshot`, with their `batches`) to its state. */
async function replayCommits(
  engine: Engine,
  snapshot: Snapshot,
  commits: readonly SegmentCommit[],
  batches: readonly ReplayBatch[],
  signal: AbortSignal | undefined,
): Promise<Snapshot> {
  const tableRoot = tableRootOf(engine.storage)
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

/** `from`, `from - 1`, ... down to `low` (none when `from < low`). */
function versionsDown(from: Version, low: Version): Version[] {
  const out: Version[] = []
  for (let v = from; v >= low; v--) out.push(v)
  return out
}

/** Heads the classic checkpoint of each version; the ones that exist. */
async function headClassicCheckpoints(
  engine: Engine,
  versions: readonly Version[],
  signal: AbortSignal | undefined,
): Promise<FileMeta[]> {
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
  const out: FileMeta[] = []
  for (const f of found) if (f !== undefined) out.push(f)
  return out
}

/**
 * The newest of the classic checkpoints `found` that is at or below the newest commit, with the
 * commit files from its version on, as a listing; `undefined` when there is none.
 */
function classicCheckpointListing(
  snapshot: Snapshot,
  commits: readonly SegmentCommit[],
  found: readonly FileMeta[],
): FileMeta[] | undefined {
  const newest = commits.at(-1)?.version ?? snapshot.version
  let best: { file: FileMeta; version: Version } | undefined
  for (const f of found) {
    const version = parseLogFileName(f.key.slice(LOG_DIR.length))?.version
    if (version === undefined || version > newest) continue
    if (best === undefined || version > best.version) best = { file: f, version }
  }
  if (best === undefined) return undefined
  const listing: FileMeta[] = [best.file]
  const own = snapshot.logSegment.lastCommit
  if (own !== undefined && own.version >= best.version) listing.push(own.file)
  for (const c of commits) if (c.version >= best.version) listing.push(c.file)
  return listing
}

/** Whether the hint describes a single-file classic checkpoint (no parts, no V2 file). */
function isClassicHint(hint: LastCheckpoint): boolean {
  return hint.parts === undefined && hint.v2Checkpoint === undefined
}

function versionOf(file: FileMeta | undefined): Version {
  return (file === undefined ? undefined : parseLogFileName(file.key.slice(LOG_DIR.length))?.version) ?? -1n
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
