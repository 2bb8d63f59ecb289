import { InvalidArgumentError } from '../errors/index.js'

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
