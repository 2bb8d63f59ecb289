import type { Expression } from '../expressions/ast.js'
import { parseWhere } from '../expressions/parse-where.js'
import { toSql } from '../expressions/to-sql.js'
import { canWriteDeletionVectors } from '../protocol/table-features.js'
import { pruneFiles } from '../scan/prune-files.js'
import { checkRowCopyingSupported, rowTrackingToPreserve } from '../txn/row-copying.js'
import type { OperationContext, PreparedOperation } from '../txn/staged-operation.js'
import { changeDataActions } from './change-data.js'
import { checkNotAppendOnly, matchRows, removedRowIdsOf, removeRows } from './dml-support.js'

/**
 * DELETE: removes the rows matching `where` (every row when absent).
 *
 * Only files whose partition values and statistics may match are read, and none when the
 * predicate names partition columns only: it decides whole files exactly. A file whose live rows
 * all match is removed whole. Otherwise, with deletion vectors enabled on the table
 * (`delta.enableDeletionVectors`), the file gets a new DV (merge-on-read: `remove(P, oldDV)` +
 * `add(P, newDV)`); without them its remaining rows are copied to a new file (copy-on-write),
 * which on a table with row tracking enabled carries each copied row's stable id and commit
 * version in the materialized columns.
 *
 * @param ctx - the transaction's context
 * @param where - SQL predicate text or expression
 * @throws {InvalidPredicateError} on a malformed predicate
 * @throws {InvalidArgumentError} on an unknown column
 * @throws {UnsupportedError} on an append-only table
 */
export async function buildDelete(
  ctx: OperationContext,
  where: string | Expression | undefined,
): Promise<PreparedOperation> {
  const snap = ctx.snapshot
  checkNotAppendOnly(snap, 'DELETE')
  const predicate = parseWhere(where)
  const { files: candidates } = pruneFiles(snap, snap.activeFiles(), predicate)
  const { data } = ctx.recordRead(candidates, predicate)
  // A data predicate may leave rows of a file: without deletion vectors they are copied, with
  // their row ids when row tracking is enabled (removeRows writes them).
  if (data !== undefined && !canWriteDeletionVectors(snap.protocol, snap.metadata)) {
    checkRowCopyingSupported(snap, 'DELETE', { preservesRowIds: true })
  }
  const touched = data === undefined ? [] : await matchRows(ctx, candidates, predicate)
  const removal = data === undefined ? await removeRows(ctx, [], candidates) : await removeRows(ctx, touched)
  // Change data feed: the deleted rows, read before their files leave. Whole files removed by a
  // partition predicate need none: readers take the removes as deletes.
  const changes = await changeDataActions(ctx, { deleted: touched })
  const removedRowIds =
    rowTrackingToPreserve(snap) === undefined
      ? undefined
      : removedRowIdsOf(touched, { wholeFiles: data === undefined ? candidates : [] })
  return {
    operation: 'DELETE',
    // Recorded as text, as Spark does: the caller's text, or an expression tree printed back.
    parameters: {
      predicate: predicate ? JSON.stringify([typeof where === 'string' ? where : toSql(predicate)]) : '[]',
    },
    actions: [...removal.actions, ...changes.actions],
    metrics: {
      numRemovedFiles: removal.removedFiles,
      numAddedFiles: removal.addedFiles,
      numDeletedRows: removal.removedRows,
      numCopiedRows: removal.copiedRows,
      numDeletionVectorsAdded: removal.dvsAdded + removal.dvsUpdated,
      numAddedChangeFiles: changes.files,
    },
    changesData: true,
    preservesRowIds: rowTrackingToPreserve(snap) !== undefined,
    removedRowIds,
  }
}
