/**
 * Writing column mapping (protocol.md section 8): giving fields their stable ids and physical
 * names, keeping `delta.columnMapping.maxColumnId`, and the schema edits column mapping makes
 * metadata-only (dropping and renaming a field). Pure: new physical names come from the caller.
 *
 * A field's id and physical name never change once given: a rename keeps both, a dropped field's
 * id and physical name are never given again (the max id only grows), so data files written for
 * the dropped field are never read for a later field of the same name.
 */
import { InvalidArgumentError, InvalidTableError } from '../errors/index.js'
import {
  COLUMN_MAPPING_ID_KEY,
  COLUMN_MAPPING_PHYSICAL_NAME_KEY,
  columnMappingId,
  type DataType,
  isStructType,
  type StructField,
  type StructType,
} from './schema.js'
import { columnMappingModeProperty, type TableConfiguration } from './table-properties.js'

/** Table property holding the highest column id ever given. */
export const MAX_COLUMN_ID_KEY = 'delta.columnMapping.maxColumnId'

/** How {@link assignColumnMapping} names the fields it maps. */
export type PhysicalNamer = (field: StructField) => string

/**
 * Gives every field that has no column mapping id one (nested fields of structs, arrays and maps
 * included), counting up from `maxColumnId`, and a physical name from `nameOf` when it has none.
 * Fields mapped already keep their id and physical name.
 *
 * @param schema - the schema
 * @param maxColumnId - the highest id given so far (0 for a new table)
 * @param nameOf - the physical name of a field that lacks one (`col-<uuid>` for a new field, the
 *   field's own name when an existing table turns column mapping on)
 * @returns the mapped schema and the new highest id
 * @throws {InvalidTableError} when two fields share an id
 */
export function assignColumnMapping(
  schema: StructType,
  maxColumnId: number,
  nameOf: PhysicalNamer,
): { schema: StructType; maxColumnId: number } {
  let max = Math.max(maxColumnId, maxColumnIdOfSchema(schema))
  // A struct gets its id before its fields, as Delta numbers them.
  const mapField = (f: StructField): StructField => {
    const metadata: Record<string, unknown> = { ...f.metadata }
    if (columnMappingId(f) === undefined) metadata[COLUMN_MAPPING_ID_KEY] = ++max
    const type = mapType(f.type)
    const phys = f.metadata[COLUMN_MAPPING_PHYSICAL_NAME_KEY]
    if (typeof phys !== 'string' || phys === '') metadata[COLUMN_MAPPING_PHYSICAL_NAME_KEY] = nameOf(f)
    return Object.freeze({ ...f, type, metadata: Object.freeze(metadata) }) as StructField
  }
  const mapType = (t: DataType): DataType => {
    if (typeof t === 'string') return t
    switch (t.type) {
      case 'struct':
        return Object.freeze({ type: 'struct', fields: Object.freeze(t.fields.map(mapField)) })
      case 'array':
        return Object.freeze({ ...t, elementType: mapType(t.elementType) })
      case 'map':
        return Object.freeze({ ...t, keyType: mapType(t.keyType), valueType: mapType(t.valueType) })
    }
  }
  const out = mapType(schema) as StructType
  checkUniqueIds(out)
  return { schema: out, maxColumnId: max }
}

/**
 * The table's highest column id: `delta.columnMapping.maxColumnId`, or the highest id in the
 * schema when that is higher (a table written by an engine that left the property behind).
 *
 * @param config - the table properties
 * @param schema - the table schema
 * @throws {InvalidArgumentError} when the property is not a non-negative integer
 */
export function maxColumnIdOf(config: TableConfiguration, schema: StructType): number {
  const raw = config[MAX_COLUMN_ID_KEY]
  let fromConfig = 0
  if (raw !== undefined) {
    fromConfig = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN
    if (!Number.isSafeInteger(fromConfig)) {
      throw new InvalidArgumentError(`Invalid value '${raw}' for table property ${MAX_COLUMN_ID_KEY}`, {
        argument: MAX_COLUMN_ID_KEY,
        hint: 'Delta sets it to the highest column mapping id given; it is not set by hand.',
      })
    }
  }
  return Math.max(fromConfig, maxColumnIdOfSchema(schema))
}

/**
 * The table properties with `delta.columnMapping.maxColumnId` raised to the schema's highest id,
 * when the table maps columns: every metadata change that gives new ids commits it, so that any
 * writer reading the property gives no id twice.
 *
 * @param config - the table properties
 * @param schema - the table schema after the change
 * @returns `config` itself when no raise is needed
 */
export function withMaxColumnId(config: TableConfiguration, schema: StructType): TableConfiguration {
  if (columnMappingModeProperty(config) === 'none') return config
  const max = maxColumnIdOf(config, schema)
  return config[MAX_COLUMN_ID_KEY] === String(max) ? config : { ...config, [MAX_COLUMN_ID_KEY]: String(max) }
}

// === Schema edits ===

