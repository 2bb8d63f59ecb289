/**
 * What a DML on a table with row tracking enabled keeps of the rows it takes out of each file it
 * touches, as it scans them (design beyond-rlc 7.5, "loser side"): their stable row ids, and
 * bounds on their values. Case 5b finds these ids again in the outputs of an OPTIMIZE that
 * relocated the file meanwhile; nothing here is read again from storage.
 */
import type { Expression } from '../expressions/index.js'

/** The rows a DML takes out of one file it read. */
export interface RemovedRows {
  /**
   * Their stable row ids (materialized value, else `baseRowId` + physical position, of the file
   * as the DML read it: rule S7), ascending and distinct.
   */
  readonly ids: BigInt64Array
  /** Whether these are every row of the file that was live when the DML read it. */
  readonly whole: boolean
  /**
   * A predicate over the table's data columns that every one of the rows satisfies (bounds of
   * their values), used only to exclude OPTIMIZE outputs that cannot hold them; `TRUE` when
   * nothing is known.
   */
  readonly bounds: Expression
}

/** What a DML kept of the rows it takes out, by the path of the file it read them from. */
export interface RemovedRowIds {
  readonly files: ReadonlyMap<string, RemovedRows>
  /**
   * How many rows of the DML's new files carry a preserved stable id (the images of updated rows
   * of an UPDATE or MERGE); each must be one of the ids taken out (id conservation).
   */
  readonly preservedImageRows: number
}

/**
 * Builds the record of one file's removed rows, sorting and checking the ids.
 *
 * @param ids - the stable ids, in any order
 * @param whole - whether they are every live row of the file
 * @param bounds - bounds on their values
 * @returns the record, or undefined when an id is missing or repeated (nothing can be trusted then)
 */
export function removedRows(
  ids: readonly (bigint | null)[],
  whole: boolean,
  bounds: Expression,
): RemovedRows | undefined {
  const sorted = new BigInt64Array(ids.length)
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]
    if (id === null || id === undefined) return undefined
    sorted[i] = id
  }
  // A typed array sorts by value.
  sorted.sort()
  for (let i = 1; i < sorted.length; i++) if (sorted[i] === sorted[i - 1]) return undefined
  return Object.freeze({ ids: sorted, whole, bounds })
}
