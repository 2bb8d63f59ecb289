import { InvalidArgumentError } from '../errors/index.js'
import type { ByteRange, FileMeta, ObjectStore } from './object-store.js'

/**
 * Checks that `key` is a store key: relative, `/`-separated, with no empty, `.` or `..` segment
 * (a trailing `/` is allowed for directory keys). Keeps every backend inside its root.
 *
 * @param key - the key to check
 * @returns the key unchanged
 * @throws {InvalidArgumentError} when the key could escape the root or is malformed
 */
export function checkKey(key: string): string {
  if (key.startsWith('/') || key.includes('\\') || key.includes('\0')) {
    throw new InvalidArgumentError(`Invalid storage key '${key}': keys are relative and use '/'`, {
      argument: 'key',
    })
  }
  const parts = key.split('/')
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]
    const isTrailingSlash = i === parts.length - 1 && p === '' && i > 0
    if ((p === '' && !isTrailingSlash && key !== '') || p === '.' || p === '..') {
      throw new InvalidArgumentError(`Invalid storage key '${key}': empty, '.' or '..' segment`, {
        argument: 'key',
      })
    }
  }
  return key
}

/**
 * The directory part of a key, with its trailing `/` (`''` for the root).
 *
 * @param key - a key
 * @returns everything up to and including the last `/`
 */
export function dirOf(key: string): string {
  const i = key.lastIndexOf('/')
  return i < 0 ? '' : key.slice(0, i + 1)
}

/**
 * Compares two strings in UTF-8 byte order, the order listings promise (JavaScript's default
 * comparison is UTF-16 code unit order, which differs above U+FFFF).
 */
export function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'))
}

/**
 * Checks that `key` names an object: a valid key (see {@link checkKey}) that is neither the root
 * nor a directory key ending in `/`.
 *
 * @param key - the key to check
 * @returns the key unchanged
 * @throws {InvalidArgumentError} when the key is malformed or names a directory
 */
export function checkObjectKey(key: string): string {
  checkKey(key)
  if (key === '' || key.endsWith('/')) {
    throw new InvalidArgumentError(
      `Invalid object key '${key}': an object key names a file, not a directory`,
      { argument: 'key' },
    )
  }
  return key
}

/**
 * Checks that `prefix` is a directory key for a recursive listing: `''` for the root, or a key
 * ending in `/`.
 *
 * @param prefix - the listing prefix, already checked with {@link checkKey}
 * @returns the prefix unchanged
 * @throws {InvalidArgumentError} when the prefix does not end in `/`
 */
export function checkDirectoryKey(prefix: string): string {
  if (prefix !== '' && !prefix.endsWith('/')) {
    throw new InvalidArgumentError(
      `Invalid listing prefix '${prefix}': pass a directory key ending in '/', or '' for the root`,
      { argument: 'prefix' },
    )
  }
  return prefix
}

/**
 * Checks a byte range: a non-negative integer offset and a non-negative integer length (or
 * `Infinity`, meaning up to the end).
 *
 * @param range - the range, or undefined for the whole object
 * @throws {InvalidArgumentError} when either bound is negative, fractional or not a number
 */
export function checkRange(range: ByteRange | undefined): void {
  if (range === undefined) return
  const { offset, length } = range
  const lengthOk = (Number.isSafeInteger(length) && length >= 0) || length === Infinity
  if (!Number.isSafeInteger(offset) || offset < 0 || !lengthOk) {
    throw new InvalidArgumentError(
      `Invalid byte range {offset: ${offset}, length: ${length}}: both must be non-negative integers`,
      { argument: 'range' },
    )
  }
}

/**
 * Checks that the data of a put is a `Uint8Array` (a `Buffer` is one).
 *
 * @param data - the object bytes
 * @throws {InvalidArgumentError} for anything else
 */
export function checkData(data: Uint8Array): void {
  if (!(data instanceof Uint8Array)) {
    throw new InvalidArgumentError('put expects the object data as a Uint8Array', { argument: 'data' })
  }
}

/**
 * Whether a name found in a listing is usable as an object key: valid under {@link checkKey} and
 * naming an object rather than a directory. Remote stores skip names other tools wrote that no
 * key could address.
 *
 * @param key - a candidate key
 * @returns true when `checkObjectKey(key)` would accept it
 */
export function isObjectKey(key: string): boolean {
  try {
    checkObjectKey(key)
    return true
  } catch {
    return false
  }
}

/**
 * The entries whose key sorts at or after `from`, in UTF-8 byte order: the order and bound
 * {@link ObjectStore.listFrom} promises.
 *
 * @param metas - listed entries, in any order
 * @param from - the inclusive lower bound
 * @returns a new, sorted array
 */
export function sortFrom(metas: readonly FileMeta[], from: string): FileMeta[] {
  // Each key is encoded once instead of once per comparison.
  const fromBytes = Buffer.from(from, 'utf8')
  return metas
    .map((meta) => ({ meta, bytes: Buffer.from(meta.key, 'utf8') }))
    .filter((entry) => Buffer.compare(entry.bytes, fromBytes) >= 0)
    .sort((a, b) => Buffer.compare(a.bytes, b.bytes))
    .map((entry) => entry.meta)
}
