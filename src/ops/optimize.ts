import type { RelocatedSource, RelocationCapture } from '../conflict/case5a-capture.js'
import type { DataFileRef } from '../engine/data-plane.js'
import type { CompactionOutput, WrittenFile } from '../engine/data-writer.js'
import {
  ClusteringWithZOrderByError,
  ConcurrentModificationError,
  InvalidArgumentError,
  StorageError,
  UnsupportedError,
} from '../errors/index.js'
import { columnsOf, type Expression } from '../expressions/ast.js'
import { parseWhere } from '../expressions/parse-where.js'
import { toSql } from '../expressions/to-sql.js'
import { fileActionKey } from '../log/replay.js'
import { type Action, type AddFile, createAddFile } from '../protocol/actions.js'
import { type TableClustering, tableClustering } from '../protocol/clustering.js'
import { planCompositionTags, withCompositionTags } from '../protocol/composition-tags.js'
import { tombstoneOf } from '../protocol/file-action-rewrites.js'
import { rowTrackingState } from '../protocol/row-tracking.js'
import { fieldByName, isPrimitiveType } from '../protocol/schema.js'
import { parseStats } from '../protocol/stats.js'
import { dataFileRefs } from '../scan/data-file-refs.js'
import { pruneFiles } from '../scan/prune-files.js'
import { checkFilesTrackRows } from '../scan/row-tracking-scan.js'
import type { Snapshot } from '../snapshot/snapshot.js'
import type { CommitResult } from '../txn/commit-result.js'
import { checkRowCopyingSupported } from '../txn/row-copying.js'
import type { OperationContext, PreparedOperation, StagedOperation } from '../txn/staged-operation.js'
import type { TransactionCore } from '../txn/transaction.js'
import { appendAll } from '../util/arrays.js'
import { addFileOf, writeTargetOf } from './write-support.js'

/** Delta's `optimize.maxFileSize` default: bins (and output files) of up to 1 GiB. */
export const DEFAULT_OPTIMIZE_TARGET_FILE_SIZE = 1024 * 1024 * 1024
/** Delta's `optimize.maxDeletedRowsRatio` default. */
export const DEFAULT_MAX_DELETED_ROWS_RATIO = 0.05

/** Options of an OPTIMIZE. */
export interface OptimizeOptions {
  /**
   * The size a bin of source files may reach, in bytes (sum of the sources' sizes); each bin
   * becomes one file. Default 1 GiB (Delta's `optimize.maxFileSize`).
   */
  readonly targetFileSize?: number | undefined
  /**
   * Files of at least this many bytes are left alone unless their deletion vector hides too
   * many rows. Default: `targetFileSize` (Delta's `optimize.minFileSize` equals its max).
   */
  readonly minFileSize?: number | undefined
  /** A file whose DV hides more than this share of its rows is rewritten whatever its size (default 0.05). */
  readonly maxDeletedRowsRatio?: number | undefined
  /**
   * Z-order the rows of each selected partition by these (non-partition, primitive) columns. Not
   * on a clustered table, whose OPTIMIZE clusters by its clustering columns.
   */
  readonly zOrderBy?: readonly string[] | undefined
  /** A predicate over partition columns selecting the partitions to optimize. */
  readonly where?: string | Expression | undefined
}

/** How many times OPTIMIZE re-stages its outputs after a conflict. */
const OPTIMIZE_MAX_RETRIES = 3

/** A built OPTIMIZE, with what its own retry needs. */
export interface OptimizeOperation extends PreparedOperation {
  /** Every source file removed, as read (with its deletion vector). */
  readonly sources: readonly AddFile[]
  /** The partition predicate, or undefined for the whole table. */
  readonly predicate: Expression | undefined
}

/**
 * A Z-order OPTIMIZE keeps its permutation (for Case 5a) up to this many relocated rows, about
 * 6 to 8 bytes each; above it none is kept and a conflict with a DML winner aborts.
 */
export const Z_ORDER_PERMUTATION_CAP = 32 * 1024 * 1024

