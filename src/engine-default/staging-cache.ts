/**
 * A local cache of remote objects for the data plane, shared by every process that points at the
 * same directory.
 *
 * Delta never changes a data, DV or checkpoint file under its name, so an object is identified by
 * its store root, key, size and last-modified time. The time is part of the identity because a
 * table deleted and created again at one location reuses checkpoint names, often with equal sizes.
 *
 * Layout under the cache directory:
 * - `objects/<hash>-<name>`: complete entries, only ever created by an atomic rename of a finished
 *   temp file, so no reader sees a partial entry. Two processes filling one entry both succeed:
 *   the second rename replaces identical content.
 * - `pins/<pid>-<uuid>-<name>`: one hard link per acquisition, the path DuckDB reads. A pin keeps
 *   the bytes alive even when another process evicts the entry before DuckDB opens the file.
 * - `tmp/<pid>-<uuid>`: downloads in progress.
 *
 * The size bound is kept by evicting the least recently used entries (modification time, which
 * every hit refreshes) in a pass after a fill: after the first, then whenever this process has
 * filed a quarter of the room the last pass left, or that pass is 30 s old. Entries pinned by this
 * process are never evicted; pins and temp files of processes that died are swept on first use.
 */
import { createHash, randomUUID } from 'node:crypto'
import { copyFile, link, readdir, rename, rm, stat, unlink, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileDescriptorsExhausted } from '../errors/exhausted-resources.js'
import { InvalidArgumentError, isDeltaError, StorageError } from '../errors/index.js'
import { makeDirectories } from '../storage/make-directories.js'
import type { FileMeta, ObjectStore } from '../storage/object-store.js'
import { mapLimit } from '../util/map-limit.js'
import { dataPlaneError, dataPlaneFailureKind } from './duckdb-errors.js'
import { processAlive } from './scratch-dir.js'
import type { StagedFile } from './staging.js'

/** Options of {@link createStagingCache}. */
export interface StagingCacheOptions {
  /** The cache directory; defaults to {@link defaultStagingCacheDir}. */
  readonly dir?: string | undefined
  /**
   * Bound of the entries' total size in bytes (default {@link DEFAULT_CACHE_MAX_BYTES}); `0` turns
   * the cache off: each read then gets a private copy, deleted on release.
   */
  readonly maxBytes?: number | undefined
}

/** A staging cache: local files for remote objects. */
export interface StagingCache {
  /** Absolute path of the cache directory. */
  readonly dir: string
  /** The size bound in bytes; `0` when the cache is off. */
  readonly maxBytes: number
  /**
   * A local file with the bytes of an object: a cached entry when one matches the object's size
   * and modification time, otherwise a fresh download that becomes an entry.
   *
   * @param store - the object's store (its `root` is part of the entry's identity)
   * @param key - the object's key
   * @param signal - aborts the download
   * @returns the file, to release once DuckDB is done with it
   * @throws {FileNotFoundError} when the object does not exist
   * @throws {StorageError} when the store fails or the cache directory cannot be written
   */
  acquire(store: ObjectStore, key: string, signal?: AbortSignal): Promise<StagedFile>
  /**
   * The entries currently in the directory (all processes' entries, not pins or temp files).
   *
   * @returns their count and total size
   */
  usage(): Promise<{ readonly entries: number; readonly bytes: number }>
}

/** Default size bound: 1 GiB. */
export const DEFAULT_CACHE_MAX_BYTES = 1024 ** 3

/** Pins and temp files of dead processes are swept only once this old, ms. */
const STALE_AFTER_MS = 60_000

/**
 * The default cache directory: `delta-rlc-cache-<uid>` under the OS temp dir, one per user so
 * that no other account can place content in it.
 *
 * @returns the absolute path
 */
export function defaultStagingCacheDir(): string {
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined
  return join(tmpdir(), uid === undefined ? 'delta-rlc-cache' : `delta-rlc-cache-${uid}`)
}

/**
 * Opens a staging cache. Handles on one directory share their bookkeeping within a process (the
 * entries in use, the downloads in flight); each keeps its own size bound.
 *
 * @param options - directory and size bound
 * @returns the cache; nothing touches the disk before the first `acquire`
 * @throws {InvalidArgumentError} when `maxBytes` is not a non-negative number or `dir` is empty
 */
