import type { Expression } from '../expressions/ast.js'
import type { ColumnMappingMode, StructType } from '../protocol/schema.js'
import type { DataFileRef, RowTrackingColumns } from './data-plane.js'

/**
 * Where new data files go and how they are laid out: the table's schema, partitioning, column
 * mapping and the statistics settings that shape every file's `add.stats`.
 */
export interface WriteTarget {
  /** The table schema; under column mapping every field carries its physical name and id. */
  readonly schema: StructType
  /** Partition columns by logical name, in partitioning order (`metaData.partitionColumns`). */
  readonly partitionColumns: readonly string[]
  /** `delta.columnMapping.mode`: data files use physical names (and field ids) unless `none`. */
  readonly columnMappingMode: ColumnMappingMode
  /**
   * Approximate size of each new file in bytes (default 128 MiB). Files are cut at row-group
   * boundaries, so one may exceed it by up to a row group. Compaction ignores it: the caller
   * bins by size and each bin becomes exactly one file.
   */
  readonly targetFileSize?: number | undefined
  /**
   * `delta.dataSkippingNumIndexedCols`: how many leaf columns of the data schema (nested struct
   * fields counted one by one, arrays and maps as one) get statistics; default 32, negative for
   * all of them.
   */
  readonly statsColumns?: number | undefined
  /**
   * `delta.dataSkippingStatsColumns`, parsed into logical column paths; when given it replaces
   * {@link statsColumns}. A struct path selects every leaf under it.
   */
  readonly statsColumnPaths?: readonly (readonly string[])[] | undefined
  /**
   * A directory under the table root that new files go under, before any partition
   * directory; `''` (default) or a relative key ending in `/`.
   */
  readonly pathPrefix?: string | undefined
}

/** A new data file: everything its AddFile needs except `modificationTime` and `dataChange`. */
export interface WrittenFile {
  /** Store key relative to the table root, e.g. `part=1/part-00000-<uuid>.c000.snappy.parquet`. */
  readonly key: string
  /** The same key as the log stores it in `add.path` (URI-encoded; protocol.md section 9). */
  readonly path: string
  /** Size in bytes. */
  readonly size: number
  /** Partition values as the log stores them, keyed by physical column name; null for null. */
  readonly partitionValues: Readonly<Record<string, string | null>>
  /**
   * `add.stats`: `numRecords`, `minValues`, `maxValues`, `nullCount` (physical names) and
   * `tightBounds: true`, computed from the file's own rows.
   */
  readonly stats: string
  /** Rows in the file. */
  readonly numRecords: number
}

/** Options every write call takes. */
export interface WriteCallOptions {
  readonly signal?: AbortSignal | undefined
}

/** Rows from JavaScript to new files. */
export interface WriteRowsRequest extends WriteCallOptions {
  /**
   * Rows in the `DataPlane` row representation, keyed by logical column name. A missing key is
   * null.
   *
   * Either one array, or an async iterable of arrays (batches) for input too large to hold at
   * once: the batches are one write, as if concatenated (files are cut by the target size across
   * batch boundaries, and a message names a row by its index in the whole input), and each batch
   * may be released once the iterator asks for the next. An error the iterable throws is thrown
   * as it is, and nothing is written. `rowIds` needs the array form.
   */
  readonly rows:
    | readonly Readonly<Record<string, unknown>>[]
    | AsyncIterable<readonly Readonly<Record<string, unknown>>[]>
  readonly target: WriteTarget
  /**
   * Preserve row tracking (a table with it enabled): the new files get the two hidden columns
   * (both names required). Rows from JavaScript are inserted or updated, never copied, so their
   * row commit version is written NULL (they read the new file's `defaultRowCommitVersion`, the
   * version of the commit that writes them); their row id is taken from `rowIds`.
   */
  readonly rowTracking?: RowTrackingColumns | undefined
  /**
   * With `rowTracking`, one entry per row: the stable row id an updated row keeps, or null for an
   * inserted row (it then takes its new file's `baseRowId` plus its position, a fresh id). All
   * null when absent.
   */
  readonly rowIds?: readonly (bigint | null)[] | undefined
}

/**
 * Rows of existing files, selected and optionally changed, to new files: the building block of
 * copy-on-write DELETE (keep the rows a predicate does not match) and of UPDATE images (the
 * matched rows with `set` applied).
 */
