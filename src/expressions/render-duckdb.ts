/**
 * Rendering of an expression to DuckDB SQL with the same meaning as `evaluateRow`.
 *
 * Every compound node is parenthesized, so DuckDB's own precedence never matters. Literals are
 * typed explicitly: integers as `CAST(n AS BIGINT)` (and the narrower types), floating point and
 * decimals from their exact text (`CAST('1.50' AS DECIMAL(3,2))`), `DATE '...'`, Delta
 * `timestamp` as `TIMESTAMPTZ '... +00'` (Delta timestamps are instants, which DuckDB reads from
 * Parquet as TIMESTAMP WITH TIME ZONE), `timestamp_ntz` as `TIMESTAMP '...'`, binary as
 * `from_hex('..')`. Strings are single-quoted with quotes doubled; DuckDB gives backslashes no
 * meaning there, and a NUL character, which would end DuckDB's quoted string, is `chr(0)`
 * concatenated to the pieces around it (see {@link duckDbString}). `<=>` becomes
 * `IS NOT DISTINCT FROM`. The session time zone is assumed to be UTC, as the data plane sets it.
 */

import { InvalidArgumentError } from '../errors/index.js'
import type { Expression, Literal } from './ast.js'
import { parseDataType } from './data-types.js'
import { formatDate, formatTimestamp } from './temporal.js'
import { quoteString } from './to-sql.js'

/** Options of {@link renderDuckDbSql}. */
export interface DuckDbRenderOptions {
  /**
   * The SQL text for a column path, e.g. a quoted physical name under column mapping. See
   * {@link duckDbColumn} for the plain mapping.
   */
  readonly column: (path: readonly string[]) => string
}

/**
 * Quotes an identifier for DuckDB (double quotes, doubled inside).
 *
 * @param name - the identifier
 * @returns the quoted identifier
 */
