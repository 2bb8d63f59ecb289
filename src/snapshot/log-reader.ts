/**
 * The one reader of `_delta_log/`: every part of the library that lists the log or reads a commit
 * goes through here (snapshot loading and advancing, the commit loop, history, table creation, the
 * race verifiers).
 *
 * A listing starts at a key: S3 lists from it (`StartAfter`), so a caller that knows a recent
 * version pays for the newer files, not for the whole log. Where a listing reads the whole
 * directory whatever the start (local disk, Azure: see `ObjectStore.listingReadsWholeDirectory`),
 * new commits are found by probing the next version names one by one instead, or, where the
 * service selects names by prefix (Azure: `ObjectStore.listPrefix`), by listing the block of
 * versions whose names share a prefix; the whole log is listed only to plan a fresh load.
 */
import type { Engine } from '../engine/engine.js'
import { FileNotFoundError, InvalidArgumentError, InvalidTableError } from '../errors/index.js'
import type { SegmentCommit } from '../log/log-segment.js'
import type { ReplayBatch } from '../log/replay.js'
import type { Action, Version } from '../protocol/actions.js'
import {
  commitFileName,
  commitKey,
  LOG_DIR,
  parseCommitBytes,
  parseLogFileName,
} from '../protocol/log-files.js'
import type { FileMeta } from '../storage/object-store.js'
import { mapLimit } from '../util/map-limit.js'

/** How many next-version names are probed at once on local disk after the first hit. */
const PROBE_BATCH = 8

/**
 * Whether new commits are found by probing names rather than by listing: on a local directory a
 * listing reads every name in it, while a probe is one `stat`.
 */
function probes(engine: Engine): boolean {
  return engine.storage.listingReadsWholeDirectory === true
}

/**
 * Lists `_delta_log/` from version `from` on: commits, checkpoints, compaction and checksum files
 * whose version is at least `from`, ascending by name. With `from` undefined, the whole log.
 *
 * @param engine - the table's engine
 * @param from - the first version of interest
 * @param signal - cancels the listing
 * @returns the files
 */
export async function listLogFrom(
  engine: Engine,
  from: Version | undefined,
  signal?: AbortSignal,
): Promise<FileMeta[]> {
  const start = from === undefined ? undefined : versionPrefix(from)
  const out: FileMeta[] = []
  for await (const f of engine.storage.listFrom(`${LOG_DIR}${start ?? ''}`, { signal })) out.push(f)
  return out
}

/**
 * The most name digits a block listing may leave open: a block spans at most 10 versions. The
 * listing's cost grows with the names it returns (on Azure the client parses about 0.1 ms of XML
 * per name, on top of the request), so a block of 100 versions, listed with everything it holds
 * so far, costs more than the probes it would save.
 */
const BLOCK_OPEN_DIGITS = 1

/** The log files of a block of versions, as {@link listLogBlock} lists them. */
export interface LogBlock {
  /** Every log file whose version is in the block, ascending by name. */
  readonly files: FileMeta[]
  /** The block's last version: files of later versions are not in it. */
  readonly last: Version
}

/**
 * Lists, in one prefix listing, every log file (commits, checkpoints of every kind, compaction and
 * checksum files) of the block of versions whose 20-digit names start with the longest prefix
 * the names of `low` and `high` share: a block of 1 or 10 versions holding both. Where the
 * service selects names by prefix, this costs one request however long the log is.
 *
 * @param engine - the table's engine
 * @param low - the first version of interest
 * @param high - the last version of interest (at least `low`)
 * @param signal - cancels the listing
 * @returns the block, or `undefined` when the store cannot list by prefix or the two versions are
 *   in no common block of at most 10 versions
 */
export async function listLogBlock(
  engine: Engine,
  low: Version,
  high: Version,
  signal?: AbortSignal,
): Promise<LogBlock | undefined> {
  const store = engine.storage
  if (store.listPrefix === undefined || high < low) return undefined
  const a = versionPrefix(low)
  const b = versionPrefix(high)
  if (a === undefined || b === undefined) return undefined
  let shared = 0
  while (shared < a.length && a[shared] === b[shared]) shared++
  if (a.length - shared > BLOCK_OPEN_DIGITS) return undefined
  const prefix = a.slice(0, shared)
  const files: FileMeta[] = []
  for await (const f of store.listPrefix(`${LOG_DIR}${prefix}`, { signal })) files.push(f)
  return { files, last: BigInt(prefix.padEnd(a.length, '9')) }
}

