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
import { isPrimitiveType, type PrimitiveType, type StructField, type StructType } from '../protocol/schema.js'
import {
  isAutomaticTypeChange,
  TYPE_CHANGES_KEY,
  typeWideningEnabled,
  widerOf,
  widerTypeForValue,
  withTypeChange,
} from '../protocol/type-widening.js'
import type { Snapshot } from '../snapshot/snapshot.js'
import type { PreparedOperation } from '../txn/staged-operation.js'
import { addedColumnsActions, schemaChangeActions, withAddedColumns, withNewFieldsMapped } from './alter.js'

/**
 * How an append treats the table schema: `'merge'` adds the input columns the table lacks (and,
 * where the table enables type widening, widens columns the input needs wider); `'overwrite'`
 * (with `mode: 'overwrite'` only) replaces the schema with the input's.
 */
export type SchemaMode = 'merge' | 'overwrite'

/** A column whose type a write widens. */
export interface TypeChange {
  /** The column, as the schema spells it. */
  readonly column: string
  /** Its new type. */
  readonly to: PrimitiveType
}

/** The evolved schema of an append, and the actions that commit it. */
export interface SchemaEvolution {
  /** The table schema with the new columns; the rows are written against it. */
  readonly schema: StructType
  /** The `metaData` (and `protocol`) actions, none when no column is new. */
  readonly actions: readonly Action[]
  /** The partition columns the rows are written with, when the evolution changes them. */
  readonly partitionColumns?: readonly string[] | undefined
}

/**
 * The schema an append of `rows` with `schemaMode: 'merge'` writes against.
 *
 * @param snap - the read snapshot
 * @param rows - the rows to append
 * @returns the schema and its actions (the snapshot's schema and none when nothing is new)
 * @throws {InvalidArgumentError} for a new column whose type cannot be read off its values
 */
export function evolveSchemaForRows(
  snap: Snapshot,
  rows: readonly Readonly<Record<string, unknown>>[],
): SchemaEvolution {
  return evolveSchema(snap, newColumnsOf(snap.schema, rows), typeChangesOfRows(snap, rows))
}

/**
 * The schema with `added` appended (when any), and its actions.
 *
 * @param snap - the read snapshot
 * @param added - the new columns (nullable)
 * @throws {InvalidArgumentError} for a column that exists
 */
export function evolveSchema(
  snap: Snapshot,
  added: readonly StructField[],
  widened: readonly TypeChange[] = [],
): SchemaEvolution {
  if (widened.length === 0) {
    if (added.length === 0) return { schema: snap.schema, actions: [] }
    return addedColumnsActions(snap, added, 'rows')
  }
  const base = added.length === 0 ? snap.schema : withAddedColumns(snap, added, 'rows')
  const byName = new Map(widened.map((c) => [c.column, c.to]))
  const schema: StructType = Object.freeze({
    type: 'struct',
    fields: Object.freeze(
      base.fields.map((f) => {
        const to = byName.get(f.name)
        return to === undefined ? f : withTypeChange(f, to)
      }),
    ),
  })
  return schemaChange(snap, schema, snap.partitionColumns)
}

/**
 * The schema change of a write whose input declares its column types (Parquet files, Arrow): with
 * `'merge'` the input columns the table lacks are added (nullable) and, on a table that enables
 * type widening, a column whose input type is an automatic widening of its type (see
 * `isAutomaticTypeChange`) is widened; with `'overwrite'` the schema becomes the input's columns
 * with their types (a column the table has keeps its nullability and metadata, less its type
 * changes), partitioned by `partitionBy` or the table's partition columns.
 *
 * @param snap - the read snapshot
 * @param input - the input's columns and types
 * @param mode - the schema mode
 * @param partitionBy - with `'overwrite'`: the new partition columns
 * @throws as {@link evolveSchema} and {@link overwriteSchemaForRows}
 */
