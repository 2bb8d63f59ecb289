/**
 * Statistics of files DuckDB has just written, taken from what its `COPY ... (RETURN_STATS)`
 * returned for each file instead of reading the rows back, wherever that gives exactly the
 * `add.stats` the aggregate of `file-stats.ts` gives; the other columns (or files) still get
 * the aggregate.
 *
 * What DuckDB returns per leaf column (keyed by its quoted path, `"s"."a"`) is text: `min`,
 * `max`, `null_count`, and for floating point `has_nan`. It is exact for integers, dates,
 * decimals, timestamps and null counts. It is not always exact for two kinds of column, so those
 * are checked against the file's footer (`parquet_metadata`, no row is read):
 * - strings: DuckDB cuts bounds longer than 256 bytes (the maximum then rounded up, the cut
 *   flagged in the footer) and drops bounds it cannot cut;
 * - floating point: a row group holding NaN has no bounds in the footer, and the returned
 *   `has_nan` only describes the last row group.
 * Such a column's returned bounds are used only when every row group that holds a non-null value
 * has exact bounds in the footer. List and map columns have no leaf of their own path in the
 * returned statistics, so they always get the aggregate.
 */
import { type DuckDBConnection, DuckDBMapValue, type DuckDBValue } from '@duckdb/node-api'
import { InternalError } from '../errors/index.js'
import { parseTimestamp } from '../expressions/temporal.js'
import { FILE_COL, sqlFilePath, sqlIdent, sqlString } from './duckdb-runtime.js'
import { boundsOf, fileStatsJson, fileStatsQuery, type LeafStats } from './file-stats.js'
import type { StatsLeaf } from './write-layout.js'

/** What `COPY ... (RETURN_STATS)` returned for one written file. */
export interface ReturnedFileStats {
  /** Rows written to the file. */
  readonly count: number
  /** Per leaf column (quoted path, see {@link returnedStatsKey}), DuckDB's statistics as text. */
  readonly columns: ReadonlyMap<string, ReadonlyMap<string, string>>
}

/** A written file and what its COPY returned (undefined when it returned nothing usable). */
export interface WrittenFileInput {
  readonly path: string
  readonly returned: ReturnedFileStats | undefined
}

/**
 * Reads the `count` and `column_statistics` values of one row of a `RETURN_STATS` result.
 *
 * @param count - the `count` value
 * @param columnStatistics - the `column_statistics` value, `MAP(VARCHAR, MAP(VARCHAR, VARCHAR))`
 * @returns the statistics, or undefined when the values are not of that form
 */
export function readReturnedStats(
  count: DuckDBValue,
  columnStatistics: DuckDBValue,
): ReturnedFileStats | undefined {
  if (typeof count !== 'bigint' && typeof count !== 'number') return undefined
  if (!(columnStatistics instanceof DuckDBMapValue)) return undefined
  const columns = new Map<string, Map<string, string>>()
  for (const { key, value } of columnStatistics.entries) {
    if (typeof key !== 'string' || !(value instanceof DuckDBMapValue)) return undefined
    const stats = new Map<string, string>()
    for (const e of value.entries) {
      if (typeof e.key === 'string' && typeof e.value === 'string') stats.set(e.key, e.value)
    }
    columns.set(key, stats)
  }
  return { count: Number(count), columns }
}

/**
 * The key DuckDB gives a leaf column in `column_statistics`: each name double-quoted (quotes
 * doubled), joined by dots.
 *
 * @param path - the physical path
 * @returns the key
 */
export function returnedStatsKey(path: readonly string[]): string {
  return path.map((name) => `"${name.replaceAll('"', '""')}"`).join('.')
}

/**
 * The statistics of one leaf from what DuckDB returned, or undefined when they are not exactly
 * the aggregate's (the caller then computes the aggregate for that leaf).
 *
 * @param leaf - the leaf column
 * @param stats - the returned statistics of its key, if any
 * @param numRecords - the file's row count
 * @param footerExact - whether the footer has exact bounds in every row group holding a
 *   non-null value of the column (only consulted for strings and floating point)
 * @returns the leaf's statistics, or undefined
 */
