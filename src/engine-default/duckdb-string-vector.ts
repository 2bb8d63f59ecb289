/**
 * The VARCHAR or BLOB column of a data chunk, filled in JavaScript and handed to DuckDB in bulk.
 *
 * DuckDB holds such a column as 16-byte `string_t` slots (`duckdb_string_t` in its C API): a
 * native-endian uint32 byte length, then either the bytes themselves when there are at most 12,
 * zero-padded, or a 4-byte prefix and a pointer into the vector's string heap. Short values are
 * written straight into a JavaScript copy of the slots, which crosses to DuckDB in one copy per
 * chunk; only longer values, whose bytes must live in DuckDB's heap, cost one native call each,
 * made after the copy so that it does not overwrite their slots. The slots of short values are
 * exactly what DuckDB's own assignment writes (length, bytes, zeros), so what is stored and
 * written out does not depend on which way a value took.
 */
import { DuckDBBlobValue, type DuckDBValue } from '@duckdb/node-api'
import duckdb, { type Vector } from '@duckdb/node-bindings'

/** Bytes of one `string_t`. */
const SLOT_BYTES = 16
/** The most bytes a `string_t` holds inline, after its 4-byte length. */
const INLINE_BYTES = 12

/** Whether this platform stores a uint64 least significant byte first, as DuckDB's validity words. */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1

/**
 * One string or blob column of a data chunk being filled, row by row in increasing order. A row
 * may be set again (a row abandoned half-way is refilled by the next one); the last value wins.
 */
export class StringVectorBuffer {
  readonly #blob: boolean
  readonly #slots: Uint8Array<ArrayBuffer>
  /** The slots' length words, in native byte order as DuckDB reads them. */
  readonly #lengths: Uint32Array
  /** DuckDB's validity words (bit `r % 64` of word `r / 64`, 1 = valid) as bytes. */
  readonly #validity: Uint8Array<ArrayBuffer>
  readonly #encoder = new TextEncoder()
  /** Rows whose value does not fit inline, ascending, and their values. */
  #longRows: number[] = []
  #longValues: DuckDBValue[] = []
  #hasNulls = false
  #lastRow = -1

  /**
   * @param rows - the chunk's capacity
   * @param blob - whether the column is BLOB (values are `DuckDBBlobValue`) rather than VARCHAR (strings)
   */
  constructor(rows: number, blob: boolean) {
    this.#blob = blob
    this.#slots = new Uint8Array(rows * SLOT_BYTES)
    this.#lengths = new Uint32Array(this.#slots.buffer)
    this.#validity = new Uint8Array(Math.ceil(rows / 64) * 8).fill(0xff)
  }

  /**
   * Sets the value of a row.
   *
   * @param row - the row, not below the last one set since the last {@link StringVectorBuffer.reset}
   * @param value - a string (VARCHAR) or `DuckDBBlobValue` (BLOB), or null
   */
  set(row: number, value: DuckDBValue): void {
    const base = row * SLOT_BYTES
    if (row === this.#lastRow) this.#forget(row, base)
    this.#lastRow = row
    if (value === null) {
      this.#setValid(row, false)
      this.#hasNulls = true
      return
    }
    if (this.#blob ? !this.#inlineBytes(value, base) : !this.#inlineText(value, base)) {
      this.#longRows.push(row)
      this.#longValues.push(value)
    }
  }

  /**
   * Writes the first `rows` rows into a chunk's vector of this column: the slots in one copy,
   * then each long value, then the validity when a row is null.
   *
   * @param vector - the column's vector in the chunk, sized for at least `rows` rows
   * @param rows - how many rows were set
   */
  flush(vector: Vector, rows: number): void {
    duckdb.copy_data_to_vector(vector, 0, this.#slots.buffer, this.#slots.byteOffset, rows * SLOT_BYTES)
    const longRows = this.#longRows
    const longValues = this.#longValues
    for (let k = 0; k < longRows.length; k++) {
      const row = longRows[k] as number
      // The calls DuckDB's Node API makes for a vector value, with their checks.
      if (this.#blob) {
        duckdb.vector_assign_string_element_len(vector, row, (longValues[k] as DuckDBBlobValue).bytes)
      } else duckdb.vector_assign_string_element(vector, row, longValues[k] as string)
    }
    if (this.#hasNulls) {
      duckdb.vector_ensure_validity_writable(vector)
      duckdb.copy_data_to_vector_validity(vector, 0, this.#validity.buffer, 0, this.#validity.byteLength)
    }
  }

  /** Empties the column for the next chunk. */
  reset(): void {
    // Zeroed slots are what an inline value's padding and a null row need.
    this.#slots.fill(0, 0, (this.#lastRow + 1) * SLOT_BYTES)
    if (this.#hasNulls) this.#validity.fill(0xff)
    this.#hasNulls = false
    this.#longRows = []
    this.#longValues = []
    this.#lastRow = -1
  }

  /** Undoes what setting `row` before did: its slot bytes, its long value, its null. */
  #forget(row: number, base: number): void {
    this.#slots.fill(0, base, base + SLOT_BYTES)
    if (this.#hasNulls) this.#setValid(row, true)
    const last = this.#longRows.length - 1
    if (last >= 0 && this.#longRows[last] === row) {
      this.#longRows.pop()
      this.#longValues.pop()
    }
  }

  #setValid(row: number, valid: boolean): void {
    const byte = (row >>> 6) * 8 + (LITTLE_ENDIAN ? (row >>> 3) & 7 : 7 - ((row >>> 3) & 7))
    const bit = 1 << (row & 7)
    const v = this.#validity
    v[byte] = valid ? (v[byte] as number) | bit : (v[byte] as number) & ~bit
  }

  /** Writes a string's UTF-8 bytes inline when they fit; false when they do not (or it is no string). */
  #inlineText(value: DuckDBValue, base: number): boolean {
    if (typeof value !== 'string') return false
    const n = value.length
    // UTF-8 takes at least one byte per UTF-16 unit, so more units than inline bytes never fit.
    if (n > INLINE_BYTES) return false
    const slots = this.#slots
    let i = 0
    for (; i < n; i++) {
      const c = value.charCodeAt(i)
      if (c >= 0x80) break
      slots[base + 4 + i] = c
    }
    if (i < n) {
      // Not ASCII: the encoder writes whole characters only, so a value it cannot finish does
      // not fit. A lone surrogate becomes U+FFFD, as in DuckDB's own conversion of the string.
      const { read, written } = this.#encoder.encodeInto(
        value,
        slots.subarray(base + 4, base + 4 + INLINE_BYTES),
      )
      if (read < n) {
        slots.fill(0, base + 4, base + SLOT_BYTES)
        return false
      }
      this.#lengths[base >>> 2] = written
      return true
    }
    this.#lengths[base >>> 2] = n
    return true
  }

  /** Writes a blob's bytes inline when they fit; false when they do not (or it is no blob). */
  #inlineBytes(value: DuckDBValue, base: number): boolean {
    if (!(value instanceof DuckDBBlobValue)) return false
    const bytes = value.bytes
    if (bytes.length > INLINE_BYTES) return false
    this.#slots.set(bytes, base + 4)
    this.#lengths[base >>> 2] = bytes.length
    return true
  }
}
