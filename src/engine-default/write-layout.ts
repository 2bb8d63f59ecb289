import type { WriteTarget } from '../engine/data-writer.js'
import { InvalidArgumentError, UnsupportedError } from '../errors/index.js'
import {
  COLUMN_MAPPING_ID_KEY,
  COLUMN_MAPPING_PHYSICAL_NAME_KEY,
  type ColumnMappingMode,
  type DataType,
  type PrimitiveType,
  type StructField,
} from '../protocol/schema.js'
import { sqlIdent, sqlString } from './duckdb-runtime.js'
import { duckType } from './duckdb-types.js'

/** Default size of new files (`WriteTarget.targetFileSize`). */
export const DEFAULT_TARGET_FILE_SIZE = 128 * 1024 * 1024

/** Default `delta.dataSkippingNumIndexedCols`. */
export const DEFAULT_STATS_COLUMNS = 32

/** A top-level column as files store it. */
export interface LayoutColumn {
  /** Logical (table) name. */
  readonly name: string
  /** Name in the files and in stats and partition-value keys. */
  readonly physicalName: string
  readonly type: DataType
  readonly nullable: boolean
  /** DuckDB type, with physical names for nested struct fields. */
  readonly sqlType: string
  /** The Parquet field id existing files are read by, in column mapping mode `id`. */
  readonly fieldId?: number | undefined
}

/** A partition column; its type is always primitive. */
export interface PartitionColumn extends LayoutColumn {
  readonly type: PrimitiveType
}

/** A leaf column that gets statistics. */
export interface StatsLeaf {
  /** Physical name path, e.g. `['s', 'a']` for a nested field. */
  readonly physicalPath: readonly string[]
  readonly type: DataType
  /** Whether min/max are collected (orderable primitive types); nullCount always is. */
  readonly minMax: boolean
}

/** Everything a write needs to know about the target, derived and checked once. */
export interface WriteLayout {
  /** Columns stored in files, in schema order (partition and void columns excluded). */
  readonly dataColumns: readonly LayoutColumn[]
  /** Partition columns, in partitioning order. */
  readonly partitionColumns: readonly PartitionColumn[]
  /** Top-level columns of type void: never stored; rows may only hold null for them. */
  readonly voidColumns: readonly string[]
  /** The `FIELD_IDS` option value of DuckDB's COPY, or undefined when no field has an id. */
  readonly fieldIdsSql: string | undefined
  readonly statsLeaves: readonly StatsLeaf[]
  readonly targetFileSize: number
  /** `''` or a relative key ending in `/`. */
  readonly pathPrefix: string
  readonly columnMappingMode: ColumnMappingMode
}

/**
 * Checks a write target and derives its layout.
 *
 * @param target - the write target
 * @returns the layout
 * @throws {InvalidArgumentError} for unknown or non-primitive partition columns, a table whose
 *   columns are all partition columns, a field without its column-mapping physical name (or id,
 *   in id mode), or an invalid size, stats setting or path prefix
 * @throws {UnsupportedError} when the schema has a variant column
 */
