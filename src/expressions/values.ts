/**
 * Typed runtime values for in-JS evaluation, with the comparison and coercion rules of the data
 * plane (DuckDB), so that `evaluateRow` and the rendered SQL agree.
 *
 * Comparison families: numbers (integral, decimal, float, double), strings, binaries, booleans,
 * dates and timestamps. Integral and decimal values compare exactly; when a double is involved
 * both sides compare as doubles; a float against an integral or decimal compares as float.
 * NaN equals NaN and sorts above every other number; -0 equals 0. Strings compare by code point
 * (the order of their UTF-8 bytes). A date compares with a timestamp as midnight UTC. A string
 * compared with a number, a date, a timestamp or a boolean is converted to that type.
 */

import { InvalidPredicateError } from '../errors/index.js'
import {
  binaryLiteral,
  dateLiteral,
  decimalLiteralOf,
  floatingLiteral,
  integralLiteral,
  type Literal,
  lit,
  stringLiteral,
  timestampLiteral,
  timestampNtzLiteral,
} from './ast.js'
import type { DataType } from './data-types.js'
import {
  compareDecimals,
  type Decimal,
  decimalFromDouble,
  decimalToDouble,
  formatDecimal,
  parseDecimal,
  roundDecimal,
} from './decimal.js'
import { daysToMicros, formatDate, formatTimestamp, parseDate, parseTimestamp } from './temporal.js'

/** A non-null runtime value. */
export type Value =
  | { readonly t: 'bool'; readonly v: boolean }
  | { readonly t: 'int'; readonly v: bigint }
  | { readonly t: 'dec'; readonly v: Decimal }
  | { readonly t: 'f64'; readonly v: number }
  | { readonly t: 'f32'; readonly v: number }
  | { readonly t: 'str'; readonly v: string }
  | { readonly t: 'bin'; readonly v: Uint8Array }
  | { readonly t: 'date'; readonly v: number }
  | { readonly t: 'ts'; readonly v: bigint }
  | { readonly t: 'ntz'; readonly v: bigint }
  | { readonly t: 'struct'; readonly v: Readonly<Record<string, unknown>> }

/** A runtime value or SQL NULL. */
export type Nullable = Value | null

/** Comparison family of a value. */
export type Family = 'number' | 'string' | 'binary' | 'boolean' | 'temporal' | 'struct'

/**
 * The comparison family of a value.
 *
 * @param v - a value
 * @returns its family
 */
export function familyOf(v: Value): Family {
  switch (v.t) {
    case 'int':
    case 'dec':
    case 'f64':
    case 'f32':
      return 'number'
    case 'str':
      return 'string'
    case 'bin':
      return 'binary'
    case 'bool':
      return 'boolean'
    case 'struct':
      return 'struct'
    default:
      return 'temporal'
  }
}

/**
 * Describes a value's type for error messages.
 *
 * @param v - a value
 * @returns a type name
 */
export function typeName(v: Value): string {
  const names: Record<Value['t'], string> = {
    bool: 'boolean',
    int: 'integer',
    dec: 'decimal',
    f64: 'double',
    f32: 'float',
    str: 'string',
    bin: 'binary',
    date: 'date',
    ts: 'timestamp',
    ntz: 'timestamp_ntz',
    struct: 'struct',
  }
  return names[v.t]
}

function hexToBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2)
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16)
  return out
}

/**
 * The runtime value of a literal node.
 *
 * @param e - the literal
 * @returns its value, or null for NULL
 */
export function valueOfLiteral(e: Literal): Nullable {
  switch (e.type) {
    case 'null':
      return null
    case 'boolean':
      return { t: 'bool', v: e.value }
    case 'byte':
    case 'short':
    case 'integer':
    case 'long':
      return { t: 'int', v: e.value }
    case 'float':
      return { t: 'f32', v: e.value }
    case 'double':
      return { t: 'f64', v: e.value }
    case 'decimal':
      return { t: 'dec', v: parseDecimal(e.value) as Decimal }
    case 'string':
      return { t: 'str', v: e.value }
    case 'binary':
      return { t: 'bin', v: hexToBytes(e.value) }
    case 'date':
      return { t: 'date', v: e.value }
    case 'timestamp':
      return { t: 'ts', v: e.value }
    case 'timestamp_ntz':
      return { t: 'ntz', v: e.value }
  }
}

