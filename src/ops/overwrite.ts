/**
 * Overwrite: a write that replaces what it covers, as Spark's `mode("overwrite")` does (operation
 * `WRITE`, `mode: Overwrite`), in three forms:
 * - the whole table (no predicate): every live file is removed;
 * - `replaceWhere`: the rows matching a predicate are removed (whole files when the predicate names
 *   partition columns only or every live row of a file matches, else deletion vectors or a
 *   copy-on-write rewrite, as DELETE does), and a new row the predicate does not select is refused;
 * - dynamic partition overwrite: the partitions the new rows land in are emptied first.
 *
 * What it reads, for the conflict checker, is Delta's: the whole table (a `TRUE` read of every
 * live file), the predicate and the files it may select, or the touched partitions and their
 * files. A concurrent append into that range aborts it; one elsewhere can reconcile through
 * Case 1; a concurrent delete of a file it removes aborts it.
 */
import type { ColumnSpec, DataFileRef } from '../engine/data-plane.js'
import type { WrittenFile } from '../engine/data-writer.js'
import { InvalidArgumentError, ReplaceWhereMismatchError } from '../errors/index.js'
import {
  col,
  conjunction,
  disjunction,
  type Expression,
  isBoolean,
  isNull,
  nullSafeEq,
} from '../expressions/ast.js'
import type { DataType } from '../expressions/data-types.js'
import { parseWhere } from '../expressions/parse-where.js'
import { toSql } from '../expressions/to-sql.js'
import { coerceRaw, literalOfValue } from '../expressions/values.js'
import type { AddFile } from '../protocol/actions.js'
import { canWriteDeletionVectors } from '../protocol/table-features.js'
import { targetFileSize } from '../protocol/table-properties.js'
import { columnSpecs } from '../scan/column-specs.js'
import { pruneFiles, snapshotColumns } from '../scan/prune-files.js'
import type { Snapshot } from '../snapshot/snapshot.js'
import { checkRowCopyingSupported, rowTrackingToPreserve } from '../txn/row-copying.js'
import type { OperationContext, PreparedOperation } from '../txn/staged-operation.js'
import { changeDataActions } from './change-data.js'
import { computedColumnWrite } from './computed-columns.js'
import { checkNotAppendOnly, matchRows, type RowRemoval, removeRows } from './dml-support.js'
import { evolvedTarget, type SchemaEvolution, withSchemaEvolution } from './schema-merge.js'
import { addFileOf, writeTargetOf } from './write-support.js'

/** One batch of rows: plain objects keyed by column name. */
export type RowBatch = readonly Readonly<Record<string, unknown>>[]

/** Batches of rows, read one at a time (memory holds one batch). */
export type RowBatches = Iterable<RowBatch> | AsyncIterable<RowBatch>

/** What an overwrite replaces, and how its files are written. */
export interface OverwriteOptions {
  /** Bytes per new file; wins over the table's `delta.targetFileSize`. */
  readonly targetFileSize?: number | undefined
  /** Replace only the rows matching this predicate; every new row must match it. */
  readonly replaceWhere?: string | Expression | undefined
  /**
   * `'dynamic'`: replace only the partitions the new rows land in (on an unpartitioned table the
   * whole table, as Delta does); `'static'` (default): the whole table, or `replaceWhere`.
   */
  readonly partitionOverwriteMode?: 'static' | 'dynamic' | undefined
}

/**
 * Builds an overwrite: writes the batches to new files and removes what they replace, as one
 * operation (nothing is visible before the commit).
 *
 * @param ctx - the transaction's context
 * @param batches - the new rows, batch by batch; each is checked against the schema before it is
 *   written, and with `replaceWhere` against the predicate after
 * @param options - see {@link OverwriteOptions}
 * @param evolution - the schema change the overwrite commits with its data (`schemaMode`): the
 *   rows are written against its schema and partitioning, its actions go first
 * @returns the operation (`WRITE`, `mode: Overwrite`)
 * @throws {InvalidArgumentError} for `replaceWhere` together with dynamic partition overwrite, an
 *   unknown column in the predicate, or rows that do not fit the schema
 * @throws {InvalidPredicateError} when `replaceWhere` does not parse
 * @throws {ReplaceWhereMismatchError} naming one new row the predicate does not select
 * @throws {UnsupportedError} on an append-only table
 */