/**
 * OPTIMIZE: bin-packing compaction, or a Z-order rewrite with `zOrderBy`. Every add and remove
 * has `dataChange = false`; the read recorded is each bin's files and the partition predicate
 * (rlc-spec 2.4).
 *
 * Compaction: per partition, the files smaller than `minFileSize` (and any file whose DV hides
 * more than `maxDeletedRowsRatio` of its rows) are sorted by size and packed greedily into bins
 * of up to `targetFileSize` bytes. A bin of one file is compacted only when that file has a DV
 * (its deleted rows are purged). Each bin becomes exactly one output holding the live rows of its
 * sources in bin order, inside a source in `file_row_number` order; a bin without live rows
 * becomes no file. Each source's tombstone carries the composition tags `compactedInto` /
 * `compactionInfo` (rlc-spec 7.3, 7.4) whenever the capture is trustworthy: one output, the
 * sources in bin order, each one contiguous at the offset the data plane reports, every source
 * with `numRecords`, and the written row counts equal to the live counts. The reconciliation
 * flags do not gate the tags (design decision 5).
 *
 * Z-order: all files of each selected partition are rewritten, rows sorted by the interleaved
 * bits of their columns' value ranks (NULL first), into files of about `targetFileSize`; the
 * data plane ranks, sorts and writes, one partition at a time. Z-order writes no composition
 * tags (a permuted source has no contiguous run): it keeps its permutation in memory instead
 * (up to {@link Z_ORDER_PERMUTATION_CAP} rows), which Case 5a remaps a winner's deletions
 * through.
 *
 * Clustered table (the `clustering` feature, or Databricks' early `liquid`): OPTIMIZE clusters by
 * the table's clustering columns with the same Z-order curve, and records them as Delta does
 * (`clusterBy`, with an empty `zOrderBy`). As the protocol asks, it reclusters only unclustered
 * files (no `clusteringProvider`) and its own (provider `delta-rlc`), and marks what it
 * writes with its provider on a `clustering` table; with no unclustered file and no deletion
 * vector among them there is nothing to do. A clustered table without clustering columns is
 * bin-packed.
 *
 * With row tracking enabled, all write every copied row's stable row id and commit version to
 * the materialized columns (design beyond-rlc 7.3, W1), so the commit is tagged as preserving.
 *
 * @param ctx - the transaction's context
 * @param options - sizes, Z-order columns, partition predicate
 * @returns the staged OPTIMIZE (no actions when there is nothing to do)
 * @throws {InvalidArgumentError} for a bad size, a predicate over non-partition columns, or an
 *   unknown, partition, repeated or non-primitive Z-order column
 * @throws {ClusteringWithZOrderByError} for Z-order columns on a clustered table
 * @throws {UnsupportedError} when a clustering column is nested (or names no column)
 * @throws {InvalidPredicateError} when the predicate does not parse
 */
