/**
 * The one call each write path makes for generated and identity columns: rows given as objects
 * get their identity values and generated values ({@link computedColumnWrite}), a MERGE plan and
 * an UPDATE's assignments get the generation expressions their changes need and refuse what an
 * identity column forbids, and the operation commits the identity high-water marks it moved. A
 * table with neither kind of column passes through untouched.
 */
import { InvalidArgumentError } from '../errors/index.js'
import { col, type Expression } from '../expressions/ast.js'
import {
  checkComputedColumnDefinitions,
  isComputedField,
  isIdentityField,
} from '../protocol/computed-columns.js'
import { fieldByName, type StructType } from '../protocol/schema.js'
import type { Snapshot } from '../snapshot/snapshot.js'
import type { PreparedOperation } from '../txn/staged-operation.js'
import {
  fillGeneratedValues,
  type GeneratedColumn,
  generatedColumns,
  withGeneratedAssignments,
  withGeneratedInsertValues,
} from './generated-columns.js'
import { checkIdentityInsert, checkNoIdentityUpdate, IdentityValues } from './identity-columns.js'
import type { MergePlan } from './merge-clauses.js'

type Row = Readonly<Record<string, unknown>>

/** What one write does for the table's generated and identity columns. */
export interface ComputedColumnWrite {
  /** Rows with identity and generated values filled in (see `identity-columns.ts`, `generated-columns.ts`). */
  rows(rows: readonly Row[]): readonly Row[]
  /** Batches of rows, filled as {@link rows} fills them; identity values continue across batches. */
  batches(batches: AsyncIterable<readonly Row[]>): AsyncIterable<readonly Row[]>
  /**
   * The rows a MERGE produced (updated images, then `inserted` inserted rows) with identity values
   * for the inserted ones; generated values the data plane computed already.
   */
  mergeRows(rows: readonly Row[], inserted: number): readonly Row[]
  /** The operation with a `metaData` action holding the high-water marks the write moved. */
  finish<T extends PreparedOperation>(op: T): T
}

const UNTOUCHED: ComputedColumnWrite = Object.freeze({
  rows: (rows: readonly Row[]) => rows,
  batches: (batches: AsyncIterable<readonly Row[]>) => batches,
  mergeRows: (rows: readonly Row[]) => rows,
  finish: <T extends PreparedOperation>(op: T) => op,
})

/**
 * The computed-column work of one write to the snapshot's table.
 *
 * @param snap - the read snapshot
 * @param schema - the schema the rows are written with, when the write changes it (an overwrite
 *   that replaces the schema computes only the columns the new one keeps)
 * @returns the write's hooks (pass-throughs for a table without such columns)
 * @throws {UnsupportedError} when a generation expression is outside delta-rlc's expression language
 * @throws {InvalidTableError} when an identity column's metadata is invalid
 */
export function computedColumnWrite(snap: Snapshot, schema: StructType = snap.schema): ComputedColumnWrite {
  if (!hasComputedColumns(schema)) return UNTOUCHED
  const generated = generatedColumns(schema)
  const identity = new IdentityValues(schema)
  const fill = (rows: readonly Row[]): readonly Row[] =>
    fillGeneratedValues(generated, schema, identity.fill(rows))
  return Object.freeze({
    rows: fill,
    batches: async function* (batches: AsyncIterable<readonly Row[]>) {
      for await (const batch of batches) yield fill(batch)
    },
    mergeRows: (rows: readonly Row[], inserted: number) => {
      if (inserted === 0 || !identity.active) return rows
      const from = rows.length - inserted
      return rows.slice(0, from).concat(identity.fill(rows.slice(from)))
    },
    finish: <T extends PreparedOperation>(op: T) => identity.commit(op, snap.metadata),
  })
}

/**
 * A MERGE plan with the table's computed columns honored: update clauses recompute the generated
 * columns whose inputs they change and may not assign an identity column; insert clauses compute
 * every generated column they leave out and may give an identity column a value only when it
 * allows explicit inserts.
 *
 * @param snap - the read snapshot
 * @param plan - the checked MERGE
 * @returns the plan (itself for a table without such columns)
 * @throws {IdentityColumnError} for an update of an identity column, or a value for a `GENERATED ALWAYS` one
 * @throws {UnsupportedError} when a generation expression is outside delta-rlc's expression language
 */
export function mergePlanWithComputedColumns(snap: Snapshot, plan: MergePlan): MergePlan {
  const schema = snap.schema
  if (!hasComputedColumns(schema)) return plan
  const generated = generatedColumns(schema)
  const target = (name: string): Expression => col(['target', name])
  const targetClauses = (clauses: MergePlan['whenMatched']) =>
    Object.freeze(
      clauses.map((c) => {
        if (c.kind !== 'update') return c
        checkNoIdentityUpdate(schema, c.set)
        return Object.freeze({ ...c, set: withGeneratedAssignments(generated, c.set, target) })
      }),
    )
  return Object.freeze({
    ...plan,
    whenMatched: targetClauses(plan.whenMatched),
    whenNotMatchedBySource: targetClauses(plan.whenNotMatchedBySource),
    whenNotMatched: Object.freeze(
      plan.whenNotMatched.map((c) => {
        checkIdentityInsert(schema, c.values)
        return Object.freeze({ ...c, values: withGeneratedInsertValues(generated, c.values) })
      }),
    ),
  })
}

/**
 * An UPDATE's assignments with the table's computed columns honored: the generated columns whose
 * inputs change are recomputed, and an identity column may not be assigned.
 *
 * @param snap - the read snapshot
 * @param set - the assignments, by column name as the schema spells it
 * @returns the assignments (`set` itself for a table without such columns)
 * @throws {IdentityColumnError} `DELTA_IDENTITY_COLUMNS_UPDATE_NOT_SUPPORTED`
 * @throws {UnsupportedError} when a generation expression is outside delta-rlc's expression language
 */
export function updateAssignments(
  snap: Snapshot,
  set: Readonly<Record<string, Expression>>,
): Readonly<Record<string, Expression>> {
  const schema = snap.schema
  if (!hasComputedColumns(schema)) return set
  checkNoIdentityUpdate(schema, set)
  const generated: readonly GeneratedColumn[] = generatedColumns(schema)
  return withGeneratedAssignments(generated, set, (name) => col([name]))
}

function hasComputedColumns(schema: StructType): boolean {
  return schema.fields.some(isComputedField)
}

/**
 * Checks the generated and identity columns of a new table: their metadata is valid (see
 * `checkComputedColumnDefinitions`), every generation expression can be evaluated by delta-rlc
 * and reads only ordinary columns, and no partition column is an identity column.
 *
 * @param schema - the new table's schema
 * @param partitionBy - its partition columns
 * @throws {InvalidArgumentError} naming the column
 * @throws {UnsupportedError} for a generation expression outside delta-rlc's expression language
 */
export function checkComputedColumnsAtCreation(schema: StructType, partitionBy: readonly string[]): void {
  checkComputedColumnDefinitions(schema)
  generatedColumns(schema)
  for (const p of partitionBy) {
    const f = fieldByName(schema, p)
    if (f !== undefined && isIdentityField(f)) {
      throw new InvalidArgumentError(`Identity column '${f.name}' cannot be a partition column`, {
        argument: 'partitionBy',
        hint: 'Partition by another column; a generated column (e.g. a date derived from a timestamp) can be one.',
      })
    }
  }
}
