import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import fc from 'fast-check'
import { initDeletionVectors } from '../../../src/dv/initialization.js'
import { RoaringBitmapArray } from '../../../src/dv/roaring-bitmap-array.js'
import { InternalError, InvalidArgumentError, UnsupportedError } from '../../../src/errors/index.js'

const TWO_32 = 2 ** 32

// Must run first: node --test runs each file in its own process, so nothing has initialised yet.
describe('before initDeletionVectors', () => {
  it('refuses to build bitmaps with InternalError', () => {
    assert.throws(() => RoaringBitmapArray.fromSorted([1, 2]), InternalError)
    assert.throws(() => RoaringBitmapArray.empty(), InternalError)
  })
})

/**
 * Positions clustered in a few buckets (0, 1, 5 and one near 2^53) with runs, so that
 * operations cross bucket boundaries and meet every container kind.
 */
const position = fc.oneof(
  fc.integer({ min: 0, max: 5000 }),
  fc.integer({ min: TWO_32 - 100, max: TWO_32 + 100 }),
  fc.integer({ min: 5 * TWO_32, max: 5 * TWO_32 + 70000 }),
  fc.integer({ min: Number.MAX_SAFE_INTEGER - 50, max: Number.MAX_SAFE_INTEGER }),
)
const positionSet = fc.oneof(
  fc.array(position, { maxLength: 200 }),
  fc
    .tuple(position, fc.integer({ min: 1, max: 6000 }))
    .map(([start, length]) =>
      Array.from({ length }, (_, i) => start + i).filter((p) => p <= Number.MAX_SAFE_INTEGER),
    ),
)

function sorted(values: Iterable<number>): number[] {
  return [...new Set(values)].sort((a, b) => a - b)
}

