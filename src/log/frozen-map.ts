/**
 * A read-only view of a `Map`. `Object.freeze` does not stop `Map.prototype.set`, so replayed
 * state hands out this view instead of the map it was built in.
 */
export class FrozenMap<K, V> implements ReadonlyMap<K, V> {
  readonly #map: Map<K, V>

  /**
   * @param map - the map to expose; the caller must not modify it afterwards
   */
  constructor(map: Map<K, V>) {
    this.#map = map
    Object.freeze(this)
  }

  /** Number of entries. */
  get size(): number {
    return this.#map.size
  }

  /**
   * @param key - a key
   * @returns its value, or `undefined`
   */
  get(key: K): V | undefined {
    return this.#map.get(key)
  }

  /**
   * @param key - a key
   * @returns whether it is present
   */
  has(key: K): boolean {
    return this.#map.has(key)
  }

  /**
   * Calls `fn` for each entry in insertion order.
   *
   * @param fn - the callback
   * @param thisArg - `this` for the callback
   */
  forEach(fn: (value: V, key: K, map: ReadonlyMap<K, V>) => void, thisArg?: unknown): void {
    for (const [k, v] of this.#map) fn.call(thisArg, v, k, this)
  }

  /** @returns the entries in insertion order */
  entries(): MapIterator<[K, V]> {
    return this.#map.entries()
  }

  /** @returns the keys in insertion order */
  keys(): MapIterator<K> {
    return this.#map.keys()
  }

  /** @returns the values in insertion order */
  values(): MapIterator<V> {
    return this.#map.values()
  }

  /** @returns the entries in insertion order */
  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.#map[Symbol.iterator]()
  }
}
