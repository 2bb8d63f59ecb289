import type { DuckDBConnection } from '@duckdb/node-api'
import type { DataFileRef, RowTrackingColumns } from '../engine/data-plane.js'
import { StorageError } from '../errors/index.js'
import { type PartitionLiteralColumn, partitionValueLiteral } from './duckdb-partition-literal.js'
import { appendIndexedPositions } from './duckdb-row-appender.js'
import { FILE_COL, ROW_COL, sqlIdent, sqlString } from './duckdb-runtime.js'
import { duckType, isPrimitive } from './duckdb-types.js'

/** Name of the file index column of a {@link LiveRows} relation and of its files table. */
export const FILE_INDEX_COL = '__delta_rlc_file_index'
/** Name of the row-id column of a {@link LiveRows} relation that tracks rows. */
export const ROW_ID_COL = '__delta_rlc_row_id'
/** Name of the row-commit-version column of a {@link LiveRows} relation that tracks rows. */
export const ROW_COMMIT_VERSION_COL = '__delta_rlc_row_commit_version'
const BASE_ROW_ID_COL = '__delta_rlc_base_row_id'
const DEFAULT_VERSION_COL = '__delta_rlc_default_row_commit_version'

/** A column of a {@link LiveRows} relation. */
export interface LiveRowsColumn extends PartitionLiteralColumn {
  /** True for partition columns: values come from the log's `partitionValues`, never from the file. */
  readonly isPartition: boolean
  /**
   * The DuckDB type the stored values are cast to. By default a primitive column is cast to its
   * table type (older files may hold a narrower type: type widening) and a nested one is read as
   * stored; a writer that must reproduce the files' physical struct types names them here.
   */
  readonly readAs?: string | undefined
}

/** What {@link defineLiveRows} reads. */
export interface LiveRowsRequest {
  /**
   * The data files (at least one): their deletion vectors and partition values, and with
   * `rowTracking` their `baseRowId` and `defaultRowCommitVersion`.
   */
  readonly files: readonly Pick<
    DataFileRef,
    'deletedRows' | 'partitionValues' | 'baseRowId' | 'defaultRowCommitVersion'
  >[]
  /** The local path of each file, in the order of `files`. */
  readonly paths: readonly string[]
  /** The columns of the relation, in order: column `k` is named `c<k>`. */
  readonly columns: readonly LiveRowsColumn[]
  /**
   * Names of the two helper tables (temporary; an existing one is replaced): the files with
   * their index, path and partition values, and the deleted positions by file index. They must
   * live as long as the relation is queried.
   */
  readonly tables: { readonly files: string; readonly deletedRows: string }
  /**
   * Whether the relation carries {@link FILE_INDEX_COL}, the index of the row's file in `files`.
   * Without it and without partition columns no per-row join with the files table is needed.
   */
  readonly withFileIndex?: boolean | undefined
  /**
   * When given, the relation carries {@link ROW_ID_COL} and {@link ROW_COMMIT_VERSION_COL}
   * (BIGINT): the materialized column's value where a file has the column and the value is not
   * null, else the file's `baseRowId` plus `file_row_number` (the physical position, so deleted
   * rows shift no id) and its `defaultRowCommitVersion`.
   */
  readonly rowTracking?: RowTrackingColumns | undefined
}

/** The live rows of some data files as one DuckDB relation. */
export interface LiveRows {
  /**
   * A `SELECT` of the live rows: {@link FILE_COL} (the local path), {@link ROW_COL} (the
   * physical row position, as deletion vectors count them), {@link FILE_INDEX_COL} when asked,
   * {@link ROW_ID_COL} and {@link ROW_COMMIT_VERSION_COL} with `rowTracking`, then column `k` of
   * the request as `c<k>` in its table type.
   */
  readonly sql: string
  /** The physical column names that at least one of the files holds. */
  readonly present: ReadonlySet<string>
  /** The helper tables created (only those the relation needs), to drop when it is no longer queried. */
  readonly tables: readonly string[]
}

/**
 * Defines the live rows of data files on a connection: every path that reads rows of existing
 * files (scans, counts and predicate matches, rewrites and compaction, MERGE, the SQL view) reads
 * them through this one relation.
 *
 * The files are read with `read_parquet` and `file_row_number`, so that the positions a deletion
 * vector names are the physical positions across all row groups, as the protocol defines them.
 * Deleted rows are removed by an anti-join on (file, position); the positions enter DuckDB as
 * whole data chunks of integers. Partition values come from the log, typed once by
 * {@link partitionValueLiteral}, and never from the files. Columns are found by their physical
 * name (column mapping); a column that no file holds reads as NULL. The connection's time zone
 * must be UTC (the engine pins it), as partition literals require.
 *
 * @param con - the connection; the helper tables are created on it
 * @param request - files, their local paths, the columns and the helper table names
 * @returns the relation's SQL and what it found in the files
 * @throws {StorageError} when DuckDB does not report file names for the files
 * @throws {InvalidTableError} `malformed-action` when a partition value does not fit its column type
 */