export async function buildOptimize(
  ctx: OperationContext,
  options: OptimizeOptions = {},
): Promise<OptimizeOperation> {
  if (options === null || typeof options !== 'object') {
    throw new InvalidArgumentError('optimize expects an options object', { argument: 'options' })
  }
  const snap = ctx.snapshot
  const targetFileSize =
    positiveSize(options.targetFileSize, 'targetFileSize') ?? DEFAULT_OPTIMIZE_TARGET_FILE_SIZE
  const minFileSize = positiveSize(options.minFileSize, 'minFileSize') ?? targetFileSize
  const ratio = options.maxDeletedRowsRatio ?? DEFAULT_MAX_DELETED_ROWS_RATIO
  if (typeof ratio !== 'number' || !(ratio >= 0 && ratio <= 1)) {
    throw new InvalidArgumentError(`maxDeletedRowsRatio must be a number in [0, 1], got ${String(ratio)}`, {
      argument: 'maxDeletedRowsRatio',
    })
  }
  const clustering = tableClustering(snap.protocol, snap.metadata, snap.state.domainMetadata, snap.schema)
  const clusterBy = clustering === undefined ? undefined : clusteringColumns(clustering, options.zOrderBy)
  // A clustered table's rows are ordered on the same curve as a Z-order, by its clustering columns.
  const zOrderBy = zOrderColumns(snap, clusterBy ?? options.zOrderBy)
  // Bin-packing, Z-order and clustering write each copied row's stable id and commit version to
  // the materialized columns when row tracking is enabled.
  checkRowCopyingSupported(snap, zOrderBy.length > 0 ? 'OPTIMIZE ZORDER BY' : 'OPTIMIZE', {
    preservesRowIds: true,
  })
  const tracking = rowTrackingState(snap.protocol, snap.metadata)
  const preservesRowIds = tracking.enabled
  const rowTracking = preservesRowIds
    ? {
        materializedRowIdColumn: tracking.materializedRowIdColumn,
        materializedRowCommitVersionColumn: tracking.materializedRowCommitVersionColumn,
      }
    : undefined
  const predicate = parseWhere(options.where, 'options.where')
  if (predicate !== undefined) checkPartitionOnly(snap, predicate)
  const { files: pruned } = pruneFiles(snap, snap.activeFiles(), predicate)
  const selected = clusterBy === undefined ? pruned : reclusterable(pruned, clustering?.provider)
  const partitions = groupByPartition(selected)
  const parameters = {
    predicate: JSON.stringify(predicate === undefined ? [] : [toSql(predicate)]),
    // Delta records a clustering OPTIMIZE with an empty zOrderBy and the columns under clusterBy.
    zOrderBy: JSON.stringify(clusterBy === undefined ? zOrderBy : []),
    ...(clusterBy === undefined ? {} : { clusterBy: JSON.stringify(clusterBy) }),
    auto: false,
  }
  const bins =
    zOrderBy.length > 0
      ? partitions.filter((files) => clusterBy === undefined || !isClustered(files, clustering?.provider))
      : partitions.flatMap((files) => packBins(files, minFileSize, targetFileSize, ratio))
  const sources = bins.flat()
  ctx.recordRead(sources, predicate)
  const base = {
    operation: 'OPTIMIZE',
    parameters,
    changesData: false,
    predicate,
    sources: Object.freeze(sources),
    preservesRowIds,
  }
  if (bins.length === 0) {
    return { ...base, actions: [], metrics: optimizeMetrics(selected.length, 0, [], [], 0) }
  }

  const now = ctx.now()
  const actions: Action[] = []
  const added: WrittenFile[] = []
  let tagged = 0
  let relocation: RelocationCapture | undefined
  if (preservesRowIds) checkFilesTrackRows(sources)
  if (zOrderBy.length > 0) {
    // W3/S11: the tombstones are plain (read-time DV and row-tracking fields, no composition
    // tags): the rows are permuted, so no contiguous run describes where they went.
    const relocated = new Map<string, RelocatedSource>()
    let notKept: string | undefined
    let kept = 0
    for (const files of bins) {
      const refs = await dataFileRefs(ctx.engine, files, ctx.signal)
      const out = await ctx.engine.writer.zOrder({
        sources: refs,
        columns: zOrderBy,
        target: writeTargetOf(snap, targetFileSize),
        signal: ctx.signal,
        rowTracking,
        keepPermutationUpTo: notKept === undefined ? Z_ORDER_PERMUTATION_CAP - kept : 0,
        beforeWrite: (rows) => checkRowsRead(files, rows),
      })
      ctx.wrote(out.files.map((f) => f.key))
      appendAll(added, out.files)
      for (const f of files) actions.push({ remove: tombstoneOf(f, BigInt(now), false) })
      const permutation = out.permutation
      const live = out.liveRows.reduce((n, c) => n + c, 0)
      if (permutation === undefined) {
        if (live > 0) notKept ??= `more than ${Z_ORDER_PERMUTATION_CAP} relocated rows`
        continue
      }
      kept += live
      const paths = Object.freeze(out.files.map((f) => f.path))
      files.forEach((f, i) => {
        relocated.set(
          f.path,
          Object.freeze({
            outputs: paths,
            readDeletionVector: f.deletionVector,
            outputIndex: permutation.outputIndex[i] as Uint16Array | Uint32Array,
            outputRow: permutation.outputRow[i] as Uint32Array,
          }),
        )
      })
    }
    relocation = Object.freeze(
      notKept === undefined ? { sources: relocated } : { sources: undefined, notKept },
    )
  } else {
    const refs = await Promise.all(bins.map((bin) => dataFileRefs(ctx.engine, bin, ctx.signal)))
    const outputs = await ctx.engine.writer.compact({
      bins: refs,
      target: writeTargetOf(snap, targetFileSize),
      signal: ctx.signal,
      rowTracking,
    })
    for (const o of outputs) if (o.file !== null) added.push(o.file)
    ctx.wrote(added.map((f) => f.key))
    bins.forEach((bin, b) => {
      const out = outputs[b] as CompactionOutput
      const tags = trustedCompositionTags(out, bin, refs[b] as DataFileRef[])
      for (const f of bin) {
        const tombstone = tombstoneOf(f, BigInt(now), false)
        const t = tags?.get(f.path)
        actions.push({ remove: t === undefined ? tombstone : withCompositionTags(tombstone, t) })
        if (t !== undefined) tagged++
      }
    })
  }
  // The protocol names the implementation that clustered a file in its add; bin-packing clusters nothing.
  const provider = zOrderBy.length > 0 ? clustering?.provider : undefined
  for (const f of added) {
    const add = addFileOf(f, now, false)
    actions.push({
      add: provider === undefined ? add : createAddFile({ ...add, clusteringProvider: provider }),
    })
  }
  return {
    ...base,
    ...(relocation === undefined ? {} : { relocation }),
    actions,
    metrics: optimizeMetrics(selected.length, bins.length, sources, added, tagged),
  }
}

