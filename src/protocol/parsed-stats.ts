/**
 * The typed forms of per-file statistics and partition values a checkpoint may carry next to (or
 * instead of) the JSON ones: `add.stats_parsed` and `add.partitionValues_parsed` (protocol.md
 * section 1.2, "Checkpoint Schema").
 *
 * Both structs are keyed by physical names and typed like the data columns: `minValues` and
 * `maxValues` hold the column's own type, `nullCount` a long per leaf column. The in-memory form
 * stays the JSON text of `add.stats`; these functions convert between the two exactly (decimals
 * keep every digit, timestamps go through microseconds), and drop any single value that does not
 * fit its column type, as statistics are advisory.
 *
 * Parsed values are accepted as decoders produce them: numbers, bigints, lossless-json numbers,
 * booleans, or text (`'1.50'`, `'2024-01-01 10:00:00.123+00'`, `'nan'`).
 */
import { LosslessNumber, parse as parseLossless } from 'lossless-json'
import { isJsonNumberText, parseJsonText, stringifyJson } from './json-text.js'
import { type PartitionValue, parsePartitionValue, serializePartitionValue } from './partition-values.js'
import { isRawObject, type RawObject } from './raw-fields.js'
import {
  type ColumnMappingMode,
  type DataType,
  decimalParts,
  type PrimitiveType,
  physicalName,
  type StructField,
  type StructType,
} from './schema.js'

/** The data columns of a table, as the parsed-stats conversions need them. */
export interface ParsedColumnsLayout {
  /** The type of `add.stats_parsed`. */
  readonly statsType: StructType
  /** The type of `add.partitionValues_parsed`; absent for an unpartitioned table. */
  readonly partitionValuesType?: StructType
}

/**
 * The types of `add.stats_parsed` and `add.partitionValues_parsed` for a table: partition
 * columns go to the second, every other column to the first (min/max for orderable primitive
 * types, null counts for every leaf), under physical names.
 *
 * @param schema - the table schema
 * @param partitionColumns - the partition columns, by logical name
 * @param mode - the table's column mapping mode
 * @returns the two struct types
 * @throws {InvalidTableError} `missing-schema` when column mapping is on and a field lacks its
 *   physical name
 */
export function parsedColumnsLayout(
  schema: StructType,
  partitionColumns: readonly string[],
  mode: ColumnMappingMode,
): ParsedColumnsLayout {
  const partitioned = new Set(partitionColumns.map((c) => c.toLowerCase()))
  const dataFields: StructField[] = []
  const partitionFields: StructField[] = []
  for (const f of schema.fields) {
    if (partitioned.has(f.name.toLowerCase())) {
      if (typeof f.type === 'string') partitionFields.push(field(physicalName(f, mode), f.type))
    } else dataFields.push(f)
  }
  const statsFields: StructField[] = [field('numRecords', 'long')]
  const minMax = boundsStruct(dataFields, mode)
  if (minMax) statsFields.push(field('minValues', minMax), field('maxValues', minMax))
  const nulls = nullCountStruct(dataFields, mode)
  if (nulls) statsFields.push(field('nullCount', nulls))
  statsFields.push(field('tightBounds', 'boolean'))
  const statsType: StructType = Object.freeze({ type: 'struct', fields: Object.freeze(statsFields) })
  if (partitionFields.length === 0) return Object.freeze({ statsType })
  return Object.freeze({
    statsType,
    partitionValuesType: Object.freeze({ type: 'struct', fields: Object.freeze(partitionFields) }),
  })
}

/**
 * Converts an `add.stats_parsed` struct into `add.stats` JSON text, the form the rest of the
 * library reads. Null and unrepresentable values are left out; timestamp minima are rounded down
 * and maxima up to the millisecond, as JSON statistics carry them.
 *
 * @param parsed - the decoded struct (an object), or null
 * @param statsType - the struct's type, from {@link parsedColumnsLayout}
 * @returns the JSON text, or `undefined` when the struct is absent, empty or has an invalid
 *   record count
 */
export function statsJsonFromParsed(parsed: unknown, statsType: StructType): string | undefined {
  if (!isRawObject(parsed)) return undefined
  const out = convertStatsFields(parsed, statsType, statsLeaf)
  if (out === undefined) return undefined
  const tight = parsed.tightBounds
  if (tight !== null && tight !== undefined) {
    const v = typedLeaf(tight, 'boolean')
    if (typeof v === 'boolean') out.tightBounds = v
  }
  if (Object.keys(out).length === 0) return undefined
  return stringifyJson({
    numRecords: out.numRecords,
    minValues: out.minValues,
    maxValues: out.maxValues,
    nullCount: out.nullCount,
    tightBounds: out.tightBounds,
  })
}

