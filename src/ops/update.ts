import type { WrittenFile } from '../engine/data-writer.js'
import { InternalError, InvalidArgumentError } from '../errors/index.js'
import type { Expression } from '../expressions/ast.js'
import { parseWhere } from '../expressions/parse-where.js'
import { toSql } from '../expressions/to-sql.js'
import { pruneFiles } from '../scan/prune-files.js'
import { checkFilesTrackRows } from '../scan/row-tracking-scan.js'
import { checkRowCopyingSupported, rowTrackingToPreserve } from '../txn/row-copying.js'
import type { OperationContext, PreparedOperation } from '../txn/staged-operation.js'
import { changeDataActions } from './change-data.js'
import { updateAssignments } from './computed-columns.js'
import {
  checkNotAppendOnly,
  matchRows,
  parseAssignments,
  removedRowIdsOf,
  replaceRows,
  type TouchedFile,
} from './dml-support.js'
import { writeTargetOf } from './write-support.js'

/** Options of an UPDATE. */
export interface UpdateOptions {
  /** SQL predicate selecting the rows to change; every row when absent. */
  readonly where?: string | Expression | undefined
  /**
   * New values by column name: SQL expressions over the row's current values, e.g.
   * `{ value: 'value * 2', name: "'renamed'" }`.
   */
  readonly set: Readonly<Record<string, string | Expression>>
}

/**
 * UPDATE: replaces the rows matching `where` by their images under `set`.
 *
 * Only files whose partition values and statistics may match are read; the read is recorded
 * with its predicate. With deletion vectors enabled on the table, each touched file keeps its
 * untouched rows and gets a new DV over the matched ones (`remove(P, oldDV)` + `add(P, newDV)`);
 * without, the untouched rows are copied to new files (copy-on-write). Either way the updated
 * images go to new files, which are ordinary adds (a file whose every live row matched is
 * removed whole). Everything is written before any action is staged. With row tracking enabled
 * an updated row keeps its stable row id and takes the UPDATE's version as its commit version
 * (its materialized commit version is NULL); a copied row keeps both.
 *
 * @param ctx - the transaction's context
 * @param options - `where` and `set`
 * @returns the staged UPDATE
 * @throws {InvalidArgumentError} for a missing or empty `set`, an unknown column, NULL for a NOT
 *   NULL column, or a value that does not fit its column
 * @throws {InvalidPredicateError} when the predicate or an expression does not parse
 * @throws {UnsupportedError} on an append-only table
 */
export async function buildUpdate(ctx: OperationContext, options: UpdateOptions): Promise<PreparedOperation> {
  if (options === null || typeof options !== 'object') {
    throw new InvalidArgumentError('update expects { where?, set }', { argument: 'options' })
  }
  const snap = ctx.snapshot
  checkRowCopyingSupported(snap, 'UPDATE', { preservesRowIds: true })
  checkNotAppendOnly(snap, 'UPDATE')
  const set = updateAssignments(snap, parseAssignments(snap, options.set))
  const predicate = parseWhere(options.where, 'options.where')
  const { files: candidates } = pruneFiles(snap, snap.activeFiles(), predicate)
  ctx.recordRead(candidates, predicate)
  const parameters = { predicate: predicate ? JSON.stringify(toSql(predicate)) : undefined }

  const touched = await matchRows(ctx, candidates, predicate)
  const rowTracking = rowTrackingToPreserve(snap)
  if (touched.length === 0) {
    return {
      operation: 'UPDATE',
      parameters,
      actions: [],
      metrics: updateMetrics(0, 0, 0, 0, 0, 0, 0, 0, 0),
      changesData: true,
    }
  }

  // Images first: a bad `set` (type, NOT NULL) fails here, before any DV is written. With row
  // tracking enabled they keep their stable ids and take the commit's version; the copies of a
  // copy-on-write UPDATE keep both (replaceRows). The predicate goes with the positions so that
  // the engine can filter the rows as it reads them; the positions decide, and the count below
  // proves that every matched row got its image.
  if (rowTracking !== undefined) checkFilesTrackRows(touched.map((t) => t.file))
  const images: WrittenFile[] = await ctx.engine.writer.rewrite({
    sources: touched.map((t) => t.ref),
    positions: new Map(touched.map((t) => [t.ref.key, t.positions])),
    positionsMode: 'include',
    where: predicate,
    set,
    target: writeTargetOf(snap),
    signal: ctx.signal,
    rowTracking: rowTracking === undefined ? undefined : { ...rowTracking, updated: true },
  })
  ctx.wrote(images.map((f) => f.key))
  checkImageCount(touched, images)
  const { removal, actions } = await replaceRows(ctx, touched, images)
  // Change data feed: the rows as they were, from their source files, and the images as written.
  const changes = await changeDataActions(ctx, { preimages: touched, postimages: images })
  return {
    operation: 'UPDATE',
    parameters,
    actions: [...actions, ...changes.actions],
    metrics: updateMetrics(
      removal.removedRows,
      removal.copiedRows,
      removal.addedFiles + images.length,
      removal.removedFiles,
      removal.addedBytes + images.reduce((n, f) => n + f.size, 0),
      removal.removedBytes,
      removal.dvsAdded,
      removal.dvsUpdated,
      removal.dvsRemoved,
      changes.files,
    ),
    changesData: true,
    preservesRowIds: rowTracking !== undefined,
    removedRowIds:
      rowTracking === undefined
        ? undefined
        : removedRowIdsOf(touched, { preservedImageRows: images.reduce((n, f) => n + f.numRecords, 0) }),
  }
}

/**
 * Every matched row has exactly one image: the images are the matched positions that the
 * predicate selects again, so as many images as positions means none was left out.
 *
 * @throws {InternalError} when the counts differ
 */
function checkImageCount(touched: readonly TouchedFile[], images: readonly WrittenFile[]): void {
  const matched = touched.reduce((n, t) => n + t.positions.length, 0)
  const written = images.reduce((n, f) => n + f.numRecords, 0)
  if (written !== matched) {
    throw new InternalError(
      `UPDATE wrote ${written} updated row(s) for the ${matched} row(s) its predicate matched`,
    )
  }
}

function updateMetrics(
  updatedRows: number,
  copiedRows: number,
  addedFiles: number,
  removedFiles: number,
  addedBytes: number,
  removedBytes: number,
  dvsAdded: number,
  dvsUpdated: number,
  dvsRemoved: number,
  changeFiles = 0,
): Readonly<Record<string, number>> {
  return Object.freeze({
    numUpdatedRows: updatedRows,
    numCopiedRows: copiedRows,
    numAddedFiles: addedFiles,
    numRemovedFiles: removedFiles,
    numAddedBytes: addedBytes,
    numRemovedBytes: removedBytes,
    numAddedChangeFiles: changeFiles,
    numDeletionVectorsAdded: dvsAdded,
    numDeletionVectorsUpdated: dvsUpdated,
    numDeletionVectorsRemoved: dvsRemoved,
  })
}
