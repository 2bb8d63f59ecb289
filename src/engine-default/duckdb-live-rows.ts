import type { DuckDBConnection } from '@duckdb/node-api'
import type { DataFileRef, RowTrackingColumns } from '../engine/data-plane.js'
import { InternalError, InvalidDeletionVectorError, StorageError } from '../errors/index.js'
import {
  appendLiveEndedMasks,
  type DeletedPositions,
  deletedPositionsOf,
  listPositions,
  MASK_POSITION_LIMIT,
} from './duckdb-deletion-mask.js'
import { type PartitionLiteralColumn, partitionValueLiteral } from './duckdb-partition-literal.js'
import { appendIndexedPositions } from './duckdb-row-appender.js'
import { FILE_COL, ROW_COL, sqlFilePath, sqlIdent, sqlString } from './duckdb-runtime.js'
import { duckType, isPrimitive } from './duckdb-types.js'

/** Name of the file index column of a {@link LiveRows} relation and of its files table. */
export const FILE_INDEX_COL = '__delta_rlc_file_index'
/** The index of a row's file in the request, where files are read in groups (by field id). */
const SOURCE_INDEX_COL = '__delta_rlc_source_index'
/** Name of the row-id column of a {@link LiveRows} relation that tracks rows. */
export const ROW_ID_COL = '__delta_rlc_row_id'
/** Name of the row-commit-version column of a {@link LiveRows} relation that tracks rows. */
export const ROW_COMMIT_VERSION_COL = '__delta_rlc_row_commit_version'
const BASE_ROW_ID_COL = '__delta_rlc_base_row_id'
const DEFAULT_VERSION_COL = '__delta_rlc_default_row_commit_version'
const MASK_COL = '__delta_rlc_deletion_mask'
const MASK_LAST_COL = '__delta_rlc_deletion_mask_last'
/** A mask is used when at least one position in this many, up to the last deleted one, is deleted. */
const MASK_MIN_DENSITY_INVERSE = 32

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
  /**
   * The column's Parquet field id, for a table in column mapping mode `id`: a file's top-level
   * field with this id is the column, whatever its name; a file without it falls back to the
   * field named `physicalName` that carries no id.
   */
  readonly fieldId?: number | undefined
}

/** What {@link defineLiveRows} reads. */
export interface LiveRowsRequest {
  /**
   * The data files (at least one): their deletion vectors and partition values, and with
   * `rowTracking` their `baseRowId` and `defaultRowCommitVersion`.
   */
  readonly files: readonly (Pick<
    DataFileRef,
    'deletedRows' | 'deletedRowSet' | 'partitionValues' | 'baseRowId' | 'defaultRowCommitVersion'
  > & { readonly key?: string })[]
  /** The local path of each file, in the order of `files`. */
  readonly paths: readonly string[]
  /** The columns of the relation, in order: column `k` is named `c<k>`. */
  readonly columns: readonly LiveRowsColumn[]
  /**
   * Names of the helper tables (temporary; an existing one is replaced): the files with their
   * index, path and partition values, the deleted positions by file index, and the deletion
   * masks by file index (default: the positions table's name plus `_masks`). They must live as
   * long as the relation is queried.
   */
  readonly tables: {
    readonly files: string
    readonly deletedRows: string
    readonly deletionMasks?: string | undefined
  }
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
 * Deleted rows are removed per file in the form {@link deletionForm} picks: a bitmask tested
 * with `get_bit` on the row's position, or an anti-join on (file, position) whose positions enter
 * DuckDB as whole data chunks of integers. When any file has a mask, every file gets one in the
 * files table (a single clear bit for the others), so that the filter is one `get_bit` per row
 * with no disjunction. Rows are matched to their file by DuckDB's
 * `file_index`, not by path, unless a data column of that name shadows it. Partition values come from the log, typed once by
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
  const byFieldId = await fieldIdProjections(con, paths, columns)
  const source =
    byFieldId === undefined
      ? readParquetSql(paths)
      : `(${byFieldId.map((g) => g.sql).join(' UNION ALL BY NAME ')})`
  const present = new Set(
    (await con.runAndReadAll(`DESCRIBE SELECT * FROM ${source}`)).getRows().map((r) => String(r[0])),
  )
  if (!present.has(FILE_COL)) throw new StorageError('DuckDB did not report file names for the data files')

