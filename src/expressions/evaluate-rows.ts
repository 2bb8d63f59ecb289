/**
 * In-JS evaluation of an expression over one row, with SQL three-valued logic. Meant for small
 * checks (a handful of rows, partition values); bulk evaluation belongs to the data plane.
 *
 * Semantics follow the DuckDB data plane so that a predicate selects the same rows both ways:
 * - NULL propagates through comparisons, arithmetic and functions; `AND`/`OR`/`NOT` use
 *   three-valued logic; `<=>` never yields NULL; `x IN (..., NULL)` is NULL when nothing matches.
 * - Comparisons follow `values.ts`: integers (bigint) and decimals compare exactly with each
 *   other (`9007199254740993n` differs from the literal `9007199254740992`); a double on either
 *   side makes it a double comparison (so `9007199254740993n` equals `9.007199254740992e15`), a
 *   float against an integer or decimal compares as float; NaN equals NaN and is the largest
 *   number. A JS number in a row is a double unless the column resolver declares another type.
 * - Integer and decimal `+ - * %` are exact and never overflow (an engine may raise an overflow
 *   error instead); `/` divides as floating point and a division by zero gives +/-Infinity or NaN;
 *   `%` by zero is NULL for exact numbers and NaN for floating point.
 * - `lower`/`upper` map characters whose case mapping is one character; others are kept.
 *   `length` counts code points.
 *
 * Row values are read by their JS type (see `valueOfJs`), or, when a column resolver is given,
 * as the column's declared type (see `coerceRaw`), e.g. `'2024-01-01'` for a date column or a
 * bigint of microseconds for a timestamp column.
 */

import { InvalidPredicateError, UnsupportedError } from '../errors/index.js'
import { civilFromDays } from '../protocol/civil-dates.js'
import type { Expression } from './ast.js'
import type { ColumnResolver } from './columns.js'
import { parseDataType } from './data-types.js'
import { addDecimals, type Decimal } from './decimal.js'
import { likeToRegExp } from './like-pattern.js'
import { toSql } from './to-sql.js'
import {
  castValue,
  coerceRaw,
  compareValues,
  displayValue,
  familyOf,
  type Nullable,
  typeName,
  type Value,
  valueOfJs,
  valueOfLiteral,
} from './values.js'

/** Options of {@link evaluateRow}. */
export interface EvaluateOptions {
  /** Declared column types; when given, row values are read as the declared type. */
  readonly columns?: ColumnResolver
}

/**
 * Evaluates a predicate over one row.
 *
 * @param expr - the predicate
 * @param row - column values by name; nested struct fields as nested objects
 * @param options - optional column types
 * @returns true, false, or null (SQL NULL: the row does not match)
 * @throws {InvalidPredicateError} when the predicate references a column the row lacks, compares
 *   incompatible types, or is not boolean-valued
 * @throws {UnsupportedError} for an operation this evaluator does not implement (such as a cast
 *   of a double to string, whose text differs between engines)
 */
export function evaluateRow(
  expr: Expression,
  row: Readonly<Record<string, unknown>>,
  options: EvaluateOptions = {},
): boolean | null {
  return withContext(expr, () => evalBool(expr, { row, columns: options.columns }))
}

/**
 * Evaluates an expression over one row to a runtime value.
 *
 * @param expr - the expression
 * @param row - column values by name
 * @param options - optional column types
 * @returns the value, or null
 * @throws {InvalidPredicateError} as {@link evaluateRow}
 * @throws {UnsupportedError} as {@link evaluateRow}
 */
export function evaluateValue(
  expr: Expression,
  row: Readonly<Record<string, unknown>>,
  options: EvaluateOptions = {},
): Nullable {
  return withContext(expr, () => evalNode(expr, { row, columns: options.columns }))
}

function withContext<T>(expr: Expression, run: () => T): T {
  try {
    return run()
  } catch (err) {
    // Value-level helpers do not know the expression; attach its text here.
    if (err instanceof InvalidPredicateError && err.text === '') {
      throw new InvalidPredicateError(err.message, toSql(expr))
    }
    throw err
  }
}

interface Context {
  readonly row: Readonly<Record<string, unknown>>
  readonly columns: ColumnResolver | undefined
}

function findKey(obj: object, name: string): string | undefined {
  if (Object.hasOwn(obj, name)) return name
  const lower = name.toLowerCase()
  const keys = Object.keys(obj).filter((k) => k.toLowerCase() === lower)
  return keys.length === 1 ? keys[0] : undefined
}

function lookup(path: readonly string[], ctx: Context): Nullable {
  let current: unknown = ctx.row
  for (const part of path) {
    if (current === null || current === undefined) return null
    if (typeof current !== 'object') {
      throw new InvalidPredicateError(`Column ${path.join('.')}: ${part} is not a field of a struct`, '')
    }
    const key = findKey(current, part)
    if (key === undefined) throw new InvalidPredicateError(`Unknown column ${path.join('.')}`, '')
    current = (current as Record<string, unknown>)[key]
  }
  const type = ctx.columns?.resolve(path)?.type
  if (type === undefined) return valueOfJs(current)
  const v = coerceRaw(current, type)
  if (v === undefined) {
    throw new InvalidPredicateError(`Value of column ${path.join('.')} is not a valid ${type.name}`, '')
  }
  return v
}

