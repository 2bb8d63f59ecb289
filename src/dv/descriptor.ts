import { InvalidArgumentError, InvalidDeletionVectorError } from '../errors/index.js'
import { assertDeletionVectorsReady } from './initialization.js'
import { RoaringBitmapArray } from './roaring-bitmap-array.js'
import { deserializeRoaringBitmapArray, serializeRoaringBitmapArray } from './roaring-bitmap-array-codec.js'
import { uuidToZ85, Z85_UUID_LENGTH, z85Decode, z85Encode, z85ToUuid } from './z85.js'

/** `u`: file next to the table named from a UUID; `i`: inline bitmap; `p`: absolute path. */
export type DvStorageType = 'u' | 'i' | 'p'

/**
 * The fields of a deletion vector descriptor (`add.deletionVector`) this module reads. Numbers
 * may be `number` or `bigint`, so any parsed form of the log's `long`s fits.
 */
export interface DvDescriptorLike {
  readonly storageType: string
  readonly pathOrInlineDv: string
  readonly offset?: number | bigint | null | undefined
  readonly sizeInBytes: number | bigint
  readonly cardinality: number | bigint
}

/**
 * A descriptor created by this module, with the log's field names and key order and the
 * protocol module's number types (the `long` cardinality is a bigint), so it can be used as an
 * action's `deletionVector` as is.
 */
export interface DvDescriptor {
  readonly storageType: DvStorageType
  readonly pathOrInlineDv: string
  /** Present for `u` and `p`, absent for `i`. */
  readonly offset?: number
  readonly sizeInBytes: number
  readonly cardinality: bigint
}

/** Where a descriptor's bitmap lives. */
export type DvLocation =
  | {
      readonly kind: 'relative'
      /** Path relative to the table root, `/`-separated, not URL-encoded. */
      readonly path: string
      readonly uuid: string
      /** Random directory prefix, `''` when none. */
      readonly prefix: string
      readonly offset: number
    }
  | {
      readonly kind: 'absolute'
      /** The URI exactly as the log holds it. */
      readonly uri: string
      /** The URI with its percent escapes decoded: the file's actual name. */
      readonly decodedUri: string
      readonly offset: number
    }
  | { readonly kind: 'inline' }

/**
 * The descriptor of a deletion vector that deletes nothing: inline, empty text, size and
 * cardinality 0. Decodes to the empty set.
 */
export const EMPTY_DV_DESCRIPTOR: DvDescriptor = Object.freeze({
  storageType: 'i',
  pathOrInlineDv: '',
  sizeInBytes: 0,
  cardinality: 0n,
})

const DV_FILE_PREFIX = 'deletion_vector_'
const RANDOM_PREFIX_PATTERN = /^[A-Za-z0-9]*$/
const SCHEME_PATTERN = /^[A-Za-z][A-Za-z0-9+.-]*:/

/**
 * The file name of a DV file: `deletion_vector_<uuid>.bin`.
 *
 * @param uuid - lowercase hyphenated UUID
 * @returns the file name
 */
export function dvFileName(uuid: string): string {
  return `${DV_FILE_PREFIX}${uuid}.bin`
}

/**
 * The table-relative path of a DV file: `<prefix>/deletion_vector_<uuid>.bin`, or the bare file
 * name when there is no prefix.
 *
 * @param uuid - lowercase hyphenated UUID
 * @param prefix - the random directory prefix, `''` for none
 * @returns the relative path
 */
export function dvRelativePath(uuid: string, prefix = ''): string {
  return prefix === '' ? dvFileName(uuid) : `${prefix}/${dvFileName(uuid)}`
}

/**
 * Where the bitmap of a descriptor is stored.
 *
 * - `u`: the last 20 characters of `pathOrInlineDv` are the Z85-encoded UUID and anything before
 *   them is a directory prefix; the file is `<prefix>/deletion_vector_<uuid>.bin` under the table
 *   root. The string itself is never a path (the Z85 alphabet contains `/`, `%`, `?`, `#`).
 * - `p`: `pathOrInlineDv` is an absolute, URL-encoded URI; it is validated and returned, decoded,
 *   for the caller to resolve against its stores.
 * - `i`: the bitmap is inline; see {@link decodeInlineDv}.
 *
 * An absent or null offset counts as 0, as the protocol says.
 *
 * @param descriptor - the descriptor
 * @returns the location
 * @throws {InvalidDeletionVectorError} on an unknown storage type, a malformed `u` identifier or a
 *   `p` value that is not a valid absolute URI (a malformed `%` escape, a raw space, no scheme)
 */
