/**
 * JSON text for the Delta log, exact for 64-bit integers.
 *
 * The log stores versions, sizes, timestamps and row counts as JSON integers that may exceed
 * 2^53. `JSON.parse` silently rounds those, so text that could hold such an integer goes through
 * `lossless-json`, which keeps every number as its source text. Serialization writes `bigint`
 * values as bare JSON integers.
 */
import { isLosslessNumber, type LosslessNumber, parse } from 'lossless-json'
import { InvalidArgumentError } from '../errors/index.js'

/** A decoded JSON value after number normalization (see {@link normalizeJsonValue}). */
export type JsonValue =
  | null
  | boolean
  | number
  | bigint
  | string
  | readonly JsonValue[]
  | { readonly [key: string]: JsonValue }

// Any integer at or above 2^53 has at least 16 digits; text without such a run of digits is
// decoded exactly by JSON.parse, which is several times faster than the lossless parser.
const LONG_DIGIT_RUN = /\d{16}/

const INTEGER_TEXT = /^-?\d+$/

/**
 * The deepest nesting of arrays and objects accepted in JSON text, as in Jackson's default
 * stream constraints (which Spark's readers use). Decoding and every walk over the decoded value
 * recurse per level, so deeper text is refused up front instead of overflowing the stack.
 */
export const MAX_JSON_DEPTH = 1000

/**
 * Where JSON text first nests deeper than `limit`, counting brackets outside strings: one
 * linear pass without decoding.
 *
 * @param text - JSON text (valid or not)
 * @param limit - the deepest nesting allowed
 * @returns the offset of the bracket that goes one level too deep, or -1
 */
export function jsonDepthExceeded(text: string, limit: number): number {
  // Nesting deeper than the limit needs more opening brackets than that; counting them with
  // indexOf (native, and usually a handful per line) settles ordinary lines without the loop.
  if (text.length <= limit || countUpTo(text, '{', countUpTo(text, '[', 0, limit), limit) <= limit) return -1
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c)
        i++ // a backslash escapes the next character, a quote included
      else if (c === 0x22) inString = false
    } else if (c === 0x22) {
      inString = true
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return i
    } else if (c === 0x5d || c === 0x7d) {
      depth--
    }
  }
  return -1
}

/** `seen` plus the occurrences of `c` in `text`, counting no further than just past `limit`. */
function countUpTo(text: string, c: string, seen: number, limit: number): number {
  let n = seen
  for (let i = text.indexOf(c); i >= 0 && n <= limit; i = text.indexOf(c, i + 1)) n++
  return n
}

/**
 * Parses JSON text without losing integer precision. Numbers arrive either as JS numbers (when
 * the text holds no integer that could exceed 2^53) or as `LosslessNumber`s carrying their
 * source text; use {@link normalizeJsonValue} or the typed readers to turn them into values.
 *
 * Duplicate object keys keep the last value, as `JSON.parse` does.
 *
 * @param text - one JSON document
 * @returns the decoded value
 * @throws {SyntaxError} when the text is not JSON or nests deeper than {@link MAX_JSON_DEPTH}
 *   (callers wrap it in a typed error)
 */
export function parseJsonText(text: string): unknown {
  const tooDeep = jsonDepthExceeded(text, MAX_JSON_DEPTH)
  if (tooDeep >= 0) {
    throw new SyntaxError(
      `it nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep (at position ${tooDeep})`,
    )
  }
  if (!LONG_DIGIT_RUN.test(text)) return JSON.parse(text)
  return parse(text, null, { onDuplicateKey: (info) => info.newValue })
}

/**
 * Whether a decoded value is a number kept as text by the lossless parser.
 *
 * @param value - any decoded value
 * @returns whether it is a `LosslessNumber`
 */
export function isJsonNumberText(value: unknown): value is LosslessNumber {
  return isLosslessNumber(value)
}

/**
 * Converts the text of a JSON number to a JS value: an integer that fits in a safe integer
 * becomes a `number`, a larger integer a `bigint`, anything else a `number`.
 *
 * @param text - the number's JSON text
 * @returns the value, or `undefined` when it is not finite as a double
 */
export function numberFromJsonText(text: string): number | bigint | undefined {
  if (INTEGER_TEXT.test(text)) {
    const n = Number(text)
    return Number.isSafeInteger(n) ? n : BigInt(text)
  }
  const n = Number(text)
  return Number.isFinite(n) ? n : undefined
}

/**
 * Deep-copies a decoded JSON value into frozen plain data: integers that fit in a safe integer
 * become `number`, larger ones `bigint`, other numbers `number`. Used for free-form parts of the
 * log (commitInfo, stats, schema metadata) whose numbers have no declared type.
 *
 * @param value - a value from {@link parseJsonText} (or from a Parquet decoder)
 * @returns the normalized, frozen value; `undefined` for a value JSON cannot hold
 */
export function normalizeJsonValue(value: unknown): JsonValue | undefined {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined
  if (typeof value === 'bigint') {
    return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)
      ? Number(value)
      : value
  }
  if (isLosslessNumber(value)) return numberFromJsonText(value.value)
  if (Array.isArray(value)) {
    const out: JsonValue[] = []
    for (const item of value) {
      const v = normalizeJsonValue(item)
      if (v === undefined) return undefined
      out.push(v)
    }
    return Object.freeze(out)
  }
  if (typeof value === 'object') {
    const entries: [string, JsonValue][] = []
    for (const [k, item] of Object.entries(value)) {
      if (item === undefined) continue
      const v = normalizeJsonValue(item)
      if (v === undefined) return undefined
      entries.push([k, v])
    }
    return Object.freeze(Object.fromEntries(entries))
  }
  return undefined
}

/**
 * Serializes plain data to compact JSON. `bigint` values are written as exact JSON integers,
 * object properties whose value is `undefined` are omitted, keys keep their insertion order.
 *
 * @param value - null, boolean, finite number, bigint, string, array or plain object
 * @returns the JSON text
 * @throws {InvalidArgumentError} for a value JSON cannot represent (NaN, Infinity, a function)
 */
export function stringifyJson(value: unknown): string {
  const parts: string[] = []
  writeJson(value, parts, '$')
  return parts.join('')
}

function writeJson(value: unknown, out: string[], at: string): void {
  switch (typeof value) {
    case 'string':
      out.push(JSON.stringify(value))
      return
    case 'boolean':
      out.push(value ? 'true' : 'false')
      return
    case 'bigint':
      out.push(value.toString())
      return
    case 'number':
      if (!Number.isFinite(value)) {
        throw new InvalidArgumentError(
          `Cannot write ${value} at ${at} as JSON: only finite numbers are allowed`,
        )
      }
      out.push(JSON.stringify(value))
      return
    case 'object': {
      if (value === null) {
        out.push('null')
        return
      }
      if (isLosslessNumber(value)) {
        out.push(value.value)
        return
      }
      if (Array.isArray(value)) {
        out.push('[')
        for (let i = 0; i < value.length; i++) {
          if (i > 0) out.push(',')
          const item: unknown = value[i]
          writeJson(item === undefined ? null : item, out, `${at}[${i}]`)
        }
        out.push(']')
        return
      }
      out.push('{')
      let first = true
      for (const [k, item] of Object.entries(value)) {
        if (item === undefined) continue
        if (!first) out.push(',')
        first = false
        out.push(JSON.stringify(k), ':')
        writeJson(item, out, `${at}.${k}`)
      }
      out.push('}')
      return
    }
    default:
      throw new InvalidArgumentError(`Cannot write a ${typeof value} at ${at} as JSON`)
  }
}
