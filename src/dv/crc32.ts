/** Lookup table of the reflected IEEE 802.3 polynomial 0xEDB88320 (zlib, Java `CRC32`). */
const TABLE = (() => {
  const table = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    table[n] = c >>> 0
  }
  return table
})()

/**
 * CRC-32 as zlib and Java's `java.util.zip.CRC32` compute it: the checksum Delta stores after
 * each deletion vector in a DV file.
 *
 * @param bytes - the data
 * @param previous - the CRC of the bytes before `bytes`, to checksum data in pieces
 * @returns the checksum as an unsigned 32-bit integer
 */
export function crc32(bytes: Uint8Array, previous = 0): number {
  let crc = ~previous >>> 0
  for (let i = 0; i < bytes.length; i++) crc = TABLE[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8)
  return ~crc >>> 0
}
