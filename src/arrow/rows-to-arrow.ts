/**
 * Rows as the data plane returns them (see `DataPlane`) into Arrow record batches: each column
 * is written straight into the buffers of its Arrow type (no per-value builder), nested columns
 * by recursing into their children.
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
import { parseDecimal } from '../expressions/decimal.js'
import { parseDate, parseTimestamp } from '../expressions/temporal.js'
import type { DataType, StructField } from '../protocol/schema.js'
import { decimalParts } from '../protocol/schema.js'
import { arrowSchemaOf, arrowTypeOf } from './arrow-schema.js'

/**
 * One record batch of rows.
 *
 * @param rows - the rows, keyed by column name
 * @param fields - the columns to take, in order
 * @param schema - their Arrow schema ({@link arrowSchemaOf} of `fields`), shared by the batches
 * @returns the batch
 * @throws {InternalError} when a value is not of its column's representation
 */
export function rowsToRecordBatch(
  rows: readonly Readonly<Record<string, unknown>>[],
  fields: readonly StructField[],
  schema: Schema = arrowSchemaOf(fields),
): RecordBatch {
  const children = fields.map((f, i) => {
    const values = new Array<unknown>(rows.length)
    for (let r = 0; r < rows.length; r++) values[r] = (rows[r] as Record<string, unknown>)[f.name]
    return columnData(f.type, schema.fields[i]?.type ?? arrowTypeOf(f.type), values)
  })
  const data = makeData({
    type: new StructType_(schema.fields) as Struct,
    length: rows.length,
    nullCount: 0,
    children,
  })
  return new RecordBatch(schema, data)
}

/** The validity bitmap of `values` (undefined when none is null) and the null count. */
function validity(values: readonly unknown[]): { bitmap: Uint8Array | undefined; nulls: number } {
  let nulls = 0
  for (let i = 0; i < values.length; i++) if (values[i] == null) nulls++
  if (nulls === 0) return { bitmap: undefined, nulls }
  const bitmap = new Uint8Array((values.length + 7) >> 3)
  for (let i = 0; i < values.length; i++) {
    if (values[i] != null) bitmap[i >> 3] = (bitmap[i >> 3] as number) | (1 << (i & 7))
  }
  return { bitmap, nulls }
}

/**
 * One column of row values as Arrow data of its type.
 *
 * @param type - the column's Delta type
 * @param arrowType - its Arrow type ({@link arrowTypeOf})
 * @param values - the values in the row representation, null for null
 * @throws {InternalError} when a value is not of the type's representation
 */
export function columnData(type: DataType, arrowType: ArrowDataType, values: readonly unknown[]): Data {
  const { bitmap, nulls } = validity(values)
  const base = { type: arrowType, length: values.length, nullCount: nulls, nullBitmap: bitmap }
  if (typeof type !== 'string') {
    switch (type.type) {
      case 'struct': {
        const childTypes = (arrowType as Struct).children
        const children = type.fields.map((f, i) => {
          const childValues = values.map((v) =>
            v == null ? null : (v as Readonly<Record<string, unknown>>)[f.name],
          )
          return columnData(f.type, (childTypes[i] as { type: ArrowDataType }).type, childValues)
        })
        // biome-ignore lint/suspicious/noExplicitAny: makeData's overloads are keyed by the Arrow type
        return makeData({ ...base, children } as any)
      }
      case 'array': {
        const offsets = new Int32Array(values.length + 1)
        const items: unknown[] = []
        for (let i = 0; i < values.length; i++) {
          const v = values[i]
          if (v != null) for (const item of v as readonly unknown[]) items.push(item)
          offsets[i + 1] = items.length
        }
        const childType = (arrowType.children[0] as { type: ArrowDataType }).type
        const child = columnData(type.elementType, childType, items)
        // biome-ignore lint/suspicious/noExplicitAny: see above
        return makeData({ ...base, valueOffsets: offsets, child } as any)
      }
      case 'map': {
        const offsets = new Int32Array(values.length + 1)
        const keys: unknown[] = []
        const vals: unknown[] = []
        for (let i = 0; i < values.length; i++) {
          const v = values[i]
          if (v != null) {
            for (const [k, x] of v instanceof Map ? v : Object.entries(v as object)) {
              keys.push(k)
              vals.push(x)
            }
          }
          offsets[i + 1] = keys.length
        }
        const entriesType = (arrowType.children[0] as { type: Struct }).type
        const [keyField, valueField] = entriesType.children as unknown as [
          { type: ArrowDataType },
          { type: ArrowDataType },
        ]
        const entries = makeData({
          type: entriesType,
          length: keys.length,
          nullCount: 0,
          children: [
            columnData(type.keyType, keyField.type, keys),
            columnData(type.valueType, valueField.type, vals),
          ],
        })
        // biome-ignore lint/suspicious/noExplicitAny: see above
        return makeData({ ...base, valueOffsets: offsets, child: entries } as any)
      }
    }
  }
  // biome-ignore lint/suspicious/noExplicitAny: see above
  const make = (extra: Record<string, unknown>): Data => makeData({ ...base, ...extra } as any)
  switch (type) {
    case 'long':
      return make({ data: fill(new BigInt64Array(values.length), values, toBigInt) })
    case 'integer':
      return make({ data: fill(new Int32Array(values.length), values, toNumber) })
    case 'short':
      return make({ data: fill(new Int16Array(values.length), values, toNumber) })
    case 'byte':
      return make({ data: fill(new Int8Array(values.length), values, toNumber) })
    case 'double':
      return make({ data: fill(new Float64Array(values.length), values, toNumber) })
    case 'float':
      return make({ data: fill(new Float32Array(values.length), values, toNumber) })
    case 'boolean': {
      const bits = new Uint8Array((values.length + 7) >> 3)
      for (let i = 0; i < values.length; i++)
        if (values[i] === true) bits[i >> 3] = (bits[i >> 3] as number) | (1 << (i & 7))
      return make({ data: bits })
    }
    case 'string':
      return make(utf8(values))
    case 'binary':
      return make(bytes(values))
    case 'date':
      return make({ data: fill(new Int32Array(values.length), values, toDays) })
    case 'timestamp':
    case 'timestamp_ntz':
      return make({ data: fill(new BigInt64Array(values.length), values, toMicros) })
    case 'void':
      return make({})
  }
  const parts = decimalParts(type)
  if (parts === undefined) throw new InternalError(`no Arrow column for Delta type ${type}`)
  const words = new Uint32Array(values.length * 4)
  for (let i = 0; i < values.length; i++) {
    const v = values[i]
    if (v == null) continue
    let unscaled = toUnscaled(v, parts.scale)
    for (let w = 0; w < 4; w++) {
      words[i * 4 + w] = Number(BigInt.asUintN(32, unscaled))
      unscaled >>= 32n
    }
  }
  return make({ data: words })
}