function bool(v: boolean | null): Nullable {
  return v === null ? null : { t: 'bool', v }
}

function evalBool(e: Expression, ctx: Context): boolean | null {
  const v = evalNode(e, ctx)
  if (v === null) return null
  if (v.t !== 'bool') {
    throw new InvalidPredicateError(`Expected a condition, got ${typeName(v)} value ${displayValue(v)}`, '')
  }
  return v.v
}

function and3(a: boolean | null, b: () => boolean | null): boolean | null {
  if (a === false) return false
  const r = b()
  if (r === false) return false
  return a === null || r === null ? null : true
}

function or3(a: boolean | null, b: () => boolean | null): boolean | null {
  if (a === true) return true
  const r = b()
  if (r === true) return true
  return a === null || r === null ? null : false
}

function not3(a: boolean | null): boolean | null {
  return a === null ? null : !a
}

function compareOp(op: string, a: Nullable, b: Nullable): boolean | null {
  if (op === '<=>') {
    if (a === null || b === null) return a === null && b === null
    return compareValues(a, b) === 0
  }
  if (a === null || b === null) return null
  const c = compareValues(a, b)
  switch (op) {
    case '=':
      return c === 0
    case '<>':
      return c !== 0
    case '<':
      return c < 0
    case '<=':
      return c <= 0
    case '>':
      return c > 0
    default:
      return c >= 0
  }
}

function evalNode(e: Expression, ctx: Context): Nullable {
  switch (e.kind) {
    case 'column':
      return lookup(e.path, ctx)
    case 'literal':
      return valueOfLiteral(e)
    case 'comparison':
      return bool(compareOp(e.op, evalNode(e.left, ctx), evalNode(e.right, ctx)))
    case 'and':
      return bool(and3(evalBool(e.left, ctx), () => evalBool(e.right, ctx)))
    case 'or':
      return bool(or3(evalBool(e.left, ctx), () => evalBool(e.right, ctx)))
    case 'not':
      return bool(not3(evalBool(e.operand, ctx)))
    case 'in': {
      const v = evalNode(e.value, ctx)
      let result: boolean | null = false
      for (const item of e.list) {
        result = or3(result, () => compareOp('=', v, evalNode(item, ctx)))
        if (result === true) break
      }
      return bool(e.negated ? not3(result) : result)
    }
    case 'between': {
      const v = evalNode(e.value, ctx)
      const r = and3(compareOp('>=', v, evalNode(e.low, ctx)), () =>
        compareOp('<=', v, evalNode(e.high, ctx)),
      )
      return bool(e.negated ? not3(r) : r)
    }
    case 'is-null': {
      const isNullValue = evalNode(e.operand, ctx) === null
      return bool(e.negated ? !isNullValue : isNullValue)
    }
    case 'is-boolean': {
      const b = evalBool(e.operand, ctx)
      const r = b === e.value
      return bool(e.negated ? !r : r)
    }
    case 'like': {
      const v = evalNode(e.value, ctx)
      const p = evalNode(e.pattern, ctx)
      if (v === null || p === null) return null
      if (v.t !== 'str' || p.t !== 'str') {
        throw new InvalidPredicateError(`LIKE needs strings, got ${typeName(v)} LIKE ${typeName(p)}`, '')
      }
      const r = likeToRegExp(p.v, e.escape).test(v.v)
      return bool(e.negated ? !r : r)
    }
    case 'arithmetic':
      return arithmetic(e.op, evalNode(e.left, ctx), evalNode(e.right, ctx))
    case 'negate': {
      const v = evalNode(e.operand, ctx)
      return v === null ? null : negateValue(v)
    }
    case 'call':
      return callFunction(e.name, e.args, ctx)
    case 'cast': {
      const v = evalNode(e.operand, ctx)
      const type = parseDataType(e.type)
      if (type === undefined) throw new InvalidPredicateError(`Unknown type ${e.type}`, '')
      return v === null ? null : castValue(v, type)
    }
  }
}

// === Arithmetic ===

function toNumber(v: Value): number {
  switch (v.t) {
    case 'int':
      return Number(v.v)
    case 'dec':
      return Number.parseFloat(displayValue(v))
    default:
      return v.v as number
  }
}

function exact(v: Value): Decimal {
  return v.t === 'int' ? { unscaled: v.v, scale: 0 } : (v.v as Decimal)
}

function floatingOp(op: string, a: number, b: number): number {
  switch (op) {
    case '+':
      return a + b
    case '-':
      return a - b
    case '*':
      return a * b
    case '/':
      return a / b
    default:
      return a % b
  }
}

