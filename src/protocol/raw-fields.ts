/**
 * Typed field readers for decoded log data, shared by the commit-file and checkpoint parsers.
 *
 * A reader takes an untrusted decoded object and returns the field as its protocol type, or
 * throws `InvalidTableError('malformed-action')` naming the action, field, file and version.
 * Explicit JSON `null` counts as absent (delta-rs and kernel-rs write `"baseRowId":null`).
 */
import { InvalidTableError } from '../errors/index.js'
import { isJsonNumberText } from './json-text.js'

/** Where decoded data came from; carried into error messages. */
export interface ActionContext {
  /** The log file (e.g. `_delta_log/00000000000000000003.json`). */
  readonly path?: string | undefined
  /** The table version of that file. */
  readonly version?: bigint | undefined
  /** 1-based line number inside a commit file. */
  readonly line?: number | undefined
}

/** Reading state: which action is being read, from where, and how strictly. */
export interface FieldScope {
  /** The action key (or nested object) being read, for messages. */
  readonly what: string
  readonly ctx: ActionContext
  /**
   * `json`: values come from a JSON commit and must have their JSON types. `checkpoint`: values
   * come from a Parquet decoder, so integers may also arrive as `bigint` or numeric strings and
   * maps as `Map`s or key/value entry lists.
   */
  readonly mode: 'json' | 'checkpoint'
}

/** A decoded JSON object. */
export type RawObject = { readonly [key: string]: unknown }

const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n
const INT32_MIN = -(2 ** 31)
const INT32_MAX = 2 ** 31 - 1
const INTEGER_TEXT = /^-?\d+$/

/**
 * Describes where a problem was found, for messages.
 *
 * @param ctx - the context
 * @returns e.g. ` in _delta_log/0003.json line 2 (version 3)`, or `''`
 */
export function describeContext(ctx: ActionContext): string {
  let s = ''
  if (ctx.path !== undefined) s += ` in ${ctx.path}`
  if (ctx.line !== undefined) s += ` line ${ctx.line}`
  if (ctx.version !== undefined) s += ` (version ${ctx.version})`
  return s
}

/**
 * Throws the malformed-action error for a field.
 *
 * @param scope - the reading state
 * @param field - the field name (dotted for nested fields)
 * @param problem - what is wrong, e.g. `must be a string, got number`
 * @throws {InvalidTableError} always, with reason `malformed-action`
 */
export function failField(scope: FieldScope, field: string, problem: string): never {
  throw new InvalidTableError(
    'malformed-action',
    `Malformed ${scope.what} action${describeContext(scope.ctx)}: field '${field}' ${problem}`,
    {
      path: scope.ctx.path,
      version: scope.ctx.version,
      hint: 'The log entry does not follow the Delta protocol; it was written by a faulty writer or damaged.',
    },
  )
}

/**
 * Names the type of a decoded value, for messages.
 *
 * @param v - any value
 * @returns a short type name
 */
export function describeValue(v: unknown): string {
  if (v === null) return 'null'
  if (v === undefined) return 'nothing'
  if (Array.isArray(v)) return 'an array'
  if (isJsonNumberText(v)) return `number ${v.value}`
  if (typeof v === 'string') return `string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v)}`
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return `${typeof v} ${v}`
  return typeof v
}

/**
 * Whether a value is a plain decoded object (not null, not an array, not a number box).
 *
 * @param v - any value
 * @returns whether it can be read field by field
 */
export function isRawObject(v: unknown): v is RawObject {
  return (
    typeof v === 'object' && v !== null && !Array.isArray(v) && !isJsonNumberText(v) && !(v instanceof Map)
  )
}

function missing(scope: FieldScope, field: string): never {
  return failField(scope, field, 'is required but missing')
}

/** @returns the field, or `undefined` for absent or null */
function get(obj: RawObject, key: string): unknown {
  const v = obj[key]
  return v === null ? undefined : v
}

/**
 * Reads a required string field.
 *
 * @param obj - the decoded object
 * @param key - the field name
 * @param scope - the reading state
 * @returns the string
 * @throws {InvalidTableError} when absent or not a string
 */
export function reqString(obj: RawObject, key: string, scope: FieldScope): string {
  const v = get(obj, key)
  if (v === undefined) return missing(scope, key)
  if (typeof v !== 'string') return failField(scope, key, `must be a string, got ${describeValue(v)}`)
  return v
}

/**
 * Reads an optional string field.
 *
 * @param obj - the decoded object
 * @param key - the field name
 * @param scope - the reading state
 * @returns the string, or `undefined` when absent or null
 * @throws {InvalidTableError} when present but not a string
 */
