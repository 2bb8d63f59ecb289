/**
 * The predicate and expression tree: immutable nodes discriminated by `kind`, and the
 * constructors that build them. Nodes are frozen plain objects, so two trees built the same way
 * (by the parser or by hand) are deep-equal.
 */

import { InvalidArgumentError } from '../errors/index.js'
import { type DataTypeName, formatDataType, INTEGRAL_RANGES, parseDataType } from './data-types.js'
import { type Decimal, digitCount, formatDecimal, parseDecimal } from './decimal.js'
import { MAX_TIMESTAMP_MICROS, MIN_TIMESTAMP_MICROS, parseDate, parseTimestamp } from './temporal.js'

// === Node types ===

/** Comparison operators; `<=>` is null-safe equality (`IS NOT DISTINCT FROM`). */
export type ComparisonOperator = '=' | '<>' | '<' | '<=' | '>' | '>=' | '<=>'

/** Binary arithmetic operators. `/` always divides as floating point. */
export type ArithmeticOperator = '+' | '-' | '*' | '/' | '%'

/** Scalar functions the parser, the renderer and the evaluator all support. */
export type FunctionName =
  | 'lower'
  | 'upper'
  | 'length'
  | 'abs'
  | 'coalesce'
  | 'year'
  | 'month'
  | 'day'
  | 'hour'

/** The functions, with their accepted argument counts. */
export const FUNCTION_ARITY: Readonly<Record<FunctionName, readonly [number, number]>> = Object.freeze({
  lower: Object.freeze([1, 1] as const),
  upper: Object.freeze([1, 1] as const),
  length: Object.freeze([1, 1] as const),
  abs: Object.freeze([1, 1] as const),
  coalesce: Object.freeze([1, Number.POSITIVE_INFINITY] as const),
  year: Object.freeze([1, 1] as const),
  month: Object.freeze([1, 1] as const),
  day: Object.freeze([1, 1] as const),
  hour: Object.freeze([1, 1] as const),
})

/** A reference to a column; `path` has more than one element for a nested struct field. */
export interface ColumnRef {
  readonly kind: 'column'
  readonly path: readonly string[]
}

/** The untyped SQL `NULL`. */
export interface NullLiteral {
  readonly kind: 'literal'
  readonly type: 'null'
  readonly value: null
}

/** `TRUE` or `FALSE`. */
export interface BooleanLiteral {
  readonly kind: 'literal'
  readonly type: 'boolean'
  readonly value: boolean
}

/** An integral literal; the value is within the range of its type. */
export interface IntegralLiteral {
  readonly kind: 'literal'
  readonly type: 'byte' | 'short' | 'integer' | 'long'
  readonly value: bigint
}

/** A finite floating-point literal; a `float` value is exactly representable in 32 bits. */
export interface FloatingLiteral {
  readonly kind: 'literal'
  readonly type: 'float' | 'double'
  readonly value: number
}

/**
 * An exact decimal literal. `value` is its canonical text (`-1.50`); precision and scale follow
 * from it as in Spark: scale = fraction digits, precision = max(significant digits, scale).
 */
export interface DecimalLiteral {
  readonly kind: 'literal'
  readonly type: 'decimal'
  readonly value: string
  readonly precision: number
  readonly scale: number
}

/** A character string. */
export interface StringLiteral {
  readonly kind: 'literal'
  readonly type: 'string'
  readonly value: string
}

/** A byte string, held as lowercase hex so that the node can be frozen. */
export interface BinaryLiteral {
  readonly kind: 'literal'
  readonly type: 'binary'
  readonly value: string
}

/** A date, as days since 1970-01-01. */
export interface DateLiteral {
  readonly kind: 'literal'
  readonly type: 'date'
  readonly value: number
}

/**
 * A timestamp as microseconds since the epoch: an instant (UTC) for `timestamp`, a wall-clock
 * reading for `timestamp_ntz`.
 */
export interface TimestampLiteral {
  readonly kind: 'literal'
  readonly type: 'timestamp' | 'timestamp_ntz'
  readonly value: bigint
}

