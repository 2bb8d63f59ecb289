import type { MergeInsertClause, MergeSourceColumn, MergeTargetClause } from '../engine/merge-plan.js'
import { InvalidArgumentError, UnsupportedError } from '../errors/index.js'
import { col, columnsOf, conjunction, conjuncts, type Expression } from '../expressions/ast.js'
import { parsePredicate } from '../expressions/parse-predicate.js'
import { isComputedField, isIdentityField } from '../protocol/computed-columns.js'
import {
  type DataType,
  isPrimitiveType,
  type PrimitiveType,
  parseDdlSchema,
  type StructField,
  type StructType,
  toStructType,
} from '../protocol/schema.js'
import type { Snapshot } from '../snapshot/snapshot.js'
import { isNullLiteral, toExpression } from './dml-support.js'

/** Column assignments of an UPDATE or INSERT clause: column name to SQL expression. */
export type MergeAssignments = Readonly<Record<string, string | Expression>>

/** `WHEN MATCHED [AND if] THEN UPDATE SET ...` (`'*'`: every column from the same-named source column). */
export interface MergeUpdateAction {
  readonly if?: string | Expression | undefined
  readonly update: MergeAssignments | '*'
}

/** `WHEN [NOT MATCHED BY SOURCE] MATCHED [AND if] THEN DELETE`. */
export interface MergeDeleteAction {
  readonly if?: string | Expression | undefined
  readonly delete: true
}

/** A clause for matched target rows, or for target rows no source row matches. */
export type MergeMatchedAction = MergeUpdateAction | MergeDeleteAction

/** `WHEN NOT MATCHED [AND if] THEN INSERT ...` (`'*'`: every column from the same-named source column). */
export interface MergeInsertAction {
  readonly if?: string | Expression | undefined
  readonly insert: MergeAssignments | '*'
}

/**
 * Options of a MERGE. Expressions name columns as `target.<column>` and `source.<column>`; an
 * unqualified name is allowed when only one side has it.
 */
export interface MergeOptions {
  /** The join condition, e.g. `'target.id = source.id'`. */
  readonly on: string | Expression
  /** For target rows a source row matches; the first clause that applies acts. */
  readonly whenMatched?: readonly MergeMatchedAction[] | undefined
  /** For source rows that match no target row. */
  readonly whenNotMatched?: readonly MergeInsertAction[] | undefined
  /** For target rows that no source row matches (conditions and values over the target only). */
  readonly whenNotMatchedBySource?: readonly MergeMatchedAction[] | undefined
  /**
   * The source rows' schema (DDL text or a Delta schema object). When absent, a source column
   * takes the type of the same-named table column, else the type of the table column it is
   * equated with in `on`, else a type inferred from its values (bigint or integral numbers:
   * long; other numbers: double; strings, booleans, `Uint8Array`, `Date`).
   */
  readonly sourceSchema?: string | StructType | Readonly<Record<string, unknown>> | undefined
  /**
   * `MERGE WITH SCHEMA EVOLUTION`: source columns the clauses assign that the table lacks are
   * added to its schema in the MERGE's commit (see `merge-schema-evolution.ts`).
   */
  readonly schemaEvolution?: boolean | undefined
}

/** What a MERGE is planned against: the table schema (a snapshot's, or one a MERGE evolves). */
export type PlanTarget = Pick<Snapshot, 'schema'>

/** A conjunct `target.<column> = source.<column>` of the join condition. */
export interface EquiKey {
  /** The table column, as the schema spells it. */
  readonly target: string
  readonly targetType: PrimitiveType
  /** The source column, as the source columns spell it. */
  readonly source: string
}

