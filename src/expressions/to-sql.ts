/**
 * Rendering of a tree back to the predicate language, such that parsing the text gives a tree
 * deep-equal to the original. Parentheses are added exactly where precedence or the tree's
 * shape needs them.
 */

import type { Expression, Literal } from './ast.js'
import { CONTEXTUAL_WORDS, RESERVED_WORDS } from './parse-predicate.js'
import { formatDate, formatTimestamp } from './temporal.js'

/** Binding strength of each level; higher binds tighter. */
enum Level {
  Or = 1,
  And = 2,
  Not = 3,
  Predicate = 4,
  Additive = 5,
  Multiplicative = 6,
  Unary = 7,
  Primary = 8,
}

function levelOf(e: Expression): Level {
  switch (e.kind) {
    case 'or':
      return Level.Or
    case 'and':
      return Level.And
    case 'not':
      return Level.Not
    case 'comparison':
    case 'in':
    case 'between':
    case 'is-null':
    case 'is-boolean':
    case 'like':
      return Level.Predicate
    case 'arithmetic':
      return e.op === '+' || e.op === '-' ? Level.Additive : Level.Multiplicative
    case 'negate':
      return Level.Unary
    case 'literal':
      // A negative number reads as a unary minus applied to a literal.
      return isNegativeNumber(e) ? Level.Unary : Level.Primary
    default:
      return Level.Primary
  }
}

function isNegativeNumber(e: Literal): boolean {
  switch (e.type) {
    case 'byte':
    case 'short':
    case 'integer':
    case 'long':
      return e.value < 0n
    case 'float':
    case 'double':
      return e.value < 0 || Object.is(e.value, -0)
    case 'decimal':
      return e.value.startsWith('-')
    default:
      return false
  }
}

/**
 * Quotes an identifier with backticks when it is not a plain ASCII word or collides with a
 * keyword.
 *
 * @param name - one part of a column path
 * @returns the identifier as it must be written
 */
export function quoteIdentifier(name: string): string {
  const upper = name.toUpperCase()
  if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !RESERVED_WORDS.has(upper) && !CONTEXTUAL_WORDS.has(upper)) {
    return name
  }
  return '`' + name.replaceAll('`', '``') + '`'
}

/**
 * Quotes a string literal with single quotes, doubling embedded quotes.
 *
 * @param value - the text
 * @returns the literal as written in SQL
 */
export function quoteString(value: string): string {
  return "'" + value.replaceAll("'", "''") + "'"
}

function numberText(value: number): string {
  if (Object.is(value, -0)) return '-0.0'
  return String(value)
}

function literalSql(e: Literal): string {
  switch (e.type) {
    case 'null':
      return 'NULL'
    case 'boolean':
      return e.value ? 'TRUE' : 'FALSE'
    case 'byte':
      return `${e.value}Y`
    case 'short':
      return `${e.value}S`
    case 'integer':
      return `${e.value}`
    case 'long':
      return `${e.value}L`
    case 'float':
      return `${numberText(e.value)}F`
    case 'double': {
      const text = numberText(e.value)
      return /e/.test(text) ? text : `${text}D`
    }
    case 'decimal':
      return e.scale === 0 ? `${e.value}BD` : e.value
    case 'string':
      return quoteString(e.value)
    case 'binary':
      return `X'${e.value}'`
    case 'date':
      return `DATE '${formatDate(e.value)}'`
    case 'timestamp':
      return `TIMESTAMP '${formatTimestamp(e.value)}Z'`
    case 'timestamp_ntz':
      return `TIMESTAMP_NTZ '${formatTimestamp(e.value)}'`
  }
}

/**
 * Renders an expression in the predicate language.
 *
 * @param expr - the tree
 * @returns text that {@link parseExpression} (or {@link parsePredicate} for a predicate) turns
 *   back into a deep-equal tree
 */
export function toSql(expr: Expression): string {
  return render(expr)
}

/** Renders `e`, parenthesized unless it binds at least as tightly as `min`. */
function operand(e: Expression, min: Level): string {
  const text = render(e)
  return levelOf(e) >= min ? text : `(${text})`
}

