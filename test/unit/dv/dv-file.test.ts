import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import fc from 'fast-check'
import { crc32 } from '../../../src/dv/crc32.js'
import { buildDvFile, dvByteRange, parseDvAt, parseDvRange } from '../../../src/dv/dv-file.js'
import { initDeletionVectors } from '../../../src/dv/initialization.js'
import { RoaringBitmapArray } from '../../../src/dv/roaring-bitmap-array.js'
import { InvalidDeletionVectorError } from '../../../src/errors/index.js'

const TWO_32 = 2 ** 32
const PATH = 'deletion_vector_0000.bin'

function fromHex(text: string): Uint8Array {
  return Uint8Array.from(Buffer.from(text.replaceAll(' ', ''), 'hex'))
}

/** The protocol digest's worked example: table-with-dv-small's DV file, deleting rows {0, 9}. */
const SMALL_DV_FILE = fromHex(
  '01 00000024 d1d33964 0100000000000000 00000000 3a30000001000000 00000100 10000000 00000900 2a671846',
)

/** A DV file whose single DV has bitmap bytes `data`, with a correct size field and CRC. */
function frame(data: Uint8Array): Uint8Array {
  const out = new Uint8Array(1 + 8 + data.length)
  const view = new DataView(out.buffer)
  out[0] = 1
  view.setInt32(1, data.length, false)
  out.set(data, 5)
  view.setUint32(5 + data.length, crc32(data), false)
  return out
}

describe('crc32', () => {
  const vectors: ReadonlyArray<readonly [string, Uint8Array, number]> = [
    ['the empty input', new Uint8Array(0), 0],
    ['the check string 123456789', new TextEncoder().encode('123456789'), 0xcbf43926],
    ["table-with-dv-small's bitmap", SMALL_DV_FILE.subarray(5, 41), 0x2a671846],
  ]
  for (const [what, bytes, expected] of vectors) {
    it(`matches zlib on ${what}`, () => assert.equal(crc32(bytes), expected))
  }

  it('can continue a checksum over split input', () => {
    const data = new TextEncoder().encode('123456789')
    assert.equal(crc32(data.subarray(4), crc32(data.subarray(0, 4))), 0xcbf43926)
  })
})

describe('DV files', () => {
  before(initDeletionVectors)

  it('parses the worked example to {0, 9} and rebuilds it byte for byte', () => {
    const bitmap = parseDvAt(SMALL_DV_FILE, 1, 36, 2, PATH)
    assert.deepEqual(bitmap.toArray(), [0, 9])
    const file = buildDvFile([RoaringBitmapArray.fromSorted([0, 9])])
    assert.deepEqual(file.bytes, SMALL_DV_FILE)
    assert.deepEqual(file.entries, [{ offset: 1, sizeInBytes: 36, cardinality: 2 }])
  })

  it('builds and parses files of many DVs, whole or one byte range at a time', () => {
    const bitmapSets = fc.array(
      fc.array(
        fc.oneof(fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: TWO_32, max: TWO_32 + 100 })),
        { maxLength: 60 },
      ),
      { minLength: 0, maxLength: 6 },
    )
    fc.assert(
      fc.property(bitmapSets, (sets) => {
        const bitmaps = sets.map((set) => RoaringBitmapArray.fromPositions(set))
        const file = buildDvFile(bitmaps)
        assert.equal(file.bytes[0], 1)
        assert.equal(file.entries.length, bitmaps.length)
        let expectedOffset = 1
        file.entries.forEach((entry, i) => {
          assert.equal(entry.offset, expectedOffset)
          assert.equal(entry.cardinality, bitmaps[i]!.cardinality)
          expectedOffset += entry.sizeInBytes + 8
          assert.ok(
            parseDvAt(file.bytes, entry.offset, entry.sizeInBytes, entry.cardinality, PATH).equals(
              bitmaps[i]!,
            ),
          )
          const range = dvByteRange(entry.offset, BigInt(entry.sizeInBytes))
          const slice = file.bytes.subarray(range.offset, range.offset + range.length)
          assert.ok(
            parseDvRange(slice, entry.sizeInBytes, BigInt(entry.cardinality), PATH).equals(bitmaps[i]!),
          )
        })
        assert.equal(file.bytes.length, expectedOffset)
      }),
      { numRuns: 100 },
    )
  })

  /** Each case: a file, the descriptor's offset, size and cardinality, and a word of the message. */
  const failures: ReadonlyArray<readonly [string, () => [Uint8Array, number, number, number], string]> = [
    ['an empty file', () => [new Uint8Array(0), 1, 36, 2], 'empty'],
    [
      'a wrong version byte',
      () => {
        const file = Uint8Array.from(SMALL_DV_FILE)
        file[0] = 2
        return [file, 1, 36, 2]
      },
      'version',
    ],
    ['an offset on the version byte', () => [SMALL_DV_FILE, 0, 36, 2], 'offset 0'],
    ['an offset beyond the file', () => [SMALL_DV_FILE, 42, 36, 2], 'beyond'],
    ['a size beyond the file', () => [SMALL_DV_FILE, 1, 40, 2], 'beyond'],
    ['a size field that differs from sizeInBytes', () => [SMALL_DV_FILE, 1, 32, 2], 'size field'],
    [
      'a bad CRC',
      () => {
        const file = Uint8Array.from(SMALL_DV_FILE)
        file[file.length - 1] = 0x47
        return [file, 1, 36, 2]
      },
      'checksum',
    ],
    [
      'a flipped data byte',
      () => {
        const file = Uint8Array.from(SMALL_DV_FILE)
        file[40] = 8
        return [file, 1, 36, 2]
      },
      'checksum',
    ],
    [
      'a wrong magic number behind a valid CRC',
      () => {
        const data = Uint8Array.from(SMALL_DV_FILE.subarray(5, 41))
        data[0] = 0
        return [frame(data), 1, 36, 2]
      },
      'magic',
    ],
    [
      'a truncated bitmap behind a valid size and CRC',
      () => [frame(SMALL_DV_FILE.subarray(5, 39)), 1, 34, 2],
      'Truncated',
    ],
    ['a cardinality that differs from the descriptor', () => [SMALL_DV_FILE, 1, 36, 3], 'cardinality 3'],
    ['a negative size', () => [SMALL_DV_FILE, 1, -1, 2], 'sizeInBytes'],
  ]
  for (const [what, make, word] of failures) {
    it(`rejects ${what} with InvalidDeletionVectorError naming the file`, () => {
      const [file, offset, size, cardinality] = make()
      assert.throws(
        () => parseDvAt(file, offset, size, cardinality, PATH),
        (err: unknown) =>
          err instanceof InvalidDeletionVectorError &&
          err.code === 'DELTA_INVALID_DELETION_VECTOR' &&
          err.path === PATH &&
          err.message.includes(PATH) &&
          err.message.includes(word),
      )
    })
  }

  it('rejects a byte range shorter than its size and checksum', () => {
    assert.throws(() => parseDvRange(SMALL_DV_FILE.subarray(1, 40), 36, 2, PATH), InvalidDeletionVectorError)
  })
})
