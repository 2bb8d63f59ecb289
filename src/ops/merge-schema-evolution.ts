/**
 * MERGE with schema evolution (`schemaEvolution: true`, Spark's `MERGE WITH SCHEMA EVOLUTION`):
 * the source columns a clause assigns to a target column of the same name that the table lacks
 * are added to the table schema (nullable, after its columns) by a `metaData` action in the
 * MERGE's own commit; rows already in the table read null for them. A clause assigns a column when
 * it is `update: '*'` / `insert: '*'` (every source column), or when it sets a column to exactly
 * the source column of that name (`{ note: 'source.note' }`); a source column used only inside an
 * expression, or a new column set to any other expression, is not added (the latter is refused as
 * an unknown column, as without schema evolution). On a table with `delta.enableTypeWidening=true`
 * an assigned column whose source values need a wider type (or whose declared `sourceSchema` type
 * is an automatic widening of the column's) is widened, as an append with `schemaMode: 'merge'`
 * widens it. Nested struct fields are not evolved.
 */
import type { ColumnSpec } from '../engine/data-plane.js'
import { isPrimitiveType, parseDdlSchema, type StructField, toStructType } from '../protocol/schema.js'
import { isAutomaticTypeChange, typeWideningEnabled } from '../protocol/type-widening.js'
import { columnSpecs } from '../scan/column-specs.js'
import type { Snapshot } from '../snapshot/snapshot.js'
import { toExpression } from './dml-support.js'
import type { MergeOptions } from './merge-clauses.js'
import {
  evolveSchema,
  newColumnsOf,
  type SchemaEvolution,
  type TypeChange,
  typeChangesOfRows,
} from './schema-merge.js'

/**
 * The schema change a MERGE with `schemaEvolution: true` commits, or undefined without the flag
 * or when it changes nothing.
 *
 * @param snap - the read snapshot
 * @param sourceRows - the source rows
 * @param options - the MERGE options
 * @returns the evolution, its schema the one the MERGE plans and writes against
 * @throws {InvalidArgumentError} for a new column whose type cannot be read off its values
 * @throws {UnsupportedError} on a table with column mapping
 */
export function mergeSchemaEvolution(
  snap: Snapshot,
  sourceRows: readonly Readonly<Record<string, unknown>>[],
  options: MergeOptions,
): SchemaEvolution | undefined {
  if (options?.schemaEvolution !== true) return undefined
  const declared = declaredSource(options.sourceSchema)
  const sourceNames = declared?.map((f) => f.name) ?? namesOf(sourceRows)
  const assigned = assignedSourceColumns(options, sourceNames)
  if (assigned.size === 0) return undefined
  const inTable = (name: string): boolean =>
    snap.schema.fields.some((f) => f.name.toLowerCase() === name.toLowerCase())
  const isNew = (name: string): boolean => assigned.has(name.toLowerCase()) && !inTable(name)
  const added: StructField[] =
    declared !== undefined
      ? declared.filter((f) => isNew(f.name)).map((f) => Object.freeze({ ...f, nullable: true }))
      : newColumnsOf({ type: 'struct', fields: [] }, project(sourceRows, isNew))
  const widened = typeWideningEnabled(snap.properties)
    ? declared !== undefined
      ? declaredWidenings(snap, declared, assigned)
      : typeChangesOfRows(
          snap,
          project(sourceRows, (n) => assigned.has(n.toLowerCase()) && inTable(n)),
        )
    : []
  if (added.length === 0 && widened.length === 0) return undefined
  return evolveSchema(snap, added, widened)
}

/**
 * The target column specs a MERGE reads and writes: the snapshot's, with an evolution's wider
 * types and new columns (files written before read null for those).
 *
 * @param snap - the read snapshot
 * @param evolution - the MERGE's schema change, if any
 */