export function evolveSchemaForInput(
  snap: Snapshot,
  input: readonly StructField[],
  mode: SchemaMode,
  partitionBy?: readonly string[],
): SchemaEvolution {
  const find = (name: string): StructField | undefined =>
    snap.schema.fields.find((f) => f.name.toLowerCase() === name.toLowerCase())
  if (mode === 'overwrite') {
    if (input.length === 0) {
      throw new InvalidArgumentError("schemaMode: 'overwrite' needs input columns", { argument: 'rows' })
    }
    const fields = input.map((f) => {
      const kept = find(f.name)
      if (kept === undefined) return Object.freeze({ ...f, nullable: true })
      const { [TYPE_CHANGES_KEY]: _changes, ...metadata } = kept.metadata
      return Object.freeze({ ...kept, type: f.type, metadata: Object.freeze(metadata) })
    })
    const schema = withNewFieldsMapped(snap, Object.freeze({ type: 'struct', fields: Object.freeze(fields) }))
    return schemaChange(snap, schema, partitionColumnsOf(snap, schema, partitionBy))
  }
  const added: StructField[] = []
  const widened: TypeChange[] = []
  const widening = typeWideningEnabled(snap.properties)
  const partition = new Set(snap.partitionColumns.map((c) => c.toLowerCase()))
  for (const f of input) {
    const have = find(f.name)
    if (have === undefined) added.push(Object.freeze({ ...f, nullable: true }))
    else if (
      widening &&
      !partition.has(have.name.toLowerCase()) &&
      isPrimitiveType(f.type) &&
      isAutomaticTypeChange(have.type, f.type)
    ) {
      widened.push(Object.freeze({ column: have.name, to: f.type }))
    }
  }
  return evolveSchema(snap, added, widened)
}

/**
 * The columns `rows` need wider, on a table that enables type widening: each whole number beyond
 * its integer column's range widens the column to the narrowest integer type that holds it, each
 * number a `float` column cannot hold exactly widens it to `double`. None when the table does not
 * enable type widening (the writer then refuses such values, as always). Partition columns and
 * nested fields keep their types.
 *
 * @param snap - the read snapshot
 * @param rows - the rows to append
 */
export function typeChangesOfRows(
  snap: Snapshot,
  rows: readonly Readonly<Record<string, unknown>>[],
): TypeChange[] {
  if (!typeWideningEnabled(snap.properties)) return []
  const partition = new Set(snap.partitionColumns.map((c) => c.toLowerCase()))
  const candidates = new Map<string, StructField>()
  for (const f of snap.schema.fields) {
    if (isPrimitiveType(f.type) && !partition.has(f.name.toLowerCase()))
      candidates.set(f.name.toLowerCase(), f)
  }
  const wider = new Map<string, PrimitiveType>()
  for (const row of rows) {
    if (row === null || typeof row !== 'object') continue
    for (const [name, value] of Object.entries(row)) {
      const field = candidates.get(name.toLowerCase())
      if (field === undefined) continue
      const to = widerTypeForValue(wider.get(field.name) ?? (field.type as PrimitiveType), value)
      if (to !== undefined) wider.set(field.name, widerOf(wider.get(field.name) ?? to, to))
    }
  }
  return [...wider].map(([column, to]) => Object.freeze({ column, to }))
}

/**
 * The actions that give the table `schema` (and `partitionColumns`): a `metaData`, and a
 * `protocol` when the schema needs a feature the table lacks (`timestamp_ntz`).
 *
 * @param snap - the read snapshot
 * @param schema - the new schema
 * @param partitionColumns - the new partition columns
 * @throws {UnsupportedTableFeatureError} when the result is a table delta-rlc cannot write
 */
export function schemaChange(
  snap: Snapshot,
  schema: StructType,
  partitionColumns: readonly string[],
): SchemaEvolution {
  return { schema, actions: schemaChangeActions(snap, schema, partitionColumns), partitionColumns }
}

