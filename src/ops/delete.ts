import { tombstoneOf, withNewDeletionVector } from '../conflict/file-actions.js'
import { initDeletionVectors } from '../dv/index.js'
import { RoaringBitmapArray } from '../dv/roaring-bitmap-array.js'
import type { DataFileRef } from '../engine/data-plane.js'
import type { Expression } from '../expressions/ast.js'
import { splitPartitionPredicate } from '../expressions/evaluate-stats.js'
import type { Action, AddFile } from '../protocol/actions.js'
import { canWriteDeletionVectors } from '../protocol/table-features.js'
import { pruneFiles } from '../scan/prune-files.js'
import { columnSpecs, dataFileRefs, parseWhere } from '../scan/table-scan.js'
import type { OperationContext, StagedOperation } from './operation.js'
import { addFileOf, writeDeletionVectors, writeTargetOf } from './write-support.js'

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
): Promise<StagedOperation> {
  const snap = ctx.snapshot
  const predicate = parseWhere(where)
  const { files: candidates } = pruneFiles(snap, snap.activeFiles(), predicate)
  ctx.recordRead(candidates, predicate)
  const now = ctx.now()
  const parameters = { predicate: predicate ? JSON.stringify([where]) : '[]' }

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
  const useDv = canWriteDeletionVectors(snap.protocol, snap.metadata)
  await initDeletionVectors()
  const actions: Action[] = []
  const dvUpdates: Array<{ file: AddFile; bitmap: RoaringBitmapArray }> = []
  const rewrites: Array<{ file: AddFile; ref: DataFileRef; positions: readonly number[] }> = []
  let deletedRows = 0
  let removedWhole = 0
  for (const [i, m] of matches.entries()) {
    if (m.positions.length === 0) continue
    const file = candidates[i] as AddFile
    deletedRows += m.positions.length
    if (m.positions.length === m.liveRows) {
      actions.push({ remove: tombstoneOf(file, BigInt(now), true) })
      removedWhole++
    } else if (useDv) {
      const old = RoaringBitmapArray.fromSorted((refs[i] as DataFileRef).deletedRows ?? [])
      dvUpdates.push({ file, bitmap: old.union(RoaringBitmapArray.fromSorted(m.positions)) })
    } else {
      rewrites.push({ file, ref: refs[i] as DataFileRef, positions: m.positions })
    }
  }

  const { descriptors } = await writeDeletionVectors(
    ctx.engine,
    dvUpdates.map((u) => u.bitmap),
    ctx.signal,
  )
  for (const [i, u] of dvUpdates.entries()) {
    actions.push({ remove: tombstoneOf(u.file, BigInt(now), true) })
    actions.push({
      add: withNewDeletionVector(u.file, descriptors[i] as NonNullable<(typeof descriptors)[number]>, true),
    })
  }

  let copiedRows = 0
  let addedFiles = 0
  if (rewrites.length > 0) {
    const written = await ctx.engine.writer.rewrite({
      sources: rewrites.map((r) => r.ref),
      positions: new Map(rewrites.map((r) => [r.ref.key, r.positions])),
      positionsMode: 'exclude',
      target: writeTargetOf(snap),
      signal: ctx.signal,
    })
    for (const r of rewrites) actions.push({ remove: tombstoneOf(r.file, BigInt(now), true) })
    for (const f of written) {
      actions.push({ add: addFileOf(f, now, true) })
      copiedRows += f.numRecords
      addedFiles++
    }
  }

  return {
    operation: 'DELETE',
    parameters,
    actions,
    metrics: {
      numRemovedFiles: removedWhole + rewrites.length,
      numAddedFiles: addedFiles,
      numDeletedRows: deletedRows,
      numCopiedRows: copiedRows,
      numDeletionVectorsAdded: dvUpdates.length,
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
