/**
 * The embedded default backend: objects are files under one local directory.
 *
 * Put-if-absent rests on `link(2)`, which fails with `EEXIST` when the target exists: the data is
 * written to a temporary file in the target's directory, made durable, then hard-linked to its
 * final name. A reader therefore sees either nothing or the whole file. `rename(2)` is used only
 * for plain overwrites, because it silently replaces an existing target.
 */
import { randomBytes } from 'node:crypto'
import type { Dirent, Stats } from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import { fileDescriptorsExhausted } from '../errors/exhausted-resources.js'
import {
  FileAlreadyExistsError,
  FileNotFoundError,
  InvalidArgumentError,
  StorageError,
  UnsupportedError,
} from '../errors/index.js'
import { checkData, checkDirectoryKey, checkKey, checkObjectKey, checkRange, dirOf } from './keys.js'
import { makeDirectories } from './make-directories.js'
import type { ByteRange, FileMeta, ObjectStore, PutOptions, StoreCallOptions } from './object-store.js'

/** Errno codes after which repeating the same call may succeed. */
const RETRYABLE_CODES: ReadonlySet<string> = new Set([
  'EAGAIN',
  'EBUSY',
  'EINTR',
  'ETIMEDOUT',
  'ECONNRESET',
  'ESTALE',
])

/** Errno codes of `link(2)` on a filesystem without hard links. */
const NO_HARD_LINK_CODES: ReadonlySet<string> = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'EXDEV', 'ENOSYS'])

/** Errno codes of a directory `fsync` on platforms that do not support it. */
const DIR_SYNC_UNSUPPORTED_CODES: ReadonlySet<string> = new Set([
  'EINVAL',
  'ENOTSUP',
  'EISDIR',
  'EPERM',
  'EACCES',
])

/** How many `stat` calls a listing keeps in flight. */
const STAT_BATCH = 32

/**
 * Whether a file name is the temporary file of an in-flight put (`.<name>.<random>.tmp`).
 * Such files are never listed, and puts to such names are refused.
 *
 * @param name - a file name (one path segment)
 * @returns true for names starting with `.` and ending with `.tmp`
 */
export function isLocalTempName(name: string): boolean {
  return name.length > 4 && name.startsWith('.') && name.endsWith('.tmp')
}

/** Exactly the names {@link LocalStore.put} gives its temporary files. */
const PUT_TEMP_NAME = /^\.[^/]{1,100}\.[0-9a-f]{16}\.tmp$/

/**
 * Whether a file name is one the local store itself gives the temporary file of a put
 * (`.<target name, at most 100 characters>.<16 hex digits>.tmp`). Only such files are ever
 * reported by `listTemporaryFiles`, so a cleanup cannot take any other hidden file.
 *
 * @param name - a file name (one path segment)
 * @returns true for the store's own temporary-file names
 */
export function isPutTempFileName(name: string): boolean {
  return PUT_TEMP_NAME.test(name)
}

/**
 * Creates the local-directory backend. The directory is created on the first put; reads and
 * listings of a missing root behave as an empty store.
 *
 * Limits: a key cannot be both an object and a directory prefix of other objects (`a` and `a/b`),
 * which object stores allow; such a put fails with a `StorageError` or `FileAlreadyExistsError`.
 *
 * Symbolic links inside the root are followed as long as they resolve inside it. A read, head,
 * put or delete whose path resolves outside the root's real path (a partition directory or a data
 * file linked elsewhere) is refused with a non-retryable `StorageError`, before anything is read,
 * created or deleted out there.
 *
 * ### Examples
 * ```ts
 * const store = createLocalStore('/data/my-table')
 * await store.put('_delta_log/00000000000000000000.json', bytes, { ifNotExists: true })
 * ```
 *
 * @param rootDir - the root directory, absolute or relative to the working directory
 * @returns an {@link ObjectStore} whose `root` is the absolute directory path
 * @throws {InvalidArgumentError} when `rootDir` is empty
 */
export function createLocalStore(rootDir: string): ObjectStore {
  if (typeof rootDir !== 'string' || rootDir === '') {
    throw new InvalidArgumentError('The local store root must be a non-empty directory path', {
      argument: 'rootDir',
    })
  }
  return new LocalStore(path.resolve(rootDir))
}

