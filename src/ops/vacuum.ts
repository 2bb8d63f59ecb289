import { type ConflictFlags, parseConflictFlags } from '../conflict/flags.js'
import { resolveDvLocation } from '../dv/index.js'
import type { Engine } from '../engine/engine.js'
import { InvalidArgumentError, UnsupportedError } from '../errors/index.js'
import type { DeletionVectorDescriptor, Version } from '../protocol/actions.js'
import { remappedReadDeletionVector } from '../protocol/composition-tags.js'
import { LOG_DIR } from '../protocol/log-files.js'
import { canonicalLogPath, tableRootOf } from '../protocol/log-paths.js'
import { decodeAddPath } from '../protocol/partition-values.js'
import { ROW_TRACKING_FEATURE } from '../protocol/row-tracking.js'
import { physicalName } from '../protocol/schema.js'
import { checkWriteSupported } from '../protocol/table-features.js'
import { columnMappingModeProperty, deletedFileRetentionMillis } from '../protocol/table-properties.js'
import { MIN_UNTRACKED_FILE_AGE_MS, vacuumEndInfo, vacuumStartInfo } from '../protocol/vacuum-commits.js'
import { readCommitsFrom } from '../snapshot/log-reader.js'
import type { Snapshot } from '../snapshot/snapshot.js'
import type { CommitRetryPolicy } from '../txn/commit-options.js'
import type { CommitResult } from '../txn/commit-result.js'
import { IN_COMMIT_TIMESTAMP_FEATURE } from '../txn/in-commit-timestamps.js'
import { commitLogOnly } from '../txn/log-only-commit.js'
import { IN_PLACE_ONLY_FEATURES } from '../txn/row-copying.js'

/** Options of a VACUUM. */
export interface VacuumOptions {
  /**
   * Keep files removed less than this many hours ago, and unreferenced files written less than
   * this many hours ago. Default: the table's `delta.deletedFileRetentionDuration` (168 hours).
   */
  readonly retentionHours?: number | undefined
  /** List what would be deleted without deleting anything. */
  readonly dryRun?: boolean | undefined
  /**
   * With `false`, a retention shorter than `delta.deletedFileRetentionDuration` is allowed
   * (Delta's `retentionDurationCheck.enabled`). Concurrent readers and writers of older
   * versions may then fail. Default true.
   */
  readonly enforceRetentionDuration?: boolean | undefined
  /**
   * Write Delta's `VACUUM START` commit before deleting and `VACUUM END` after (Delta's
   * `spark.databricks.delta.vacuum.logging.enabled`). Default true: the history shows every
   * VACUUM, and a writer whose commit overlaps it checks that its files are still there. With
   * `false` only the minimum age of untracked files protects in-flight writes. A dry run writes
   * neither.
   */
  readonly logging?: boolean | undefined
  readonly signal?: AbortSignal | undefined
}

/**
 * What a VACUUM did, in the shape of a `CommitResult` (no data version is written: `committed`
 * is false, `version` is the snapshot VACUUM read; its log-only START and END commits are named
 * by `startVersion` and `endVersion`) plus the files.
 */
export interface VacuumResult extends CommitResult {
  /** Store keys deleted (or, in a dry run, that would be), sorted. */
  readonly files: readonly string[]
  /** Their total size in bytes. */
  readonly bytes: number
  /** Objects the listing saw outside `_delta_log/` and hidden paths. */
  readonly filesScanned: number
  /** Files the retained versions reference (data and deletion vectors). */
  readonly filesReferenced: number
  /** Files removed and written before this time (ms since the epoch) were eligible. */
  readonly deleteBefore: number
  readonly dryRun: boolean
  /** The version of its `VACUUM START` commit, when it wrote one. */
  readonly startVersion?: Version | undefined
  /** The version of its `VACUUM END` commit, when it wrote one. */
  readonly endVersion?: Version | undefined
}