/**
 * Converts `add.stats` JSON text into the value of `add.stats_parsed`, as a JSON-ready object
 * whose leaves a Parquet writer casts to the struct's types: integers exact, decimals as text
 * with the column's scale, dates as `YYYY-MM-DD`, timestamps as ISO text with microseconds.
 * Values that do not fit their column type, and columns the struct does not have, are left out.
 *
 * @param stats - the JSON text of `add.stats`, or undefined
 * @param statsType - the struct's type, from {@link parsedColumnsLayout}
 * @returns the object, or `undefined` when there are no (readable) statistics
 */
export function parsedFromStatsJson(
  stats: string | undefined,
  statsType: StructType,
): Record<string, unknown> | undefined {
  if (stats === undefined || stats === '') return undefined
  let raw: unknown
  try {
    // Decimal bounds must keep every digit: the lossless parser keeps numbers as text.
    raw = hasDecimal(statsType) ? parseLossless(stats) : parseJsonText(stats)
  } catch {
    return undefined
  }
  if (!isRawObject(raw)) return undefined
  const out = convertStatsFields(raw, statsType, writableLeaf)
  if (out === undefined) return undefined
  if (typeof raw.tightBounds === 'boolean') out.tightBounds = raw.tightBounds
  return Object.keys(out).length === 0 ? undefined : out
}

/**
 * The record count and the three column trees of a statistics object, for both directions
 * between `add.stats` and `add.stats_parsed`: a null count stays a non-negative long, and each
 * bound is read as its column type and then converted by `bound`.
 *
 * @returns the converted fields; `undefined` when the record count is not a non-negative long
 */
function convertStatsFields(
  source: RawObject,
  statsType: StructType,
  bound: (typed: PartitionValue, type: PrimitiveType, isMax: boolean) => unknown,
): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {}
  const n = source.numRecords
  if (n !== null && n !== undefined) {
    const v = typedLeaf(n, 'long')
    if (typeof v !== 'bigint' || v < 0n) return undefined
    out.numRecords = v
  }
  for (const f of statsType.fields) {
    if (f.name !== 'minValues' && f.name !== 'maxValues' && f.name !== 'nullCount') continue
    if (typeof f.type !== 'object' || f.type.type !== 'struct') continue
    const isMax = f.name === 'maxValues'
    const leaf: StatsLeaf =
      f.name === 'nullCount'
        ? countLeaf
        : (v, type) => {
            const typed = typedLeaf(v, type)
            return typed === undefined ? undefined : bound(typed, type, isMax)
          }
    const converted = mapStatsTree(source[f.name], f.type, leaf)
    if (converted !== undefined) out[f.name] = converted
  }
  return out
}

/**
 * Converts `add.partitionValues` into the value of `add.partitionValues_parsed`.
 *
 * @param values - the string partition values, keyed by physical name
 * @param partitionValuesType - the struct's type, from {@link parsedColumnsLayout}
 * @returns a JSON-ready object in the form {@link parsedFromStatsJson} describes; a value that
 *   does not parse as its column type is null
 */
export function parsedFromPartitionValues(
  values: Readonly<Record<string, string | null>>,
  partitionValuesType: StructType,
): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const f of partitionValuesType.fields) {
    const type = f.type as PrimitiveType
    let typed: PartitionValue
    try {
      typed = parsePartitionValue(values[f.name] ?? null, type, f.name)
    } catch {
      typed = null
    }
    out[f.name] = typed === null ? null : (writableLeaf(typed, type) ?? null)
  }
  return out
}

/**
 * Converts an `add.partitionValues_parsed` struct back into `add.partitionValues` strings.
 *
 * @param parsed - the decoded struct
 * @param partitionValuesType - the struct's type, from {@link parsedColumnsLayout}
 * @returns the string values keyed by physical name, or `undefined` when the struct is absent
 *   or one of its values cannot be turned back into its exact partition value
 */
export function partitionValuesFromParsed(
  parsed: unknown,
  partitionValuesType: StructType,
): Record<string, string | null> | undefined {
  if (!isRawObject(parsed)) return undefined
  const out: Record<string, string | null> = {}
  for (const f of partitionValuesType.fields) {
    const raw = parsed[f.name]
    if (raw === null || raw === undefined) {
      out[f.name] = null
      continue
    }
    const type = f.type as PrimitiveType
    // Binary values come back in a decoder's escaped text, which is not the stored string.
    if (type === 'binary') return undefined
    const typed = typedLeaf(raw, type)
    if (typed === undefined) return undefined
    try {
      out[f.name] = serializePartitionValue(typed, type, f.name)
    } catch {
      return undefined
    }
  }
  return out
}

