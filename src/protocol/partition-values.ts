/**
 * Partition values and data file paths (protocol.md section 9).
 *
 * `add.partitionValues` holds strings; they are typed here per column type. Hive-style
 * directories (`col=value/`) are only a naming convention: the log value is authoritative, and
 * add paths in the log are URI-encoded, so they are decoded exactly once into store keys.
 */
import { InvalidArgumentError, InvalidTableError } from '../errors/index.js'
import { civilFromDays, daysFromCivil } from './civil-dates.js'
import { decimalParts, type PrimitiveType } from './schema.js'

/** A typed partition value; see {@link parsePartitionValue} for the mapping per type. */
export type PartitionValue = string | number | bigint | boolean | Uint8Array | null

/** The directory name Spark uses for a null (or empty) partition value. */
export const HIVE_DEFAULT_PARTITION = '__HIVE_DEFAULT_PARTITION__'

const INT_RANGES: Readonly<Record<string, readonly [number, number]>> = {
  integer: [-(2 ** 31), 2 ** 31 - 1],
  short: [-(2 ** 15), 2 ** 15 - 1],
  byte: [-(2 ** 7), 2 ** 7 - 1],
}
const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

// === Calendar arithmetic (proleptic Gregorian, any year) ===

function daysInMonth(y: number, m: number): number {
  return daysFromCivil(m === 12 ? y + 1 : y, m === 12 ? 1 : m + 1, 1) - daysFromCivil(y, m, 1)
}

const DATE = /^([+-]?\d{4,6})-(\d{2})-(\d{2})$/
const TIMESTAMP =
  /^([+-]?\d{4,6})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?$/

function validDate(y: number, m: number, d: number): boolean {
  return m >= 1 && m <= 12 && d >= 1 && d <= daysInMonth(y, m)
}

/**
 * Parses a timestamp as written in partition values into microseconds since the epoch. Text
 * without a zone is read as UTC (a zone-less `timestamp` value was written in the writer's
 * session zone, which the log does not record; UTC is what Delta Kernel assumes).
 */
function parseTimestampMicros(text: string, allowZone: boolean): bigint | undefined {
  const m = TIMESTAMP.exec(text)
  if (!m) return undefined
  const [y, mo, d, h, mi] = [m[1], m[2], m[3], m[4], m[5]].map(Number) as [
    number,
    number,
    number,
    number,
    number,
  ]
  const s = m[6] === undefined ? 0 : Number(m[6])
  if (!validDate(y, mo, d) || h > 23 || mi > 59 || s > 59) return undefined
  const micros = m[7] === undefined ? 0 : Number(m[7].padEnd(9, '0').slice(0, 6))
  let offsetMinutes = 0
  const zone = m[8]
  if (zone !== undefined) {
    if (!allowZone) return undefined
    if (zone !== 'Z') {
      const digits = zone.slice(1).replace(':', '')
      const oh = Number(digits.slice(0, 2))
      const om = Number(digits.slice(2))
      if (oh > 18 || om > 59) return undefined
      offsetMinutes = (zone[0] === '-' ? -1 : 1) * (oh * 60 + om)
    }
  }
  const seconds =
    BigInt(daysFromCivil(y, mo, d)) * 86400n + BigInt(h * 3600 + mi * 60 + s - offsetMinutes * 60)
  return seconds * 1_000_000n + BigInt(micros)
}

function pad(n: number, width: number): string {
  const s = String(Math.abs(n)).padStart(width, '0')
  return n < 0 ? `-${s}` : s
}

function formatTimestamp(micros: bigint, iso: boolean): string {
  let seconds = micros / 1_000_000n
  let frac = micros % 1_000_000n
  if (frac < 0n) {
    frac += 1_000_000n
    seconds -= 1n
  }
  let days = seconds / 86400n
  let secOfDay = seconds % 86400n
  if (secOfDay < 0n) {
    secOfDay += 86400n
    days -= 1n
  }
  const [y, mo, d] = civilFromDays(Number(days))
  const sod = Number(secOfDay)
  const time = `${pad(Math.floor(sod / 3600), 2)}:${pad(Math.floor(sod / 60) % 60, 2)}:${pad(sod % 60, 2)}`
  const date = `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)}`
  const fraction = String(frac).padStart(6, '0')
  if (iso) return `${date}T${time}.${fraction}Z`
  return frac === 0n ? `${date} ${time}` : `${date} ${time}.${fraction}`
}

