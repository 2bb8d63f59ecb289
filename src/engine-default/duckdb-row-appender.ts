import {
  BIGINT,
  type DuckDBAppender,
  DuckDBBlobValue,
  DuckDBDataChunk,
  DuckDBDateValue,
  DuckDBDecimalValue,
  DuckDBListValue,
  type DuckDBMapEntry,
  DuckDBMapValue,
  DuckDBStructValue,
  DuckDBTimestampTZValue,
  DuckDBTimestampValue,
  type DuckDBType,
  DuckDBTypeId,
  type DuckDBValue,
  type DuckDBVector,
  INTEGER,
} from '@duckdb/node-api'
import duckdb from '@duckdb/node-bindings'
import { InvalidArgumentError } from '../errors/index.js'
import { parseDecimal } from '../expressions/decimal.js'
import {
  MAX_TIMESTAMP_MICROS,
  MIN_TIMESTAMP_MICROS,
  parseDate,
  parseTimestamp,
} from '../expressions/temporal.js'
import {
  type ColumnMappingMode,
  type DataType,
  decimalParts,
  type PrimitiveType,
} from '../protocol/schema.js'
import type { DeletedPositions } from './duckdb-deletion-mask.js'
import { StringVectorBuffer } from './duckdb-string-vector.js'
import { decimalText } from './duckdb-values.js'
import { physicalNameOf } from './write-layout.js'

/**
 * Checks JavaScript values against Delta types and converts them for DuckDB, exactly.
 *
 * Accepted values (the `DataPlane` row representation, plus a few unambiguous conveniences):
 * `long` bigint or safe integer; `integer`/`short`/`byte` integer number or bigint in range;
 * `float`/`double` number; `decimal` decimal text, number or bigint that fits the precision and
 * scale without rounding; `date` `'YYYY-MM-DD'`; `timestamp` ISO text (zone-less text is UTC) or
 * a `Date`; `timestamp_ntz` ISO text without a zone; `binary` Uint8Array; struct a plain object;
 * array an array; map a `Map` (or a plain object when keys are strings). `undefined` is null.
 */
export class RowValueConverter {
  readonly #mode: ColumnMappingMode

  /** @param mode - column mapping mode; nested struct fields are written under physical names */
  constructor(mode: ColumnMappingMode) {
    this.#mode = mode
  }

  /**
   * Appends one top-level value to the current row of an appender.
   *
   * @param appender - the appender, positioned at this column
   * @param value - the JavaScript value
   * @param type - the column's Delta type
   * @param nullable - whether null is allowed
   * @param duckType - the appender's type for this column (used for nested values)
   * @param at - row index and column name, for messages
   * @throws {InvalidArgumentError} when the value does not fit the type or is a forbidden null
   */
  append(
    appender: DuckDBAppender,
    value: unknown,
    type: DataType,
    nullable: boolean,
    duckType: DuckDBType,
    at: ValuePosition,
  ): void {
    if (value === null || value === undefined) {
      if (!nullable) fail(at, at.column, 'a non-null value (the column is not nullable)', value)
      appender.appendNull()
      return
    }
    if (typeof type !== 'string') {
      appender.appendValue(this.convert(value, type, at, at.column), duckType)
      return
    }
    switch (type) {
      case 'long':
        appender.appendBigInt(toLong(value, at, at.column))
        return
      case 'integer':
        appender.appendInteger(toInt(value, type, at, at.column))
        return
      case 'short':
        appender.appendSmallInt(toInt(value, type, at, at.column))
        return
      case 'byte':
        appender.appendTinyInt(toInt(value, type, at, at.column))
        return
      case 'float':
        appender.appendFloat(toFloating(value, type, at, at.column))
        return
      case 'double':
        appender.appendDouble(toFloating(value, type, at, at.column))
        return
      case 'string':
        appender.appendVarchar(toText(value, at, at.column))
        return
      case 'boolean':
        if (typeof value !== 'boolean') fail(at, at.column, 'a boolean', value)
        appender.appendBoolean(value)
        return
      case 'binary':
        appender.appendBlob(toBinary(value, at, at.column))
        return
      case 'date':
        appender.appendDate(new DuckDBDateValue(toDays(value, at, at.column)))
        return
      case 'timestamp':
        appender.appendValue(new DuckDBTimestampTZValue(toMicros(value, true, at, at.column)), duckType)
        return
      case 'timestamp_ntz':
        appender.appendTimestamp(new DuckDBTimestampValue(toMicros(value, false, at, at.column)))
        return
      default:
        appender.appendValue(this.convert(value, type, at, at.column), duckType)
    }
  }

