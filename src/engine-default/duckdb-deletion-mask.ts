import { type DuckDBAppender, DuckDBBitValue } from '@duckdb/node-api'

/**
 * Positions a mask can hold are below this: `get_bit` takes a 32-bit index, and a mask runs up to
 * a byte past its last deleted position.
 */
export const MASK_POSITION_LIMIT = 2 ** 31 - 8

/**
 * The deleted positions of one file as a DuckDB `BIT` value whose last bit is always clear: bit
 * `p` (counted from the first, most significant bit) is set when position `p` is deleted, and the
 * value runs at least one bit past the last deleted position, rounded up to whole bytes.
 *
 * The clear last bit lets the live-rows filter test every row with one
 * `get_bit(mask, least(position, bit_length(mask) - 1))`: a position past the mask lands on that
 * clear bit, so no second test (and no disjunction for DuckDB to evaluate) is needed for it.
 *
 * @param positions - deleted row positions (non-negative integers below {@link MASK_POSITION_LIMIT}, any order)
 * @returns the `BIT` value; `get_bit(mask, p) = 1` exactly for the given positions
 */
export function liveEndedDeletionMask(positions: ArrayLike<number>): DuckDBBitValue {
  let last = -1
  for (let k = 0; k < positions.length; k++) last = Math.max(last, positions[k] as number)
  // A BIT value's first byte counts the unused bits at its start: none here, so bit p is bit
  // (p % 8) of byte 1 + p / 8, most significant first. 1 + (last + 1) / 8 payload bytes hold at
  // least last + 2 bits, the last of them clear.
  const data = new Uint8Array(2 + ((last + 1) >>> 3))
  for (let k = 0; k < positions.length; k++) {
    const p = positions[k] as number
    data[1 + (p >>> 3)] = (data[1 + (p >>> 3)] as number) | (0x80 >>> (p & 7))
  }
  return new DuckDBBitValue(data)
}

/**
 * Appends `(index, mask)` rows to an appender whose columns are `INTEGER` and `BIT`: one
 * {@link liveEndedDeletionMask} per file, so a file's deleted positions cost one value however
 * many there are.
 *
 * @param appender - an appender on a two-column `(INTEGER, BIT)` table
 * @param groups - per file: its index and its deleted positions (below {@link MASK_POSITION_LIMIT})
 */
export function appendLiveEndedMasks(
  appender: DuckDBAppender,
  groups: Iterable<{ readonly index: number; readonly positions: ArrayLike<number> }>,
): void {
  for (const g of groups) {
    appender.appendInteger(g.index)
    appender.appendBit(liveEndedDeletionMask(g.positions))
    appender.endRow()
  }
}