// === Decimals ===

const DECIMAL_TEXT = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/

/** Rescales decimal text to exactly `scale` fraction digits; `undefined` when it does not fit. */
function normalizeDecimal(text: string, precision: number, scale: number): string | undefined {
  const m = DECIMAL_TEXT.exec(text.trim())
  if (!m) return undefined
  const intPart = m[2] ?? ''
  const fracPart = m[3] ?? ''
  if (intPart === '' && fracPart === '') return undefined
  const exp = m[4] === undefined ? 0 : Number(m[4])
  if (!Number.isSafeInteger(exp) || Math.abs(exp) > 1000) return undefined
  // value = digits * 10^(exp - fracPart.length); bring it to 10^-scale.
  let digits = (intPart + fracPart).replace(/^0+(?=\d)/, '')
  const shift = exp - fracPart.length + scale
  if (shift >= 0) digits += '0'.repeat(shift)
  else {
    const dropped = digits.slice(Math.max(0, digits.length + shift))
    if (/[1-9]/.test(dropped)) return undefined
    digits = digits.slice(0, Math.max(0, digits.length + shift)) || '0'
  }
  digits = digits.replace(/^0+(?=\d)/, '')
  if (digits.length > precision && /[1-9]/.test(digits.slice(0, digits.length - precision))) return undefined
  const padded = digits.padStart(scale + 1, '0')
  const whole = padded.slice(0, padded.length - scale)
  const out = scale > 0 ? `${whole}.${padded.slice(padded.length - scale)}` : whole
  const negative = m[1] === '-' && /[1-9]/.test(digits)
  return negative ? `-${out}` : out
}

// === Typed values ===

function badValue(raw: string, type: PrimitiveType, column: string | undefined): never {
  const col = column === undefined ? '' : ` of partition column '${column}'`
  throw new InvalidTableError('malformed-action', `Invalid partition value '${raw}'${col} for type ${type}`, {
    hint: 'The add action carries a partition value that does not match the column type.',
  })
}

/**
 * Types a partition value from `add.partitionValues`. `null` and `""` mean null for every type.
 *
 * | type | result |
 * |---|---|
 * | string | the string |
 * | long | `bigint` |
 * | integer, short, byte | `number` (range-checked) |
 * | float, double | `number` (`NaN`, `Infinity`, `-Infinity` accepted) |
 * | decimal(p,s) | decimal text with exactly `s` fraction digits, e.g. `'1.50'` |
 * | boolean | `boolean` (`true`/`false`, any case) |
 * | date | `'YYYY-MM-DD'` |
 * | timestamp | microseconds since the epoch, `bigint`; zone-less text is read as UTC |
 * | timestamp_ntz | microseconds of the wall-clock time as if in UTC, `bigint` |
 * | binary | the UTF-8 bytes of the string |
 *
 * Binary: the protocol's "string of escaped binary values" (its example `"\u0001\u0002\u0003"`)
 * is the JSON escaping of the log line, so once the JSON is parsed the value's bytes are the
 * UTF-8 bytes of the text, as Spark's binary/string casts and Delta Kernel read them. Backslashes
 * in the text are bytes, never escapes: `a\x41` is the five bytes `61 5c 78 34 31`. Every reader
 * of partition values must decode binary through this function.
 *
 * @param raw - the stored string, or null
 * @param type - the partition column's type
 * @param column - the column name, for messages
 * @returns the typed value
 * @throws {InvalidTableError} `malformed-action` when the text does not fit the type
 * @throws {InvalidArgumentError} when the type cannot be a partition column type
 */