class LocalStore implements ObjectStore {
  readonly root: string
  /** A directory read returns every name in it: a caller expecting one name stats it instead. */
  readonly listingReadsWholeDirectory = true
  /** The root's real path, once the root exists. */
  #realRoot: string | undefined

  constructor(root: string) {
    this.root = root
  }

  localPath(key: string): string {
    checkKey(key)
    return this.#fullPath(key)
  }

  async read(key: string, range?: ByteRange, opts?: StoreCallOptions): Promise<Uint8Array> {
    checkObjectKey(key)
    checkRange(range)
    const signal = opts?.signal
    signal?.throwIfAborted()
    const file = this.#fullPath(key)
    await this.#checkResolvesInside(file, 'read', key)
    let handle: fs.FileHandle
    try {
      handle = await fs.open(file, 'r')
    } catch (err) {
      throw this.#readError(err, key, file)
    }
    try {
      const stats = await handle.stat()
      if (!stats.isFile()) throw new FileNotFoundError(file, { hint: 'The key names a directory.' })
      // Objects are never modified in place (puts link or rename a new inode), so the size seen
      // here is the size of the whole object.
      const start = Math.min(range?.offset ?? 0, stats.size)
      const want = Math.min(range?.length ?? stats.size, stats.size - start)
      const out = new Uint8Array(want)
      let got = 0
      while (got < want) {
        signal?.throwIfAborted()
        const { bytesRead } = await handle.read(out, got, want - got, start + got)
        if (bytesRead === 0) break
        got += bytesRead
      }
      return got === want ? out : out.slice(0, got)
    } catch (err) {
      throw this.#readError(err, key, file)
    } finally {
      await handle.close().catch(() => undefined)
    }
  }

  async head(key: string, opts?: StoreCallOptions): Promise<FileMeta> {
    checkObjectKey(key)
    opts?.signal?.throwIfAborted()
    const file = this.#fullPath(key)
    let stats: Stats
    try {
      stats = await fs.stat(file)
    } catch (err) {
      throw this.#readError(err, key, file)
    }
    // Checked once the file is known to exist: a missing file (a probe of the next commit, most
    // often) costs one call, and nothing about a file is returned before the check.
    await this.#checkResolvesInside(file, 'read', key)
    if (!stats.isFile()) throw new FileNotFoundError(file, { hint: 'The key names a directory.' })
    return fileMeta(key, stats)
  }

  async put(key: string, data: Uint8Array, opts?: PutOptions): Promise<FileMeta> {
    checkObjectKey(key)
    checkData(data)
    const signal = opts?.signal
    signal?.throwIfAborted()
    const target = this.#fullPath(key)
    const dir = path.dirname(target)
    const name = path.basename(target)
    if (isLocalTempName(name)) {
      throw new InvalidArgumentError(
        `Cannot put '${key}': names starting with '.' and ending with '.tmp' are reserved for the temporary files of the local store`,
        { argument: 'key' },
      )
    }
    // Truncated so that the temporary name stays within NAME_MAX even for long target names.
    const tmp = path.join(dir, `.${name.slice(0, 100)}.${randomBytes(8).toString('hex')}.tmp`)
    let tmpConsumed = false
    let written: Stats
    try {
      // Before mkdir: a recursive mkdir would follow a linked directory and create the rest there.
      await this.#checkDirInside(dir, 'write', key)
      await this.#mkdirs(dir, key)
      written = await this.#writeDurably(tmp, data, key, signal)
      signal?.throwIfAborted()
      if (opts?.ifNotExists) {
        await this.#link(tmp, target, key)
      } else {
        await this.#rename(tmp, target, key)
        tmpConsumed = true
      }
    } finally {
      // The linked target keeps the data; the temporary name must go either way.
      if (!tmpConsumed) await fs.unlink(tmp).catch(() => undefined)
    }
    await this.#syncDir(dir, target)
    // The file's own attributes: linking or renaming changes neither its size nor its mtime.
    return fileMeta(key, written)
  }