/** A field found by a dotted path, and the schema's own spelling of that path. */
export interface FieldAt {
  readonly field: StructField
  /** The path as the schema spells it (names compare without case). */
  readonly path: readonly string[]
}

/**
 * The field at a path of struct field names (names compare without case).
 *
 * @param schema - the schema
 * @param path - the field names, outermost first
 * @returns the field, or undefined when a name is missing or a parent is not a struct
 */
export function fieldAtPath(schema: StructType, path: readonly string[]): FieldAt | undefined {
  let type: DataType = schema
  let field: StructField | undefined
  const spelled: string[] = []
  for (const name of path) {
    if (!isStructType(type)) return undefined
    field = type.fields.find((f) => f.name.toLowerCase() === name.toLowerCase())
    if (field === undefined) return undefined
    spelled.push(field.name)
    type = field.type
  }
  return field === undefined ? undefined : { field, path: spelled }
}

/**
 * The schema without the fields at `paths` (top-level columns or nested struct fields).
 *
 * @param schema - the schema
 * @param paths - resolved paths (see {@link fieldAtPath}), each naming a field that exists
 * @returns the new schema
 */
export function withoutFields(schema: StructType, paths: readonly (readonly string[])[]): StructType {
  const drop = (type: StructType, prefix: readonly string[]): StructType => {
    const fields: StructField[] = []
    for (const f of type.fields) {
      const here = [...prefix, f.name]
      if (paths.some((p) => samePath(p, here))) continue
      const under = paths.some((p) => p.length > here.length && samePath(p.slice(0, here.length), here))
      fields.push(under && isStructType(f.type) ? Object.freeze({ ...f, type: drop(f.type, here) }) : f)
    }
    return Object.freeze({ type: 'struct', fields: Object.freeze(fields) })
  }
  return drop(schema, [])
}

/**
 * The schema with the field at `path` named `newName`; its metadata (id and physical name
 * included) is kept.
 *
 * @param schema - the schema
 * @param path - a resolved path (see {@link fieldAtPath}) naming a field that exists
 * @param newName - the new name
 * @returns the new schema
 */
export function withRenamedField(schema: StructType, path: readonly string[], newName: string): StructType {
  const rename = (type: StructType, at: number): StructType =>
    Object.freeze({
      type: 'struct',
      fields: Object.freeze(
        type.fields.map((f) => {
          if (f.name !== path[at]) return f
          if (at === path.length - 1) return Object.freeze({ ...f, name: newName })
          return isStructType(f.type) ? Object.freeze({ ...f, type: rename(f.type, at + 1) }) : f
        }),
      ),
    })
  return rename(schema, 0)
}

/**
 * Whether `path` equals `prefix` or lies under it (names compare without case).
 *
 * @param path - a field path
 * @param prefix - a field path
 */
export function isPathUnder(path: readonly string[], prefix: readonly string[]): boolean {
  return path.length >= prefix.length && samePath(path.slice(0, prefix.length), prefix)
}

// === Internals ===

function samePath(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((s, i) => s.toLowerCase() === (b[i] as string).toLowerCase())
}

function walkFields(type: DataType, visit: (f: StructField) => void): void {
  if (typeof type === 'string') return
  switch (type.type) {
    case 'struct':
      for (const f of type.fields) {
        visit(f)
        walkFields(f.type, visit)
      }
      return
    case 'array':
      walkFields(type.elementType, visit)
      return
    case 'map':
      walkFields(type.keyType, visit)
      walkFields(type.valueType, visit)
  }
}

function maxColumnIdOfSchema(schema: StructType): number {
  let max = 0
  walkFields(schema, (f) => {
    const id = columnMappingId(f)
    if (id !== undefined && id > max) max = id
  })
  return max
}

function checkUniqueIds(schema: StructType): void {
  const seen = new Map<number, string>()
  walkFields(schema, (f) => {
    const id = columnMappingId(f)
    if (id === undefined) return
    const other = seen.get(id)
    if (other !== undefined) {
      throw new InvalidTableError(
        'missing-schema',
        `Columns '${other}' and '${f.name}' share the column mapping id ${id}`,
      )
    }
    seen.set(id, f.name)
  })
  const checkSiblings = (type: DataType): void => {
    if (typeof type === 'string') return
    if (type.type === 'array') {
      checkSiblings(type.elementType)
      return
    }
    if (type.type === 'map') {
      checkSiblings(type.keyType)
      checkSiblings(type.valueType)
      return
    }
    const names = new Set<string>()
    for (const f of type.fields) {
      const phys = f.metadata[COLUMN_MAPPING_PHYSICAL_NAME_KEY]
      if (typeof phys === 'string') {
        if (names.has(phys.toLowerCase())) {
          throw new InvalidTableError(
            'missing-schema',
            `Two columns share the physical name '${phys}' (one is '${f.name}')`,
          )
        }
        names.add(phys.toLowerCase())
      }
      checkSiblings(f.type)
    }
  }
  checkSiblings(schema)
}