  const filesTable = sqlIdent(tables.files)
  const dvTable = sqlIdent(tables.deletedRows)
  const masksName = tables.deletionMasks ?? `${tables.deletedRows}_masks`
  const index = sqlIdent(FILE_INDEX_COL)
  const path = sqlIdent(FILE_COL)
  const partitions = columns.map((c, k) => [c, k] as const).filter(([c]) => c.isPartition)
  const masked: { index: number; positions: DeletedPositions }[] = []
  const listed: { index: number; positions: DeletedPositions }[] = []
  const deletions = files.map((f) => deletedPositionsOf(f))
  await checkDeletionsFitFiles(con, files, paths, deletions)
  deletions.forEach((positions, i) => {
    if (positions === undefined) return
    ;(deletionForm(positions) === 'mask' ? masked : listed).push({ index: i, positions })
  })
  const tracking = request.rowTracking
  // DuckDB's `file_index` names each row's file by its place in the list, an integer that is far
  // cheaper to join on than the path; a data column of that name would shadow it, and then the
  // path is the key.
  const byIndex = byFieldId !== undefined || ![...present].some((n) => n.toLowerCase() === 'file_index')
  // Row ids need each row's file's baseRowId: a per-row join with the files table, as partition
  // values and masks do.
  const joinFiles =
    request.withFileIndex === true ||
    partitions.length > 0 ||
    tracking !== undefined ||
    masked.length > 0 ||
    (listed.length > 0 && !byIndex)
  const created: string[] = []
  if (masked.length > 0) {
    await con.run(`CREATE OR REPLACE TEMP TABLE ${sqlIdent(masksName)} (${index} INTEGER, mask BIT)`)
    created.push(masksName)
    const appender = await con.createAppender(masksName, 'main', 'temp')
    appendLiveEndedMasks(appender, masked)
    appender.closeSync()
  }
  if (joinFiles) {
    const values = files.map((f, i) => {
      const parts = partitions.map(([c]) => partitionValueLiteral(f.partitionValues, c))
      if (tracking !== undefined)
        parts.push(bigintLiteral(f.baseRowId), bigintLiteral(f.defaultRowCommitVersion))
      return `(${[`CAST(${i} AS INTEGER)`, sqlString(paths[i] as string), ...parts].join(', ')})`
    })
    const names = [FILE_INDEX_COL, FILE_COL, ...partitions.map(([, k]) => `p${k}`)]
    if (tracking !== undefined) names.push(BASE_ROW_ID_COL, DEFAULT_VERSION_COL)
    const rows = `(VALUES ${values.join(', ')}) v(${names.map(sqlIdent).join(', ')})`
    await con.run(
      masked.length === 0
        ? `CREATE OR REPLACE TEMP TABLE ${filesTable} AS SELECT * FROM ${rows}`
        : // A file without a mask gets one clear bit: every row of it is live.
          `CREATE OR REPLACE TEMP TABLE ${filesTable} AS SELECT v.*, coalesce(m.mask, '0'::BIT) AS ${MASK_COL}, ` +
            `coalesce(bit_length(m.mask) - 1, 0) AS ${MASK_LAST_COL} FROM ${rows} LEFT JOIN ${sqlIdent(masksName)} m ON m.${index} = v.${index}`,
    )
    created.push(tables.files)
  }
  const fileIndex =
    byFieldId === undefined ? 'CAST(d.file_index AS INTEGER)' : `d.${sqlIdent(SOURCE_INDEX_COL)}`
  let from = `${source} d`
  if (joinFiles)
    from += byIndex
      ? ` JOIN ${filesTable} f ON f.${index} = ${fileIndex}`
      : ` JOIN ${filesTable} f ON f.${path} = d.${path}`
  if (listed.length > 0) {
    await con.run(`CREATE OR REPLACE TEMP TABLE ${dvTable} (${index} INTEGER, pos BIGINT)`)
    created.push(tables.deletedRows)
    const appender = await con.createAppender(tables.deletedRows, 'main', 'temp')
    appendIndexedPositions(appender, listed)
    appender.closeSync()
    from += ` ANTI JOIN ${dvTable} x ON x.${index} = ${joinFiles ? `f.${index}` : fileIndex} AND x.pos = d.file_row_number`
  }
  // A row past a mask's end is live: its position is clamped to the mask's last bit, which is
  // always clear. One get_bit and no disjunction, so DuckDB has a single cheap test per row.
  const where =
    masked.length === 0
      ? ''
      : ` WHERE get_bit(f.${MASK_COL}, CAST(least(d.file_row_number, f.${MASK_LAST_COL}) AS INTEGER)) = 0`
  const select = [
    `d.${path} AS ${path}`,
    `d.file_row_number AS ${sqlIdent(ROW_COL)}`,
    ...(request.withFileIndex === true ? [`f.${index} AS ${index}`] : []),
    ...(tracking === undefined ? [] : rowTrackingSql(tracking, present)),
    ...columns.map((c, k) => `${columnSql(c, k, present)} AS c${k}`),
  ]
  return {
    sql: `SELECT ${select.join(', ')} FROM ${from}${where}`,
    present,
    tables: created,
  }
}

