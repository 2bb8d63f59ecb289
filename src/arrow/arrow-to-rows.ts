/**
 * Arrow tables and record batches into the row objects `append` takes, so that Arrow input goes
 * through the same checks as rows: each value becomes the JavaScript form of its Arrow type
 * (Int64 -> bigint, Date32/Date64 -> `'YYYY-MM-DD'`, Timestamp -> ISO text, with `Z` when the
 * type has a time zone, Decimal -> decimal text with its scale, Binary -> Uint8Array, Struct ->
 * object, List -> array, Map -> Map), and the writer checks it against the table's column type.
 * Timestamps and decimals are read from their buffers, so no precision is lost on the way.
 */

import {
  type DataType as ArrowDataType,
  type Data,
  makeVector,
  RecordBatch,
  Table,
  Type,
  type Vector,
} from 'apache-arrow'
import { InvalidArgumentError } from '../errors/index.js'
import { formatDate, formatTimestamp } from '../expressions/temporal.js'

/** Arrow input `append` takes: a table, a record batch, or an (async) iterable of batches. */
export type ArrowInput = Table | RecordBatch | Iterable<RecordBatch> | AsyncIterable<RecordBatch>

/** Whether `value` is Arrow input rather than an array of row objects. */
export function isArrowInput(value: unknown): value is ArrowInput {
  if (value instanceof Table || value instanceof RecordBatch) return true
  // An array is rows, unless it holds record batches.
  if (Array.isArray(value)) return value.length > 0 && value.every((v) => v instanceof RecordBatch)
  if (value === null || typeof value !== 'object') return false
  return Symbol.asyncIterator in value || Symbol.iterator in value
}

/**
 * The record batches of Arrow input, one at a time.
 *
 * @throws {InvalidArgumentError} when the iterable yields something else than a RecordBatch
 */
export async function* recordBatchesOf(input: ArrowInput, argument: string): AsyncGenerator<RecordBatch> {
  if (input instanceof RecordBatch) {
    yield input
    return
  }
  if (input instanceof Table) {
    yield* input.batches
    return
  }
  let i = 0
  for await (const batch of input as AsyncIterable<unknown>) {
    if (!(batch instanceof RecordBatch)) {
      throw new InvalidArgumentError(
        `${argument}[${i}] must be an Arrow RecordBatch; got ${batch === null ? 'null' : typeof batch}`,
        {
          argument,
          hint: 'Pass an array of row objects, an Arrow Table, or an (async) iterable of RecordBatch.',
        },
      )
    }
    yield batch
    i++
  }
}

/**
 * The rows of a record batch, keyed by its field names.
 *
 * @throws {InvalidArgumentError} naming a column whose Arrow type has no Delta counterpart
 */
export function recordBatchToRows(batch: RecordBatch): Record<string, unknown>[] {
  const rows = new Array<Record<string, unknown>>(batch.numRows)
  for (let r = 0; r < batch.numRows; r++) rows[r] = {}
  batch.schema.fields.forEach((field, c) => {
    const column = batch.getChildAt(c) as Vector
    const read = readerOf(column.data[0] as Data, field.name)
    for (let r = 0; r < batch.numRows; r++) (rows[r] as Record<string, unknown>)[field.name] = read(r)
  })
  return rows
}

type Reader = (i: number) => unknown

/** A reader of the values of one chunk, nulls included. */
function readerOf(data: Data, column: string): Reader {
  const read = valueReaderOf(data, column)
  if (data.nullCount === 0) return read
  return (i) => (data.getValid(i) ? read(i) : null)
}