describe('RoaringBitmapArray', () => {
  before(initDeletionVectors)

  it('initialises idempotently', async () => {
    await Promise.all([initDeletionVectors(), initDeletionVectors()])
    assert.equal(RoaringBitmapArray.fromSorted([1]).cardinality, 1)
  })

  it('matches a Set model for membership, rank, select, ranges and iteration', () => {
    fc.assert(
      fc.property(positionSet, fc.array(position, { maxLength: 20 }), (values, probes) => {
        const model = sorted(values)
        const bitmap = RoaringBitmapArray.fromPositions(values)
        assert.equal(bitmap.cardinality, model.length)
        assert.equal(bitmap.cardinalityBigInt, BigInt(model.length))
        assert.equal(bitmap.isEmpty, model.length === 0)
        assert.deepEqual(bitmap.toArray(), model)
        assert.deepEqual([...bitmap], model)
        assert.deepEqual(
          [...bitmap.bigValues()],
          model.map((p) => BigInt(p)),
        )
        assert.deepEqual([...bitmap.toBigUint64Array()], model.map(BigInt))
        assert.equal(bitmap.first(), model[0])
        assert.equal(bitmap.last(), model.at(-1))
        assert.equal(bitmap.lastBigInt(), model.length ? BigInt(model.at(-1)!) : undefined)
        for (const probe of [...probes, ...model.slice(0, 5)]) {
          assert.equal(bitmap.has(probe), model.includes(probe))
          assert.equal(bitmap.has(BigInt(probe)), model.includes(probe))
          assert.equal(bitmap.rank(probe), model.filter((p) => p <= probe).length)
        }
        for (const index of [0, 1, model.length - 1, model.length, -1, Math.floor(model.length / 2)]) {
          assert.equal(bitmap.select(index), model[index])
        }
        if (probes.length >= 2) {
          const [a, b] = [probes[0]!, probes[1]!].sort((x, y) => x - y)
          assert.equal(bitmap.rangeCardinality(a!, b!), model.filter((p) => p >= a! && p < b!).length)
          assert.equal(bitmap.rangeCardinality(b!, a!), 0)
        }
        assert.equal(bitmap.rangeCardinality(0, 2n ** 63n), model.length)
      }),
      { numRuns: 150 },
    )
  })

  it('matches a Set model for union, intersection, difference, subset and intersects', () => {
    fc.assert(
      fc.property(positionSet, positionSet, (left, right) => {
        const a = RoaringBitmapArray.fromPositions(left)
        const b = RoaringBitmapArray.fromPositions(right)
        const setA = new Set(left)
        const setB = new Set(right)
        const union = sorted([...setA, ...setB])
        const inter = sorted([...setA].filter((p) => setB.has(p)))
        const diff = sorted([...setA].filter((p) => !setB.has(p)))
        assert.deepEqual(a.union(b).toArray(), union)
        assert.deepEqual(RoaringBitmapArray.unionAll([a, b, a]).toArray(), union)
        assert.deepEqual(a.intersection(b).toArray(), inter)
        assert.deepEqual(a.difference(b).toArray(), diff)
        assert.equal(a.intersects(b), inter.length > 0)
        assert.equal(a.isSubsetOf(b), diff.length === 0)
        assert.equal(a.union(b).equals(b.union(a)), true)
        assert.equal(a.equals(b), sorted(setA).join() === sorted(setB).join())
        // Inputs are untouched by every operation.
        assert.deepEqual(a.toArray(), sorted(setA))
        assert.deepEqual(b.toArray(), sorted(setB))
      }),
      { numRuns: 150 },
    )
  })

  it('builds from sorted number arrays, typed arrays and bigint iterables alike', () => {
    const expected = [0, 7, TWO_32 + 1]
    const inputs: ReadonlyArray<readonly [string, Iterable<number | bigint> | ArrayLike<number | bigint>]> = [
      ['number[] with duplicates', [0, 7, 7, TWO_32 + 1]],
      ['Float64Array', Float64Array.of(0, 7, TWO_32 + 1)],
      ['BigUint64Array', BigUint64Array.of(0n, 7n, BigInt(TWO_32 + 1))],
      [
        'a generator',
        (function* () {
          yield 0
          yield 7n
          yield TWO_32 + 1
        })(),
      ],
    ]
    for (const [what, input] of inputs) {
      assert.deepEqual(RoaringBitmapArray.fromSorted(input).toArray(), expected, what)
    }
  })

  it('rejects unsorted input to fromSorted and invalid positions everywhere', () => {
    assert.throws(() => RoaringBitmapArray.fromSorted([3, 2]), InvalidArgumentError)
    assert.throws(() => RoaringBitmapArray.fromSorted([TWO_32, 1]), InvalidArgumentError)
    for (const bad of [-1, 1.5, Number.NaN, 2 ** 53, -1n, 2n ** 63n]) {
      assert.throws(() => RoaringBitmapArray.fromPositions([bad]), InvalidArgumentError, String(bad))
    }
    assert.throws(() => RoaringBitmapArray.fromSorted([0]).has(-1), InvalidArgumentError)
  })

  it('carries positions up to 2^63 - 1 as bigints and refuses to return them as numbers', () => {
    const top = 2n ** 63n - 1n
    const bitmap = RoaringBitmapArray.fromPositions([top, 5n])
    assert.equal(bitmap.has(top), true)
    assert.equal(bitmap.lastBigInt(), top)
    assert.equal(bitmap.firstBigInt(), 5n)
    assert.equal(bitmap.selectBigInt(1), top)
    assert.deepEqual([...bitmap.bigValues()], [5n, top])
    assert.equal(bitmap.rank(top), 2)
    assert.throws(() => bitmap.last(), UnsupportedError)
    assert.throws(() => bitmap.toArray(), UnsupportedError)
  })

  it('ranks and selects exactly in large and full buckets', () => {
    const full = RoaringBitmapArray.fromRange(0, TWO_32 + 10)
    assert.equal(full.cardinality, TWO_32 + 10)
    assert.equal(full.rank(TWO_32 - 1), TWO_32)
    assert.equal(full.rank(TWO_32 + 3), TWO_32 + 4)
    assert.equal(full.rangeCardinality(5, TWO_32 + 1), TWO_32 - 4)
    for (const index of [2 ** 24 + 1, 2 ** 31 - 1, TWO_32 - 51, TWO_32 - 1, TWO_32 + 9]) {
      assert.equal(full.select(index), index)
    }
    assert.equal(full.select(TWO_32 + 10), undefined)
  })

  it('builds ranges across bucket boundaries', () => {
    const range = RoaringBitmapArray.fromRange(TWO_32 - 3, TWO_32 + 2)
    assert.deepEqual(range.toArray(), [TWO_32 - 3, TWO_32 - 2, TWO_32 - 1, TWO_32, TWO_32 + 1])
    assert.equal(RoaringBitmapArray.fromRange(10, 10).isEmpty, true)
    assert.equal(RoaringBitmapArray.fromRange(0, 1_000_000).cardinality, 1_000_000)
  })

  it('returns 32-bit arrays only when every position is below 2^32', () => {
    assert.deepEqual(RoaringBitmapArray.fromSorted([1, 9]).toSortedUint32Array(), Uint32Array.of(1, 9))
    assert.deepEqual(RoaringBitmapArray.empty().toSortedUint32Array(), new Uint32Array(0))
    assert.throws(() => RoaringBitmapArray.fromSorted([TWO_32]).toSortedUint32Array(), UnsupportedError)
  })

  it('is frozen, and unusable after dispose without affecting the instances it came from', () => {
    const a = RoaringBitmapArray.fromSorted([1, 2, 3])
    const b = a.union(RoaringBitmapArray.fromSorted([4]))
    assert.equal(Object.isFrozen(a), true)
    b.dispose()
    b.dispose()
    assert.equal(b.isDisposed, true)
    assert.throws(() => b.has(1), InvalidArgumentError)
    assert.throws(() => b.cardinality, InvalidArgumentError)
    assert.throws(() => a.union(b), InvalidArgumentError)
    assert.deepEqual(a.toArray(), [1, 2, 3])
  })

  it('unions two sets of one million positions each', () => {
    const evens = Float64Array.from({ length: 1_000_000 }, (_, i) => i * 2)
    const spread = Float64Array.from({ length: 1_000_000 }, (_, i) => i * 3 + 1)
    const union = RoaringBitmapArray.fromSorted(evens).union(RoaringBitmapArray.fromSorted(spread))
    const marks = new Uint8Array(3_000_000)
    for (const p of evens) marks[p] = 1
    for (const p of spread) marks[p] = 1
    const expected = marks.reduce((sum, m) => sum + m, 0)
    assert.equal(union.cardinality, expected)
    assert.equal(
      union.rank(1_999_999),
      marks.subarray(0, 2_000_000).reduce((sum, m) => sum + m, 0),
    )
    assert.equal(union.has(4), true)
    assert.equal(union.has(3), false)
  })
})