/** Any literal. */
export type Literal =
  | NullLiteral
  | BooleanLiteral
  | IntegralLiteral
  | FloatingLiteral
  | DecimalLiteral
  | StringLiteral
  | BinaryLiteral
  | DateLiteral
  | TimestampLiteral

/** `left op right`. */
export interface Comparison {
  readonly kind: 'comparison'
  readonly op: ComparisonOperator
  readonly left: Expression
  readonly right: Expression
}

/** `left AND right`. */
export interface And {
  readonly kind: 'and'
  readonly left: Expression
  readonly right: Expression
}

/** `left OR right`. */
export interface Or {
  readonly kind: 'or'
  readonly left: Expression
  readonly right: Expression
}

/** `NOT operand`. */
export interface Not {
  readonly kind: 'not'
  readonly operand: Expression
}

/** `value [NOT] IN (list...)`; the list is never empty. */
export interface In {
  readonly kind: 'in'
  readonly value: Expression
  readonly list: readonly Expression[]
  readonly negated: boolean
}

/** `value [NOT] BETWEEN low AND high` (bounds included). */
export interface Between {
  readonly kind: 'between'
  readonly value: Expression
  readonly low: Expression
  readonly high: Expression
  readonly negated: boolean
}

/** `operand IS [NOT] NULL`. */
export interface IsNull {
  readonly kind: 'is-null'
  readonly operand: Expression
  readonly negated: boolean
}

/** `operand IS [NOT] TRUE` / `operand IS [NOT] FALSE`. */
export interface IsBoolean {
  readonly kind: 'is-boolean'
  readonly operand: Expression
  readonly value: boolean
  readonly negated: boolean
}

/** `value [NOT] LIKE pattern [ESCAPE 'c']`; without ESCAPE no character escapes. */
export interface Like {
  readonly kind: 'like'
  readonly value: Expression
  readonly pattern: Expression
  readonly escape: string | null
  readonly negated: boolean
}

/** `left op right` for `+ - * / %`. */
export interface Arithmetic {
  readonly kind: 'arithmetic'
  readonly op: ArithmeticOperator
  readonly left: Expression
  readonly right: Expression
}

/** Unary minus. */
export interface Negate {
  readonly kind: 'negate'
  readonly operand: Expression
}

/** A scalar function call. */
export interface Call {
  readonly kind: 'call'
  readonly name: FunctionName
  readonly args: readonly Expression[]
}

/** `CAST(operand AS type)`. */
export interface Cast {
  readonly kind: 'cast'
  readonly operand: Expression
  readonly type: DataTypeName
}

/** Any expression; a predicate is an expression of boolean type. */
export type Expression =
  | ColumnRef
  | Literal
  | Comparison
  | And
  | Or
  | Not
  | In
  | Between
  | IsNull
  | IsBoolean
  | Like
  | Arithmetic
  | Negate
  | Call
  | Cast

// === Column references ===

/**
 * A column reference. A string is split on `.` into a nested path (`'a.b'` is field `b` of
 * struct `a`); pass an array for names that themselves contain a dot (`['a.b']`).
 *
 * @param name - dotted name or explicit path
 * @returns the column node
 * @throws {InvalidArgumentError} when the path is empty or has an empty part
 */
export function col(name: string | readonly string[]): ColumnRef {
  const path = typeof name === 'string' ? name.split('.') : [...name]
  if (path.length === 0 || path.some((p) => p.length === 0)) {
    throw new InvalidArgumentError(`Invalid column name ${JSON.stringify(name)}: parts must not be empty`, {
      argument: 'name',
    })
  }
  return Object.freeze({ kind: 'column', path: Object.freeze(path) })
}

// === Literals ===

const NULL_LITERAL: NullLiteral = Object.freeze({ kind: 'literal', type: 'null', value: null })

/**
 * A literal from a JS value: `null`; a boolean; a bigint (an `integer` when it fits 32 bits,
 * else a `long`); a number (a `double`); a string; a `Uint8Array` (binary).
 *
 * @param value - the JS value
 * @returns the literal node
 * @throws {InvalidArgumentError} for a non-finite number, a bigint outside 64 bits, or another type
 */