  async delete(key: string, opts?: StoreCallOptions): Promise<void> {
    checkObjectKey(key)
    opts?.signal?.throwIfAborted()
    const file = this.#fullPath(key)
    // The object itself may be a link (unlink removes the link); its directory must be ours.
    await this.#checkDirInside(path.dirname(file), 'delete', key)
    try {
      await fs.unlink(file)
    } catch (err) {
      const code = errnoOf(err)
      // A missing file, a missing parent, or a directory: in every case no object has this key.
      if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR') return
      throw storageError(err, 'delete', file)
    }
  }

  async *listFrom(from: string, opts?: StoreCallOptions): AsyncGenerator<FileMeta> {
    checkKey(from)
    const signal = opts?.signal
    signal?.throwIfAborted()
    const dirKey = dirOf(from)
    const dirPath = this.#fullPath(dirKey)
    let names: string[]
    try {
      names = await fs.readdir(dirPath)
    } catch (err) {
      const code = errnoOf(err)
      if (code === 'ENOENT' || code === 'ENOTDIR') return
      throw storageError(err, 'list', dirPath)
    }
    const keys = keysInUtf8Order(dirKey, names.filter(isListableName), from)
    for (let i = 0; i < keys.length; i += STAT_BATCH) {
      signal?.throwIfAborted()
      const metas = await Promise.all(keys.slice(i, i + STAT_BATCH).map((key) => this.#statFile(key)))
      for (const meta of metas) if (meta !== undefined) yield meta
    }
  }

  async *listRecursive(prefix: string, opts?: StoreCallOptions): AsyncGenerator<FileMeta> {
    checkKey(prefix)
    checkDirectoryKey(prefix)
    const signal = opts?.signal
    for await (const { dirKey, entries } of this.#walk(prefix, isListableName, signal)) {
      const files: string[] = []
      for (const entry of entries) {
        if (!isListableName(entry.name) || entry.isDirectory()) continue
        // Symbolic links are followed by stat; links to directories are skipped to avoid cycles.
        if (entry.isFile() || entry.isSymbolicLink()) files.push(dirKey + entry.name)
      }
      for (let i = 0; i < files.length; i += STAT_BATCH) {
        signal?.throwIfAborted()
        const metas = await Promise.all(files.slice(i, i + STAT_BATCH).map((key) => this.#statFile(key)))
        for (const meta of metas) if (meta !== undefined) yield meta
      }
    }
  }

  /**
   * The temporary files of puts that never finished (the writing process was killed), anywhere
   * under the root, `_delta_log/` included: only names of exactly the store's temporary-file form,
   * never a linked directory's content. `delete` accepts their keys.
   */
  async *listTemporaryFiles(opts?: StoreCallOptions): AsyncGenerator<FileMeta> {
    const keep = (name: string) => !name.includes('\\')
    for await (const { dirKey, entries } of this.#walk('', keep, opts?.signal)) {
      for (const entry of entries) {
        if (!keep(entry.name) || !entry.isFile() || !isPutTempFileName(entry.name)) continue
        const key = dirKey + entry.name
        const file = this.#fullPath(key)
        try {
          yield fileMeta(key, await fs.lstat(file))
        } catch (err) {
          if (errnoOf(err) !== 'ENOENT') throw storageError(err, 'list', file)
        }
      }
    }
  }

  // === Helpers ===

  /**
   * Walks the directories under `prefix` (depth first, never through a linked directory), giving
   * each one's entries; it descends into the subdirectories whose names `keep` accepts.
   */
  async *#walk(
    prefix: string,
    keep: (name: string) => boolean,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<{ readonly dirKey: string; readonly entries: readonly Dirent[] }> {
    signal?.throwIfAborted()
    const pending: string[] = [prefix]
    while (pending.length > 0) {
      signal?.throwIfAborted()
      const dirKey = pending.pop()!
      const dirPath = this.#fullPath(dirKey)
      let entries: Dirent[]
      try {
        entries = await fs.readdir(dirPath, { withFileTypes: true })
      } catch (err) {
        const code = errnoOf(err)
        // A directory removed while the walk was under way simply has nothing left to list.
        if (code === 'ENOENT' || code === 'ENOTDIR') continue
        throw storageError(err, 'list', dirPath)
      }
      for (const entry of entries) {
        if (entry.isDirectory() && keep(entry.name)) pending.push(`${dirKey}${entry.name}/`)
      }
      yield { dirKey, entries }
    }
  }

  /** The root's real path, or undefined while the root does not exist. */
  async #rootRealPath(): Promise<string | undefined> {
    if (this.#realRoot !== undefined) return this.#realRoot
    try {
      this.#realRoot = await fs.realpath(this.root)
    } catch (err) {
      if (errnoOf(err) === 'ENOENT') return undefined
      throw storageError(err, 'resolve the root', this.root)
    }
    return this.#realRoot
  }

  /**
   * Refuses a file whose real path lies outside the root's. A file that does not resolve (it is
   * missing) passes: the call itself then reports it.
   */
  async #checkResolvesInside(file: string, action: string, key: string): Promise<void> {
    let real: string
    try {
      real = await fs.realpath(file)
    } catch {
      return
    }
    const root = await this.#rootRealPath()
    if (root !== undefined && !isInside(root, real)) throw escapeError(action, key, file, real, root)
  }

  /**
   * Refuses a directory whose nearest existing ancestor (itself, when it exists) resolves outside
   * the root: nothing may be created, written or deleted through a link that leaves the table.
   */
  async #checkDirInside(dir: string, action: string, key: string): Promise<void> {
    for (let p = dir; ; p = path.dirname(p)) {
      let real: string
      try {
        real = await fs.realpath(p)
      } catch (err) {
        const code = errnoOf(err)
        if (code !== 'ENOENT' && code !== 'ENOTDIR') {
          throw storageError(err, `resolve the directory of '${key}' at`, p)
        }
        // Missing up to the root: a put creates real directories there, nothing to check.
        if (p === this.root) return
        continue
      }
      const root = await this.#rootRealPath()
      if (root !== undefined && !isInside(root, real)) throw escapeError(action, key, p, real, root)
      return
    }
  }

  #fullPath(key: string): string {
    const segments = key.split('/').filter((s) => s !== '')
    return segments.length === 0 ? this.root : path.join(this.root, segments.join(path.sep))
  }

  /** Metadata of a listed file, or undefined when it vanished or is not a regular file. */
  async #statFile(key: string): Promise<FileMeta | undefined> {
    const file = this.#fullPath(key)
    try {
      const stats = await fs.stat(file)
      return stats.isFile() ? fileMeta(key, stats) : undefined
    } catch (err) {
      const code = errnoOf(err)
      if (code === 'ENOENT' || code === 'ENOTDIR') return undefined
      throw storageError(err, 'list', file)
    }
  }