export function leafStatsFromReturned(
  leaf: StatsLeaf,
  stats: ReadonlyMap<string, string> | undefined,
  numRecords: number,
  footerExact: boolean,
): LeafStats | undefined {
  if (stats === undefined) return undefined
  const nullText = stats.get('null_count')
  if (nullText === undefined || !/^\d+$/.test(nullText)) return undefined
  const nullCount = Number(nullText)
  if (!Number.isSafeInteger(nullCount) || nullCount > numRecords) return undefined
  if (!leaf.minMax || nullCount === numRecords) return { nullCount }
  const minText = stats.get('min')
  const maxText = stats.get('max')
  if (minText === undefined || maxText === undefined) return undefined
  if (needsFooterCheck(leaf) && (!footerExact || stats.get('has_nan') === 'true')) return undefined
  const min = aggregateForm(minText, leaf)
  const max = aggregateForm(maxText, leaf)
  if (min === undefined || max === undefined) return undefined
  return { nullCount, ...boundsOf(leaf, min, max) }
}

/**
 * Whether a leaf's returned bounds must be confirmed by the footer (strings, floating point).
 *
 * @param leaf - the leaf column
 */
export function needsFooterCheck(leaf: StatsLeaf): boolean {
  return leaf.minMax && (leaf.type === 'string' || leaf.type === 'float' || leaf.type === 'double')
}

/**
 * The `add.stats` of written files: from what their COPY returned where that is exact, and from
 * one aggregate query over the files for the leaves (of the files) where it is not.
 *
 * @param con - a connection that can read the files
 * @param leaves - the columns that get statistics
 * @param files - the written files
 * @returns per file path, the stats JSON and the row count
 */
export async function writtenFilesStats(
  con: DuckDBConnection,
  leaves: readonly StatsLeaf[],
  files: readonly WrittenFileInput[],
): Promise<Map<string, { json: string; numRecords: number }>> {
  const checked = leaves.some(needsFooterCheck)
    ? files.filter((f) => f.returned !== undefined).map((f) => f.path)
    : []
  const exact = checked.length > 0 ? await exactFooterColumns(con, checked) : new Set<string>()

  const perFile = files.map((f) => {
    const returned = f.returned
    const perLeaf = leaves.map((leaf) => {
      if (returned === undefined) return undefined
      const footerKey = footerColumnKey(leaf.physicalPath)
      return leafStatsFromReturned(
        leaf,
        returned.columns.get(returnedStatsKey(leaf.physicalPath)),
        returned.count,
        footerKey !== undefined && exact.has(`${f.path}\u0000${footerKey}`),
      )
    })
    return { path: f.path, numRecords: returned?.count, perLeaf }
  })

  // The aggregate runs once, over the files and for the leaves that lack exact statistics.
  const missing = leaves
    .map((_, i) => i)
    .filter((i) => perFile.some((f) => f.numRecords === undefined || f.perLeaf[i] === undefined))
  const needy = perFile.filter((f) => f.numRecords === undefined || f.perLeaf.some((s) => s === undefined))
  if (needy.length > 0) {
    const query = fileStatsQuery(missing.map((i) => leaves[i] as StatsLeaf))
    const result = await con.runAndReadAll(
      `SELECT ${sqlIdent(FILE_COL)}, ${query.selectList} FROM read_parquet([${needy
        .map((f) => sqlFilePath(f.path))
        .join(
          ', ',
        )}], filename = ${sqlString(FILE_COL)}, hive_partitioning = false) GROUP BY ${sqlIdent(FILE_COL)}`,
    )
    const byFile = new Map<string, readonly DuckDBValue[]>()
    for (const row of result.getRows()) byFile.set(String(row[0]), row.slice(1))
    for (const f of needy) {
      const values = byFile.get(f.path)
      if (values === undefined) throw new InternalError(`no statistics for the written file ${f.path}`)
      const aggregate = query.leafStats(values)
      if (f.numRecords !== undefined && f.numRecords !== aggregate.numRecords) {
        throw new InternalError(
          `the written file ${f.path} holds ${aggregate.numRecords} rows where DuckDB reported ${f.numRecords}`,
        )
      }
      f.numRecords = aggregate.numRecords
      missing.forEach((leafIndex, j) => {
        f.perLeaf[leafIndex] ??= aggregate.leaves[j]
      })
    }
  }

  const out = new Map<string, { json: string; numRecords: number }>()
  for (const f of perFile) {
    const numRecords = f.numRecords as number
    out.set(f.path, { json: fileStatsJson(leaves, numRecords, f.perLeaf as LeafStats[]), numRecords })
  }
  return out
}