/**
 * The literal node of a runtime value, the inverse of {@link valueOfLiteral}.
 *
 * @param v - the value
 * @param type - the column type name the value was read as (it gives an integer its width)
 * @returns the literal, or undefined for a struct (no literal holds one)
 */
export function literalOfValue(v: Value, type: string): Literal | undefined {
  switch (v.t) {
    case 'int':
      return integralLiteral(type as 'byte' | 'short' | 'integer' | 'long', v.v)
    case 'str':
      return stringLiteral(v.v)
    case 'bool':
      return lit(v.v)
    case 'date':
      return dateLiteral(v.v)
    case 'ts':
      return timestampLiteral(v.v)
    case 'ntz':
      return timestampNtzLiteral(v.v)
    case 'bin':
      return binaryLiteral(v.v)
    case 'dec':
      return decimalLiteralOf(v.v)
    case 'f64':
      return floatingLiteral('double', v.v)
    case 'f32':
      return floatingLiteral('float', v.v)
    case 'struct':
      return undefined
  }
}

function isLiteralNode(raw: object): raw is Literal {
  return (raw as { kind?: unknown }).kind === 'literal' && 'type' in raw
}

/** lossless-json's LosslessNumber and similar wrappers carry the exact text in `value`. */
function losslessText(raw: object): string | undefined {
  const r = raw as { isLosslessNumber?: unknown; value?: unknown }
  return r.isLosslessNumber === true && typeof r.value === 'string' ? r.value : undefined
}

/**
 * The value of an untyped JS value: null/undefined are NULL, a boolean is a boolean, a bigint is
 * an integer, a number is a double, a string is a string, a `Uint8Array` is binary, a `Date` is a
 * timestamp (millisecond precision), a literal node is its value, any other plain object is a
 * struct (which can be tested for NULL but not compared).
 *
 * @param raw - the JS value
 * @returns the runtime value
 * @throws {InvalidPredicateError} for any other kind of JS value
 */
export function valueOfJs(raw: unknown): Nullable {
  if (raw === null || raw === undefined) return null
  switch (typeof raw) {
    case 'boolean':
      return { t: 'bool', v: raw }
    case 'bigint':
      return { t: 'int', v: raw }
    case 'number':
      return { t: 'f64', v: raw }
    case 'string':
      return { t: 'str', v: raw }
    case 'object':
      if (raw instanceof Uint8Array) return { t: 'bin', v: raw }
      if (raw instanceof Date) return { t: 'ts', v: BigInt(raw.getTime()) * 1000n }
      if (isLiteralNode(raw)) return valueOfLiteral(raw)
      {
        const text = losslessText(raw)
        if (text !== undefined) {
          const d = parseDecimal(text)
          if (d !== undefined) return d.scale === 0 ? { t: 'int', v: d.unscaled } : { t: 'dec', v: d }
        }
      }
      if (Object.getPrototypeOf(raw) === Object.prototype || Object.getPrototypeOf(raw) === null) {
        return { t: 'struct', v: raw as Record<string, unknown> }
      }
      break
  }
  throw new InvalidPredicateError(`Cannot use a JS ${describeJs(raw)} as a SQL value`, '')
}

function describeJs(raw: unknown): string {
  if (typeof raw !== 'object' || raw === null) return typeof raw
  return raw.constructor?.name ?? 'object'
}

/**
 * Interprets a raw value (a JS value from a row, a stats JSON value, a partition value string) as
 * a value of a declared Delta type.
 *
 * Accepted forms: booleans or `'true'`/`'false'`; integers as bigint, safe-integer numbers or
 * digit strings; decimals as strings, numbers, bigints or lossless-json numbers; floats and
 * doubles as numbers or numeric strings (including `NaN`, `Infinity`); dates as `YYYY-MM-DD`,
 * day numbers or `Date`; timestamps as ISO-8601 text (UTC when without offset), microsecond
 * bigints or `Date`; binary as `Uint8Array`. Literal nodes are converted to the type.
 *
 * @param raw - the raw value
 * @param type - the declared type
 * @returns the value, null for NULL, or `undefined` when the raw value cannot be read as that type
 */
