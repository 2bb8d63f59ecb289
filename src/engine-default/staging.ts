import { randomUUID } from 'node:crypto'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { ObjectStore } from '../storage/object-store.js'
import { scratchEntryName } from './scratch-dir.js'
import { createStagingCache, type StagingCache } from './staging-cache.js'

/** A local file that holds an object's bytes, and how to let it go. */
export interface StagedFile {
  /** Absolute local path DuckDB can read. */
  readonly path: string
  /** Lets the file go (a private copy is deleted); a no-op for files read in place. Idempotent. */
  release(): Promise<void>
}

const CACHE = Symbol('delta-rlc.stagingCache')

/** A store carrying the staging cache its remote objects go through. */
type CachedStore = ObjectStore & { readonly [CACHE]?: StagingCache }

let defaultCache: StagingCache | undefined

/**
 * A view of `store` whose remote objects {@link stageForRead} stages through `cache`. Every call
 * goes to `store` unchanged; the view only carries the cache, so that one engine's data plane,
 * writer and checkpoint reader share it.
 *
 * @param store - the table's store
 * @param cache - the cache for its remote objects
 * @returns the view
 */
export function withStagingCache(store: ObjectStore, cache: StagingCache): ObjectStore {
  return new Proxy(store, {
    get(target, prop) {
      if (prop === CACHE) return cache
      const value: unknown = Reflect.get(target, prop, target)
      // Bound to the store itself: backends keep their state in private fields.
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}

/**
 * Gives the data plane a local path for an object:
 * - the file itself when the store is a local directory (no copy, no cache);
 * - otherwise a file of the staging cache the store carries (see {@link withStagingCache}), or of
 *   the process-wide default cache, shared with other processes and bounded in size;
 * - with a cache of size 0, a private copy under `scratchDir`, deleted on release.
 *
 * @param store - the object's store
 * @param key - the object's key
 * @param scratchDir - directory for private copies
 * @param signal - aborts the download
 * @returns the file; release it once DuckDB is done with it
 * @throws {FileNotFoundError} when the object does not exist
 * @throws {StorageError} when the store or the cache directory fails
 */
export async function stageForRead(
  store: ObjectStore,
  key: string,
  scratchDir: string,
  signal?: AbortSignal,
): Promise<StagedFile> {
  if (store.localPath) {
    await store.head(key, { signal })
    return { path: store.localPath(key), release: async () => {} }
  }
  defaultCache ??= createStagingCache()
  const cache = (store as CachedStore)[CACHE] ?? defaultCache
  if (cache.maxBytes > 0) return cache.acquire(store, key, signal)
  const bytes = await store.read(key, undefined, { signal })
  await mkdir(scratchDir, { recursive: true })
  // DuckDB expands glob characters in paths: keep the name to safe characters.
  const name = key.slice(key.lastIndexOf('/') + 1).replace(/[^A-Za-z0-9._-]/g, '_')
  const path = join(scratchDir, scratchEntryName(`${randomUUID()}-${name}`))
  await writeFile(path, bytes)
  return { path, release: () => rm(path, { force: true }) }
}