/** A MERGE checked against the table and the source, ready for the executor. */
export interface MergePlan {
  readonly on: Expression
  readonly sourceColumns: readonly MergeSourceColumn[]
  readonly whenMatched: readonly MergeTargetClause[]
  readonly whenNotMatched: readonly MergeInsertClause[]
  readonly whenNotMatchedBySource: readonly MergeTargetClause[]
  /** The conjuncts of `on` over target columns only, with unqualified column names; undefined if none. */
  readonly targetOnly: Expression | undefined
  /** The equi-join keys of `on`. */
  readonly keys: readonly EquiKey[]
  /** Whether any clause updates or deletes target rows. */
  readonly changesTargetRows: boolean
}

type Side = 'target' | 'source'

/**
 * Checks a MERGE against the table's schema and the source rows and resolves every column
 * reference to a side.
 *
 * @param snap - the read snapshot (or its schema as the MERGE evolves it)
 * @param sourceRows - the source rows (plain objects)
 * @param options - the MERGE options
 * @returns the plan
 * @throws {InvalidArgumentError} for malformed options or rows, unknown or ambiguous columns, a
 *   clause referencing a side it cannot see, an unconditional clause before another clause of its
 *   list, `'*'` with source columns missing, or a NOT NULL column left NULL by an insert
 * @throws {InvalidPredicateError} when an expression does not parse
 * @throws {UnsupportedError} for a source column whose type cannot be inferred
 */
export function planMerge(
  snap: PlanTarget,
  sourceRows: readonly unknown[],
  options: MergeOptions,
): MergePlan {
  if (options === null || typeof options !== 'object') {
    throw new InvalidArgumentError('merge expects options { on, whenMatched?, whenNotMatched?, ... }', {
      argument: 'options',
    })
  }
  if (options.on === undefined) {
    throw new InvalidArgumentError('MERGE needs an `on` condition', {
      argument: 'on',
      hint: "Pass e.g. { on: 'target.id = source.id' }.",
    })
  }
  const matched = clauseList(options.whenMatched, 'whenMatched')
  const notMatched = clauseList(options.whenNotMatched, 'whenNotMatched')
  const bySource = clauseList(options.whenNotMatchedBySource, 'whenNotMatchedBySource')
  if (matched.length + notMatched.length + bySource.length === 0) {
    throw new InvalidArgumentError(
      'MERGE needs at least one whenMatched, whenNotMatched or whenNotMatchedBySource clause',
      {
        argument: 'options',
      },
    )
  }
  const target = snap.schema.fields
  const declared = options.sourceSchema === undefined ? undefined : parseSourceSchema(options.sourceSchema)
  const sourceNames = declared?.map((f) => f.name) ?? sourceColumnNames(sourceRows)
  if (declared !== undefined) checkDeclaredColumns(sourceRows, sourceNames)
  const scope = new Scope(target, sourceNames)

  const on = scope.qualify(toPredicate(options.on, 'on'), 'on', ['target', 'source'])
  const keys = equiKeys(on, target)
  const sourceColumns = declared
    ? declared.map((f) => Object.freeze({ name: f.name, type: f.type }))
    : inferSourceColumns(sourceNames, sourceRows, target, keys)

  const whenMatched = matched.map((c, i) =>
    targetClause(c, `whenMatched[${i}]`, scope, ['target', 'source'], snap, sourceNames),
  )
  const whenNotMatched = notMatched.map((c, i) =>
    insertClause(c, `whenNotMatched[${i}]`, scope, snap, sourceNames),
  )
  const whenNotMatchedBySource = bySource.map((c, i) =>
    targetClause(c, `whenNotMatchedBySource[${i}]`, scope, ['target'], snap, sourceNames),
  )
  checkOnlyLastUnconditional(whenMatched, 'whenMatched')
  checkOnlyLastUnconditional(whenNotMatched, 'whenNotMatched')
  checkOnlyLastUnconditional(whenNotMatchedBySource, 'whenNotMatchedBySource')

  return Object.freeze({
    on,
    sourceColumns: Object.freeze(sourceColumns),
    whenMatched: Object.freeze(whenMatched),
    whenNotMatched: Object.freeze(whenNotMatched),
    whenNotMatchedBySource: Object.freeze(whenNotMatchedBySource),
    targetOnly: targetOnlyPredicate(on),
    keys: Object.freeze(keys),
    changesTargetRows: whenMatched.length + whenNotMatchedBySource.length > 0,
  })
}

