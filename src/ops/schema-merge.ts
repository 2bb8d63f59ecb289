/**
 * Schema evolution on append (`schemaMode: 'merge'`, Spark's `mergeSchema`): input columns the
 * table lacks are added to its schema, nullable, by a `metaData` action in the same commit as the
 * data; table columns the input lacks are null in the new rows. A value that does not fit an
 * existing column's type is refused as any append refuses it: the schema is never changed to fit.
 *
 * Rows given as JavaScript objects carry no declared types, so a new column's type is read off its
 * values: `bigint` and whole numbers make a `long`, a fractional number a `double`, strings a
 * `string`, booleans a `boolean`, a `Date` a `timestamp`, a `Uint8Array` a `binary`. A column whose
 * values disagree, hold only nulls, or are nested is refused, with a hint to add it first with
 * `alter.addColumns`. Input files carry their types (DuckDB reads them).
 */
import { InvalidArgumentError } from '../errors/index.js'
import type { Action } from '../protocol/actions.js'
import type { PrimitiveType, StructField, StructType } from '../protocol/schema.js'
import type { Snapshot } from '../snapshot/snapshot.js'
import type { PreparedOperation } from '../txn/staged-operation.js'
import { addedColumnsActions } from './alter.js'

/** How an append treats input columns the table lacks. */
export type SchemaMode = 'merge'

/** The evolved schema of an append, and the actions that commit it. */
export interface SchemaEvolution {
  /** The table schema with the new columns; the rows are written against it. */
  readonly schema: StructType
  /** The `metaData` (and `protocol`) actions, none when no column is new. */
  readonly actions: readonly Action[]
}

/**
 * The schema an append of `rows` with `schemaMode: 'merge'` writes against.
 *
 * @param snap - the read snapshot
 * @param rows - the rows to append
 * @returns the schema and its actions (the snapshot's schema and none when nothing is new)
 * @throws {InvalidArgumentError} for a new column whose type cannot be read off its values
 * @throws {UnsupportedError} on a table with column mapping
 */
export function evolveSchemaForRows(
  snap: Snapshot,
  rows: readonly Readonly<Record<string, unknown>>[],
): SchemaEvolution {
  return evolveSchema(snap, newColumnsOf(snap.schema, rows))
}

/**
 * The schema with `added` appended (when any), and its actions.
 *
 * @param snap - the read snapshot
 * @param added - the new columns (nullable)
 * @throws {InvalidArgumentError} for a column that exists
 * @throws {UnsupportedError} on a table with column mapping
 */
export function evolveSchema(snap: Snapshot, added: readonly StructField[]): SchemaEvolution {
  if (added.length === 0) return { schema: snap.schema, actions: [] }
  return addedColumnsActions(snap, added, 'rows')
}

/**
 * An append's operation with the schema change it makes, the `metaData` first (one commit holds
 * both, so no reader sees the new files without their columns).
 *
 * @param op - the append
 * @param evolution - the schema change, when `schemaMode` is `'merge'`
 */
export function withSchemaEvolution(
  op: PreparedOperation,
  evolution: SchemaEvolution | undefined,
): PreparedOperation {
  if (evolution === undefined || evolution.actions.length === 0) return op
  return { ...op, actions: [...evolution.actions, ...op.actions] }
}

/**
 * The columns of `rows` that `schema` lacks (names compare without case), in the order first met,
 * each nullable with the type its values show.
 *
 * @throws {InvalidArgumentError} naming the column whose type cannot be told
 */
export function newColumnsOf(
  schema: StructType,
  rows: readonly Readonly<Record<string, unknown>>[],
): StructField[] {
  const known = new Set(schema.fields.map((f) => f.name.toLowerCase()))
  const types = new Map<string, PrimitiveType | null>()
  for (const row of rows) {
    if (row === null || typeof row !== 'object') continue
    for (const [name, value] of Object.entries(row)) {
      if (known.has(name.toLowerCase())) continue
      const seen = types.get(name)
      if (value === null || value === undefined) {
        if (seen === undefined) types.set(name, null)
        continue
      }
      const type = typeOfValue(name, value)
      if (seen === undefined || seen === null) types.set(name, type)
      else if (seen !== type) types.set(name, widen(name, seen, type))
    }
  }
  const out: StructField[] = []
  for (const [name, type] of types) {
    if (type === null) {
      throw new InvalidArgumentError(
        `Cannot add column '${name}': every value of it is null, so its type is unknown`,
        {
          argument: 'rows',
          hint: `Add it first with table.alter.addColumns('${name} <type>'), or leave it out of the rows.`,
        },
      )
    }
    out.push(Object.freeze({ name, type, nullable: true, metadata: Object.freeze({}) }))
  }
  return out
}

function typeOfValue(name: string, value: unknown): PrimitiveType {
  switch (typeof value) {
    case 'bigint':
      return 'long'
    case 'number':
      return Number.isInteger(value) ? 'long' : 'double'
    case 'string':
      return 'string'
    case 'boolean':
      return 'boolean'
  }
  if (value instanceof Date) return 'timestamp'
  if (value instanceof Uint8Array) return 'binary'
  throw new InvalidArgumentError(
    `Cannot add column '${name}' from its values: a ${Array.isArray(value) ? 'list' : typeof value} value has no type an append can tell`,
    {
      argument: 'rows',
      hint: `Add it first with table.alter.addColumns (e.g. '${name} struct<a: int>' or '${name} array<long>'), then append.`,
    },
  )
}

/** Whole numbers and fractions make a double; any other mix is refused. */
function widen(name: string, a: PrimitiveType, b: PrimitiveType): PrimitiveType {
  const numeric = new Set<PrimitiveType>(['long', 'double'])
  if (numeric.has(a) && numeric.has(b)) return 'double'
  throw new InvalidArgumentError(
    `Cannot add column '${name}': its values are of different types (${a} and ${b})`,
    {
      argument: 'rows',
      hint: `Give every value of ${name} one type, or add the column first with table.alter.addColumns.`,
    },
  )
}
