/**
 * Arrow types as Delta types, the inverse of `arrow-schema.ts`: what an Arrow input declares its
 * columns to be, for a write that evolves the table schema from it (`schemaMode`). Unsigned
 * integers take the narrowest signed type that holds every value (UInt64 has none).
 */
import { type DataType as ArrowDataType, type Field, Precision, type Schema, Type } from 'apache-arrow'
import { UnsupportedError } from '../errors/index.js'
import { type DataType, decimalType, type StructField } from '../protocol/schema.js'

/**
 * The Delta columns of an Arrow schema, each nullable as its Arrow field.
 *
 * @param schema - the Arrow schema of the input
 * @throws {UnsupportedError} naming a column whose Arrow type Delta cannot hold
 */
export function deltaFieldsOfArrow(schema: Schema): StructField[] {
  return schema.fields.map((f) => deltaFieldOf(f, f.name))
}

function deltaFieldOf(field: Field, path: string): StructField {
  return Object.freeze({
    name: field.name,
    type: deltaTypeOfArrow(field.type, path),
    nullable: field.nullable,
    metadata: Object.freeze({}),
  })
}

/**
 * The Delta type of an Arrow type.
 *
 * @param type - the Arrow type
 * @param path - the column, for messages
 * @throws {UnsupportedError} for a type without a Delta counterpart
 */
export function deltaTypeOfArrow(type: ArrowDataType, path: string): DataType {
  // biome-ignore lint/suspicious/noExplicitAny: the fields read depend on the type id checked first
  const t = type as any
  switch (type.typeId) {
    case Type.Int: {
      const bits = t.bitWidth as number
      const signed = t.isSigned as boolean
      if (signed) return bits === 8 ? 'byte' : bits === 16 ? 'short' : bits === 32 ? 'integer' : 'long'
      if (bits === 8) return 'short'
      if (bits === 16) return 'integer'
      if (bits === 32) return 'long'
      break
    }
    case Type.Float:
      return t.precision === Precision.DOUBLE ? 'double' : 'float'
    case Type.Utf8:
    case Type.LargeUtf8:
      return 'string'
    case Type.Bool:
      return 'boolean'
    case Type.Binary:
    case Type.LargeBinary:
    case Type.FixedSizeBinary:
      return 'binary'
    case Type.Date:
      return 'date'
    case Type.Timestamp:
      return t.timezone === null || t.timezone === undefined ? 'timestamp_ntz' : 'timestamp'
    case Type.Decimal:
      return decimalType(t.precision as number, t.scale as number)
    case Type.Struct:
      return Object.freeze({
        type: 'struct',
        fields: Object.freeze((t.children as Field[]).map((c) => deltaFieldOf(c, `${path}.${c.name}`))),
      })
    case Type.List:
    case Type.FixedSizeList: {
      const element = (t.children as Field[])[0] as Field
      return Object.freeze({
        type: 'array',
        elementType: deltaTypeOfArrow(element.type, `${path}.element`),
        containsNull: element.nullable,
      })
    }
    case Type.Map: {
      const entries = (t.children as Field[])[0] as Field
      const [key, value] = (entries.type as { children: Field[] }).children as [Field, Field]
      return Object.freeze({
        type: 'map',
        keyType: deltaTypeOfArrow(key.type, `${path}.key`),
        valueType: deltaTypeOfArrow(value.type, `${path}.value`),
        valueContainsNull: value.nullable,
      })
    }
  }
  throw new UnsupportedError(
    `Arrow column '${path}' has type ${String(type)}, which a Delta table cannot hold`,
    {
      hint: 'Cast the column to a type Delta has (a signed integer, float, decimal, string, ...) before appending.',
    },
  )
}
