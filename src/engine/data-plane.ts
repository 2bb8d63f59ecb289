import type { Expression } from '../expressions/ast.js'
import type { DataType } from '../protocol/schema.js'

/**
 * A data file as the data plane sees it: where it is, which of its rows a deletion vector
 * hides, and the partition values the log gives it.
 */
export interface DataFileRef {
  /** Store key of the Parquet file (relative to the table root). */
  readonly key: string
  /**
   * Physical row positions (0-based, across all row groups) deleted by the file's DV, in
   * ascending order. Absent or empty when the file has no DV.
   */
  readonly deletedRows?: ArrayLike<number> | undefined
  /**
   * The same positions as a set, when the file has a deletion vector: a data plane that reads it
   * never expands the positions into an array, and can check them against the file's real row
   * count before using them. Files read from a snapshot carry it, and then `deletedRows` is
   * expanded only when read.
   */
  readonly deletedRowSet?: DeletedRowSet | undefined
  /**
   * Partition values by partition column name, as serialized in the log (`partitionValues`);
   * `null` for a null partition.
   */
  readonly partitionValues: Readonly<Record<string, string | null>>
  /**
   * The file's `baseRowId`: a row's default row id is this plus its physical position. Read only
   * by a scan with {@link ScanRequest.rowTracking}.
   */
  readonly baseRowId?: bigint | undefined
  /** The file's `defaultRowCommitVersion`. Read only by a scan with {@link ScanRequest.rowTracking}. */
  readonly defaultRowCommitVersion?: bigint | undefined
}

/**
 * A file's deleted row positions as a set (the library's `RoaringBitmapArray` is one): what a data
 * plane needs to apply a deletion vector without an array of its positions.
 */
export interface DeletedRowSet {
  /** Number of positions. */
  readonly cardinality: number
  /** The largest position, or `undefined` when empty. */
  lastBigInt(): bigint | undefined
  /** Number of positions in `[start, end)`. */
  rangeCardinality(start: number, end: number): number
  /** The positions in ascending order, one at a time. */
  values(): Iterable<number>
}

/** The name under which a row-tracking scan returns each row's stable row id. */
export const ROW_ID_COLUMN = '_row_id'
/** The name under which a row-tracking scan returns each row's row commit version. */
export const ROW_COMMIT_VERSION_COLUMN = '_row_commit_version'

/**
 * Where a row-tracking scan finds materialized values: the physical names of the hidden Parquet
 * columns the table's configuration names (absent when it names none).
 */
export interface RowTrackingColumns {
  readonly materializedRowIdColumn?: string | undefined
  readonly materializedRowCommitVersionColumn?: string | undefined
}

/** A column the data plane reads: its logical name and type, and where it is in the files. */
export interface ColumnSpec {
  /** Logical (table) name; rows are returned under this name. */
  readonly name: string
  /** Table type; values are converted to it (older files may hold narrower types). */
  readonly type: DataType
  /** Name in the Parquet files (the physical name under column mapping). */
  readonly physicalName: string
  /** Column mapping id, when the table uses id mode. */
  readonly fieldId?: number | undefined
  /** True for partition columns: values come from `partitionValues`, never from the file. */
  readonly isPartition: boolean
}

/** What to read. */
export interface ScanRequest {
  readonly files: readonly DataFileRef[]
  /** Columns to return, in order. */
  readonly columns: readonly ColumnSpec[]
  /**
   * Every column the predicate may reference (a superset of `columns` is fine); defaults to
   * `columns`.
   */
  readonly predicateColumns?: readonly ColumnSpec[] | undefined
  /** Rows must satisfy this predicate (SQL three-valued: NULL is not a match). */
  readonly predicate?: Expression | undefined
  /** Rows per yielded batch (a hint). */
  readonly batchSize?: number | undefined
  /**
   * Rows in the order of `files`, and inside a file in physical row order (by default the order
   * is whatever the data plane finds fastest).
   */
  readonly physicalOrder?: boolean | undefined
  /**
   * When given, each row also has `_row_id` and `_row_commit_version` (bigint), after the
   * columns: the materialized column's value where the file has the column and the value is not
   * null, otherwise the file's `baseRowId` plus the row's physical position (rows a deletion
   * vector hides count, so deleting rows shifts no id) and its `defaultRowCommitVersion`. A value
   * is null only where neither exists.
   */
  readonly rowTracking?: RowTrackingColumns | undefined
  readonly signal?: AbortSignal | undefined
}

/**
 * One column of a {@link ColumnBatch}: its values by the column's Delta type, and which are null.
 *
 * - `long`: `BigInt64Array`; `integer`, `short`, `byte`: `Int32Array`, `Int16Array`, `Int8Array`;
 *   `double`, `float`: `Float64Array`, `Float32Array`;
 * - `date`: `Int32Array` of days since 1970-01-01; `timestamp`: `BigInt64Array` of microseconds
 *   since the epoch (UTC), `timestamp_ntz` the same for the wall time;
 * - `boolean`: `Uint8Array` of 0 and 1;
 * - every other type (`string`, `binary`, `decimal`, `void`, struct, array, map): an array of
 *   values in the row representation of {@link DataPlane}, null for null.
 *
 * A typed array holds 0 where the value is null.
 */