export function lit(value: null | boolean | bigint | number | string | Uint8Array): Literal {
  if (value === null) return NULL_LITERAL
  switch (typeof value) {
    case 'boolean':
      return Object.freeze({ kind: 'literal', type: 'boolean', value })
    case 'bigint': {
      const [lo, hi] = INTEGRAL_RANGES.integer
      return integralLiteral(value >= lo && value <= hi ? 'integer' : 'long', value)
    }
    case 'number':
      return floatingLiteral('double', value)
    case 'string':
      return Object.freeze({ kind: 'literal', type: 'string', value })
    default:
      if (value instanceof Uint8Array) return binaryLiteral(value)
      throw new InvalidArgumentError(`Cannot make a literal from ${typeof value}`, { argument: 'value' })
  }
}

/**
 * An integral literal of an explicit type.
 *
 * @param type - byte, short, integer or long
 * @param value - the value
 * @returns the literal node
 * @throws {InvalidArgumentError} when the value is outside the type's range
 */
export function integralLiteral(type: IntegralLiteral['type'], value: bigint | number): IntegralLiteral {
  if (typeof value === 'number' && !Number.isSafeInteger(value)) {
    throw new InvalidArgumentError(`${type} literal ${value} is not a safe integer; pass a bigint`, {
      argument: 'value',
    })
  }
  const v = BigInt(value)
  const [lo, hi] = INTEGRAL_RANGES[type]
  if (v < lo || v > hi) {
    throw new InvalidArgumentError(`${v} is outside the range of ${type} (${lo}..${hi})`, {
      argument: 'value',
    })
  }
  return Object.freeze({ kind: 'literal', type, value: v })
}

/**
 * A float or double literal.
 *
 * @param type - float (rounded to 32 bits) or double
 * @param value - a finite number
 * @returns the literal node
 * @throws {InvalidArgumentError} when the value is not finite (write `CAST('NaN' AS double)` instead)
 */
export function floatingLiteral(type: FloatingLiteral['type'], value: number): FloatingLiteral {
  const v = type === 'float' ? Math.fround(value) : value
  if (!Number.isFinite(v)) {
    throw new InvalidArgumentError(
      `A ${type} literal must be finite, got ${value}; use CAST('NaN' AS ${type}) for special values`,
      { argument: 'value' },
    )
  }
  return Object.freeze({ kind: 'literal', type, value: v })
}

/**
 * A decimal literal from exact text (`'1.50'`, `'-3'`, `'1.5e2'`).
 *
 * @param text - the number text; trailing fraction zeros are kept as scale
 * @returns the literal node
 * @throws {InvalidArgumentError} when the text is not a number or needs more than 38 digits
 */
export function decimalLiteral(text: string): DecimalLiteral {
  const parsed = parseDecimal(text)
  if (parsed === undefined) {
    throw new InvalidArgumentError(`Invalid decimal literal ${JSON.stringify(text)}`, { argument: 'text' })
  }
  return decimalLiteralOf(parsed)
}

/**
 * A decimal literal from an exact value.
 *
 * @param value - unscaled value and scale
 * @returns the literal node
 * @throws {InvalidArgumentError} when the value needs more than 38 digits
 */
export function decimalLiteralOf(value: Decimal): DecimalLiteral {
  const precision = Math.max(digitCount(value), value.scale)
  if (precision > 38) {
    throw new InvalidArgumentError(
      `Decimal literal ${formatDecimal(value)} needs ${precision} digits; the maximum is 38 (use a double instead)`,
      { argument: 'value' },
    )
  }
  return Object.freeze({
    kind: 'literal',
    type: 'decimal',
    value: formatDecimal(value),
    precision,
    scale: value.scale,
  })
}

/**
 * A string literal.
 *
 * @param value - the text
 * @returns the literal node
 */
export function stringLiteral(value: string): StringLiteral {
  return Object.freeze({ kind: 'literal', type: 'string', value })
}

