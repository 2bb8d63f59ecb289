/**
 * The constraints a table puts on its rows, and their check in the data plane: CHECK constraints
 * (`delta.constraints.<name>` in the table configuration), column invariants (`delta.invariants`
 * in a field's metadata, the legacy form), NOT NULL columns (`nullable: false`) and generated
 * columns (`delta.generationExpression`: a written row's value must equal the expression's). A row
 * violates a CHECK constraint or an invariant when its expression is false or NULL for the row, as
 * Delta's check does (`NOT expr OR expr IS UNKNOWN`); a nested NOT NULL field is violated only
 * where its parent struct is not null.
 *
 * Writers check the rows they wrote, in their new files, before the commit; `ADD CONSTRAINT` and
 * `SET NOT NULL` check every live row of the table. Either way DuckDB evaluates the predicate over
 * the Parquet files and only one offending row crosses into JavaScript, for the error.
 */
import type { ColumnSpec, DataFileRef } from '../engine/data-plane.js'
import type { Engine } from '../engine/engine.js'
import { GeneratedColumnMismatchError } from '../errors/computed-column-errors.js'
import { CheckConstraintViolationError, NewConstraintViolationError } from '../errors/constraint-errors.js'
import { InternalError, InvalidArgumentError } from '../errors/index.js'
import { and, col, columnsOf, disjunction, type Expression, isBoolean, isNull } from '../expressions/ast.js'
import { columnsFromSchema } from '../expressions/columns.js'
import { parseWhere } from '../expressions/parse-where.js'
import { type Action, type AddFile, isAdd, isMetadata, isRemove, type Metadata } from '../protocol/actions.js'
import { GENERATION_EXPRESSION_KEY } from '../protocol/computed-columns.js'
import {
  type ColumnMappingMode,
  columnMappingId,
  isStructType,
  parseSchema,
  physicalName,
  type StructType,
} from '../protocol/schema.js'
import { columnMappingModeProperty, type TableConfiguration } from '../protocol/table-properties.js'
import { dataFileRefs } from '../scan/data-file-refs.js'
import { generatedColumnChecks } from './generated-columns.js'

/** The prefix of the table properties holding CHECK constraints. */
export const CONSTRAINT_PROPERTY_PREFIX = 'delta.constraints.'

/** The field metadata key of a column invariant. */
export const INVARIANTS_KEY = 'delta.invariants'

/** A CHECK constraint or column invariant: its name, text, and the predicate of its violators. */
export interface CheckConstraint {
  readonly kind: 'check'
  /** The constraint's name; an invariant's is `EXPRESSION(<text>)`. */
  readonly name: string
  readonly text: string
  /** True for the rows that break the constraint: `(expr) IS NOT TRUE`. */
  readonly violation: Expression
}

/** A column that may hold no null. */
export interface NotNullConstraint {
  readonly kind: 'not-null'
  /** The column path. */
  readonly path: readonly string[]
  /** True for the rows that break it: the column is null where its parent is not. */
  readonly violation: Expression
}

/** A generated column: every written row's value must equal its generation expression's. */
export interface GeneratedColumnConstraint {
  readonly kind: 'generated'
  /** The generated column. */
  readonly column: string
  /** Its generation expression. */
  readonly text: string
  /** True for the rows whose value differs: `(column <=> expr) IS NOT TRUE`. */
  readonly violation: Expression
}

/** Any constraint a write must keep. */
export type TableConstraint = CheckConstraint | NotNullConstraint | GeneratedColumnConstraint

/**
 * The property key of the CHECK constraint `name`: Delta keeps constraint names lower-cased.
 *
 * @param name - the constraint's name as the caller wrote it
 */
export function constraintPropertyKey(name: string): string {
  return `${CONSTRAINT_PROPERTY_PREFIX}${name.toLowerCase()}`
}

/**
 * The CHECK constraints of a table configuration, by lower-cased name.
 *
 * @param config - the table configuration
 * @returns name to expression text
 */
export function checkConstraintsOf(config: TableConfiguration): ReadonlyMap<string, string> {
  const out = new Map<string, string>()
  for (const [key, value] of Object.entries(config)) {
    if (key.startsWith(CONSTRAINT_PROPERTY_PREFIX))
      out.set(key.slice(CONSTRAINT_PROPERTY_PREFIX.length), value)
  }
  return out
}