/**
 * VACUUM: deletes the files under the table root that no version inside the retention window
 * needs, as Delta does.
 *
 * Kept: every file of the snapshot, every file whose tombstone is younger than the retention
 * (so time travel inside the window keeps working), the deletion-vector files of both (with
 * the read-time DV a re-pointed compaction tombstone's `remappedCompactionInfo` names), every
 * path under `_delta_log/`, and hidden paths (a path component starting with `_` or `.`,
 * except partition directories named `<partition column>=...` and `_change_data`). An
 * unreferenced file is deleted only when it was also written before the retention cutoff, and
 * an untracked one (named by no add or tombstone of the snapshot) only when it is also older
 * than {@link MIN_UNTRACKED_FILE_AGE_MS} (1 hour), however short the retention: it is most likely
 * the staged file of a commit still in flight. The store's own temporary files of puts a killed
 * process abandoned (`listTemporaryFiles`, local store: `.<name>.<16 hex>.tmp`, in `_delta_log/`
 * too) are untracked files too; no other hidden file is deleted. The writer protocol check runs
 * first.
 *
 * Unless `logging: false` or a dry run, VACUUM then commits Delta's `VACUUM START` (parameters
 * `retentionCheckEnabled`, `defaultRetentionMillis`, `specifiedRetentionMillis`; metrics
 * `numFilesToDelete`, `sizeOfDataToDelete`), keeps every file a commit made since its snapshot
 * names, deletes, and commits `VACUUM END` (`status` COMPLETED with `numDeletedFiles` and
 * `numVacuumedDirectories`, or FAILED). A writer that read a version older than the START checks
 * before its commit that the files it adds still exist (see `checkFilesSurviveVacuum`).
 *
 * @param engine - the table's engine
 * @param snap - the latest snapshot
 * @param options - retention, dry run, logging
 * @param nowMs - the clock
 * @param commit - conflict flags and retries of the START and END commits
 * @returns what was (or would be) deleted
 * @throws {InvalidArgumentError} for a negative or non-numeric retention, or one below the table's
 *   `delta.deletedFileRetentionDuration` without `enforceRetentionDuration: false`
 * @throws {UnsupportedTableFeatureError} when delta-rlc cannot write this table
 * @throws {UnsupportedError} when the log holds an absolute path that cannot be placed relative
 *   to the table root (nothing is deleted then)
 */