export function createStagingCache(options: StagingCacheOptions = {}): StagingCache {
  const maxBytes = options.maxBytes ?? DEFAULT_CACHE_MAX_BYTES
  if (typeof maxBytes !== 'number' || !(maxBytes >= 0) || Number.isNaN(maxBytes)) {
    throw new InvalidArgumentError(`Invalid cacheMaxBytes ${String(maxBytes)}: use a number of bytes >= 0`, {
      argument: 'cacheMaxBytes',
      hint: 'Use 0 to turn the staging cache off.',
    })
  }
  if (options.dir !== undefined && (typeof options.dir !== 'string' || options.dir.trim() === '')) {
    throw new InvalidArgumentError('The cacheDir option must be a non-empty path', { argument: 'cacheDir' })
  }
  const dir = resolve(options.dir ?? defaultStagingCacheDir())
  let state = sharedStates.get(dir)
  if (state === undefined) {
    state = new DirState(dir)
    sharedStates.set(dir, state)
  }
  return new StagingCacheImpl(state, maxBytes)
}

/**
 * The name of an object's entry: a hash of its identity, then its file name made safe for paths
 * and for DuckDB (which would expand glob characters).
 *
 * @param root - the store root
 * @param meta - the object's key, size and modification time
 * @returns a file name
 */
export function cacheEntryName(root: string, meta: FileMeta): string {
  const hash = createHash('sha256')
    .update(`${root}\n${meta.key}\n${meta.size}\n${meta.lastModified}`)
    .digest('hex')
    .slice(0, 40)
  return `${hash}-${safeName(meta.key)}`
}

// === Implementation ===

const sharedStates = new Map<string, DirState>()

/** Entries stat'ed at once by a pass. */
const STAT_CONCURRENCY = 32

/** How old the last eviction pass's view of the directory may get before a fill rescans it. */
const RESCAN_MS = 30_000

/** What every handle on one directory shares within this process. */
class DirState {
  readonly dir: string
  readonly objects: string
  readonly pins: string
  readonly tmp: string
  /** Entry name -> acquisitions not yet released. */
  readonly inUse = new Map<string, number>()
  /** Entry name -> the download that is filling it. */
  readonly fills = new Map<string, Promise<void>>()
  #ready: Promise<void> | undefined
  #evicting: Promise<void> | undefined
  #evictAgain = 0
  /** Set when the last pass could not get under its bound because entries were in use. */
  overBound = 0
  /** Bytes in the directory at the end of the last pass (undefined before the first one). */
  #scannedBytes: number | undefined
  /** Bytes this process filed since the last pass. */
  #filledSinceScan = 0
  #scannedAt = 0