/**
 * Commits a staged OPTIMIZE. When the commit meets a conflict, the same output files are staged
 * again in a transaction on the latest snapshot, up to {@link OPTIMIZE_MAX_RETRIES} times, but
 * only while every source file (path and deletion vector) is still live and the schema and
 * partitioning are unchanged (rlc-spec 2.4); otherwise the conflict is thrown and the outputs
 * are deleted.
 *
 * @param txn - the transaction `op` is staged in, and nothing else
 * @param op - the staged OPTIMIZE
 * @param begin - begins a transaction on the latest snapshot
 * @returns the commit
 * @throws {ConcurrentModificationError} when a conflict cannot be retried
 */
export async function commitOptimize(
  txn: TransactionCore,
  op: StagedOperation<OptimizeOperation>,
  begin: () => Promise<TransactionCore>,
): Promise<CommitResult> {
  let current = txn
  for (let retry = 0; ; retry++) {
    // A retry commits the same outputs: they must outlive this attempt's conflict.
    if (retry < OPTIMIZE_MAX_RETRIES) current.keepWrittenFilesOnConflict()
    try {
      return await current.commit()
    } catch (err) {
      if (!(err instanceof ConcurrentModificationError) || retry >= OPTIMIZE_MAX_RETRIES) throw err
      let next: TransactionCore | undefined
      try {
        next = await restageOptimize(current.snapshot, op, begin)
      } finally {
        if (next === undefined) await current.abort()
      }
      if (next === undefined) throw err
      current = next
    }
  }
}

/** A new transaction holding `op` again when all its sources are still live, else undefined. */
async function restageOptimize(
  previous: Snapshot,
  op: StagedOperation<OptimizeOperation>,
  begin: () => Promise<TransactionCore>,
): Promise<TransactionCore | undefined> {
  const next = await begin()
  const snap = next.snapshot
  if (
    snap.metadata.schemaString !== previous.metadata.schemaString ||
    JSON.stringify(snap.partitionColumns) !== JSON.stringify(previous.partitionColumns)
  ) {
    return undefined
  }
  const live = new Set(snap.activeFiles().map((f) => fileActionKey(f.path, f.deletionVector)))
  if (!op.sources.every((f) => live.has(fileActionKey(f.path, f.deletionVector)))) return undefined
  await next.stage(async (ctx) => {
    ctx.recordRead(op.sources, op.predicate)
    // The outputs pass to the new transaction: it deletes them should this retry fail too.
    ctx.wrote(op.writtenKeys)
    return op
  })
  return next
}

/**
 * The composition tags of one compacted bin, or undefined when the capture cannot be trusted
 * (rlc-spec 7.3): then the tombstones stay plain and a conflict aborts as in file-level Delta.
 *
 * @param out - what the data plane wrote for the bin
 * @param bin - the bin's source files, in bin order
 * @param refs - their data file references, in the same order
 * @returns source path to tags, or undefined
 */
export function trustedCompositionTags(
  out: CompactionOutput,
  bin: readonly AddFile[],
  refs: readonly DataFileRef[],
): ReadonlyMap<string, Readonly<Record<string, string>>> | undefined {
  if (out.file === null || out.sources.length !== bin.length || refs.length !== bin.length) return undefined
  let offset = 0
  for (let i = 0; i < bin.length; i++) {
    const s = out.sources[i]!
    if (s.key !== refs[i]!.key || s.rowOffsetInTarget !== offset) return undefined
    const physical = parseStats(bin[i]!.stats)?.numRecords
    if (physical === undefined || BigInt(s.physicalRowCount) !== physical) return undefined
    offset += s.rowCount
  }
  if (offset !== out.file.numRecords) return undefined
  return planCompositionTags(
    out.file.path,
    bin,
    out.sources.map((s) => s.rowCount),
  )
}

