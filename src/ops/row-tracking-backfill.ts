/**
 * The row-tracking backfill (PROTOCOL.md "Row Tracking", enablement on an existing table): once
 * the table supports the `rowTracking` feature, every new `add` gets row ids, but the files
 * written before have none. The backfill recommits those files unchanged (`dataChange = false`,
 * same path, deletion vector and statistics), and the commit path gives each a fresh `baseRowId`
 * above the high-water mark and `defaultRowCommitVersion` = the backfill's version, moving the
 * mark, as for any new `add` (`row-tracking-ids.ts`). Only then may `delta.enableRowTracking` be
 * set. This is Delta's order: feature supported, backfill (operation `ROW TRACKING BACKFILL`, one
 * commit per batch of files), then the property.
 *
 * A backfill records the files it recommits as read: a concurrent commit that removes one of them
 * (a DELETE, an OPTIMIZE) makes it abort rather than bring the file back, and the caller runs it
 * again on the new version. It must be committed with the row-level reconciliation flags off,
 * because it re-adds files it did not change: no reconciliation may let a removed file return.
 */
import { InvalidArgumentError } from '../errors/index.js'
import { lit } from '../expressions/ast.js'
import { type AddFile, createAddFile } from '../protocol/actions.js'
import { ROW_TRACKING_FEATURE } from '../protocol/row-tracking.js'
import { isFeatureSupported } from '../protocol/table-features.js'
import type { Snapshot } from '../snapshot/snapshot.js'
import type { OperationContext, PreparedOperation } from '../txn/staged-operation.js'

/** The operation name Delta records for a backfill commit. */
export const ROW_TRACKING_BACKFILL_OPERATION = 'ROW TRACKING BACKFILL'

/** Files one backfill commit recommits by default. */
export const DEFAULT_BACKFILL_FILES_PER_COMMIT = 10_000

/**
 * The live files of a snapshot that have no row ids yet.
 *
 * @param snap - the snapshot (its protocol supports row tracking)
 */
export function filesToBackfill(snap: Snapshot): AddFile[] {
  return snap
    .activeFiles()
    .filter((f) => f.baseRowId === undefined || f.defaultRowCommitVersion === undefined)
}

/**
 * One backfill commit: at most `limit` of the read snapshot's files without row ids, recommitted.
 *
 * @param ctx - the transaction's context (its snapshot supports row tracking)
 * @param batchId - the batch's number, recorded as Delta records it
 * @param limit - files per commit
 * @returns the operation, with no action when no file lacks row ids
 * @throws {InvalidArgumentError} when the table does not support row tracking yet
 */
export function buildRowTrackingBackfill(
  ctx: OperationContext,
  batchId: number,
  limit: number = DEFAULT_BACKFILL_FILES_PER_COMMIT,
): PreparedOperation {
  const snap = ctx.snapshot
  if (!isFeatureSupported(snap.protocol, ROW_TRACKING_FEATURE)) {
    throw new InvalidArgumentError('A row-tracking backfill needs the rowTracking feature supported first', {
      argument: 'protocol',
    })
  }
  const files = filesToBackfill(snap).slice(0, Math.max(1, limit))
  // The files themselves are read (a concurrent remove of one aborts the backfill); the FALSE
  // predicate selects no new file, so a concurrent append does not.
  ctx.recordRead(files, lit(false))
  const actions = files.map((f) => {
    const { baseRowId: _b, defaultRowCommitVersion: _v, ...rest } = f
    return { add: createAddFile({ ...rest, dataChange: false }) }
  })
  return {
    operation: ROW_TRACKING_BACKFILL_OPERATION,
    parameters: { batchId: String(batchId) },
    actions,
    metrics: { numFiles: files.length },
    changesData: false,
  }
}
