/**
 * Byte storage: the {@link ObjectStore} contract, its backends, and {@link openStore}, which maps a
 * table location to a backend. Nothing here knows about Delta.
 */
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { InvalidArgumentError, UnsupportedError } from '../errors/index.js'
import { createLocalStore } from './local-store.js'
import { createMemoryStore } from './memory-store.js'
import type { ObjectStore } from './object-store.js'

export type {
  DelayRule,
  FaultPlan,
  FaultRule,
  FaultyStore,
  FaultyStoreStats,
  KeyMatcher,
  StoreMethod,
} from './faulty-store.js'
export { createFaultyStore } from './faulty-store.js'
export { checkDirectoryKey, checkKey, checkObjectKey, checkRange, compareUtf8, dirOf } from './keys.js'
export { createLocalStore } from './local-store.js'
export { createMemoryStore } from './memory-store.js'
export type { ByteRange, FileMeta, ObjectStore, PutOptions, StoreCallOptions } from './object-store.js'

/** Named memory stores shared by every `openStore('memory://<name>')` of this process. */
const namedMemoryStores = new Map<string, ObjectStore>()

/**
 * Opens the store behind a table location:
 * - a local path (relative paths resolve against the working directory) or a `file://` URL: a
 *   local store rooted at that absolute directory;
 * - `memory://<name>`: the process-wide memory store of that name, created on first use, so that
 *   two opens of one name share their objects.
 *
 * ### Examples
 * ```ts
 * const store = openStore('file:///data/my-table')
 * const scratch = openStore('memory://tests')
 * ```
 *
 * @param location - the table location
 * @returns the store rooted at `location`
 * @throws {InvalidArgumentError} when the location is empty, a malformed `file://` URL, or a
 *   memory location without a name
 * @throws {UnsupportedError} for any other URL scheme (`az://`, `s3://`, ...)
 */
export function openStore(location: string): ObjectStore {
  if (typeof location !== 'string' || location.trim() === '') {
    throw new InvalidArgumentError('A table location must be a non-empty path or URL', {
      argument: 'location',
    })
  }
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\//.exec(location)?.[1]?.toLowerCase()
  if (scheme === undefined) return createLocalStore(path.resolve(location))
  if (scheme === 'file') return createLocalStore(filePathOf(location))
  if (scheme === 'memory') return namedMemoryStore(location)
  throw new UnsupportedError(
    `Cannot open '${location}': the '${scheme}://' storage scheme is not supported by this build. Use a local path, a file:// URL or memory://<name>.`,
  )
}

function filePathOf(location: string): string {
  try {
    return fileURLToPath(location)
  } catch (err) {
    throw new InvalidArgumentError(
      `Invalid file URL '${location}': use file:///absolute/path (a file URL names no host)`,
      { argument: 'location', cause: err },
    )
  }
}

function namedMemoryStore(location: string): ObjectStore {
  const name = location.slice('memory://'.length).replace(/\/+$/, '')
  if (name === '') {
    throw new InvalidArgumentError(
      `Invalid memory location '${location}': name the store, as in memory://tests`,
      {
        argument: 'location',
      },
    )
  }
  let store = namedMemoryStores.get(name)
  if (store === undefined) {
    store = createMemoryStore(name)
    namedMemoryStores.set(name, store)
  }
  return store
}