export function resolveDvLocation(descriptor: DvDescriptorLike): DvLocation {
  const { storageType, pathOrInlineDv } = descriptor
  switch (storageType) {
    case 'u': {
      const offset = offsetOf(descriptor)
      if (pathOrInlineDv.length < Z85_UUID_LENGTH) {
        throw new InvalidDeletionVectorError(
          `Invalid 'u' deletion vector id '${pathOrInlineDv}': it needs at least ${Z85_UUID_LENGTH} characters (optional prefix, then a Z85 UUID)`,
          { path: pathOrInlineDv },
        )
      }
      const split = pathOrInlineDv.length - Z85_UUID_LENGTH
      const prefix = pathOrInlineDv.slice(0, split)
      if (prefix.startsWith('/') || prefix.split('/').some((part) => part === '.' || part === '..')) {
        throw new InvalidDeletionVectorError(
          `Invalid 'u' deletion vector prefix '${prefix}': it would leave the table directory`,
          { path: pathOrInlineDv },
        )
      }
      const uuid = z85ToUuid(pathOrInlineDv.slice(split), pathOrInlineDv)
      const path = dvRelativePath(uuid, prefix.replace(/\/+$/, ''))
      return Object.freeze({ kind: 'relative', path, uuid, prefix, offset })
    }
    case 'p': {
      const offset = offsetOf(descriptor)
      return Object.freeze({
        kind: 'absolute',
        uri: pathOrInlineDv,
        decodedUri: decodeDvUri(pathOrInlineDv),
        offset,
      })
    }
    case 'i':
      return Object.freeze({ kind: 'inline' })
    default:
      throw new InvalidDeletionVectorError(
        `Unknown deletion vector storageType '${storageType}' (expected 'u', 'i' or 'p')`,
        { path: pathOrInlineDv },
      )
  }
}

/**
 * Decodes the bitmap of an inline (`i`) descriptor: Z85 text truncated to `sizeInBytes`, then a
 * serialized RoaringBitmapArray whose cardinality must match the descriptor's.
 *
 * @param descriptor - an inline descriptor
 * @returns the set of deleted row positions
 * @throws {InvalidDeletionVectorError} when the descriptor is not inline, the Z85 text is
 *   invalid or too short, the bitmap is corrupt, or the cardinality differs
 * @throws {InternalError} before {@link initDeletionVectors} resolved
 */
export function decodeInlineDv(descriptor: DvDescriptorLike): RoaringBitmapArray {
  assertDeletionVectorsReady('decodeInlineDv')
  const path = 'inline'
  if (descriptor.storageType !== 'i') {
    throw new InvalidDeletionVectorError(
      `decodeInlineDv needs an inline ('i') descriptor, got storageType '${descriptor.storageType}'`,
      { path },
    )
  }
  const size = Number(descriptor.sizeInBytes)
  const cardinality = descriptor.cardinality
  if (typeof cardinality === 'number' && !Number.isSafeInteger(cardinality)) {
    throw new InvalidDeletionVectorError(`Invalid inline DV cardinality ${cardinality}`, { path })
  }
  const expected = BigInt(cardinality)
  if (size === 0 && expected === 0n && descriptor.pathOrInlineDv === '') return RoaringBitmapArray.empty()
  const bytes = z85Decode(descriptor.pathOrInlineDv, size, path)
  const bitmap = deserializeRoaringBitmapArray(bytes, path)
  if (bitmap.cardinalityBigInt !== expected) {
    const actual = bitmap.cardinality
    bitmap.dispose()
    throw new InvalidDeletionVectorError(
      `The inline DV holds ${actual} row positions but its descriptor says cardinality ${expected}`,
      { path },
    )
  }
  return bitmap
}

/**
 * A `u` descriptor for a DV written to `deletion_vector_<uuid>.bin` (under `prefix/` when given).
 *
 * @param entry - the file's UUID, its optional random prefix (alphanumeric, as Spark's
 *   `delta.randomPrefixLength` prefixes are), and the DV's offset, size and cardinality in the
 *   file (see `buildDvFile`)
 * @returns a frozen descriptor
 * @throws {InvalidArgumentError} on a malformed UUID, a non-alphanumeric prefix, or a negative or
 *   non-integer number
 */