/**
 * The rows of each file by its Parquet footer, read without reading any row.
 *
 * @param con - a connection
 * @param paths - local paths of Parquet files
 * @returns the row count of each path, in the order of `paths`
 * @throws {InternalError} when DuckDB reports no count for a path
 */
export async function footerRowCounts(con: DuckDBConnection, paths: readonly string[]): Promise<number[]> {
  if (paths.length === 0) return []
  const rows = (
    await con.runAndReadAll(
      `SELECT file_name, num_rows FROM parquet_file_metadata([${paths.map(sqlFilePath).join(', ')}])`,
    )
  ).getRows()
  const byPath = new Map(rows.map(([name, count]) => [String(name), Number(count)]))
  return paths.map((path) => {
    const n = byPath.get(path)
    if (n === undefined)
      throw new InternalError(`DuckDB reported no footer row count for the data file ${path}`)
    return n
  })
}

/**
 * The live rows of each file without scanning it: its footer's rows less the distinct positions
 * its deletion vector names among them, which are the rows a {@link LiveRows} relation hides.
 *
 * @param con - a connection
 * @param files - the files, with their deleted positions (ascending, as a DV gives them)
 * @param paths - the local path of each file, in the order of `files`
 * @returns the live row count of each file, in order
 * @throws {InternalError} when DuckDB reports no count for a path
 */
export async function liveRowCounts(
  con: DuckDBConnection,
  files: readonly Pick<DataFileRef, 'deletedRows' | 'deletedRowSet'>[],
  paths: readonly string[],
): Promise<number[]> {
  const physical = await footerRowCounts(con, paths)
  return files.map((f, i) => {
    const rows = physical[i] as number
    return rows - (deletedPositionsOf(f)?.countBelow(rows) ?? 0)
  })
}

/**
 * Refuses deleted positions at or past the end of their file, by the row count of its Parquet
 * footer: the statistics in the log may lie or be missing, and a deletion vector of a billion
 * positions fits in a few hundred KB of runs. Checked before any position is used, so that what
 * the live-rows relation builds from them (a mask of a bit per row, or a list) is bounded by the
 * rows the file really has.
 *
 * @throws {InvalidDeletionVectorError} naming the data file, the position and the file's rows
 */
async function checkDeletionsFitFiles(
  con: DuckDBConnection,
  files: readonly { readonly key?: string }[],
  paths: readonly string[],
  deletions: readonly (DeletedPositions | undefined)[],
): Promise<void> {
  const withDeletions = deletions.flatMap((d, i) => (d === undefined ? [] : [i]))
  if (withDeletions.length === 0) return
  const rows = await footerRowCounts(
    con,
    withDeletions.map((i) => paths[i] as string),
  )
  withDeletions.forEach((i, k) => {
    const count = rows[k] as number
    const last = (deletions[i] as DeletedPositions).last
    if (last < count) return
    const file = files[i]?.key ?? (paths[i] as string)
    throw new InvalidDeletionVectorError(
      `The deletion vector of data file ${file} deletes row position ${last}, but the file has ${count} rows (by its Parquet footer)`,
      {
        path: file,
        hint:
          'The deletion vector names rows its data file does not have, so the log and the data disagree on which rows are live. ' +
          'Restore the table to a version before the commit that wrote it, or remove the file with the tool that wrote it.',
      },
    )
  })
}

/**
 * How a file's deleted positions are applied: as a bitmask (`'mask'`, one `BIT` value per file,
 * tested with `get_bit` after the per-row join with the files table) or as a list
 * (`'list'`, `(file, position)` rows anti-joined). A mask costs the same per scanned row at any
 * density and one bit per position up to the last deleted one; a list costs a hash-table probe
 * per row that grows with its size, and twelve bytes per deleted row. Masks win from about one
 * deleted row in 32; below that, and for positions a 32-bit `get_bit` index cannot reach (a mask
 * runs up to a byte past its last deleted position), the list.
 *
 * @param positions - a file's deleted positions (non-empty, non-negative)
 * @returns the form its deletions take in the live-rows relation
 */