export async function vacuumTable(
  engine: Engine,
  snap: Snapshot,
  options: VacuumOptions = {},
  nowMs: number = Date.now(),
  commit: VacuumCommitOptions = { flags: parseConflictFlags({}) },
): Promise<VacuumResult> {
  if (options === null || typeof options !== 'object') {
    throw new InvalidArgumentError('vacuum expects an options object', { argument: 'options' })
  }
  // VACUUM moves no row and its only commits hold a commitInfo alone, so neither In-Commit
  // Timestamps nor row tracking nor clustering stand in its way.
  checkWriteSupported(snap.protocol, snap.metadata, {
    extraWriterFeatures: [IN_COMMIT_TIMESTAMP_FEATURE, ROW_TRACKING_FEATURE, ...IN_PLACE_ONLY_FEATURES],
  })
  const configured = deletedFileRetentionMillis(snap.properties)
  const specified = retentionMillis(options.retentionHours)
  const retention = specified ?? configured
  const retentionCheckEnabled = options.enforceRetentionDuration !== false
  if (retention < configured && retentionCheckEnabled) {
    throw new InvalidArgumentError(
      `A retention of ${retention / 3_600_000} hours is below the table's delta.deletedFileRetentionDuration ` +
        `(${configured / 3_600_000} hours): readers and writers of older versions could lose their files`,
      {
        argument: 'retentionHours',
        hint: 'Pass enforceRetentionDuration: false if no operation runs on older versions, or use a longer retention.',
      },
    )
  }
  const deleteBefore = nowMs - retention
  // An untracked file (named by no add or tombstone) is a write still in flight until it is old.
  const untrackedBefore = Math.min(deleteBefore, nowMs - MIN_UNTRACKED_FILE_AGE_MS)

  const referenced = new Set<string>()
  const tracked = new Set<string>()
  const unresolved: string[] = []
  const note = (into: Set<string>, key: string | null | undefined, path: string): void => {
    if (key === undefined) unresolved.push(path)
    else if (key !== null) into.add(key)
  }
  const keep = (into: Set<string>, path: string, dv: DeletionVectorDescriptor | undefined): void => {
    note(into, storeKeyOf(engine, path), path)
    if (dv === undefined) return
    const loc = resolveDvLocation(dv)
    if (loc.kind === 'relative') note(into, loc.path, dv.pathOrInlineDv)
    else if (loc.kind === 'absolute') note(into, storeKeyOf(engine, loc.uri), loc.uri)
  }
  for (const f of snap.activeFiles()) keep(referenced, f.path, f.deletionVector)
  for (const t of snap.tombstones()) {
    keep(tracked, t.path, t.deletionVector)
    const read = remappedReadDeletionVector(t)
    if (read !== undefined) keep(tracked, t.path, read)
    if (Number(t.deletionTimestamp ?? 0n) <= deleteBefore) continue
    keep(referenced, t.path, t.deletionVector)
    // A re-pointed compaction tombstone names the DV the compaction read; a reconcile needs it.
    if (read !== undefined) keep(referenced, t.path, read)
  }
  if (unresolved.length > 0) throw absolutePathError(unresolved[0] as string)

  const partitionDirs = partitionDirectoryPrefixes(snap)
  let doomed: { key: string; size: number }[] = []
  const dirs = new Set<string>()
  let scanned = 0
  for await (const f of engine.storage.listRecursive('', { signal: options.signal })) {
    if (isHiddenPath(f.key, partitionDirs)) continue
    scanned++
    const slash = f.key.lastIndexOf('/')
    if (slash > 0) dirs.add(f.key.slice(0, slash))
    if (referenced.has(f.key) || f.lastModified >= deleteBefore) continue
    if (!tracked.has(f.key) && f.lastModified >= untrackedBefore) continue
    doomed.push({ key: f.key, size: f.size })
  }
  // A writer killed mid-put leaves the store's temporary file behind, hidden from listings and
  // possibly inside _delta_log/; once older than the retention (and the minimum age) no put can
  // still be using it.
  for await (const t of engine.storage.listTemporaryFiles?.({ signal: options.signal }) ?? []) {
    if (t.lastModified < untrackedBefore) doomed.push({ key: t.key, size: t.size })
  }
  doomed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
  const dryRun = options.dryRun === true
  const logging = !dryRun && options.logging !== false
  let startVersion: Version | undefined
  let endVersion: Version | undefined
  if (!dryRun) {
    if (logging) {
      startVersion = await commitLogOnly(
        engine,
        snap,
        vacuumStartInfo({
          retentionCheckEnabled,
          specifiedRetentionMillis: specified,
          defaultRetentionMillis: configured,
          numFilesToDelete: doomed.length,
          sizeOfDataToDelete: doomed.reduce((n, d) => n + d.size, 0),
        }),
        { ...commit, signal: options.signal },
      )
    }
    // Commits that landed after the snapshot VACUUM read (before its START, or all of them when
    // it writes none) may reference a file it chose: it keeps every file they name. A writer
    // that commits after the START checks its own files (see vacuum-guard.ts).
    const late = new Set<string>()
    for (const c of await readCommitsFrom(engine, snap.version + 1n, options.signal)) {
      for (const a of c.actions) {
        const f = 'add' in a ? a.add : 'remove' in a ? a.remove : 'cdc' in a ? a.cdc : undefined
        if (f !== undefined) keep(late, f.path, 'deletionVector' in f ? f.deletionVector : undefined)
      }
    }
    if (unresolved.length > 0) throw absolutePathError(unresolved[0] as string)
    doomed = doomed.filter((d) => !late.has(d.key))
    let deleted = 0
    try {
      for (const d of doomed) {
        options.signal?.throwIfAborted()
        await engine.storage.delete(d.key, { signal: options.signal })
        deleted++
      }
    } catch (err) {
      if (logging) await endQuietly(engine, snap, commit)
      throw err
    }
    if (logging) {
      const end = vacuumEndInfo({ numDeletedFiles: deleted, numVacuumedDirectories: dirs.size + 1 })
      endVersion = await commitLogOnly(engine, snap, end, commit)
    }
  }
  const bytes = doomed.reduce((n, d) => n + d.size, 0)
  return Object.freeze({
    version: snap.version,
    operation: 'VACUUM',
    attempts: 0,
    reconciliations: Object.freeze([]),
    metrics: Object.freeze<Record<string, number>>(
      dryRun
        ? { numFilesToDelete: doomed.length, sizeOfDataToDelete: bytes }
        : { numDeletedFiles: doomed.length, sizeOfDeletedData: bytes },
    ),
    txnId: '',
    committed: false,
    files: Object.freeze(doomed.map((d) => d.key)),
    bytes,
    filesScanned: scanned,
    filesReferenced: referenced.size,
    deleteBefore,
    dryRun,
    startVersion,
    endVersion,
  })
}

