/**
 * Rendering of an expression to DuckDB SQL with the same meaning as `evaluateRow`.
 *
 * Every compound node is parenthesized, so DuckDB's own precedence never matters. Literals are
 * typed explicitly: integers as `CAST(n AS BIGINT)` (and the narrower types), floating point and
 * decimals from their exact text (`CAST('1.50' AS DECIMAL(3,2))`), `DATE '...'`, Delta
 * `timestamp` as `TIMESTAMPTZ '... +00'` (Delta timestamps are instants, which DuckDB reads from
 * Parquet as TIMESTAMP WITH TIME ZONE), `timestamp_ntz` as `TIMESTAMP '...'`, binary as
 * `from_hex('..')`. Strings are single-quoted with quotes doubled; DuckDB gives backslashes no
 * meaning there. `<=>` becomes `IS NOT DISTINCT FROM`. The session time zone is assumed to be
 * UTC, as the data plane sets it.
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
  for (const field of path.slice(1)) sql = `struct_extract(${sql}, ${quoteString(field)})`
  return sql
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
      return quoteString(e.value)
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
      return `(${r(expr.left)} AND ${r(expr.right)})`
    case 'or':
      return `(${r(expr.left)} OR ${r(expr.right)})`
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
      const escapeSql = expr.escape === null ? '' : ` ESCAPE ${quoteString(expr.escape)}`
      return `(${r(expr.value)} ${expr.negated ? 'NOT LIKE' : 'LIKE'} ${r(expr.pattern)}${escapeSql})`
    }
    case 'arithmetic':
      return `(${r(expr.left)} ${expr.op} ${r(expr.right)})`
    case 'negate':
      return `(-${r(expr.operand)})`
    case 'call':
      return `${expr.name}(${expr.args.map(r).join(', ')})`
    case 'cast':
      return `CAST(${r(expr.operand)} AS ${duckDbType(expr.type)})`
  }
}
