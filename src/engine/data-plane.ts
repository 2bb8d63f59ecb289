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
   * Partition values by partition column name, as serialized in the log (`partitionValues`);
   * `null` for a null partition.
   */
  readonly partitionValues: Readonly<Record<string, string | null>>
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
  readonly signal?: AbortSignal | undefined
}

/** Positions of matching rows in one file. */
export interface FileMatches {
  readonly key: string
  /** Ascending physical row positions of live rows that match. */
  readonly positions: readonly number[]
  /** Live rows in the file (rows not hidden by its DV). */
  readonly liveRows: number
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
  /** Counts the live rows of `files` that satisfy the predicate. */
  count(request: Omit<ScanRequest, 'batchSize'>): Promise<number>
  /** For each file, the physical positions of live rows that satisfy the predicate. */
  matchPositions(
    request: Omit<ScanRequest, 'batchSize' | 'columns'> & { columns?: readonly ColumnSpec[] },
  ): Promise<FileMatches[]>
}