/**
 * A binary literal.
 *
 * @param value - bytes, or their hex text
 * @returns the literal node
 * @throws {InvalidArgumentError} when the hex text is malformed
 */
export function binaryLiteral(value: Uint8Array | string): BinaryLiteral {
  let hex: string
  if (typeof value === 'string') {
    if (!/^(?:[0-9a-fA-F]{2})*$/.test(value)) {
      throw new InvalidArgumentError(
        `Invalid hex text ${JSON.stringify(value)}: expected pairs of hex digits`,
        {
          argument: 'value',
        },
      )
    }
    hex = value.toLowerCase()
  } else {
    hex = Array.from(value, (b) => b.toString(16).padStart(2, '0')).join('')
  }
  return Object.freeze({ kind: 'literal', type: 'binary', value: hex })
}

/**
 * A date literal.
 *
 * @param value - `YYYY-MM-DD` text, or days since the epoch
 * @returns the literal node
 * @throws {InvalidArgumentError} when the date is invalid or outside years 0001..9999
 */
export function dateLiteral(value: string | number): DateLiteral {
  const days = typeof value === 'string' ? parseDate(value) : value
  if (days === undefined || !Number.isSafeInteger(days) || days < -719162 || days > 2932896) {
    throw new InvalidArgumentError(
      `Invalid date ${JSON.stringify(value)}: expected YYYY-MM-DD in 0001..9999`,
      {
        argument: 'value',
      },
    )
  }
  return Object.freeze({ kind: 'literal', type: 'date', value: days })
}

/**
 * A timestamp literal (an instant). Text without an offset is read as UTC.
 *
 * @param value - timestamp text, or microseconds since the epoch
 * @returns the literal node
 * @throws {InvalidArgumentError} when the text is invalid or outside years 0001..9999
 */
export function timestampLiteral(value: string | bigint): TimestampLiteral {
  return makeTimestamp('timestamp', value)
}

/**
 * A timestamp-without-time-zone literal (a wall-clock reading).
 *
 * @param value - timestamp text without offset, or microseconds since the epoch
 * @returns the literal node
 * @throws {InvalidArgumentError} when the text is invalid, has an offset, or is out of range
 */
export function timestampNtzLiteral(value: string | bigint): TimestampLiteral {
  return makeTimestamp('timestamp_ntz', value)
}

function makeTimestamp(type: TimestampLiteral['type'], value: string | bigint): TimestampLiteral {
  let micros: bigint | undefined
  if (typeof value === 'bigint') {
    micros = value
  } else {
    const parsed = parseTimestamp(value)
    if (parsed !== undefined && !(type === 'timestamp_ntz' && parsed.offsetSeconds !== undefined)) {
      micros = parsed.micros
    }
  }
  if (micros === undefined || micros < MIN_TIMESTAMP_MICROS || micros > MAX_TIMESTAMP_MICROS) {
    const zone = type === 'timestamp' ? '[+HH:MM|Z]' : ''
    throw new InvalidArgumentError(
      `Invalid ${type} ${JSON.stringify(String(value))}: expected YYYY-MM-DD[ HH:MM:SS[.ffffff]]${zone} in years 0001..9999`,
      { argument: 'value' },
    )
  }
  return Object.freeze({ kind: 'literal', type, value: micros })
}

// === Operators ===

/**
 * The deepest tree (in nodes, root to leaf) the library accepts. Every stage that walks a tree
 * (evaluation, rendering, DuckDB, whose own parser stops at 1000 levels) recurses once per
 * level, so a bound keeps them all off the call stack's limit. Long AND / OR chains do not
 * count against it beyond their logarithm: they are built as balanced trees.
 */
export const MAX_EXPRESSION_DEPTH = 256

function binary<K extends 'and' | 'or'>(kind: K, left: Expression, right: Expression) {
  return Object.freeze({ kind, left, right })
}

/**
 * `operands[lo..hi)` joined by `kind` as a balanced tree: the first half (rounded up) on the
 * left, the rest on the right. Two or three operands give `(a op b) op c`, as left nesting would;
 * a long chain stays about log2(n) deep, which keeps every recursive stage safe.
 */
