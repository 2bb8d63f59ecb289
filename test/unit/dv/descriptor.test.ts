import assert from 'node:assert/strict'
import { before, describe, it } from 'node:test'
import fc from 'fast-check'
import {
  createFileDescriptor,
  createInlineDescriptor,
  decodeInlineDv,
  dvRelativePath,
  EMPTY_DV_DESCRIPTOR,
  resolveDvLocation,
} from '../../../src/dv/descriptor.js'
import { initDeletionVectors } from '../../../src/dv/initialization.js'
import { RoaringBitmapArray } from '../../../src/dv/roaring-bitmap-array.js'
import { InvalidArgumentError, InvalidDeletionVectorError } from '../../../src/errors/index.js'

function dvError(path: string) {
  return (err: unknown): boolean =>
    err instanceof InvalidDeletionVectorError &&
    err.code === 'DELTA_INVALID_DELETION_VECTOR' &&
    err.path === path &&
    err.message.includes(path)
}

describe('resolveDvLocation', () => {
  const relative: ReadonlyArray<readonly [string, string, string]> = [
    // The protocol's spec check value.
    ['ab^-aqEH.-t@S}K{vb[*k^', 'ab', 'ab/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin'],
    ['WYbkwCTB$gH)J7t?$/sK', '', 'deletion_vector_b6a98cdd-7843-470d-8897-708cdffa38c5.bin'],
  ]
  for (const [id, prefix, path] of relative) {
    it(`maps 'u' id ${id} to ${path}`, () => {
      const location = resolveDvLocation({
        storageType: 'u',
        pathOrInlineDv: id,
        offset: 43,
        sizeInBytes: 34,
        cardinality: 1n,
      })
      assert.deepEqual(location, {
        kind: 'relative',
        path,
        uuid: path.slice(path.indexOf('deletion_vector_') + 16, -4),
        prefix,
        offset: 43,
      })
    })
  }

  it('treats an absent or null offset as 0, as the protocol says', () => {
    for (const offset of [undefined, null]) {
      const location = resolveDvLocation({
        storageType: 'u',
        pathOrInlineDv: 'WYbkwCTB$gH)J7t?$/sK',
        offset,
        sizeInBytes: 1,
        cardinality: 1,
      })
      assert.equal(location.kind === 'relative' && location.offset, 0)
    }
  })

  it("returns 'p' URIs with their escapes decoded, as in table-with-dv-special-char", () => {
    const uri = 'file:/tmp/t/folder&with%25special%20char/test%25dv%25prefix-deletion_vector_67bc892e.bin'
    assert.deepEqual(
      resolveDvLocation({ storageType: 'p', pathOrInlineDv: uri, offset: 1, sizeInBytes: 1, cardinality: 1 }),
      {
        kind: 'absolute',
        uri,
        decodedUri: 'file:/tmp/t/folder&with%special char/test%dv%prefix-deletion_vector_67bc892e.bin',
        offset: 1,
      },
    )
  })

  const badUris: ReadonlyArray<readonly [string, string]> = [
    ['a malformed escape', 'file:/tmp/t/folder&with%zzspecial/x.bin'],
    ['a raw %', 'file:/tmp/t/folder&with%special char/x.bin'],
    ['a raw space', 'file:/tmp/t/with space/x.bin'],
    ['a truncated escape at the end', 'file:/tmp/x.bin%2'],
    ['escapes that are not UTF-8', 'file:/tmp/%ff.bin'],
    ['a relative path', 'tmp/x.bin'],
  ]
  for (const [what, uri] of badUris) {
    it(`rejects a 'p' URI with ${what}`, () => {
      assert.throws(
        () =>
          resolveDvLocation({
            storageType: 'p',
            pathOrInlineDv: uri,
            offset: 1,
            sizeInBytes: 1,
            cardinality: 1,
          }),
        dvError(uri),
      )
    })
  }

  const badIds: ReadonlyArray<readonly [string, string, string]> = [
    ['too short', 'u', 'abc'],
    ['not Z85', 'u', 'WYbkwCTB$gH)J7t?$/s"'],
    ['a prefix leaving the table', 'u', '../WYbkwCTB$gH)J7t?$/sK'],
    ['an unknown storage type', 'x', 'WYbkwCTB$gH)J7t?$/sK'],
  ]
  for (const [what, storageType, id] of badIds) {
    it(`rejects an id that is ${what}`, () => {
      assert.throws(
        () =>
          resolveDvLocation({ storageType, pathOrInlineDv: id, offset: 1, sizeInBytes: 1, cardinality: 1 }),
        dvError(id),
      )
    })
  }

  it("reports 'i' descriptors as inline", () => {
    assert.deepEqual(resolveDvLocation(EMPTY_DV_DESCRIPTOR), { kind: 'inline' })
  })
})