/**
 * The 20-digit name prefix of a version, or `undefined` for a version no log file name can carry
 * (the listing then covers the whole log).
 */
function versionPrefix(version: Version): string | undefined {
  if (version < 0n) return undefined
  try {
    return commitFileName(version).slice(0, 20)
  } catch (err) {
    if (err instanceof InvalidArgumentError) return undefined
    throw err
  }
}

/**
 * The commit files of versions `from` through `to` (through the newest when `to` is absent),
 * ascending and contiguous: the result stops before the first version that has no commit file.
 *
 * @param engine - the table's engine
 * @param from - the first version
 * @param to - the last version wanted, inclusive
 * @param signal - cancels the listing
 * @param firstProbe - where names are probed, how many the first round asks for (default 1: most
 *   callers are at most one commit behind; 2 when the caller knows `from` exists)
 * @returns the commits found
 */
export async function listCommits(
  engine: Engine,
  from: Version,
  to?: Version,
  signal?: AbortSignal,
  firstProbe = 1,
): Promise<SegmentCommit[]> {
  if (to !== undefined && to < from) return []
  if (probes(engine)) return probeCommits(engine, from, to, signal, firstProbe)
  return commitsOf(await listLogFrom(engine, from, signal), from, to)
}

/**
 * The contiguous commits `from`..`to` in a listing (any order).
 *
 * @param files - a listing of `_delta_log/`
 * @param from - the first version
 * @param to - the last version wanted, inclusive; unbounded when absent
 * @returns the commits, ascending, stopping before the first missing version
 */
export function commitsOf(files: readonly FileMeta[], from: Version, to?: Version): SegmentCommit[] {
  const byVersion = new Map<Version, FileMeta>()
  for (const f of files) {
    const name = parseLogFileName(f.key.slice(LOG_DIR.length))
    if (name?.type === 'commit' && name.version >= from && (to === undefined || name.version <= to))
      byVersion.set(name.version, f)
  }
  const out: SegmentCommit[] = []
  for (let v = from; to === undefined || v <= to; v++) {
    const file = byVersion.get(v)
    if (file === undefined) break
    out.push(Object.freeze({ version: v, file }))
  }
  return out
}

async function probeCommits(
  engine: Engine,
  from: Version,
  to: Version | undefined,
  signal: AbortSignal | undefined,
  firstProbe: number,
): Promise<SegmentCommit[]> {
  const out: SegmentCommit[] = []
  let batch = firstProbe
  for (let v = from; ; ) {
    const versions: Version[] = []
    for (let i = 0; i < batch && (to === undefined || v <= to); i++, v++) versions.push(v)
    if (versions.length === 0) return out
    const found = await Promise.all(versions.map((version) => headCommit(engine, version, signal)))
    for (const c of found) {
      if (c === undefined) return out
      out.push(c)
    }
    batch = PROBE_BATCH
  }
}

async function headCommit(
  engine: Engine,
  version: Version,
  signal: AbortSignal | undefined,
): Promise<SegmentCommit | undefined> {
  try {
    const file = await engine.storage.head(commitKey(version), { signal })
    return Object.freeze({ version, file })
  } catch (err) {
    if (err instanceof FileNotFoundError) return undefined
    throw err
  }
}

/**
 * The newest commit version at or after `known`, which the caller knows to exist (or `known - 1`
 * when even `known` has no commit file).
 *
 * @param engine - the table's engine
 * @param known - a version known (or expected) to be committed
 * @param signal - cancels the listing
 * @returns the newest version of the contiguous run of commits from `known`
 */
export async function latestVersion(engine: Engine, known: Version, signal?: AbortSignal): Promise<Version> {
  const commits = await listCommits(engine, known, undefined, signal)
  return commits.at(-1)?.version ?? known - 1n
}

/**
 * The actions of one commit, or `undefined` when its file does not exist.
 *
 * @param engine - the table's engine
 * @param version - the commit version
 * @param signal - cancels the read
 * @returns the parsed actions
 * @throws {InvalidTableError} when the file is not a valid commit
 */
export async function readCommit(
  engine: Engine,
  version: Version,
  signal?: AbortSignal,
): Promise<Action[] | undefined> {
  const key = commitKey(version)
  let bytes: Uint8Array
  try {
    bytes = await engine.storage.read(key, undefined, { signal })
  } catch (err) {
    if (err instanceof FileNotFoundError) return undefined
    throw err
  }
  return parseCommitFile(bytes, key, version)
}

