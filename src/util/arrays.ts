/**
 * Array helpers that never pass an array's elements as the arguments of one call. Spreading an
 * array into `push(...items)` or `Math.max(...values)` puts every element on the call stack, and
 * above about 100,000 elements the call throws `RangeError: Maximum call stack size exceeded`;
 * these loop instead, so their cost does not depend on the stack.
 */

/**
 * Appends every item to `into`, in order.
 *
 * @param into - the array to grow
 * @param items - the items, any number
 * @returns `into`
 */
export function appendAll<T>(into: T[], items: Iterable<T>): T[] {
  for (const item of items) into.push(item)
  return into
}

/**
 * The largest of `values` and `floor`, as `Math.max(floor, ...values)` would give it.
 *
 * @param values - the numbers, any number of them
 * @param floor - the result when there are none (default `-Infinity`, as `Math.max()`)
 * @returns the maximum; NaN when any value is NaN
 */
export function maxOf(values: Iterable<number>, floor = Number.NEGATIVE_INFINITY): number {
  let max = floor
  for (const v of values) max = Math.max(max, v)
  return max
}

/**
 * The smallest of `values` and `ceiling`, as `Math.min(ceiling, ...values)` would give it.
 *
 * @param values - the numbers, any number of them
 * @param ceiling - the result when there are none (default `Infinity`, as `Math.min()`)
 * @returns the minimum; NaN when any value is NaN
 */
export function minOf(values: Iterable<number>, ceiling = Number.POSITIVE_INFINITY): number {
  let min = ceiling
  for (const v of values) min = Math.min(min, v)
  return min
}