export async function buildOverwrite(
  ctx: OperationContext,
  batches: RowBatches,
  options: OverwriteOptions = {},
  evolution?: SchemaEvolution,
): Promise<PreparedOperation> {
  const snap = ctx.snapshot
  checkNotAppendOnly(snap, 'An overwrite')
  if (options.replaceWhere !== undefined && options.partitionOverwriteMode === 'dynamic') {
    throw new InvalidArgumentError(
      "replaceWhere cannot be combined with partitionOverwriteMode: 'dynamic': both say what the overwrite replaces",
      {
        argument: 'options.replaceWhere',
        hint: "Pass replaceWhere alone (it replaces the rows it selects) or partitionOverwriteMode: 'dynamic' alone (it replaces the partitions the new rows touch).",
      },
    )
  }
  const predicate = parseWhere(options.replaceWhere, 'options.replaceWhere')
  // Recorded as the caller wrote it, or an expression tree printed back.
  const predicateText =
    predicate === undefined
      ? undefined
      : typeof options.replaceWhere === 'string'
        ? options.replaceWhere
        : toSql(predicate)
  // Unknown columns fail before anything is written.
  const pruned = predicate === undefined ? undefined : pruneFiles(snap, snap.activeFiles(), predicate)
  // Delta ignores dynamic partition overwrite on an unpartitioned table: the whole table is replaced.
  const dynamic = options.partitionOverwriteMode === 'dynamic' && snap.partitionColumns.length > 0
  const fileSize = options.targetFileSize ?? targetFileSize(snap.properties)
  const target = evolvedTarget(writeTargetOf(snap, fileSize), evolution)
  // The new files are read back against the schema they were written with.
  const specs = evolvedSpecs(columnSpecs(snap, undefined), evolution)
  // A row is outside when the predicate is false or NULL for it.
  const outside = predicate === undefined ? undefined : isBoolean(predicate, true, true)
  const written: WrittenFile[] = []
  const computed = computedColumnWrite(snap, target.schema)
  for await (const rows of batches) {
    ctx.signal?.throwIfAborted()
    if (rows.length === 0) continue
    const files = await ctx.engine.writer.writeRows({ rows: computed.rows(rows), target, signal: ctx.signal })
    ctx.wrote(files.map((f) => f.key))
    for (const f of files) written.push(f)
    if (outside !== undefined) await checkRowsInside(ctx, files, outside, specs, predicateText ?? '')
  }
  let removal: RowRemoval
  if (pruned !== undefined && predicate !== undefined) {
    removal = await removeMatching(ctx, pruned.files, predicate)
  } else if (dynamic) {
    removal = await removePartitions(ctx, written)
  } else {
    const all = snap.activeFiles()
    ctx.recordRead(all, undefined)
    removal = await removeRows(ctx, [], all)
  }
  // Change data feed: a replaceWhere that took rows out of files records them, and then the new rows.
  const changes = await changeDataActions(ctx, {
    deleted: removal.touched,
    inserted: written,
    schema: evolution?.schema,
  })
  const now = ctx.now()
  const adds = written.map((f) => ({ add: addFileOf(f, now, true) }))
  const op = withSchemaEvolution(
    {
      operation: 'WRITE',
      parameters: {
        mode: 'Overwrite',
        partitionBy: JSON.stringify(target.partitionColumns),
        ...(predicateText === undefined ? {} : { predicate: predicateText }),
        ...(dynamic ? { isDynamicPartitionOverwrite: 'true' } : {}),
      },
      actions: [...removal.actions, ...adds, ...changes.actions],
      metrics: {
        numFiles: written.length,
        numOutputRows: written.reduce((n, f) => n + f.numRecords, 0),
        numOutputBytes: written.reduce((n, f) => n + f.size, 0),
        numRemovedFiles: removal.removedFiles,
        numRemovedBytes: removal.removedBytes,
        numDeletedRows: removal.removedRows,
        numCopiedRows: removal.copiedRows,
        numAddedFiles: written.length + removal.addedFiles,
        numDeletionVectorsAdded: removal.dvsAdded + removal.dvsUpdated,
      },
      changesData: true,
      preservesRowIds: rowTrackingToPreserve(snap) !== undefined,
    },
    evolution,
  )
  return computed.finish(op)
}

// === Internals ===

/**
 * The column specs of the snapshot with the types of an evolved schema (widened columns); the
 * predicate of `replaceWhere` names only columns the snapshot has.
 */
function evolvedSpecs(specs: readonly ColumnSpec[], evolution: SchemaEvolution | undefined): ColumnSpec[] {
  if (evolution === undefined) return [...specs]
  const types = new Map(evolution.schema.fields.map((f) => [f.name, f.type]))
  return specs.map((c) => {
    const type = types.get(c.name)
    return type === undefined || type === c.type ? c : Object.freeze({ ...c, type })
  })
}

