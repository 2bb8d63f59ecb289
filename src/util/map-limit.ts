/**
 * Maps `items` through an async function with at most `limit` calls in flight, keeping order.
 *
 * @param items - inputs
 * @param limit - maximum concurrent calls (at least 1)
 * @param fn - the mapping
 * @returns the results, in input order; rejects with the first failure
 */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length)
  let next = 0
  async function worker(): Promise<void> {
    while (next < items.length) {
      const i = next++
      out[i] = await fn(items[i] as T, i)
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker))
  return out
}