export async function defineLiveRows(con: DuckDBConnection, request: LiveRowsRequest): Promise<LiveRows> {
  const { files, paths, columns, tables } = request
  const source =
    `read_parquet([${paths.map(sqlString).join(', ')}], filename = ${sqlString(FILE_COL)}, ` +
    'file_row_number = true, union_by_name = true, hive_partitioning = false)'
  const present = new Set(
    (await con.runAndReadAll(`DESCRIBE SELECT * FROM ${source}`)).getRows().map((r) => String(r[0])),
  )
  if (!present.has(FILE_COL)) throw new StorageError('DuckDB did not report file names for the data files')

  const filesTable = sqlIdent(tables.files)
  const dvTable = sqlIdent(tables.deletedRows)
  const index = sqlIdent(FILE_INDEX_COL)
  const partitions = columns.map((c, k) => [c, k] as const).filter(([c]) => c.isPartition)
  const hasDeletions = files.some((f) => (f.deletedRows?.length ?? 0) > 0)
  const tracking = request.rowTracking
  // Row ids need each row's file's baseRowId: a per-row join with the files table, as partition
  // values do. Without tracking the relation is exactly what it was.
  const joinFiles = request.withFileIndex === true || partitions.length > 0 || tracking !== undefined
  const created: string[] = []
  if (joinFiles || hasDeletions) {
    const values = files.map((f, i) => {
      const parts = partitions.map(([c]) => partitionValueLiteral(f.partitionValues, c))
      if (tracking !== undefined)
        parts.push(bigintLiteral(f.baseRowId), bigintLiteral(f.defaultRowCommitVersion))
      return `(${[`CAST(${i} AS INTEGER)`, sqlString(paths[i] as string), ...parts].join(', ')})`
    })
    const names = [FILE_INDEX_COL, FILE_COL, ...partitions.map(([, k]) => `p${k}`)]
    if (tracking !== undefined) names.push(BASE_ROW_ID_COL, DEFAULT_VERSION_COL)
    await con.run(
      `CREATE OR REPLACE TEMP TABLE ${filesTable} AS SELECT * FROM (VALUES ${values.join(', ')}) v(${names.map(sqlIdent).join(', ')})`,
    )
    created.push(tables.files)
  }
  let from = `${source} d`
  if (joinFiles) from += ` JOIN ${filesTable} f ON d.${sqlIdent(FILE_COL)} = f.${sqlIdent(FILE_COL)}`
  if (hasDeletions) {
    await con.run(`CREATE OR REPLACE TEMP TABLE ${dvTable} (${index} INTEGER, pos BIGINT)`)
    created.push(tables.deletedRows)
    const appender = await con.createAppender(tables.deletedRows, 'main', 'temp')
    appendIndexedPositions(
      appender,
      files.map((f, i) => ({ index: i, positions: f.deletedRows })),
    )
    appender.closeSync()
    // Joined to the files table, a row knows its file's index; otherwise the (few) deleted
    // positions get their file's name, which is far cheaper than a join per row.
    from += joinFiles
      ? ` ANTI JOIN ${dvTable} x ON x.${index} = f.${index} AND x.pos = d.file_row_number`
      : ` ANTI JOIN (SELECT n.${sqlIdent(FILE_COL)}, p.pos FROM ${dvTable} p JOIN ${filesTable} n ON p.${index} = n.${index}) x ` +
        `ON x.${sqlIdent(FILE_COL)} = d.${sqlIdent(FILE_COL)} AND x.pos = d.file_row_number`
  }
  const select = [
    `d.${sqlIdent(FILE_COL)} AS ${sqlIdent(FILE_COL)}`,
    `d.file_row_number AS ${sqlIdent(ROW_COL)}`,
    ...(request.withFileIndex === true ? [`f.${index} AS ${index}`] : []),
    ...(tracking === undefined ? [] : rowTrackingSql(tracking, present)),
    ...columns.map((c, k) => `${columnSql(c, k, present)} AS c${k}`),
  ]
  return {
    sql: `SELECT ${select.join(', ')} FROM ${from}`,
    present,
    tables: created,
  }
}

function columnSql(c: LiveRowsColumn, k: number, present: ReadonlySet<string>): string {
  if (c.isPartition) return `f.${sqlIdent(`p${k}`)}`
  const type = c.readAs ?? duckType(c.type)
  if (!present.has(c.physicalName)) return `CAST(NULL AS ${type})`
  const ref = `d.${sqlIdent(c.physicalName)}`
  return c.readAs !== undefined || isPrimitive(c.type) ? `CAST(${ref} AS ${type})` : ref
}

/** The row-id and row-commit-version columns of a relation that tracks rows. */
function rowTrackingSql(tracking: RowTrackingColumns, present: ReadonlySet<string>): string[] {
  const fallbackId = `f.${sqlIdent(BASE_ROW_ID_COL)} + d.file_row_number`
  const fallbackVersion = `f.${sqlIdent(DEFAULT_VERSION_COL)}`
  const materialized = (name: string | undefined, fallback: string): string =>
    name !== undefined && present.has(name)
      ? `coalesce(CAST(d.${sqlIdent(name)} AS BIGINT), ${fallback})`
      : fallback
  return [
    `${materialized(tracking.materializedRowIdColumn, fallbackId)} AS ${sqlIdent(ROW_ID_COL)}`,
    `${materialized(tracking.materializedRowCommitVersionColumn, fallbackVersion)} AS ${sqlIdent(ROW_COMMIT_VERSION_COL)}`,
  ]
}

function bigintLiteral(v: bigint | undefined): string {
  return v === undefined ? 'CAST(NULL AS BIGINT)' : `CAST(${v} AS BIGINT)`
}