export function planWriteLayout(target: WriteTarget): WriteLayout {
  const mode = target.columnMappingMode
  if (mode !== 'none' && mode !== 'name' && mode !== 'id') {
    throw new InvalidArgumentError(`Unknown column mapping mode '${String(mode)}'`, {
      argument: 'columnMappingMode',
      hint: "Use 'none', 'name' or 'id'.",
    })
  }
  for (const f of target.schema.fields) rejectVariant(f.type, f.name)

  const partitionNames = target.partitionColumns.map((p) => p.toLowerCase())
  const partitionColumns = target.partitionColumns.map((name): PartitionColumn => {
    const field = target.schema.fields.find((f) => f.name.toLowerCase() === name.toLowerCase())
    if (field === undefined) {
      throw new InvalidArgumentError(`Partition column '${name}' is not in the table schema`, {
        argument: 'partitionColumns',
      })
    }
    if (typeof field.type !== 'string' || field.type === 'void') {
      throw new InvalidArgumentError(
        `Partition column '${name}' has type ${typeof field.type === 'string' ? field.type : field.type.type}; partition columns must have a primitive type`,
        { argument: 'partitionColumns' },
      )
    }
    return Object.freeze({ ...layoutColumn(field, mode), type: field.type })
  })
  if (new Set(partitionNames).size !== partitionNames.length) {
    throw new InvalidArgumentError('A partition column is listed twice', { argument: 'partitionColumns' })
  }

  const dataFields = target.schema.fields.filter(
    (f) => !partitionNames.includes(f.name.toLowerCase()) && f.type !== 'void',
  )
  if (dataFields.length === 0) {
    throw new InvalidArgumentError(
      'Cannot write data files: every column of the table is a partition column',
      {
        argument: 'schema',
        hint: 'Keep at least one column out of the partitioning.',
      },
    )
  }
  const dataColumns = dataFields.map((f) => Object.freeze(layoutColumn(f, mode)))

  const fieldIdEntries = dataFields
    .map((f) => fieldIdEntry(f, mode))
    .filter((e): e is string => e !== undefined)

  return Object.freeze({
    dataColumns: Object.freeze(dataColumns),
    partitionColumns: Object.freeze(partitionColumns),
    voidColumns: Object.freeze(target.schema.fields.filter((f) => f.type === 'void').map((f) => f.name)),
    fieldIdsSql: fieldIdEntries.length > 0 ? `{${fieldIdEntries.join(', ')}}` : undefined,
    statsLeaves: Object.freeze(selectStatsLeaves(dataFields, target, mode)),
    targetFileSize: checkTargetFileSize(target.targetFileSize),
    pathPrefix: checkPathPrefix(target.pathPrefix),
    columnMappingMode: mode,
  })
}

/**
 * The name a field has in data files, stats and partition-value keys.
 *
 * @param field - a schema field
 * @param mode - the table's column mapping mode
 * @returns the logical name without mapping, else the physical name from the field metadata
 * @throws {InvalidArgumentError} when the table is mapped and the field has no physical name
 */
export function physicalNameOf(field: StructField, mode: ColumnMappingMode): string {
  if (mode === 'none') return field.name
  const phys = field.metadata[COLUMN_MAPPING_PHYSICAL_NAME_KEY]
  if (typeof phys !== 'string' || phys === '') {
    throw new InvalidArgumentError(
      `Column '${field.name}' has no ${COLUMN_MAPPING_PHYSICAL_NAME_KEY} although the table uses column mapping mode '${mode}'`,
      {
        argument: 'schema',
        hint: 'Every field of a column-mapped schema, nested ones included, needs its physical name.',
      },
    )
  }
  return phys
}

/**
 * The DuckDB type of a Delta type as files store it: struct fields under their physical names.
 *
 * @param type - a Delta data type
 * @param mode - the table's column mapping mode
 * @returns DuckDB type text
 * @throws {InvalidArgumentError} when a nested field lacks its physical name
 */
export function physicalDuckType(type: DataType, mode: ColumnMappingMode): string {
  if (typeof type === 'string') return duckType(type)
  switch (type.type) {
    case 'struct':
      return `STRUCT(${type.fields.map((f) => `${sqlIdent(physicalNameOf(f, mode))} ${physicalDuckType(f.type, mode)}`).join(', ')})`
    case 'array':
      return `${physicalDuckType(type.elementType, mode)}[]`
    case 'map':
      return `MAP(${physicalDuckType(type.keyType, mode)}, ${physicalDuckType(type.valueType, mode)})`
  }
}

/**
 * SQL that gives a value read from data files the table's logical struct field names: struct
 * fields are stored under their column-mapping physical names, and DuckDB casts structs by field
 * name, so the value is rebuilt field by field (through arrays and maps too). A type without
 * mapped struct fields is `sql` itself.
 *
 * @param sql - SQL of the value as files store it
 * @param type - its Delta type, fields carrying their physical names where the table maps them
 * @param depth - nesting depth of the lambdas around it (names their variables apart)
 * @returns SQL of the same value with logical field names
 */