// === Private helpers ===

function field(name: string, type: DataType): StructField {
  return Object.freeze({ name, type, nullable: true, metadata: Object.freeze({}) })
}

/** Delta's skipping-eligible types: numbers, decimals, strings, dates and timestamps. */
function hasMinMax(type: DataType): type is PrimitiveType {
  if (typeof type !== 'string') return false
  return type !== 'boolean' && type !== 'binary' && type !== 'void' && type !== 'variant'
}

function boundsStruct(fields: readonly StructField[], mode: ColumnMappingMode): StructType | undefined {
  const out: StructField[] = []
  for (const f of fields) {
    if (typeof f.type === 'object' && f.type.type === 'struct') {
      const inner = boundsStruct(f.type.fields, mode)
      if (inner) out.push(field(physicalName(f, mode), inner))
    } else if (hasMinMax(f.type)) out.push(field(physicalName(f, mode), f.type))
  }
  return out.length === 0 ? undefined : Object.freeze({ type: 'struct', fields: Object.freeze(out) })
}

function nullCountStruct(fields: readonly StructField[], mode: ColumnMappingMode): StructType | undefined {
  const out: StructField[] = []
  for (const f of fields) {
    if (typeof f.type === 'object' && f.type.type === 'struct') {
      const inner = nullCountStruct(f.type.fields, mode)
      if (inner) out.push(field(physicalName(f, mode), inner))
    } else if (f.type !== 'void') out.push(field(physicalName(f, mode), 'long'))
  }
  return out.length === 0 ? undefined : Object.freeze({ type: 'struct', fields: Object.freeze(out) })
}

function hasDecimal(type: DataType): boolean {
  if (typeof type === 'string') return decimalParts(type) !== undefined
  if (type.type === 'struct') return type.fields.some((f) => hasDecimal(f.type))
  return false
}

/** Text of a decoded leaf, whatever form the decoder gave it. */
function leafText(v: unknown): string | undefined {
  if (typeof v === 'string') return v
  if (typeof v === 'bigint') return v.toString()
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : undefined
  if (typeof v === 'boolean') return v ? 'true' : 'false'
  if (isJsonNumberText(v)) return v.value
  return undefined
}

// DuckDB writes a UTC offset as `+00`; the partition-value grammar wants `+00:00`.
const SHORT_OFFSET = /([+-]\d{2})$/
const TIME_PART = /\d{2}:\d{2}/
const UTC_SUFFIX = /(Z|[+-]00:00)$/

/** A decoded leaf as a typed value (the typing of partition values), or undefined. */
function typedLeaf(v: unknown, type: PrimitiveType): PartitionValue | undefined {
  if (type === 'string') return typeof v === 'string' ? v : undefined
  let text = leafText(v)
  if (text === undefined || text === '') return undefined
  if ((type === 'timestamp' || type === 'timestamp_ntz') && TIME_PART.test(text)) {
    // A zone-less text of an instant column is read as UTC, which is how the struct stores it;
    // a wall-clock column's text may carry the UTC marker its decoder added.
    text = text.replace(SHORT_OFFSET, '$1:00')
    if (type === 'timestamp_ntz') text = text.replace(UTC_SUFFIX, '')
  }
  try {
    let typed = parsePartitionValue(text, type)
    // A float's shortest text ('1.1') is not its value; the nearest float is, exactly.
    if (type === 'float' && typeof typed === 'number') typed = Math.fround(typed)
    if (typeof typed === 'number' && !Number.isFinite(typed)) return undefined
    return typed ?? undefined
  } catch {
    return undefined
  }
}

// Years 0001..9999: what JSON statistics and every Parquet reader can hold.
const MIN_MICROS = -62_135_596_800_000_000n
const MAX_MICROS = 253_402_300_799_999_999n
const DATE_TEXT = /^\d{4}-\d{2}-\d{2}$/

/** A typed value as a JSON statistics value, or undefined when JSON statistics cannot hold it. */
function statsLeaf(typed: PartitionValue, type: PrimitiveType, isMax: boolean): unknown {
  switch (type) {
    case 'long':
    case 'integer':
    case 'short':
    case 'byte':
    case 'float':
    case 'double':
    case 'string':
    case 'boolean':
      return typed
    case 'date':
      return typeof typed === 'string' && DATE_TEXT.test(typed) ? typed : undefined
    case 'timestamp':
    case 'timestamp_ntz':
      return typeof typed === 'bigint' ? millisText(typed, isMax, type === 'timestamp') : undefined
    default:
      return typeof typed === 'string' && decimalParts(type) !== undefined
        ? new LosslessNumber(typed)
        : undefined
  }
}