export interface ColumnVector {
  readonly values:
    | BigInt64Array
    | Int32Array
    | Int16Array
    | Int8Array
    | Float64Array
    | Float32Array
    | Uint8Array
    | readonly unknown[]
  /**
   * Bit `i` (least significant bit first, as Arrow's validity bitmaps) is set when value `i` is
   * not null; absent when no value is null.
   */
  readonly validity?: Uint8Array | undefined
  /** Null values in the column. */
  readonly nullCount: number
}

/** Rows as columns: one {@link ColumnVector} per requested column, in request order. */
export interface ColumnBatch {
  /** Rows in the batch. */
  readonly length: number
  /** The columns, then with `rowTracking` the row id and the row commit version (`long`). */
  readonly columns: readonly ColumnVector[]
}

/** Positions of matching rows in one file. */
export interface FileMatches {
  readonly key: string
  /** Ascending physical row positions of live rows that match. */
  readonly positions: readonly number[]
  /** Live rows in the file (rows not hidden by its DV). */
  readonly liveRows: number
  /**
   * With `rowTracking` in the request: the stable row id of each row of `positions`, in the same
   * order (as a row-tracking scan computes it; null only where neither a materialized value nor
   * the file's `baseRowId` exists).
   */
  readonly rowIds?: readonly (bigint | null)[] | undefined
  /** With `boundsOf` in the request: per column of it, in order, the bounds of the matching rows. */
  readonly bounds?: readonly ValueBounds[] | undefined
}

/**
 * The smallest and largest non-null value of a column among some rows, in the row representation
 * of {@link DataPlane} (both null when every value is null or there is no row), and how many of
 * the rows hold null.
 */
export interface ValueBounds {
  readonly min: unknown
  readonly max: unknown
  readonly nullCount: number
}

/** What {@link DataPlane.locateRowIds} looks for. */
export interface LocateRowIdsRequest {
  /** The files to search, read whole (deletion vectors are not applied; partition values unused). */
  readonly files: readonly DataFileRef[]
  /** The physical name of the materialized row-id column. */
  readonly rowIdColumn: string
  /** The row ids sought, ascending and distinct. */
  readonly ids: BigInt64Array
  readonly signal?: AbortSignal | undefined
}

/** Where sought row ids are, and whether the files carry the column everywhere. */
export interface RowIdLocations {
  /** Per request file, in request order: the positions holding a sought id, and those ids. */
  readonly files: readonly {
    readonly key: string
    /** Ascending physical positions of rows whose materialized id is sought. */
    readonly positions: readonly number[]
    /** The id at each position. */
    readonly ids: readonly bigint[]
  }[]
  /** Rows (of all files) whose materialized id is null, or that lack the column. */
  readonly nullRows: number
}

/**
 * Everything that touches Parquet rows: scans, predicate evaluation, and (in later layers)
 * writing new files. Rows cross into JavaScript only when a caller asks for them.
 *
 * Rows use this representation: `long` -> bigint; `byte`/`short`/`integer`/`float`/`double` ->
 * number; `decimal` -> string with the column's scale; `date` -> `'YYYY-MM-DD'`; `timestamp` ->
 * `'YYYY-MM-DDTHH:MM:SS.ffffffZ'`; `timestamp_ntz` -> the same without `Z`; `binary` ->
 * Uint8Array; `string`, `boolean` as is; struct -> object; array -> array; map -> Map; null ->
 * null.
 */
export interface DataPlane {
  /** Streams the live rows of `files` that satisfy the predicate, in batches. */
  scan(request: ScanRequest): AsyncIterable<Record<string, unknown>[]>
  /**
   * {@link scan} as columns: the same rows in the same order, each batch one vector per column
   * (see {@link ColumnVector}), for callers that build columnar data such as Arrow. Optional: a
   * caller falls back to {@link scan} when a data plane has none.
   */
  scanColumns?(request: ScanRequest): AsyncIterable<ColumnBatch>
  /** Counts the live rows of `files` that satisfy the predicate. */
  count(request: Omit<ScanRequest, 'batchSize'>): Promise<number>
  /** For each file, the physical positions of live rows that satisfy the predicate. */
  matchPositions(
    request: Omit<ScanRequest, 'batchSize' | 'columns'> & {
      columns?: readonly ColumnSpec[]
      /** Columns whose bounds among the matching rows each file's answer carries. */
      boundsOf?: readonly ColumnSpec[] | undefined
    },
  ): Promise<FileMatches[]>
  /**
   * Finds rows by the value of their materialized row-id column, reading only that column: the
   * positions of the sought ids in each file, and how many rows have no value there.
   */
  locateRowIds(request: LocateRowIdsRequest): Promise<RowIdLocations>
}
