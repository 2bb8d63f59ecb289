import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import fc from 'fast-check'
import { RoaringBitmap32 } from 'roaring-wasm'
import { initDeletionVectors } from '../../../src/dv/initialization.js'
import { portableBitmapSize } from '../../../src/dv/portable-roaring.js'
import { RoaringBitmapArray } from '../../../src/dv/roaring-bitmap-array.js'
import {
  deserializeRoaringBitmapArray,
  NATIVE_BITMAP_ARRAY_MAGIC,
  PORTABLE_BITMAP_ARRAY_MAGIC,
  serializedSizeInBytes,
  serializeRoaringBitmapArray,
} from '../../../src/dv/roaring-bitmap-array-codec.js'
import { z85Decode } from '../../../src/dv/z85.js'
import { InvalidDeletionVectorError } from '../../../src/errors/index.js'

const TWO_32 = 2 ** 32

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex')
}

function fromHex(text: string): Uint8Array {
  return Uint8Array.from(Buffer.from(text.replaceAll(' ', ''), 'hex'))
}

function isDvError(path: string | undefined) {
  return (err: unknown): boolean =>
    err instanceof InvalidDeletionVectorError &&
    err.code === 'DELTA_INVALID_DELETION_VECTOR' &&
    err.path === path &&
    (path === undefined || err.message.includes(path))
}

/** A one-bucket portable array whose single bitset container claims one value more than it has. */
function bitsetWithWrongCount(): Uint8Array {
  const evens = new RoaringBitmap32(Uint32Array.from({ length: 5000 }, (_, i) => 2 * i))
  const inner = evens.serialize('portable')
  assert.equal(new DataView(inner.buffer, inner.byteOffset).getUint32(0, true), 12346)
  // Cardinality - 1 of container 0 sits after the cookie, the count and the container key.
  new DataView(inner.buffer, inner.byteOffset).setUint16(10, 5000, true)
  return Uint8Array.from([...fromHex('d1d33964 0100000000000000 00000000'), ...inner])
}

/** Sets spread over several buckets, with dense runs and bitmap-sized containers. */
const positions = fc.oneof(
  fc.array(
    fc.oneof(
      fc.integer({ min: 0, max: 70_000 }),
      fc.integer({ min: TWO_32 - 10, max: TWO_32 + 10 }),
      fc.integer({ min: 3 * TWO_32, max: 3 * TWO_32 + 200_000 }),
    ),
    { maxLength: 300 },
  ),
  fc
    .tuple(fc.integer({ min: 0, max: 4 * TWO_32 }), fc.integer({ min: 1, max: 20_000 }))
    .map(([start, length]) => Array.from({ length }, (_, i) => start + i)),
  fc
    .tuple(fc.integer({ min: 0, max: 2 * TWO_32 }), fc.integer({ min: 4097, max: 9000 }))
    .map(([start, length]) => Array.from({ length }, (_, i) => start + 2 * i)),
)

