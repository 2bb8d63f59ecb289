import type { MergeReadSet } from '../conflict/case6-merge-read-set.js'
import { keptMatchedRows } from '../conflict/kept-matched-rows.js'
import type { WrittenFile } from '../engine/data-writer.js'
import type { MergeResult } from '../engine/merge-plan.js'
import { InternalError, InvalidArgumentError, UnsupportedError } from '../errors/index.js'
import { conjunction, type Expression } from '../expressions/ast.js'
import { splitPartitionPredicate } from '../expressions/evaluate-stats.js'
import { toSql } from '../expressions/to-sql.js'
import { isIdentityField } from '../protocol/computed-columns.js'
import { dataFileRefs } from '../scan/data-file-refs.js'
import { pruneFiles } from '../scan/prune-files.js'
import { checkFilesTrackRows } from '../scan/row-tracking-scan.js'
import { checkRowCopyingSupported, rowTrackingToPreserve } from '../txn/row-copying.js'
import type { OperationContext, PreparedOperation } from '../txn/staged-operation.js'
import { changeDataActions, changeDataFeedOn } from './change-data.js'
import { computedColumnWrite, mergePlanWithComputedColumns } from './computed-columns.js'
import { checkNotAppendOnly, removedRowIdsOf, replaceRows, type TouchedFile } from './dml-support.js'
import { type MergeOptions, type MergePlan, planMerge } from './merge-clauses.js'
import { evolvedColumnSpecs, mergeSchemaEvolution } from './merge-schema-evolution.js'
import { mergeChangeSketch } from './merge-sketch.js'
import { captureMergeReadSet, sourceKeyPredicate } from './merge-source-keys.js'
import { evolvedTarget } from './schema-merge.js'
import { writeTargetOf } from './write-support.js'

/**
 * MERGE: joins `sourceRows` with the table on `options.on` and applies the clauses with Delta's
 * semantics (each list in order, the first clause that applies acts; a target row matched by
 * more than one source row with an applicable clause is refused, unless the only matched clause
 * is an unconditional DELETE).
 *
 * Reading. Without a NOT MATCHED BY SOURCE clause only files that may hold rows matching the
 * target-only part of `on` and the source keys (for `target.k = source.k` conjuncts) are read.
 * The recorded read is Delta's: the target-only part of `on` (TRUE when none) over the files
 * read. With the `mergeSourceKeyReadPredicate` flag it is narrowed to the source keys: an IN-set
 * of at most `mergeSourceKeyInSetThreshold` distinct keys, else a min/max range, with the exact
 * key set as the value-exact predicate. A NOT MATCHED BY SOURCE clause reads every file (TRUE).
 * With `mergeRowLevelConflicts` the read also carries the MERGE's row-level read set (source key
 * tuples, the target-only part of `on`, the NOT MATCHED BY SOURCE conditions) for Case 6.
 *
 * Writing. Updated images and inserted rows go to new files (ordinary adds), written by the merge
 * executor from where it computed them when it can (the default engine never brings them into
 * JavaScript), else by the writer from the rows it returns (always for inserts into a table with
 * an identity column, whose values are generated here). Rows updated or
 * deleted leave their files as in DELETE: through a new deletion vector when the table has them
 * enabled (merge-on-read), else by copying the remaining rows (copy-on-write); a file that loses
 * every live row is removed whole. Nothing is staged on invalid input. With row tracking enabled
 * an updated row keeps its stable row id and takes the MERGE's version as its commit version, an
 * inserted row gets a fresh id, and a copied row keeps both.
 *
 * Conflicts. A MERGE with an insert clause also records, in each file it takes rows out of, the
 * target rows it matched and left in place: a concurrent commit deleting one of them would have
 * let its source row be inserted, so Case 2 counts them as the MERGE's own rows. With
 * `mergeRowLevelConflicts` it also writes a change sketch into its `commitInfo` when its source
 * keys provably cover every row it changes (`merge-sketch.ts`), which a MERGE losing to it may
 * decide Case 6 from without reading data.
 *
 * @param ctx - the transaction's context
 * @param sourceRows - the source rows: plain objects keyed by source column name
 * @param options - `on`, the clauses and an optional source schema
 * @returns the staged MERGE
 * @throws {InvalidArgumentError} for malformed options, unknown or ambiguous columns, values that
 *   do not fit, or several source rows matching one target row
 * @throws {InvalidPredicateError} when an expression does not parse
 * @throws {UnsupportedError} on an append-only table (for update and delete clauses), or when the
 *   engine has no merge executor
 */