  async #mkdirs(dir: string, key: string): Promise<void> {
    try {
      await makeDirectories(dir)
    } catch (err) {
      throw storageError(err, `create the parent directory of '${key}' at`, dir)
    }
  }

  async #writeDurably(tmp: string, data: Uint8Array, key: string, signal?: AbortSignal): Promise<Stats> {
    let handle: fs.FileHandle | undefined
    try {
      handle = await fs.open(tmp, 'wx')
      let written = 0
      while (written < data.byteLength) {
        signal?.throwIfAborted()
        const { bytesWritten } = await handle.write(data, written, data.byteLength - written)
        written += bytesWritten
      }
      await handle.sync()
      return await handle.stat()
    } catch (err) {
      if (isAbortError(err)) throw err
      throw storageError(err, `write the temporary file of '${key}' at`, tmp)
    } finally {
      await handle?.close().catch(() => undefined)
    }
  }

  async #link(tmp: string, target: string, key: string): Promise<void> {
    try {
      await fs.link(tmp, target)
    } catch (err) {
      const code = errnoOf(err)
      if (code === 'EEXIST') throw new FileAlreadyExistsError(target, { cause: err })
      if (code !== undefined && NO_HARD_LINK_CODES.has(code)) {
        throw new UnsupportedError(
          `Cannot put '${key}' if absent under ${this.root}: the filesystem does not support hard links (${code}), so put-if-absent cannot be guaranteed there. Use a local filesystem with hard links (ext4, xfs, apfs, ntfs) or an object store.`,
          { cause: err },
        )
      }
      throw storageError(err, 'link', target)
    }
  }

  async #rename(tmp: string, target: string, key: string): Promise<void> {
    try {
      await fs.rename(tmp, target)
    } catch (err) {
      throw storageError(err, `replace '${key}' at`, target)
    }
  }

  /** Makes the new directory entry durable; the object is already visible when this runs. */
  async #syncDir(dir: string, target: string): Promise<void> {
    let handle: fs.FileHandle | undefined
    try {
      handle = await fs.open(dir, 'r')
      await handle.sync()
    } catch (err) {
      const code = errnoOf(err)
      if (code !== undefined && DIR_SYNC_UNSUPPORTED_CODES.has(code)) return
      throw new StorageError(
        `Wrote ${target} but could not sync its directory (${code ?? 'unknown error'}): the object is visible but may not survive a crash`,
        { path: target, ambiguous: true, cause: err, hint: 'Check the object before writing it again.' },
      )
    } finally {
      await handle?.close().catch(() => undefined)
    }
  }

  #readError(err: unknown, key: string, file: string): unknown {
    if (isAbortError(err) || err instanceof FileNotFoundError) return err
    const code = errnoOf(err)
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR') {
      return new FileNotFoundError(file, { cause: err })
    }
    return storageError(err, `read '${key}' at`, file)
  }
}

