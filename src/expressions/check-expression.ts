/**
 * Validation of expression trees handed in by callers as objects: every node must be one the
 * library builds (right kind, right fields, literal values in range), and the tree no deeper than
 * {@link MAX_EXPRESSION_DEPTH}. The walk uses an explicit stack, so it is safe on any input.
 */

import { InvalidArgumentError, InvalidPredicateError } from '../errors/index.js'
import { type Expression, FUNCTION_ARITY, type FunctionName, MAX_EXPRESSION_DEPTH } from './ast.js'
import { INTEGRAL_RANGES, parseDataType } from './data-types.js'

const COMPARISON_OPS = new Set(['=', '<>', '<', '<=', '>', '>=', '<=>'])
const ARITHMETIC_OPS = new Set(['+', '-', '*', '/', '%'])

function isObject(v: unknown): v is Readonly<Record<string, unknown>> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function describe(v: unknown): string {
  if (v === null) return 'null'
  if (v === undefined) return 'undefined'
  if (Array.isArray(v)) return 'an array'
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v)}`
  if (typeof v === 'object') return 'an object'
  return `${typeof v} ${String(v)}`
}

/** The problem with a literal node's value, if any. */
function literalProblem(n: Readonly<Record<string, unknown>>): string | undefined {
  const v = n.value
  switch (n.type) {
    case 'null':
      return v === null ? undefined : 'a null literal must have value null'
    case 'boolean':
      return typeof v === 'boolean' ? undefined : 'a boolean literal needs a boolean value'
    case 'byte':
    case 'short':
    case 'integer':
    case 'long': {
      if (typeof v !== 'bigint') return `a ${n.type} literal needs a bigint value`
      const [lo, hi] = INTEGRAL_RANGES[n.type]
      return v >= lo && v <= hi ? undefined : `${v} is outside the range of ${n.type}`
    }
    case 'float':
    case 'double':
      return typeof v === 'number' && Number.isFinite(v)
        ? undefined
        : `a ${n.type} literal needs a finite number`
    case 'decimal':
      return typeof v === 'string' && Number.isInteger(n.precision) && Number.isInteger(n.scale)
        ? undefined
        : 'a decimal literal needs its text, precision and scale'
    case 'string':
      if (typeof v !== 'string') return 'a string literal needs a string value'
      return /\p{Cs}/u.test(v) ? 'a string literal must not hold a lone UTF-16 surrogate' : undefined
    case 'binary':
      return typeof v === 'string' && /^(?:[0-9a-f]{2})*$/.test(v)
        ? undefined
        : 'a binary literal needs lowercase hex text'
    case 'date':
      return Number.isSafeInteger(v) ? undefined : 'a date literal needs days since the epoch'
    case 'timestamp':
    case 'timestamp_ntz':
      return typeof v === 'bigint' ? undefined : `a ${n.type} literal needs microseconds as a bigint`
    default:
      return `unknown literal type ${describe(n.type)}`
  }
}

/** The node's operands, or a description of what is wrong with it. */
function operandsOf(n: Readonly<Record<string, unknown>>): unknown[] | string {
  const bool = (k: string) => typeof n[k] === 'boolean'
  switch (n.kind) {
    case 'column':
      return Array.isArray(n.path) &&
        n.path.length > 0 &&
        n.path.every((p) => typeof p === 'string' && p.length > 0)
        ? []
        : 'a column needs a path of non-empty names'
    case 'literal':
      return literalProblem(n) ?? []
    case 'comparison':
      return COMPARISON_OPS.has(n.op as string) ? [n.left, n.right] : `unknown comparison ${describe(n.op)}`
    case 'arithmetic':
      return ARITHMETIC_OPS.has(n.op as string) ? [n.left, n.right] : `unknown operator ${describe(n.op)}`
    case 'and':
    case 'or':
      return [n.left, n.right]
    case 'not':
    case 'negate':
      return [n.operand]
    case 'is-null':
      return bool('negated') ? [n.operand] : 'IS NULL needs a boolean negated'
    case 'is-boolean':
      return bool('negated') && bool('value')
        ? [n.operand]
        : 'IS TRUE / FALSE needs boolean value and negated'
    case 'in':
      if (!Array.isArray(n.list) || n.list.length === 0 || !bool('negated')) {
        return 'IN needs a non-empty list and a boolean negated'
      }
      return [n.value, ...n.list]
    case 'between':
      return bool('negated') ? [n.value, n.low, n.high] : 'BETWEEN needs a boolean negated'
    case 'like':
      if (
        !bool('negated') ||
        !(n.escape === null || (typeof n.escape === 'string' && [...n.escape].length === 1))
      ) {
        return 'LIKE needs a boolean negated and an escape that is null or one character'
      }
      return [n.value, n.pattern]
    case 'call': {
      if (typeof n.name !== 'string' || !Object.hasOwn(FUNCTION_ARITY, n.name)) {
        return `unknown function ${describe(n.name)}`
      }
      const [min, max] = FUNCTION_ARITY[n.name as FunctionName]
      if (!Array.isArray(n.args) || n.args.length < min || n.args.length > max) {
        return `${n.name} takes ${min === max ? min : `at least ${min}`} argument(s)`
      }
      return [...n.args]
    }
    case 'cast':
      return typeof n.type === 'string' && parseDataType(n.type) !== undefined
        ? [n.operand]
        : `unknown CAST type ${describe(n.type)}`
    default:
      return `unknown node kind ${describe(n.kind)}`
  }
}

/**
 * Checks that a caller's value is an expression tree the library can evaluate.
 *
 * @param value - the value passed, e.g. a `where` option that is not text
 * @param argument - the argument's name, for the error
 * @returns the value, typed
 * @throws {InvalidArgumentError} naming the argument when the value is not an expression tree
 * @throws {InvalidPredicateError} when the tree is deeper than {@link MAX_EXPRESSION_DEPTH}
 */
export function checkExpression(value: unknown, argument: string): Expression {
  const stack: Array<[unknown, number, string]> = [[value, 1, '']]
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const [node, depth, at] = top
    const where = at === '' ? '' : ` at ${at}`
    if (!isObject(node)) {
      throw new InvalidArgumentError(
        `${argument} must be SQL text or an expression (as parsePredicate returns); got ${describe(node)}${where}`,
        {
          argument,
          hint: 'Pass the condition as text, e.g. "id = 5 AND name LIKE \'a%\'".',
        },
      )
    }
    if (depth > MAX_EXPRESSION_DEPTH) {
      throw new InvalidPredicateError(
        `The expression given as ${argument} is more than ${MAX_EXPRESSION_DEPTH} levels deep`,
        '',
        undefined,
        {
          hint: 'Pass it as SQL text: the parser reads long AND / OR chains into shallow trees.',
        },
      )
    }
    const operands = operandsOf(node)
    if (typeof operands === 'string') {
      throw new InvalidArgumentError(`${argument} is not a valid expression${where}: ${operands}`, {
        argument,
        hint: 'Build expressions with parsePredicate / parseExpression, or pass SQL text.',
      })
    }
    for (let i = operands.length - 1; i >= 0; i--) {
      stack.push([operands[i], depth + 1, `${at}${at === '' ? '' : '.'}${String(node.kind)}[${i}]`])
    }
  }
  return value as Expression
}