/** How VACUUM's START and END commits are made. */
export interface VacuumCommitOptions {
  readonly flags: ConflictFlags
  readonly retry?: Partial<CommitRetryPolicy> | undefined
}

function absolutePathError(path: string): UnsupportedError {
  return new UnsupportedError(
    `VACUUM cannot tell whether '${path}' (an absolute path in the log) lies inside the table, so it could delete a file still in use; nothing was deleted`,
    {
      hint: 'VACUUM tables with absolute paths on the local file system, or with a tool that resolves them.',
    },
  )
}

/** Records a failed VACUUM; the failure that got here is the one to report. */
async function endQuietly(engine: Engine, snap: Snapshot, commit: VacuumCommitOptions): Promise<void> {
  try {
    await commitLogOnly(engine, snap, vacuumEndInfo(undefined), commit)
  } catch {
    // Best effort: a writer that saw the START without an END stays careful, which is safe.
  }
}

function retentionMillis(hours: unknown): number | undefined {
  if (hours === undefined) return undefined
  if (typeof hours !== 'number' || !Number.isFinite(hours) || hours < 0) {
    throw new InvalidArgumentError(`retentionHours must be a number >= 0, got ${String(hours)}`, {
      argument: 'retentionHours',
    })
  }
  return hours * 3_600_000
}

/**
 * The store key of a path from the log (relative, or an absolute path or URI in any spelling,
 * see `canonicalLogPath`): the key when it lies under the table root, null when it lies
 * elsewhere on the local disk (VACUUM never lists it), undefined when that cannot be told (an
 * absolute URI of a remote store, or an unreadable path).
 */
function storeKeyOf(engine: Engine, logPath: string): string | null | undefined {
  const local = engine.storage.localPath?.('')
  let decoded: ReturnType<typeof decodeAddPath>
  try {
    decoded = decodeAddPath(canonicalLogPath(logPath, tableRootOf(engine.storage)))
  } catch {
    return undefined
  }
  if (decoded.kind === 'relative') return decoded.key
  return local !== undefined && decoded.uri.startsWith('file:') ? null : undefined
}

/** `<column>=` for each partition column, by logical and physical name. */
function partitionDirectoryPrefixes(snap: Snapshot): string[] {
  const mode = columnMappingModeProperty(snap.properties)
  const out = new Set<string>()
  for (const name of snap.partitionColumns) {
    out.add(`${name}=`)
    const field = snap.schema.fields.find((f) => f.name === name)
    if (field !== undefined) out.add(`${physicalName(field, mode)}=`)
  }
  return [...out]
}

/**
 * Delta's rule for what VACUUM never touches: the log, and any path with a component starting
 * with `_` or `.`, except `_change_data` and partition directories (`<column>=value`).
 */
function isHiddenPath(key: string, partitionDirs: readonly string[]): boolean {
  if (key.startsWith(LOG_DIR)) return true
  return key
    .split('/')
    .some(
      (part) =>
        (part.startsWith('_') || part.startsWith('.')) &&
        !part.startsWith('_change_data') &&
        !partitionDirs.some((p) => part.startsWith(p)),
    )
}