  /**
   * Records a fill and says whether an eviction pass is due. A pass lists and stats every entry,
   * which on a cache of tens of thousands of entries costs more than the download it follows, so
   * it runs only when this process alone has filed a quarter of the room the last pass left, or
   * after {@link RESCAN_MS}, when others may have filled the rest: the bound holds within that
   * margin across processes, and exactly within one.
   */
  filled(bytes: number, maxBytes: number): boolean {
    this.#filledSinceScan += bytes
    if (this.#scannedBytes === undefined) return true
    const room = Math.max(0, maxBytes - this.#scannedBytes)
    return this.#filledSinceScan > room / 4 || Date.now() - this.#scannedAt > RESCAN_MS
  }

  constructor(dir: string) {
    this.dir = dir
    this.objects = join(dir, 'objects')
    this.pins = join(dir, 'pins')
    this.tmp = join(dir, 'tmp')
  }

  /** Creates the directories and sweeps what dead processes left, once per process. */
  ready(): Promise<void> {
    this.#ready ??= (async () => {
      await this.ensureDirs()
      await this.#checkOwner()
      await Promise.all([this.#sweep(this.pins), this.#sweep(this.tmp)])
    })().catch((err: unknown) => {
      this.#ready = undefined
      throw cacheError(err, this.dir)
    })
    return this.#ready
  }

  async ensureDirs(): Promise<void> {
    for (const d of [this.objects, this.pins, this.tmp]) await makeDirectories(d, 0o700)
  }

  use(name: string): void {
    this.inUse.set(name, (this.inUse.get(name) ?? 0) + 1)
  }

  unuse(name: string): void {
    const n = (this.inUse.get(name) ?? 1) - 1
    if (n <= 0) this.inUse.delete(name)
    else this.inUse.set(name, n)
  }

  /**
   * Evicts least recently used entries until the total is within `maxBytes`. Passes do not
   * overlap; a request during a pass runs one more pass after it.
   */
  evict(maxBytes: number): Promise<void> {
    if (this.#evicting !== undefined) {
      this.#evictAgain = Math.max(this.#evictAgain, maxBytes)
      return this.#evicting
    }
    this.#evicting = (async () => {
      try {
        let bound = maxBytes
        for (;;) {
          await this.#evictPass(bound)
          if (this.#evictAgain === 0) break
          bound = this.#evictAgain
          this.#evictAgain = 0
        }
      } finally {
        this.#evicting = undefined
      }
    })()
    return this.#evicting
  }

  async entries(): Promise<{ name: string; size: number; mtimeMs: number }[]> {
    let names: string[]
    try {
      names = await readdir(this.objects)
    } catch (err) {
      if (errno(err) === 'ENOENT') return []
      throw err
    }
    const out: { name: string; size: number; mtimeMs: number }[] = []
    await mapLimit(names, STAT_CONCURRENCY, async (name) => {
      try {
        const s = await stat(join(this.objects, name))
        out.push({ name, size: s.size, mtimeMs: s.mtimeMs })
      } catch (err) {
        // Another process evicted it meanwhile.
        if (errno(err) !== 'ENOENT') throw err
      }
    })
    return out
  }

  async #evictPass(maxBytes: number): Promise<void> {
    const entries = await this.entries()
    let total = entries.reduce((sum, e) => sum + e.size, 0)
    this.#filledSinceScan = 0
    this.#scannedAt = Date.now()
    this.#scannedBytes = total
    if (total <= maxBytes) {
      this.overBound = 0
      return
    }
    entries.sort((a, b) => a.mtimeMs - b.mtimeMs)
    for (const e of entries) {
      if (total <= maxBytes) break
      if (this.inUse.has(e.name)) continue
      await rm(join(this.objects, e.name), { force: true })
      total -= e.size
    }
    this.overBound = total > maxBytes ? maxBytes : 0
    this.#scannedBytes = total
  }

  async #checkOwner(): Promise<void> {
    if (typeof process.getuid !== 'function') return
    const s = await stat(this.dir)
    if (s.uid !== process.getuid()) {
      throw new StorageError(
        `The staging cache directory ${this.dir} belongs to another user; its content cannot be trusted`,
        {
          path: this.dir,
          hint: 'Point cacheDir at a directory of your own, or pass cacheMaxBytes: 0 to turn the cache off.',
        },
      )
    }
  }

  /** Removes `<pid>-...` files of processes that no longer run. */
  async #sweep(dir: string): Promise<void> {
    const now = Date.now()
    for (const name of await readdir(dir)) {
      const pid = Number(/^(\d+)-/.exec(name)?.[1])
      if (!Number.isSafeInteger(pid) || pid === process.pid || processAlive(pid)) continue
      const path = join(dir, name)
      try {
        if (now - (await stat(path)).mtimeMs >= STALE_AFTER_MS) await rm(path, { force: true })
      } catch (err) {
        if (errno(err) !== 'ENOENT') throw err
      }
    }
  }
}

class StagingCacheImpl implements StagingCache {
  readonly #state: DirState
  readonly maxBytes: number

  constructor(state: DirState, maxBytes: number) {
    this.#state = state
    this.maxBytes = maxBytes
  }

  get dir(): string {
    return this.#state.dir
  }

  async usage(): Promise<{ readonly entries: number; readonly bytes: number }> {
    const entries = await this.#state.entries()
    return { entries: entries.length, bytes: entries.reduce((sum, e) => sum + e.size, 0) }
  }

