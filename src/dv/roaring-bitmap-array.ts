import { RoaringBitmap32 } from 'roaring-wasm'
import { InternalError, InvalidArgumentError, UnsupportedError } from '../errors/index.js'
import { assertDeletionVectorsReady } from './initialization.js'

/**
 * A row position inside a data file: the 0-based physical index of a row, counted across all
 * row groups. Real positions are below 2^53 and fit a `number`; the format allows up to 2^63 - 1,
 * which only a `bigint` can carry exactly.
 */
export type RowPosition = number | bigint

/** Positions accepted by the factories: any iterable or array-like of row positions. */
export type RowPositions = Iterable<RowPosition> | ArrayLike<RowPosition>

const TWO_POW_32 = 4294967296
/** Bucket keys are the high 32 bits of a position and must keep the sign bit clear. */
const MAX_KEY = 0x7fffffff
/** Keys below this bound give positions that are all exact as a `number`. */
const SAFE_KEY_LIMIT = 0x200000
const MAX_POSITION = (1n << 63n) - 1n

// === Position helpers ===

function invalidPosition(value: unknown, argument: string): InvalidArgumentError {
  return new InvalidArgumentError(
    `Invalid row position ${String(value)}: positions are integers in [0, 2^63 - 1]`,
    { argument, hint: 'Pass a non-negative safe integer, or a bigint for positions above 2^53 - 1.' },
  )
}

/** Splits a position into its bucket key (high 32 bits) and its low 32 bits. */
function splitPosition(value: RowPosition, argument: string): [number, number] {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0) throw invalidPosition(value, argument)
    return value < TWO_POW_32 ? [0, value] : [Math.floor(value / TWO_POW_32), value >>> 0]
  }
  if (typeof value !== 'bigint' || value < 0n || value > MAX_POSITION) throw invalidPosition(value, argument)
  return [Number(value >> 32n), Number(value & 0xffffffffn)]
}

function composeNumber(key: number, low: number): number {
  if (key >= SAFE_KEY_LIMIT) {
    throw new UnsupportedError(
      `Row position in bucket ${key} exceeds 2^53 - 1 and cannot be returned as a number; use the bigint variant`,
    )
  }
  return key * TWO_POW_32 + low
}

function composeBigInt(key: number, low: number): bigint {
  return (BigInt(key) << 32n) | BigInt(low)
}

// roaring-wasm 1.1.0 returns `select` results through a 32-bit float (wrong above 2^24) and
// `rank` through a uint32 (0 instead of 2^32 for a full bucket); these two helpers avoid both.

function rankInBucket(bitmap: RoaringBitmap32, low: number): number {
  return low === 0xffffffff ? bitmap.size : bitmap.rank(low)
}

function selectInBucket(bitmap: RoaringBitmap32, index: number): number {
  const value = bitmap.at(index)
  if (value === undefined) throw new InternalError(`bucket select(${index}) found nothing`)
  return value
}

function isArrayLike(positions: RowPositions): positions is ArrayLike<RowPosition> {
  return Array.isArray(positions) || ArrayBuffer.isView(positions)
}

/** Collects ascending (key, low) pairs into frozen 32-bit bitmaps, one per key. */
class BucketBuilder {
  readonly keys: number[] = []
  readonly bitmaps: RoaringBitmap32[] = []
  #key = -1
  #lastLow = -1
  #lows = new Uint32Array(1024)
  #count = 0

