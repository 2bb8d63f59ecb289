import { InvalidArgumentError, InvalidDeletionVectorError } from '../errors/index.js'

/** The Z85 alphabet (ZeroMQ RFC 32), in digit order. */
export const Z85_ALPHABET =
  '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#'

/** A UUID always encodes to this many Z85 characters (16 bytes, 4 blocks). */
export const Z85_UUID_LENGTH = 20

const DECODE = (() => {
  const table = new Int8Array(128).fill(-1)
  for (let i = 0; i < Z85_ALPHABET.length; i++) table[Z85_ALPHABET.charCodeAt(i)] = i
  return table
})()

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * Encodes bytes in Z85 exactly as Delta does: big-endian 4-byte blocks, 5 characters each, most
 * significant digit first. Input whose length is not a multiple of 4 is padded with zero bytes to
 * the next multiple; decoders drop the padding by truncating to the known length.
 *
 * @param bytes - the data
 * @returns the Z85 text, `5 * ceil(length / 4)` characters long
 */
export function z85Encode(bytes: Uint8Array): string {
  const blocks = Math.ceil(bytes.length / 4)
  let padded = bytes
  if (bytes.length % 4 !== 0) {
    padded = new Uint8Array(blocks * 4)
    padded.set(bytes)
  }
  const view = new DataView(padded.buffer, padded.byteOffset, padded.byteLength)
  const out = new Array<string>(blocks * 5)
  for (let b = 0; b < blocks; b++) {
    let value = view.getUint32(b * 4, false)
    for (let d = 4; d >= 0; d--) {
      out[b * 5 + d] = Z85_ALPHABET[value % 85]!
      value = Math.floor(value / 85)
    }
  }
  return out.join('')
}

/**
 * Decodes Z85 text as Delta does: every 5-character block becomes 4 big-endian bytes, reduced
 * modulo 2^32 like Java's `Long.toInt` (one real table has a padding block above 2^32), and the
 * result is truncated to `length` when given.
 *
 * @param text - Z85 text, a multiple of 5 characters
 * @param length - the number of bytes wanted (a DV's `sizeInBytes`); defaults to all decoded bytes
 * @param path - what the text belongs to, named in errors (e.g. `inline`)
 * @returns the decoded bytes
 * @throws {InvalidDeletionVectorError} when the length is not a multiple of 5, a character is
 *   outside the alphabet, or the text holds fewer than `length` bytes
 */
export function z85Decode(text: string, length?: number, path?: string): Uint8Array {
  const where = path === undefined ? undefined : { path }
  if (text.length % 5 !== 0) {
    throw new InvalidDeletionVectorError(
      `Invalid Z85 text: its length ${text.length} is not a multiple of 5`,
      where,
    )
  }
  const decodedLength = (text.length / 5) * 4
  if (length !== undefined && (!Number.isSafeInteger(length) || length < 0 || length > decodedLength)) {
    throw new InvalidDeletionVectorError(
      `Z85 text of ${text.length} characters holds ${decodedLength} bytes, but ${length} are expected`,
      where,
    )
  }
  const out = new Uint8Array(decodedLength)
  const view = new DataView(out.buffer)
  for (let b = 0; b < text.length; b += 5) {
    let value = 0
    for (let d = 0; d < 5; d++) {
      const code = text.charCodeAt(b + d)
      const digit = code < 128 ? DECODE[code]! : -1
      if (digit < 0) {
        throw new InvalidDeletionVectorError(
          `Invalid Z85 text: character ${JSON.stringify(text[b + d])} at index ${b + d} is not in the alphabet`,
          where,
        )
      }
      value = value * 85 + digit
    }
    // Below 85^5 (about 4.4e9) the double is exact; `>>> 0` then wraps modulo 2^32 like Java.
    view.setUint32((b / 5) * 4, value >>> 0, false)
  }
  return length === undefined || length === decodedLength ? out : out.slice(0, length)
}

/**
 * The 16 bytes of a UUID: most significant 64 bits then least significant 64 bits, both
 * big-endian, which is the byte order of its canonical hex form.
 *
 * @param uuid - canonical hyphenated UUID, any case
 * @returns its bytes
 * @throws {InvalidArgumentError} when `uuid` is not a canonical UUID
 */
export function uuidToBytes(uuid: string): Uint8Array {
  if (!UUID_PATTERN.test(uuid)) {
    throw new InvalidArgumentError(`Invalid UUID '${uuid}': expected 8-4-4-4-12 hex digits`, {
      argument: 'uuid',
    })
  }
  const hex = uuid.replaceAll('-', '')
  const out = new Uint8Array(16)
  for (let i = 0; i < 16; i++) out[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16)
  return out
}

/**
 * The canonical lowercase hyphenated form of 16 UUID bytes.
 *
 * @param bytes - exactly 16 bytes
 * @returns the UUID text
 * @throws {InvalidArgumentError} when `bytes` is not 16 bytes long
 */
export function uuidFromBytes(bytes: Uint8Array): string {
  if (bytes.length !== 16) {
    throw new InvalidArgumentError(`A UUID has 16 bytes, got ${bytes.length}`, { argument: 'bytes' })
  }
  let hex = ''
  for (const byte of bytes) hex += byte.toString(16).padStart(2, '0')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/**
 * Encodes a UUID as the 20 Z85 characters Delta uses in `u` deletion vector descriptors.
 *
 * @param uuid - canonical hyphenated UUID
 * @returns 20 Z85 characters
 * @throws {InvalidArgumentError} when `uuid` is not a canonical UUID
 */
export function uuidToZ85(uuid: string): string {
  return z85Encode(uuidToBytes(uuid))
}

/**
 * Decodes the 20 Z85 characters of a `u` descriptor back to the UUID.
 *
 * @param text - exactly 20 Z85 characters
 * @param path - what the text belongs to, named in errors
 * @returns the lowercase hyphenated UUID
 * @throws {InvalidDeletionVectorError} when `text` is not 20 valid Z85 characters
 */
export function z85ToUuid(text: string, path?: string): string {
  if (text.length !== Z85_UUID_LENGTH) {
    throw new InvalidDeletionVectorError(
      `A Z85-encoded UUID has ${Z85_UUID_LENGTH} characters, got ${text.length}`,
      path === undefined ? undefined : { path },
    )
  }
  return uuidFromBytes(z85Decode(text, 16, path))
}