/**
 * Rewrites every column reference of an expression.
 *
 * @param expr - the expression
 * @param fn - the replacement of each column path
 * @returns the rewritten (frozen) expression
 */
export function mapColumns(expr: Expression, fn: (path: readonly string[]) => Expression): Expression {
  const m = (e: Expression): Expression => mapColumns(e, fn)
  switch (expr.kind) {
    case 'column':
      return fn(expr.path)
    case 'literal':
      return expr
    case 'comparison':
    case 'and':
    case 'or':
    case 'arithmetic':
      return Object.freeze({ ...expr, left: m(expr.left), right: m(expr.right) })
    case 'not':
    case 'negate':
    case 'is-null':
    case 'is-boolean':
    case 'cast':
      return Object.freeze({ ...expr, operand: m(expr.operand) })
    case 'in':
      return Object.freeze({ ...expr, value: m(expr.value), list: Object.freeze(expr.list.map(m)) })
    case 'between':
      return Object.freeze({ ...expr, value: m(expr.value), low: m(expr.low), high: m(expr.high) })
    case 'like':
      return Object.freeze({ ...expr, value: m(expr.value), pattern: m(expr.pattern) })
    case 'call':
      return Object.freeze({ ...expr, args: Object.freeze(expr.args.map(m)) })
  }
}

// === Column scope ===

class Scope {
  readonly #target: readonly StructField[]
  readonly #source: readonly string[]

  constructor(target: readonly StructField[], source: readonly string[]) {
    this.#target = target
    this.#source = source
  }

  /** Resolves every column of `expr` to `[side, name, ...nested]`, allowing only `sides`. */
  qualify(expr: Expression, argument: string, sides: readonly Side[]): Expression {
    return mapColumns(expr, (path) => col(this.#resolve(path, argument, sides)))
  }

  #resolve(path: readonly string[], argument: string, sides: readonly Side[]): string[] {
    const head = (path[0] ?? '').toLowerCase()
    if ((head === 'target' || head === 'source') && path.length >= 2) {
      const side = head as Side
      const name = this.#find(side, path[1] as string)
      if (name === undefined) {
        throw new InvalidArgumentError(`Unknown column '${path.join('.')}' in ${argument}`, {
          argument,
          hint: this.#known(side),
        })
      }
      this.#checkSide(side, path, argument, sides)
      return [side, name, ...path.slice(2)]
    }
    const inTarget = this.#find('target', path[0] as string)
    const inSource = this.#find('source', path[0] as string)
    if (inTarget !== undefined && inSource !== undefined && sides.length > 1) {
      throw new InvalidArgumentError(
        `Column '${path.join('.')}' in ${argument} is ambiguous: both the table and the source have it`,
        {
          argument,
          hint: `Write target.${path.join('.')} or source.${path.join('.')}.`,
        },
      )
    }
    const side: Side | undefined =
      inTarget !== undefined && sides.includes('target')
        ? 'target'
        : inSource !== undefined && sides.includes('source')
          ? 'source'
          : inTarget !== undefined
            ? 'target'
            : inSource !== undefined
              ? 'source'
              : undefined
    if (side === undefined) {
      throw new InvalidArgumentError(`Unknown column '${path.join('.')}' in ${argument}`, {
        argument,
        hint: `${this.#known('target')}; ${this.#known('source')}`,
      })
    }
    this.#checkSide(side, path, argument, sides)
    return [side, (side === 'target' ? inTarget : inSource) as string, ...path.slice(1)]
  }

  #checkSide(side: Side, path: readonly string[], argument: string, sides: readonly Side[]): void {
    if (sides.includes(side)) return
    throw new InvalidArgumentError(
      `${argument} cannot reference ${side} column '${path.join('.')}': it may only use ${sides.join(' and ')} columns`,
      { argument },
    )
  }