  push(key: number, low: number): void {
    if (key === this.#key) {
      if (low <= this.#lastLow) {
        if (low === this.#lastLow) return
        throw unsorted()
      }
    } else {
      if (key < this.#key) throw unsorted()
      this.#flush()
      this.#key = key
    }
    if (this.#count === this.#lows.length) {
      const grown = new Uint32Array(this.#lows.length * 2)
      grown.set(this.#lows)
      this.#lows = grown
    }
    this.#lows[this.#count++] = low
    this.#lastLow = low
  }

  finish(): RoaringBitmapArray {
    this.#flush()
    return fromBuckets(this.keys, this.bitmaps)
  }

  #flush(): void {
    if (this.#count === 0) return
    const bitmap = new RoaringBitmap32(this.#lows.subarray(0, this.#count))
    // Long deleted ranges (a DELETE over a key range) shrink by orders of magnitude as runs.
    bitmap.runOptimize()
    this.keys.push(this.#key)
    this.bitmaps.push(bitmap.freeze())
    this.#count = 0
    this.#lastLow = -1
  }
}

function unsorted(): InvalidArgumentError {
  return new InvalidArgumentError('Row positions passed to fromSorted are not in ascending order', {
    argument: 'positions',
    hint: 'Use RoaringBitmapArray.fromPositions for unsorted input.',
  })
}

// Set by the class's static block: the only way to build an instance or read its buckets
// from the codec, without making either part of the public surface.
let fromBuckets: (keys: readonly number[], bitmaps: readonly RoaringBitmap32[]) => RoaringBitmapArray
let bucketsOf: (array: RoaringBitmapArray) => {
  readonly keys: readonly number[]
  readonly bitmaps: readonly RoaringBitmap32[]
}

/**
 * An immutable set of 64-bit row positions: Delta's `RoaringBitmapArray`.
 *
 * Positions are grouped by their high 32 bits into buckets, each a 32-bit Roaring bitmap held in
 * WebAssembly memory (roaring-wasm). Every operation returns a new instance; nothing is shared
 * between instances, so {@link RoaringBitmapArray.dispose} may release one instance's memory early
 * without affecting any other. Instances that are never disposed are freed by the library's
 * finalisation when garbage-collected.
 *
 * Methods that return positions come in two forms: `number` (exact below 2^53, which covers every
 * real row index) and `bigint` (the full 2^63 range).
 *
 * Requires {@link initDeletionVectors} to have resolved.
 *
 * ### Examples
 * ```ts
 * await initDeletionVectors()
 * const a = RoaringBitmapArray.fromPositions([9, 0, 4])
 * const b = RoaringBitmapArray.fromSorted([4, 5])
 * a.union(b).toArray() // [0, 4, 5, 9]
 * a.rank(4) // 2
 * ```
 */
export class RoaringBitmapArray implements Iterable<number> {
  /** Ascending bucket keys; every bucket is non-empty. */
  readonly #keys: readonly number[]
  readonly #bitmaps: readonly RoaringBitmap32[]
  /** `#before[i]` = number of positions in buckets `0..i-1`; the last entry is the cardinality. */
  readonly #before: Float64Array
  #disposed = false

  static {
    fromBuckets = (keys, bitmaps) => new RoaringBitmapArray(keys, bitmaps)
    bucketsOf = (array) => {
      array.#live()
      return { keys: array.#keys, bitmaps: array.#bitmaps }
    }
  }

  private constructor(keys: readonly number[], bitmaps: readonly RoaringBitmap32[]) {
    this.#keys = Object.freeze([...keys])
    this.#bitmaps = Object.freeze([...bitmaps])
    const before = new Float64Array(bitmaps.length + 1)
    for (let i = 0; i < bitmaps.length; i++) before[i + 1] = before[i]! + bitmaps[i]!.size
    this.#before = before
    Object.freeze(this)
  }

  // === Factories ===

  /**
   * The empty set.
   *
   * @returns a new empty instance
   * @throws {InternalError} before {@link initDeletionVectors} resolved
   */
  static empty(): RoaringBitmapArray {
    assertDeletionVectorsReady('RoaringBitmapArray.empty')
    return new RoaringBitmapArray([], [])
  }

  /**
   * Builds a set from positions already in ascending order (duplicates are allowed and
   * collapsed). This is the fast path: each bucket is built from a sorted block in one call.
   *
   * @param positions - ascending row positions (`number` or `bigint`)
   * @returns the set of those positions
   * @throws {InvalidArgumentError} when a position is invalid or the input is not ascending
   * @throws {InternalError} before {@link initDeletionVectors} resolved
   */
  static fromSorted(positions: RowPositions): RoaringBitmapArray {
    assertDeletionVectorsReady('RoaringBitmapArray.fromSorted')
    const builder = new BucketBuilder()
    try {
      if (isArrayLike(positions)) {
        for (let i = 0; i < positions.length; i++) {
          const p = positions[i]!
          // Positions below 2^32 (nearly all) skip the split and its pair.
          if (typeof p === 'number' && p >= 0 && p < TWO_POW_32 && Number.isInteger(p)) builder.push(0, p)
          else {
            const [key, low] = splitPosition(p, 'positions')
            builder.push(key, low)
          }
        }
      } else {
        for (const position of positions) {
          const [key, low] = splitPosition(position, 'positions')
          builder.push(key, low)
        }
      }
    } catch (err) {
      for (const bitmap of builder.bitmaps) bitmap.dispose()
      throw err
    }
    return builder.finish()
  }

  /**
   * Builds a set from positions in any order (sorted here first: building a Roaring bitmap from
   * unsorted input is two orders of magnitude slower).
   *
   * @param positions - row positions in any order, duplicates allowed
   * @returns the set of those positions
   * @throws {InvalidArgumentError} when a position is invalid
   * @throws {InternalError} before {@link initDeletionVectors} resolved
   */
  static fromPositions(positions: RowPositions): RoaringBitmapArray {
    assertDeletionVectorsReady('RoaringBitmapArray.fromPositions')
    const values: RowPosition[] = isArrayLike(positions) ? Array.from(positions) : [...positions]
    let allNumbers = true
    for (const value of values) {
      splitPosition(value, 'positions')
      if (typeof value !== 'number') allNumbers = false
    }
    if (allNumbers) return RoaringBitmapArray.fromSorted(Float64Array.from(values as number[]).sort())
    const big = new BigUint64Array(values.length)
    for (let i = 0; i < values.length; i++) big[i] = BigInt(values[i]!)
    return RoaringBitmapArray.fromSorted(big.sort())
  }

  /**
   * The set of every position in `[start, end)`.
   *
   * @param start - first position, inclusive
   * @param end - last position, exclusive
   * @returns the range as a set (empty when `end <= start`)
   * @throws {InvalidArgumentError} when a bound is not a valid position
   * @throws {InternalError} before {@link initDeletionVectors} resolved
   */
  static fromRange(start: RowPosition, end: RowPosition): RoaringBitmapArray {
    assertDeletionVectorsReady('RoaringBitmapArray.fromRange')
    const [startKey, startLow] = splitPosition(start, 'start')
    const [endKey, endLow] = splitPosition(end, 'end')
    const keys: number[] = []
    const bitmaps: RoaringBitmap32[] = []
    for (let key = startKey; key <= endKey; key++) {
      const from = key === startKey ? startLow : 0
      const to = key === endKey ? endLow : TWO_POW_32
      if (to <= from) continue
      const bitmap = RoaringBitmap32.fromRange(from, to)
      bitmap.runOptimize()
      keys.push(key)
      bitmaps.push(bitmap.freeze())
    }
    return new RoaringBitmapArray(keys, bitmaps)
  }

  /**
   * The union of many sets, computed bucket by bucket in one pass (the N-way merge of
   * concurrent deletion vectors).
   *
   * @param arrays - the sets to merge
   * @returns a new set holding every position of every input
   * @throws {InvalidArgumentError} when an input was disposed
   * @throws {InternalError} before {@link initDeletionVectors} resolved
   */
  static unionAll(arrays: readonly RoaringBitmapArray[]): RoaringBitmapArray {
    assertDeletionVectorsReady('RoaringBitmapArray.unionAll')
    const byKey = new Map<number, RoaringBitmap32[]>()
    for (const array of arrays) {
      array.#live()
      array.#keys.forEach((key, i) => {
        const list = byKey.get(key)
        if (list) list.push(array.#bitmaps[i]!)
        else byKey.set(key, [array.#bitmaps[i]!])
      })
    }
    const keys = [...byKey.keys()].sort((a, b) => a - b)
    const bitmaps = keys.map((key) => {
      const list = byKey.get(key)!
      return (list.length === 1 ? list[0]!.clone() : RoaringBitmap32.orMany(list)).freeze()
    })
    return new RoaringBitmapArray(keys, bitmaps)
  }

  // === Size and membership ===

  /**
   * Number of positions in the set.
   *
   * @returns the cardinality
   * @throws {InvalidArgumentError} when this instance was disposed
   */
  get cardinality(): number {
    this.#live()
    return this.#before[this.#bitmaps.length]!
  }

  /**
   * Number of positions in the set, as a bigint (the log's `long`).
   *
   * @returns the cardinality
   * @throws {InvalidArgumentError} when this instance was disposed
   */
  get cardinalityBigInt(): bigint {
    return BigInt(this.cardinality)
  }

  /**
   * Whether the set has no position.
   *
   * @returns true for the empty set
   * @throws {InvalidArgumentError} when this instance was disposed
   */
  get isEmpty(): boolean {
    this.#live()
    return this.#bitmaps.length === 0
  }

  /**
   * Whether `position` is in the set.
   *
   * @param position - a row position
   * @returns true when present
   * @throws {InvalidArgumentError} when the position is invalid or this instance was disposed
   */
  has(position: RowPosition): boolean {
    this.#live()
    const [key, low] = splitPosition(position, 'position')
    const i = this.#find(key)
    return i >= 0 && this.#bitmaps[i]!.has(low)
  }

  /**
   * Number of positions less than or equal to `position` (so `rank(x) - 1` is the index of `x`
   * when it is present).
   *
   * @param position - a row position
   * @returns the count of positions `<= position`
   * @throws {InvalidArgumentError} when the position is invalid or this instance was disposed
   */
  rank(position: RowPosition): number {
    this.#live()
    const [key, low] = splitPosition(position, 'position')
    const i = this.#lowerBound(key)
    if (i < this.#keys.length && this.#keys[i] === key)
      return this.#before[i]! + rankInBucket(this.#bitmaps[i]!, low)
    return this.#before[i]!
  }

  /**
   * Number of positions in `[start, end)`.
   *
   * @param start - first position, inclusive
   * @param end - last position, exclusive; `2n ** 63n` counts up to the end of the range
   * @returns the count (0 when `end <= start`)
   * @throws {InvalidArgumentError} when a bound is invalid or this instance was disposed
   */
  rangeCardinality(start: RowPosition, end: RowPosition): number {
    this.#live()
    const high = this.#countBelow(end, 'end')
    const low = this.#countBelow(start, 'start')
    return high > low ? high - low : 0
  }

  // === Order statistics ===

  /**
   * The position at ascending index `index`.
   *
   * @param index - 0-based index into the ascending order
   * @returns the position, or undefined when `index` is outside `[0, cardinality)`
   * @throws {UnsupportedError} when the position exceeds 2^53 - 1 (use {@link selectBigInt})
   * @throws {InvalidArgumentError} when this instance was disposed
   */
  select(index: number): number | undefined {
    const found = this.#select(index)
    return found && composeNumber(found[0], found[1])
  }

  /**
   * The position at ascending index `index`, as a bigint.
   *
   * @param index - 0-based index into the ascending order
   * @returns the position, or undefined when `index` is outside `[0, cardinality)`
   * @throws {InvalidArgumentError} when this instance was disposed
   */
  selectBigInt(index: number): bigint | undefined {
    const found = this.#select(index)
    return found && composeBigInt(found[0], found[1])
  }

  /**
   * The smallest position.
   *
   * @returns the position, or undefined for the empty set
   * @throws {UnsupportedError} when the position exceeds 2^53 - 1
   * @throws {InvalidArgumentError} when this instance was disposed
   */
  first(): number | undefined {
    return this.select(0)
  }

  /**
   * The largest position.
   *
   * @returns the position, or undefined for the empty set
   * @throws {UnsupportedError} when the position exceeds 2^53 - 1 (use {@link lastBigInt})
   * @throws {InvalidArgumentError} when this instance was disposed
   */
  last(): number | undefined {
    return this.select(this.cardinality - 1)
  }

  /**
   * The smallest position, as a bigint.
   *
   * @returns the position, or undefined for the empty set
   * @throws {InvalidArgumentError} when this instance was disposed
   */
  firstBigInt(): bigint | undefined {
    return this.selectBigInt(0)
  }

  /**
   * The largest position, as a bigint.
   *
   * @returns the position, or undefined for the empty set
   * @throws {InvalidArgumentError} when this instance was disposed
   */
  lastBigInt(): bigint | undefined {
    return this.selectBigInt(this.cardinality - 1)
  }

  // === Iteration and export ===

  /**
   * Iterates the positions in ascending order.
   *
   * @returns an iterator of positions
   * @throws {UnsupportedError} when reaching a position above 2^53 - 1 (use {@link bigValues})
   * @throws {InvalidArgumentError} when this instance was disposed
   */
  *values(): IterableIterator<number> {
    this.#live()
    // The bucket's own iterator: a bucket may hold 2^32 positions in a few runs, which as an
    // array would take 16 GiB.
    for (let i = 0; i < this.#keys.length; i++) {
      const key = this.#keys[i]!
      const base = composeNumber(key, 0)
      for (const low of this.#bitmaps[i]!) yield base + low
    }
  }

  /**
   * Iterates the positions in ascending order, as bigints.
   *
   * @returns an iterator of positions
   * @throws {InvalidArgumentError} when this instance was disposed
   */
  *bigValues(): IterableIterator<bigint> {
    this.#live()
    for (let i = 0; i < this.#keys.length; i++) {
      const key = this.#keys[i]!
      for (const low of this.#bitmaps[i]!) yield composeBigInt(key, low)
    }
  }

  /**
   * Same as {@link values}.
   *
   * @returns an iterator of positions in ascending order
   */
  [Symbol.iterator](): IterableIterator<number> {
    return this.values()
  }

  /**
   * The positions in ascending order.
   *
   * @returns a new array
   * @throws {UnsupportedError} when a position exceeds 2^53 - 1 (use {@link toBigUint64Array})
   * @throws {InvalidArgumentError} when this instance was disposed
   */
  toArray(): number[] {
    this.#live()
    const out = new Array<number>(this.cardinality)
    let at = 0
    for (let i = 0; i < this.#keys.length; i++) {
      const base = composeNumber(this.#keys[i]!, 0)
      for (const low of this.#bitmaps[i]!.toUint32Array()) out[at++] = base + low
    }
    return out
  }

  /**
   * The positions in ascending order, as 64-bit integers.
   *
   * @returns a new typed array
   * @throws {InvalidArgumentError} when this instance was disposed
   */
  toBigUint64Array(): BigUint64Array {
    this.#live()
    const out = new BigUint64Array(this.cardinality)
    let at = 0
    for (let i = 0; i < this.#keys.length; i++) {
      const base = BigInt(this.#keys[i]!) << 32n
      for (const low of this.#bitmaps[i]!.toUint32Array()) out[at++] = base | BigInt(low)
    }
    return out
  }

  /**
   * The positions in ascending order as 32-bit integers: the compact form for files below
   * 2^32 rows, which is every file in practice.
   *
   * @returns a new typed array
   * @throws {UnsupportedError} when a position is 2^32 or more
   * @throws {InvalidArgumentError} when this instance was disposed
   */
  toSortedUint32Array(): Uint32Array {
    this.#live()
    if (this.#keys.length === 0) return new Uint32Array(0)
    if (this.#keys.length > 1 || this.#keys[0] !== 0) {
      throw new UnsupportedError(
        'This set holds positions of 2^32 or more, which a Uint32Array cannot carry',
        {
          hint: 'Use toArray() or toBigUint64Array().',
        },
      )
    }
    return this.#bitmaps[0]!.toUint32Array()
  }

  // === Set algebra ===

  /**
   * Positions in this set or in `other`.
   *
   * @param other - another set
   * @returns a new set
   * @throws {InvalidArgumentError} when either instance was disposed
   */
  union(other: RoaringBitmapArray): RoaringBitmapArray {
    this.#live()
    other.#live()
    const keys: number[] = []
    const bitmaps: RoaringBitmap32[] = []
    const a = this.#keys
    const b = other.#keys
    let i = 0
    let j = 0
    while (i < a.length || j < b.length) {
      const ka = i < a.length ? a[i]! : Number.POSITIVE_INFINITY
      const kb = j < b.length ? b[j]! : Number.POSITIVE_INFINITY
      if (ka === kb) {
        keys.push(ka)
        bitmaps.push(RoaringBitmap32.or(this.#bitmaps[i++]!, other.#bitmaps[j++]!).freeze())
      } else if (ka < kb) {
        keys.push(ka)
        bitmaps.push(this.#bitmaps[i++]!.clone().freeze())
      } else {
        keys.push(kb)
        bitmaps.push(other.#bitmaps[j++]!.clone().freeze())
      }
    }
    return new RoaringBitmapArray(keys, bitmaps)
  }

  /**
   * Positions in both this set and `other`.
   *
   * @param other - another set
   * @returns a new set
   * @throws {InvalidArgumentError} when either instance was disposed
   */
  intersection(other: RoaringBitmapArray): RoaringBitmapArray {
    return this.#perKey(other, (mine, theirs) =>
      theirs === undefined ? undefined : RoaringBitmap32.and(mine, theirs),
    )
  }

  /**
   * Positions in this set that are not in `other`.
   *
   * @param other - another set
   * @returns a new set
   * @throws {InvalidArgumentError} when either instance was disposed
   */
  difference(other: RoaringBitmapArray): RoaringBitmapArray {
    return this.#perKey(other, (mine, theirs) =>
      theirs === undefined ? mine.clone() : RoaringBitmap32.andNot(mine, theirs),
    )
  }

  /**
   * A new set with, for each key of this set, the bitmap `op` makes of this set's bitmap and
   * `other`'s under the same key (`undefined` when `other` has none); a key whose result is
   * `undefined` or empty is left out.
   */
  #perKey(
    other: RoaringBitmapArray,
    op: (mine: RoaringBitmap32, theirs: RoaringBitmap32 | undefined) => RoaringBitmap32 | undefined,
  ): RoaringBitmapArray {
    this.#live()
    other.#live()
    const keys: number[] = []
    const bitmaps: RoaringBitmap32[] = []
    for (let i = 0; i < this.#keys.length; i++) {
      const j = other.#find(this.#keys[i]!)
      const bitmap = op(this.#bitmaps[i]!, j < 0 ? undefined : other.#bitmaps[j]!)
      if (bitmap === undefined) continue
      if (bitmap.isEmpty) {
        bitmap.dispose()
        continue
      }
      keys.push(this.#keys[i]!)
      bitmaps.push(bitmap.freeze())
    }
    return new RoaringBitmapArray(keys, bitmaps)
  }

  /**
   * Whether this set and `other` share at least one position.
   *
   * @param other - another set
   * @returns true when the intersection is not empty
   * @throws {InvalidArgumentError} when either instance was disposed
   */
  intersects(other: RoaringBitmapArray): boolean {
    this.#live()
    other.#live()
    for (let i = 0; i < this.#keys.length; i++) {
      const j = other.#find(this.#keys[i]!)
      if (j >= 0 && this.#bitmaps[i]!.intersects(other.#bitmaps[j]!)) return true
    }
    return false
  }

  /**
   * Whether every position of this set is in `other`.
   *
   * @param other - another set
   * @returns true when this set is a subset of (or equal to) `other`
   * @throws {InvalidArgumentError} when either instance was disposed
   */
  isSubsetOf(other: RoaringBitmapArray): boolean {
    this.#live()
    other.#live()
    for (let i = 0; i < this.#keys.length; i++) {
      const j = other.#find(this.#keys[i]!)
      if (j < 0 || !this.#bitmaps[i]!.isSubset(other.#bitmaps[j]!)) return false
    }
    return true
  }

  /**
   * Whether both sets hold exactly the same positions.
   *
   * @param other - another set
   * @returns true when equal
   * @throws {InvalidArgumentError} when either instance was disposed
   */
  equals(other: RoaringBitmapArray): boolean {
    this.#live()
    other.#live()
    if (this.#keys.length !== other.#keys.length) return false
    for (let i = 0; i < this.#keys.length; i++) {
      if (this.#keys[i] !== other.#keys[i] || !this.#bitmaps[i]!.isEqual(other.#bitmaps[i]!)) return false
    }
    return true
  }

  // === Resources ===

  /**
   * Releases this instance's WebAssembly memory now instead of at garbage collection. The
   * instance is unusable afterwards (every method throws); no other instance is affected.
   * Idempotent.
   */
  dispose(): void {
    if (this.#disposed) return
    this.#disposed = true
    for (const bitmap of this.#bitmaps) bitmap.dispose()
  }

  /**
   * Whether {@link dispose} was called.
   *
   * @returns true once disposed
   */
  get isDisposed(): boolean {
    return this.#disposed
  }

  // === Internals ===

  #live(): void {
    if (this.#disposed) {
      throw new InvalidArgumentError('This RoaringBitmapArray was disposed and can no longer be used', {
        argument: 'this',
      })
    }
  }

  /** Index of the first bucket whose key is `>= key`. */
  #lowerBound(key: number): number {
    const keys = this.#keys
    let lo = 0
    let hi = keys.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (keys[mid]! < key) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  /** Index of the bucket with `key`, or -1. */
  #find(key: number): number {
    if (this.#keys.length === 1) return this.#keys[0] === key ? 0 : -1
    const i = this.#lowerBound(key)
    return i < this.#keys.length && this.#keys[i] === key ? i : -1
  }

  /** Number of positions strictly below `bound` (a position, or 2^63 for "all"). */
  #countBelow(bound: RowPosition, argument: string): number {
    if (typeof bound === 'bigint' && bound === MAX_POSITION + 1n) return this.cardinality
    const [key, low] = splitPosition(bound, argument)
    const i = this.#lowerBound(key)
    if (i < this.#keys.length && this.#keys[i] === key) {
      return this.#before[i]! + (low === 0 ? 0 : rankInBucket(this.#bitmaps[i]!, low - 1))
    }
    return this.#before[i]!
  }

  #select(index: number): [number, number] | undefined {
    this.#live()
    const before = this.#before
    const n = this.#bitmaps.length
    if (!Number.isInteger(index) || index < 0 || index >= before[n]!) return undefined
    let lo = 0
    let hi = n - 1
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1
      if (before[mid]! <= index) lo = mid
      else hi = mid - 1
    }
    return [this.#keys[lo]!, selectInBucket(this.#bitmaps[lo]!, index - before[lo]!)]
  }
}

/**
 * Builds an instance from already validated buckets. Codec use only; not part of the public
 * surface.
 *
 * @param keys - ascending bucket keys, each `<= 2^31 - 1`
 * @param bitmaps - one non-empty bitmap per key, owned by the new instance from now on
 * @returns the instance
 * @throws {InternalError} when a key breaks the ordering or range invariant
 */
export function bitmapArrayFromBuckets(
  keys: readonly number[],
  bitmaps: readonly RoaringBitmap32[],
): RoaringBitmapArray {
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!
    if (!(key >= 0 && key <= MAX_KEY) || (i > 0 && key <= keys[i - 1]!) || bitmaps[i]!.isEmpty) {
      throw new InternalError(`bitmap bucket ${key} at index ${i} is out of order, out of range or empty`)
    }
    bitmaps[i]!.freeze()
  }
  return fromBuckets(keys, bitmaps)
}

/**
 * The buckets of an instance, for the codec. Not part of the public surface; the bitmaps are
 * frozen and stay owned by `array`.
 *
 * @param array - a live instance
 * @returns its ascending keys and their bitmaps
 * @throws {InvalidArgumentError} when `array` was disposed
 */
export function bitmapArrayBuckets(array: RoaringBitmapArray): {
  readonly keys: readonly number[]
  readonly bitmaps: readonly RoaringBitmap32[]
} {
  return bucketsOf(array)
}

/** Largest bucket key the format allows (the high 32 bits of a position, sign bit clear). */
export const MAX_BUCKET_KEY = MAX_KEY