/**
 * The predicate true for the rows a CHECK expression does not accept (false or NULL).
 *
 * @param text - the constraint's expression text
 * @param schema - the table schema its columns must be in
 * @param argument - the argument named by an error
 * @throws {InvalidPredicateError} when the text does not parse
 * @throws {InvalidArgumentError} when it names a column the table lacks
 */
export function violationOf(text: string, schema: StructType, argument: string): Expression {
  const expr = text.trim() === '' ? undefined : parseWhere(text, argument)
  if (expr === undefined) {
    throw new InvalidArgumentError('A constraint needs an expression', { argument })
  }
  const columns = columnsFromSchema(schema, { columnMapping: false })
  for (const path of columnsOf(expr)) {
    if (columns.resolve(path) === undefined) {
      throw new InvalidArgumentError(`Unknown column '${path.join('.')}' in constraint '${text}'`, {
        argument,
        hint: `The table has: ${schema.fields.map((f) => f.name).join(', ')}`,
      })
    }
  }
  return isBoolean(expr, true, true)
}

/**
 * Every constraint rows of a table must keep: its CHECK constraints, its column invariants and its
 * NOT NULL columns (nested struct fields included).
 *
 * @param metadata - the table metadata (after the commit's own metaData, when it has one)
 * @returns the constraints, CHECK constraints first
 * @throws {InvalidTableError | InvalidPredicateError | InvalidArgumentError} when a stored
 *   constraint does not parse or names a missing column
 */
export function tableConstraints(metadata: Metadata): TableConstraint[] {
  const schema = parseSchema(metadata.schemaString ?? '{"type":"struct","fields":[]}')
  const out: TableConstraint[] = []
  for (const [name, text] of checkConstraintsOf(metadata.configuration)) {
    out.push({ kind: 'check', name, text, violation: violationOf(text, schema, constraintPropertyKey(name)) })
  }
  const visit = (type: StructType, parent: readonly string[]): void => {
    for (const f of type.fields) {
      const path = [...parent, f.name]
      const invariant = invariantText(f.metadata[INVARIANTS_KEY])
      if (invariant !== undefined) {
        out.push({
          kind: 'check',
          name: `EXPRESSION(${invariant})`,
          text: invariant,
          violation: violationOf(invariant, schema, INVARIANTS_KEY),
        })
      }
      if (!f.nullable) {
        const here = isNull(col(path))
        out.push({
          kind: 'not-null',
          path,
          violation: parent.length === 0 ? here : and(isNull(col(parent), true), here),
        })
      }
      // Arrays and maps: Delta checks no field inside them either.
      if (isStructType(f.type)) visit(f.type, path)
    }
  }
  visit(schema, [])
  return out
}

/**
 * The expression text of a `delta.invariants` value (`{"expression":{"expression":"a > 0"}}`,
 * as JSON text or as an object).
 */
function invariantText(raw: unknown): string | undefined {
  if (raw === undefined || raw === null) return undefined
  let value: unknown = raw
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw)
    } catch {
      return raw
    }
  }
  const inner = (value as { expression?: { expression?: unknown } } | null)?.expression?.expression
  return typeof inner === 'string' ? inner : undefined
}

/** Where the rows to check are, and how the table lays its columns out. */
export interface ConstraintCheckTarget {
  readonly engine: Engine
  /** The table metadata the rows must fit (the commit's own, when it changes it). */
  readonly metadata: Metadata
  readonly signal?: AbortSignal | undefined
}

/**
 * Checks the rows of `files` against every constraint of the table.
 *
 * @param target - engine, metadata, signal
 * @param files - the files whose live rows are checked
 * @param mode - `'write'`: the rows a write adds (their errors name the broken constraint);
 *   `'new'`: the table's rows, against a constraint being added (`only` of them is checked)
 * @param only - the constraints to check, when not all
 * @throws {CheckConstraintViolationError} naming the constraint and one row
 * @throws {NewConstraintViolationError} in `'new'` mode
 */