  #find(side: Side, name: string): string | undefined {
    const names = side === 'target' ? this.#target.map((f) => f.name) : this.#source
    return names.find((n) => n === name) ?? names.find((n) => n.toLowerCase() === name.toLowerCase())
  }

  #known(side: Side): string {
    const names = side === 'target' ? this.#target.map((f) => f.name) : this.#source
    return `${side} columns: ${names.join(', ') || '(none)'}`
  }
}

// === Clauses ===

function clauseList(value: unknown, argument: string): readonly Record<string, unknown>[] {
  if (value === undefined) return []
  if (!Array.isArray(value)) {
    throw new InvalidArgumentError(`${argument} must be an array of clauses`, { argument })
  }
  return value.map((c, i) => {
    if (c === null || typeof c !== 'object' || Array.isArray(c)) {
      throw new InvalidArgumentError(`${argument}[${i}] must be a clause object`, { argument })
    }
    return c as Record<string, unknown>
  })
}

function targetClause(
  c: Record<string, unknown>,
  argument: string,
  scope: Scope,
  sides: readonly Side[],
  snap: PlanTarget,
  sourceNames: readonly string[],
): MergeTargetClause {
  const hasUpdate = c.update !== undefined
  const hasDelete = c.delete !== undefined
  if (hasUpdate === hasDelete) {
    throw new InvalidArgumentError(`${argument} must have exactly one of update or delete`, {
      argument,
      hint: "Write { update: { col: 'source.col' } } or { delete: true }, optionally with if.",
    })
  }
  const condition =
    c.if === undefined
      ? undefined
      : scope.qualify(toPredicate(c.if, `${argument}.if`), `${argument}.if`, sides)
  if (hasDelete) {
    if (c.delete !== true) throw new InvalidArgumentError(`${argument}.delete must be true`, { argument })
    return Object.freeze({ kind: 'delete', condition })
  }
  const set = assignments(c.update, `${argument}.update`, scope, sides, snap, sourceNames)
  return Object.freeze({ kind: 'update', condition, set })
}

function insertClause(
  c: Record<string, unknown>,
  argument: string,
  scope: Scope,
  snap: PlanTarget,
  sourceNames: readonly string[],
): MergeInsertClause {
  if (c.insert === undefined) {
    throw new InvalidArgumentError(`${argument} must have an insert`, {
      argument,
      hint: "Write { insert: '*' } or { insert: { col: 'source.col' } }, optionally with if.",
    })
  }
  const condition =
    c.if === undefined
      ? undefined
      : scope.qualify(toPredicate(c.if, `${argument}.if`), `${argument}.if`, ['source'])
  const values = assignments(c.insert, `${argument}.insert`, scope, ['source'], snap, sourceNames)
  for (const f of snap.schema.fields) {
    // Generated and identity columns get their values from the write (computed-columns.ts).
    if (!f.nullable && values[f.name] === undefined && !isComputedField(f)) {
      throw new InvalidArgumentError(`${argument} gives no value for NOT NULL column '${f.name}'`, {
        argument,
      })
    }
  }
  return Object.freeze({ condition, values })
}

