/**
 * A persistent read-only map for replayed log state: a snapshot that advances by a few commits
 * gets a new map in time proportional to those commits' actions, sharing everything else with
 * the map it came from. Pure and synchronous.
 *
 * A map is a frozen base `Map` plus a short stack of change layers. Iteration gives exactly the
 * order a plain `Map` would give had every change been applied to it in turn: a replaced value
 * keeps its key's position, a deleted and re-inserted key moves to the end. Replay order is
 * therefore the same whether a state was built in one pass or advanced commit by commit.
 */

/** A change of one key in one layer. */
type Change<V> =
  /** The key keeps the position it has below this layer; its value is replaced. */
  | { readonly kind: 'replace'; readonly value: V }
  /** The key is (re)inserted here: below this layer it is hidden wherever it sits. */
  | { readonly kind: 'insert'; readonly value: V }
  | { readonly kind: 'delete' }

const DELETE: Change<never> = Object.freeze({ kind: 'delete' })

/** Layers deeper than this are merged, so a lookup visits a bounded number of maps. */
const MAX_DEPTH = 8

/**
 * An immutable map; {@link LayeredMap.with} derives a new one from a batch of changes.
 */
export class LayeredMap<K, V> implements ReadonlyMap<K, V> {
  readonly #base: ReadonlyMap<K, V>
  /** Bottom first; each holds the final change per key of the changes it absorbed. */
  readonly #layers: readonly ReadonlyMap<K, Change<V>>[]
  readonly #size: number
  /** Number of change entries in all layers. */
  readonly #changes: number

  private constructor(base: ReadonlyMap<K, V>, layers: readonly ReadonlyMap<K, Change<V>>[], size: number) {
    this.#base = base
    this.#layers = layers
    this.#size = size
    let changes = 0
    for (const l of layers) changes += l.size
    this.#changes = changes
    Object.freeze(this)
  }

  /**
   * A map over `base`, which the caller must not modify afterwards.
   *
   * @param base - the entries
   * @returns the map
   */
  static of<K, V>(base: Map<K, V>): LayeredMap<K, V> {
    return new LayeredMap(base, [], base.size)
  }

  /** Number of entries. */
  get size(): number {
    return this.#size
  }