export function deletionForm(positions: ArrayLike<number> | DeletedPositions): 'mask' | 'list' {
  const view = 'countBelow' in positions ? positions : listPositions(positions)
  const last = Math.max(0, view.last)
  return last < MASK_POSITION_LIMIT && view.count * MASK_MIN_DENSITY_INVERSE >= last + 1 ? 'mask' : 'list'
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

/** The `read_parquet` of some files: their rows by name, with file name and row position. */
function readParquetSql(paths: readonly string[]): string {
  return (
    `read_parquet([${paths.map(sqlFilePath).join(', ')}], filename = ${sqlString(FILE_COL)}, ` +
    'file_row_number = true, union_by_name = true, hive_partitioning = false)'
  )
}

/** The top-level fields of one file: name to field id (null where the field has none). */
type TopLevelFields = Map<string, number | null>

/**
 * For a table in column mapping mode `id`, the files read in groups that resolve each column by
 * its Parquet field id: a file's top-level field with the column's id is renamed to the column's
 * physical name, and a field that bears a column's physical name but not its id (it is another
 * column, or a stale one) is left out, so that it reads as NULL rather than as the wrong column.
 * A file without the id falls back to the field of that name that has no id. Files that need the
 * same renames form one group; each group carries the files' indexes in the request.
 *
 * Only top-level columns are resolved by id; fields inside structs are found by name.
 *
 * @returns the group relations, or undefined when every file already names every column by its
 *   physical name (no column has an id, or names and ids agree): then one read by name serves
 */
async function fieldIdProjections(
  con: DuckDBConnection,
  paths: readonly string[],
  columns: readonly LiveRowsColumn[],
): Promise<{ readonly sql: string }[] | undefined> {
  const wanted = columns.filter((c) => !c.isPartition && c.fieldId !== undefined)
  if (wanted.length === 0) return undefined
  const fields = await topLevelFields(con, paths)
  const targets = new Set(wanted.map((c) => c.physicalName))
  const groups = new Map<string, { renames: [string, string][]; excludes: string[]; indexes: number[] }>()
  let anyChange = false
  paths.forEach((path, index) => {
    const own = fields.get(path) ?? new Map<string, number | null>()
    const sourceOf = new Map<string, string>()
    for (const c of wanted) {
      const byId = [...own].find(([, id]) => id === c.fieldId)?.[0]
      const byName = own.has(c.physicalName) && own.get(c.physicalName) === null ? c.physicalName : undefined
      const source = byId ?? byName
      if (source !== undefined) sourceOf.set(source, c.physicalName)
    }
    const renames: [string, string][] = []
    const excludes: string[] = []
    for (const name of own.keys()) {
      const target = sourceOf.get(name)
      if (target !== undefined) {
        if (target !== name) renames.push([name, target])
      } else if (targets.has(name)) {
        excludes.push(name)
      }
    }
    if (renames.length > 0 || excludes.length > 0) anyChange = true
    const signature = JSON.stringify([renames, excludes])
    const group = groups.get(signature)
    if (group === undefined) groups.set(signature, { renames, excludes, indexes: [index] })
    else group.indexes.push(index)
  })
  if (!anyChange) return undefined
  return [...groups.values()].map((g) => {
    const star = [
      '*',
      g.excludes.length === 0 ? '' : ` EXCLUDE (${g.excludes.map(sqlIdent).join(', ')})`,
      g.renames.length === 0
        ? ''
        : ` RENAME (${g.renames.map(([from, to]) => `${sqlIdent(from)} AS ${sqlIdent(to)}`).join(', ')})`,
    ].join('')
    // DuckDB numbers the files of each read from 0; the request's index is looked up from it.
    const indexes = `[${g.indexes.join(', ')}]`
    return {
      sql:
        `SELECT ${star}, CAST(${indexes}[CAST(file_index AS BIGINT) + 1] AS INTEGER) AS ${sqlIdent(SOURCE_INDEX_COL)} ` +
        `FROM ${readParquetSql(g.indexes.map((i) => paths[i] as string))}`,
    }
  })
}

/** The top-level fields of each file, read from the Parquet footers. */
async function topLevelFields(
  con: DuckDBConnection,
  paths: readonly string[],
): Promise<Map<string, TopLevelFields>> {
  const reader = await con.runAndReadAll(
    `SELECT file_name, name, field_id, num_children FROM parquet_schema([${paths.map(sqlFilePath).join(', ')}])`,
  )
  const out = new Map<string, TopLevelFields>()
  // Rows are each file's schema tree in pre-order: the root, then each field before its children.
  let file: string | undefined
  let remaining: number[] = []
  for (const [fileName, name, fieldId, numChildren] of reader.getRows()) {
    const path = String(fileName)
    const children = numChildren === null ? 0 : Number(numChildren)
    if (path !== file) {
      file = path
      out.set(path, new Map())
      remaining = [children]
      continue
    }
    while (remaining.length > 0 && remaining[remaining.length - 1] === 0) remaining.pop()
    if (remaining.length === 0) throw new InternalError(`Malformed Parquet schema listing of ${path}`)
    if (remaining.length === 1) {
      out.get(path)?.set(String(name), fieldId === null ? null : Number(fieldId))
    }
    remaining[remaining.length - 1] = (remaining[remaining.length - 1] as number) - 1
    if (children > 0) remaining.push(children)
  }
  return out
}
