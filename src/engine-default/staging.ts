import { randomUUID } from 'node:crypto'
import { rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { DuckDBConnection } from '@duckdb/node-api'
import type { ObjectStore } from '../storage/object-store.js'
import { mapLimit } from '../util/map-limit.js'
import type { DuckDbRuntime } from './duckdb-runtime.js'
import { ensureScratchDir, scratchEntryName } from './scratch-dir.js'
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
  await ensureScratchDir(scratchDir)
  // DuckDB expands glob characters in paths: keep the name to safe characters.
  const name = key.slice(key.lastIndexOf('/') + 1).replace(/[^A-Za-z0-9._-]/g, '_')
  const path = join(scratchDir, scratchEntryName(`${randomUUID()}-${name}`))
  await writeFile(path, bytes, { mode: 0o600, flag: 'wx' })
  return { path, release: () => rm(path, { force: true }) }
}

/**
 * The start of a DuckDB read of a table's objects: stages them ({@link stageAllForRead}, which
 * pushes every staged file to `into`, also on failure, for the caller's cleanup to release) and
 * opens a connection whose time zone is UTC, so that timestamp text without a zone does not move
 * with the process's zone. The caller closes the connection.
 *
 * @param duck - the engine's DuckDB
 * @param store - the objects' store
 * @param scratchDir - directory for private copies
 * @param read - the objects to read (their keys) and the signal that aborts their downloads
 * @param into - receives the staged files
 * @returns the open connection
 */
export async function stageAndConnect(
  duck: DuckDbRuntime,
  store: ObjectStore,
  scratchDir: string,
  read: { readonly files: readonly { readonly key: string }[]; readonly signal?: AbortSignal | undefined },
  into: StagedFile[],
): Promise<DuckDBConnection> {
  await stageAllForRead(
    store,
    read.files.map((f) => f.key),
    scratchDir,
    read.signal,
    into,
  )
  const con = await duck.connect()
  try {
    await con.run(`SET TimeZone = 'UTC'`)
  } catch (err) {
    con.closeSync()
    throw err
  }
  return con
}

/** How many objects {@link stageAllForRead} stages at once. */
const STAGE_CONCURRENCY = 16

/**
 * Stages several objects for one query, a few at a time: on an object store each costs a round
 * trip (a `head`, or a download), which one after another would add up per file. Every staged
 * file is pushed to `into`, in the order of `keys`, also when another one fails, so that the
 * caller's cleanup of `into` releases them all.
 *
 * @param store - the objects' store
 * @param keys - the objects' keys
 * @param scratchDir - directory for private copies
 * @param signal - aborts the downloads
 * @param into - receives the staged files
 * @returns the local paths, in the order of `keys`
 * @throws the failure of the first key (in `keys` order) that could not be staged
 */
export async function stageAllForRead(
  store: ObjectStore,
  keys: readonly string[],
  scratchDir: string,
  signal: AbortSignal | undefined,
  into: StagedFile[],
): Promise<string[]> {
  const staged = new Array<StagedFile | undefined>(keys.length)
  const failures = new Map<number, unknown>()
  await mapLimit(keys, STAGE_CONCURRENCY, async (key, i) => {
    // After a failure the remaining keys are not fetched: the query cannot run anyway.
    if (failures.size > 0) return
    try {
      staged[i] = await stageForRead(store, key, scratchDir, signal)
    } catch (err) {
      failures.set(i, err)
    }
  })
  const paths: string[] = []
  for (const f of staged) {
    if (f === undefined) continue
    into.push(f)
    paths.push(f.path)
  }
  let first: number | undefined
  for (const i of failures.keys()) if (first === undefined || i < first) first = i
  if (first !== undefined) throw failures.get(first)
  return paths
}
