/**
 * Generated columns on write (PROTOCOL.md "Generated Columns"): a column whose field metadata
 * holds `delta.generationExpression` gets its value computed from the other columns of its row,
 * and every row written must satisfy `(column <=> expression) IS TRUE`.
 *
 * How each write computes it:
 * - rows given as JavaScript objects (append, overwrite, input files, Arrow): a row that leaves the
 *   column out gets the expression's value, evaluated in JavaScript ({@link fillGeneratedValues});
 * - UPDATE and MERGE: the expression joins the assignments, with each column it reads replaced by
 *   that column's new value, so the data plane computes it with the rest of the row
 *   ({@link withGeneratedAssignments});
 * - every write then checks its new files in the data plane: a row whose value differs from the
 *   expression (a value the caller gave, or any disagreement between the two evaluations) fails
 *   the write with `DELTA_GENERATED_COLUMNS_VALUE_MISMATCH` naming the column and the row
 *   ({@link generatedColumnChecks}, run by `constraints.ts`).
 *
 * The expression must be in delta-rlc's expression language (comparisons, arithmetic, CAST,
 * `lower`, `upper`, `length`, `abs`, `coalesce`, `year`, `month`, `day`, `hour`) and read only columns of the table that are
 * neither generated nor identity columns; a table whose expression is outside it can be read, and
 * writes that add rows to it are refused with a hint.
 */
import { InvalidArgumentError, InvalidPredicateError, UnsupportedError } from '../errors/index.js'
import { col, type Expression, isBoolean, lit, nullSafeEq } from '../expressions/ast.js'
import { type ColumnResolver, columnsFromSchema } from '../expressions/columns.js'
import type { DataType as ExprType } from '../expressions/data-types.js'
import { formatDecimal } from '../expressions/decimal.js'
import { evaluateValue } from '../expressions/evaluate-rows.js'
import { parseExpression } from '../expressions/parse-predicate.js'
import { formatDate, formatTimestamp } from '../expressions/temporal.js'
import { castValue, type Value } from '../expressions/values.js'
import { generatedColumnsOf, isComputedField } from '../protocol/computed-columns.js'
import { fieldByName, type StructType } from '../protocol/schema.js'
import { mapColumns } from './merge-clauses.js'

/** A generated column, its expression parsed against the table's schema. */
export interface GeneratedColumn {
  /** The column name, as the schema spells it. */
  readonly name: string
  /** The expression as the schema stores it. */
  readonly text: string
  /** The expression, its column references spelled as the schema spells them. */
  readonly expression: Expression
  /** The columns it reads, as the schema spells them. */
  readonly reads: readonly string[]
  /** The column's type (undefined for a nested type). */
  readonly type: ExprType | undefined
}

/**
 * The generated columns of a schema, with their expressions parsed and checked.
 *
 * @param schema - the table schema
 * @param unsupported - `'refuse'` (default) throws for an expression delta-rlc cannot evaluate;
 *   `'skip'` leaves such a column out
 * @returns the generated columns, in schema order (empty for most tables)
 * @throws {UnsupportedError} when an expression is outside delta-rlc's expression language
 * @throws {InvalidArgumentError} when an expression reads a column the table lacks, or a
 *   generated or identity column
 */