function render(e: Expression): string {
  switch (e.kind) {
    case 'column':
      return e.path.map(quoteIdentifier).join('.')
    case 'literal':
      return literalSql(e)
    case 'or':
      return renderChain(e, 'or')
    case 'and':
      return renderChain(e, 'and')
    case 'not':
      return `NOT ${operand(e.operand, Level.Not)}`
    case 'comparison':
      return `${operand(e.left, Level.Additive)} ${e.op} ${operand(e.right, Level.Additive)}`
    case 'in':
      return `${operand(e.value, Level.Additive)} ${e.negated ? 'NOT IN' : 'IN'} (${e.list.map(render).join(', ')})`
    case 'between':
      return (
        `${operand(e.value, Level.Additive)} ${e.negated ? 'NOT BETWEEN' : 'BETWEEN'} ` +
        `${operand(e.low, Level.Additive)} AND ${operand(e.high, Level.Additive)}`
      )
    case 'is-null':
      return `${operand(e.operand, Level.Additive)} IS ${e.negated ? 'NOT ' : ''}NULL`
    case 'is-boolean':
      return `${operand(e.operand, Level.Additive)} IS ${e.negated ? 'NOT ' : ''}${e.value ? 'TRUE' : 'FALSE'}`
    case 'like': {
      const escapeSql = e.escape === null ? '' : ` ESCAPE ${quoteString(e.escape)}`
      const op = e.negated ? 'NOT LIKE' : 'LIKE'
      return `${operand(e.value, Level.Additive)} ${op} ${operand(e.pattern, Level.Additive)}${escapeSql}`
    }
    case 'arithmetic': {
      const level = levelOf(e)
      return `${operand(e.left, level)} ${e.op} ${operand(e.right, level + 1)}`
    }
    case 'negate': {
      // Parenthesize numbers (else the sign would fold into the literal) and nested signs.
      const inner = e.operand
      const wrap =
        inner.kind === 'negate' ||
        (inner.kind === 'literal' && levelOf(inner) !== Level.Primary) ||
        isNumber(inner)
      return wrap ? `-(${render(inner)})` : `-${operand(inner, Level.Unary)}`
    }
    case 'call':
      return `${e.name}(${e.args.map(render).join(', ')})`
    case 'cast':
      return `CAST(${render(e.operand)} AS ${e.type})`
  }
}

// === AND / OR chains ===
//
// The parser reads a chain `x1 OR ... OR xn` as a balanced tree (see `disjunction`). A tree
// renders as one flat chain of n items exactly when it has that shape over those items, so the
// renderer picks the longest such n and parenthesizes the items that are themselves chains of
// the same operator. Any tree then reads back deep-equal, and parsed chains print flat.

/**
 * The longest flat chain `e` can be written as. The possible lengths are always 1..w: a node
 * whose sides allow 1..p and 1..q allows 2q + 1 when p > q (left side one longer), else 2p.
 */
function chainWidth(e: Expression, kind: 'and' | 'or'): number {
  if (e.kind !== kind) return 1
  const p = chainWidth(e.left, kind)
  const q = chainWidth(e.right, kind)
  return p > q ? 2 * q + 1 : 2 * p
}

/** The items of `e` read as a balanced chain of `n` (n at most its chain width). */
function chainItems(e: Expression, kind: 'and' | 'or', n: number, out: Expression[]): void {
  if (n === 1 || e.kind !== kind) {
    out.push(e)
    return
  }
  chainItems(e.left, kind, Math.ceil(n / 2), out)
  chainItems(e.right, kind, Math.floor(n / 2), out)
}

function renderChain(e: Expression, kind: 'and' | 'or'): string {
  const items: Expression[] = []
  chainItems(e, kind, chainWidth(e, kind), items)
  const min = kind === 'or' ? Level.And : Level.Not
  const parts: string[] = []
  for (const item of items) parts.push(operand(item, min))
  return parts.join(kind === 'or' ? ' OR ' : ' AND ')
}

function isNumber(e: Expression): boolean {
  if (e.kind !== 'literal') return false
  switch (e.type) {
    case 'byte':
    case 'short':
    case 'integer':
    case 'long':
    case 'float':
    case 'double':
    case 'decimal':
      return true
    default:
      return false
  }
}