export function logicalStructSql(sql: string, type: DataType, depth = 0): string {
  if (!hasMappedStruct(type)) return sql
  if (typeof type === 'string') return sql
  switch (type.type) {
    case 'struct': {
      const fields = type.fields.map((f) => {
        const phys = f.metadata[COLUMN_MAPPING_PHYSICAL_NAME_KEY]
        const stored = typeof phys === 'string' && phys !== '' ? phys : f.name
        return `${sqlIdent(f.name)} := ${logicalStructSql(`struct_extract(${sql}, ${sqlString(stored)})`, f.type, depth)}`
      })
      return `CASE WHEN (${sql}) IS NULL THEN NULL ELSE struct_pack(${fields.join(', ')}) END`
    }
    case 'array': {
      const e = `__e${depth}`
      return `list_transform(${sql}, lambda ${e}: ${logicalStructSql(e, type.elementType, depth + 1)})`
    }
    case 'map': {
      const e = `__e${depth}`
      const key = logicalStructSql(`struct_extract(${e}, 'key')`, type.keyType, depth + 1)
      const value = logicalStructSql(`struct_extract(${e}, 'value')`, type.valueType, depth + 1)
      return `map_from_entries(list_transform(map_entries(${sql}), lambda ${e}: struct_pack(key := ${key}, value := ${value})))`
    }
  }
}

/**
 * Whether min/max statistics are kept for a type: numbers, decimals, strings, dates and
 * timestamps (Delta's skipping-eligible types), not booleans, binary or complex types.
 *
 * @param type - a Delta data type
 * @returns true for an orderable primitive type
 */
export function hasMinMaxStats(type: DataType): boolean {
  if (typeof type !== 'string') return false
  return type !== 'boolean' && type !== 'binary' && type !== 'void' && type !== 'variant'
}

// === Private helpers ===

function layoutColumn(field: StructField, mode: ColumnMappingMode): LayoutColumn {
  return {
    name: field.name,
    physicalName: physicalNameOf(field, mode),
    type: field.type,
    nullable: field.nullable,
    sqlType: physicalDuckType(field.type, mode),
    ...(mode === 'id' ? { fieldId: fieldIdOf(field, mode) } : {}),
  }
}

function rejectVariant(type: DataType, path: string): void {
  if (type === 'variant') {
    throw new UnsupportedError(`Column '${path}' has type variant, which this library cannot write`)
  }
  if (typeof type === 'string') return
  switch (type.type) {
    case 'struct':
      for (const f of type.fields) rejectVariant(f.type, `${path}.${f.name}`)
      return
    case 'array':
      rejectVariant(type.elementType, `${path}[]`)
      return
    case 'map':
      rejectVariant(type.keyType, `${path}.key`)
      rejectVariant(type.valueType, `${path}.value`)
  }
}

function fieldIdOf(field: StructField, mode: ColumnMappingMode): number | undefined {
  if (mode === 'none') return undefined
  const raw = field.metadata[COLUMN_MAPPING_ID_KEY]
  const id = typeof raw === 'bigint' ? Number(raw) : raw
  if (typeof id === 'number' && Number.isSafeInteger(id)) return id
  if (mode === 'id') {
    throw new InvalidArgumentError(
      `Column '${field.name}' has no ${COLUMN_MAPPING_ID_KEY} although the table uses column mapping mode 'id'`,
      { argument: 'schema' },
    )
  }
  return undefined
}

// Parquet field ids are what id-mode readers resolve columns by; Spark writes them in name mode
// too, so they are written whenever the schema carries them.
function fieldIdEntry(field: StructField, mode: ColumnMappingMode): string | undefined {
  const id = fieldIdOf(field, mode)
  const nested = nestedFieldIds(field.type, mode)
  const key = sqlString(physicalNameOf(field, mode))
  if (nested.length === 0) return id === undefined ? undefined : `${key}: ${id}`
  const own = id === undefined ? [] : [`__duckdb_field_id: ${id}`]
  return `${key}: {${[...own, ...nested].join(', ')}}`
}

