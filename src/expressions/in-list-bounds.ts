/**
 * IN-lists of known values, sorted once so that data skipping can test them against a file's
 * bounds with two binary searches instead of one comparison per item.
 *
 * A MERGE prunes the target's files with `key IN (k1, ..., k10000)`; comparing every item with
 * every file's bounds costs items x files. Sorted by the order `compareValues` gives values of one
 * tag, the items a file's bounds admit form one contiguous run, found in O(log n).
 *
 * The order is only valid against bounds of the items' own tag: `compareValues` of two values of
 * one tag is a total preorder (NaN above every number, -0 equal to 0, strings by code point), so
 * `lo <= p` and `p <= hi` are each monotone along the sorted items. Across tags (an integer list
 * against double bounds, strings against dates) the caller uses its per-item path.
 */

import { columnsOf, type Expression, type In } from './ast.js'
import { evaluateValue } from './evaluate-rows.js'
import { compareValues, type Value } from './values.js'

/** The known values of an IN-list, sorted and de-duplicated. */
export interface SortedInList {
  /** Some item is NULL. */
  readonly hasNull: boolean
  /** The tag every non-null item has; `undefined` when no item is non-null. */
  readonly tag: Value['t'] | undefined
  /** The distinct non-null items, ascending by `compareValues`. */
  readonly values: readonly Value[]
}

/** Per IN node (nodes are immutable): its sorted list, or null when it has none. */
const SORTED = new WeakMap<In, SortedInList | null>()

/**
 * The sorted list of an IN expression whose items are all known without a row (literals, or
 * expressions over literals only) and whose non-null items share one comparable tag. Computed
 * once per node.
 *
 * @param e - the IN expression
 * @returns the sorted list, or undefined when an item depends on a column, cannot be evaluated,
 *   or the items mix tags (or are structs)
 */
export function sortedInList(e: In): SortedInList | undefined {
  let sorted = SORTED.get(e)
  if (sorted === undefined) {
    sorted = buildSorted(e.list) ?? null
    SORTED.set(e, sorted)
  }
  return sorted ?? undefined
}

function buildSorted(list: readonly Expression[]): SortedInList | undefined {
  let hasNull = false
  let tag: Value['t'] | undefined
  const values: Value[] = []
  try {
    for (const item of list) {
      // Evaluated as data skipping evaluates a column-free item: with the row evaluator, whose
      // result does not depend on the row or the columns when no column is referenced.
      const v = item.kind === 'literal' || columnsOf(item).length === 0 ? evaluateValue(item, {}) : undefined
      if (v === undefined) return undefined
      if (v === null) {
        hasNull = true
        continue
      }
      if (v.t === 'struct' || (tag !== undefined && v.t !== tag)) return undefined
      tag = v.t
      values.push(v)
    }
    values.sort(compareValues)
  } catch {
    // An item that cannot be evaluated or compared: the per-item path decides it.
    return undefined
  }
  const distinct: Value[] = []
  for (const v of values) {
    const last = distinct[distinct.length - 1]
    if (last === undefined || compareValues(last, v) !== 0) distinct.push(v)
  }
  return Object.freeze({ hasNull, tag, values: Object.freeze(distinct) })
}

/**
 * Whether a bound can be compared with the list's items in the list's order.
 *
 * @param list - a sorted list
 * @param bound - a bound, or undefined for none
 * @returns true when the bound is absent or has the items' tag
 */
export function searchable(list: SortedInList, bound: Value | undefined): boolean {
  return bound === undefined || bound.t === list.tag
}

/** Index of the first item p with `lo <= p` (lo undefined: 0); `values.length` when none. */
function firstAtLeast(values: readonly Value[], lo: Value | undefined): number {
  if (lo === undefined) return 0
  let low = 0
  let high = values.length
  while (low < high) {
    const mid = (low + high) >>> 1
    if (compareValues(lo, values[mid] as Value) <= 0) high = mid
    else low = mid + 1
  }
  return low
}

/**
 * Whether some item p has `lo <= p` and `p <= hi` (`p < hi` when `hiOpen`), each side compared
 * as `compareValues(lo, p)` and `compareValues(p, hi)`; an undefined bound is unbounded.
 * The bounds must be {@link searchable}.
 *
 * @param list - a sorted list
 * @param lo - lower bound, or undefined
 * @param hi - upper bound, or undefined
 * @param hiOpen - whether the upper bound is excluded
 * @returns true when an item lies within the bounds
 */
export function someWithin(
  list: SortedInList,
  lo: Value | undefined,
  hi: Value | undefined,
  hiOpen: boolean,
): boolean {
  const i = firstAtLeast(list.values, lo)
  const first = list.values[i]
  if (first === undefined) return false
  if (hi === undefined) return true
  const c = compareValues(first, hi)
  return hiOpen ? c < 0 : c <= 0
}

/**
 * Whether some item p has `compareValues(v, p) === 0`. The value must be {@link searchable}.
 *
 * @param list - a sorted list
 * @param v - the value
 * @returns true when an item equals the value
 */
export function someEqual(list: SortedInList, v: Value): boolean {
  const first = list.values[firstAtLeast(list.values, v)]
  return first !== undefined && compareValues(v, first) === 0
}
