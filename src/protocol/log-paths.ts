/**
 * Canonical data file paths. The log may name one file several ways: relative to the table root
 * or absolute, as `/dir/f`, `file:/dir/f`, `file:///dir/f` or `file://localhost/dir/f`, with or
 * without percent-encoding of characters that need none (`%3A` or `:`), with lowercase or
 * uppercase escapes. Object store files have several spellings too: Spark and delta-rs write
 * `s3a://` (or the older `s3n://`) for `s3://`, and `abfss://`, `abfs://`, `wasbs://` or
 * `wasb://` with `<container>@<account>.dfs|blob.<suffix>` for one Azure blob, which `az://` names
 * without its account. Delta matches an `add` and a `remove` by the file they name, not by their
 * spelling, so every comparison of log paths (replay, conflict checks, VACUUM) goes through
 * {@link canonicalLogPath} first.
 */
import { encodeAddPath } from './partition-values.js'

// A relative path made only of characters encodeAddPath keeps as they are, and no '%' or ':',
// is already canonical: the common case, tested with one regular expression.
const CANONICAL_RELATIVE = /^[A-Za-z0-9\-._~!$&'()*+,;=@][A-Za-z0-9\-._~!$&'()*+,;=@/]*$/
const URI_SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/
/** Azure schemes that name the account in the authority, as `<container>@<account>.<host>`. */
const AZURE_ACCOUNT_SCHEMES: ReadonlySet<string> = new Set(['abfss', 'abfs', 'wasbs', 'wasb'])

/**
 * The one spelling of a data file path from the log, itself a valid log path:
 *
 * - a path inside the table root (relative, or absolute under `tableRoot`) becomes the relative
 *   path, percent-encoded the way this engine writes paths (`encodeAddPath`);
 * - a local absolute path (`/x`, `file:/x`, `file:///x`, `file://localhost/x`) outside the root
 *   becomes `file:///x`, encoded the same way;
 * - an S3 URI (`s3://`, `s3a://`, `s3n://`) becomes `s3://<bucket>/<key>`;
 * - an Azure URI with an account (`abfss://`, `abfs://`, `wasbs://`, `wasb://`, as
 *   `<container>@<account>.dfs|blob.<suffix>`) becomes
 *   `abfss://<container>@<account>.dfs.<suffix>/<key>`; an `az://<container>/<key>` names no
 *   account and stays so. One lies inside an Azure root when container and key prefix agree and
 *   the accounts do too, where both name one; `az://` in the log means the account of the table;
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
 *   (`file:///data/t`, `s3://bucket/t`, `abfss://c@acct.dfs.core.windows.net/t`); without it,
 *   absolute paths stay absolute
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
  if (tableRoot !== undefined) {
    const relative = relativeToRoot(absolute, normalizeAbsolute(tableRoot).replace(/\/+$/, ''))
    if (relative !== undefined) return encodeAddPath(relative)
  }
  return encodeAddPath(absolute)
}

/** The part of a normalized absolute path under a normalized root, if it lies under it. */
function relativeToRoot(absolute: string, root: string): string | undefined {
  if (absolute.startsWith(`${root}/`) && absolute.length > root.length + 1) {
    return absolute.slice(root.length + 1)
  }
  const path = azureParts(absolute)
  const base = path === undefined ? undefined : azureParts(root)
  if (path === undefined || base === undefined || path.container !== base.container) return undefined
  // `az://` in a log names the table's own account; a named account must be the root's.
  if (path.account !== undefined && path.account !== base.account) return undefined
  const prefix = base.key === '' ? '' : `${base.key}/`
  return path.key.startsWith(prefix) && path.key.length > prefix.length
    ? path.key.slice(prefix.length)
    : undefined
}

/** The container, account (when named) and key of a normalized Azure URI. */
function azureParts(
  uri: string,
): { readonly container: string; readonly account: string | undefined; readonly key: string } | undefined {
  const abfss = /^abfss:\/\/([^@/]+)@([^./]+)\.dfs\.[^/]+(?:\/(.*))?$/.exec(uri)
  if (abfss !== null) return { container: abfss[1]!, account: abfss[2]!, key: abfss[3] ?? '' }
  const az = /^az:\/\/([^/]+)(?:\/(.*))?$/.exec(uri)
  if (az !== null) return { container: az[1]!, account: undefined, key: az[2] ?? '' }
  return undefined
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
  if (name === 's3a' || name === 's3n') return `s3:${rest}`
  if (AZURE_ACCOUNT_SCHEMES.has(name)) {
    // One blob of one account, whichever of its endpoints (dfs or blob) the URI names.
    const m = /^\/\/([^@/]+)@([^./]+)\.(?:dfs|blob)\.([^/]+)(\/.*)?$/i.exec(rest)
    if (m !== null) return `abfss://${m[1]}@${m[2]!.toLowerCase()}.dfs.${m[3]!.toLowerCase()}${m[4] ?? ''}`
  }
  if (name !== 'file') return `${name}:${rest}`
  // file:/x, file:///x and file://localhost/x are one place; file://host/x is another host's.
  const local = /^\/\/(?:localhost)?(\/.*)$/i.exec(rest)
  if (local !== null) return `file://${local[1]}`
  if (rest.startsWith('/') && !rest.startsWith('//')) return `file://${rest}`
  return `file:${rest}`
}

/** What {@link tableRootOf} reads of a store: its root, the URI behind it, its local directory. */
export interface TableRootSource {
  readonly root: string
  readonly rootUri?: string | undefined
  localPath?(key: string): string
}

/**
 * The table root that {@link canonicalLogPath} matches absolute log paths against: the local
 * directory of a local store, else the store's `rootUri` (it names the account an `az://` root
 * leaves out), else its `root`.
 *
 * @param store - the table's store
 * @returns the root as a decoded absolute path or URI
 */
export function tableRootOf(store: TableRootSource): string {
  return store.localPath?.('') ?? store.rootUri ?? store.root
}