function assignments(
  raw: unknown,
  argument: string,
  scope: Scope,
  sides: readonly Side[],
  snap: PlanTarget,
  sourceNames: readonly string[],
): Readonly<Record<string, Expression>> {
  const out: Record<string, Expression> = {}
  if (raw === '*') {
    if (!sides.includes('source')) {
      throw new InvalidArgumentError(
        `${argument} cannot be '*': there is no source row for these target rows`,
        {
          argument,
        },
      )
    }
    const missing: string[] = []
    for (const f of snap.schema.fields) {
      const s =
        sourceNames.find((n) => n === f.name) ??
        sourceNames.find((n) => n.toLowerCase() === f.name.toLowerCase())
      // '*' leaves out a computed column the source lacks, and never updates an identity column.
      if (isComputedField(f) && (s === undefined || (sides.includes('target') && isIdentityField(f))))
        continue
      if (s === undefined) missing.push(f.name)
      else out[f.name] = col(['source', s])
    }
    if (missing.length > 0) {
      throw new InvalidArgumentError(
        `${argument} is '*' but the source has no column ${missing.map((m) => `'${m}'`).join(', ')}`,
        { argument, hint: 'List the assignments explicitly, or add the columns to the source rows.' },
      )
    }
    return Object.freeze(out)
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new InvalidArgumentError(`${argument} must be '*' or an object of column name to SQL expression`, {
      argument,
    })
  }
  const entries = Object.entries(raw as Record<string, unknown>)
  if (entries.length === 0) throw new InvalidArgumentError(`${argument} assigns no column`, { argument })
  for (const [name, value] of entries) {
    const bare = name.toLowerCase().startsWith('target.') ? name.slice('target.'.length) : name
    const field =
      snap.schema.fields.find((f) => f.name === bare) ??
      snap.schema.fields.find((f) => f.name.toLowerCase() === bare.toLowerCase())
    if (field === undefined) {
      throw new InvalidArgumentError(`${argument} assigns unknown column '${name}'`, {
        argument,
        hint: `The table has: ${snap.schema.fields.map((f) => f.name).join(', ')}`,
      })
    }
    if (Object.hasOwn(out, field.name)) {
      throw new InvalidArgumentError(`${argument} assigns column '${field.name}' twice`, { argument })
    }
    const expr = scope.qualify(toExpression(value, `${argument}.${name}`), `${argument}.${name}`, sides)
    if (!field.nullable && isNullLiteral(expr)) {
      throw new InvalidArgumentError(
        `Column '${field.name}' is NOT NULL and cannot be set to NULL (${argument})`,
        {
          argument,
        },
      )
    }
    out[field.name] = expr
  }
  return Object.freeze(out)
}

function checkOnlyLastUnconditional(
  clauses: readonly { readonly condition?: Expression | undefined }[],
  argument: string,
): void {
  clauses.forEach((c, i) => {
    if (c.condition === undefined && i < clauses.length - 1) {
      throw new InvalidArgumentError(
        `${argument}[${i}] has no condition but is not the last ${argument} clause; it would shadow the clauses after it`,
        { argument, hint: 'Give it an `if` condition or move it last.' },
      )
    }
  })
}

function toPredicate(raw: unknown, argument: string): Expression {
  if (typeof raw === 'string') {
    if (raw.trim() === '') throw new InvalidArgumentError(`${argument} is empty`, { argument })
    return parsePredicate(raw)
  }
  return toExpression(raw, argument)
}

// === Join condition ===

function equiKeys(on: Expression, target: readonly StructField[]): EquiKey[] {
  const keys: EquiKey[] = []
  for (const c of conjuncts(on)) {
    if (c.kind !== 'comparison' || c.op !== '=') continue
    const sides = [c.left, c.right]
    const t = sides.find((e) => e.kind === 'column' && e.path[0] === 'target' && e.path.length === 2)
    const s = sides.find((e) => e.kind === 'column' && e.path[0] === 'source' && e.path.length === 2)
    if (t?.kind !== 'column' || s?.kind !== 'column') continue
    const field = target.find((f) => f.name === t.path[1])
    if (field === undefined || !isPrimitiveType(field.type)) continue
    keys.push(
      Object.freeze({
        target: field.name,
        targetType: field.type as PrimitiveType,
        source: s.path[1] as string,
      }),
    )
  }
  return keys
}