export function coerceRaw(raw: unknown, type: DataType): Nullable | undefined {
  if (raw === null || raw === undefined) return null
  if (
    typeof raw === 'object' &&
    !(raw instanceof Uint8Array) &&
    !(raw instanceof Date) &&
    isLiteralNode(raw)
  ) {
    const v = valueOfLiteral(raw)
    if (v === null) return null
    try {
      return castValue(v, type)
    } catch {
      return undefined
    }
  }
  const text =
    typeof raw === 'string'
      ? raw
      : typeof raw === 'object' && !(raw instanceof Uint8Array) && !(raw instanceof Date)
        ? losslessText(raw)
        : undefined
  switch (type.name) {
    case 'boolean':
      if (typeof raw === 'boolean') return { t: 'bool', v: raw }
      if (text === 'true' || text === 'false') return { t: 'bool', v: text === 'true' }
      return undefined
    case 'byte':
    case 'short':
    case 'integer':
    case 'long':
      if (typeof raw === 'bigint') return { t: 'int', v: raw }
      if (typeof raw === 'number') return Number.isSafeInteger(raw) ? { t: 'int', v: BigInt(raw) } : undefined
      if (text !== undefined && /^\s*[+-]?\d+\s*$/.test(text)) return { t: 'int', v: BigInt(text.trim()) }
      return undefined
    case 'float':
    case 'double': {
      let n: number | undefined
      if (typeof raw === 'number') n = raw
      else if (typeof raw === 'bigint') n = Number(raw)
      else if (text !== undefined) n = parseFloatStrict(text)
      if (n === undefined) return undefined
      return type.name === 'float' ? { t: 'f32', v: Math.fround(n) } : { t: 'f64', v: n }
    }
    case 'decimal': {
      let d: Decimal | undefined
      if (typeof raw === 'bigint') d = { unscaled: raw, scale: 0 }
      // A JS number stands for the shortest decimal that reads back as it (what JSON would show).
      else if (typeof raw === 'number') d = Number.isFinite(raw) ? parseDecimal(String(raw)) : undefined
      else if (text !== undefined) d = parseDecimal(text)
      return d === undefined ? undefined : { t: 'dec', v: d }
    }
    case 'string':
      return typeof raw === 'string' ? { t: 'str', v: raw } : undefined
    case 'binary':
      return raw instanceof Uint8Array ? { t: 'bin', v: raw } : undefined
    case 'date': {
      if (raw instanceof Date) return { t: 'date', v: Math.floor(raw.getTime() / 86_400_000) }
      if (typeof raw === 'number') return Number.isSafeInteger(raw) ? { t: 'date', v: raw } : undefined
      const days = text === undefined ? undefined : parseDate(text)
      return days === undefined ? undefined : { t: 'date', v: days }
    }
    case 'timestamp':
    case 'timestamp_ntz': {
      const t = type.name === 'timestamp' ? 'ts' : 'ntz'
      if (raw instanceof Date) return { t, v: BigInt(raw.getTime()) * 1000n }
      if (typeof raw === 'bigint') return { t, v: raw }
      const parsed = text === undefined ? undefined : parseTimestamp(text)
      return parsed === undefined ? undefined : { t, v: parsed.micros }
    }
  }
}

function parseFloatStrict(text: string): number | undefined {
  const s = text.trim()
  if (/^[+-]?(?:inf|infinity)$/i.test(s)) return s.startsWith('-') ? -Infinity : Infinity
  if (/^nan$/i.test(s)) return Number.NaN
  if (!/^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/.test(s)) return undefined
  return Number(s)
}

// === Comparison ===

function cmpDouble(a: number, b: number): number {
  if (Number.isNaN(a)) return Number.isNaN(b) ? 0 : 1
  if (Number.isNaN(b)) return -1
  return a < b ? -1 : a > b ? 1 : 0
}

function toDouble(v: Value): number {
  switch (v.t) {
    case 'int':
      return Number(v.v)
    case 'dec':
      return decimalToDouble(v.v)
    case 'f64':
    case 'f32':
      return v.v
    default:
      throw new InvalidPredicateError(`Expected a number, got ${typeName(v)}`, '')
  }
}

function toExact(v: Value): Decimal {
  if (v.t === 'int') return { unscaled: v.v, scale: 0 }
  if (v.t === 'dec') return v.v
  throw new InvalidPredicateError(`Expected an exact number, got ${typeName(v)}`, '')
}

/**
 * Compares two numbers with the rules described in the module doc.
 *
 * @param a - a number value
 * @param b - a number value
 * @returns negative, zero or positive
 */
export function compareNumbers(a: Value, b: Value): number {
  if (a.t === 'int' && b.t === 'int') return a.v < b.v ? -1 : a.v > b.v ? 1 : 0
  if (a.t === 'f64' || b.t === 'f64') return cmpDouble(toDouble(a), toDouble(b))
  if (a.t === 'f32' || b.t === 'f32') return cmpDouble(Math.fround(toDouble(a)), Math.fround(toDouble(b)))
  return compareDecimals(toExact(a), toExact(b))
}

