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
 * `offset`, computed from its header and container descriptors, after checking that every
 * container is well formed.
 *
 * Roaring libraries accept trailing bytes when deserializing but do not say how many they
 * consumed, so walking a 64-bit array of bitmaps needs this size to find the next bucket. The
 * checks matter because the library trusts container contents: an array container with
 * unsorted values would load and then answer membership queries wrongly, and inline DVs carry
 * no checksum.
 *
 * Checked: container keys ascend; array values ascend; a bitset holds as many bits as its
 * declared cardinality; runs ascend without overlap, stay below 2^16 and add up to the
 * declared cardinality.
 *
 * @param bytes - buffer holding the bitmap
 * @param offset - where the bitmap starts (its cookie)
 * @param end - first byte after the region the bitmap must fit in
 * @param path - file the bytes come from, for error messages
 * @returns the number of bytes the bitmap occupies
 * @throws {InvalidDeletionVectorError} when the cookie is unknown, the bitmap does not fit
 *   before `end`, or a container is malformed
 */
export function portableBitmapSize(bytes: Uint8Array, offset: number, end: number, path?: string): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const where = path === undefined ? undefined : { path }
  let at = offset
  const need = (count: number, what: string): void => {
    if (at + count > end) {
      throw new InvalidDeletionVectorError(
        `Truncated Roaring bitmap: its ${what} needs ${count} bytes at byte ${at}, but only ${Math.max(0, end - at)} remain`,
        where,
      )
    }
  }
  const corrupt = (what: string): InvalidDeletionVectorError =>
    new InvalidDeletionVectorError(`Corrupt Roaring bitmap: ${what}`, where)

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
      throw corrupt(`${containers} containers declared, at most ${MAX_CONTAINERS} are possible`)
    }
    hasOffsets = true
  } else {
    throw corrupt(
      `unknown cookie ${cookie} at byte ${offset} (expected ${ROARING_COOKIE_NO_RUNS} or ${ROARING_COOKIE_RUNS})`,
    )
  }

  need(4 * containers, 'container descriptors')
  const descriptorsAt = at
  at += 4 * containers
  if (hasOffsets) {
    need(4 * containers, 'offset header')
    at += 4 * containers
  }

  let previousKey = -1
  for (let i = 0; i < containers; i++) {
    const key = view.getUint16(descriptorsAt + 4 * i, true)
    if (key <= previousKey) throw corrupt(`container key ${key} follows ${previousKey}; keys must ascend`)
    previousKey = key
    const cardinality = view.getUint16(descriptorsAt + 4 * i + 2, true) + 1
    const isRun = runFlagsAt >= 0 && ((bytes[runFlagsAt + (i >>> 3)]! >>> (i & 7)) & 1) === 1
    if (isRun) {
      need(2, 'run count')
      const runs = view.getUint16(at, true)
      need(2 + 4 * runs, `container ${i}`)
      checkRuns(view, at + 2, runs, cardinality, i, corrupt)
      at += 2 + 4 * runs
    } else if (cardinality <= ARRAY_CONTAINER_MAX) {
      need(2 * cardinality, `container ${i}`)
      let previous = -1
      for (let v = 0; v < cardinality; v++) {
        const value = view.getUint16(at + 2 * v, true)
        if (value <= previous) throw corrupt(`array container ${i} is not strictly ascending`)
        previous = value
      }
      at += 2 * cardinality
    } else {
      need(BITSET_CONTAINER_BYTES, `container ${i}`)
      let bits = 0
      for (let w = 0; w < BITSET_CONTAINER_BYTES; w += 4) bits += popcount(view.getUint32(at + w, true))
      if (bits !== cardinality) {
        throw corrupt(`bitset container ${i} holds ${bits} values but declares ${cardinality}`)
      }
      at += BITSET_CONTAINER_BYTES
    }
  }
  return at - offset
}

function checkRuns(
  view: DataView,
  at: number,
  runs: number,
  cardinality: number,
  container: number,
  corrupt: (what: string) => InvalidDeletionVectorError,
): void {
  let total = 0
  let previousEnd = -1
  for (let r = 0; r < runs; r++) {
    const start = view.getUint16(at + 4 * r, true)
    const last = start + view.getUint16(at + 4 * r + 2, true)
    if (start <= previousEnd || last > 0xffff) {
      throw corrupt(`run container ${container} has overlapping, unordered or out-of-range runs`)
    }
    total += last - start + 1
    previousEnd = last
  }
  if (total !== cardinality) {
    throw corrupt(`run container ${container} holds ${total} values but declares ${cardinality}`)
  }
}

function popcount(word: number): number {
  let v = word - ((word >>> 1) & 0x55555555)
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333)
  return Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24
}