/** ISO text in milliseconds, rounded down for a minimum and up for a maximum. */
function millisText(micros: bigint, roundUp: boolean, withZone: boolean): string | undefined {
  let ms = micros / 1000n
  const rest = micros % 1000n
  if (rest < 0n) ms -= 1n
  if (roundUp && rest !== 0n) ms += 1n
  if (ms * 1000n < MIN_MICROS || ms * 1000n > MAX_MICROS) return undefined
  const iso = new Date(Number(ms)).toISOString()
  return withZone ? iso : iso.slice(0, -1)
}

/** A typed value as a JSON value a Parquet writer casts to the column type exactly. */
function writableLeaf(typed: PartitionValue, type: PrimitiveType): unknown {
  switch (type) {
    case 'long':
    case 'integer':
    case 'short':
    case 'byte':
    case 'string':
    case 'boolean':
      return typed
    case 'float':
    case 'double':
      return typeof typed === 'number' && Number.isFinite(typed) ? typed : undefined
    case 'date':
      return typeof typed === 'string' && DATE_TEXT.test(typed) ? typed : undefined
    case 'timestamp':
    case 'timestamp_ntz':
      if (typeof typed !== 'bigint' || typed < MIN_MICROS || typed > MAX_MICROS) return undefined
      return serializePartitionValue(typed, type)
    case 'binary': {
      // Only text a blob cast reads back byte for byte: printable ASCII without backslashes.
      if (!(typed instanceof Uint8Array)) return undefined
      for (const b of typed) if (b < 0x20 || b > 0x7e || b === 0x5c) return undefined
      return new TextDecoder().decode(typed)
    }
    default:
      return typeof typed === 'string' && decimalParts(type) !== undefined ? typed : undefined
  }
}

/** Converts one leaf of a statistics tree; `undefined` leaves it out. */
type StatsLeaf = (v: unknown, type: PrimitiveType) => unknown

/** A null count: a non-negative long. */
function countLeaf(v: unknown): bigint | undefined {
  const count = typedLeaf(v, 'long')
  return typeof count === 'bigint' && count >= 0n ? count : undefined
}

/**
 * A statistics tree (`minValues`, `maxValues` or `nullCount`) with each non-null leaf converted
 * by `leaf`, down the struct fields of `type`; fields of other nested types, and empty structs,
 * are left out.
 */
function mapStatsTree(raw: unknown, type: StructType, leaf: StatsLeaf): Record<string, unknown> | undefined {
  if (!isRawObject(raw)) return undefined
  const out: Record<string, unknown> = {}
  for (const f of type.fields) {
    const v = raw[f.name]
    if (v === null || v === undefined) continue
    if (typeof f.type === 'object') {
      if (f.type.type !== 'struct') continue
      const inner = mapStatsTree(v, f.type, leaf)
      if (inner !== undefined) out[f.name] = inner
      continue
    }
    const converted = leaf(v, f.type)
    if (converted !== undefined) out[f.name] = converted
  }
  return Object.keys(out).length === 0 ? undefined : out
}

/**
 * Whether a decoded checkpoint `add` needs its parsed columns to be complete: it has no
 * `stats` but a `stats_parsed`, or no `partitionValues` but a `partitionValues_parsed`.
 *
 * @param add - the decoded `add` object of a checkpoint row
 * @returns true when {@link completeAddFromParsed} has something to fill in
 */
export function addNeedsParsedColumns(add: unknown): boolean {
  if (!isRawObject(add)) return false
  // Runs once per checkpoint row: plain comparisons (`== null`: undefined or null), no closure.
  return (
    (add.stats == null && add.stats_parsed != null) ||
    (add.partitionValues == null && add.partitionValues_parsed != null)
  )
}

/**
 * Fills a decoded checkpoint `add`'s missing `stats` from `stats_parsed` and missing
 * `partitionValues` from `partitionValues_parsed`. A present JSON form always wins.
 *
 * @param add - the decoded `add` object
 * @param layout - the table's parsed-column types, from {@link parsedColumnsLayout}
 * @returns a copy with what could be converted filled in
 */
export function completeAddFromParsed(
  add: Readonly<Record<string, unknown>>,
  layout: ParsedColumnsLayout,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...add }
  if (out.stats === undefined || out.stats === null) {
    const stats = statsJsonFromParsed(add.stats_parsed, layout.statsType)
    if (stats !== undefined) out.stats = stats
  }
  if ((out.partitionValues === undefined || out.partitionValues === null) && layout.partitionValuesType) {
    const values = partitionValuesFromParsed(add.partitionValues_parsed, layout.partitionValuesType)
    if (values !== undefined) out.partitionValues = values
  }
  return out
}