export async function buildMerge(
  ctx: OperationContext,
  sourceRows: readonly Readonly<Record<string, unknown>>[],
  options: MergeOptions,
): Promise<PreparedOperation> {
  if (!Array.isArray(sourceRows)) {
    throw new InvalidArgumentError('merge expects an array of source row objects', { argument: 'sourceRows' })
  }
  sourceRows.forEach((r, i) => {
    if (r === null || typeof r !== 'object' || Array.isArray(r)) {
      throw new InvalidArgumentError(`Source row ${i} is not an object`, { argument: 'sourceRows' })
    }
  })
  const snap = ctx.snapshot
  checkRowCopyingSupported(snap, 'MERGE', { preservesRowIds: true })
  // Schema evolution: the MERGE is planned, read and written against the evolved schema.
  const evolution = mergeSchemaEvolution(snap, sourceRows, options)
  const plan = mergePlanWithComputedColumns(snap, planMerge(evolution ?? snap, sourceRows, options))
  if (plan.changesTargetRows) checkNotAppendOnly(snap, 'MERGE')
  const executor = ctx.engine.merge
  if (executor === undefined) {
    throw new UnsupportedError('This engine cannot run MERGE: it has no merge executor (engine.merge)')
  }

  const { files, mergeRead } = readTargetFiles(ctx, plan, sourceRows)
  // Row tracking enabled: updated images keep their target rows' ids (the executor reads them),
  // inserted rows take fresh ones, and copies keep theirs (replaceRows).
  const rowTracking = rowTrackingToPreserve(snap)
  if (rowTracking !== undefined) checkFilesTrackRows(files)
  const refs = await dataFileRefs(ctx.engine, files, ctx.signal)
  const target = evolvedTarget(writeTargetOf(snap), evolution)
  // With change data feed on, images and inserts go to separate files, read whole as the
  // postimages and the inserts of the change data.
  const split = changeDataFeedOn(snap)
  // Identity values of inserted rows are generated here, in order: those rows come back.
  const identityInserts = plan.whenNotMatched.length > 0 && target.schema.fields.some(isIdentityField)
  const result = await executor.execute({
    files: refs,
    targetColumns: evolvedColumnSpecs(snap, evolution),
    sourceColumns: plan.sourceColumns,
    sourceRows,
    on: plan.on,
    whenMatched: plan.whenMatched,
    whenNotMatched: plan.whenNotMatched,
    whenNotMatchedBySource: plan.whenNotMatchedBySource,
    allowMultipleMatches: plan.whenMatched.length === 1 && isUnconditionalDelete(plan),
    rowTracking,
    // Case 2 counts the rows a MERGE that inserts matched and left in place as its own: asked for
    // whatever the flags, so that explaining a conflict with Case 2 on gives the answer it would.
    reportKeptMatched: plan.whenNotMatched.length > 0,
    reportUpdated: split,
    // The executor may write the new rows where it computed them, and check them as the writer would.
    write: identityInserts ? undefined : { target, separate: split },
    signal: ctx.signal,
  })
  if (result.multipleMatch !== undefined) throw multipleMatchError(plan, sourceRows, result)
  if (split && result.updatedPositions === undefined) {
    throw new InternalError('the merge executor did not report which leaving rows were updated')
  }
  if (
    result.written === undefined &&
    rowTracking !== undefined &&
    result.rowIds?.length !== result.rows.length
  ) {
    throw new InternalError('the merge executor did not return a row id for every new row')
  }

  const touched: TouchedFile[] = []
  const kept: [path: string, positions: readonly number[]][] = []
  for (const [i, m] of result.files.entries()) {
    if (m.positions.length > 0) {
      if (plan.whenNotMatched.length > 0) {
        const positions = result.keptMatched?.[i]
        if (positions === undefined) {
          throw new InternalError('the merge executor did not report the matched rows it left in place')
        }
        kept.push([files[i]!.path, positions])
      }
      touched.push({
        file: files[i]!,
        ref: refs[i]!,
        positions: m.positions,
        liveRows: m.liveRows,
        ...(m.rowIds === undefined ? {} : { rowIds: m.rowIds }),
      })
    }
  }
  const updated = result.numTargetRowsMatchedUpdated + result.numTargetRowsNotMatchedBySourceUpdated
  const computed = computedColumnWrite(snap)
  if (result.written !== undefined) {
    ctx.wrote(result.written.images.map((f) => f.key))
    ctx.wrote(result.written.inserts.map((f) => f.key))
  }
  const { images, inserts } =
    result.written ??
    (await writeReturnedRows(ctx, result, { target, split, updated, computed, rowTracking }))
  const written = [...images, ...inserts]
  const newRows = result.written === undefined ? result.rows.length : updated + result.numTargetRowsInserted
  const { removal, actions: fileActions } = await replaceRows(ctx, touched, written)
  const changes = split
    ? await changeDataActions(ctx, {
        ...mergeChanges(touched, result.updatedPositions ?? [], result.files, images, inserts),
        schema: evolution?.schema,
      })
    : { actions: [], files: 0 }
  // The schema change goes first: no reader sees the new files without their columns.
  const actions = [...(evolution?.actions ?? []), ...fileActions, ...changes.actions]
  const deleted = result.numTargetRowsMatchedDeleted + result.numTargetRowsNotMatchedBySourceDeleted
  const changeSketch = mergeChangeSketch(plan, mergeRead, {
    copiedRows: removal.copiedRows,
    protocol: snap.protocol,
    metadata: snap.metadata,
  })
  return computed.finish({
    operation: 'MERGE',
    parameters: mergeParameters(plan),
    actions,
    metrics: Object.freeze({
      numSourceRows: result.numSourceRows,
      numTargetRowsInserted: result.numTargetRowsInserted,
      numTargetRowsUpdated: updated,
      numTargetRowsMatchedUpdated: result.numTargetRowsMatchedUpdated,
      numTargetRowsNotMatchedBySourceUpdated: result.numTargetRowsNotMatchedBySourceUpdated,
      numTargetRowsDeleted: deleted,
      numTargetRowsMatchedDeleted: result.numTargetRowsMatchedDeleted,
      numTargetRowsNotMatchedBySourceDeleted: result.numTargetRowsNotMatchedBySourceDeleted,
      numTargetRowsCopied: removal.copiedRows,
      numOutputRows: newRows + removal.copiedRows,
      numTargetFilesAdded: written.length + removal.addedFiles,
      numTargetFilesRemoved: removal.removedFiles,
      numTargetBytesAdded: written.reduce((n, f) => n + f.size, 0) + removal.addedBytes,
      numTargetBytesRemoved: removal.removedBytes,
      numTargetChangeFilesAdded: changes.files,
      numTargetDeletionVectorsAdded: removal.dvsAdded,
      numTargetDeletionVectorsUpdated: removal.dvsUpdated,
      numTargetDeletionVectorsRemoved: removal.dvsRemoved,
      numTargetFilesRead: files.length,
    }),
    changesData: true,
    preservesRowIds: rowTracking !== undefined,
    keptMatchedRows: keptMatchedRows(kept),
    ...(changeSketch === undefined ? {} : { changeSketch }),
    removedRowIds:
      rowTracking === undefined
        ? undefined
        : removedRowIdsOf(touched, {
            // Every image keeps its target row's id (the executor reads them from tracked files).
            preservedImageRows:
              result.written === undefined
                ? (result.rowIds ?? []).filter((id) => id !== null).length
                : updated,
          }),
  })
}