/**
 * The schema an overwrite with `schemaMode: 'overwrite'` gives the table (Spark's
 * `overwriteSchema`, delta-rs's `schema_mode="overwrite"`): the columns the rows carry, in the
 * order first met, and no other. A column the table has keeps its type, nullability and metadata
 * (less its type changes: every file is rewritten); a new one is nullable with the type its values
 * show. The partition columns are `partitionBy` when given, else the table's, each of which the
 * rows must carry.
 *
 * @param snap - the read snapshot
 * @param rows - every row of the overwrite
 * @param partitionBy - the new partition columns
 * @throws {InvalidArgumentError} for no rows, a column of unknown type, or a partition column the
 *   new schema lacks
 */
export function overwriteSchemaForRows(
  snap: Snapshot,
  rows: readonly Readonly<Record<string, unknown>>[],
  partitionBy: readonly string[] | undefined,
): SchemaEvolution {
  const names: string[] = []
  const seen = new Set<string>()
  for (const row of rows) {
    if (row === null || typeof row !== 'object') continue
    for (const name of Object.keys(row)) {
      if (seen.has(name.toLowerCase())) continue
      seen.add(name.toLowerCase())
      names.push(name)
    }
  }
  if (names.length === 0) {
    throw new InvalidArgumentError("schemaMode: 'overwrite' needs rows: the new schema is read off them", {
      argument: 'rows',
      hint: 'Pass at least one row with every column of the new schema.',
    })
  }
  const empty: StructType = { type: 'struct', fields: [] }
  const typed = new Map(newColumnsOf(empty, rows).map((f) => [f.name.toLowerCase(), f]))
  const fields: StructField[] = []
  for (const name of names) {
    const kept = snap.schema.fields.find((f) => f.name.toLowerCase() === name.toLowerCase())
    if (kept === undefined) {
      fields.push(typed.get(name.toLowerCase()) as StructField)
      continue
    }
    const { [TYPE_CHANGES_KEY]: _changes, ...metadata } = kept.metadata
    fields.push(Object.freeze({ ...kept, metadata: Object.freeze(metadata) }))
  }
  const schema = withNewFieldsMapped(snap, Object.freeze({ type: 'struct', fields: Object.freeze(fields) }))
  return schemaChange(snap, schema, partitionColumnsOf(snap, schema, partitionBy))
}

/**
 * The partition columns of a replaced schema, spelled as the schema spells them.
 *
 * @throws {InvalidArgumentError} naming a partition column the schema lacks or a nested one
 */
function partitionColumnsOf(
  snap: Snapshot,
  schema: StructType,
  partitionBy: readonly string[] | undefined,
): string[] {
  const wanted = partitionBy ?? snap.partitionColumns
  return wanted.map((name) => {
    const f = schema.fields.find((x) => x.name.toLowerCase() === name.toLowerCase())
    if (f === undefined) {
      throw new InvalidArgumentError(
        `Partition column '${name}' is not in the new schema (${schema.fields.map((x) => x.name).join(', ')})`,
        {
          argument: partitionBy === undefined ? 'rows' : 'options.partitionBy',
          hint:
            partitionBy === undefined
              ? 'Give the rows the partition column, or pass options.partitionBy with the new partitioning.'
              : 'Partition by columns the rows carry.',
        },
      )
    }
    if (!isPrimitiveType(f.type)) {
      throw new InvalidArgumentError(`Partition column '${f.name}' must be of a primitive type`, {
        argument: 'options.partitionBy',
      })
    }
    return f.name
  })
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
 * The write target of an evolved schema: the rows are checked and written against it.
 *
 * @param target - the snapshot's write target
 * @param evolution - the schema change, if any
 */
export function evolvedTarget<
  T extends { readonly schema: StructType; readonly partitionColumns: readonly string[] },
>(target: T, evolution: SchemaEvolution | undefined): T {
  if (evolution === undefined) return target
  return Object.freeze({
    ...target,
    schema: evolution.schema,
    partitionColumns: evolution.partitionColumns ?? target.partitionColumns,
  })
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
