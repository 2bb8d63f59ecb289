/**
 * Validation of what callers pass to the public entry points (`DeltaTable`, `Transaction`, scan
 * and snapshot options). Each check runs before any I/O and throws `InvalidArgumentError` naming
 * the argument and what was expected, instead of letting a wrong type surface as a `TypeError`
 * deep inside. Only types and shapes are checked here; the operations check meanings (unknown
 * columns, retention bounds, ...) themselves. Unknown option keys are not rejected.
 */

import { InvalidArgumentError } from '../errors/index.js'
import type { Expression } from '../expressions/ast.js'
import { checkExpression } from '../expressions/check-expression.js'

// === Primitives ===

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

function fail(argument: string, expected: string, got: unknown, hint?: string): never {
  throw new InvalidArgumentError(`${argument} must be ${expected}; got ${describeArgument(got)}`, {
    argument,
    hint,
  })
}

function isPlainObject(v: unknown): v is Readonly<Record<string, unknown>> {
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

function optString(o: Readonly<Record<string, unknown>>, key: string, at: string): void {
  const v = o[key]
  if (v !== undefined && typeof v !== 'string') fail(`${at}.${key}`, 'a string', v)
}

function optBoolean(o: Readonly<Record<string, unknown>>, key: string, at: string): void {
  const v = o[key]
  if (v !== undefined && typeof v !== 'boolean') fail(`${at}.${key}`, 'true or false', v)
}

function optObject(o: Readonly<Record<string, unknown>>, key: string, at: string): void {
  const v = o[key]
  if (v !== undefined && !isPlainObject(v)) fail(`${at}.${key}`, 'an object', v)
}

/** A finite number, at least `min` (and an integer when `integer`). */
function optNumber(
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

function optStringArray(o: Readonly<Record<string, unknown>>, key: string, at: string): void {
  const v = o[key]
  if (v === undefined) return
  if (!Array.isArray(v)) fail(`${at}.${key}`, 'an array of column names', v)
  for (let i = 0; i < v.length; i++) {
    if (typeof v[i] !== 'string') fail(`${at}.${key}[${i}]`, 'a column name (a string)', v[i])
  }
}

function optSignal(o: Readonly<Record<string, unknown>>, at: string): void {
  const v = o.signal
  if (v !== undefined && !(v instanceof AbortSignal)) fail(`${at}.signal`, 'an AbortSignal', v)
}

function optOneOf(
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

// === Predicates and expressions ===

/**
 * A predicate argument: absent, SQL text, or an expression tree.
 *
 * @param value - what was passed
 * @param argument - its name, e.g. `where`
 * @returns the value, typed
 * @throws {InvalidArgumentError} for another type or a malformed tree
 * @throws {InvalidPredicateError} for a tree deeper than the expression depth limit
 */
export function checkWhere(value: unknown, argument: string): string | Expression | undefined {
  if (value === undefined || typeof value === 'string') return value
  return checkExpression(value, argument)
}

function requireExpressionText(value: unknown, argument: string): void {
  if (typeof value !== 'string') checkExpression(value, argument)
}

// === Table-level options ===

/**
 * The location of a table: a non-empty string.
 *
 * @throws {InvalidArgumentError} otherwise
 */
export function checkLocation(location: unknown): asserts location is string {
  if (typeof location !== 'string' || location === '') {
    fail('location', 'a non-empty string (a path or a store URL)', location)
  }
}

/**
 * Options of `DeltaTable.open` (and the open options of `create`).
 *
 * @throws {InvalidArgumentError} naming the option
 */
export function checkOpenOptions(value: unknown, at = 'options'): void {
  const o = optionsObject(value, at)
  optObject(o, 'storage', at)
  optObject(o, 'engine', at)
  optObject(o, 'storageOptions', at)
  optObject(o, 'engineOptions', at)
  optBoolean(o, 'autoCheckpoint', at)
  const conflicts = o.conflicts
  if (conflicts !== undefined && conflicts !== 'all' && conflicts !== 'none' && !isPlainObject(conflicts)) {
    fail(`${at}.conflicts`, "'all', 'none' or an object of flags", conflicts)
  }
  optObject(o, 'retry', at)
  if (o.retry !== undefined) {
    const retry = o.retry as Readonly<Record<string, unknown>>
    const r = `${at}.retry`
    optNumber(retry, 'maxAttempts', r, { min: 1, integer: true })
    optNumber(retry, 'maxStorageRetries', r, { min: 0, integer: true })
    optNumber(retry, 'baseDelayMs', r, { min: 0 })
    optNumber(retry, 'maxDelayMs', r, { min: 0 })
  }
}

/**
 * Options of `DeltaTable.create`.
 *
 * @throws {InvalidArgumentError} naming the option
 */
export function checkCreateOptions(value: unknown): void {
  if (!isPlainObject(value)) {
    fail('options', "an object with at least a schema, e.g. { schema: 'id long not null' }", value)
  }
  const at = 'options'
  if (typeof value.schema !== 'string' && !isPlainObject(value.schema)) {
    fail(`${at}.schema`, 'DDL text or a schema object', value.schema)
  }
  optStringArray(value, 'partitionBy', at)
  optObject(value, 'properties', at)
  const properties = (value.properties ?? {}) as Readonly<Record<string, unknown>>
  for (const [k, v] of Object.entries(properties)) {
    if (typeof v !== 'string') fail(`${at}.properties['${k}']`, 'a string', v)
  }
  optOneOf(value, 'ifExists', at, ['error', 'ignore'])
  optString(value, 'name', at)
  optString(value, 'description', at)
}

/**
 * Time-travel options (`snapshot`, `scan`): `version`, `timestamp`, `signal`.
 *
 * @throws {InvalidArgumentError} naming the option
 */
export function checkSnapshotOptions(value: unknown, at = 'options'): void {
  const o = optionsObject(value, at)
  const v = o.version
  if (v !== undefined && typeof v !== 'bigint' && typeof v !== 'number') {
    fail(`${at}.version`, 'a version number (bigint or integer)', v)
  }
  const t = o.timestamp
  if (t !== undefined && !(t instanceof Date) && typeof t !== 'number' && typeof t !== 'string') {
    fail(`${at}.timestamp`, 'a Date, milliseconds since the epoch, or ISO text', t)
  }
  optSignal(o, at)
}

/**
 * Options of `begin`: `isolationLevel`, `signal`.
 *
 * @throws {InvalidArgumentError} naming the option
 */
export function checkBeginOptions(value: unknown): void {
  const o = optionsObject(value, 'options')
  optOneOf(o, 'isolationLevel', 'options', ['Serializable', 'WriteSerializable'])
  optSignal(o, 'options')
}

/**
 * Options of `history`: `limit`, `signal`.
 *
 * @throws {InvalidArgumentError} naming the option
 */
export function checkHistoryOptions(value: unknown): void {
  const o = optionsObject(value, 'options')
  optNumber(o, 'limit', 'options', { min: 0, integer: true })
  optSignal(o, 'options')
}

/**
 * Options of `checkpoint`: `version`.
 *
 * @throws {InvalidArgumentError} naming the option
 */
export function checkCheckpointOptions(value: unknown): void {
  checkSnapshotOptions(value)
  if (isPlainObject(value) && value.timestamp !== undefined) {
    fail('options.timestamp', 'absent: a checkpoint is written for a version', value.timestamp)
  }
}

// === Reads ===

/**
 * Scan options: `where`, `columns`, `batchSize`, `signal` (time travel is checked by
 * {@link checkSnapshotOptions}).
 *
 * @throws {InvalidArgumentError} naming the option
 */
export function checkScanOptions(value: unknown): void {
  const o = optionsObject(value, 'options')
  checkWhere(o.where, 'options.where')
  optStringArray(o, 'columns', 'options')
  optNumber(o, 'batchSize', 'options', { min: 1, integer: true })
  optSignal(o, 'options')
}

// === Writes ===

/**
 * Rows to append or merge: an array of plain objects.
 *
 * @throws {InvalidArgumentError} naming the first bad row
 */
export function checkRows(value: unknown, argument: string): void {
  if (!Array.isArray(value)) fail(argument, 'an array of row objects', value)
  for (let i = 0; i < value.length; i++) {
    if (!isPlainObject(value[i])) fail(`${argument}[${i}]`, 'a row object (column name to value)', value[i])
  }
}

/**
 * Options of `append`: `targetFileSize`.
 *
 * @throws {InvalidArgumentError} naming the option
 */
export function checkAppendOptions(value: unknown): void {
  const o = optionsObject(value, 'options')
  optNumber(o, 'targetFileSize', 'options', { min: 0, above: true })
}

function checkAssignments(value: unknown, at: string): void {
  if (!isPlainObject(value)) fail(at, 'an object of column name to SQL expression', value)
  for (const [k, v] of Object.entries(value)) {
    if (v !== undefined) requireExpressionText(v, `${at}['${k}']`)
  }
}

/**
 * Options of `update`: `where` and `set`.
 *
 * @throws {InvalidArgumentError} naming the option
 */
export function checkUpdateOptions(value: unknown): void {
  if (!isPlainObject(value))
    fail('options', "an object such as { set: { col: 'expr' }, where: '...' }", value)
  checkWhere(value.where, 'options.where')
  checkAssignments(value.set, 'options.set')
}

function checkClauses(value: unknown, at: string, actions: readonly string[]): void {
  if (value === undefined) return
  if (!Array.isArray(value)) fail(at, 'an array of clauses', value)
  for (let i = 0; i < value.length; i++) {
    const c: unknown = value[i]
    const ci = `${at}[${i}]`
    if (!isPlainObject(c)) fail(ci, `a clause object with ${actions.map((a) => `'${a}'`).join(' or ')}`, c)
    checkWhere(c.if, `${ci}.if`)
    if (c.update !== undefined && c.update !== '*') checkAssignments(c.update, `${ci}.update`)
    if (c.insert !== undefined && c.insert !== '*') checkAssignments(c.insert, `${ci}.insert`)
    if (c.delete !== undefined && c.delete !== true) fail(`${ci}.delete`, 'true', c.delete)
  }
}

/**
 * Options of `merge`: `on`, the clause lists and `sourceSchema`.
 *
 * @throws {InvalidArgumentError} naming the option
 */
export function checkMergeOptions(value: unknown): void {
  if (!isPlainObject(value)) fail('options', "an object with at least on: 'target.id = source.id'", value)
  if (value.on === undefined) fail('options.on', 'the join condition', value.on)
  requireExpressionText(value.on, 'options.on')
  checkClauses(value.whenMatched, 'options.whenMatched', ['update', 'delete'])
  checkClauses(value.whenNotMatched, 'options.whenNotMatched', ['insert'])
  checkClauses(value.whenNotMatchedBySource, 'options.whenNotMatchedBySource', ['update', 'delete'])
  const schema = value.sourceSchema
  if (schema !== undefined && typeof schema !== 'string' && !isPlainObject(schema)) {
    fail('options.sourceSchema', 'DDL text or a schema object', schema)
  }
}

/**
 * Options of `optimize`.
 *
 * @throws {InvalidArgumentError} naming the option
 */
export function checkOptimizeOptions(value: unknown): void {
  const o = optionsObject(value, 'options')
  optNumber(o, 'targetFileSize', 'options', { min: 0, above: true })
  optNumber(o, 'minFileSize', 'options', { min: 0 })
  optNumber(o, 'maxDeletedRowsRatio', 'options', { min: 0, max: 1 })
  optStringArray(o, 'zOrderBy', 'options')
  checkWhere(o.where, 'options.where')
}

/**
 * Options of `vacuum`.
 *
 * @throws {InvalidArgumentError} naming the option
 */
export function checkVacuumOptions(value: unknown): void {
  const o = optionsObject(value, 'options')
  optNumber(o, 'retentionHours', 'options', { min: 0 })
  optBoolean(o, 'dryRun', 'options')
  optBoolean(o, 'enforceRetentionDuration', 'options')
  optSignal(o, 'options')
}

// === Transactions ===

/**
 * An application id of an idempotent-write marker: a non-empty string.
 *
 * @throws {InvalidArgumentError} otherwise
 */
export function checkAppId(value: unknown): void {
  if (typeof value !== 'string' || value === '') fail('appId', 'a non-empty string', value)
}

/**
 * A marker version: a bigint or a safe integer, at least 0.
 *
 * @throws {InvalidArgumentError} otherwise
 */
export function checkMarkerVersion(value: unknown): void {
  const ok =
    (typeof value === 'bigint' && value >= 0n) ||
    (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0)
  if (!ok) fail('version', 'a bigint or an integer of at least 0', value)
}

/**
 * Raw actions to stage: an array of action objects, and options with `operation` and
 * `changesData`.
 *
 * @throws {InvalidArgumentError} naming the argument
 */
export function checkStagedActions(actions: unknown, options: unknown): void {
  if (!Array.isArray(actions)) fail('actions', 'an array of actions', actions)
  for (let i = 0; i < actions.length; i++) {
    if (!isPlainObject(actions[i]))
      fail(`actions[${i}]`, 'an action object such as { add: {...} }', actions[i])
  }
  const o = optionsObject(options, 'options')
  optString(o, 'operation', 'options')
  optBoolean(o, 'changesData', 'options')
}