// === Planning ===

function positiveSize(value: unknown, argument: string): number | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new InvalidArgumentError(
      `${argument} must be a positive whole number of bytes, got ${String(value)}`,
      {
        argument,
      },
    )
  }
  return value
}

/**
 * The columns a clustered table's OPTIMIZE clusters by: its clustering columns, which must all be
 * top-level ones (the data plane orders by top-level columns).
 *
 * @throws {ClusteringWithZOrderByError} when Z-order columns are asked for as well
 * @throws {UnsupportedError} for a clustering column that is nested or names no column
 */
function clusteringColumns(clustering: TableClustering, zOrderBy: unknown): readonly string[] {
  if (zOrderBy !== undefined && !(Array.isArray(zOrderBy) && zOrderBy.length === 0)) {
    const asked = Array.isArray(zOrderBy) ? zOrderBy.map(String) : [String(zOrderBy)]
    const names = 'unresolved' in clustering.columns ? [] : clustering.columns
    throw new ClusteringWithZOrderByError(names, asked)
  }
  const columns = clustering.columns
  if ('unresolved' in columns) {
    throw new UnsupportedError(
      `OPTIMIZE cannot cluster this table: its clustering column ${JSON.stringify(columns.unresolved)} is not a top-level column of the schema (clustering by nested columns is not implemented)`,
      { hint: 'Appends, DELETE, UPDATE and MERGE work on this table; only its OPTIMIZE is refused.' },
    )
  }
  return columns
}

/**
 * The files a clustering implementation may recluster (protocol, "Clustered Table"): unclustered
 * ones (no `clusteringProvider`) and those it clustered itself. Files another implementation
 * clustered stay as they are.
 */
function reclusterable(files: readonly AddFile[], provider: string | undefined): AddFile[] {
  return files.filter((f) => f.clusteringProvider === undefined || f.clusteringProvider === provider)
}

/**
 * Whether a partition's files are already clustered by this implementation, with no row to purge:
 * reclustering them would write the same layout again.
 */
function isClustered(files: readonly AddFile[], provider: string | undefined): boolean {
  return (
    provider !== undefined &&
    files.every((f) => f.clusteringProvider === provider && f.deletionVector === undefined)
  )
}

function zOrderColumns(snap: Snapshot, raw: unknown): string[] {
  if (raw === undefined) return []
  if (!Array.isArray(raw) || raw.some((c) => typeof c !== 'string')) {
    throw new InvalidArgumentError('zOrderBy must be an array of column names', { argument: 'zOrderBy' })
  }
  const out: string[] = []
  const partitions = new Set(snap.partitionColumns.map((c) => c.toLowerCase()))
  for (const name of raw as string[]) {
    const field = fieldByName(snap.schema, name)
    if (field === undefined) {
      throw new InvalidArgumentError(`Unknown Z-order column '${name}'`, {
        argument: 'zOrderBy',
        hint: `The table has: ${snap.schema.fields.map((f) => f.name).join(', ')}`,
      })
    }
    if (partitions.has(field.name.toLowerCase())) {
      throw new InvalidArgumentError(
        `'${field.name}' is a partition column; Z-order by data columns (partitions are already clustered)`,
        { argument: 'zOrderBy' },
      )
    }
    if (!isPrimitiveType(field.type)) {
      throw new InvalidArgumentError(`Z-order column '${field.name}' must have a primitive type`, {
        argument: 'zOrderBy',
      })
    }
    if (out.includes(field.name)) {
      throw new InvalidArgumentError(`Z-order column '${field.name}' is listed twice`, {
        argument: 'zOrderBy',
      })
    }
    out.push(field.name)
  }
  return out
}

