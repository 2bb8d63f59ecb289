import { RoaringBitmap32 } from 'roaring-wasm'
import { InvalidDeletionVectorError, UnsupportedError } from '../errors/index.js'
import { assertDeletionVectorsReady } from './initialization.js'
import { portableBitmapSize } from './portable-roaring.js'
import {
  bitmapArrayBuckets,
  bitmapArrayFromBuckets,
  MAX_BUCKET_KEY,
  type RoaringBitmapArray,
} from './roaring-bitmap-array.js'

/** Magic number of the portable RoaringBitmapArray layout, the one writers must emit. */
export const PORTABLE_BITMAP_ARRAY_MAGIC = 1681511377
/** Magic number of Spark's older "native" RoaringBitmapArray layout, still accepted on read. */
export const NATIVE_BITMAP_ARRAY_MAGIC = 1681511376

/** A portable 32-bit bitmap with no container: cookie 12346, count 0. */
const EMPTY_PORTABLE_BITMAP = Uint8Array.of(0x3a, 0x30, 0, 0, 0, 0, 0, 0)
/** Smallest possible bucket: a 4-byte key plus an empty bitmap. */
const MIN_BUCKET_BYTES = 4 + EMPTY_PORTABLE_BITMAP.length
/** Java byte arrays, and so every Delta reader, stop at 2^31 - 1 bytes. */
const MAX_SERIALIZED_BYTES = 0x7fffffff

function fail(message: string, path: string | undefined): InvalidDeletionVectorError {
  return new InvalidDeletionVectorError(message, path === undefined ? undefined : { path })
}

// === Writing ===

/**
 * Number of bytes {@link serializeRoaringBitmapArray} produces for `array`.
 *
 * @param array - the set
 * @returns the serialized length, magic included
 * @throws {UnsupportedError} when the set is too large for one Delta bitmap (2^31 - 1 bytes)
 */
export function serializedSizeInBytes(array: RoaringBitmapArray): number {
  const { keys, bitmaps } = bitmapArrayBuckets(array)
  const bucketCount = keys.length === 0 ? 0 : keys[keys.length - 1]! + 1
  let size = 4 + 8 + (bucketCount - keys.length) * MIN_BUCKET_BYTES
  for (const bitmap of bitmaps) size += 4 + bitmap.getSerializationSizeInBytes('portable')
  if (size > MAX_SERIALIZED_BYTES) {
    throw new UnsupportedError(
      `A deletion vector of ${size} bytes is too large to serialize; Delta bitmaps stop at ${MAX_SERIALIZED_BYTES} bytes`,
    )
  }
  return size
}

/**
 * Serializes a set in the portable RoaringBitmapArray layout Delta stores in DV files and inline
 * descriptors: `uint32 LE magic 1681511377`, `uint64 LE bucket count`, then per bucket a
 * `uint32 LE key` and a portable 32-bit Roaring bitmap.
 *
 * Like Spark, the bucket array is dense: every key from 0 to the highest one is written, empty
 * buckets as 8-byte empty bitmaps, so the bytes match what Spark writes for the same set (real
 * row positions sit below 2^32, in bucket 0 alone).
 *
 * @param array - the set
 * @returns the serialized bytes
 * @throws {UnsupportedError} when the set is too large for one Delta bitmap
 * @throws {InvalidArgumentError} when `array` was disposed
 * @throws {InternalError} before {@link initDeletionVectors} resolved
 */
export function serializeRoaringBitmapArray(array: RoaringBitmapArray): Uint8Array {
  assertDeletionVectorsReady('serializeRoaringBitmapArray')
  const size = serializedSizeInBytes(array)
  const { keys, bitmaps } = bitmapArrayBuckets(array)
  const out = new Uint8Array(size)
  const view = new DataView(out.buffer)
  const bucketCount = keys.length === 0 ? 0 : keys[keys.length - 1]! + 1
  view.setUint32(0, PORTABLE_BITMAP_ARRAY_MAGIC, true)
  view.setUint32(4, bucketCount, true)
  view.setUint32(8, 0, true)
  let at = 12
  let next = 0
  for (let key = 0; key < bucketCount; key++) {
    view.setUint32(at, key, true)
    at += 4
    if (keys[next] === key) {
      const bytes = bitmaps[next++]!.serialize('portable')
      out.set(bytes, at)
      at += bytes.length
    } else {
      out.set(EMPTY_PORTABLE_BITMAP, at)
      at += EMPTY_PORTABLE_BITMAP.length
    }
  }
  return out
}

// === Reading ===

/**
 * Decodes a serialized RoaringBitmapArray: the portable layout (magic 1681511377, little-endian)
 * and Spark's legacy native layout (magic 1681511376), in the little-endian form Spark wrote and
 * in the big-endian form of the Delta protocol's inline example.
 *
 * The whole buffer must be one bitmap: trailing bytes are an error. Empty buckets and gaps
 * between keys are accepted.
 *
 * @param bytes - exactly the serialized bitmap (a DV's `sizeInBytes` bytes)
 * @param path - the DV file (or `inline`) the bytes come from, named in errors
 * @returns the set
 * @throws {InvalidDeletionVectorError} on an unknown magic number, a truncated or corrupt
 *   bitmap, keys out of order or out of range, or trailing bytes
 * @throws {InternalError} before {@link initDeletionVectors} resolved
 */