function balanced(kind: 'and' | 'or', operands: readonly Expression[], lo: number, hi: number): Expression {
  if (hi - lo === 1) return operands[lo] as Expression
  const mid = lo + Math.ceil((hi - lo) / 2)
  return binary(kind, balanced(kind, operands, lo, mid), balanced(kind, operands, mid, hi))
}

/**
 * Conjunction of a list of predicates, as a balanced tree (see {@link and}). Takes an array, so
 * a list of any length can be passed without spreading it into a call.
 *
 * @param operands - the predicates; none gives `TRUE`
 * @returns the predicate
 */
export function conjunction(operands: readonly Expression[]): Expression {
  if (operands.length === 0) return lit(true)
  return balanced('and', operands, 0, operands.length)
}

/**
 * Disjunction of a list of predicates, as a balanced tree (see {@link or}).
 *
 * @param operands - the predicates; none gives `FALSE`
 * @returns the predicate
 */
export function disjunction(operands: readonly Expression[]): Expression {
  if (operands.length === 0) return lit(false)
  return balanced('or', operands, 0, operands.length)
}

/**
 * Conjunction of any number of predicates. The parser builds a chain `a AND b AND ...` the same
 * way: a balanced tree whose left half holds the first half of the operands (rounded up), so
 * `and(a, b, c)` is `(a AND b) AND c` and a chain of 100,000 predicates is 17 levels deep.
 *
 * @param operands - the predicates; none gives `TRUE`
 * @returns the predicate
 */
export function and(...operands: Expression[]): Expression {
  return conjunction(operands)
}

/**
 * Disjunction of any number of predicates, grouped as {@link and} groups them.
 *
 * @param operands - the predicates; none gives `FALSE`
 * @returns the predicate
 */
export function or(...operands: Expression[]): Expression {
  return disjunction(operands)
}

/**
 * `NOT operand`.
 *
 * @param operand - a predicate
 * @returns the negation
 */
export function not(operand: Expression): Not {
  return Object.freeze({ kind: 'not', operand })
}

/**
 * A comparison.
 *
 * @param op - the operator (`!=` is accepted and stored as `<>`)
 * @param left - left operand
 * @param right - right operand
 * @returns the comparison node
 */
export function compare(op: ComparisonOperator | '!=', left: Expression, right: Expression): Comparison {
  return Object.freeze({ kind: 'comparison', op: op === '!=' ? '<>' : op, left, right })
}

/**
 * `left = right`.
 * @param left - left operand
 * @param right - right operand
 * @returns the comparison node
 */
export function eq(left: Expression, right: Expression): Comparison {
  return compare('=', left, right)
}
/**
 * `left <> right`.
 * @param left - left operand
 * @param right - right operand
 * @returns the comparison node
 */
export function ne(left: Expression, right: Expression): Comparison {
  return compare('<>', left, right)
}
/**
 * `left < right`.
 * @param left - left operand
 * @param right - right operand
 * @returns the comparison node
 */
export function lt(left: Expression, right: Expression): Comparison {
  return compare('<', left, right)
}
/**
 * `left <= right`.
 * @param left - left operand
 * @param right - right operand
 * @returns the comparison node
 */
export function le(left: Expression, right: Expression): Comparison {
  return compare('<=', left, right)
}
/**
 * `left > right`.
 * @param left - left operand
 * @param right - right operand
 * @returns the comparison node
 */
export function gt(left: Expression, right: Expression): Comparison {
  return compare('>', left, right)
}
/**
 * `left >= right`.
 * @param left - left operand
 * @param right - right operand
 * @returns the comparison node
 */
export function ge(left: Expression, right: Expression): Comparison {
  return compare('>=', left, right)
}
/**
 * `left <=> right`: equality where two NULLs are equal and the result is never NULL.
 * @param left - left operand
 * @param right - right operand
 * @returns the comparison node
 */