function checkPartitionOnly(snap: Snapshot, predicate: Expression): void {
  const partitions = new Set(snap.partitionColumns.map((c) => c.toLowerCase()))
  for (const path of columnsOf(predicate)) {
    if (path.length !== 1 || !partitions.has((path[0] as string).toLowerCase())) {
      throw new InvalidArgumentError(
        `OPTIMIZE can only select partitions, but its predicate references '${path.join('.')}', which is not a partition column`,
        {
          argument: 'where',
          hint: `Partition columns: ${snap.partitionColumns.join(', ') || '(none: the table is not partitioned)'}`,
        },
      )
    }
  }
}

function groupByPartition(files: readonly AddFile[]): AddFile[][] {
  const groups = new Map<string, AddFile[]>()
  for (const f of files) {
    const key = JSON.stringify(
      Object.entries(f.partitionValues)
        .map(([k, v]) => [k, v === '' ? null : v])
        .sort(([a], [b]) => ((a as string) < (b as string) ? -1 : 1)),
    )
    const g = groups.get(key)
    if (g === undefined) groups.set(key, [f])
    else g.push(f)
  }
  return [...groups.values()]
}

/** Delta's greedy bin packing over one partition's small (or DV-heavy) files. */
function packBins(
  files: readonly AddFile[],
  minFileSize: number,
  maxBinSize: number,
  ratio: number,
): AddFile[][] {
  const candidates = files
    .filter((f) => Number(f.size) < minFileSize || deletedRatio(f) > ratio)
    .sort((a, b) =>
      a.size < b.size ? -1 : a.size > b.size ? 1 : a.path < b.path ? -1 : a.path > b.path ? 1 : 0,
    )
  const bins: AddFile[][] = []
  let bin: AddFile[] = []
  let size = 0
  for (const f of candidates) {
    if (bin.length > 0 && size + Number(f.size) > maxBinSize) {
      bins.push(bin)
      bin = []
      size = 0
    }
    bin.push(f)
    size += Number(f.size)
  }
  if (bin.length > 0) bins.push(bin)
  return bins.filter((b) => b.length > 1 || b[0]?.deletionVector !== undefined)
}

function deletedRatio(f: AddFile): number {
  const dv = f.deletionVector
  if (dv === undefined) return 0
  const n = parseStats(f.stats)?.numRecords
  if (n === undefined || n === 0n) return 1
  return Number(dv.cardinality) / Number(n)
}

// === Z-order ===

/**
 * The rows a Z-order read must have returned, from the log: each source's `numRecords` less its
 * deletion vector's cardinality. The sources are removed by the commit, so a read that came back
 * short (or long) would drop (or double) rows for good; it fails before anything is written. A
 * file without `numRecords` leaves the count unknown, and the check is skipped.
 *
 * @throws {StorageError} when the read differs from the log: the data files on storage are not
 *   the ones the log describes
 */
function checkRowsRead(files: readonly AddFile[], read: number): void {
  let live = 0n
  for (const f of files) {
    const n = parseStats(f.stats)?.numRecords
    if (n === undefined) return
    live += n - (f.deletionVector?.cardinality ?? 0n)
  }
  if (BigInt(read) === live) return
  throw new StorageError(
    `Z-order OPTIMIZE read ${read} rows from ${files.length} data file${files.length === 1 ? '' : 's'} whose log entries count ${live} live rows; nothing was written`,
    {
      path: files[0]?.path,
      hint: 'A data file on storage differs from what the log records (replaced, truncated or damaged). Restore it, or remove it from the table, before optimizing.',
    },
  )
}

function optimizeMetrics(
  considered: number,
  batches: number,
  sources: readonly AddFile[],
  added: readonly WrittenFile[],
  tagged: number,
): Readonly<Record<string, number>> {
  const partitions = new Set(sources.map((f) => JSON.stringify(f.partitionValues)))
  return Object.freeze({
    numAddedFiles: added.length,
    numRemovedFiles: sources.length,
    numAddedBytes: added.reduce((n, f) => n + f.size, 0),
    numRemovedBytes: sources.reduce((n, f) => n + Number(f.size), 0),
    numBatches: batches,
    partitionsOptimized: partitions.size,
    totalConsideredFiles: considered,
    totalFilesSkipped: considered - sources.length,
    numDeletionVectorsRemoved: sources.filter((f) => f.deletionVector !== undefined).length,
    numDeletionVectorRowsRemoved: sources.reduce(
      (n, f) => n + Number(f.deletionVector?.cardinality ?? 0n),
      0,
    ),
    numTaggedSources: tagged,
  })
}
