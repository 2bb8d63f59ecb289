/**
 * Delta types as Arrow types, the way delta-rs and delta-kernel-rs map them: `long` -> Int64,
 * `timestamp` -> Timestamp(microsecond, "UTC"), `timestamp_ntz` -> Timestamp(microsecond),
 * `date` -> Date32 (days), `decimal(p,s)` -> Decimal128(p, s), `binary` -> Binary, `string` ->
 * Utf8, struct -> Struct, array -> List with an `element` field, map -> Map with a `key_value`
 * entries struct of `key` and `value`.
 */

import {
  type DataType as ArrowDataType,
  Binary,
  Bool,
  DateDay,
  Decimal,
  Field,
  Float32,
  Float64,
  Int8,
  Int16,
  Int32,
  Int64,
  List,
  Map_,
  Null,
  Schema,
  Struct,
  TimestampMicrosecond,
  Utf8,
} from 'apache-arrow'
import { UnsupportedError } from '../errors/index.js'
import { type DataType, decimalParts, type StructField } from '../protocol/schema.js'

/** The name of a list's element field (delta-kernel-rs `LIST_ARRAY_ROOT`). */
export const LIST_ELEMENT = 'element'
/** The name of a map's entries field, and of its key and value fields (delta-kernel-rs). */
export const MAP_ENTRIES = 'key_value'

/**
 * The Arrow schema of Delta columns.
 *
 * @param fields - the columns, in order
 * @returns the schema, each field nullable as its column
 * @throws {UnsupportedError} for a type Arrow cannot hold here
 */
export function arrowSchemaOf(fields: readonly StructField[]): Schema {
  return new Schema(fields.map(arrowFieldOf))
}

/** The Arrow field of one Delta column. */
export function arrowFieldOf(field: StructField): Field {
  return new Field(field.name, arrowTypeOf(field.type), field.nullable)
}

/**
 * The Arrow type of a Delta type.
 *
 * @throws {UnsupportedError} for a type without an Arrow counterpart here
 */
export function arrowTypeOf(type: DataType): ArrowDataType {
  if (typeof type !== 'string') {
    switch (type.type) {
      case 'struct':
        return new Struct(type.fields.map(arrowFieldOf))
      case 'array':
        return new List(new Field(LIST_ELEMENT, arrowTypeOf(type.elementType), type.containsNull))
      case 'map':
        return new Map_(
          // biome-ignore lint/suspicious/noExplicitAny: Map_ types its entries by its key and value types
          new Field<any>(
            MAP_ENTRIES,
            new Struct([
              new Field('key', arrowTypeOf(type.keyType), false),
              new Field('value', arrowTypeOf(type.valueType), type.valueContainsNull),
            ] as Field[]),
            false,
          ),
        )
    }
  }
  switch (type) {
    case 'byte':
      return new Int8()
    case 'short':
      return new Int16()
    case 'integer':
      return new Int32()
    case 'long':
      return new Int64()
    case 'float':
      return new Float32()
    case 'double':
      return new Float64()
    case 'boolean':
      return new Bool()
    case 'string':
      return new Utf8()
    case 'binary':
      return new Binary()
    case 'date':
      return new DateDay()
    case 'timestamp':
      return new TimestampMicrosecond('UTC')
    case 'timestamp_ntz':
      return new TimestampMicrosecond()
    case 'void':
      return new Null()
  }
  const parts = decimalParts(type)
  if (parts === undefined) throw new UnsupportedError(`Delta type ${type} has no Arrow type here`)
  return new Decimal(parts.scale, parts.precision, 128)
}