export function optString(obj: RawObject, key: string, scope: FieldScope): string | undefined {
  const v = get(obj, key)
  if (v === undefined) return undefined
  if (typeof v !== 'string') return failField(scope, key, `must be a string, got ${describeValue(v)}`)
  return v
}

/**
 * Reads a required boolean field.
 *
 * @param obj - the decoded object
 * @param key - the field name
 * @param scope - the reading state
 * @returns the boolean
 * @throws {InvalidTableError} when absent or not a boolean
 */
export function reqBool(obj: RawObject, key: string, scope: FieldScope): boolean {
  const v = optBool(obj, key, scope)
  return v === undefined ? missing(scope, key) : v
}

/**
 * Reads an optional boolean field.
 *
 * @param obj - the decoded object
 * @param key - the field name
 * @param scope - the reading state
 * @returns the boolean, or `undefined` when absent or null
 * @throws {InvalidTableError} when present but not a boolean
 */
export function optBool(obj: RawObject, key: string, scope: FieldScope): boolean | undefined {
  const v = get(obj, key)
  if (v === undefined) return undefined
  if (typeof v !== 'boolean') return failField(scope, key, `must be a boolean, got ${describeValue(v)}`)
  return v
}

/**
 * Converts a decoded integer to an exact bigint, or `undefined` when it is not an integer.
 * A JS number is accepted only when it is a safe integer: anything else may already have lost
 * precision in a lossy decoder.
 */
function toBigInt(v: unknown, mode: FieldScope['mode']): bigint | undefined {
  if (typeof v === 'bigint') return v
  if (typeof v === 'number') return Number.isSafeInteger(v) ? BigInt(v) : undefined
  let text: string | undefined
  if (isJsonNumberText(v)) text = v.value
  else if (mode === 'checkpoint' && typeof v === 'string') text = v.trim()
  if (text === undefined) return undefined
  if (INTEGER_TEXT.test(text)) return BigInt(text)
  const n = Number(text)
  return Number.isSafeInteger(n) ? BigInt(n) : undefined
}

/**
 * Reads an optional 64-bit integer field as an exact bigint.
 *
 * @param obj - the decoded object
 * @param key - the field name
 * @param scope - the reading state
 * @returns the value, or `undefined` when absent or null
 * @throws {InvalidTableError} when present but not an integer in the int64 range
 */
export function optLong(obj: RawObject, key: string, scope: FieldScope): bigint | undefined {
  const v = get(obj, key)
  if (v === undefined) return undefined
  const b = toBigInt(v, scope.mode)
  if (b === undefined) {
    const lossy = typeof v === 'number' && Number.isInteger(v)
    return failField(
      scope,
      key,
      lossy
        ? `holds ${v}, beyond 2^53: it was decoded with precision loss (decode with a 64-bit-exact parser)`
        : `must be a 64-bit integer, got ${describeValue(v)}`,
    )
  }
  if (b < INT64_MIN || b > INT64_MAX) return failField(scope, key, `is outside the 64-bit range: ${b}`)
  return b
}

/**
 * Reads a required 64-bit integer field as an exact bigint.
 *
 * @param obj - the decoded object
 * @param key - the field name
 * @param scope - the reading state
 * @returns the value
 * @throws {InvalidTableError} when absent or not an integer in the int64 range
 */
export function reqLong(obj: RawObject, key: string, scope: FieldScope): bigint {
  const v = optLong(obj, key, scope)
  return v === undefined ? missing(scope, key) : v
}

/**
 * Reads an optional 32-bit integer field as a number.
 *
 * @param obj - the decoded object
 * @param key - the field name
 * @param scope - the reading state
 * @returns the value, or `undefined` when absent or null
 * @throws {InvalidTableError} when present but not an integer in the int32 range
 */
export function optInt(obj: RawObject, key: string, scope: FieldScope): number | undefined {
  const v = get(obj, key)
  if (v === undefined) return undefined
  const b = toBigInt(v, scope.mode)
  if (b === undefined) return failField(scope, key, `must be a 32-bit integer, got ${describeValue(v)}`)
  if (b < BigInt(INT32_MIN) || b > BigInt(INT32_MAX)) {
    return failField(scope, key, `is outside the 32-bit range: ${b}`)
  }
  return Number(b)
}

/**
 * Reads a required 32-bit integer field as a number.
 *
 * @param obj - the decoded object
 * @param key - the field name
 * @param scope - the reading state
 * @returns the value
 * @throws {InvalidTableError} when absent or not an integer in the int32 range
 */
