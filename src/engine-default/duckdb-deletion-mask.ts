import { type DuckDBAppender, DuckDBBitValue } from '@duckdb/node-api'
import type { DataFileRef, DeletedRowSet } from '../engine/data-plane.js'

/**
 * Positions a mask can hold are below this: `get_bit` takes a 32-bit index, and a mask runs up to
 * a byte past its last deleted position.
 */
export const MASK_POSITION_LIMIT = 2 ** 31 - 8

/**
 * A file's deleted positions as the data plane reads them: from the file's set when it has one,
 * so that no array of them is ever built, else from a list of positions (matched rows, or a
 * deletion vector an engine's caller expanded itself).
 */
export interface DeletedPositions {
  /** Number of positions. */
  readonly count: number
  /** The largest position (past 2^53 it is rounded, never below the true value), -1 when empty. */
  readonly last: number
  /** Number of distinct positions below `end`. */
  countBelow(end: number): number
  /** Calls `f` with each position, ascending for a set, in list order for a list. */
  forEach(f: (position: number) => void): void
}

/**
 * The deleted positions of a file, or `undefined` when it has none.
 *
 * @param ref - the file's deleted row set or positions
 * @returns a view that reads the set when there is one, the list otherwise
 */
export function deletedPositionsOf(
  ref: Pick<DataFileRef, 'deletedRows' | 'deletedRowSet'>,
): DeletedPositions | undefined {
  const set = ref.deletedRowSet
  if (set !== undefined) return set.cardinality === 0 ? undefined : setPositions(set)
  const list = ref.deletedRows
  return list === undefined || list.length === 0 ? undefined : listPositions(list)
}

/**
 * A list of positions as {@link DeletedPositions}.
 *
 * @param list - non-negative integer positions, in any order
 * @returns the view
 */
export function listPositions(list: ArrayLike<number>): DeletedPositions {
  let last = -1
  for (let k = 0; k < list.length; k++) last = Math.max(last, list[k] as number)
  return {
    count: list.length,
    last,
    countBelow(end: number): number {
      // Ascending lists (a deletion vector's) may repeat a position only next to itself.
      let n = 0
      for (let k = 0; k < list.length; k++) {
        const p = list[k] as number
        if (p < end && (k === 0 || p !== list[k - 1])) n++
      }
      return n
    },
    forEach(f: (position: number) => void): void {
      for (let k = 0; k < list.length; k++) f(list[k] as number)
    },
  }
}

function setPositions(set: DeletedRowSet): DeletedPositions {
  return {
    count: set.cardinality,
    last: Number(set.lastBigInt() ?? -1n),
    countBelow: (end: number) => set.rangeCardinality(0, end),
    forEach(f: (position: number) => void): void {
      for (const p of set.values()) f(p)
    },
  }
}

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
export function liveEndedDeletionMask(positions: ArrayLike<number> | DeletedPositions): DuckDBBitValue {
  const view = isView(positions) ? positions : listPositions(positions)
  // A BIT value's first byte counts the unused bits at its start: none here, so bit p is bit
  // (p % 8) of byte 1 + p / 8, most significant first. 1 + (last + 1) / 8 payload bytes hold at
  // least last + 2 bits, the last of them clear.
  const data = new Uint8Array(2 + ((view.last + 1) >>> 3))
  view.forEach((p) => {
    data[1 + (p >>> 3)] = (data[1 + (p >>> 3)] as number) | (0x80 >>> (p & 7))
  })
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
  groups: Iterable<{ readonly index: number; readonly positions: ArrayLike<number> | DeletedPositions }>,
): void {
  for (const g of groups) {
    appender.appendInteger(g.index)
    appender.appendBit(liveEndedDeletionMask(g.positions))
    appender.endRow()
  }
}

function isView(positions: ArrayLike<number> | DeletedPositions): positions is DeletedPositions {
  return typeof (positions as DeletedPositions).forEach === 'function' && 'countBelow' in positions
}