// === Private helpers ===

/**
 * The `path_in_schema` of a leaf in `parquet_metadata` (names joined by `, `), or undefined when
 * a name holds a comma and the text could name another column.
 */
function footerColumnKey(path: readonly string[]): string | undefined {
  return path.some((name) => name.includes(',')) ? undefined : path.join(', ')
}

/**
 * The `file\0path_in_schema` pairs whose every row group holding a non-null value has exact
 * bounds in the footer.
 */
async function exactFooterColumns(con: DuckDBConnection, paths: readonly string[]): Promise<Set<string>> {
  const result = await con.runAndReadAll(
    `SELECT file_name, path_in_schema FROM parquet_metadata([${paths.map(sqlFilePath).join(', ')}]) ` +
      'GROUP BY ALL HAVING bool_and(coalesce(num_values = stats_null_count, false) ' +
      'OR coalesce(min_is_exact AND max_is_exact, false))',
  )
  const exact = new Set<string>()
  for (const row of result.getRows()) exact.add(`${String(row[0])}\u0000${String(row[1])}`)
  return exact
}

const INTEGER_TEXT = /^-?\d+$/
const FLOAT_TEXT = /^-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/

/**
 * A returned bound in the form the aggregate query gives it (see `boundsOf`), or undefined when
 * the text is not one DuckDB writes for an exact value of the leaf's type.
 */
function aggregateForm(text: string, leaf: StatsLeaf): DuckDBValue | undefined {
  switch (leaf.type) {
    case 'long':
    case 'integer':
    case 'short':
    case 'byte':
      return INTEGER_TEXT.test(text) ? BigInt(text) : undefined
    case 'double':
      return floatingFromText(text)
    case 'float': {
      const d = floatingFromText(text)
      return d === undefined ? undefined : floatFromDouble(d)
    }
    case 'string':
      return text
    case 'timestamp':
    case 'timestamp_ntz':
      return parseTimestamp(text)?.micros
    default:
      // Dates and decimals: the aggregate casts them to text, the same text DuckDB returns.
      return text
  }
}

function floatingFromText(text: string): number | undefined {
  if (text === 'inf') return Number.POSITIVE_INFINITY
  if (text === '-inf') return Number.NEGATIVE_INFINITY
  return FLOAT_TEXT.test(text) ? Number(text) : undefined
}

/**
 * The 32-bit float a shortest float text names, from the double nearest to that text. Rounding
 * twice (text to double to float) can only go wrong when the double falls exactly halfway between
 * two floats; that case gives undefined.
 */
function floatFromDouble(d: number): number | undefined {
  const f = Math.fround(d)
  if (f === d || !Number.isFinite(f)) return f
  const bits = new DataView(new ArrayBuffer(4))
  bits.setFloat32(0, f)
  const raw = bits.getUint32(0)
  // The float on the other side of d: one step from f toward d, in magnitude (sign and
  // magnitude bits, so one more is one further from zero, for either sign).
  bits.setUint32(0, Math.abs(d) > Math.abs(f) ? raw + 1 : raw - 1)
  const other = bits.getFloat32(0)
  return Math.abs(d - f) === Math.abs(other - d) ? undefined : f
}
