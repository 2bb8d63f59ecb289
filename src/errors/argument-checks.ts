/**
 * Checks of caller-supplied arguments that raise `InvalidArgumentError` naming the argument and
 * what was expected: the shape primitives (an options object, optional strings, numbers, flags,
 * signals, one of a set) and the refusal of unknown option keys with the nearest known key. Every
 * public entry point checks its options with these before any I/O.
 */

import { InvalidArgumentError } from './caller-errors.js'

/** The keys an options object may have: a table typed as `Record<keyof Options, true>`. */
export type KnownKeys = Readonly<Record<string, true>>

/** A short description of a value for a message: its type, and the value when it is small. */
export function describeArgument(v: unknown): string {
  if (v === null) return 'null'
  if (v === undefined) return 'undefined'
  if (Array.isArray(v)) return `an array of ${v.length}`
  switch (typeof v) {
    case 'string':
      return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v)}`
    case 'number':
    case 'boolean':
      return `${typeof v} ${String(v)}`
    case 'bigint':
      return `bigint ${v}n`
    case 'function':
      return 'a function'
    default:
      return v instanceof Date ? 'a Date' : 'an object'
  }
}

export function fail(argument: string, expected: string, got: unknown, hint?: string): never {
  throw new InvalidArgumentError(`${argument} must be ${expected}; got ${describeArgument(got)}`, {
    argument,
    hint,
  })
}

export function isPlainObject(v: unknown): v is Readonly<Record<string, unknown>> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/**
 * The options object of a call: absent (`undefined`) or an object.
 *
 * @param value - what was passed
 * @param argument - its name
 * @returns the object, `{}` when absent
 * @throws {InvalidArgumentError} for anything else
 */
export function optionsObject(value: unknown, argument: string): Readonly<Record<string, unknown>> {
  if (value === undefined) return {}
  if (!isPlainObject(value)) fail(argument, 'an object', value)
  return value
}

export function optString(o: Readonly<Record<string, unknown>>, key: string, at: string): void {
  const v = o[key]
  if (v !== undefined && typeof v !== 'string') fail(`${at}.${key}`, 'a string', v)
}

export function optBoolean(o: Readonly<Record<string, unknown>>, key: string, at: string): void {
  const v = o[key]
  if (v !== undefined && typeof v !== 'boolean') fail(`${at}.${key}`, 'true or false', v)
}

export function optObject(o: Readonly<Record<string, unknown>>, key: string, at: string): void {
  const v = o[key]
  if (v !== undefined && !isPlainObject(v)) fail(`${at}.${key}`, 'an object', v)
}

/** A finite number, at least `min` (and an integer when `integer`). */
export function optNumber(
  o: Readonly<Record<string, unknown>>,
  key: string,
  at: string,
  rule: { readonly min: number; readonly max?: number; readonly integer?: boolean; readonly above?: boolean },
): void {
  const v = o[key]
  if (v === undefined) return
  const ok =
    typeof v === 'number' &&
    Number.isFinite(v) &&
    (rule.above === true ? v > rule.min : v >= rule.min) &&
    (rule.max === undefined || v <= rule.max) &&
    (rule.integer !== true || Number.isSafeInteger(v))
  if (!ok) {
    const kind = rule.integer === true ? 'an integer' : 'a number'
    const range =
      rule.max !== undefined
        ? `from ${rule.min} to ${rule.max}`
        : rule.above === true
          ? `above ${rule.min}`
          : `of at least ${rule.min}`
    fail(`${at}.${key}`, `${kind} ${range}`, v)
  }
}

export function optStringArray(o: Readonly<Record<string, unknown>>, key: string, at: string): void {
  const v = o[key]
  if (v === undefined) return
  if (!Array.isArray(v)) fail(`${at}.${key}`, 'an array of column names', v)
  for (let i = 0; i < v.length; i++) {
    if (typeof v[i] !== 'string') fail(`${at}.${key}[${i}]`, 'a column name (a string)', v[i])
  }
}

export function optSignal(o: Readonly<Record<string, unknown>>, at: string): void {
  const v = o.signal
  if (v !== undefined && !(v instanceof AbortSignal)) fail(`${at}.signal`, 'an AbortSignal', v)
}

export function optOneOf(
  o: Readonly<Record<string, unknown>>,
  key: string,
  at: string,
  allowed: readonly string[],
): void {
  const v = o[key]
  if (v !== undefined && !allowed.includes(v as string)) {
    fail(`${at}.${key}`, `one of ${allowed.map((a) => `'${a}'`).join(', ')}`, v)
  }
}

/**
 * Refuses a key of `o` that `known` lacks, naming the nearest known key.
 *
 * @param o - the options object
 * @param at - its name in messages, e.g. `options`
 * @param known - the keys it may have (one table or several, e.g. scan and time travel)
 * @param call - the call the options belong to, e.g. `append`
 * @throws {InvalidArgumentError} naming the first unknown key
 */
export function checkKnownKeys(
  o: Readonly<Record<string, unknown>>,
  at: string,
  known: KnownKeys | readonly KnownKeys[],
  call: string,
): void {
  const tables: readonly KnownKeys[] = Array.isArray(known) ? known : [known as KnownKeys]
  for (const key of Object.keys(o)) {
    // An explicit `undefined` is how callers spread optional values; it asks for nothing.
    if (o[key] === undefined || tables.some((t) => Object.hasOwn(t, key))) continue
    const names: string[] = []
    for (const t of tables) for (const k of Object.keys(t)) if (!names.includes(k)) names.push(k)
    const nearest = nearestKey(key, names)
    const guess =
      nearest !== undefined && isClose(key, nearest)
        ? `; did you mean '${nearest}'?`
        : nearest !== undefined
          ? ` (the nearest is '${nearest}')`
          : ''
    throw new InvalidArgumentError(`${at}.${key} is not an option of ${call}${guess}`, {
      argument: `${at}.${key}`,
      hint:
        names.length === 0
          ? `${call} takes no options.`
          : `${call} takes: ${names.join(', ')}. Remove '${key}' or spell it as one of these.`,
    })
  }
}

/** The known key with the smallest edit distance to `key` (letter case ignored), if any. */
function nearestKey(key: string, names: readonly string[]): string | undefined {
  let best: string | undefined
  let bestDistance = Number.POSITIVE_INFINITY
  for (const n of names) {
    const d = editDistance(key.toLowerCase(), n.toLowerCase())
    if (d < bestDistance) {
      best = n
      bestDistance = d
    }
  }
  return best
}

/**
 * A typo or a shortening rather than another word: at most a third of the letters differ (at
 * least 2 may), or one name holds the other (`ignoreExtra` for `ignoreExtraColumns`).
 */
function isClose(key: string, nearest: string): boolean {
  const [a, b] = [key.toLowerCase(), nearest.toLowerCase()]
  if (Math.min(a.length, b.length) >= 3 && (a.includes(b) || b.includes(a))) return true
  const d = editDistance(a, b)
  return d <= Math.max(2, Math.floor(Math.max(key.length, nearest.length) / 3))
}

/** Levenshtein distance between two short strings. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      row[j] = Math.min(
        (previous[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (previous[j - 1] as number) + cost,
      )
    }
    previous = row
  }
  return previous[b.length] as number
}