/** How many versions a read of the commits after a lost race asks for at once. */
const READ_AHEAD = 8

/**
 * The commits from `from` on, read and parsed, up to the first version that has none: what a
 * writer that lost the race for `from` must check. Versions are read several at once, so a few
 * winners cost one round trip and no listing.
 *
 * @param engine - the table's engine
 * @param from - the first version (usually known to exist)
 * @param signal - cancels the reads
 * @returns the commits, ascending and contiguous
 * @throws {InvalidTableError} when a file is not a valid commit
 */
export async function readCommitsFrom(
  engine: Engine,
  from: Version,
  signal?: AbortSignal,
): Promise<Array<{ readonly version: Version; readonly actions: Action[] }>> {
  const out: Array<{ readonly version: Version; readonly actions: Action[] }> = []
  for (let v = from; ; ) {
    const versions: Version[] = []
    for (let i = 0; i < READ_AHEAD; i++, v++) versions.push(v)
    const read = await Promise.all(versions.map((version) => readCommit(engine, version, signal)))
    for (let i = 0; i < read.length; i++) {
      const actions = read[i]
      if (actions === undefined) return out
      out.push({ version: versions[i] as Version, actions })
    }
  }
}

/**
 * Parses the bytes of a log file holding commit-style JSON lines (a commit, a JSON checkpoint
 * part), for callers that read the file themselves.
 *
 * @param bytes - the file content
 * @param key - its key, for messages
 * @param version - its version, for messages
 * @returns the actions
 */
export function parseLogBytes(bytes: Uint8Array, key: string, version: Version): Action[] {
  return parseCommitBytes(bytes, { path: key, version })
}

/**
 * Reads a log file a listing just named. Gone by now means log cleanup raced with the read,
 * which is reported as a missing version rather than a missing file.
 *
 * @throws {InvalidTableError} `missing-version` when the file disappeared
 */
export async function readListedLogFile(
  engine: Engine,
  key: string,
  version: Version,
  signal: AbortSignal | undefined,
): Promise<Uint8Array> {
  try {
    return await engine.storage.read(key, undefined, { signal })
  } catch (err) {
    if (err instanceof FileNotFoundError) {
      // Listed a moment ago, gone now: log cleanup raced with this read.
      throw new InvalidTableError(
        'missing-version',
        `Log file ${key} of version ${version} disappeared while reading`,
        {
          version,
          path: key,
          cause: err,
          hint: 'Log cleanup removed it concurrently; retry, or time travel to a newer version.',
        },
      )
    }
    throw err
  }
}

/** How many commit files are fetched at once. */
const COMMIT_READ_CONCURRENCY = 16

/**
 * Reads and parses listed commits, a few at a time, as replay batches in the given order.
 *
 * @param engine - the table's engine
 * @param commits - the commits, as a listing or a log segment names them
 * @param signal - aborts the reads
 * @returns one batch per commit
 * @throws {InvalidTableError} when a commit is malformed or disappeared while reading
 */
export function readCommitBatches(
  engine: Engine,
  commits: readonly SegmentCommit[],
  signal: AbortSignal | undefined,
): Promise<ReplayBatch[]> {
  return mapLimit(commits, COMMIT_READ_CONCURRENCY, async (c) => {
    const bytes = await readListedLogFile(engine, c.file.key, c.version, signal)
    return {
      version: c.version,
      actions: parseCommitFile(bytes, c.file.key, c.version),
      fromCheckpoint: false,
    }
  })
}

/**
 * Parses a commit file. Every writer puts at least one action (a commitInfo) in a commit, so a
 * file with none (zero bytes, or only blank lines: a truncated write) is a damaged log, never an
 * empty version.
 *
 * @throws {InvalidTableError} `malformed-commit` naming the file, when it holds no action or a
 *   line that is not JSON
 */
function parseCommitFile(bytes: Uint8Array, key: string, version: Version): Action[] {
  const actions = parseCommitBytes(bytes, { path: key, version })
  if (actions.length > 0) return actions
  throw new InvalidTableError(
    'malformed-commit',
    `Commit file ${key} of version ${version} holds no action (${bytes.length} bytes): it is empty or truncated`,
    {
      path: key,
      version,
      hint: 'Restore the file from a backup; fsck reports the same file until it is repaired.',
    },
  )
}