function valueReaderOf(data: Data, column: string): Reader {
  const type = data.type as ArrowDataType
  switch (type.typeId) {
    case Type.Null:
      return () => null
    case Type.Int: {
      const values = data.values as ArrayLike<number | bigint>
      // 64-bit integers are bigints (as long values are); narrower ones numbers.
      return (i) => values[i]
    }
    case Type.Float:
    case Type.Bool:
    case Type.Utf8:
    case Type.LargeUtf8:
    case Type.Binary:
    case Type.LargeBinary:
    case Type.FixedSizeBinary: {
      const vector = makeVector(data)
      return (i) => vector.get(i)
    }
    case Type.Date: {
      const values = data.values as Int32Array | BigInt64Array
      const days = (type as unknown as { unit: number }).unit === 0 // DateUnit.DAY
      return (i) => formatDate(days ? Number(values[i]) : Math.floor(Number(values[i]) / 86_400_000))
    }
    case Type.Timestamp: {
      const values = data.values as BigInt64Array
      const t = type as unknown as { unit: number; timezone?: string | null }
      const perMicro = [1_000_000n, 1_000n, 1n, 0n][t.unit] as bigint
      const zone = t.timezone
      const suffix = zone === undefined || zone === null || zone === '' ? '' : 'Z'
      return (i) => {
        const v = values[i] as bigint
        // Nanoseconds are truncated toward the past to microseconds, as Delta stores them.
        const micros = perMicro === 0n ? floorDiv(v, 1000n) : v * perMicro
        return `${formatTimestamp(micros)}${suffix}`
      }
    }
    case Type.Decimal: {
      const words = data.values as Uint32Array
      const { scale, bitWidth } = type as unknown as { scale: number; bitWidth: number }
      const stride = bitWidth / 32
      return (i) => {
        let unscaled = 0n
        for (let w = stride - 1; w >= 0; w--)
          unscaled = (unscaled << 32n) | BigInt(words[i * stride + w] as number)
        return decimalText(BigInt.asIntN(bitWidth, unscaled), scale)
      }
    }
    case Type.Struct: {
      const names = type.children.map((f: { name: string }) => f.name)
      const readers = data.children.map((child, c) => readerOf(child, `${column}.${names[c]}`))
      return (i) => {
        const o: Record<string, unknown> = {}
        for (let c = 0; c < readers.length; c++) o[names[c] as string] = (readers[c] as Reader)(i)
        return o
      }
    }
    case Type.List:
    case Type.LargeList: {
      const offsets = data.valueOffsets as ArrayLike<number | bigint>
      const item = readerOf(data.children[0] as Data, column)
      return (i) => {
        const out: unknown[] = []
        for (let j = Number(offsets[i]); j < Number(offsets[i + 1]); j++) out.push(item(j))
        return out
      }
    }
    case Type.FixedSizeList: {
      const size = (type as unknown as { listSize: number }).listSize
      const item = readerOf(data.children[0] as Data, column)
      return (i) => {
        const out: unknown[] = []
        for (let j = i * size; j < (i + 1) * size; j++) out.push(item(j))
        return out
      }
    }
    case Type.Map: {
      const offsets = data.valueOffsets as Int32Array
      const entries = data.children[0] as Data
      const key = readerOf(entries.children[0] as Data, column)
      const value = readerOf(entries.children[1] as Data, column)
      return (i) => {
        const out = new Map<unknown, unknown>()
        for (let j = offsets[i] as number; j < (offsets[i + 1] as number); j++) out.set(key(j), value(j))
        return out
      }
    }
    case Type.Dictionary: {
      const indices = data.values as ArrayLike<number | bigint>
      const dictionary = data.dictionary
      if (dictionary === undefined) return unsupported(type, column)
      const chunks = dictionary.data
      const read =
        chunks.length === 1 ? readerOf(chunks[0] as Data, column) : (j: number) => dictionary.get(j)
      return (i) => read(Number(indices[i]))
    }
    default:
      return unsupported(type, column)
  }
}

function unsupported(type: ArrowDataType, column: string): never {
  throw new InvalidArgumentError(
    `Arrow column '${column}' has type ${String(type)}, which Delta has no type for`,
    {
      argument: 'rows',
      hint: 'Cast it to a Delta-compatible Arrow type (Int, Float, Utf8, Binary, Bool, Date, Timestamp, Decimal, Struct, List, Map) before appending.',
    },
  )
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b
  return a % b !== 0n && a < 0n ? q - 1n : q
}

/** An unscaled decimal as text with exactly `scale` fraction digits. */
function decimalText(unscaled: bigint, scale: number): string {
  const negative = unscaled < 0n
  const digits = (negative ? -unscaled : unscaled).toString().padStart(scale + 1, '0')
  const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`
  return negative ? `-${text}` : text
}
