import { InvalidDeletionVectorError } from '../errors/index.js'

/** Cookie of a portable 32-bit Roaring bitmap without run containers. */
export const ROARING_COOKIE_NO_RUNS = 12346
/** Low 16 bits of the cookie of a portable 32-bit Roaring bitmap with run containers. */
export const ROARING_COOKIE_RUNS = 12347

/** With run containers, the offset header is only written from this many containers on. */
const NO_OFFSET_THRESHOLD = 4
/** Containers up to this cardinality are arrays of uint16; above it, 8 KiB bitsets. */
const ARRAY_CONTAINER_MAX = 4096
const BITSET_CONTAINER_BYTES = 8192
const MAX_CONTAINERS = 65536

/**
 * Byte length of the portable (RoaringFormatSpec) 32-bit Roaring bitmap that starts at
 * `offset`, computed from its header and container descriptors alone.
 *
 * Roaring libraries accept trailing bytes when deserializing but do not say how many they
 * consumed, so walking a 64-bit array of bitmaps needs this size to find the next bucket.
 *
 * @param bytes - buffer holding the bitmap
 * @param offset - where the bitmap starts (its cookie)
 * @param end - first byte after the region the bitmap must fit in
 * @param path - file the bytes come from, for error messages
 * @returns the number of bytes the bitmap occupies
 * @throws {InvalidDeletionVectorError} when the cookie is unknown or the bitmap does not fit
 *   before `end`
 */
export function portableBitmapSize(bytes: Uint8Array, offset: number, end: number, path?: string): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let at = offset
  const need = (count: number, what: string): void => {
    if (at + count > end) {
      throw new InvalidDeletionVectorError(
        `Truncated Roaring bitmap: its ${what} needs ${count} bytes at byte ${at}, but only ${Math.max(0, end - at)} remain`,
        path === undefined ? undefined : { path },
      )
    }
  }

  need(4, 'cookie')
  const cookie = view.getUint32(at, true)
  at += 4
  let containers: number
  let runFlagsAt = -1
  let hasOffsets: boolean
  if ((cookie & 0xffff) === ROARING_COOKIE_RUNS) {
    containers = (cookie >>> 16) + 1
    const flagBytes = Math.ceil(containers / 8)
    need(flagBytes, 'run-container flags')
    runFlagsAt = at
    at += flagBytes
    hasOffsets = containers >= NO_OFFSET_THRESHOLD
  } else if (cookie === ROARING_COOKIE_NO_RUNS) {
    need(4, 'container count')
    containers = view.getUint32(at, true)
    at += 4
    if (containers > MAX_CONTAINERS) {
      throw new InvalidDeletionVectorError(
        `Corrupt Roaring bitmap: ${containers} containers declared, at most ${MAX_CONTAINERS} are possible`,
        path === undefined ? undefined : { path },
      )
    }
    hasOffsets = true
  } else {
    throw new InvalidDeletionVectorError(
      `Corrupt Roaring bitmap: unknown cookie ${cookie} at byte ${offset} (expected ${ROARING_COOKIE_NO_RUNS} or ${ROARING_COOKIE_RUNS})`,
      path === undefined ? undefined : { path },
    )
  }

  need(4 * containers, 'container descriptors')
  const descriptorsAt = at
  at += 4 * containers
  if (hasOffsets) {
    need(4 * containers, 'offset header')
    at += 4 * containers
  }

  for (let i = 0; i < containers; i++) {
    const isRun = runFlagsAt >= 0 && ((bytes[runFlagsAt + (i >>> 3)]! >>> (i & 7)) & 1) === 1
    let size: number
    if (isRun) {
      need(2, 'run count')
      size = 2 + 4 * view.getUint16(at, true)
    } else {
      const cardinality = view.getUint16(descriptorsAt + 4 * i + 2, true) + 1
      size = cardinality <= ARRAY_CONTAINER_MAX ? 2 * cardinality : BITSET_CONTAINER_BYTES
    }
    need(size, `container ${i}`)
    at += size
  }
  return at - offset
}