/**
 * Writes the new rows an executor returned instead of writing them: identity values for the
 * inserted ones first, then the images and the inserts (to separate files when `split`). A value
 * that does not fit its column fails here, before any DV is written.
 */
async function writeReturnedRows(
  ctx: OperationContext,
  result: MergeResult,
  how: {
    readonly target: ReturnType<typeof writeTargetOf>
    readonly split: boolean
    readonly updated: number
    readonly computed: ReturnType<typeof computedColumnWrite>
    readonly rowTracking: ReturnType<typeof rowTrackingToPreserve>
  },
): Promise<{ images: WrittenFile[]; inserts: WrittenFile[] }> {
  const newRows = how.computed.mergeRows(result.rows, result.numTargetRowsInserted)
  const writeNew = async (from: number, to: number): Promise<WrittenFile[]> =>
    to <= from
      ? []
      : ctx.engine.writer.writeRows({
          rows: from === 0 && to === newRows.length ? newRows : newRows.slice(from, to),
          target: how.target,
          signal: ctx.signal,
          rowTracking: how.rowTracking,
          rowIds: how.rowTracking === undefined ? undefined : result.rowIds?.slice(from, to),
        })
  const images = how.split ? await writeNew(0, how.updated) : []
  ctx.wrote(images.map((f) => f.key))
  const inserts = await writeNew(how.split ? how.updated : 0, result.rows.length)
  ctx.wrote(inserts.map((f) => f.key))
  return { images, inserts }
}

/**
 * The change data of a MERGE: of the rows leaving each touched file, those an update clause
 * acted on are preimages and the rest deletions; the images and inserts are their own files.
 */
function mergeChanges(
  touched: readonly TouchedFile[],
  updatedPositions: readonly (readonly number[])[],
  files: MergeResult['files'],
  images: readonly WrittenFile[],
  inserts: readonly WrittenFile[],
): Parameters<typeof changeDataActions>[1] {
  const updatedByKey = new Map(files.map((f, i) => [f.key, new Set(updatedPositions[i] ?? [])]))
  const preimages: TouchedFile[] = []
  const deleted: TouchedFile[] = []
  for (const t of touched) {
    const updated = updatedByKey.get(t.ref.key) ?? new Set<number>()
    preimages.push({ ...t, positions: t.positions.filter((p) => updated.has(p)) })
    deleted.push({ ...t, positions: t.positions.filter((p) => !updated.has(p)) })
  }
  return { preimages, deleted, postimages: images, inserted: inserts }
}

