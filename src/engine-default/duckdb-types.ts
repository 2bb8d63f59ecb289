import { type DataType, decimalParts } from '../protocol/schema.js'
import { sqlIdent } from './duckdb-runtime.js'

/**
 * The DuckDB type that holds a Delta type exactly.
 *
 * `timestamp` (an instant) maps to TIMESTAMPTZ and `timestamp_ntz` to TIMESTAMP; the session
 * time zone is pinned to UTC, so both keep their microseconds unchanged.
 *
 * @param type - a Delta data type
 * @returns DuckDB type text
 */
export function duckType(type: DataType): string {
  if (typeof type === 'string') {
    const dec = decimalParts(type)
    if (dec) return `DECIMAL(${dec.precision}, ${dec.scale})`
    switch (type) {
      case 'string':
        return 'VARCHAR'
      case 'long':
        return 'BIGINT'
      case 'integer':
        return 'INTEGER'
      case 'short':
        return 'SMALLINT'
      case 'byte':
        return 'TINYINT'
      case 'float':
        return 'FLOAT'
      case 'double':
        return 'DOUBLE'
      case 'boolean':
        return 'BOOLEAN'
      case 'binary':
        return 'BLOB'
      case 'date':
        return 'DATE'
      case 'timestamp':
        return 'TIMESTAMPTZ'
      case 'timestamp_ntz':
        return 'TIMESTAMP'
      case 'void':
        return 'INTEGER'
      default:
        return 'VARCHAR'
    }
  }
  switch (type.type) {
    case 'struct':
      return `STRUCT(${type.fields.map((f) => `${sqlIdent(f.name)} ${duckType(f.type)}`).join(', ')})`
    case 'array':
      return `${duckType(type.elementType)}[]`
    case 'map':
      return `MAP(${duckType(type.keyType)}, ${duckType(type.valueType)})`
  }
}

/** Whether values of this type can be cast in SQL to the table type (primitives only). */
export function isPrimitive(type: DataType): type is Extract<DataType, string> {
  return typeof type === 'string'
}
