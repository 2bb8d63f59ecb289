import { resolveDvLocation } from '../dv/index.js'
import type { Engine } from '../engine/engine.js'
import { InvalidArgumentError, UnsupportedError } from '../errors/index.js'
import type { DeletionVectorDescriptor } from '../protocol/actions.js'
import { remappedReadDeletionVector } from '../protocol/composition-tags.js'
import { LOG_DIR } from '../protocol/log-files.js'
import { canonicalLogPath, tableRootOf } from '../protocol/log-paths.js'
import { decodeAddPath } from '../protocol/partition-values.js'
import { ROW_TRACKING_FEATURE } from '../protocol/row-tracking.js'
import { physicalName } from '../protocol/schema.js'
import { checkWriteSupported } from '../protocol/table-features.js'
import { columnMappingModeProperty, deletedFileRetentionMillis } from '../protocol/table-properties.js'
import type { Snapshot } from '../snapshot/snapshot.js'
import type { CommitResult } from '../txn/commit-result.js'
import { IN_COMMIT_TIMESTAMP_FEATURE } from '../txn/in-commit-timestamps.js'
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
  readonly signal?: AbortSignal | undefined
}

/**
 * What a VACUUM did, in the shape of a `CommitResult` (no version is written: `committed` is
 * false, `version` is the snapshot VACUUM read) plus the files.
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
 * unreferenced file is deleted only when it was also written before the retention cutoff, so
 * the files of a commit still in flight survive. The store's own temporary files of puts a killed
 * process abandoned (`listTemporaryFiles`, local store: `.<name>.<16 hex>.tmp`, in `_delta_log/`
 * too) are deleted under the same cutoff; no other hidden file is. The writer protocol check runs
 * first. Only the minimal form is implemented: no VACUUM START / END commits are written.
 *
 * @param engine - the table's engine
 * @param snap - the latest snapshot
 * @param options - retention, dry run
 * @param nowMs - the clock
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
): Promise<VacuumResult> {
  if (options === null || typeof options !== 'object') {
    throw new InvalidArgumentError('vacuum expects an options object', { argument: 'options' })
  }
  // VACUUM writes no commit and moves no row, so neither In-Commit Timestamps nor row tracking
  // nor clustering stand in its way.
  checkWriteSupported(snap.protocol, snap.metadata, {
    extraWriterFeatures: [IN_COMMIT_TIMESTAMP_FEATURE, ROW_TRACKING_FEATURE, ...IN_PLACE_ONLY_FEATURES],
  })
  const configured = deletedFileRetentionMillis(snap.properties)
  const retention = retentionMillis(options.retentionHours) ?? configured
  if (retention < configured && options.enforceRetentionDuration !== false) {
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

  const referenced = new Set<string>()
  const unresolved: string[] = []
  const note = (key: string | null | undefined, path: string): void => {
    if (key === undefined) unresolved.push(path)
    else if (key !== null) referenced.add(key)
  }
  const keep = (path: string, dv: DeletionVectorDescriptor | undefined): void => {
    note(storeKeyOf(engine, path), path)
    if (dv === undefined) return
    const loc = resolveDvLocation(dv)
    if (loc.kind === 'relative') note(loc.path, dv.pathOrInlineDv)
    else if (loc.kind === 'absolute') note(storeKeyOf(engine, loc.uri), loc.uri)
  }
  for (const f of snap.activeFiles()) keep(f.path, f.deletionVector)
  for (const t of snap.tombstones()) {
    if (Number(t.deletionTimestamp ?? 0n) <= deleteBefore) continue
    keep(t.path, t.deletionVector)
    // A re-pointed compaction tombstone names the DV the compaction read; a reconcile needs it.
    const read = remappedReadDeletionVector(t)
    if (read !== undefined) keep(t.path, read)
  }
  if (unresolved.length > 0) {
    throw new UnsupportedError(
      `VACUUM cannot tell whether '${unresolved[0]}' (an absolute path in the log) lies inside the table, so it could delete a file still in use; nothing was deleted`,
      {
        hint: 'VACUUM tables with absolute paths on the local file system, or with a tool that resolves them.',
      },
    )
  }

  const partitionDirs = partitionDirectoryPrefixes(snap)
  const doomed: { key: string; size: number }[] = []
  let scanned = 0
  for await (const f of engine.storage.listRecursive('', { signal: options.signal })) {
    if (isHiddenPath(f.key, partitionDirs)) continue
    scanned++
    if (referenced.has(f.key) || f.lastModified >= deleteBefore) continue
    doomed.push({ key: f.key, size: f.size })
  }
  // A writer killed mid-put leaves the store's temporary file behind, hidden from listings and
  // possibly inside _delta_log/; once older than the retention no put can still be using it.
  for await (const t of engine.storage.listTemporaryFiles?.({ signal: options.signal }) ?? []) {
    if (t.lastModified < deleteBefore) doomed.push({ key: t.key, size: t.size })
  }
  doomed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
  const dryRun = options.dryRun === true
  if (!dryRun) {
    for (const d of doomed) {
      options.signal?.throwIfAborted()
      await engine.storage.delete(d.key, { signal: options.signal })
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
  })
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