export async function checkRowsAgainst(
  target: ConstraintCheckTarget,
  files: readonly AddFile[],
  constraints: readonly TableConstraint[],
  mode: 'write' | 'new' = 'write',
): Promise<void> {
  if (files.length === 0 || constraints.length === 0) return
  const specs = columnSpecsOf(target.metadata)
  const refs: DataFileRef[] = await dataFileRefs(target.engine, files, target.signal)
  const first = async (predicate: Expression): Promise<Record<string, unknown> | undefined> => {
    const stream = target.engine.data.scan({
      files: refs,
      columns: specs,
      predicateColumns: specs,
      predicate,
      batchSize: 1,
      signal: target.signal,
    })
    for await (const batch of stream) if (batch[0] !== undefined) return batch[0]
    return undefined
  }
  const checks = constraints.filter((c): c is CheckConstraint => c.kind === 'check')
  for (const c of checks) {
    const row = await first(c.violation)
    if (row === undefined) continue
    if (mode === 'new') throw new NewConstraintViolationError('check', c.name, c.text, row)
    throw new CheckConstraintViolationError(c.name, c.text, row)
  }
  for (const c of constraints) {
    if (c.kind !== 'generated') continue
    const row = await first(c.violation)
    if (row !== undefined) throw new GeneratedColumnMismatchError(c.column, c.text, row)
  }
  const notNull = constraints.filter((c): c is NotNullConstraint => c.kind === 'not-null')
  if (notNull.length === 0) return
  // One query for all NOT NULL columns; the row read back tells which one it broke.
  const row = await first(disjunction(notNull.map((c) => c.violation)))
  if (row === undefined) return
  const broken = notNull.find((c) => valueAt(row, c.path) === null) ?? (notNull[0] as NotNullConstraint)
  const column = broken.path.join('.')
  if (mode === 'write') throw new InternalError(`a written row holds null in the NOT NULL column ${column}`)
  throw new NewConstraintViolationError('not-null', column, '', row)
}

/**
 * Checks the rows a staged operation writes: the live rows of its new files (an `add` whose path
 * it does not also remove; a re-added file with a new deletion vector holds no new row), against
 * the table's constraints after the commit (its own metaData, when it has one). Operations that
 * change no data (OPTIMIZE, a backfill) are not checked: they only move rows already checked.
 *
 * @param engine - the table's engine
 * @param metadata - the read snapshot's metadata
 * @param actions - the staged operation's actions
 * @param signal - stops the check
 * @throws {CheckConstraintViolationError} naming the constraint and one row
 */
export async function checkWrittenRows(
  engine: Engine,
  metadata: Metadata,
  actions: readonly Action[],
  signal?: AbortSignal,
): Promise<void> {
  let after = metadata
  const removed = new Set<string>()
  for (const a of actions) {
    if (isMetadata(a)) after = a.metaData
    else if (isRemove(a)) removed.add(a.remove.path)
  }
  // Most tables have neither: no schema is parsed for them.
  const mayHaveChecks =
    Object.keys(after.configuration).some((k) => k.startsWith(CONSTRAINT_PROPERTY_PREFIX)) ||
    (after.schemaString ?? '').includes(INVARIANTS_KEY) ||
    (after.schemaString ?? '').includes(GENERATION_EXPRESSION_KEY)
  if (!mayHaveChecks) return
  const files: AddFile[] = []
  for (const a of actions) if (isAdd(a) && a.add.dataChange && !removed.has(a.add.path)) files.push(a.add)
  if (files.length === 0) return
  // NOT NULL columns are checked by every writer as it reads its input (a null is refused with the
  // row and column named), so only CHECK constraints, invariants and generated columns are
  // evaluated here.
  const constraints: TableConstraint[] = tableConstraints(after).filter((c) => c.kind === 'check')
  for (const g of generatedColumnChecks(parseSchema(after.schemaString ?? '{"type":"struct","fields":[]}'))) {
    constraints.push({ kind: 'generated', column: g.column, text: g.text, violation: g.violation })
  }
  await checkRowsAgainst({ engine, metadata: after, signal }, files, constraints)
}

/** The data-plane column specs of every column of a table's metadata. */
export function columnSpecsOf(metadata: Metadata): ColumnSpec[] {
  const schema = parseSchema(metadata.schemaString ?? '{"type":"struct","fields":[]}')
  const mode: ColumnMappingMode = columnMappingModeProperty(metadata.configuration)
  const partition = new Set(metadata.partitionColumns.map((c) => c.toLowerCase()))
  return schema.fields.map((f) =>
    Object.freeze({
      name: f.name,
      type: f.type,
      physicalName: physicalName(f, mode),
      // Files are resolved by field id in mode `id` only; name mode goes by physical name.
      fieldId: mode === 'id' ? columnMappingId(f) : undefined,
      isPartition: partition.has(f.name.toLowerCase()),
    }),
  )
}

function valueAt(row: Readonly<Record<string, unknown>>, path: readonly string[]): unknown {
  let v: unknown = row
  for (const p of path) {
    if (v === null || typeof v !== 'object') return undefined
    v = (v as Record<string, unknown>)[p]
  }
  return v === undefined ? null : v
}