export function parsePartitionValue(
  raw: string | null | undefined,
  type: PrimitiveType,
  column?: string,
): PartitionValue {
  if (raw === null || raw === undefined || raw === '') return null
  switch (type) {
    case 'string':
      return raw
    case 'long': {
      const t = raw.trim()
      if (!/^[-+]?\d+$/.test(t)) return badValue(raw, type, column)
      const v = BigInt(t)
      if (v < INT64_MIN || v > INT64_MAX) return badValue(raw, type, column)
      return v
    }
    case 'integer':
    case 'short':
    case 'byte': {
      const t = raw.trim()
      const [min, max] = INT_RANGES[type] as readonly [number, number]
      const v = /^[-+]?\d+$/.test(t) ? Number(t) : Number.NaN
      if (!Number.isSafeInteger(v) || v < min || v > max) return badValue(raw, type, column)
      return v
    }
    case 'float':
    case 'double': {
      const t = raw.trim()
      if (t === 'NaN') return Number.NaN
      if (t === 'Infinity' || t === '+Infinity') return Number.POSITIVE_INFINITY
      if (t === '-Infinity') return Number.NEGATIVE_INFINITY
      if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(t)) return badValue(raw, type, column)
      return Number(t)
    }
    case 'boolean': {
      const t = raw.trim().toLowerCase()
      if (t === 'true') return true
      if (t === 'false') return false
      return badValue(raw, type, column)
    }
    case 'date': {
      const m = DATE.exec(raw.trim())
      if (!m || !validDate(Number(m[1]), Number(m[2]), Number(m[3]))) return badValue(raw, type, column)
      return raw.trim()
    }
    case 'timestamp':
    case 'timestamp_ntz': {
      const v = parseTimestampMicros(raw.trim(), type === 'timestamp')
      return v === undefined ? badValue(raw, type, column) : v
    }
    case 'binary':
      return new TextEncoder().encode(raw)
    case 'void':
    case 'variant':
      throw new InvalidArgumentError(`A ${type} column cannot be a partition column`, { argument: column })
    default: {
      const parts = decimalParts(type)
      if (parts === undefined) {
        throw new InvalidArgumentError(`Unknown partition column type ${String(type)}`, { argument: column })
      }
      const v = normalizeDecimal(raw, parts.precision, parts.scale)
      return v === undefined ? badValue(raw, type, column) : v
    }
  }
}

function badInput(value: unknown, type: PrimitiveType, column: string | undefined): never {
  const col = column === undefined ? '' : ` for partition column '${column}'`
  const shown =
    typeof value === 'bigint' ? `${value}n` : value instanceof Uint8Array ? 'bytes' : JSON.stringify(value)
  throw new InvalidArgumentError(`Cannot write ${shown}${col} as a ${type} partition value`, {
    argument: column,
  })
}

function formatDouble(n: number): string {
  if (Number.isNaN(n)) return 'NaN'
  if (n === Number.POSITIVE_INFINITY) return 'Infinity'
  if (n === Number.NEGATIVE_INFINITY) return '-Infinity'
  // Spark writes whole doubles with a trailing ".0".
  return Number.isInteger(n) && Math.abs(n) < 1e21 ? `${n}.0` : String(n)
}

/**
 * Writes a typed value as the string stored in `add.partitionValues` (the inverse of
 * {@link parsePartitionValue}). Timestamps are written in ISO-8601 UTC with microseconds
 * (`1970-01-01T00:00:00.000000Z`), timestamp_ntz as `YYYY-MM-DD HH:MM:SS[.ffffff]`.
 *
 * @param value - the typed value; `number` is also accepted for long, `bigint` for the smaller
 *   integers, and a number or numeric string for decimals
 * @param type - the partition column's type
 * @param column - the column name, for messages
 * @returns the string to store, or `null` for a null value
 * @throws {InvalidArgumentError} when the value does not fit the type
 */