/**
 * Chooses the target files to read and records the read.
 *
 * The pruning predicate is implied by `on` (target-only conjuncts and source keys), so a pruned
 * file holds no row any source row matches; the recorded predicate is Delta's unless the
 * source-key flag asks for the narrower one.
 */
function readTargetFiles(
  ctx: OperationContext,
  plan: MergePlan,
  sourceRows: readonly Readonly<Record<string, unknown>>[],
): { readonly files: ReturnType<typeof pruneFiles>['files']; readonly mergeRead: MergeReadSet | undefined } {
  const snap = ctx.snapshot
  const all = snap.activeFiles()
  const bySource = plan.whenNotMatchedBySource.length > 0
  // One pass over the source rows for the pruning below and the Case 6 read set.
  const keys =
    !bySource || ctx.flags.mergeRowLevelConflicts
      ? sourceKeyPredicate(plan.keys, sourceRows, ctx.flags.mergeSourceKeyInSetThreshold)
      : undefined
  // Case 6: the rows read, as the checker tests a winner's changed rows against them.
  const mergeRead = ctx.flags.mergeRowLevelConflicts
    ? captureMergeReadSet(plan, sourceRows, {
        maxExact: ctx.flags.mergeRowLevelMaxExactKeys,
        inSetThreshold: ctx.flags.mergeSourceKeyInSetThreshold,
        sourceKeys: keys,
      })
    : undefined
  if (bySource) {
    // Every target row may be acted on: no source-key predicate, everything is read.
    ctx.recordRead(all, undefined, { mergeRead })
    return { files: all, mergeRead }
  }
  const parts = [plan.targetOnly, keys?.preFilter].filter((e): e is Expression => e !== undefined)
  const prune = parts.length === 0 ? undefined : conjunction(parts)
  const { files } = pruneFiles(snap, all, prune)
  if (ctx.flags.mergeSourceKeyReadPredicate && keys !== undefined) {
    const exactParts = [plan.targetOnly, keys.exact].filter((e): e is Expression => e !== undefined)
    const exactData =
      keys.exact === keys.preFilter
        ? undefined
        : splitPartitionPredicate(conjunction(exactParts), snap.partitionColumns).data
    ctx.recordRead(
      files,
      prune,
      exactData === undefined ? { mergeRead } : { exactPredicate: exactData, mergeRead },
    )
  } else {
    ctx.recordRead(files, plan.targetOnly, { mergeRead })
  }
  return { files, mergeRead }
}

function isUnconditionalDelete(plan: MergePlan): boolean {
  const only = plan.whenMatched[0]
  return only?.kind === 'delete' && only.condition === undefined
}

function multipleMatchError(
  plan: MergePlan,
  sourceRows: readonly Readonly<Record<string, unknown>>[],
  result: MergeResult,
): InvalidArgumentError {
  const m = result.multipleMatch!
  const first = sourceRows[m.sourceRows[0] ?? 0] ?? {}
  const key =
    plan.keys.length === 0
      ? `source rows ${m.sourceRows.join(', ')}`
      : plan.keys.map((k) => `${k.target} = ${showValue(first[k.source])}`).join(', ')
  return new InvalidArgumentError(
    `MERGE: source rows ${m.sourceRows.join(', ')} (${key}) match the same target row ` +
      `(file ${m.key}, row ${m.position}); Delta MERGE forbids multiple source rows matching one target row`,
    {
      argument: 'sourceRows',
      hint: 'De-duplicate the source rows on the join key, or narrow the ON condition.',
    },
  )
}

function showValue(v: unknown): string {
  if (typeof v === 'string') return `'${v}'`
  if (typeof v === 'bigint') return v.toString()
  if (v === undefined || v === null) return 'NULL'
  return String(v)
}

/** `commitInfo.operationParameters` as Delta writes them for MERGE. */
function mergeParameters(plan: MergePlan): Readonly<Record<string, unknown>> {
  const describe = (kind: string, condition: Expression | undefined): Record<string, string> =>
    condition === undefined ? { actionType: kind } : { actionType: kind, predicate: toSql(condition) }
  return {
    predicate: JSON.stringify(toSql(plan.on)),
    matchedPredicates: JSON.stringify(plan.whenMatched.map((c) => describe(c.kind, c.condition))),
    notMatchedPredicates: JSON.stringify(plan.whenNotMatched.map((c) => describe('insert', c.condition))),
    notMatchedBySourcePredicates: JSON.stringify(
      plan.whenNotMatchedBySource.map((c) => describe(c.kind, c.condition)),
    ),
  }
}