/** The conjuncts of `on` that reference target columns only, with the `target.` qualifier dropped. */
function targetOnlyPredicate(on: Expression): Expression | undefined {
  const parts = conjuncts(on).filter((c) => {
    const cols = columnsOf(c)
    return cols.length > 0 && cols.every((p) => p[0] === 'target')
  })
  if (parts.length === 0) return undefined
  return mapColumns(conjunction(parts), (path) => col(path.slice(1)))
}

// === Source columns ===

function parseSourceSchema(raw: unknown): readonly StructField[] {
  let schema: StructType
  try {
    schema = typeof raw === 'string' ? parseDdlSchema(raw) : toStructType(raw)
  } catch (err) {
    throw new InvalidArgumentError(
      `Invalid sourceSchema: ${err instanceof Error ? err.message : String(err)}`,
      {
        argument: 'sourceSchema',
        cause: err,
      },
    )
  }
  return schema.fields
}

function checkDeclaredColumns(rows: readonly unknown[], names: readonly string[]): void {
  const known = new Set(names)
  rows.forEach((row, i) => {
    for (const k of Object.keys(row as object)) {
      if (!known.has(k)) {
        throw new InvalidArgumentError(
          `Source row ${i} has column '${k}', which sourceSchema does not declare`,
          {
            argument: 'sourceRows',
            hint: `sourceSchema declares: ${names.join(', ') || '(none)'}`,
          },
        )
      }
    }
  })
}

function sourceColumnNames(rows: readonly unknown[]): string[] {
  const names: string[] = []
  const lower = new Map<string, string>()
  for (const row of rows) {
    for (const k of Object.keys(row as object)) {
      const prior = lower.get(k.toLowerCase())
      if (prior === undefined) {
        lower.set(k.toLowerCase(), k)
        names.push(k)
      } else if (prior !== k) {
        throw new InvalidArgumentError(`Source rows spell one column two ways: '${prior}' and '${k}'`, {
          argument: 'sourceRows',
        })
      }
    }
  }
  return names
}

function inferSourceColumns(
  names: readonly string[],
  rows: readonly unknown[],
  target: readonly StructField[],
  keys: readonly EquiKey[],
): MergeSourceColumn[] {
  return names.map((name) => {
    const same =
      target.find((f) => f.name === name) ?? target.find((f) => f.name.toLowerCase() === name.toLowerCase())
    if (same !== undefined) return Object.freeze({ name, type: same.type })
    const key = keys.find((k) => k.source === name)
    if (key !== undefined) return Object.freeze({ name, type: key.targetType as DataType })
    return Object.freeze({ name, type: inferType(name, rows) })
  })
}

function inferType(name: string, rows: readonly unknown[]): DataType {
  const kinds = new Set<string>()
  let integral = true
  for (const row of rows) {
    const v = (row as Record<string, unknown>)[name]
    if (v === null || v === undefined) continue
    if (typeof v === 'bigint') kinds.add('number')
    else if (typeof v === 'number') {
      kinds.add('number')
      if (!Number.isSafeInteger(v)) integral = false
    } else if (typeof v === 'string') kinds.add('string')
    else if (typeof v === 'boolean') kinds.add('boolean')
    else if (v instanceof Uint8Array) kinds.add('binary')
    else if (v instanceof Date) kinds.add('timestamp')
    else kinds.add('other')
  }
  if (kinds.size === 0) return 'string'
  const [kind] = kinds
  if (kinds.size > 1 || kind === 'other') {
    throw new UnsupportedError(
      `Cannot infer the type of source column '${name}' from its values; pass sourceSchema (e.g. '${name} string')`,
    )
  }
  switch (kind) {
    case 'number':
      return integral ? 'long' : 'double'
    case 'binary':
      return 'binary'
    case 'timestamp':
      return 'timestamp'
    case 'boolean':
      return 'boolean'
    default:
      return 'string'
  }
}
