import { InvalidDeletionVectorError, UnsupportedError } from '../errors/index.js'
import { crc32 } from './crc32.js'
import { assertDeletionVectorsReady } from './initialization.js'
import type { RoaringBitmapArray } from './roaring-bitmap-array.js'
import { deserializeRoaringBitmapArray, serializeRoaringBitmapArray } from './roaring-bitmap-array-codec.js'

/** The first byte of every DV file. */
export const DV_FILE_FORMAT_VERSION = 1

/** Bytes each DV adds around its bitmap in a DV file: a size field before it, a CRC-32 after. */
export const DV_FRAMING_BYTES = 8

/** Where one deletion vector sits in a DV file, as its descriptor records it. */
export interface DvFileEntry {
  /** Position of the DV's 4-byte size field (1 for the first DV of a file). */
  readonly offset: number
  /** Length of the serialized bitmap, excluding the size field and the CRC. */
  readonly sizeInBytes: number
  /** Number of positions in the bitmap. */
  readonly cardinality: number
}

/** A complete DV file and the location of each bitmap in it, in input order. */
export interface DvFile {
  readonly bytes: Uint8Array
  readonly entries: readonly DvFileEntry[]
}

/**
 * Builds a DV file holding `bitmaps`: the version byte, then per bitmap a big-endian int32 size,
 * the portable serialized bitmap and the big-endian CRC-32 of those bitmap bytes.
 *
 * @param bitmaps - the deletion vectors to store, in file order
 * @returns the file bytes and, per bitmap, the offset, size and cardinality for its descriptor
 * @throws {UnsupportedError} when the file would exceed 2^31 - 1 bytes (offsets are Java ints)
 * @throws {InvalidArgumentError} when a bitmap was disposed
 * @throws {InternalError} before {@link initDeletionVectors} resolved
 */
export function buildDvFile(bitmaps: readonly RoaringBitmapArray[]): DvFile {
  assertDeletionVectorsReady('buildDvFile')
  const serialized = bitmaps.map((bitmap) => serializeRoaringBitmapArray(bitmap))
  let total = 1
  for (const data of serialized) total += DV_FRAMING_BYTES + data.length
  if (total > 0x7fffffff) {
    throw new UnsupportedError(
      `A DV file of ${total} bytes is too large; split the bitmaps over several files`,
    )
  }
  const bytes = new Uint8Array(total)
  const view = new DataView(bytes.buffer)
  bytes[0] = DV_FILE_FORMAT_VERSION
  const entries: DvFileEntry[] = []
  let at = 1
  serialized.forEach((data, i) => {
    entries.push(
      Object.freeze({ offset: at, sizeInBytes: data.length, cardinality: bitmaps[i]!.cardinality }),
    )
    view.setInt32(at, data.length, false)
    bytes.set(data, at + 4)
    view.setUint32(at + 4 + data.length, crc32(data), false)
    at += DV_FRAMING_BYTES + data.length
  })
  return Object.freeze({ bytes, entries: Object.freeze(entries) })
}

/**
 * The byte range to fetch for one DV: its size field, bitmap and CRC. Lets a caller read a
 * single DV from a large shared file with one ranged read and then call {@link parseDvRange}.
 *
 * @param offset - the descriptor's offset
 * @param sizeInBytes - the descriptor's sizeInBytes
 * @param path - the DV file, named in errors
 * @returns `{ offset, length }` within the DV file
 * @throws {InvalidDeletionVectorError} when offset or size is not a valid non-negative integer
 */
export function dvByteRange(
  offset: number | bigint,
  sizeInBytes: number | bigint,
  path?: string,
): { readonly offset: number; readonly length: number } {
  const at = toIndex(offset, 'offset', path)
  const size = toIndex(sizeInBytes, 'sizeInBytes', path)
  return Object.freeze({ offset: at, length: size + DV_FRAMING_BYTES })
}

/**
 * Reads and validates the deletion vector at `offset` of a whole DV file.
 *
 * @param fileBytes - the entire DV file
 * @param offset - the descriptor's offset (position of the DV's size field)
 * @param sizeInBytes - the descriptor's sizeInBytes
 * @param expectedCardinality - the descriptor's cardinality
 * @param path - the DV file, named in every error
 * @returns the decoded set of deleted row positions
 * @throws {InvalidDeletionVectorError} on a wrong version byte, an offset or size outside the
 *   file, a size field that differs from `sizeInBytes`, a CRC mismatch, a wrong magic number, a
 *   truncated or corrupt bitmap, or a decoded cardinality that differs from the descriptor's
 * @throws {InternalError} before {@link initDeletionVectors} resolved
 */
