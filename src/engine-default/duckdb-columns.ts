/**
 * DuckDB result chunks into {@link ColumnBatch}es: each column is read from its chunk vector
 * straight into a typed array (or, for the types without one, into an array of row values), so
 * no row object is built. The values are those `toJsValue` gives, in their columnar form (see
 * {@link ColumnVector}).
 */

import {
  type DuckDBDataChunk,
  DuckDBDateValue,
  DuckDBTimestampMillisecondsValue,
  DuckDBTimestampNanosecondsValue,
  DuckDBTimestampSecondsValue,
  DuckDBTimestampTZValue,
  DuckDBTimestampValue,
  type DuckDBValue,
  type DuckDBVector,
} from '@duckdb/node-api'
import type { ColumnBatch, ColumnVector } from '../engine/data-plane.js'
import { InternalError } from '../errors/index.js'
import type { DataType } from '../protocol/schema.js'
import { toJsValue } from './duckdb-values.js'

type TypedValues =
  | BigInt64Array
  | Int32Array
  | Int16Array
  | Int8Array
  | Float64Array
  | Float32Array
  | Uint8Array

/** How one column's values are read from a vector and kept. */
type Kind = 'bigint' | 'number' | 'boolean' | 'date' | 'timestamp' | 'values'

function kindOf(type: DataType): Kind {
  switch (type) {
    case 'long':
      return 'bigint'
    case 'integer':
    case 'short':
    case 'byte':
    case 'double':
    case 'float':
      return 'number'
    case 'boolean':
      return 'boolean'
    case 'date':
      return 'date'
    case 'timestamp':
    case 'timestamp_ntz':
      return 'timestamp'
    default:
      return 'values'
  }
}

function typedArray(type: DataType, length: number): TypedValues | undefined {
  switch (type) {
    case 'long':
    case 'timestamp':
    case 'timestamp_ntz':
      return new BigInt64Array(length)
    case 'integer':
    case 'date':
      return new Int32Array(length)
    case 'short':
      return new Int16Array(length)
    case 'byte':
      return new Int8Array(length)
    case 'double':
      return new Float64Array(length)
    case 'float':
      return new Float32Array(length)
    case 'boolean':
      return new Uint8Array(length)
    default:
      return undefined
  }
}

/** One column being filled, batch after batch. */
class ColumnBuilder {
  readonly #type: DataType
  readonly #kind: Kind
  readonly #capacity: number
  #typed: TypedValues | undefined
  #values: unknown[] | undefined
  #validity: Uint8Array | undefined
  #nulls = 0

  constructor(type: DataType, capacity: number) {
    this.#type = type
    this.#kind = kindOf(type)
    this.#capacity = capacity
    this.#reset()
  }