export interface RewriteRequest extends WriteCallOptions {
  /** Files to read; their deletion vectors are applied. */
  readonly sources: readonly DataFileRef[]
  /**
   * Only rows for which this predicate is TRUE (NULL is not a match); column references use
   * logical names. All live rows when absent.
   */
  readonly where?: Expression | undefined
  /**
   * Physical row positions per source key. With `positionsMode` `include` (the default) only
   * these rows are selected, and a source missing from the map contributes none; with `exclude`
   * every live row except these is selected. Combined with `where` by AND.
   */
  readonly positions?: ReadonlyMap<string, readonly number[]> | undefined
  readonly positionsMode?: 'include' | 'exclude' | undefined
  /**
   * New values by top-level logical column name, evaluated over the row as it was read. A
   * partition column may be set; the row then moves to its new partition.
   */
  readonly set?: Readonly<Record<string, Expression>> | undefined
  readonly target: WriteTarget
  /**
   * Preserve row tracking (a table with it enabled): the new files get the two hidden columns
   * (both names required), and every written row keeps its stable row id as its source gives it
   * (the source's materialized value where present and not null, else its `baseRowId` plus the
   * row's physical position), as a compaction does. A copied row keeps its row commit version
   * too; an updated one (`updated`) gets NULL there, so it reads its new file's
   * `defaultRowCommitVersion`: the version of the commit that updates it. Every source must then
   * carry `baseRowId` and `defaultRowCommitVersion`.
   */
  readonly rowTracking?: RewriteRowTracking | undefined
}

/** How a {@link RewriteRequest} preserves row tracking. */
export interface RewriteRowTracking extends RowTrackingColumns {
  /**
   * The rows are updated (UPDATE images), not copied: their commit version is written NULL.
   * Default false.
   */
  readonly updated?: boolean | undefined
}

/** The change type of a change data row (`_change_type`), as Delta writes it. */
export type ChangeType = 'insert' | 'delete' | 'update_preimage' | 'update_postimage'

/** The name of the column that holds each change data row's {@link ChangeType}. */
export const CHANGE_TYPE_COLUMN = '_change_type'

/** Rows of existing files that one commit changed, and how. */
export interface ChangeDataPart {
  readonly changeType: ChangeType
  /** Files to read; their deletion vectors are applied. */
  readonly sources: readonly DataFileRef[]
  /**
   * Physical row positions per source key: only these rows are selected, and a source missing
   * from the map contributes none. Every live row of every source when absent.
   */
  readonly positions?: ReadonlyMap<string, readonly number[]> | undefined
}

/**
 * Change data files (protocol: Change Data Files): the rows of the parts, each with its
 * `_change_type`, written under `_change_data/` (in partition directories on a partitioned table).
 */
export interface ChangeDataRequest extends WriteCallOptions {
  readonly parts: readonly ChangeDataPart[]
  /** The table's layout; `pathPrefix` and `targetFileSize` are ignored. */
  readonly target: WriteTarget
}

/** Bin-packed compaction: each bin's live rows into one new file. */
export interface CompactRequest extends WriteCallOptions {
  /** Source files per output, in the order their rows are written; one bin's files share partition values. */
  readonly bins: readonly (readonly DataFileRef[])[]
  readonly target: WriteTarget
  /**
   * Preserve row tracking: each output gets these two hidden columns (both names required),
   * holding every row's stable row id and row commit version as its source gives them (the
   * source's materialized value where present and not null, else its `baseRowId` plus the row's
   * physical position, and its `defaultRowCommitVersion`). Every source must then carry
   * `baseRowId` and `defaultRowCommitVersion`.
   */
  readonly rowTracking?: RowTrackingColumns | undefined
}

/** Where one compaction source's live rows landed in its output. */
export interface CompactedSource {
  /** The source's store key. */
  readonly key: string
  /** Position in the output of the source's first live row (its rows are contiguous there). */
  readonly rowOffsetInTarget: number
  /** Live rows of the source written to the output, in `file_row_number` order. */
  readonly rowCount: number
  /** Rows physically in the source file, deleted ones included. */
  readonly physicalRowCount: number
}

/** The result of compacting one bin. */
export interface CompactionOutput {
  /** The new file, or null when the bin had no live row (nothing is written then). */
  readonly file: WrittenFile | null
  /** The bin's sources in bin order, which is the order of their rows in `file`. */
  readonly sources: readonly CompactedSource[]
}

/**
 * A Z-order rewrite of one partition: the live rows of its files, sorted by an interleaved key
 * of some of their columns, into new files of about `target.targetFileSize` each.
 */
export interface ZOrderRequest extends WriteCallOptions {
  /** The files to rewrite (deletion vectors applied); they share partition values. */
  readonly sources: readonly DataFileRef[]
  /**
   * Logical names of the data columns to cluster by, in key order. Each column's values are
   * ranked (NULL first, then ascending, equal values one rank), the rank is scaled to 16 bits,
   * and the bits of all columns are interleaved from the most significant; rows with equal keys
   * keep their source order (source index, then physical position).
   */
  readonly columns: readonly string[]
  readonly target: WriteTarget
  /**
   * Preserve row tracking as a compaction does (see {@link CompactRequest.rowTracking}): every
   * output row carries its stable row id and row commit version in the two hidden columns.
   */
  readonly rowTracking?: RowTrackingColumns | undefined
  /**
   * Keep the permutation ({@link ZOrderOutput.permutation}) when the sources hold at most this
   * many live rows; 0 or absent keeps none. A kept permutation is proven: each output is read
   * back and checked to hold its rows in the planned order.
   */
  readonly keepPermutationUpTo?: number | undefined
  /**
   * Called with the number of live rows read, before any file is written; what it throws fails
   * the call with nothing written.
   */
  readonly beforeWrite?: ((liveRows: number) => void) | undefined
}