export function parseDvAt(
  fileBytes: Uint8Array,
  offset: number | bigint,
  sizeInBytes: number | bigint,
  expectedCardinality: number | bigint,
  path: string,
): RoaringBitmapArray {
  assertDeletionVectorsReady('parseDvAt')
  const at = toIndex(offset, 'offset', path)
  const size = toIndex(sizeInBytes, 'sizeInBytes', path)
  if (fileBytes.length === 0) throw new InvalidDeletionVectorError('The DV file is empty', { path })
  if (fileBytes[0] !== DV_FILE_FORMAT_VERSION) {
    throw new InvalidDeletionVectorError(
      `Unsupported DV file format version ${fileBytes[0]} (expected ${DV_FILE_FORMAT_VERSION}); the file is not a deletion vector file or is corrupt`,
      { path },
    )
  }
  if (at < 1) {
    throw new InvalidDeletionVectorError(
      `DV offset ${at} points at the file's version byte; the first DV of a file starts at offset 1`,
      { path },
    )
  }
  if (at + size + DV_FRAMING_BYTES > fileBytes.length) {
    throw new InvalidDeletionVectorError(
      `The DV at offset ${at} with sizeInBytes ${size} needs bytes up to ${at + size + DV_FRAMING_BYTES}, beyond the end of the ${fileBytes.length}-byte file`,
      { path },
    )
  }
  return parseDvRange(fileBytes.subarray(at, at + size + DV_FRAMING_BYTES), size, expectedCardinality, path)
}

/**
 * Validates and decodes one DV read on its own (see {@link dvByteRange}): the bytes start at the
 * DV's size field. The file's version byte is not part of the range and is not checked here.
 *
 * @param rangeBytes - the size field, the bitmap and the CRC
 * @param sizeInBytes - the descriptor's sizeInBytes
 * @param expectedCardinality - the descriptor's cardinality
 * @param path - the DV file, named in every error
 * @returns the decoded set of deleted row positions
 * @throws {InvalidDeletionVectorError} on a short range, a size field that differs from
 *   `sizeInBytes`, a CRC mismatch, a wrong magic number, a truncated or corrupt bitmap, or a
 *   decoded cardinality that differs from the descriptor's
 * @throws {InternalError} before {@link initDeletionVectors} resolved
 */
export function parseDvRange(
  rangeBytes: Uint8Array,
  sizeInBytes: number | bigint,
  expectedCardinality: number | bigint,
  path: string,
): RoaringBitmapArray {
  assertDeletionVectorsReady('parseDvRange')
  const size = toIndex(sizeInBytes, 'sizeInBytes', path)
  const expected = toCount(expectedCardinality, path)
  if (rangeBytes.length < size + DV_FRAMING_BYTES) {
    throw new InvalidDeletionVectorError(
      `The DV is cut off: sizeInBytes ${size} needs ${size + DV_FRAMING_BYTES} bytes with its size field and checksum, got ${rangeBytes.length}`,
      { path },
    )
  }
  const view = new DataView(rangeBytes.buffer, rangeBytes.byteOffset, rangeBytes.byteLength)
  const declared = view.getInt32(0, false)
  if (declared !== size) {
    throw new InvalidDeletionVectorError(
      `The DV's size field says ${declared} bytes but its descriptor says sizeInBytes ${size}; the descriptor does not point at this DV`,
      { path },
    )
  }
  const data = rangeBytes.subarray(4, 4 + size)
  const stored = view.getUint32(4 + size, false)
  const computed = crc32(data)
  if (stored !== computed) {
    throw new InvalidDeletionVectorError(
      `DV checksum mismatch: stored CRC-32 ${hex(stored)}, computed ${hex(computed)}; the DV file is corrupt`,
      { path },
    )
  }
  const bitmap = deserializeRoaringBitmapArray(data, path)
  if (bitmap.cardinalityBigInt !== expected) {
    const actual = bitmap.cardinality
    bitmap.dispose()
    throw new InvalidDeletionVectorError(
      `The DV holds ${actual} row positions but its descriptor says cardinality ${expected}`,
      { path },
    )
  }
  return bitmap
}

function hex(value: number): string {
  return `0x${value.toString(16).padStart(8, '0')}`
}

function toIndex(value: number | bigint, what: string, path: string | undefined): number {
  const n = typeof value === 'bigint' ? Number(value) : value
  if (!Number.isSafeInteger(n) || n < 0 || n > 0x7fffffff) {
    throw new InvalidDeletionVectorError(
      `Invalid DV ${what} ${String(value)}: expected an integer in [0, 2^31 - 1]`,
      path === undefined ? undefined : { path },
    )
  }
  return n
}

function toCount(value: number | bigint, path: string): bigint {
  if (typeof value === 'number' && !Number.isSafeInteger(value)) {
    throw new InvalidDeletionVectorError(`Invalid DV cardinality ${value}: expected an integer`, { path })
  }
  const count = BigInt(value)
  if (count < 0n) throw new InvalidDeletionVectorError(`Invalid DV cardinality ${count}: negative`, { path })
  return count
}