  #reset(): void {
    this.#typed = typedArray(this.#type, this.#capacity)
    this.#values = this.#typed === undefined ? new Array<unknown>(this.#capacity) : undefined
    this.#validity = undefined
    this.#nulls = 0
  }

  /** Marks row `at` null: the bitmap is made on the first null, every earlier row valid. */
  #setNull(at: number): void {
    if (this.#validity === undefined) {
      const bitmap = new Uint8Array((this.#capacity + 7) >> 3)
      bitmap.fill(0xff)
      this.#validity = bitmap
    }
    this.#validity[at >> 3] = (this.#validity[at >> 3] as number) & ~(1 << (at & 7))
    this.#nulls++
  }

  /** Reads `count` values of `vector` into rows `at` onward. */
  read(vector: DuckDBVector, count: number, at: number): void {
    const typed = this.#typed
    switch (this.#kind) {
      case 'bigint': {
        const out = typed as BigInt64Array
        for (let i = 0; i < count; i++) {
          const v = vector.getItem(i)
          if (v === null) this.#setNull(at + i)
          else out[at + i] = typeof v === 'bigint' ? v : BigInt(v as number)
        }
        return
      }
      case 'number': {
        const out = typed as Int32Array | Int16Array | Int8Array | Float64Array | Float32Array
        for (let i = 0; i < count; i++) {
          const v = vector.getItem(i)
          if (v === null) this.#setNull(at + i)
          else out[at + i] = typeof v === 'number' ? v : Number(v)
        }
        return
      }
      case 'boolean': {
        const out = typed as Uint8Array
        for (let i = 0; i < count; i++) {
          const v = vector.getItem(i)
          if (v === null) this.#setNull(at + i)
          else out[at + i] = v === true ? 1 : 0
        }
        return
      }
      case 'date': {
        const out = typed as Int32Array
        for (let i = 0; i < count; i++) {
          const v = vector.getItem(i)
          if (v === null) this.#setNull(at + i)
          else out[at + i] = v instanceof DuckDBDateValue ? v.days : mismatch(v, this.#type)
        }
        return
      }
      case 'timestamp': {
        const out = typed as BigInt64Array
        for (let i = 0; i < count; i++) {
          const v = vector.getItem(i)
          if (v === null) this.#setNull(at + i)
          else out[at + i] = timestampMicros(v, this.#type)
        }
        return
      }
      case 'values': {
        const out = this.#values as unknown[]
        const type = this.#type
        for (let i = 0; i < count; i++) {
          const v = toJsValue(vector.getItem(i), type)
          if (v === null) this.#setNull(at + i)
          out[at + i] = v
        }
        return
      }
    }
  }

  /** The first `length` rows as a column; the builder starts afresh. */
  take(length: number): ColumnVector {
    const validity = this.#validity?.subarray(0, (length + 7) >> 3)
    const values =
      this.#typed !== undefined
        ? this.#typed.subarray(0, length)
        : (this.#values as unknown[]).slice(0, length)
    const column = { values, validity, nullCount: this.#nulls }
    this.#reset()
    return column
  }
}

function timestampMicros(v: DuckDBValue, type: DataType): bigint {
  if (v instanceof DuckDBTimestampTZValue || v instanceof DuckDBTimestampValue) return v.micros
  if (v instanceof DuckDBTimestampMillisecondsValue) return v.millis * 1000n
  if (v instanceof DuckDBTimestampSecondsValue) return v.seconds * 1_000_000n
  if (v instanceof DuckDBTimestampNanosecondsValue) return v.nanos / 1000n
  if (v instanceof DuckDBDateValue) return BigInt(v.days) * 86_400_000_000n
  return mismatch(v, type)
}

function mismatch(v: DuckDBValue, type: DataType): never {
  throw new InternalError(`DuckDB returned ${String(v)} for a column of type ${JSON.stringify(type)}`)
}

/**
 * Gathers the columns of result chunks into batches of about `batchSize` rows.
 */
export class ColumnBatcher {
  readonly #builders: ColumnBuilder[]
  readonly #capacity: number
  #length = 0

  /**
   * @param types - the Delta type of each result column, in order
   * @param batchSize - rows per batch (at least one chunk's worth is kept together)
   * @param chunkRows - the largest chunk DuckDB returns
   */
  constructor(types: readonly DataType[], batchSize: number, chunkRows: number) {
    this.#capacity = Math.max(batchSize, chunkRows)
    this.#builders = types.map((t) => new ColumnBuilder(t, this.#capacity))
  }

  /** Whether `rows` more rows still fit the current batch. */
  fits(rows: number): boolean {
    return this.#length + rows <= this.#capacity
  }

  /** Rows gathered in the current batch. */
  get length(): number {
    return this.#length
  }

  /** Reads every column of a chunk into the current batch (which must have room: {@link fits}). */
  add(chunk: DuckDBDataChunk): void {
    const count = chunk.rowCount
    for (let c = 0; c < this.#builders.length; c++) {
      ;(this.#builders[c] as ColumnBuilder).read(chunk.getColumnVector(c), count, this.#length)
    }
    this.#length += count
  }

  /** The current batch; the next starts empty. */
  take(): ColumnBatch {
    const length = this.#length
    this.#length = 0
    return { length, columns: this.#builders.map((b) => b.take(length)) }
  }
}