export function serializePartitionValue(
  value: PartitionValue,
  type: PrimitiveType,
  column?: string,
): string | null {
  if (value === null) return null
  switch (type) {
    case 'string':
      if (typeof value !== 'string') return badInput(value, type, column)
      return value
    case 'long':
    case 'integer':
    case 'short':
    case 'byte': {
      const v = typeof value === 'number' && Number.isSafeInteger(value) ? BigInt(value) : value
      if (typeof v !== 'bigint') return badInput(value, type, column)
      const [min, max] =
        type === 'long' ? [INT64_MIN, INT64_MAX] : (INT_RANGES[type] as readonly [number, number]).map(BigInt)
      if (v < (min as bigint) || v > (max as bigint)) return badInput(value, type, column)
      return v.toString()
    }
    case 'float':
    case 'double':
      if (typeof value !== 'number') return badInput(value, type, column)
      return formatDouble(value)
    case 'boolean':
      if (typeof value !== 'boolean') return badInput(value, type, column)
      return value ? 'true' : 'false'
    case 'date': {
      if (typeof value !== 'string') return badInput(value, type, column)
      const m = DATE.exec(value)
      if (!m || !validDate(Number(m[1]), Number(m[2]), Number(m[3]))) return badInput(value, type, column)
      return value
    }
    case 'timestamp':
    case 'timestamp_ntz': {
      if (typeof value !== 'bigint') return badInput(value, type, column)
      return formatTimestamp(value, type === 'timestamp')
    }
    case 'binary': {
      if (!(value instanceof Uint8Array)) return badInput(value, type, column)
      try {
        return new TextDecoder('utf-8', { fatal: true }).decode(value)
      } catch {
        throw new InvalidArgumentError(
          `Binary partition value${column === undefined ? '' : ` for '${column}'`} is not valid UTF-8; Delta stores binary partition values as text`,
          { argument: column },
        )
      }
    }
    case 'void':
    case 'variant':
      throw new InvalidArgumentError(`A ${type} column cannot be a partition column`, { argument: column })
    default: {
      const parts = decimalParts(type)
      if (parts === undefined) return badInput(value, type, column)
      const text =
        typeof value === 'string'
          ? value
          : typeof value === 'bigint' || typeof value === 'number'
            ? String(value)
            : undefined
      if (text === undefined) return badInput(value, type, column)
      const v = normalizeDecimal(text, parts.precision, parts.scale)
      return v === undefined ? badInput(value, type, column) : v
    }
  }
}

// === Hive-style directories ===

// The characters Spark escapes in partition directory names (ExternalCatalogUtils), as %XX.
const HIVE_ESCAPED = new Set<number>([
  ...Array.from({ length: 0x1f }, (_, i) => i + 1),
  0x22, // "
  0x23, // #
  0x25, // %
  0x27, // '
  0x2a, // *
  0x2f, // /
  0x3a, // :
  0x3d, // =
  0x3f, // ?
  0x5c, // \
  0x7f,
  0x7b, // {
  0x5b, // [
  0x5d, // ]
  0x5e, // ^
])

/**
 * Escapes a partition column name or value for a directory name, as Spark does.
 *
 * @param s - the text
 * @returns the text with special characters as `%XX`
 */
export function escapePartitionPathName(s: string): string {
  let out = ''
  for (const ch of s) {
    const c = ch.codePointAt(0) as number
    out += HIVE_ESCAPED.has(c) ? `%${c.toString(16).toUpperCase().padStart(2, '0')}` : ch
  }
  return out
}

/**
 * Reverses {@link escapePartitionPathName}; a `%` not followed by two hex digits stays as is.
 *
 * @param s - an escaped directory name part
 * @returns the original text
 */
export function unescapePartitionPathName(s: string): string {
  return s.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
}

/**
 * One Hive-style directory level, `col=value`, with `__HIVE_DEFAULT_PARTITION__` for null.
 *
 * @param column - the (physical) partition column name
 * @param value - the serialized partition value, or null
 * @returns the directory name (without slash)
 */
export function partitionPathSegment(column: string, value: string | null): string {
  const v = value === null || value === '' ? HIVE_DEFAULT_PARTITION : escapePartitionPathName(value)
  return `${escapePartitionPathName(column)}=${v}`
}

/**
 * The relative directory of a data file for the given partition values, in column order.
 *
 * @param columns - the partition columns (physical names) in partitioning order
 * @param values - the serialized partition values by column
 * @returns e.g. `part=1/d=2024-01-01/`, or `''` for an unpartitioned table
 */
export function partitionDirectory(
  columns: readonly string[],
  values: Readonly<Record<string, string | null>>,
): string {
  let out = ''
  for (const c of columns) out += `${partitionPathSegment(c, values[c] ?? null)}/`
  return out
}

// === Add paths ===

/** A data file path from the log, decoded. */
export type DecodedAddPath =
  /** A store key relative to the table root. */
  | { readonly kind: 'relative'; readonly key: string }
  /** An absolute URI (or absolute path), still in its encoded log form. */
  | { readonly kind: 'absolute'; readonly uri: string }