function arithmetic(op: string, a: Nullable, b: Nullable): Nullable {
  if (a === null || b === null) return null
  if (familyOf(a) !== 'number' || familyOf(b) !== 'number') {
    throw new UnsupportedError(`Arithmetic ${typeName(a)} ${op} ${typeName(b)} is not supported`)
  }
  if (a.t === 'f64' || b.t === 'f64') return { t: 'f64', v: floatingOp(op, toNumber(a), toNumber(b)) }
  if (a.t === 'f32' || b.t === 'f32') {
    return { t: 'f32', v: Math.fround(floatingOp(op, Math.fround(toNumber(a)), Math.fround(toNumber(b)))) }
  }
  if (op === '/') return { t: 'f64', v: toNumber(a) / toNumber(b) }
  if (a.t === 'int' && b.t === 'int') {
    switch (op) {
      case '+':
        return { t: 'int', v: a.v + b.v }
      case '-':
        return { t: 'int', v: a.v - b.v }
      case '*':
        return { t: 'int', v: a.v * b.v }
      default:
        return b.v === 0n ? null : { t: 'int', v: a.v % b.v }
    }
  }
  const x = exact(a)
  const y = exact(b)
  switch (op) {
    case '+':
      return { t: 'dec', v: addDecimals(x, y) }
    case '-':
      return { t: 'dec', v: addDecimals(x, { unscaled: -y.unscaled, scale: y.scale }) }
    case '*':
      return { t: 'dec', v: { unscaled: x.unscaled * y.unscaled, scale: x.scale + y.scale } }
    default: {
      const scale = Math.max(x.scale, y.scale)
      const xu = x.unscaled * 10n ** BigInt(scale - x.scale)
      const yu = y.unscaled * 10n ** BigInt(scale - y.scale)
      return yu === 0n ? null : { t: 'dec', v: { unscaled: xu % yu, scale } }
    }
  }
}

function negateValue(v: Value): Value {
  switch (v.t) {
    case 'int':
      return { t: 'int', v: -v.v }
    case 'dec':
      return { t: 'dec', v: { unscaled: -v.v.unscaled, scale: v.v.scale } }
    case 'f64':
    case 'f32':
      return { t: v.t, v: -v.v }
    default:
      throw new UnsupportedError(`Cannot negate ${typeName(v)}`)
  }
}

// === Functions ===

function mapCase(s: string, upper: boolean): string {
  let out = ''
  for (const ch of s) {
    const mapped = upper ? ch.toUpperCase() : ch.toLowerCase()
    out += [...mapped].length === 1 ? mapped : ch
  }
  return out
}

const MICROS_PER_DAY = 86_400_000_000n
const MICROS_PER_HOUR = 3_600_000_000n

/**
 * A field of a date or timestamp, as Spark's `year`, `month`, `day` and `hour` give it: a
 * `timestamp` (an instant) is read in UTC, a `timestamp_ntz` as written; a date has hour 0.
 */
function datePart(name: 'year' | 'month' | 'day' | 'hour', v: Value): number {
  let days: number
  let hour = 0
  if (v.t === 'date') days = v.v
  else if (v.t === 'ts' || v.t === 'ntz') {
    let d = v.v / MICROS_PER_DAY
    let rest = v.v % MICROS_PER_DAY
    // BigInt division truncates toward zero: instants before 1970 need the floor.
    if (rest < 0n) {
      d -= 1n
      rest += MICROS_PER_DAY
    }
    days = Number(d)
    hour = Number(rest / MICROS_PER_HOUR)
  } else throw new InvalidPredicateError(`${name} needs a date or a timestamp, got ${typeName(v)}`, '')
  if (name === 'hour') return hour
  const [y, m, d] = civilFromDays(days)
  return name === 'year' ? y : name === 'month' ? m : d
}

function callFunction(name: string, args: readonly Expression[], ctx: Context): Nullable {
  if (name === 'coalesce') {
    for (const a of args) {
      const v = evalNode(a, ctx)
      if (v !== null) return v
    }
    return null
  }
  const v = evalNode(args[0] as Expression, ctx)
  if (v === null) return null
  switch (name) {
    case 'lower':
    case 'upper':
      if (v.t !== 'str') throw new InvalidPredicateError(`${name} needs a string, got ${typeName(v)}`, '')
      return { t: 'str', v: mapCase(v.v, name === 'upper') }
    case 'length':
      if (v.t !== 'str') throw new InvalidPredicateError(`length needs a string, got ${typeName(v)}`, '')
      return { t: 'int', v: BigInt([...v.v].length) }
    case 'year':
    case 'month':
    case 'day':
    case 'hour':
      return { t: 'int', v: BigInt(datePart(name, v)) }
    default:
      switch (v.t) {
        case 'int':
          return { t: 'int', v: v.v < 0n ? -v.v : v.v }
        case 'dec':
          return {
            t: 'dec',
            v: { unscaled: v.v.unscaled < 0n ? -v.v.unscaled : v.v.unscaled, scale: v.v.scale },
          }
        case 'f64':
        case 'f32':
          return { t: v.t, v: Math.abs(v.v) }
        default:
          throw new InvalidPredicateError(`abs needs a number, got ${typeName(v)}`, '')
      }
  }
}