/**
 * Compares two strings by code point, which is also the order of their UTF-8 bytes.
 *
 * @param a - left string
 * @param b - right string
 * @returns negative, zero or positive
 */
export function compareStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x !== y) {
      // UTF-16 order differs from code point order only between surrogates and U+E000..U+FFFF.
      const xs = x >= 0xd800 && x <= 0xdfff
      const ys = y >= 0xd800 && y <= 0xdfff
      if (xs !== ys) return xs ? 1 : -1
      return x < y ? -1 : 1
    }
  }
  return a.length - b.length
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const x = a[i] as number
    const y = b[i] as number
    if (x !== y) return x < y ? -1 : 1
  }
  return a.length - b.length
}

function temporalMicros(v: Value): bigint {
  if (v.t === 'date') return daysToMicros(v.v)
  if (v.t === 'ts' || v.t === 'ntz') return v.v
  throw new InvalidPredicateError(`Expected a date or timestamp, got ${typeName(v)}`, '')
}

/** Converts a string operand to the type of the other operand, as SQL does for a string literal. */
function convertString(s: string, like: Value): Value {
  const target: DataType | undefined =
    like.t === 'int' || like.t === 'dec'
      ? { name: 'decimal', precision: 38, scale: 0 }
      : like.t === 'f64'
        ? { name: 'double' }
        : like.t === 'f32'
          ? { name: 'float' }
          : like.t === 'date'
            ? { name: 'date' }
            : like.t === 'ts'
              ? { name: 'timestamp' }
              : like.t === 'ntz'
                ? { name: 'timestamp_ntz' }
                : like.t === 'bool'
                  ? { name: 'boolean' }
                  : undefined
  const v = target === undefined ? undefined : coerceRaw(s, target)
  if (v === undefined || v === null) {
    throw new InvalidPredicateError(`Cannot convert string '${s}' to ${typeName(like)} for comparison`, '')
  }
  return v
}

/**
 * Compares two non-null values.
 *
 * @param a - left value
 * @param b - right value
 * @returns negative, zero or positive
 * @throws {InvalidPredicateError} when the values cannot be compared (e.g. a binary with a date)
 */
export function compareValues(a: Value, b: Value): number {
  const fa = familyOf(a)
  const fb = familyOf(b)
  if (fa !== fb) {
    if (fa === 'string') return compareValues(convertString(a.v as string, b), b)
    if (fb === 'string') return compareValues(a, convertString(b.v as string, a))
    throw new InvalidPredicateError(`Cannot compare ${typeName(a)} with ${typeName(b)}`, '')
  }
  switch (fa) {
    case 'number':
      return compareNumbers(a, b)
    case 'string':
      return compareStrings(a.v as string, b.v as string)
    case 'binary':
      return compareBytes(a.v as Uint8Array, b.v as Uint8Array)
    case 'boolean':
      return Number(a.v) - Number(b.v)
    case 'struct':
      throw new InvalidPredicateError('Cannot compare structs; compare their fields', '')
    case 'temporal': {
      if (a.t === 'date' && b.t === 'date') return a.v - b.v
      const x = temporalMicros(a)
      const y = temporalMicros(b)
      return x < y ? -1 : x > y ? 1 : 0
    }
  }
}

// === Casts ===

function roundHalfEven(x: number): number {
  const r = Math.round(x)
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r
}

/**
 * Converts a value to a type, with DuckDB's rounding: decimals round half away from zero,
 * doubles round half to even when cast to an integer.
 *
 * @param v - the value
 * @param type - the target type
 * @returns the converted value
 * @throws {InvalidPredicateError} when the value does not fit or the conversion is not supported
 */