export function generatedColumns(
  schema: StructType,
  unsupported: 'refuse' | 'skip' = 'refuse',
): GeneratedColumn[] {
  const texts = generatedColumnsOf(schema)
  if (texts.length === 0) return []
  const resolver = columnsFromSchema(schema, { columnMapping: false })
  const out: GeneratedColumn[] = []
  for (const { name, expression: text } of texts) {
    let parsed: Expression
    try {
      parsed = parseExpression(text)
    } catch (err) {
      if (!(err instanceof InvalidPredicateError || err instanceof InvalidArgumentError)) throw err
      if (unsupported === 'skip') continue
      throw new UnsupportedError(
        `Generated column '${name}' has the expression '${text}', which delta-rlc cannot evaluate (${err.message}); the table can be read but rows cannot be written to it`,
        {
          hint: 'Write with an engine that evaluates the expression (Spark), or recreate the column with an expression in the predicate language (comparisons, arithmetic, CAST, lower, upper, length, abs, coalesce, year, month, day, hour).',
          cause: err,
        },
      )
    }
    const reads: string[] = []
    const expression = mapColumns(parsed, (path) => {
      const field = fieldByName(schema, path[0] as string)
      if (field === undefined || resolver.resolve(path) === undefined) {
        throw new InvalidArgumentError(
          `Generated column '${name}' reads column '${path.join('.')}', which the table does not have`,
          { argument: 'schema', hint: `The table has: ${schema.fields.map((f) => f.name).join(', ')}` },
        )
      }
      if (isComputedField(field)) {
        throw new InvalidArgumentError(
          `Generated column '${name}' reads '${field.name}', a generated or identity column; a generation expression may read only ordinary columns`,
          { argument: 'schema' },
        )
      }
      if (!reads.includes(field.name)) reads.push(field.name)
      return col([field.name, ...path.slice(1)])
    })
    out.push(
      Object.freeze({
        name,
        text,
        expression,
        reads: Object.freeze(reads),
        type: resolver.resolve([name])?.type,
      }),
    )
  }
  return out
}

/**
 * Rows with the generated columns they leave out (absent or `undefined`) filled in. A value the
 * row gives is kept as it is: the check of the written files compares it with the expression.
 *
 * @param columns - the table's generated columns
 * @param schema - the table schema (the types row values are read as)
 * @param rows - the rows to write
 * @returns the rows, each one copied only when a value was added
 * @throws {UnsupportedError} when the JavaScript evaluator cannot compute a value (the caller
 *   can give it instead)
 * @throws {InvalidArgumentError} when a row's value cannot be read as its column's type
 */
export function fillGeneratedValues(
  columns: readonly GeneratedColumn[],
  schema: StructType,
  rows: readonly Readonly<Record<string, unknown>>[],
): readonly Readonly<Record<string, unknown>>[] {
  if (columns.length === 0) return rows
  const resolver = columnsFromSchema(schema, { columnMapping: false })
  return rows.map((row, i) => {
    let out: Record<string, unknown> | undefined
    for (const c of columns) {
      if (rowValue(row, c.name) !== undefined) continue
      out ??= { ...row }
      out[keyOf(row, c.name) ?? c.name] = computedValue(c, row, resolver, i)
    }
    return out ?? row
  })
}

/**
 * The assignments of an UPDATE or a MERGE update with each generated column whose inputs they
 * change added: its expression with every column it reads replaced by that column's new value
 * (the assigned expression, or the column as it is). A generated column the caller assigns keeps
 * the caller's expression (the check of the written files compares the two).
 *
 * @param columns - the table's generated columns
 * @param set - new values by column name, as the schema spells it
 * @param current - the expression of a column's current value (`target.c` in a MERGE)
 * @returns the assignments (`set` itself when nothing is added)
 */
export function withGeneratedAssignments(
  columns: readonly GeneratedColumn[],
  set: Readonly<Record<string, Expression>>,
  current: (name: string) => Expression,
): Readonly<Record<string, Expression>> {
  let out: Record<string, Expression> | undefined
  for (const c of columns) {
    if (Object.hasOwn(set, c.name) || !c.reads.some((r) => Object.hasOwn(set, r))) continue
    out ??= { ...set }
    out[c.name] = substitute(c.expression, (name) => set[name] ?? current(name))
  }
  return out === undefined ? set : Object.freeze(out)
}

/**
 * The values of a MERGE insert with each generated column it does not assign added: its
 * expression over the inserted values (a column the insert does not assign is NULL).
 *
 * @param columns - the table's generated columns
 * @param values - inserted values by column name, as the schema spells it
 * @returns the values (`values` itself when nothing is added)
 */