export function createFileDescriptor(entry: {
  readonly uuid: string
  readonly prefix?: string
  readonly offset: number
  readonly sizeInBytes: number
  readonly cardinality: number | bigint
}): DvDescriptor {
  const prefix = entry.prefix ?? ''
  if (!RANDOM_PREFIX_PATTERN.test(prefix)) {
    throw new InvalidArgumentError(
      `Invalid DV file prefix '${prefix}': only letters and digits are allowed`,
      {
        argument: 'prefix',
      },
    )
  }
  checkCount(entry.offset, 'offset', 1)
  checkCount(entry.sizeInBytes, 'sizeInBytes', 0)
  const cardinality = BigInt(checkCount(entry.cardinality, 'cardinality', 0))
  return Object.freeze({
    storageType: 'u',
    pathOrInlineDv: `${prefix}${uuidToZ85(entry.uuid.toLowerCase())}`,
    offset: entry.offset,
    sizeInBytes: entry.sizeInBytes,
    cardinality,
  })
}

/**
 * An inline (`i`) descriptor carrying `bitmap` itself, Z85-encoded. Suits small DVs; the log
 * grows by about 1.25 bytes per serialized byte.
 *
 * @param bitmap - the deleted row positions
 * @returns a frozen descriptor without offset
 * @throws {InternalError} before {@link initDeletionVectors} resolved
 */
export function createInlineDescriptor(bitmap: RoaringBitmapArray): DvDescriptor {
  assertDeletionVectorsReady('createInlineDescriptor')
  const bytes = serializeRoaringBitmapArray(bitmap)
  return Object.freeze({
    storageType: 'i',
    pathOrInlineDv: z85Encode(bytes),
    sizeInBytes: bytes.length,
    cardinality: bitmap.cardinalityBigInt,
  })
}

// === Internals ===

function offsetOf(descriptor: DvDescriptorLike): number {
  const raw = descriptor.offset
  if (raw === undefined || raw === null) return 0
  const offset = Number(raw)
  if (!Number.isSafeInteger(offset) || offset < 0 || offset > 0x7fffffff) {
    throw new InvalidDeletionVectorError(`Invalid deletion vector offset ${String(raw)}`, {
      path: descriptor.pathOrInlineDv,
    })
  }
  return offset
}

function checkCount<T extends number | bigint>(value: T, argument: string, min: number): T {
  const valid = typeof value === 'bigint' ? value >= BigInt(min) : Number.isSafeInteger(value) && value >= min
  if (!valid) {
    throw new InvalidArgumentError(`Invalid DV ${argument} ${value}: expected an integer >= ${min}`, {
      argument,
    })
  }
  return value
}

/** Validates an absolute DV URI as Java's `new URI` would and decodes its percent escapes. */
function decodeDvUri(uri: string): string {
  for (let i = 0; i < uri.length; i++) {
    const code = uri.charCodeAt(i)
    if (code <= 0x20 || code === 0x7f) {
      throw new InvalidDeletionVectorError(
        `Invalid 'p' deletion vector URI: illegal character ${JSON.stringify(uri[i])} at index ${i}; special characters must be percent-encoded`,
        { path: uri },
      )
    }
    if (code === 0x25 && !/^[0-9A-Fa-f]{2}$/.test(uri.slice(i + 1, i + 3))) {
      throw new InvalidDeletionVectorError(
        `Invalid 'p' deletion vector URI: malformed escape pair at index ${i}; a '%' must be followed by two hex digits (write '%25' for a literal '%')`,
        { path: uri },
      )
    }
  }
  if (!SCHEME_PATTERN.test(uri) && !uri.startsWith('/')) {
    throw new InvalidDeletionVectorError(`Invalid 'p' deletion vector URI: it is not absolute`, { path: uri })
  }
  try {
    return decodeURIComponent(uri)
  } catch (cause) {
    throw new InvalidDeletionVectorError(`Invalid 'p' deletion vector URI: its escapes are not valid UTF-8`, {
      path: uri,
      cause,
    })
  }
}
