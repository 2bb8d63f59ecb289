/**
 * Canonical data file paths. The log may name one file several ways: relative to the table root
 * or absolute, as `/dir/f`, `file:/dir/f`, `file:///dir/f` or `file://localhost/dir/f`, with or
 * without percent-encoding of characters that need none (`%3A` or `:`), with lowercase or
 * uppercase escapes. Delta matches an `add` and a `remove` by the file they name, not by their
 * spelling, so every comparison of log paths (replay, conflict checks, VACUUM) goes through
 * {@link canonicalLogPath} first.
 */
import { encodeAddPath } from './partition-values.js'

// A relative path made only of characters encodeAddPath keeps as they are, and no '%' or ':',
// is already canonical: the common case, tested with one regular expression.
const CANONICAL_RELATIVE = /^[A-Za-z0-9\-._~!$&'()*+,;=@][A-Za-z0-9\-._~!$&'()*+,;=@/]*$/
const URI_SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/

/**
 * The one spelling of a data file path from the log, itself a valid log path:
 *
 * - a path inside the table root (relative, or absolute under `tableRoot`) becomes the relative
 *   path, percent-encoded the way this engine writes paths (`encodeAddPath`);
 * - a local absolute path (`/x`, `file:/x`, `file:///x`, `file://localhost/x`) outside the root
 *   becomes `file:///x`, encoded the same way;
 * - any other URI keeps its authority and path, with the scheme in lowercase and the same
 *   encoding.
 *
 * The path is percent-decoded exactly once, so `a%20b`, `a b` (not valid in a log, but seen) and
 * `a%2520b` stay distinct where they must: the last names the file `a%20b`. A path whose
 * percent-encoding is malformed is returned unchanged (it names no file another spelling could
 * match; reading it fails with its own error).
 *
 * @param path - `add.path` or `remove.path` as stored in the log
 * @param tableRoot - the table root as a decoded absolute path (`/data/t`) or URI
 *   (`file:///data/t`, `s3://bucket/t`); without it, absolute paths stay absolute
 * @returns the canonical path; equal results name the same file
 */
export function canonicalLogPath(path: string, tableRoot?: string): string {
  if (CANONICAL_RELATIVE.test(path)) return path
  let decoded: string
  try {
    decoded = decodeURIComponent(path)
  } catch {
    return path
  }
  if (!URI_SCHEME.test(path) && !path.startsWith('/')) return encodeAddPath(decoded)
  const absolute = normalizeAbsolute(decoded)
  const root = tableRoot === undefined ? undefined : normalizeAbsolute(tableRoot).replace(/\/+$/, '')
  if (root !== undefined && absolute.startsWith(`${root}/`) && absolute.length > root.length + 1) {
    return encodeAddPath(absolute.slice(root.length + 1))
  }
  return encodeAddPath(absolute)
}

/**
 * A decoded absolute path or URI in one form: local paths as `file:///x`, other URIs with a
 * lowercase scheme.
 */
function normalizeAbsolute(decoded: string): string {
  const scheme = URI_SCHEME.exec(decoded)
  if (scheme === null) return decoded.startsWith('/') ? `file://${decoded}` : decoded
  const name = (scheme[1] as string).toLowerCase()
  const rest = decoded.slice(scheme[0].length)
  if (name !== 'file') return `${name}:${rest}`
  // file:/x, file:///x and file://localhost/x are one place; file://host/x is another host's.
  const local = /^\/\/(?:localhost)?(\/.*)$/i.exec(rest)
  if (local !== null) return `file://${local[1]}`
  if (rest.startsWith('/') && !rest.startsWith('//')) return `file://${rest}`
  return `file:${rest}`
}