export function evolvedColumnSpecs(snap: Snapshot, evolution: SchemaEvolution | undefined): ColumnSpec[] {
  const specs = columnSpecs(snap, undefined)
  if (evolution === undefined) return specs
  const byName = new Map(specs.map((c) => [c.name, c]))
  return evolution.schema.fields.map((f) => {
    const spec = byName.get(f.name)
    if (spec !== undefined) return spec.type === f.type ? spec : Object.freeze({ ...spec, type: f.type })
    return Object.freeze({ name: f.name, type: f.type, physicalName: f.name, isPartition: false })
  })
}

// === Internals ===

/**
 * The source columns (lower case) the clauses assign to the same-named target column: all of them
 * for a `'*'` clause, else those an assignment sets to exactly `source.<name>` (or `<name>`).
 */
function assignedSourceColumns(options: MergeOptions, sourceNames: readonly string[]): Set<string> {
  const out = new Set<string>()
  const source = new Set(sourceNames.map((n) => n.toLowerCase()))
  const clauses = [
    ...(options.whenMatched ?? []).map((c) => ('update' in c ? c.update : undefined)),
    ...(options.whenNotMatched ?? []).map((c) => c.insert),
  ]
  for (const set of clauses) {
    if (set === undefined) continue
    if (set === '*') {
      for (const n of source) out.add(n)
      continue
    }
    if (set === null || typeof set !== 'object') continue
    for (const [key, value] of Object.entries(set)) {
      const name = (key.toLowerCase().startsWith('target.') ? key.slice('target.'.length) : key).toLowerCase()
      if (source.has(name) && isSourceColumn(value, name)) out.add(name)
    }
  }
  return out
}

/** Whether an assigned value is exactly the source column `name`; a value that does not parse is not. */
function isSourceColumn(value: unknown, name: string): boolean {
  let e: ReturnType<typeof toExpression>
  try {
    e = toExpression(value, 'merge')
  } catch {
    // planMerge reports it with the clause it belongs to.
    return false
  }
  if (e.kind !== 'column') return false
  const path = e.path.map((p) => p.toLowerCase())
  return path.length === 2 ? path[0] === 'source' && path[1] === name : path.length === 1 && path[0] === name
}

/** The declared source columns, or undefined when there are none or they do not parse (planMerge reports it). */
function declaredSource(raw: MergeOptions['sourceSchema']): readonly StructField[] | undefined {
  if (raw === undefined) return undefined
  try {
    return (typeof raw === 'string' ? parseDdlSchema(raw) : toStructType(raw)).fields
  } catch {
    return undefined
  }
}

function declaredWidenings(
  snap: Snapshot,
  declared: readonly StructField[],
  assigned: ReadonlySet<string>,
): TypeChange[] {
  const partition = new Set(snap.partitionColumns.map((c) => c.toLowerCase()))
  const out: TypeChange[] = []
  for (const f of declared) {
    const have = snap.schema.fields.find((x) => x.name.toLowerCase() === f.name.toLowerCase())
    if (have === undefined || !assigned.has(f.name.toLowerCase()) || partition.has(have.name.toLowerCase()))
      continue
    if (isPrimitiveType(f.type) && isAutomaticTypeChange(have.type, f.type)) {
      out.push(Object.freeze({ column: have.name, to: f.type }))
    }
  }
  return out
}

function namesOf(rows: readonly Readonly<Record<string, unknown>>[]): string[] {
  const seen = new Map<string, string>()
  for (const row of rows) {
    for (const k of Object.keys(row ?? {})) if (!seen.has(k.toLowerCase())) seen.set(k.toLowerCase(), k)
  }
  return [...seen.values()]
}

/** The rows with only the columns `keep` accepts. */
function project(
  rows: readonly Readonly<Record<string, unknown>>[],
  keep: (name: string) => boolean,
): Record<string, unknown>[] {
  return rows.map((row) => {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(row ?? {})) if (keep(k)) out[k] = v
    return out
  })
}
