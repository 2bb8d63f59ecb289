/**
 * Per-file statistics (`add.stats`, protocol.md section 6): how they are built from exact
 * per-column minimums, maximums and null counts, and the aggregate query DuckDB runs over a
 * written file to get them when the statistics its writer returned are not exact
 * (`written-file-stats.ts` decides, column by column).
 *
 * The JSON follows what Spark writes: nested objects keyed by physical names; decimals as JSON
 * numbers with the column's scale; dates `YYYY-MM-DD`; timestamps as ISO text in milliseconds;
 * strings cut to a 32-character prefix. Every bound stays a bound: a cut string maximum gets a
 * tie-breaker appended, and a timestamp maximum is rounded up to the next millisecond. Bounds JSON
 * cannot hold (NaN, infinities, dates outside years 0001..9999) are left out.
 */
import type { DuckDBValue } from '@duckdb/node-api'
import { LosslessNumber } from 'lossless-json'
import { InternalError } from '../errors/index.js'
import { duckDbColumn } from '../expressions/render-duckdb.js'
import { formatDate, MAX_TIMESTAMP_MICROS, MIN_TIMESTAMP_MICROS } from '../expressions/temporal.js'
import { stringifyJson } from '../protocol/json-text.js'
import { decimalParts } from '../protocol/schema.js'
import type { StatsLeaf } from './write-layout.js'

/** Characters (code points) kept of string bounds, as Spark's default prefix length. */
export const STRING_PREFIX_LENGTH = 32

const ASCII_MAX = 0x7f
const UNICODE_MAX = 0x10ffff

/** An aggregate query for the statistics of a set of rows, and how to read its result. */
export interface FileStatsQuery {
  /** The aggregates, comma-separated, to put in a `SELECT`; the first is `count(*)`. */
  readonly selectList: string
  /** How many values {@link selectList} produces. */
  readonly width: number
  /**
   * Builds `add.stats` from the aggregate values.
   *
   * @param values - the result values of {@link selectList}, in order
   * @returns the stats JSON text and the row count
   */
  toStats(values: readonly DuckDBValue[]): { readonly json: string; readonly numRecords: number }
  /**
   * The row count and each leaf's statistics from the aggregate values.
   *
   * @param values - the result values of {@link selectList}, in order
   * @returns the row count, and one entry per leaf in the order planned
   */
  leafStats(values: readonly DuckDBValue[]): {
    readonly numRecords: number
    readonly leaves: readonly LeafStats[]
  }
}

/** A bound as it goes into the stats JSON. */
export type StatJson = bigint | number | string | LosslessNumber

/** The statistics of one leaf column of one file, as they go into `add.stats`. */
export interface LeafStats {
  readonly nullCount: number
  /** The lower bound, or undefined when it is left out. */
  readonly min?: StatJson
  /** The upper bound, or undefined when it is left out. */
  readonly max?: StatJson
}

/**
 * Plans the statistics of the given leaf columns.
 *
 * @param leaves - the columns that get statistics, with their physical paths
 * @param column - SQL for a physical column path; defaults to quoted names and `struct_extract`
 * @returns the aggregate query
 */
export function fileStatsQuery(
  leaves: readonly StatsLeaf[],
  column: (path: readonly string[]) => string = duckDbColumn,
): FileStatsQuery {
  const parts = ['count(*)']
  for (const leaf of leaves) {
    const c = column(leaf.physicalPath)
    parts.push(`count(${c})`)
    if (leaf.minMax) parts.push(boundSql('min', c, leaf), boundSql('max', c, leaf))
  }
  return Object.freeze({
    selectList: parts.join(', '),
    width: parts.length,
    toStats: (values: readonly DuckDBValue[]) => {
      const { numRecords, leaves: perLeaf } = aggregateLeafStats(leaves, values)
      return { json: fileStatsJson(leaves, numRecords, perLeaf), numRecords }
    },
    leafStats: (values: readonly DuckDBValue[]) => aggregateLeafStats(leaves, values),
  })
}

/**
 * The bounds of a leaf as they go into the stats JSON, from the values the aggregate query of
 * {@link fileStatsQuery} gives for its minimum and maximum (bigint for integers and for
 * timestamps in microseconds, number for floating point, text for strings, dates and decimals).
 * A value of any other form, NaN, an infinity, or a date or timestamp outside years 0001..9999
 * gives no bound.
 *
 * @param leaf - the leaf column
 * @param min - its minimum, null when it has no non-null value
 * @param max - its maximum
 * @returns the bounds kept
 */