export function withGeneratedInsertValues(
  columns: readonly GeneratedColumn[],
  values: Readonly<Record<string, Expression>>,
): Readonly<Record<string, Expression>> {
  let out: Record<string, Expression> | undefined
  for (const c of columns) {
    if (Object.hasOwn(values, c.name)) continue
    out ??= { ...values }
    out[c.name] = substitute(c.expression, (name) => values[name] ?? lit(null))
  }
  return out === undefined ? values : Object.freeze(out)
}

/** A generated column's check on written rows. */
export interface GeneratedColumnCheck {
  readonly column: string
  readonly text: string
  /** True for the rows whose value differs from the expression: `(column <=> expr) IS NOT TRUE`. */
  readonly violation: Expression
}

/**
 * The checks written rows must pass: one per generated column whose expression delta-rlc can
 * evaluate. The others are left out: every write that computes their values (append, overwrite,
 * UPDATE, MERGE) refuses such a table before writing, so the rows written there are copies of
 * rows already in the table (a copy-on-write DELETE).
 *
 * @param schema - the table schema
 * @returns the checks (empty for a table without generated columns)
 * @throws {InvalidArgumentError} as {@link generatedColumns}
 */
export function generatedColumnChecks(schema: StructType): GeneratedColumnCheck[] {
  return generatedColumns(schema, 'skip').map((c) =>
    Object.freeze({
      column: c.name,
      text: c.text,
      violation: isBoolean(nullSafeEq(col([c.name]), c.expression), true, true),
    }),
  )
}

// === Internals ===

function substitute(expr: Expression, replacement: (name: string) => Expression): Expression {
  return mapColumns(expr, (path) => {
    const top = replacement(path[0] as string)
    // A nested path reads a field of a struct column: only the whole column can be replaced.
    return path.length === 1 ? top : top.kind === 'column' ? col([...top.path, ...path.slice(1)]) : lit(null)
  })
}

function keyOf(row: Readonly<Record<string, unknown>>, name: string): string | undefined {
  if (Object.hasOwn(row, name)) return name
  const lower = name.toLowerCase()
  return Object.keys(row).find((k) => k.toLowerCase() === lower)
}

function rowValue(row: Readonly<Record<string, unknown>>, name: string): unknown {
  const key = keyOf(row, name)
  return key === undefined ? undefined : row[key]
}

function computedValue(
  c: GeneratedColumn,
  row: Readonly<Record<string, unknown>>,
  resolver: ColumnResolver,
  index: number,
): unknown {
  // A column the row leaves out is NULL, as it will be written.
  let input = row
  for (const r of c.reads) {
    if (keyOf(row, r) !== undefined) continue
    if (input === row) input = { ...row }
    ;(input as Record<string, unknown>)[r] = null
  }
  let v: Value | null
  try {
    v = evaluateValue(c.expression, input, { columns: resolver })
    if (v !== null && c.type !== undefined) v = castValue(v, c.type)
  } catch (err) {
    if (!(err instanceof UnsupportedError || err instanceof InvalidPredicateError)) throw err
    throw new UnsupportedError(
      `Cannot compute generated column '${c.name}' (${c.text}) for row ${index}: ${err.message}`,
      {
        hint: `Give '${c.name}' its value in the row; the write checks it against the expression.`,
        cause: err,
      },
    )
  }
  return v === null ? null : rowValueOf(v)
}

/** A runtime value in the form rows are written in (the data plane's row representation). */
function rowValueOf(v: Value): unknown {
  switch (v.t) {
    case 'int':
      return v.v
    case 'dec':
      return formatDecimal(v.v)
    case 'date':
      return formatDate(v.v)
    case 'ts':
    case 'ntz': {
      const [day, time = '00:00:00'] = formatTimestamp(v.v).split(' ')
      const [hms, fraction = ''] = time.split('.')
      return `${day}T${hms}.${fraction.padEnd(6, '0')}${v.t === 'ts' ? 'Z' : ''}`
    }
    default:
      return v.v
  }
}