function fill<A extends { [i: number]: T }, T>(out: A, values: readonly unknown[], to: (v: unknown) => T): A {
  for (let i = 0; i < values.length; i++) {
    const v = values[i]
    if (v != null) out[i] = to(v)
  }
  return out
}

function mismatch(v: unknown, expected: string): never {
  throw new InternalError(`a scanned value is not ${expected}: ${typeof v}`)
}

function toBigInt(v: unknown): bigint {
  return typeof v === 'bigint' ? v : typeof v === 'number' ? BigInt(v) : mismatch(v, 'a long')
}

function toNumber(v: unknown): number {
  return typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : mismatch(v, 'a number')
}

function toDays(v: unknown): number {
  const days = typeof v === 'string' ? parseDate(v) : undefined
  return days ?? mismatch(v, 'a date')
}

function toMicros(v: unknown): bigint {
  if (v instanceof Date) return BigInt(v.getTime()) * 1000n
  const micros = typeof v === 'string' ? parseTimestamp(v)?.micros : undefined
  return micros ?? mismatch(v, 'a timestamp')
}

function toUnscaled(v: unknown, scale: number): bigint {
  const d = typeof v === 'string' ? parseDecimal(v) : undefined
  if (d === undefined) return mismatch(v, 'a decimal')
  return d.scale <= scale
    ? d.unscaled * 10n ** BigInt(scale - d.scale)
    : d.unscaled / 10n ** BigInt(d.scale - scale)
}

const encoder = new TextEncoder()

/** Offsets and UTF-8 bytes of string values; the buffer grows by doubling. */
function utf8(values: readonly unknown[]): { valueOffsets: Int32Array; data: Uint8Array } {
  const offsets = new Int32Array(values.length + 1)
  let buffer = new Uint8Array(Math.max(64, values.length * 16))
  let at = 0
  for (let i = 0; i < values.length; i++) {
    const v = values[i]
    if (v != null) {
      if (typeof v !== 'string') mismatch(v, 'a string')
      // At most 3 bytes per UTF-16 unit.
      if (at + v.length * 3 > buffer.length) {
        const grown = new Uint8Array(Math.max(buffer.length * 2, at + v.length * 3))
        grown.set(buffer.subarray(0, at))
        buffer = grown
      }
      at += encoder.encodeInto(v, buffer.subarray(at)).written
    }
    offsets[i + 1] = at
  }
  return { valueOffsets: offsets, data: buffer.subarray(0, at) }
}

function bytes(values: readonly unknown[]): { valueOffsets: Int32Array; data: Uint8Array } {
  const offsets = new Int32Array(values.length + 1)
  let total = 0
  for (let i = 0; i < values.length; i++) {
    const v = values[i]
    if (v != null && !(v instanceof Uint8Array)) mismatch(v, 'binary')
    total += v == null ? 0 : (v as Uint8Array).length
    offsets[i + 1] = total
  }
  const data = new Uint8Array(total)
  for (let i = 0; i < values.length; i++) {
    const v = values[i]
    if (v != null) data.set(v as Uint8Array, offsets[i] as number)
  }
  return { valueOffsets: offsets, data }
}
