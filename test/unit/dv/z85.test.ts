import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import {
  uuidFromBytes,
  uuidToBytes,
  uuidToZ85,
  z85Decode,
  z85Encode,
  z85ToUuid,
} from '../../../src/dv/z85.js'
import { InvalidArgumentError, InvalidDeletionVectorError } from '../../../src/errors/index.js'

function hex(text: string): Uint8Array {
  return Uint8Array.from(text.match(/../g) ?? [], (pair) => Number.parseInt(pair, 16))
}

describe('z85Encode / z85Decode', () => {
  const vectors: ReadonlyArray<readonly [string, string]> = [
    // ZeroMQ RFC 32 test vector.
    ['864fd26fb559f75b', 'HelloWorld'],
    ['00000000', '00000'],
    ['ffffffff', '%nSc0'],
    // The PROTOCOL.md worked example: table-with-dv-small's DV file UUID.
    ['b6a98cdd7843470d8897708cdffa38c5', 'WYbkwCTB$gH)J7t?$/sK'],
  ]
  for (const [bytes, text] of vectors) {
    it(`encodes ${bytes} as ${text} and back`, () => {
      assert.equal(z85Encode(hex(bytes)), text)
      assert.deepEqual(z85Decode(text), hex(bytes))
    })
  }

  it('pads unaligned input with zero bytes and truncates to the requested length on decode', () => {
    const data = Uint8Array.of(1, 2, 3, 4, 5)
    const text = z85Encode(data)
    assert.equal(text.length, 10)
    assert.equal(text, z85Encode(Uint8Array.of(1, 2, 3, 4, 5, 0, 0, 0)))
    assert.deepEqual(z85Decode(text, 5), data)
  })

  it('wraps a block above 2^32 modulo 2^32 like Java instead of rejecting it', () => {
    // '#####' is 85^5 - 1, which is above 2^32 - 1.
    const wrapped = (85 ** 5 - 1) % 2 ** 32
    const view = new DataView(z85Decode('#####').buffer)
    assert.equal(view.getUint32(0, false), wrapped)
  })

  const malformed: ReadonlyArray<readonly [string, string, number | undefined]> = [
    ['a length that is not a multiple of 5', 'abcd', undefined],
    ['a character outside the alphabet', 'ab"cd', undefined],
    ['a non-ASCII character', 'abc\u00e9d', undefined],
    ['fewer bytes than requested', '00000', 5],
  ]
  for (const [what, text, length] of malformed) {
    it(`rejects ${what} with InvalidDeletionVectorError naming the source`, () => {
      assert.throws(
        () => z85Decode(text, length, 'inline'),
        (err: unknown) =>
          err instanceof InvalidDeletionVectorError &&
          err.code === 'DELTA_INVALID_DELETION_VECTOR' &&
          err.path === 'inline' &&
          err.message.includes('inline'),
      )
    })
  }

  it('round-trips random byte arrays whose length is a multiple of 4', () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 0, max: 64 })
          .chain((blocks) => fc.uint8Array({ minLength: blocks * 4, maxLength: blocks * 4 })),
        (bytes) => {
          const text = z85Encode(bytes)
          assert.equal(text.length, (bytes.length / 4) * 5)
          assert.deepEqual(z85Decode(text), bytes)
        },
      ),
      { numRuns: 300 },
    )
  })

  it('round-trips random byte arrays of any length through padding and truncation', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 67 }), (bytes) => {
        assert.deepEqual(z85Decode(z85Encode(bytes), bytes.length), bytes)
      }),
      { numRuns: 300 },
    )
  })
})

describe('UUIDs in Z85', () => {
  it('decodes the protocol spec check value to its UUID', () => {
    // "ab^-aqEH.-t@S}K{vb[*k^": prefix "ab", then the 20-character UUID.
    assert.equal(z85ToUuid('^-aqEH.-t@S}K{vb[*k^'), 'd2c639aa-8816-431a-aaf6-d3fe2512ff61')
    assert.equal(uuidToZ85('d2c639aa-8816-431a-aaf6-d3fe2512ff61'), '^-aqEH.-t@S}K{vb[*k^')
  })

  it('encodes UUID bytes most significant first, like the hex form', () => {
    assert.deepEqual(
      uuidToBytes('00010203-0405-0607-0809-0a0b0c0d0e0f'),
      Uint8Array.from({ length: 16 }, (_, i) => i),
    )
    assert.equal(
      uuidFromBytes(Uint8Array.from({ length: 16 }, (_, i) => i)),
      '00010203-0405-0607-0809-0a0b0c0d0e0f',
    )
  })

  it('round-trips random UUIDs and lowercases them', () => {
    fc.assert(
      fc.property(fc.uuid(), (uuid) => {
        const text = uuidToZ85(uuid.toUpperCase())
        assert.equal(text.length, 20)
        assert.equal(z85ToUuid(text), uuid.toLowerCase())
      }),
      { numRuns: 200 },
    )
  })

  it('rejects malformed UUID text and wrong Z85 lengths', () => {
    assert.throws(() => uuidToZ85('not-a-uuid'), InvalidArgumentError)
    assert.throws(() => uuidFromBytes(new Uint8Array(15)), InvalidArgumentError)
    assert.throws(() => z85ToUuid('0000000000', 'dv'), InvalidDeletionVectorError)
  })
})
