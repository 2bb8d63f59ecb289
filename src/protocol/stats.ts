/**
 * Per-file statistics (`add.stats`, a JSON string; protocol.md section 6).
 *
 * Statistics are advisory: malformed ones make a file "without usable stats" rather than make
 * the table unreadable. Values keep their JSON form: strings stay strings (dates and timestamps
 * included), integers that fit in a safe integer are `number`, larger ones `bigint`, other
 * numbers `number` (a decimal bound with more than ~15 significant digits is therefore rounded;
 * code that prunes on such bounds must widen them accordingly).
 */
import { type JsonValue, normalizeJsonValue, parseJsonText, stringifyJson } from './json-text.js'
import { isRawObject } from './raw-fields.js'

/** Nested per-column values (`minValues`, `maxValues`, `nullCount`), keyed by physical name. */
export type ColumnStats = Readonly<Record<string, JsonValue>>

/** The statistics of one data file. */
export interface FileStats {
  /** Physical rows in the file (deletion vectors not subtracted); absent when not recorded. */
  readonly numRecords?: bigint
  readonly minValues?: ColumnStats
  readonly maxValues?: ColumnStats
  readonly nullCount?: ColumnStats
  /**
   * Whether min/max are exact over the file's live rows. `false` after a DV was added: the bounds
   * then only contain the live values. Absent means exact.
   */
  readonly tightBounds?: boolean
}

function columnStats(v: JsonValue | undefined): ColumnStats | undefined | null {
  if (v === undefined || v === null) return undefined
  if (typeof v !== 'object' || Array.isArray(v)) return null
  return v as ColumnStats
}

/**
 * Parses `add.stats`.
 *
 * @param json - the stats JSON text, or `undefined` when the file has none
 * @returns the statistics, or `undefined` when absent or malformed (not JSON, wrong types,
 *   negative record count)
 */
export function parseStats(json: string | undefined): FileStats | undefined {
  if (json === undefined || json === '') return undefined
  let raw: unknown
  try {
    raw = parseJsonText(json)
  } catch {
    return undefined
  }
  if (!isRawObject(raw)) return undefined
  const value = normalizeJsonValue(raw)
  if (value === undefined || value === null || typeof value !== 'object' || Array.isArray(value))
    return undefined
  const obj = value as Readonly<Record<string, JsonValue>>
  const out: Record<string, unknown> = {}
  const n = obj.numRecords
  if (n !== undefined && n !== null) {
    if ((typeof n !== 'number' || !Number.isSafeInteger(n)) && typeof n !== 'bigint') return undefined
    if (n < 0) return undefined
    out.numRecords = BigInt(n)
  }
  for (const key of ['minValues', 'maxValues', 'nullCount'] as const) {
    const s = columnStats(obj[key])
    if (s === null) return undefined
    if (s !== undefined) out[key] = s
  }
  const tight = obj.tightBounds
  if (tight !== undefined && tight !== null) {
    if (typeof tight !== 'boolean') return undefined
    out.tightBounds = tight
  }
  return Object.freeze(out) as FileStats
}

/**
 * Serializes statistics as `add.stats` JSON text.
 *
 * @param stats - the statistics
 * @returns compact JSON with `numRecords`, `minValues`, `maxValues`, `nullCount`, `tightBounds`
 *   in that order, absent parts omitted
 * @throws {InvalidArgumentError} when a value cannot be written as JSON
 */
export function serializeStats(stats: FileStats): string {
  return stringifyJson({
    numRecords: stats.numRecords,
    minValues: stats.minValues,
    maxValues: stats.maxValues,
    nullCount: stats.nullCount,
    tightBounds: stats.tightBounds,
  })
}

/**
 * Looks up a (possibly nested) column's value in `minValues`, `maxValues` or `nullCount`.
 *
 * @param values - one of the per-column objects
 * @param path - the column's physical name path, e.g. `['s', 'a']`
 * @returns the value, or `undefined` when not recorded
 */
export function statValue(values: ColumnStats | undefined, path: readonly string[]): JsonValue | undefined {
  let cur: JsonValue | undefined = values
  for (const name of path) {
    if (cur === undefined || cur === null || typeof cur !== 'object' || Array.isArray(cur)) return undefined
    cur = (cur as Readonly<Record<string, JsonValue>>)[name]
  }
  return cur
}