export function quoteDuckDbIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`
}

/**
 * The plain column mapping: a top-level column as a quoted identifier, a nested field through
 * `struct_extract`, which cannot be mistaken for a table-qualified name.
 *
 * @param path - the column path
 * @returns DuckDB SQL for the column
 */
export function duckDbColumn(path: readonly string[]): string {
  let sql = quoteDuckDbIdentifier(path[0] as string)
  for (const field of path.slice(1)) sql = `struct_extract(${sql}, ${duckDbString(field)})`
  return sql
}

/**
 * A string literal for DuckDB with exactly the given characters. DuckDB's parser ends a quoted
 * string at a NUL character, so each NUL is written as `chr(0)` concatenated to the quoted
 * pieces around it (a constant DuckDB folds); any other string is one quoted literal with its
 * quotes doubled.
 *
 * @param value - the text
 * @returns SQL for a VARCHAR constant holding `value`
 */
export function duckDbString(value: string): string {
  if (!value.includes('\u0000')) return quoteString(value)
  return `(${value.split('\u0000').map(quoteString).join(' || chr(0) || ')})`
}

const DUCKDB_TYPES: Readonly<Record<string, string>> = Object.freeze({
  boolean: 'BOOLEAN',
  byte: 'TINYINT',
  short: 'SMALLINT',
  integer: 'INTEGER',
  long: 'BIGINT',
  float: 'FLOAT',
  double: 'DOUBLE',
  string: 'VARCHAR',
  binary: 'BLOB',
  date: 'DATE',
  timestamp: 'TIMESTAMPTZ',
  timestamp_ntz: 'TIMESTAMP',
})

/**
 * The DuckDB type for a Delta type name.
 *
 * @param typeName - a Delta primitive type name, e.g. `long` or `decimal(10,2)`
 * @returns the DuckDB type, e.g. `BIGINT` or `DECIMAL(10,2)`
 * @throws {InvalidArgumentError} for an unknown type name
 */
export function duckDbType(typeName: string): string {
  const t = parseDataType(typeName)
  if (t === undefined) throw new InvalidArgumentError(`Unknown type ${typeName}`, { argument: 'typeName' })
  return t.name === 'decimal' ? `DECIMAL(${t.precision},${t.scale})` : (DUCKDB_TYPES[t.name] as string)
}

function numberText(value: number): string {
  return Object.is(value, -0) ? '-0.0' : String(value)
}

function literalSql(e: Literal): string {
  switch (e.type) {
    case 'null':
      return 'NULL'
    case 'boolean':
      return e.value ? 'TRUE' : 'FALSE'
    case 'byte':
    case 'short':
    case 'integer':
    case 'long':
      return `CAST(${e.value} AS ${DUCKDB_TYPES[e.type]})`
    case 'float':
    case 'double':
      return `CAST('${numberText(e.value)}' AS ${DUCKDB_TYPES[e.type]})`
    case 'decimal':
      return `CAST('${e.value}' AS DECIMAL(${e.precision},${e.scale}))`
    case 'string':
      return duckDbString(e.value)
    case 'binary':
      return `from_hex('${e.value}')`
    case 'date':
      return `DATE '${formatDate(e.value)}'`
    case 'timestamp':
      return `TIMESTAMPTZ '${formatTimestamp(e.value)}+00'`
    case 'timestamp_ntz':
      return `TIMESTAMP '${formatTimestamp(e.value)}'`
  }
}

/**
 * Renders an expression as DuckDB SQL.
 *
 * @param expr - the expression
 * @param opts - how to write column references
 * @returns a SQL expression with the same three-valued result as {@link evaluateRow}
 */
export function renderDuckDbSql(expr: Expression, opts: DuckDbRenderOptions): string {
  const r = (e: Expression): string => renderDuckDbSql(e, opts)
  switch (expr.kind) {
    case 'column':
      return opts.column(expr.path)
    case 'literal':
      return literalSql(expr)
    case 'comparison':
      return expr.op === '<=>'
        ? `(${r(expr.left)} IS NOT DISTINCT FROM ${r(expr.right)})`
        : `(${r(expr.left)} ${expr.op} ${r(expr.right)})`
    case 'and':
    case 'or':
      return renderChain(expr.kind, expr, r)
    case 'not':
      return `(NOT ${r(expr.operand)})`
    case 'in':
      return `(${r(expr.value)} ${expr.negated ? 'NOT IN' : 'IN'} (${expr.list.map(r).join(', ')}))`
    case 'between':
      return `(${r(expr.value)} ${expr.negated ? 'NOT BETWEEN' : 'BETWEEN'} ${r(expr.low)} AND ${r(expr.high)})`
    case 'is-null':
      return `(${r(expr.operand)} IS ${expr.negated ? 'NOT ' : ''}NULL)`
    case 'is-boolean':
      return `(${r(expr.operand)} IS ${expr.negated ? 'NOT ' : ''}${expr.value ? 'TRUE' : 'FALSE'})`
    case 'like': {
      const escapeSql = expr.escape === null ? '' : ` ESCAPE ${duckDbString(expr.escape)}`
      return `(${r(expr.value)} ${expr.negated ? 'NOT LIKE' : 'LIKE'} ${r(expr.pattern)}${escapeSql})`
    }
    case 'arithmetic':
      return `(${r(expr.left)} ${expr.op} ${r(expr.right)})`
    case 'negate':
      return `(-${r(expr.operand)})`
    case 'call':
      // DuckDB's date parts are BIGINT; Spark's are INT. Timestamps are read in the session's
      // zone, which the engine's connections set to UTC.
      if (expr.name === 'year' || expr.name === 'month' || expr.name === 'day' || expr.name === 'hour')
        return `CAST(${expr.name}(${expr.args.map(r).join(', ')}) AS INTEGER)`
      return `${expr.name}(${expr.args.map(r).join(', ')})`
    case 'cast':
      return `CAST(${r(expr.operand)} AS ${duckDbType(expr.type)})`
  }
}

// === AND / OR chains ===

/**
 * Renders a whole AND (or OR) chain at once. DuckDB binds and optimizes a long OR chain in time
 * that grows with the square of its length (20 s at 16,000 terms), and an IN list in linear
 * time, so the terms that compare one expression with a literal of one type are folded into a
 * list: `x = a OR x = b` as `x IN (a, b)`, and `x <> a AND x <> b` as `x NOT IN (a, b)`. SQL
 * defines IN as exactly that chain, NULLs included, and one literal type per list keeps the
 * comparison types unchanged. What remains is joined as a balanced tree, so the SQL stays
 * shallow however long the chain.
 */
function renderChain(kind: 'and' | 'or', expr: Expression, r: (e: Expression) => string): string {
  const op = kind === 'or' ? '=' : '<>'
  const terms: Expression[] = []
  const stack: Expression[] = [expr]
  for (let e = stack.pop(); e !== undefined; e = stack.pop()) {
    if (e.kind === kind) stack.push(e.right, e.left)
    else terms.push(e)
  }
  // Ordered by first appearance, so that the SQL does not depend on hashing.
  const groups = new Map<string, { readonly value: string; readonly items: string[] }>()
  const parts: Array<string | { readonly value: string; readonly items: string[] }> = []
  for (const t of terms) {
    const side = t.kind === 'comparison' && t.op === op ? literalSide(t.left, t.right) : undefined
    if (side === undefined) {
      parts.push(r(t))
      continue
    }
    const value = r(side.other)
    const key = `${side.literal.type}\u0000${value}`
    let group = groups.get(key)
    if (group === undefined) {
      group = { value, items: [] }
      groups.set(key, group)
      parts.push(group)
    }
    group.items.push(literalSql(side.literal))
  }
  const sqls = parts.map((p) => {
    if (typeof p === 'string') return p
    if (p.items.length === 1) return `(${p.value} ${op} ${p.items[0]})`
    return `(${p.value} ${kind === 'or' ? 'IN' : 'NOT IN'} (${p.items.join(', ')}))`
  })
  return joinBalanced(sqls, kind === 'or' ? ' OR ' : ' AND ', 0, sqls.length)
}

/** The literal operand of a comparison and the other one, when exactly one side is a literal. */
function literalSide(
  left: Expression,
  right: Expression,
): { readonly literal: Literal; readonly other: Expression } | undefined {
  if (left.kind === 'literal' && right.kind !== 'literal') return { literal: left, other: right }
  if (right.kind === 'literal' && left.kind !== 'literal') return { literal: right, other: left }
  return undefined
}

function joinBalanced(sqls: readonly string[], op: string, lo: number, hi: number): string {
  if (hi - lo === 1) return sqls[lo] as string
  const mid = lo + Math.ceil((hi - lo) / 2)
  return `(${joinBalanced(sqls, op, lo, mid)}${op}${joinBalanced(sqls, op, mid, hi)})`
}