export function nullSafeEq(left: Expression, right: Expression): Comparison {
  return compare('<=>', left, right)
}

/**
 * `value IN (list)` or, negated, `value NOT IN (list)`.
 *
 * @param value - the tested expression
 * @param list - the candidates, at least one
 * @param negated - true for NOT IN
 * @returns the node
 * @throws {InvalidArgumentError} when the list is empty
 */
export function isIn(value: Expression, list: readonly Expression[], negated = false): In {
  if (list.length === 0) {
    throw new InvalidArgumentError('An IN list needs at least one element', { argument: 'list' })
  }
  return Object.freeze({ kind: 'in', value, list: Object.freeze([...list]), negated })
}

/**
 * `value BETWEEN low AND high` or, negated, `NOT BETWEEN`.
 *
 * @param value - the tested expression
 * @param low - lower bound (included)
 * @param high - upper bound (included)
 * @param negated - true for NOT BETWEEN
 * @returns the node
 */
export function between(value: Expression, low: Expression, high: Expression, negated = false): Between {
  return Object.freeze({ kind: 'between', value, low, high, negated })
}

/**
 * `operand IS NULL` or, negated, `IS NOT NULL`.
 *
 * @param operand - the tested expression
 * @param negated - true for IS NOT NULL
 * @returns the node
 */
export function isNull(operand: Expression, negated = false): IsNull {
  return Object.freeze({ kind: 'is-null', operand, negated })
}

/**
 * `operand IS NOT NULL`.
 *
 * @param operand - the tested expression
 * @returns the node
 */
export function isNotNull(operand: Expression): IsNull {
  return isNull(operand, true)
}

/**
 * `operand IS [NOT] TRUE|FALSE`.
 *
 * @param operand - a predicate
 * @param value - TRUE or FALSE
 * @param negated - true for IS NOT
 * @returns the node
 */
export function isBoolean(operand: Expression, value: boolean, negated = false): IsBoolean {
  return Object.freeze({ kind: 'is-boolean', operand, value, negated })
}

/**
 * `value [NOT] LIKE pattern [ESCAPE escape]`. `%` matches any run of characters, `_` exactly one.
 *
 * @param value - the tested expression
 * @param pattern - the pattern
 * @param options - `escape`: one character that makes the next one literal; `negated` for NOT LIKE
 * @returns the node
 * @throws {InvalidArgumentError} when the escape is not exactly one character
 */
export function like(
  value: Expression,
  pattern: Expression,
  options: { escape?: string | null; negated?: boolean } = {},
): Like {
  const escapeChar = options.escape ?? null
  if (escapeChar !== null && [...escapeChar].length !== 1) {
    throw new InvalidArgumentError(`A LIKE escape must be one character, got ${JSON.stringify(escapeChar)}`, {
      argument: 'escape',
    })
  }
  return Object.freeze({
    kind: 'like',
    value,
    pattern,
    escape: escapeChar,
    negated: options.negated ?? false,
  })
}

/**
 * Binary arithmetic.
 *
 * @param op - the operator
 * @param left - left operand
 * @param right - right operand
 * @returns the node
 */
export function arithmetic(op: ArithmeticOperator, left: Expression, right: Expression): Arithmetic {
  return Object.freeze({ kind: 'arithmetic', op, left, right })
}

/**
 * Unary minus.
 *
 * @param operand - the operand
 * @returns the node
 */
export function negate(operand: Expression): Negate {
  return Object.freeze({ kind: 'negate', operand })
}

/**
 * A function call.
 *
 * @param name - function name, case-insensitive
 * @param args - arguments
 * @returns the node
 * @throws {InvalidArgumentError} for an unknown function or a wrong argument count
 */
export function call(name: string, ...args: Expression[]): Call {
  return callOf(name, args)
}

/**
 * A function call with its arguments as an array, so that a long argument list is never spread
 * into a call.
 *
 * @param name - function name, case-insensitive
 * @param args - arguments
 * @returns the node
 * @throws {InvalidArgumentError} for an unknown function or a wrong argument count
 */