  async acquire(store: ObjectStore, key: string, signal?: AbortSignal): Promise<StagedFile> {
    const state = this.#state
    await state.ready()
    const meta = await store.head(key, { signal })
    const name = cacheEntryName(store.root, meta)
    const entry = join(state.objects, name)
    const pin = join(state.pins, `${process.pid}-${randomUUID()}-${safeName(key)}`)
    state.use(name)
    try {
      let pinned = await pinEntry(entry, pin, meta.size)
      // Another acquisition of this process may be downloading the entry: wait for it rather
      // than download it twice.
      const inFlight = pinned ? undefined : state.fills.get(name)
      if (inFlight !== undefined) {
        await inFlight
        pinned = await pinEntry(entry, pin, meta.size)
      }
      if (!pinned) {
        const fill = this.#fill(store, meta, entry, pin, signal)
        // Followers only wait for the end of the download; its failure is this acquisition's.
        const shared = fill.then(
          () => {},
          () => {},
        )
        state.fills.set(name, shared)
        try {
          await fill
        } finally {
          if (state.fills.get(name) === shared) state.fills.delete(name)
        }
        if (this.maxBytes > 0 && state.filled(meta.size, this.maxBytes)) await state.evict(this.maxBytes)
      } else {
        // A hit makes the entry the most recently used one.
        const now = new Date()
        await utimes(entry, now, now).catch(() => {})
      }
    } catch (err) {
      state.unuse(name)
      await rm(pin, { force: true })
      throw cacheError(err, state.dir)
    }
    let released = false
    return {
      path: pin,
      release: async () => {
        if (released) return
        released = true
        state.unuse(name)
        await rm(pin, { force: true })
        if (state.overBound > 0 && !state.inUse.has(name)) await state.evict(state.overBound)
      },
    }
  }

  /** Downloads the object into a temp file, pins it, then publishes it as the entry. */
  async #fill(
    store: ObjectStore,
    meta: FileMeta,
    entry: string,
    pin: string,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const state = this.#state
    const bytes = await store.read(meta.key, undefined, { signal })
    signal?.throwIfAborted()
    const temp = join(state.tmp, `${process.pid}-${randomUUID()}`)
    try {
      // The directories may have been removed under a running process (a temp-dir cleaner).
      await state.ensureDirs()
      await writeFile(temp, bytes)
      await linkOrCopy(temp, pin)
      // Publish only what matches the identity it is filed under: an object replaced between
      // the head and the read keeps its private copy, and an object larger than the whole bound
      // would only be evicted again.
      if (bytes.byteLength === meta.size && meta.size <= this.maxBytes && this.maxBytes > 0) {
        await rename(temp, entry)
      }
    } finally {
      await rm(temp, { force: true })
    }
  }
}

// === File helpers ===

/** Links an entry to a pin; false when there is no entry, or a damaged one (then removed). */
async function pinEntry(entry: string, pin: string, size: number): Promise<boolean> {
  try {
    await linkOrCopy(entry, pin)
  } catch (err) {
    if (errno(err) === 'ENOENT') return false
    throw err
  }
  const pinned = await stat(pin)
  if (pinned.size === size) return true
  // Only a file not written by this cache can have the wrong size; never trust it.
  await rm(pin, { force: true })
  try {
    if ((await stat(entry)).ino === pinned.ino) await unlink(entry)
  } catch (err) {
    if (errno(err) !== 'ENOENT') throw err
  }
  return false
}

async function linkOrCopy(from: string, to: string): Promise<void> {
  try {
    await link(from, to)
  } catch (err) {
    const code = errno(err)
    // File systems without hard links (or across devices) get a copy: slower, as correct.
    if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EXDEV' || code === 'EOPNOTSUPP') {
      await copyFile(from, to)
      return
    }
    throw err
  }
}

function safeName(key: string): string {
  const base = key.slice(key.lastIndexOf('/') + 1)
  const safe = base.replace(/[^A-Za-z0-9._-]/g, '_')
  return safe.length > 80 ? safe.slice(safe.length - 80) : safe
}

function errno(err: unknown): string | undefined {
  return (err as { code?: unknown } | null)?.code as string | undefined
}

function cacheError(err: unknown, dir: string): unknown {
  if (isDeltaError(err) || (err instanceof Error && err.name === 'AbortError')) return err
  // Only the file system's own errors are the cache directory's; anything else is a bug.
  if (dataPlaneFailureKind(err) === 'internal') return dataPlaneError(err, { what: 'staging' })
  const code = errno(err)
  if (code === 'EMFILE' || code === 'ENFILE')
    return fileDescriptorsExhausted(code, `use the staging cache in ${dir}`, err)
  const message = err instanceof Error ? err.message : String(err)
  return new StorageError(`The staging cache in ${dir} failed: ${message}`, {
    path: dir,
    cause: err,
    retryable: code === 'EBUSY',
    hint:
      code === 'ENOSPC'
        ? 'The disk is full: lower cacheMaxBytes, point cacheDir at a larger disk, or free space.'
        : 'Point cacheDir at a writable local directory, or pass cacheMaxBytes: 0 to turn the cache off.',
  })
}
