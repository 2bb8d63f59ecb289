/**
 * Deletion vectors, byte-exact: the 64-bit {@link RoaringBitmapArray} and its portable and
 * legacy serializations, Z85, DV descriptors and the DV file framing with its CRC-32.
 *
 * Pure: no I/O, no `node:*` import, no asynchronous code except the one-time
 * {@link initDeletionVectors}, which must resolve before any bitmap is built or decoded. Callers
 * read DV files through their own storage and hand the bytes here.
 *
 * Reference: Delta PROTOCOL.md, "Deletion Vectors" (descriptor, file format, bitmap format).
 */
export { crc32 } from './crc32.js'
export {
  createFileDescriptor,
  createInlineDescriptor,
  type DvDescriptor,
  type DvDescriptorLike,
  type DvLocation,
  type DvStorageType,
  decodeInlineDv,
  dvFileName,
  dvRelativePath,
  EMPTY_DV_DESCRIPTOR,
  resolveDvLocation,
} from './descriptor.js'
export {
  buildDvFile,
  DV_FILE_FORMAT_VERSION,
  DV_FRAMING_BYTES,
  type DvFile,
  type DvFileEntry,
  dvByteRange,
  parseDvAt,
  parseDvRange,
} from './dv-file.js'
export { deletionVectorsReady, initDeletionVectors } from './initialization.js'
export { portableBitmapSize } from './portable-roaring.js'
export { RoaringBitmapArray, type RowPosition, type RowPositions } from './roaring-bitmap-array.js'
export {
  deserializeRoaringBitmapArray,
  NATIVE_BITMAP_ARRAY_MAGIC,
  PORTABLE_BITMAP_ARRAY_MAGIC,
  serializedSizeInBytes,
  serializeRoaringBitmapArray,
} from './roaring-bitmap-array-codec.js'
export { checkDvCardinalityFitsFile, checkDvPositionsFitFile } from './row-bounds.js'
export {
  uuidFromBytes,
  uuidToBytes,
  uuidToZ85,
  Z85_ALPHABET,
  Z85_UUID_LENGTH,
  z85Decode,
  z85Encode,
  z85ToUuid,
} from './z85.js'