// === Mapping ===

function isListableName(name: string): boolean {
  // A name with a backslash could not be addressed as a key, so it is not an object of this store.
  return !isLocalTempName(name) && !name.includes('\\')
}

/** Whether `real` is `root` or lies under it (both real paths). */
function isInside(root: string, real: string): boolean {
  return real === root || real.startsWith(root.endsWith(path.sep) ? root : root + path.sep)
}

function escapeError(action: string, key: string, at: string, real: string, root: string): StorageError {
  return new StorageError(
    `Refusing to ${action} '${key}': ${at} resolves to ${real}, outside the table root ${root} (a symbolic link leads out of the table)`,
    {
      path: at,
      hint: 'Replace the link by a real directory or file inside the table, or open the table at the real location of its files.',
    },
  )
}

function fileMeta(key: string, stats: Stats): FileMeta {
  return Object.freeze({ key, size: stats.size, lastModified: Math.floor(stats.mtimeMs) })
}

function errnoOf(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string')
    return err.code
  return undefined
}

function isAbortError(err: unknown): boolean {
  return err instanceof Error && err.name === 'AbortError'
}

function storageError(err: unknown, action: string, file: string): unknown {
  if (isAbortError(err)) return err
  const code = errnoOf(err)
  // Out of descriptors: repeating the call only fails again until something is closed.
  if (code === 'EMFILE' || code === 'ENFILE') return fileDescriptorsExhausted(code, `${action} ${file}`, err)
  const retryable = code !== undefined && RETRYABLE_CODES.has(code)
  const detail = err instanceof Error ? err.message : String(err)
  return new StorageError(`Could not ${action} ${file}: ${detail}`, {
    path: file,
    retryable,
    cause: err,
    hint: retryable
      ? 'The failure is transient; retry the operation.'
      : 'Check that the path is accessible and the disk is not full.',
  })
}

/** Code units from which JavaScript's string order can differ from UTF-8 byte order. */
const BEYOND_UTF16_ORDER = /[\uD800-\uFFFF]/

/**
 * The keys `dirKey + name` at or after `from`, in compareUtf8 order. UTF-16 code unit order is
 * UTF-8 byte order (code point order) unless a surrogate meets a unit from U+E000, so two strings
 * compare the same both ways when one of them has no unit from U+D800: each name is compared
 * with `from` as a string when `from` has none (every log file name), and only the names at or
 * after it are checked before they are sorted as strings. Otherwise each key is encoded once
 * instead of once per comparison.
 */
function keysInUtf8Order(dirKey: string, names: readonly string[], from: string): string[] {
  if (from.startsWith(dirKey) && !BEYOND_UTF16_ORDER.test(from)) {
    const fromName = from.slice(dirKey.length)
    const after: string[] = []
    for (const name of names) if (name >= fromName) after.push(name)
    if (after.every((n) => !BEYOND_UTF16_ORDER.test(n))) return after.sort().map((name) => dirKey + name)
  }
  const fromBytes = Buffer.from(from, 'utf8')
  return names
    .map((name) => {
      const key = dirKey + name
      return { key, bytes: Buffer.from(key, 'utf8') }
    })
    .filter((k) => Buffer.compare(k.bytes, fromBytes) >= 0)
    .sort((a, b) => Buffer.compare(a.bytes, b.bytes))
    .map((k) => k.key)
}