/**
 * Where each live row of a Z-order rewrite landed, per source (in request order) and indexed by
 * the row's live rank in its source (its rank in physical order among the rows its deletion
 * vector leaves).
 */
export interface ZOrderPermutation {
  /** Per source: the index in {@link ZOrderOutput.files} of the output each live row is in. */
  readonly outputIndex: readonly (Uint16Array | Uint32Array)[]
  /** Per source: each live row's position (0-based physical row) in its output. */
  readonly outputRow: readonly Uint32Array[]
}

/** The result of a Z-order rewrite. */
export interface ZOrderOutput {
  /** The new files, in key order (the first holds the smallest keys); empty without live rows. */
  readonly files: readonly WrittenFile[]
  /** Live rows read per source, in request order. */
  readonly liveRows: readonly number[]
  /** Present when {@link ZOrderRequest.keepPermutationUpTo} admitted it. */
  readonly permutation?: ZOrderPermutation | undefined
}

/**
 * Writes new data files with exact Delta statistics. Files get fresh unique names and are stored
 * with put-if-absent; nothing is written when a request is invalid, and files a failed call had
 * already stored are deleted again.
 */
export interface DataWriter {
  /**
   * Writes rows to new files, one set per partition, each near the target size.
   *
   * @param request - the rows (an array, or batches of them) and the target
   * @returns the new files, grouped by partition; empty when there are no rows
   * @throws {InvalidArgumentError} when a row has an unknown column, a value of the wrong type, or
   *   a null in a non-nullable column (the message names the row index in the whole input and
   *   the column); nothing is written then
   * @throws {UnsupportedError} when the schema has a type files cannot be written for
   * @throws {StorageError} when DuckDB or the store fails
   */
  writeRows(request: WriteRowsRequest): Promise<WrittenFile[]>

  /**
   * Rewrites selected rows of existing files into new files.
   *
   * @param request - sources, selection, new values and the target
   * @returns the new files; empty when no row is selected
   * @throws {InvalidArgumentError} for an unknown column in `where` or `set`, a `set` value that
   *   does not fit its column (or is null in a non-nullable one), or positions of an unknown source
   * @throws {FileNotFoundError} when a source file is missing
   * @throws {StorageError} when DuckDB or the store fails
   */
  rewrite(request: RewriteRequest): Promise<WrittenFile[]>

  /**
   * Compacts each bin into exactly one file: the live rows of its sources, in bin order and
   * inside each source in `file_row_number` order, so each source's rows sit contiguously at its
   * reported `rowOffsetInTarget`.
   *
   * @param request - bins and the target
   * @returns one output per bin, in bin order
   * @throws {InvalidArgumentError} for an empty bin, a key repeated in a bin, or sources of one
   *   bin with different partition values
   * @throws {FileNotFoundError} when a source file is missing
   * @throws {InternalError} when the written file does not hold exactly the planned rows
   * @throws {StorageError} when DuckDB or the store fails
   */
  compact(request: CompactRequest): Promise<CompactionOutput[]>

  /**
   * Rewrites one partition's files in Z-order (see {@link ZOrderRequest}).
   *
   * @param request - sources, clustering columns, the target and what to keep
   * @returns the new files, the rows read per source and, when asked, the permutation
   * @throws {InvalidArgumentError} for no or an unknown, repeated or partition clustering column,
   *   a key repeated among the sources, or sources with different partition values
   * @throws {FileNotFoundError} when a source file is missing
   * @throws {InternalError} when a kept permutation is not what the files hold
   * @throws {StorageError} when DuckDB or the store fails
   */
  zOrder(request: ZOrderRequest): Promise<ZOrderOutput>

  /**
   * Writes change data files: the data columns of the selected rows (physical names, as data
   * files hold them; partition values go to the directory and the returned `partitionValues`)
   * followed by a string column `_change_type`, one set of files per partition, named
   * `_change_data/[<partition directory>/]cdc-<n>-<uuid>.c000.snappy.parquet`. Optional: an
   * engine without it cannot run DML on a table with change data feed enabled.
   *
   * @param request - the parts and the table layout
   * @returns the new files (their `stats` are not used by a `cdc` action); empty without rows
   * @throws {InvalidArgumentError} for positions of an unknown source, or a key repeated in a part
   * @throws {FileNotFoundError} when a source file is missing
   * @throws {StorageError} when DuckDB or the store fails
   */
  writeChangeData?(request: ChangeDataRequest): Promise<WrittenFile[]>
}
