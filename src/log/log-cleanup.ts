/**
 * Which `_delta_log/` files expired log cleanup may delete (Delta's metadata cleanup, with the
 * time-travel guarantee delta-rs and the kernel give): every version whose commit time is inside
 * the retention window must stay rebuildable. Pure: the caller lists the log, times the commits
 * and deletes; this module only decides.
 *
 * The rule: the *boundary* is the newest complete checkpoint whose commit time is before the
 * cutoff (`now - delta.logRetentionDuration`). Commit times increase with the version, so every
 * version inside the window is above the boundary and is rebuilt from that checkpoint (or a
 * newer one) and the commits after it. Files of versions below the boundary (commits,
 * checkpoints of every kind, compacted commits, checksums) are then needed by no version inside
 * the window, and go once they are themselves older than the cutoff. The boundary's own files,
 * and `_last_checkpoint`, always stay.
 */
import type { Version } from '../protocol/actions.js'
import { LOG_DIR, type LogFileName, parseLogFileName } from '../protocol/log-files.js'
import type { FileMetaLike } from './log-segment.js'

/** A file of `_delta_log/` itself, with its classified name. */
interface NamedLogFile {
  readonly file: FileMetaLike
  readonly name: Exclude<LogFileName, { type: 'last-checkpoint' }>
}

function namedLogFiles(files: readonly FileMetaLike[]): NamedLogFile[] {
  const out: NamedLogFile[] = []
  for (const file of files) {
    if (!file.key.startsWith(LOG_DIR)) continue
    const bare = file.key.slice(LOG_DIR.length)
    // Sidecars and staged commits live in subdirectories: never a cleanup candidate here.
    if (bare.includes('/')) continue
    const name = parseLogFileName(bare)
    if (name === undefined || name.type === 'last-checkpoint') continue
    out.push({ file, name })
  }
  return out
}

/**
 * The versions of a listing that have a complete checkpoint: a classic or V2 checkpoint file,
 * or every part of a multi-part checkpoint.
 *
 * @param files - a listing of `_delta_log/` (keys relative to the table root), in any order
 * @returns the versions, ascending
 */
export function completeCheckpointVersions(files: readonly FileMetaLike[]): Version[] {
  const complete = new Set<Version>()
  // version -> part count -> parts seen
  const parts = new Map<Version, Map<number, Set<number>>>()
  for (const { name } of namedLogFiles(files)) {
    if (name.type === 'checkpoint' || name.type === 'v2-checkpoint') complete.add(name.version)
    else if (name.type === 'multi-part-checkpoint') {
      const byCount = parts.get(name.version) ?? new Map<number, Set<number>>()
      const seen = byCount.get(name.parts) ?? new Set<number>()
      seen.add(name.part)
      byCount.set(name.parts, seen)
      parts.set(name.version, byCount)
    }
  }
  for (const [version, byCount] of parts)
    for (const [count, seen] of byCount) if (seen.size === count) complete.add(version)
  return [...complete].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
}

/** What expired log cleanup may delete. */
export interface ExpiredLogFiles {
  /** Files to delete, ascending by version (a cleanup stopped part way leaves a suffix of the log). */
  readonly files: readonly FileMetaLike[]
  /** Files below the boundary kept because they are not older than the cutoff. */
  readonly keptYoung: number
}

/**
 * The log files below `boundary` older than `cutoffMs`: commits, checkpoints (classic,
 * multi-part, V2 top-level files), compacted commits (by their last version) and checksum files.
 * `_last_checkpoint`, sidecars, unknown names and every file of `boundary` and above are never
 * returned; a returned file's Hadoop checksum file (`.<name>.crc`) follows it.
 *
 * @param files - a listing of `_delta_log/`
 * @param boundary - the checkpoint version readers inside the window start from
 * @param cutoffMs - files modified at or after this instant (ms since the epoch) stay
 * @returns the files, ascending by version then name
 */
export function expiredLogFiles(
  files: readonly FileMetaLike[],
  boundary: Version,
  cutoffMs: number,
): ExpiredLogFiles {
  const out: NamedLogFile[] = []
  let keptYoung = 0
  for (const named of namedLogFiles(files)) {
    if (named.name.version >= boundary) continue
    if (named.file.lastModified < cutoffMs) out.push(named)
    else keptYoung++
  }
  out.sort((a, b) =>
    a.name.version !== b.name.version
      ? a.name.version < b.name.version
        ? -1
        : 1
      : a.file.key < b.file.key
        ? -1
        : a.file.key > b.file.key
          ? 1
          : 0,
  )
  // A Hadoop checksum file (`.<name>.crc`, which Spark writes on some file systems) goes with
  // its file.
  const companions = new Map<string, FileMetaLike>()
  for (const f of files) {
    const companion = checksumOwner(f.key)
    if (companion !== undefined) companions.set(companion, f)
  }
  const result: FileMetaLike[] = []
  for (const n of out) {
    result.push(n.file)
    const crc = companions.get(n.file.key)
    if (crc !== undefined) result.push(crc)
  }
  return Object.freeze({ files: Object.freeze(result), keptYoung })
}

/** The key of the file a Hadoop checksum file (`dir/.<name>.crc`) belongs to, else undefined. */
function checksumOwner(key: string): string | undefined {
  const slash = key.lastIndexOf('/') + 1
  const name = key.slice(slash)
  return name.startsWith('.') && name.endsWith('.crc') ? key.slice(0, slash) + name.slice(1, -4) : undefined
}

/**
 * The checkpoint files of a listing that may name V2 sidecars: V2 top-level files
 * (`n.checkpoint.<uuid>.json|parquet`) and single-file checkpoints (`n.checkpoint.parquet`, which
 * hold V2 content on a `v2Checkpoint` table). Multi-part checkpoints never name sidecars.
 *
 * @param files - a listing of `_delta_log/`
 * @param gone - keys already deleted, left out
 * @returns the files, with their version and format
 */
export function sidecarNamingCheckpoints(
  files: readonly FileMetaLike[],
  gone: ReadonlySet<string>,
): Array<{ readonly file: FileMetaLike; readonly version: Version; readonly format: 'json' | 'parquet' }> {
  const out: Array<{ file: FileMetaLike; version: Version; format: 'json' | 'parquet' }> = []
  for (const { file, name } of namedLogFiles(files)) {
    if (gone.has(file.key)) continue
    if (name.type === 'v2-checkpoint') out.push({ file, version: name.version, format: name.format })
    else if (name.type === 'checkpoint') out.push({ file, version: name.version, format: 'parquet' })
  }
  return out
}

/**
 * The sidecars expired log cleanup may delete: those no remaining checkpoint names, last
 * modified before the cutoff. The age rule is what keeps a checkpoint being written safe: its
 * writer stores the sidecars first and the checkpoint that names them after, so a young
 * unreferenced sidecar may be named a moment later.
 *
 * @param sidecars - a listing of `_delta_log/_sidecars/`
 * @param referenced - store keys of the sidecars the remaining checkpoints name
 * @param cutoffMs - sidecars modified at or after this instant stay
 * @returns the sidecars to delete, ascending by key
 */
export function unreferencedSidecars(
  sidecars: readonly FileMetaLike[],
  referenced: ReadonlySet<string>,
  cutoffMs: number,
): FileMetaLike[] {
  // A Hadoop checksum file (`.<name>.crc`) lives and dies with its sidecar.
  const out = sidecars.filter(
    (f) => f.lastModified < cutoffMs && !referenced.has(checksumOwner(f.key) ?? f.key),
  )
  return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
}