export function boundsOf(
  leaf: StatsLeaf,
  min: DuckDBValue,
  max: DuckDBValue,
): { readonly min?: StatJson; readonly max?: StatJson } {
  const lo = boundValue(min, leaf, false)
  const hi = boundValue(max, leaf, true)
  return { ...(lo === undefined ? {} : { min: lo }), ...(hi === undefined ? {} : { max: hi }) }
}

/**
 * The `add.stats` JSON of a file.
 *
 * @param leaves - the columns that get statistics
 * @param numRecords - the file's row count
 * @param perLeaf - the statistics of each leaf, in the order of `leaves`
 * @returns the JSON text
 */
export function fileStatsJson(
  leaves: readonly StatsLeaf[],
  numRecords: number,
  perLeaf: readonly LeafStats[],
): string {
  const minValues: StatsTree = {}
  const maxValues: StatsTree = {}
  const nullCount: StatsTree = {}
  leaves.forEach((leaf, i) => {
    const stats = perLeaf[i]
    if (stats === undefined)
      throw new InternalError(`no statistics for column ${leaf.physicalPath.join('.')}`)
    put(nullCount, leaf.physicalPath, stats.nullCount)
    if (!leaf.minMax) return
    if (stats.min !== undefined) put(minValues, leaf.physicalPath, stats.min)
    if (stats.max !== undefined) put(maxValues, leaf.physicalPath, stats.max)
  })
  const nonEmpty = (t: StatsTree): StatsTree | undefined => (Object.keys(t).length > 0 ? t : undefined)
  return stringifyJson({
    numRecords,
    minValues: nonEmpty(minValues),
    maxValues: nonEmpty(maxValues),
    nullCount: nonEmpty(nullCount),
    tightBounds: true,
  })
}

/**
 * The lower bound Delta keeps for a string: its first {@link STRING_PREFIX_LENGTH} code points.
 *
 * @param s - the minimum value
 * @param prefixLength - code points to keep
 * @returns the prefix (the value itself when short enough)
 */
export function truncateMinString(s: string, prefixLength = STRING_PREFIX_LENGTH): string {
  const end = codePointsEnd(s, 0, prefixLength)
  return end >= s.length ? s : s.slice(0, end)
}

/**
 * The upper bound Delta keeps for a string: a prefix plus a tie-breaker that compares greater, in
 * UTF-8 byte order, than the code point it replaces: U+007F after a smaller ASCII character,
 * U+10FFFF otherwise. Code points U+10FFFF cannot be beaten, so the prefix grows over them, up to
 * twice the prefix length.
 *
 * @param s - the maximum value
 * @param prefixLength - code points to keep
 * @returns the bound, or undefined when no bound of bounded length exists (the stat is omitted)
 */
export function truncateMaxString(s: string, prefixLength = STRING_PREFIX_LENGTH): string | undefined {
  let at = codePointsEnd(s, 0, prefixLength)
  for (let len = prefixLength; len <= 2 * prefixLength; len++) {
    if (at >= s.length) return s
    const next = s.codePointAt(at) as number
    if (next !== UNICODE_MAX) {
      const tieBreaker = String.fromCodePoint(next < ASCII_MAX ? ASCII_MAX : UNICODE_MAX)
      return s.slice(0, at) + tieBreaker
    }
    // U+10FFFF is a surrogate pair.
    at += 2
  }
  return undefined
}

/**
 * The UTF-16 index `count` code points after `from`, or `s.length` when fewer are left. Code
 * points as `Array.from` splits them: a surrogate pair is one, a lone surrogate one too. Only
 * the prefix is walked, so a 200 MB value costs as much as a short one.
 */
function codePointsEnd(s: string, from: number, count: number): number {
  let at = from
  for (let k = 0; k < count && at < s.length; k++) {
    const unit = s.charCodeAt(at)
    const pair =
      unit >= 0xd800 && unit <= 0xdbff && at + 1 < s.length && (s.charCodeAt(at + 1) & 0xfc00) === 0xdc00
    at += pair ? 2 : 1
  }
  return at
}

/**
 * A timestamp bound as Delta stats write it: ISO text in milliseconds, `Z`-suffixed for
 * `timestamp`, bare for `timestamp_ntz`. A minimum is rounded down, a maximum up, so both stay
 * bounds of the microsecond values.
 *
 * @param micros - microseconds since the epoch
 * @param roundUp - true for a maximum
 * @param withZone - true for `timestamp`
 * @returns the text, or undefined outside years 0001..9999
 */
