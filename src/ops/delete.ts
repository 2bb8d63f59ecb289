import { tombstoneOf } from '../conflict/file-actions.js'
import type { Expression } from '../expressions/ast.js'
import { splitPartitionPredicate } from '../expressions/evaluate-stats.js'
import { toSql } from '../expressions/to-sql.js'
import type { Action, AddFile } from '../protocol/actions.js'
import { canWriteDeletionVectors } from '../protocol/table-features.js'
import { pruneFiles } from '../scan/prune-files.js'
import { columnSpecs, dataFileRefs, parseWhere } from '../scan/table-scan.js'
import type { OperationContext, PreparedOperation } from '../txn/staged-operation.js'
import { removeRows, type TouchedFile } from './dml-support.js'

/**
 * DELETE: removes the rows matching `where` (every row when absent).
 *
 * Only files whose partition values and statistics may match are read. A file whose live rows
 * all match is removed whole. Otherwise, with deletion vectors enabled on the table
 * (`delta.enableDeletionVectors`), the file gets a new DV (merge-on-read: `remove(P, oldDV)` +
 * `add(P, newDV)`); without them its remaining rows are copied to a new file (copy-on-write).
 *
 * @param ctx - the transaction's context
 * @param where - SQL predicate text or expression
 * @throws {InvalidPredicateError} on a malformed predicate
 * @throws {InvalidArgumentError} on an unknown column
 */
export async function buildDelete(
  ctx: OperationContext,
  where: string | Expression | undefined,
): Promise<PreparedOperation> {
  const snap = ctx.snapshot
  const predicate = parseWhere(where)
  const { files: candidates } = pruneFiles(snap, snap.activeFiles(), predicate)
  ctx.recordRead(candidates, predicate)
  const now = ctx.now()
  // Recorded as text, as Spark does: the caller's text, or an expression tree printed back.
  const parameters = {
    predicate: predicate ? JSON.stringify([typeof where === 'string' ? where : toSql(predicate)]) : '[]',
  }

  const wholeFile =
    predicate === undefined || splitPartitionPredicate(predicate, snap.partitionColumns).data === undefined
  if (wholeFile) {
    // A partition-only predicate decides whole files exactly: no data is read.
    const actions: Action[] = candidates.map((f) => ({ remove: tombstoneOf(f, BigInt(now), true) }))
    const rows = candidates.reduce((n, f) => n + liveRowsOf(f), 0)
    return {
      operation: 'DELETE',
      parameters,
      actions,
      metrics: {
        numRemovedFiles: candidates.length,
        numAddedFiles: 0,
        numDeletedRows: rows,
        numCopiedRows: 0,
      },
      changesData: true,
    }
  }

  const refs = await dataFileRefs(ctx.engine, candidates, ctx.signal)
  const matches = await ctx.engine.data.matchPositions({
    files: refs,
    predicate,
    predicateColumns: columnSpecs(snap, undefined),
    signal: ctx.signal,
  })
  const touched: TouchedFile[] = []
  for (const [i, m] of matches.entries()) {
    if (m.positions.length === 0) continue
    touched.push({ file: candidates[i]!, ref: refs[i]!, positions: m.positions, liveRows: m.liveRows })
  }
  // Writes what it must (DV files, copy-on-write outputs) and hands them to the transaction.
  const removal = await removeRows(ctx, touched, canWriteDeletionVectors(snap.protocol, snap.metadata))
  return {
    operation: 'DELETE',
    parameters,
    actions: removal.actions,
    metrics: {
      numRemovedFiles: removal.removedFiles,
      numAddedFiles: removal.addedFiles,
      numDeletedRows: touched.reduce((n, t) => n + t.positions.length, 0),
      numCopiedRows: removal.copiedRows,
      numDeletionVectorsAdded: removal.dvsAdded + removal.dvsUpdated,
    },
    changesData: true,
  }
}

/** Live rows of a file from its stats and DV, or 0 when unknown (metrics only). */
function liveRowsOf(f: AddFile): number {
  const m = /"numRecords"\s*:\s*(\d+)/.exec(f.stats ?? '')
  const total = m ? Number(m[1]) : 0
  return Math.max(0, total - Number(f.deletionVector?.cardinality ?? 0n))
}
