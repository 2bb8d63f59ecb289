import { resolveDvLocation } from '../dv/index.js'
import type { Engine } from '../engine/engine.js'
import { FileNotFoundError } from '../errors/index.js'
import { lit } from '../expressions/ast.js'
import type { AddFile, Version } from '../protocol/actions.js'
import { tombstoneOf } from '../protocol/file-action-rewrites.js'
import { decodeAddPath } from '../protocol/partition-values.js'
import type { CommitResult } from '../txn/commit-result.js'
import type { OperationContext, PreparedOperation } from '../txn/staged-operation.js'
import { mapLimit } from '../util/map-limit.js'

/** Options of an FSCK. */
export interface FsckOptions {
  /**
   * Commit a `remove` for every live file whose data file or deletion vector is missing
   * (Databricks' `FSCK REPAIR TABLE`); without it the files are only reported.
   */
  readonly repair?: boolean | undefined
  readonly signal?: AbortSignal | undefined
}

/** How many existence checks run at once (each is a `head`: a round trip on a remote store). */
const CHECK_CONCURRENCY = 16

/** A live file of the log that cannot be read because an object it needs is gone. */
export interface MissingFile {
  /** `add.path`, as the log has it. */
  readonly path: string
  /** Which object is gone: the data file, or (the data file being there) its deletion vector. */
  readonly missing: 'data' | 'deletion-vector'
  /** The store key of the missing object. */
  readonly key: string
}

/** What checking the live files of a snapshot found. */
export interface FileCheck {
  /** Live files whose objects were checked. */
  readonly filesChecked: number
  /** Live files outside the table root (absolute paths), not checked. */
  readonly filesUnchecked: number
  /** The files with a missing object, in log order. */
  readonly missing: readonly MissingFile[]
}

/**
 * Checks that every object the live files of a snapshot need exists: each data file, and each
 * deletion vector stored in a file (`u`; inline ones need none). Objects shared by several
 * files (a DV file holding many vectors) are checked once.
 *
 * @param engine - the table's engine
 * @param files - the live files
 * @param signal - cancels the checks
 * @returns the check
 * @throws {StorageError} when the store fails for another reason than a missing object
 * @throws {InvalidDeletionVectorError} on a malformed DV descriptor
 */
export async function checkLiveFiles(
  engine: Engine,
  files: readonly AddFile[],
  signal?: AbortSignal,
): Promise<FileCheck> {
  const present = new Map<string, Promise<boolean>>()
  const exists = (key: string): Promise<boolean> => {
    let known = present.get(key)
    if (known === undefined) {
      known = engine.storage.head(key, { signal }).then(
        () => true,
        (err: unknown) => {
          if (err instanceof FileNotFoundError) return false
          throw err
        },
      )
      present.set(key, known)
    }
    return known
  }
  let unchecked = 0
  const found = await mapLimit(files, CHECK_CONCURRENCY, async (f): Promise<MissingFile | undefined> => {
    signal?.throwIfAborted()
    const decoded = decodeAddPath(f.path)
    if (decoded.kind !== 'relative') {
      unchecked++
      return undefined
    }
    if (!(await exists(decoded.key))) return { path: f.path, missing: 'data', key: decoded.key }
    if (f.deletionVector === undefined) return undefined
    const loc = resolveDvLocation(f.deletionVector)
    if (loc.kind !== 'relative') return undefined
    if (!(await exists(loc.path))) return { path: f.path, missing: 'deletion-vector', key: loc.path }
    return undefined
  })
  const missing: MissingFile[] = []
  for (const m of found) if (m !== undefined) missing.push(Object.freeze(m))
  return Object.freeze({
    filesChecked: files.length - unchecked,
    filesUnchecked: unchecked,
    missing: Object.freeze(missing),
  })
}

/** What an FSCK found, and what its repair committed. */
export interface FsckResult extends FileCheck {
  /** The version checked: the snapshot read, or with a repair the one its commit read. */
  readonly version: Version
  readonly repair: boolean
  /**
   * The repair's commit (operation `FSCK`): absent without `repair`, and when nothing was
   * missing (no commit is written then).
   */
  readonly commit?: CommitResult | undefined
}

/** A staged FSCK repair: the removes, with the check they came from. */
export interface FsckOperation extends PreparedOperation {
  readonly check: FileCheck
}

/**
 * FSCK REPAIR: removes from the table every live file whose data file or deletion vector is
 * gone, as Databricks' `FSCK REPAIR TABLE` does (operation `FSCK`, `dataChange = true`). The
 * check runs against the transaction's read snapshot, and the files it removes are recorded as
 * read, with no predicate over rows: a concurrent commit that removes or rewrites one of them
 * conflicts, while concurrent appends do not.
 *
 * @param ctx - the transaction's context
 * @returns the removes (none when nothing is missing) and the check
 * @throws {StorageError} when an existence check fails for another reason than a missing object
 */
export async function buildFsckRepair(ctx: OperationContext): Promise<FsckOperation> {
  const live = ctx.snapshot.activeFiles()
  const check = await checkLiveFiles(ctx.engine, live, ctx.signal)
  const gone = new Set(check.missing.map((m) => m.path))
  const removed = live.filter((f) => gone.has(f.path))
  // Only these files were read; FALSE matches no new row, so appends never conflict with it.
  ctx.recordRead(removed, lit(false))
  const now = BigInt(ctx.now())
  let dataMissing = 0
  for (const m of check.missing) if (m.missing === 'data') dataMissing++
  return {
    operation: 'FSCK',
    parameters: { repair: true },
    actions: removed.map((f) => ({ remove: tombstoneOf(f, now, true) })),
    metrics: {
      numFilesChecked: check.filesChecked,
      numMissingFiles: dataMissing,
      numMissingDeletionVectors: check.missing.length - dataMissing,
      numRemovedFiles: removed.length,
    },
    changesData: true,
    check,
  }
}