describe('creating descriptors', () => {
  before(initDeletionVectors)

  it('creates u descriptors that resolve back to their file, with the log key order', () => {
    fc.assert(
      fc.property(fc.uuid(), fc.stringMatching(/^[A-Za-z0-9]{0,3}$/), (uuid, prefix) => {
        const descriptor = createFileDescriptor({ uuid, prefix, offset: 1, sizeInBytes: 36, cardinality: 2 })
        assert.deepEqual(Object.keys(descriptor), [
          'storageType',
          'pathOrInlineDv',
          'offset',
          'sizeInBytes',
          'cardinality',
        ])
        assert.equal(descriptor.cardinality, 2n)
        assert.equal(descriptor.pathOrInlineDv.length, prefix.length + 20)
        const location = resolveDvLocation(descriptor)
        assert.equal(
          location.kind === 'relative' && location.path,
          dvRelativePath(uuid.toLowerCase(), prefix),
        )
        assert.ok(Object.isFrozen(descriptor))
      }),
      { numRuns: 100 },
    )
  })

  it('refuses malformed input when creating u descriptors', () => {
    const uuid = 'd2c639aa-8816-431a-aaf6-d3fe2512ff61'
    assert.throws(
      () => createFileDescriptor({ uuid: 'nope', offset: 1, sizeInBytes: 1, cardinality: 1 }),
      InvalidArgumentError,
    )
    assert.throws(
      () => createFileDescriptor({ uuid, prefix: 'a/b', offset: 1, sizeInBytes: 1, cardinality: 1 }),
      InvalidArgumentError,
    )
    assert.throws(
      () => createFileDescriptor({ uuid, offset: 0, sizeInBytes: 1, cardinality: 1 }),
      InvalidArgumentError,
    )
    assert.throws(
      () => createFileDescriptor({ uuid, offset: 1, sizeInBytes: 1, cardinality: -1n }),
      InvalidArgumentError,
    )
  })

  it('round-trips bitmaps through inline descriptors', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.nat(100_000), fc.integer({ min: 2 ** 32, max: 2 ** 32 + 9 })), {
          maxLength: 80,
        }),
        (values) => {
          const bitmap = RoaringBitmapArray.fromPositions(values)
          const descriptor = createInlineDescriptor(bitmap)
          assert.deepEqual(Object.keys(descriptor), [
            'storageType',
            'pathOrInlineDv',
            'sizeInBytes',
            'cardinality',
          ])
          assert.equal(descriptor.pathOrInlineDv.length, Math.ceil(descriptor.sizeInBytes / 4) * 5)
          assert.ok(decodeInlineDv(descriptor).equals(bitmap))
        },
      ),
      { numRuns: 100 },
    )
  })

  it('decodes the fixture-style inline DV and the empty descriptor', () => {
    const descriptor = {
      storageType: 'i',
      pathOrInlineDv: '^Bg9^0rr910000000000iXQKl0rr91000625c8Xg0rri41POJ5',
      sizeInBytes: 38,
      cardinality: 3n,
    }
    assert.deepEqual(decodeInlineDv(descriptor).toArray(), [1, 3, 5])
    assert.equal(decodeInlineDv(EMPTY_DV_DESCRIPTOR).isEmpty, true)
  })

  const badInline: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
    ['a cardinality that differs', { cardinality: 4 }],
    ['a size larger than the text', { sizeInBytes: 44 }],
    ['a size smaller than the bitmap', { sizeInBytes: 30 }],
    [
      'text outside the Z85 alphabet',
      { pathOrInlineDv: '"Bg9^0rr910000000000iXQKl0rr91000625c8Xg0rri41POJ5' },
    ],
    ['a non-inline storage type', { storageType: 'u' }],
  ]
  for (const [what, change] of badInline) {
    it(`rejects an inline DV with ${what}`, () => {
      const descriptor = {
        storageType: 'i',
        pathOrInlineDv: '^Bg9^0rr910000000000iXQKl0rr91000625c8Xg0rri41POJ5',
        sizeInBytes: 38,
        cardinality: 3,
        ...change,
      } as Parameters<typeof decodeInlineDv>[0]
      assert.throws(() => decodeInlineDv(descriptor), dvError('inline'))
    })
  }
})
