/**
 * Column batches from the data plane (see `ColumnBatch`) into Arrow record batches: a column the
 * data plane gives as a typed array becomes the Arrow buffer as it is (booleans are packed to
 * bits), and one given as row values is written as `rows-to-arrow` writes it, so both paths give
 * the same types and values.
 */

import {
  type DataType as ArrowDataType,
  type Data,
  makeData,
  RecordBatch,
  type Schema,
  type Struct,
  Struct as StructType_,
} from 'apache-arrow'
import { InternalError } from '../errors/index.js'
import type { StructField } from '../protocol/schema.js'
import { arrowSchemaOf, arrowTypeOf } from './arrow-schema.js'
import { columnData } from './rows-to-arrow.js'

/**
 * A column as the data plane's columnar scan gives it (`ColumnVector` of the engine): a typed
 * array for the fixed-width types (`long`, `timestamp`, `timestamp_ntz` as 64-bit integers, the
 * latter two in microseconds; `date` as days; booleans as bytes of 0 and 1), else the values in
 * the row representation.
 */
export interface ColumnVector {
  readonly values: ArrayBufferView | readonly unknown[]
  /** Arrow validity bitmap; absent when no value is null. */
  readonly validity?: Uint8Array | undefined
  readonly nullCount: number
}

/** Rows as columns, one per field (`ColumnBatch` of the engine). */
export interface ColumnBatch {
  readonly length: number
  readonly columns: readonly ColumnVector[]
}

/**
 * One record batch of a column batch.
 *
 * @param batch - the columns, one per field, in order
 * @param fields - the fields they are
 * @param schema - their Arrow schema ({@link arrowSchemaOf} of `fields`), shared by the batches
 * @returns the batch
 * @throws {InternalError} when the batch does not have one column per field, or a column's values
 *   are not of its type's representation
 */
export function columnBatchToRecordBatch(
  batch: ColumnBatch,
  fields: readonly StructField[],
  schema: Schema = arrowSchemaOf(fields),
): RecordBatch {
  if (batch.columns.length !== fields.length) {
    throw new InternalError(`a column batch has ${batch.columns.length} columns for ${fields.length} fields`)
  }
  const children = fields.map((f, i) =>
    columnVectorData(
      f,
      schema.fields[i]?.type ?? arrowTypeOf(f.type),
      batch.columns[i] as ColumnVector,
      batch.length,
    ),
  )
  const data = makeData({
    type: new StructType_(schema.fields) as Struct,
    length: batch.length,
    nullCount: 0,
    children,
  })
  return new RecordBatch(schema, data)
}

function columnVectorData(
  field: StructField,
  arrowType: ArrowDataType,
  column: ColumnVector,
  length: number,
): Data {
  const values = column.values
  if (Array.isArray(values)) {
    if (values.length !== length) throw lengthMismatch(field, values.length, length)
    return columnData(field.type, arrowType, values)
  }
  const view = values as ArrayBufferView & { readonly length: number }
  if (view.length !== length) throw lengthMismatch(field, view.length, length)
  const base = { type: arrowType, length, nullCount: column.nullCount, nullBitmap: column.validity }
  // biome-ignore lint/suspicious/noExplicitAny: makeData's overloads are keyed by the Arrow type
  const make = (data: ArrayBufferView): Data => makeData({ ...base, data } as any)
  switch (field.type) {
    case 'long':
    case 'timestamp':
    case 'timestamp_ntz':
      return make(expect(view, BigInt64Array, field))
    case 'integer':
    case 'date':
      return make(expect(view, Int32Array, field))
    case 'short':
      return make(expect(view, Int16Array, field))
    case 'byte':
      return make(expect(view, Int8Array, field))
    case 'double':
      return make(expect(view, Float64Array, field))
    case 'float':
      return make(expect(view, Float32Array, field))
    case 'boolean': {
      const bytes = expect(view, Uint8Array, field)
      const bits = new Uint8Array((length + 7) >> 3)
      for (let i = 0; i < length; i++)
        if (bytes[i] === 1) bits[i >> 3] = (bits[i >> 3] as number) | (1 << (i & 7))
      return make(bits)
    }
    default:
      throw new InternalError(
        `column '${field.name}' of type ${JSON.stringify(field.type)} came as a typed array`,
      )
  }
}

function expect<T extends ArrayBufferView>(
  values: ArrayBufferView,
  kind: abstract new (...args: never[]) => T,
  field: StructField,
): T {
  if (values instanceof kind) return values
  throw new InternalError(`column '${field.name}' came as ${values.constructor.name}, not ${kind.name}`)
}

function lengthMismatch(field: StructField, values: number, rows: number): InternalError {
  return new InternalError(`column '${field.name}' has ${values} values in a batch of ${rows} rows`)
}