  /**
   * Checks one top-level value and returns its DuckDB form, with exactly the checks and messages
   * of {@link RowValueConverter.append}: the form {@link ChunkAppender} takes.
   *
   * @param value - the JavaScript value
   * @param type - the column's Delta type
   * @param nullable - whether null is allowed
   * @param at - row index and column name, for messages
   * @returns the DuckDB value, or null
   * @throws {InvalidArgumentError} when the value does not fit the type or is a forbidden null
   */
  value(value: unknown, type: DataType, nullable: boolean, at: ValuePosition): DuckDBValue {
    if (value === null || value === undefined) {
      if (!nullable) fail(at, at.column, 'a non-null value (the column is not nullable)', value)
      return null
    }
    return this.convert(value, type, at, at.column)
  }

  /**
   * Converts a non-null value to a DuckDB value.
   *
   * @param value - the JavaScript value
   * @param type - its Delta type
   * @param at - row index and column, for messages
   * @param path - the (nested) column path, for messages
   * @returns the DuckDB value
   * @throws {InvalidArgumentError} when the value does not fit the type
   */
  convert(value: unknown, type: DataType, at: ValuePosition, path: string): DuckDBValue {
    if (typeof type === 'string') return convertPrimitive(value, type, at, path)
    switch (type.type) {
      case 'struct': {
        if (!isPlainObject(value)) fail(at, path, 'an object (struct)', value)
        const known = new Set(type.fields.map((f) => f.name))
        for (const k of Object.keys(value)) {
          if (!known.has(k)) unknownColumn(at, `${path}.${k}`, k, known)
        }
        const entries: Record<string, DuckDBValue> = {}
        for (const f of type.fields) {
          entries[physicalNameOf(f, this.#mode)] = this.#nested(
            value[f.name],
            f.type,
            f.nullable,
            at,
            `${path}.${f.name}`,
          )
        }
        return new DuckDBStructValue(entries)
      }
      case 'array': {
        if (!Array.isArray(value)) fail(at, path, 'an array', value)
        return new DuckDBListValue(
          value.map((item: unknown, i: number) =>
            this.#nested(item, type.elementType, type.containsNull, at, `${path}[${i}]`),
          ),
        )
      }
      case 'map': {
        let pairs: [unknown, unknown][]
        if (value instanceof Map) pairs = [...value.entries()]
        else if (type.keyType === 'string' && isPlainObject(value)) pairs = Object.entries(value)
        else return fail(at, path, 'a Map', value)
        const entries: DuckDBMapEntry[] = pairs.map(([k, v]) => ({
          key: this.#nested(k, type.keyType, false, at, `${path}.key`),
          value: this.#nested(v, type.valueType, type.valueContainsNull, at, `${path}[${describeKey(k)}]`),
        }))
        return new DuckDBMapValue(entries)
      }
    }
  }

  #nested(value: unknown, type: DataType, nullable: boolean, at: ValuePosition, path: string): DuckDBValue {
    if (value === null || value === undefined) {
      if (!nullable) fail(at, path, 'a non-null value (the field is not nullable)', value)
      return null
    }
    return this.convert(value, type, at, path)
  }
}

/** Rows per data chunk: DuckDB's standard vector size, the most a chunk holds. */
const CHUNK_ROWS = 2048