export function formatStatsTimestamp(
  micros: bigint,
  roundUp: boolean,
  withZone: boolean,
): string | undefined {
  let ms = micros / 1000n
  const rest = micros % 1000n
  if (rest < 0n) ms -= 1n
  if (roundUp && rest !== 0n) ms += 1n
  if (ms * 1000n < MIN_TIMESTAMP_MICROS || ms * 1000n > MAX_TIMESTAMP_MICROS) return undefined
  const msPerDay = 86_400_000n
  let days = ms / msPerDay
  if (ms % msPerDay < 0n) days -= 1n
  const inDay = Number(ms - days * msPerDay)
  const pad = (n: number, w: number): string => String(n).padStart(w, '0')
  const time = `${pad(Math.floor(inDay / 3_600_000), 2)}:${pad(Math.floor(inDay / 60_000) % 60, 2)}:${pad(Math.floor(inDay / 1000) % 60, 2)}.${pad(inDay % 1000, 3)}`
  return `${formatDate(Number(days))}T${time}${withZone ? 'Z' : ''}`
}

// === Private helpers ===

function boundSql(agg: 'min' | 'max', c: string, leaf: StatsLeaf): string {
  const type = leaf.type
  switch (type) {
    case 'long':
    case 'integer':
    case 'short':
    case 'byte':
      return `CAST(${agg}(${c}) AS BIGINT)`
    case 'float':
    case 'double':
      return `CAST(${agg}(${c}) AS DOUBLE)`
    case 'string':
      return `${agg}(${c})`
    case 'date':
      return `CAST(${agg}(${c}) AS VARCHAR)`
    case 'timestamp':
    case 'timestamp_ntz':
      return `epoch_us(${agg}(${c}))`
    default:
      // Decimals: DuckDB's text keeps every digit and the column's scale.
      return `CAST(${agg}(${c}) AS VARCHAR)`
  }
}

const DATE_TEXT = /^\d{4}-\d{2}-\d{2}$/
const DECIMAL_TEXT = /^-?\d+(\.\d+)?$/

function boundValue(v: DuckDBValue, leaf: StatsLeaf, isMax: boolean): StatJson | undefined {
  if (v === null || v === undefined) return undefined
  const type = leaf.type
  switch (type) {
    case 'long':
      return typeof v === 'bigint' ? v : undefined
    case 'integer':
    case 'short':
    case 'byte':
      return typeof v === 'bigint' ? Number(v) : undefined
    case 'float':
    case 'double':
      return typeof v === 'number' && Number.isFinite(v) ? v : undefined
    case 'string':
      if (typeof v !== 'string') return undefined
      return isMax ? truncateMaxString(v) : truncateMinString(v)
    case 'date':
      return typeof v === 'string' && DATE_TEXT.test(v) ? v : undefined
    case 'timestamp':
    case 'timestamp_ntz':
      return typeof v === 'bigint' ? formatStatsTimestamp(v, isMax, type === 'timestamp') : undefined
    default:
      if (
        typeof type === 'string' &&
        decimalParts(type) !== undefined &&
        typeof v === 'string' &&
        DECIMAL_TEXT.test(v)
      ) {
        return new LosslessNumber(v)
      }
      return undefined
  }
}

type StatsTree = { [name: string]: StatsTree | StatJson }

function put(tree: StatsTree, path: readonly string[], value: StatJson): void {
  let node = tree
  for (let i = 0; i < path.length - 1; i++) {
    const key = path[i] as string
    const child = node[key]
    if (child === undefined || typeof child !== 'object' || child instanceof LosslessNumber) {
      const created: StatsTree = {}
      node[key] = created
      node = created
    } else node = child
  }
  node[path[path.length - 1] as string] = value
}

function toCount(v: DuckDBValue): number {
  return typeof v === 'bigint' || typeof v === 'number' ? Number(v) : 0
}

function aggregateLeafStats(
  leaves: readonly StatsLeaf[],
  values: readonly DuckDBValue[],
): { numRecords: number; leaves: LeafStats[] } {
  const numRecords = toCount(values[0] ?? null)
  const out: LeafStats[] = []
  let k = 1
  for (const leaf of leaves) {
    const nullCount = numRecords - toCount(values[k++] ?? null)
    if (!leaf.minMax) {
      out.push({ nullCount })
      continue
    }
    const min = values[k++] ?? null
    const max = values[k++] ?? null
    out.push({ nullCount, ...boundsOf(leaf, min, max) })
  }
  return { numRecords, leaves: out }
}