export function castValue(v: Value, type: DataType): Value {
  const fail = (why: string): never => {
    throw new InvalidPredicateError(
      `Cannot cast ${typeName(v)} ${displayValue(v)} to ${type.name}: ${why}`,
      '',
    )
  }
  switch (type.name) {
    case 'boolean':
      if (v.t === 'bool') return v
      if (v.t === 'int') return { t: 'bool', v: v.v !== 0n }
      if (v.t === 'str') {
        const s = v.v.trim().toLowerCase()
        if (['true', 't', '1', 'yes', 'y'].includes(s)) return { t: 'bool', v: true }
        if (['false', 'f', '0', 'no', 'n'].includes(s)) return { t: 'bool', v: false }
      }
      return fail('not a boolean')
    case 'byte':
    case 'short':
    case 'integer':
    case 'long': {
      let n: bigint
      if (v.t === 'int') n = v.v
      else if (v.t === 'bool') n = v.v ? 1n : 0n
      else if (v.t === 'dec') n = roundDecimal(v.v, 0).unscaled
      else if (v.t === 'f64' || v.t === 'f32') {
        if (!Number.isFinite(v.v)) return fail('not finite')
        n = BigInt(roundHalfEven(v.v))
      } else if (v.t === 'str' && /^\s*[+-]?\d+\s*$/.test(v.v)) n = BigInt(v.v.trim())
      else return fail('not supported')
      const ranges = { byte: 8n, short: 16n, integer: 32n, long: 64n }
      const bits = ranges[type.name]
      if (n < -(1n << (bits - 1n)) || n >= 1n << (bits - 1n)) return fail('out of range')
      return { t: 'int', v: n }
    }
    case 'float':
    case 'double': {
      let n: number
      if (v.t === 'str') n = parseFloatStrict(v.v) ?? fail('not a number')
      else if (familyOf(v) === 'number') n = toDouble(v)
      else return fail('not supported')
      return type.name === 'float' ? { t: 'f32', v: Math.fround(n) } : { t: 'f64', v: n }
    }
    case 'decimal': {
      let d: Decimal
      if (v.t === 'int' || v.t === 'dec') d = toExact(v)
      else if (v.t === 'f64' || v.t === 'f32') {
        if (!Number.isFinite(v.v)) return fail('not finite')
        d = decimalFromDouble(v.v)
      } else if (v.t === 'str') d = parseDecimal(v.v) ?? fail('not a number')
      else return fail('not supported')
      const r = roundDecimal(d, type.scale)
      const limit = 10n ** BigInt(type.precision)
      if (r.unscaled >= limit || r.unscaled <= -limit)
        return fail(`does not fit decimal(${type.precision},${type.scale})`)
      return { t: 'dec', v: r }
    }
    case 'string':
      switch (v.t) {
        case 'str':
          return v
        case 'int':
        case 'bool':
          return { t: 'str', v: String(v.v) }
        case 'dec':
          return { t: 'str', v: formatDecimal(v.v) }
        case 'date':
          return { t: 'str', v: formatDate(v.v) }
        default:
          return fail('the text form differs between engines')
      }
    case 'binary':
      if (v.t === 'bin') return v
      // Engines differ on escapes and non-ASCII text in string-to-binary casts; plain ASCII agrees.
      if (v.t === 'str' && /^[\x20-\x5b\x5d-\x7e]*$/.test(v.v))
        return { t: 'bin', v: new TextEncoder().encode(v.v) }
      return fail('only printable ASCII text without backslashes converts the same way in every engine')
    case 'date':
      if (v.t === 'date') return v
      if (v.t === 'ts' || v.t === 'ntz') {
        const perDay = 86_400_000_000n
        let days = v.v / perDay
        if (v.v % perDay < 0n) days -= 1n
        return { t: 'date', v: Number(days) }
      }
      if (v.t === 'str') {
        const days = parseDate(v.v)
        if (days !== undefined) return { t: 'date', v: days }
      }
      return fail('not a date')
    case 'timestamp':
    case 'timestamp_ntz': {
      const t = type.name === 'timestamp' ? 'ts' : 'ntz'
      if (v.t === 'ts' || v.t === 'ntz') return { t, v: v.v }
      if (v.t === 'date') return { t, v: daysToMicros(v.v) }
      if (v.t === 'str') {
        const parsed = parseTimestamp(v.v)
        if (parsed !== undefined) return { t, v: parsed.micros }
      }
      return fail('not a timestamp')
    }
  }
}

/**
 * A short human-readable form of a value for messages.
 *
 * @param v - a value
 * @returns its text
 */
export function displayValue(v: Value): string {
  switch (v.t) {
    case 'dec':
      return formatDecimal(v.v)
    case 'str':
      return `'${v.v}'`
    case 'bin':
      return `X'${Array.from(v.v, (b) => b.toString(16).padStart(2, '0')).join('')}'`
    case 'date':
      return formatDate(v.v)
    case 'ts':
    case 'ntz':
      return formatTimestamp(v.v)
    case 'struct':
      return '{...}'
    default:
      return String(v.v)
  }
}
