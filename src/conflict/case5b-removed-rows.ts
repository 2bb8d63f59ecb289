/**
 * What a DML on a table with row tracking enabled keeps of the rows it takes out of each file it
 * touches, as it scans them (design beyond-rlc 7.5, "loser side"): their stable row ids, and
 * bounds on their values. Case 5b finds these ids again in the outputs of an OPTIMIZE that
 * relocated the file meanwhile; nothing here is read again from storage.
 */
import {
  and,
  col,
  conjunction,
  disjunction,
  type Expression,
  ge,
  isNull,
  type Literal,
  le,
  lit,
} from '../expressions/ast.js'
import { compareValues, valueOfLiteral } from '../expressions/values.js'

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
   * Bounds of the rows' values on some data columns (a column not listed is unbounded), used
   * only to exclude OPTIMIZE outputs that cannot hold them.
   */
  readonly bounds: readonly ColumnBounds[]
}

/** Bounds of one column's values among some rows. */
export interface ColumnBounds {
  /** The column's logical name. */
  readonly column: string
  /** The smallest and largest non-null value; absent when every value is null. */
  readonly range?: { readonly low: Literal; readonly high: Literal } | undefined
  /** Whether some value is null. */
  readonly nulls: boolean
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
 * @param bounds - bounds of their values
 * @returns the record, or undefined when an id is missing or repeated (nothing can be trusted then)
 */
export function removedRows(
  ids: readonly (bigint | null)[],
  whole: boolean,
  bounds: readonly ColumnBounds[],
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
  return Object.freeze({ ids: sorted, whole, bounds: Object.freeze([...bounds]) })
}

/**
 * The bounds of the union of several row sets: per column bounded in every set, the widest
 * range and whether any value is null. A column whose values cannot be compared is left out
 * (unbounded).
 *
 * @param sets - the bounds of each set
 * @returns the bounds of their union
 */
export function unionOfBounds(sets: readonly (readonly ColumnBounds[])[]): ColumnBounds[] {
  if (sets.length === 0) return []
  const out: ColumnBounds[] = []
  for (const first of sets[0]!) {
    let range = first.range
    let nulls = first.nulls
    let bounded = true
    for (const other of sets.slice(1)) {
      const b = other.find((x) => x.column === first.column)
      if (b === undefined) {
        bounded = false
        break
      }
      nulls ||= b.nulls
      if (b.range === undefined) continue
      if (range === undefined) {
        range = b.range
        continue
      }
      try {
        const low = compare(b.range.low, range.low) < 0 ? b.range.low : range.low
        const high = compare(b.range.high, range.high) > 0 ? b.range.high : range.high
        range = { low, high }
      } catch {
        bounded = false
        break
      }
    }
    if (bounded) out.push(Object.freeze({ column: first.column, range, nulls }))
  }
  return out
}

/**
 * A predicate every row within the bounds satisfies: per bounded column, `c` between the range's
 * ends, or `c IS NULL` where some value is null.
 *
 * @param bounds - the bounds
 * @returns the conjunction; `TRUE` when no column is bounded
 */
export function boundsPredicate(bounds: readonly ColumnBounds[]): Expression {
  const parts: Expression[] = []
  for (const b of bounds) {
    const c = col(b.column)
    const admitted: Expression[] = []
    if (b.range !== undefined) admitted.push(and(ge(c, b.range.low), le(c, b.range.high)))
    if (b.nulls) admitted.push(isNull(c))
    parts.push(admitted.length === 0 ? lit(false) : disjunction(admitted))
  }
  return parts.length === 0 ? lit(true) : conjunction(parts)
}

function compare(a: Literal, b: Literal): number {
  const va = valueOfLiteral(a)
  const vb = valueOfLiteral(b)
  if (va === null || vb === null) throw new RangeError('a bound is null')
  return compareValues(va, vb)
}