/**
 * Refuses new files holding a row the replaceWhere predicate does not select (false or NULL), as
 * Spark's constraint on the written data does; the data plane evaluates it, so it agrees with the
 * rows DELETE would match.
 *
 * @throws {ReplaceWhereMismatchError} with the first such row
 */
async function checkRowsInside(
  ctx: OperationContext,
  files: readonly WrittenFile[],
  outside: Expression,
  specs: readonly ColumnSpec[],
  predicateText: string,
): Promise<void> {
  if (files.length === 0) return
  const refs: DataFileRef[] = files.map((f) =>
    Object.freeze({ key: f.key, partitionValues: f.partitionValues }),
  )
  const stream = ctx.engine.data.scan({
    files: refs,
    columns: specs,
    predicateColumns: specs,
    predicate: outside,
    batchSize: 1,
    signal: ctx.signal,
  })
  for await (const batch of stream) {
    const row = batch[0]
    if (row !== undefined) throw new ReplaceWhereMismatchError(predicateText, row)
  }
}

/** Takes the rows matching `predicate` out of `candidates`, as DELETE does (and records the read). */
async function removeMatching(
  ctx: OperationContext,
  candidates: readonly AddFile[],
  predicate: Expression,
): Promise<RowRemoval> {
  const snap = ctx.snapshot
  const { data } = ctx.recordRead(candidates, predicate)
  if (data === undefined) return removeRows(ctx, [], candidates)
  // Rows that stay in a file are copied without deletion vectors, with their row ids when row
  // tracking is enabled.
  if (!canWriteDeletionVectors(snap.protocol, snap.metadata)) {
    checkRowCopyingSupported(snap, 'WRITE', { preservesRowIds: true })
  }
  return removeRows(ctx, await matchRows(ctx, candidates, predicate))
}

/**
 * Removes every live file of the partitions the new files land in, and records the read Delta's
 * `filterFiles(newFiles)` records: a predicate selecting those partitions, and their files.
 */
async function removePartitions(ctx: OperationContext, written: readonly WrittenFile[]): Promise<RowRemoval> {
  const snap = ctx.snapshot
  const touched = new Map<string, Readonly<Record<string, string | null>>>()
  for (const f of written) touched.set(partitionKey(snap, f.partitionValues), f.partitionValues)
  if (touched.size === 0) return removeRows(ctx, [], [])
  const files = snap.activeFiles().filter((f) => touched.has(partitionKey(snap, f.partitionValues)))
  ctx.recordRead(files, partitionsPredicate(snap, [...touched.values()]))
  return removeRows(ctx, [], files)
}

/** A map key for a file's partition: its value of each partition column, in the table's order. */
function partitionKey(snap: Snapshot, values: Readonly<Record<string, string | null>>): string {
  return JSON.stringify(partitionSpecs(snap).map((c) => normalized(values[c.physicalName])))
}

/** The log writes a null partition value as null or as an empty string; both are NULL. */
function normalized(v: string | null | undefined): string | null {
  return v === undefined || v === '' ? null : v
}

function partitionSpecs(snap: Snapshot): ColumnSpec[] {
  return columnSpecs(snap, snap.partitionColumns)
}

/**
 * The predicate selecting exactly `partitions` (an OR of one conjunction per partition), or
 * undefined (a `TRUE` read) when a value cannot be typed: a read that selects more never hides a
 * conflict.
 */
function partitionsPredicate(
  snap: Snapshot,
  partitions: readonly Readonly<Record<string, string | null>>[],
): Expression | undefined {
  const specs = partitionSpecs(snap)
  const columns = snapshotColumns(snap)
  const terms: Expression[] = []
  for (const values of partitions) {
    const parts: Expression[] = []
    for (const c of specs) {
      const raw = normalized(values[c.physicalName])
      if (raw === null) {
        parts.push(isNull(col([c.name])))
        continue
      }
      const type = columns.resolve([c.name])?.type
      const literal = type === undefined ? undefined : partitionLiteral(raw, type)
      if (literal === undefined) return undefined
      parts.push(nullSafeEq(col([c.name]), literal))
    }
    terms.push(conjunction(parts))
  }
  return disjunction(terms)
}

/**
 * A literal of the partition column's type for a partition value as the log stores it, or
 * undefined when the text does not read back as exactly one value of the type (a timestamp
 * without a zone, written in the writer's zone, is one of those).
 */
function partitionLiteral(raw: string, type: DataType): Expression | undefined {
  if (type.name === 'timestamp') return undefined
  const v = coerceRaw(raw, type)
  return v === null || v === undefined ? undefined : literalOfValue(v, type.name)
}