export function reqInt(obj: RawObject, key: string, scope: FieldScope): number {
  const v = optInt(obj, key, scope)
  return v === undefined ? missing(scope, key) : v
}

/**
 * Lists the entries of a decoded map: a plain object, or (from Parquet decoders) a `Map` or a
 * list of `{ key, value }` objects or `[key, value]` pairs.
 */
function mapEntries(v: unknown, mode: FieldScope['mode']): [unknown, unknown][] | undefined {
  if (isRawObject(v)) return Object.entries(v)
  if (mode !== 'checkpoint') return undefined
  if (v instanceof Map) return [...v.entries()]
  if (!Array.isArray(v)) return undefined
  const out: [unknown, unknown][] = []
  for (const e of v) {
    if (Array.isArray(e) && e.length === 2) out.push([e[0], e[1]])
    else if (isRawObject(e) && 'key' in e) out.push([e.key, e.value])
    else return undefined
  }
  return out
}

/**
 * Reads an optional string map field.
 *
 * @param obj - the decoded object
 * @param key - the field name
 * @param scope - the reading state
 * @param nullValues - whether map values may be null (`partitionValues`, `tags`)
 * @returns a frozen map, or `undefined` when absent or null
 * @throws {InvalidTableError} when present but not a map of strings
 */
export function optStringMap(
  obj: RawObject,
  key: string,
  scope: FieldScope,
  nullValues: true,
): Readonly<Record<string, string | null>> | undefined
export function optStringMap(
  obj: RawObject,
  key: string,
  scope: FieldScope,
  nullValues: false,
): Readonly<Record<string, string>> | undefined
export function optStringMap(
  obj: RawObject,
  key: string,
  scope: FieldScope,
  nullValues: boolean,
): Readonly<Record<string, string | null>> | undefined {
  const v = get(obj, key)
  if (v === undefined) return undefined
  const entries = mapEntries(v, scope.mode)
  if (entries === undefined) return failField(scope, key, `must be a map of strings, got ${describeValue(v)}`)
  const out: [string, string | null][] = []
  for (const [k, value] of entries) {
    if (typeof k !== 'string') return failField(scope, key, `has a non-string key ${describeValue(k)}`)
    if (typeof value === 'string' || (nullValues && value === null)) out.push([k, value])
    else if (value === undefined && nullValues) out.push([k, null])
    else {
      return failField(
        scope,
        `${key}.${k}`,
        `must be a string${nullValues ? ' or null' : ''}, got ${describeValue(value)}`,
      )
    }
  }
  return Object.freeze(Object.fromEntries(out))
}

/**
 * Reads a required string map field.
 *
 * @param obj - the decoded object
 * @param key - the field name
 * @param scope - the reading state
 * @returns a frozen map whose values may be null
 * @throws {InvalidTableError} when absent or not a map of strings
 */
export function reqNullableStringMap(
  obj: RawObject,
  key: string,
  scope: FieldScope,
): Readonly<Record<string, string | null>> {
  const v = optStringMap(obj, key, scope, true)
  return v === undefined ? missing(scope, key) : v
}

/**
 * Reads an optional list of strings.
 *
 * @param obj - the decoded object
 * @param key - the field name
 * @param scope - the reading state
 * @returns a frozen list, or `undefined` when absent or null
 * @throws {InvalidTableError} when present but not a list of strings
 */
export function optStringList(obj: RawObject, key: string, scope: FieldScope): readonly string[] | undefined {
  const v = get(obj, key)
  if (v === undefined) return undefined
  if (!Array.isArray(v)) return failField(scope, key, `must be a list of strings, got ${describeValue(v)}`)
  for (let i = 0; i < v.length; i++) {
    if (typeof v[i] !== 'string') {
      return failField(scope, `${key}[${i}]`, `must be a string, got ${describeValue(v[i])}`)
    }
  }
  return Object.freeze([...(v as string[])])
}

/**
 * Reads an optional nested object.
 *
 * @param obj - the decoded object
 * @param key - the field name
 * @param scope - the reading state
 * @returns the nested object, or `undefined` when absent or null
 * @throws {InvalidTableError} when present but not an object
 */
export function optObject(obj: RawObject, key: string, scope: FieldScope): RawObject | undefined {
  const v = get(obj, key)
  if (v === undefined) return undefined
  if (!isRawObject(v)) return failField(scope, key, `must be an object, got ${describeValue(v)}`)
  return v
}