/**
 * Feeds an appender whole data chunks filled in JavaScript: fixed-width values go into typed
 * arrays and cross to DuckDB once per chunk, where the appender's own calls cross once per value
 * and once more per row; so do strings and blobs of at most 12 bytes (see
 * {@link StringVectorBuffer}), longer ones cost a call each. Values must already be in their
 * DuckDB form (see {@link RowValueConverter.value}).
 *
 * A row left unfinished when an error is thrown is never appended.
 */
export class ChunkAppender {
  readonly #appender: DuckDBAppender
  readonly #types: readonly DuckDBType[]
  /** Per column: its string buffer when it is VARCHAR or BLOB. */
  readonly #strings: readonly (StringVectorBuffer | undefined)[]
  #chunk: DuckDBDataChunk | undefined
  /** Per column: its vector, when it has no string buffer. */
  #vectors: (DuckDBVector | undefined)[] = []
  #filled = 0

  /**
   * @param appender - the destination
   * @param types - the appender's column types, in order
   */
  constructor(appender: DuckDBAppender, types: readonly DuckDBType[]) {
    this.#appender = appender
    this.#types = types
    this.#strings = types.map((t) =>
      t.typeId === DuckDBTypeId.VARCHAR || t.typeId === DuckDBTypeId.BLOB
        ? new StringVectorBuffer(CHUNK_ROWS, t.typeId === DuckDBTypeId.BLOB)
        : undefined,
    )
  }

  /**
   * Sets one value of the current row.
   *
   * @param column - the column index
   * @param value - the value in the column's DuckDB form, or null
   */
  set(column: number, value: DuckDBValue): void {
    if (this.#chunk === undefined) {
      this.#chunk = DuckDBDataChunk.create(this.#types, CHUNK_ROWS)
      this.#vectors = this.#vectorsOf(this.#chunk)
    }
    const strings = this.#strings[column]
    if (strings !== undefined) strings.set(this.#filled, value)
    else (this.#vectors[column] as DuckDBVector).setItem(this.#filled, value)
  }

  /** Ends the current row; a full chunk goes to the appender. */
  endRow(): void {
    if (++this.#filled === CHUNK_ROWS) this.flush()
  }

  /** Appends the ended rows not yet appended (call once at the end, before closing). */
  flush(): void {
    const chunk = this.#chunk
    if (chunk === undefined || this.#filled === 0) return
    for (let i = 0; i < this.#types.length; i++) {
      const strings = this.#strings[i]
      if (strings !== undefined) strings.flush(duckdb.data_chunk_get_vector(chunk.chunk, i), this.#filled)
      else (this.#vectors[i] as DuckDBVector).flush()
    }
    // Sized after the copy: setting the size drops the chunk's vector views.
    if (this.#filled < CHUNK_ROWS) chunk.rowCount = this.#filled
    this.#appender.appendDataChunk(chunk)
    this.#filled = 0
    // The appender copied the rows, so the one chunk is emptied and filled again: a chunk per
    // 2048 rows would hold native memory until the garbage collector happened to free it.
    chunk.reset()
    chunk.rowCount = CHUNK_ROWS
    this.#vectors = this.#vectorsOf(chunk)
    for (const strings of this.#strings) strings?.reset()
  }

  /** The Node API vectors of the columns without a string buffer (each reads its data back). */
  #vectorsOf(chunk: DuckDBDataChunk): (DuckDBVector | undefined)[] {
    return this.#types.map((_, i) => (this.#strings[i] === undefined ? chunk.getColumnVector(i) : undefined))
  }
}

/**
 * Appends `(index, position)` rows to an appender whose columns are `INTEGER` and `BIGINT`: the
 * deleted or selected row positions of numbered files, in whole data chunks, so a million
 * positions cost a few hundred native calls instead of three per row.
 *
 * @param appender - an appender on a two-column `(INTEGER, BIGINT)` table
 * @param groups - per file: its index and its row positions (non-negative safe integers)
 */
export function appendIndexedPositions(
  appender: DuckDBAppender,
  groups: Iterable<{
    readonly index: number
    readonly positions: ArrayLike<number> | DeletedPositions | undefined
  }>,
): void {
  const chunks = new ChunkAppender(appender, [INTEGER, BIGINT])
  for (const g of groups) {
    const list = g.positions
    if (list === undefined) continue
    const index = g.index
    const append = (p: number): void => {
      chunks.set(0, index)
      chunks.set(1, BigInt(p))
      chunks.endRow()
    }
    if ('countBelow' in list) list.forEach(append)
    else for (let k = 0; k < list.length; k++) append(list[k] as number)
  }
  chunks.flush()
}

/** Where a value sits, for messages. */
export interface ValuePosition {
  /** Index of the row in the request. */
  readonly row: number
  /** Top-level logical column name. */
  readonly column: string
}

/**
 * Fails with the error for a row key that is not a column.
 *
 * @param at - the row
 * @param path - the column path as written in the row
 * @param key - the unknown key
 * @param known - the column names at that level
 * @throws {InvalidArgumentError} always
 */
export function unknownColumn(
  at: { readonly row: number },
  path: string,
  key: string,
  known: ReadonlySet<string>,
): never {
  const near = [...known].find((k) => k.toLowerCase() === key.toLowerCase())
  throw new InvalidArgumentError(`Row ${at.row} has unknown column '${path}'`, {
    argument: 'rows',
    hint:
      near === undefined
        ? `Known columns: ${[...known].join(', ')}`
        : `Column names are matched exactly; did you mean '${near}'?`,
  })
}

/**
 * Whether a value is a plain object (a row or a struct value), not an array, Map, Date or bytes.
 *
 * @param v - any value
 * @returns true for `{...}` objects
 */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null) return false
  const proto = Object.getPrototypeOf(v)
  return proto === Object.prototype || proto === null
}

/**
 * Checks a value of a primitive type and returns it in the form partition values are typed in
 * (`parsePartitionValue`): bigint for long, micros for timestamps, decimal text, and so on.
 *
 * @param value - a non-null JavaScript value
 * @param type - a primitive Delta type
 * @param at - row index and column, for messages
 * @returns the typed value
 * @throws {InvalidArgumentError} when the value does not fit the type
 */
export function toPartitionInput(
  value: unknown,
  type: PrimitiveType,
  at: ValuePosition,
): string | number | bigint | boolean | Uint8Array {
  switch (type) {
    case 'long':
      return toLong(value, at, at.column)
    case 'integer':
    case 'short':
    case 'byte':
      return toInt(value, type, at, at.column)
    case 'float':
    case 'double':
      return toFloating(value, type, at, at.column)
    case 'string':
      return toText(value, at, at.column)
    case 'boolean':
      if (typeof value !== 'boolean') fail(at, at.column, 'a boolean', value)
      return value
    case 'binary':
      return toBinary(value, at, at.column)
    case 'date':
      toDays(value, at, at.column)
      return (value as string).trim()
    case 'timestamp':
    case 'timestamp_ntz':
      return toMicros(value, type === 'timestamp', at, at.column)
    default: {
      const parts = decimalParts(type)
      if (parts === undefined) return fail(at, at.column, `a value of a writable type (not ${type})`, value)
      const unscaled = toDecimal(value, parts.precision, parts.scale, at, at.column)
      return decimalText(unscaled, parts.scale)
    }
  }
}

// === Primitive checks ===

const INT_RANGES: Readonly<Record<'integer' | 'short' | 'byte', readonly [number, number]>> = {
  integer: [-(2 ** 31), 2 ** 31 - 1],
  short: [-(2 ** 15), 2 ** 15 - 1],
  byte: [-(2 ** 7), 2 ** 7 - 1],
}
const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

function convertPrimitive(value: unknown, type: PrimitiveType, at: ValuePosition, path: string): DuckDBValue {
  switch (type) {
    case 'long':
      return toLong(value, at, path)
    case 'integer':
    case 'short':
    case 'byte':
      return toInt(value, type, at, path)
    case 'float':
    case 'double':
      return toFloating(value, type, at, path)
    case 'string':
      return toText(value, at, path)
    case 'boolean':
      if (typeof value !== 'boolean') fail(at, path, 'a boolean', value)
      return value
    case 'binary':
      return new DuckDBBlobValue(toBinary(value, at, path))
    case 'date':
      return new DuckDBDateValue(toDays(value, at, path))
    case 'timestamp':
      return new DuckDBTimestampTZValue(toMicros(value, true, at, path))
    case 'timestamp_ntz':
      return new DuckDBTimestampValue(toMicros(value, false, at, path))
    case 'void':
      return fail(at, path, 'null (the type is void)', value)
    default: {
      const parts = decimalParts(type)
      if (parts === undefined) return fail(at, path, `a value of a writable type (not ${type})`, value)
      return new DuckDBDecimalValue(
        toDecimal(value, parts.precision, parts.scale, at, path),
        parts.precision,
        parts.scale,
      )
    }
  }
}

function toLong(value: unknown, at: ValuePosition, path: string): bigint {
  const v = typeof value === 'number' && Number.isSafeInteger(value) ? BigInt(value) : value
  if (typeof v !== 'bigint' || v < INT64_MIN || v > INT64_MAX) {
    return fail(at, path, 'a long (a bigint, or a safe integer number, in the 64-bit range)', value)
  }
  return v
}

function toInt(value: unknown, type: 'integer' | 'short' | 'byte', at: ValuePosition, path: string): number {
  const v = typeof value === 'bigint' ? Number(value) : value
  const [min, max] = INT_RANGES[type]
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    return fail(
      at,
      path,
      `an ${type === 'integer' ? 'integer' : type} (a whole number in ${min}..${max})`,
      value,
    )
  }
  return v
}

function toFloating(value: unknown, type: 'float' | 'double', at: ValuePosition, path: string): number {
  if (typeof value !== 'number') return fail(at, path, `a ${type} (a number)`, value)
  return value
}

function toText(value: unknown, at: ValuePosition, path: string): string {
  if (typeof value !== 'string') return fail(at, path, 'a string', value)
  // Three bytes per UTF-16 unit at most: only a string that may be over the limit is measured.
  if (value.length * 3 > MAX_VALUE_BYTES) checkValueSize(Buffer.byteLength(value, 'utf8'), at, path, 'string')
  // UTF-8 cannot encode a lone surrogate: crossing into DuckDB would silently turn it into
  // U+FFFD, so the stored string would differ from the one given.
  const lone = LONE_SURROGATE.exec(value)
  if (lone !== null) {
    const unit = value.charCodeAt(lone.index).toString(16).toUpperCase()
    throw new InvalidArgumentError(
      `Row ${at.row}, column '${path}': the string has a lone UTF-16 surrogate (U+${unit}) at index ${lone.index}, which UTF-8 cannot store`,
      {
        argument: 'rows',
        hint: 'Strings must be well-formed Unicode: pair the surrogate, remove it, or replace it (String.prototype.toWellFormed() replaces it with U+FFFD).',
      },
    )
  }
  return value
}

/**
 * A UTF-16 surrogate without its pair: in a `u` regular expression a valid pair is one code
 * point, so only a lone surrogate is of category Cs.
 */
const LONE_SURROGATE = /\p{Cs}/u

function toBinary(value: unknown, at: ValuePosition, path: string): Uint8Array {
  if (!(value instanceof Uint8Array)) return fail(at, path, 'binary (a Uint8Array)', value)
  checkValueSize(value.byteLength, at, path, 'binary value')
  return value
}

/**
 * The largest string (in UTF-8 bytes) or binary value one cell takes. The write path holds a
 * value a few times over (the row, DuckDB's vector and table, the Parquet page, the statistics
 * DuckDB returns), and V8 strings end at about 512 MiB: a bound well inside both keeps a large
 * value an error the caller can act on, not an out-of-memory crash.
 */
export const MAX_VALUE_BYTES = 256 * 2 ** 20

function checkValueSize(bytes: number, at: ValuePosition, path: string, what: string): void {
  if (bytes <= MAX_VALUE_BYTES) return
  throw new InvalidArgumentError(
    `Row ${at.row}, column '${path}': the ${what} is ${bytes} bytes, over the limit of ${MAX_VALUE_BYTES} bytes (256 MiB) for one value`,
    {
      argument: 'rows',
      hint: 'Store values that large as files next to the table and keep their paths in the column, or split them over several rows.',
    },
  )
}

function toDays(value: unknown, at: ValuePosition, path: string): number {
  const days = typeof value === 'string' ? parseDate(value) : undefined
  if (days === undefined) return fail(at, path, "a date ('YYYY-MM-DD', years 0001..9999)", value)
  return days
}

function toMicros(value: unknown, instant: boolean, at: ValuePosition, path: string): bigint {
  let micros: bigint | undefined
  if (instant && value instanceof Date && !Number.isNaN(value.getTime()))
    micros = BigInt(value.getTime()) * 1000n
  else if (typeof value === 'string') {
    const parsed = parseTimestamp(value)
    // A wall-clock timestamp has no zone; an offset would silently shift or be dropped.
    if (parsed !== undefined && (instant || parsed.offsetSeconds === undefined)) micros = parsed.micros
  }
  if (micros === undefined || micros < MIN_TIMESTAMP_MICROS || micros > MAX_TIMESTAMP_MICROS) {
    return fail(
      at,
      path,
      instant
        ? "a timestamp (ISO text such as '2024-01-31T12:00:00.000000Z', or a Date; years 0001..9999)"
        : "a timestamp_ntz (ISO text without a zone, such as '2024-01-31T12:00:00.000000')",
      value,
    )
  }
  return micros
}

function toDecimal(
  value: unknown,
  precision: number,
  scale: number,
  at: ValuePosition,
  path: string,
): bigint {
  const text =
    typeof value === 'string'
      ? value
      : typeof value === 'bigint' || (typeof value === 'number' && Number.isFinite(value))
        ? String(value)
        : undefined
  const parsed = text === undefined ? undefined : parseDecimal(text)
  let unscaled: bigint | undefined
  if (parsed !== undefined) {
    if (parsed.scale <= scale) unscaled = parsed.unscaled * 10n ** BigInt(scale - parsed.scale)
    else {
      const divisor = 10n ** BigInt(parsed.scale - scale)
      if (parsed.unscaled % divisor === 0n) unscaled = parsed.unscaled / divisor
    }
  }
  const limit = 10n ** BigInt(precision)
  if (unscaled === undefined || unscaled >= limit || unscaled <= -limit) {
    return fail(
      at,
      path,
      `a decimal(${precision},${scale}) (decimal text, number or bigint with at most ${precision - scale} integer and ${scale} fraction digits)`,
      value,
    )
  }
  return unscaled
}

function describeKey(k: unknown): string {
  return typeof k === 'string' ? JSON.stringify(k) : String(k)
}

function describe(value: unknown): string {
  if (value === null) return 'null'
  if (value === undefined) return 'undefined'
  if (typeof value === 'bigint') return `bigint ${value}`
  if (typeof value === 'string')
    return `string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value)}`
  if (typeof value === 'number' || typeof value === 'boolean') return `${typeof value} ${String(value)}`
  if (value instanceof Uint8Array) return 'a Uint8Array'
  if (Array.isArray(value)) return 'an array'
  if (value instanceof Map) return 'a Map'
  if (value instanceof Date) return 'a Date'
  return typeof value === 'object' ? 'an object' : typeof value
}

function fail(at: ValuePosition, path: string, expected: string, value: unknown): never {
  throw new InvalidArgumentError(
    `Row ${at.row}, column '${path}': expected ${expected}, got ${describe(value)}`,
    {
      argument: 'rows',
    },
  )
}