export function deserializeRoaringBitmapArray(bytes: Uint8Array, path?: string): RoaringBitmapArray {
  assertDeletionVectorsReady('deserializeRoaringBitmapArray')
  if (bytes.length < 4) {
    throw fail(`Truncated deletion vector bitmap: ${bytes.length} bytes, too short for a magic number`, path)
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const magic = view.getUint32(0, true)
  const keys: number[] = []
  const bitmaps: RoaringBitmap32[] = []
  try {
    let end: number
    if (magic === PORTABLE_BITMAP_ARRAY_MAGIC) end = readPortable(bytes, view, keys, bitmaps, path)
    else if (magic === NATIVE_BITMAP_ARRAY_MAGIC) end = readNative(bytes, view, true, keys, bitmaps, path)
    else if (view.getUint32(0, false) === NATIVE_BITMAP_ARRAY_MAGIC) {
      end = readNative(bytes, view, false, keys, bitmaps, path)
    } else {
      throw fail(
        `Unexpected deletion vector magic number ${view.getInt32(0, true)} (expected ${PORTABLE_BITMAP_ARRAY_MAGIC}): not a RoaringBitmapArray`,
        path,
      )
    }
    if (end !== bytes.length) {
      throw fail(`Deletion vector bitmap has ${bytes.length - end} unexpected trailing bytes`, path)
    }
  } catch (err) {
    for (const bitmap of bitmaps) bitmap.dispose()
    throw err
  }
  return bitmapArrayFromBuckets(keys, bitmaps)
}

function readPortable(
  bytes: Uint8Array,
  view: DataView,
  keys: number[],
  bitmaps: RoaringBitmap32[],
  path: string | undefined,
): number {
  if (bytes.length < 12) throw fail('Truncated deletion vector bitmap: the bucket count is cut off', path)
  const countLow = view.getUint32(4, true)
  const countHigh = view.getUint32(8, true)
  if (countHigh !== 0 || countLow > MAX_BUCKET_KEY + 1) {
    throw fail(
      `Corrupt deletion vector bitmap: bucket count ${countHigh * 2 ** 32 + countLow} is out of range`,
      path,
    )
  }
  if (countLow * MIN_BUCKET_BYTES > bytes.length - 12) {
    throw fail(
      `Truncated deletion vector bitmap: ${countLow} buckets declared, but only ${bytes.length - 12} bytes follow`,
      path,
    )
  }
  let at = 12
  let previous = -1
  for (let i = 0; i < countLow; i++) {
    if (at + 4 > bytes.length)
      throw fail(`Truncated deletion vector bitmap: bucket ${i} key is cut off`, path)
    const key = view.getUint32(at, true)
    at += 4
    if (key > MAX_BUCKET_KEY) {
      throw fail(`Corrupt deletion vector bitmap: bucket key ${key} has its sign bit set`, path)
    }
    if (key <= previous) {
      throw fail(
        `Corrupt deletion vector bitmap: bucket key ${key} follows ${previous}; keys must ascend`,
        path,
      )
    }
    previous = key
    const size = portableBitmapSize(bytes, at, bytes.length, path)
    addBucket(bytes.subarray(at, at + size), key, keys, bitmaps, path)
    at += size
  }
  return at
}

function readNative(
  bytes: Uint8Array,
  view: DataView,
  littleEndian: boolean,
  keys: number[],
  bitmaps: RoaringBitmap32[],
  path: string | undefined,
): number {
  if (bytes.length < 8) throw fail('Truncated deletion vector bitmap: the bitmap count is cut off', path)
  const count = view.getInt32(4, littleEndian)
  if (count < 0 || count * 12 > bytes.length - 8) {
    throw fail(`Corrupt deletion vector bitmap: native bitmap count ${count} does not fit the data`, path)
  }
  let at = 8
  for (let key = 0; key < count; key++) {
    if (at + 4 > bytes.length)
      throw fail(`Truncated deletion vector bitmap: bitmap ${key} size is cut off`, path)
    const declared = view.getInt32(at, littleEndian)
    at += 4
    if (declared < 0 || at + declared > bytes.length) {
      throw fail(
        `Truncated deletion vector bitmap: bitmap ${key} declares ${declared} bytes, ${bytes.length - at} remain`,
        path,
      )
    }
    const size = portableBitmapSize(bytes, at, at + declared, path)
    if (size !== declared) {
      throw fail(
        `Corrupt deletion vector bitmap: bitmap ${key} declares ${declared} bytes but holds ${size}`,
        path,
      )
    }
    addBucket(bytes.subarray(at, at + size), key, keys, bitmaps, path)
    at += size
  }
  return at
}

function addBucket(
  slice: Uint8Array,
  key: number,
  keys: number[],
  bitmaps: RoaringBitmap32[],
  path: string | undefined,
): void {
  let bitmap: RoaringBitmap32
  try {
    bitmap = RoaringBitmap32.deserialize('portable', slice)
  } catch (cause) {
    throw new InvalidDeletionVectorError(
      `Corrupt deletion vector bitmap: bucket ${key} is not a valid portable Roaring bitmap`,
      path === undefined ? { cause } : { path, cause },
    )
  }
  if (bitmap.isEmpty) {
    bitmap.dispose()
    return
  }
  keys.push(key)
  bitmaps.push(bitmap)
}