function nestedFieldIds(type: DataType, mode: ColumnMappingMode): string[] {
  if (typeof type === 'string') return []
  const wrap = (name: string, inner: DataType): string[] => {
    const entries = nestedFieldIds(inner, mode)
    return entries.length === 0 ? [] : [`${name}: {${entries.join(', ')}}`]
  }
  switch (type.type) {
    case 'struct':
      return type.fields.map((f) => fieldIdEntry(f, mode)).filter((e): e is string => e !== undefined)
    case 'array':
      return wrap('element', type.elementType)
    case 'map':
      return [...wrap('key', type.keyType), ...wrap('value', type.valueType)]
  }
}

function selectStatsLeaves(
  dataFields: readonly StructField[],
  target: WriteTarget,
  mode: ColumnMappingMode,
): StatsLeaf[] {
  const all: { logical: string[]; leaf: StatsLeaf }[] = []
  const walk = (fields: readonly StructField[], logical: string[], physical: string[]): void => {
    for (const f of fields) {
      const lp = [...logical, f.name]
      const pp = [...physical, physicalNameOf(f, mode)]
      if (typeof f.type === 'object' && f.type.type === 'struct') walk(f.type.fields, lp, pp)
      else if (f.type !== 'void') {
        all.push({
          logical: lp,
          leaf: Object.freeze({
            physicalPath: Object.freeze(pp),
            type: f.type,
            minMax: hasMinMaxStats(f.type),
          }),
        })
      }
    }
  }
  walk(dataFields, [], [])

  if (target.statsColumnPaths !== undefined) {
    const wanted = target.statsColumnPaths.map((p) => p.map((s) => s.toLowerCase()))
    const isSelected = (logical: readonly string[]): boolean =>
      wanted.some((w) => w.length <= logical.length && w.every((s, i) => s === logical[i]?.toLowerCase()))
    return all.filter((e) => isSelected(e.logical)).map((e) => e.leaf)
  }
  const n = target.statsColumns ?? DEFAULT_STATS_COLUMNS
  if (!Number.isSafeInteger(n)) {
    throw new InvalidArgumentError(`statsColumns must be an integer, got ${n}`, { argument: 'statsColumns' })
  }
  return (n < 0 ? all : all.slice(0, n)).map((e) => e.leaf)
}

function checkTargetFileSize(size: number | undefined): number {
  if (size === undefined) return DEFAULT_TARGET_FILE_SIZE
  if (!Number.isSafeInteger(size) || size <= 0) {
    throw new InvalidArgumentError(`targetFileSize must be a positive integer number of bytes, got ${size}`, {
      argument: 'targetFileSize',
    })
  }
  return size
}

function checkPathPrefix(prefix: string | undefined): string {
  if (prefix === undefined || prefix === '') return ''
  const segments = prefix.split('/')
  const valid =
    prefix.endsWith('/') &&
    !prefix.includes('\\') &&
    !prefix.includes('\0') &&
    segments.slice(0, -1).every((s) => s !== '' && s !== '.' && s !== '..') &&
    !segments.slice(0, -1).includes('_delta_log')
  if (!valid) {
    throw new InvalidArgumentError(
      `Invalid pathPrefix '${prefix}': expected a relative directory key ending in '/', outside _delta_log`,
      { argument: 'pathPrefix' },
    )
  }
  return prefix
}

function hasMappedStruct(type: DataType): boolean {
  if (typeof type === 'string') return false
  switch (type.type) {
    case 'struct':
      return type.fields.some(
        (f) => typeof f.metadata[COLUMN_MAPPING_PHYSICAL_NAME_KEY] === 'string' || hasMappedStruct(f.type),
      )
    case 'array':
      return hasMappedStruct(type.elementType)
    case 'map':
      return hasMappedStruct(type.keyType) || hasMappedStruct(type.valueType)
  }
}