export function callOf(name: string, args: readonly Expression[]): Call {
  const fn = name.toLowerCase()
  if (!Object.hasOwn(FUNCTION_ARITY, fn)) {
    throw new InvalidArgumentError(
      `Unknown function ${name}; supported: ${Object.keys(FUNCTION_ARITY).join(', ')}`,
      { argument: 'name' },
    )
  }
  const [min, max] = FUNCTION_ARITY[fn as FunctionName]
  if (args.length < min || args.length > max) {
    throw new InvalidArgumentError(`${fn} takes ${min === max ? min : `at least ${min}`} argument(s)`, {
      argument: 'args',
    })
  }
  return Object.freeze({ kind: 'call', name: fn as FunctionName, args: Object.freeze([...args]) })
}

/**
 * `CAST(operand AS type)`.
 *
 * @param operand - the converted expression
 * @param type - a primitive type name (Delta spelling or SQL alias)
 * @returns the node, with the type in Delta spelling
 * @throws {InvalidArgumentError} for an unknown type
 */
export function cast(operand: Expression, type: string): Cast {
  const parsed = parseDataType(type)
  if (parsed === undefined) {
    throw new InvalidArgumentError(`Unknown type ${JSON.stringify(type)} in CAST`, { argument: 'type' })
  }
  return Object.freeze({ kind: 'cast', operand, type: formatDataType(parsed) })
}

// === Traversal ===

/**
 * The direct children of a node, in source order.
 *
 * @param expr - a node
 * @returns its operands
 */
export function childrenOf(expr: Expression): readonly Expression[] {
  switch (expr.kind) {
    case 'column':
    case 'literal':
      return []
    case 'comparison':
    case 'and':
    case 'or':
    case 'arithmetic':
      return [expr.left, expr.right]
    case 'not':
    case 'negate':
    case 'is-null':
    case 'is-boolean':
    case 'cast':
      return [expr.operand]
    case 'in':
      return [expr.value, ...expr.list]
    case 'between':
      return [expr.value, expr.low, expr.high]
    case 'like':
      return [expr.value, expr.pattern]
    case 'call':
      return expr.args
  }
}

/**
 * The distinct column paths an expression references, in order of first appearance.
 *
 * @param expr - an expression
 * @returns the paths (each a frozen array of name parts)
 */
export function columnsOf(expr: Expression): readonly (readonly string[])[] {
  const seen = new Set<string>()
  const out: (readonly string[])[] = []
  const visit = (e: Expression): void => {
    if (e.kind === 'column') {
      const key = JSON.stringify(e.path)
      if (!seen.has(key)) {
        seen.add(key)
        out.push(e.path)
      }
      return
    }
    for (const c of childrenOf(e)) visit(c)
  }
  visit(expr)
  return Object.freeze(out)
}

/**
 * The top-level conjuncts of a predicate: `a AND (b AND c)` gives `[a, b, c]`.
 *
 * @param expr - a predicate
 * @returns the conjuncts, at least one, in source order
 */
export function conjuncts(expr: Expression): readonly Expression[] {
  const out: Expression[] = []
  // An explicit stack (right pushed first) keeps source order without recursing per level.
  const stack: Expression[] = [expr]
  for (let e = stack.pop(); e !== undefined; e = stack.pop()) {
    if (e.kind === 'and') {
      stack.push(e.right, e.left)
    } else {
      out.push(e)
    }
  }
  return out
}

/**
 * The depth of a tree in nodes (a leaf is 1), computed without recursion so that it is safe on
 * any tree, however it was built.
 *
 * @param expr - an expression
 * @param limit - stop counting once the depth exceeds this
 * @returns the depth, or a number above `limit` as soon as one path is longer
 */
export function expressionDepth(expr: Expression, limit = Number.POSITIVE_INFINITY): number {
  let max = 0
  const stack: Array<[Expression, number]> = [[expr, 1]]
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const [e, depth] = top
    if (depth > max) {
      max = depth
      if (max > limit) return max
    }
    for (const c of childrenOf(e)) stack.push([c, depth + 1])
  }
  return max
}