const URI_SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/
const PATH_SAFE = /[A-Za-z0-9\-._~!$&'()*+,;=:@/]/
const PATH_SAFE_ALL = /^[A-Za-z0-9\-._~!$&'()*+,;=:@/]*$/
const UTF8 = new TextEncoder()

/**
 * Encodes a relative store key as an add path for the log (the inverse of
 * {@link decodeAddPath}): characters outside the URI path alphabet, `%` included, become `%XX`
 * of their UTF-8 bytes.
 *
 * @param key - a store key relative to the table root
 * @returns the path to write in `add.path`
 */
export function encodeAddPath(key: string): string {
  // Log replay canonicalizes every path that is not plain, so this runs once per such file.
  if (PATH_SAFE_ALL.test(key)) return key
  let out = ''
  for (const ch of key) {
    if (PATH_SAFE.test(ch)) {
      out += ch
      continue
    }
    for (const b of UTF8.encode(ch)) out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`
  }
  return out
}

function invalidPath(path: string, why: string, cause?: unknown): never {
  throw new InvalidTableError('invalid-path', `Invalid data file path '${path}' in the log: ${why}`, {
    path,
    cause,
    hint: 'The log references a file outside the table or with a malformed path; the table is refused.',
  })
}

function percentDecode(path: string): string {
  try {
    return decodeURIComponent(path)
  } catch (cause) {
    return invalidPath(path, 'malformed percent-encoding', cause)
  }
}

function normalizeFileUri(uri: string): string {
  // `file:/x`, `file:///x` and `file://localhost/x` name the same place.
  return uri.replace(/^file:\/\/(localhost)?\//i, 'file:/')
}

/**
 * Turns `add.path` (or `remove.path`, `cdc.path`) into a store key, percent-decoding it exactly
 * once: the log path `a=2021-09-08%2011%253A11/f.parquet` is the key `a=2021-09-08 11%3A11/f.parquet`.
 *
 * @param path - the path as stored in the log
 * @param options - `tableRoot`: the table's absolute URI, percent-encoded like log paths; an
 *   absolute path under it is returned as a relative key (Spark may write absolute paths for
 *   files inside the table)
 * @returns `{ kind: 'relative', key }`, or `{ kind: 'absolute', uri }` for a path with a URI
 *   scheme or a leading `/` that is not under `tableRoot`
 * @throws {InvalidTableError} `invalid-path` for an empty path, malformed percent-encoding, or a
 *   relative path with an empty, `.` or `..` segment, a backslash or a NUL (it could escape the
 *   table root)
 */
export function decodeAddPath(path: string, options: { readonly tableRoot?: string } = {}): DecodedAddPath {
  if (path === '') return invalidPath(path, 'it is empty')
  let relative = path
  if (URI_SCHEME.test(path) || path.startsWith('/')) {
    const root = options.tableRoot === undefined ? undefined : normalizeFileUri(options.tableRoot)
    const rootDir = root === undefined || root.endsWith('/') ? root : `${root}/`
    const normalized = normalizeFileUri(path)
    if (rootDir === undefined || !normalized.startsWith(rootDir)) {
      percentDecode(path)
      return Object.freeze({ kind: 'absolute', uri: path })
    }
    relative = normalized.slice(rootDir.length)
  }
  // Without a '%' there is nothing to decode (snapshot loading checks every live path).
  const key = relative.includes('%') ? percentDecode(relative) : relative
  if (key.includes('\\') || key.includes('\0')) return invalidPath(path, 'it contains a backslash or NUL')
  if (hasDotOrEmptySegment(key)) {
    return invalidPath(path, `it has an empty, '.' or '..' segment and could point outside the table`)
  }
  return Object.freeze({ kind: 'relative', key })
}

/** Whether a `/`-separated key has an empty, `.` or `..` segment (scanned, not split). */
function hasDotOrEmptySegment(key: string): boolean {
  let start = 0
  for (;;) {
    const slash = key.indexOf('/', start)
    const end = slash < 0 ? key.length : slash
    const length = end - start
    if (length === 0) return true
    if (length <= 2 && key.charCodeAt(start) === 46 && (length === 1 || key.charCodeAt(start + 1) === 46)) {
      return true
    }
    if (slash < 0) return false
    start = slash + 1
  }
}