  /**
   * @param key - a key
   * @returns its value, or `undefined`
   */
  get(key: K): V | undefined {
    for (let i = this.#layers.length - 1; i >= 0; i--) {
      const c = (this.#layers[i] as ReadonlyMap<K, Change<V>>).get(key)
      if (c !== undefined) return c.kind === 'delete' ? undefined : c.value
    }
    return this.#base.get(key)
  }

  /**
   * @param key - a key
   * @returns whether it is present
   */
  has(key: K): boolean {
    for (let i = this.#layers.length - 1; i >= 0; i--) {
      const c = (this.#layers[i] as ReadonlyMap<K, Change<V>>).get(key)
      if (c !== undefined) return c.kind !== 'delete'
    }
    return this.#base.has(key)
  }

  /**
   * A new map with `changes` applied in order, as `Map.set` and `Map.delete` would apply them
   * to a copy. Costs time in the number of changes (amortized: layers are merged as they pile up,
   * and the whole map is rebuilt only once the changes outnumber its entries).
   *
   * @param changes - `[key, value]` to set, `[key, undefined]` to delete; `V` must not include
   *   `undefined`
   * @returns the new map; this one is unchanged
   */
  with(changes: Iterable<readonly [K, V | undefined]>): LayeredMap<K, V> {
    const layer = new Map<K, Change<V>>()
    let size = this.#size
    for (const [key, value] of changes) {
      const own = layer.get(key)
      const present = own !== undefined ? own.kind !== 'delete' : this.has(key)
      if (value === undefined) {
        if (!present) continue
        layer.set(key, DELETE)
        size--
      } else if (present) {
        // Map.set on a present key keeps its position: a key inserted in this layer stays an insert.
        layer.set(key, own?.kind === 'insert' ? { kind: 'insert', value } : { kind: 'replace', value })
      } else {
        // Map.set on an absent key appends it: it leaves any earlier spot in this layer.
        layer.delete(key)
        layer.set(key, { kind: 'insert', value })
        size++
      }
    }
    if (layer.size === 0) return this
    const layers = [...this.#layers, layer]
    if (this.#changes + layer.size >= Math.max(this.#base.size, 64)) {
      // Changes as many as the entries: rebuilding costs no more than the changes did.
      const flat = new Map<K, V>()
      for (const [k, v] of new LayeredMap(this.#base, layers, size)) flat.set(k, v)
      return new LayeredMap(flat, [], size)
    }
    // Merge the top layers while the newer is at least half the older (sizes then at least
    // double downwards, so the depth stays logarithmic), and always beyond MAX_DEPTH.
    while (layers.length >= 2) {
      const top = layers[layers.length - 1] as ReadonlyMap<K, Change<V>>
      const below = layers[layers.length - 2] as ReadonlyMap<K, Change<V>>
      if (top.size * 2 < below.size && layers.length <= MAX_DEPTH) break
      layers.splice(layers.length - 2, 2, mergeLayers(below, top))
    }
    return new LayeredMap(this.#base, layers, size)
  }

  /**
   * Calls `fn` for each entry in iteration order.
   *
   * @param fn - the callback
   * @param thisArg - `this` for the callback
   */
  forEach(fn: (value: V, key: K, map: ReadonlyMap<K, V>) => void, thisArg?: unknown): void {
    for (const [k, v] of this) fn.call(thisArg, v, k, this)
  }

  /** @returns the entries in iteration order */
  entries(): MapIterator<[K, V]> {
    return this[Symbol.iterator]()
  }

  /** @returns the keys in iteration order */
  keys(): MapIterator<K> {
    // Without layers the base's own iterator: a generator step per entry costs far more.
    if (this.#layers.length === 0) return this.#base.keys() as MapIterator<K>
    return projected(this[Symbol.iterator](), ([k]) => k)
  }

  /** @returns the values in iteration order */
  values(): MapIterator<V> {
    if (this.#layers.length === 0) return this.#base.values() as MapIterator<V>
    return projected(this[Symbol.iterator](), ([, v]) => v)
  }

  /** @returns the entries in iteration order */
  [Symbol.iterator](): MapIterator<[K, V]> {
    if (this.#layers.length === 0) return this.#base.entries() as MapIterator<[K, V]>
    return this.#entries() as MapIterator<[K, V]>
  }

  *#entries(): Generator<[K, V], undefined, unknown> {
    const layers = this.#layers
    // A key sits where its last insert put it (the base when none did) unless deleted since;
    // a replace above that only changes its value. Returns the value to yield there, or
    // `hidden` when a layer at or above `from` moved or deleted the key.
    const hidden = Symbol('hidden')
    const valueAt = (key: K, from: number, own: V): V | typeof hidden => {
      let value: V | undefined
      let replaced = false
      for (let i = layers.length - 1; i >= from; i--) {
        const c = (layers[i] as ReadonlyMap<K, Change<V>>).get(key)
        if (c === undefined) continue
        if (c.kind !== 'replace') return hidden
        if (!replaced) {
          value = c.value
          replaced = true
        }
      }
      return replaced ? (value as V) : own
    }
    for (const [k, v] of this.#base) {
      const value = valueAt(k, 0, v)
      if (value !== hidden) yield [k, value]
    }
    for (let i = 0; i < layers.length; i++) {
      for (const [k, own] of layers[i] as ReadonlyMap<K, Change<V>>) {
        if (own.kind !== 'insert') continue
        const value = valueAt(k, i + 1, own.value)
        if (value !== hidden) yield [k, value]
      }
    }
    return undefined
  }
}

/** One layer equivalent to `below` followed by `top`. */
function mergeLayers<K, V>(
  below: ReadonlyMap<K, Change<V>>,
  top: ReadonlyMap<K, Change<V>>,
): ReadonlyMap<K, Change<V>> {
  const out = new Map<K, Change<V>>()
  for (const [k, c] of below) {
    const t = top.get(k)
    if (t === undefined) out.set(k, c)
    else if (t.kind === 'replace') out.set(k, c.kind === 'insert' ? { kind: 'insert', value: t.value } : t)
    else if (t.kind === 'delete') {
      // Inserted then deleted: hidden below either way, so the deletion stands for both.
      out.set(k, DELETE)
    }
    // An insert on top moves the key to top's position: set in the loop below.
  }
  for (const [k, t] of top) {
    if (t.kind === 'insert') {
      out.delete(k)
      out.set(k, t)
    } else if (!below.has(k)) out.set(k, t)
  }
  return out
}

function projected<T, U>(it: Iterable<T>, fn: (t: T) => U): MapIterator<U> {
  function* gen(): Generator<U, undefined, unknown> {
    for (const t of it) yield fn(t)
    return undefined
  }
  return gen() as MapIterator<U>
}