describe('RoaringBitmapArray serialization', () => {
  before(initDeletionVectors)

  const inlineFixtures: ReadonlyArray<readonly [string, number, number[]]> = [
    ['^Bg9^0rr910000000000iXQKl0rr91000625c8Xg0rri41POJ5', 38, [1, 3, 5]],
    ['^Bg9^0rr910000000000iXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L', 44, [3, 4, 7, 11, 18, 29]],
  ]
  for (const [text, size, expected] of inlineFixtures) {
    it(`decodes the portable inline fixture to {${expected.join(',')}} and re-encodes it byte for byte`, () => {
      const bytes = z85Decode(text, size)
      const bitmap = deserializeRoaringBitmapArray(bytes, 'inline')
      assert.deepEqual(bitmap.toArray(), expected)
      assert.equal(hex(serializeRoaringBitmapArray(bitmap)), hex(bytes))
    })
  }

  it("decodes PROTOCOL.md's big-endian native example to {3,4,7,11,18,29}", () => {
    const bytes = z85Decode('wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L', 40)
    assert.equal(new DataView(bytes.buffer).getUint32(0, false), NATIVE_BITMAP_ARRAY_MAGIC)
    const bitmap = deserializeRoaringBitmapArray(bytes)
    assert.deepEqual(bitmap.toArray(), [3, 4, 7, 11, 18, 29])
    // Writers emit the portable layout only.
    const rewritten = serializeRoaringBitmapArray(bitmap)
    assert.equal(new DataView(rewritten.buffer).getUint32(0, true), PORTABLE_BITMAP_ARRAY_MAGIC)
  })

  it("decodes Spark's little-endian native layout, keys being bitmap indexes", () => {
    const inner0 = RoaringBitmap32.of(2, 9).serialize('portable')
    const inner1 = RoaringBitmap32.of(4).serialize('portable')
    const bytes = new Uint8Array(4 + 4 + 8 + inner0.length + inner1.length)
    const view = new DataView(bytes.buffer)
    view.setUint32(0, NATIVE_BITMAP_ARRAY_MAGIC, true)
    view.setInt32(4, 2, true)
    view.setInt32(8, inner0.length, true)
    bytes.set(inner0, 12)
    view.setInt32(12 + inner0.length, inner1.length, true)
    bytes.set(inner1, 16 + inner0.length)
    assert.deepEqual(deserializeRoaringBitmapArray(bytes).toArray(), [2, 9, TWO_32 + 4])
  })

  it('serializes the empty set as magic plus a zero bucket count', () => {
    const bytes = serializeRoaringBitmapArray(RoaringBitmapArray.empty())
    assert.equal(hex(bytes), 'd1d33964' + '0000000000000000')
    assert.equal(deserializeRoaringBitmapArray(bytes).isEmpty, true)
  })

  it('writes a dense bucket array like Spark, with empty bitmaps in the gaps', () => {
    const bytes = serializeRoaringBitmapArray(RoaringBitmapArray.fromSorted([1, 2 * TWO_32]))
    const view = new DataView(bytes.buffer)
    assert.equal(view.getUint32(4, true), 3)
    // Bucket 1 is the 8-byte empty bitmap right after bucket 0.
    const bucket0 = RoaringBitmap32.of(1).serialize('portable')
    assert.equal(view.getUint32(12 + 4 + bucket0.length, true), 1)
    assert.equal(hex(bytes.subarray(12 + 8 + bucket0.length, 12 + 16 + bucket0.length)), '3a30000000000000')
  })

  it('reads sparse layouts and empty buckets', () => {
    const one = RoaringBitmap32.of(7).serialize('portable')
    const empty = new RoaringBitmap32().serialize('portable')
    const parts = [
      fromHex('d1d33964 0300000000000000'),
      fromHex('00000000'),
      empty,
      fromHex('02000000'),
      one,
      fromHex('05000000'),
      one,
    ]
    const bytes = Uint8Array.from(parts.flatMap((part) => [...part]))
    assert.deepEqual(deserializeRoaringBitmapArray(bytes).toArray(), [2 * TWO_32 + 7, 5 * TWO_32 + 7])
  })

  it('round-trips random multi-bucket sets, with and without run containers', () => {
    fc.assert(
      fc.property(positions, (values) => {
        const bitmap = RoaringBitmapArray.fromPositions(values)
        const bytes = serializeRoaringBitmapArray(bitmap)
        assert.equal(bytes.length, serializedSizeInBytes(bitmap))
        const view = new DataView(bytes.buffer)
        const last = bitmap.lastBigInt()
        assert.equal(view.getUint32(4, true), last === undefined ? 0 : Number(last >> 32n) + 1)
        const decoded = deserializeRoaringBitmapArray(bytes)
        assert.ok(decoded.equals(bitmap))
        assert.equal(hex(serializeRoaringBitmapArray(decoded)), hex(bytes))
      }),
      { numRuns: 120 },
    )
  })

  it('computes the size of portable 32-bit bitmaps from their headers, for every container kind', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 12 }), fc.integer({ min: 0, max: 6000 }), fc.nat(3)), {
          maxLength: 10,
        }),
        fc.boolean(),
        fc.uint8Array({ maxLength: 9 }),
        (groups, runs, trailing) => {
          const bitmap = new RoaringBitmap32()
          for (const [container, length, stride] of groups) {
            for (let i = 0; i < length; i++) bitmap.add(container * 65536 + ((i * (stride + 1)) % 65536))
          }
          if (runs) bitmap.runOptimize()
          const bytes = bitmap.serialize('portable')
          const padded = new Uint8Array(bytes.length + trailing.length + 3)
          padded.set(bytes, 3)
          padded.set(trailing, 3 + bytes.length)
          assert.equal(portableBitmapSize(padded, 3, padded.length), bytes.length)
          bitmap.dispose()
        },
      ),
      { numRuns: 200 },
    )
  })

  const malformed: ReadonlyArray<readonly [string, () => Uint8Array]> = [
    ['a wrong magic number', () => fromHex('d1d33965 0000000000000000')],
    ['fewer than 4 bytes', () => fromHex('d1d339')],
    ['a truncated bucket count', () => fromHex('d1d33964 01000000')],
    ['a bucket count beyond the data', () => fromHex('d1d33964 0200000000000000 00000000 3a30000000000000')],
    ['a 64-bit bucket count', () => fromHex('d1d33964 0000000001000000')],
    [
      'keys out of order',
      () => fromHex('d1d33964 0200000000000000 01000000 3a30000000000000 01000000 3a30000000000000'),
    ],
    ['a key with its sign bit set', () => fromHex('d1d33964 0100000000000000 00000080 3a30000000000000')],
    ['an unknown Roaring cookie', () => fromHex('d1d33964 0100000000000000 00000000 3a31000000000000')],
    ['trailing bytes', () => fromHex('d1d33964 0000000000000000 00')],
    [
      // The library itself would load this and then answer membership wrongly.
      'an array container whose values do not ascend',
      () => fromHex('d1d33964 0100000000000000 00000000 3a30000001000000 00000100 10000000 09000000'),
    ],
    [
      'container keys that do not ascend',
      () =>
        fromHex(
          'd1d33964 0100000000000000 00000000 3a30000002000000 01000000 00000000 18000000 1a000000 0100 0200',
        ),
    ],
    [
      'overlapping runs',
      () => fromHex('d1d33964 0100000000000000 00000000 3b300000 01 00000400 0200 00000200 02000100'),
    ],
    [
      'runs that do not add up to the declared cardinality',
      () => fromHex('d1d33964 0100000000000000 00000000 3b300000 01 00000500 0100 00000200'),
    ],
    ['a bitset whose bit count differs from its cardinality', () => bitsetWithWrongCount()],
  ]
  for (const [what, bytes] of malformed) {
    it(`rejects ${what} with InvalidDeletionVectorError naming the source`, () => {
      assert.throws(() => deserializeRoaringBitmapArray(bytes(), 'dv.bin'), isDvError('dv.bin'))
    })
  }

  it('rejects every truncation of a valid bitmap', () => {
    const bytes = serializeRoaringBitmapArray(RoaringBitmapArray.fromSorted([0, 9, 70_000, TWO_32 + 1]))
    for (let length = 0; length < bytes.length; length++) {
      assert.throws(
        () => deserializeRoaringBitmapArray(bytes.subarray(0, length), 'cut.bin'),
        isDvError('cut.bin'),
      )
    }
  })

  it('either decodes corrupted bytes or throws InvalidDeletionVectorError, never anything else', () => {
    const original = serializeRoaringBitmapArray(
      RoaringBitmapArray.fromSorted([0, 3, 4, 5, 6, 7, 5000, TWO_32 + 2]),
    )
    fc.assert(
      fc.property(fc.nat(original.length - 1), fc.integer({ min: 0, max: 255 }), (index, value) => {
        const corrupted = Uint8Array.from(original)
        corrupted[index] = value
        try {
          deserializeRoaringBitmapArray(corrupted, 'fuzz.bin').dispose()
        } catch (err) {
          assert.ok(isDvError('fuzz.bin')(err), String(err))
        }
      }),
      { numRuns: 400 },
    )
  })
})
