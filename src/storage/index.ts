/**
 * Byte storage: the {@link ObjectStore} contract, its backends, and {@link openStore}, which maps a
 * table location to a backend. Nothing here knows about Delta.
 */
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { InvalidArgumentError, UnsupportedError } from '../errors/index.js'
import { type AzureStoreOptions, createAzureStore } from './azure-store.js'
import { createGcsStore, type GcsStoreOptions } from './gcs-store.js'
import { createLocalStore } from './local-store.js'
import { createMemoryStore } from './memory-store.js'
import type { ObjectStore } from './object-store.js'
import { createS3Store, type S3StoreOptions } from './s3-store.js'

export type { AzureLocation, AzureStoreOptions, AzureTokenCredential } from './azure-store.js'
export { createAzureStore, parseAzureLocation } from './azure-store.js'
export type { DelayStore, DelayStoreOptions, DelayStoreRequests } from './delay-store.js'
export { createDelayStore } from './delay-store.js'
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
export type { GcsLocation, GcsServiceAccountKey, GcsStoreOptions } from './gcs-store.js'
export { createGcsStore, parseGcsLocation } from './gcs-store.js'
export { checkDirectoryKey, checkKey, checkObjectKey, checkRange, compareUtf8, dirOf } from './keys.js'
export { createLocalStore } from './local-store.js'
export { createMemoryStore } from './memory-store.js'
export type { ByteRange, FileMeta, ObjectStore, PutOptions, StoreCallOptions } from './object-store.js'
export { passThroughStore } from './pass-through-store.js'
export type { RetryOptions } from './retry.js'
export type { S3Location, S3StoreOptions } from './s3-store.js'
export { createS3Store, parseS3Location } from './s3-store.js'

/** Backend options of {@link openStore}, used only when the location names that backend. */
export interface OpenStoreOptions {
  /** Options of {@link createAzureStore} for `az://`, `abfss://` and Azure `https://` locations. */
  readonly azure?: Omit<AzureStoreOptions, 'location'> | undefined
  /** Options of {@link createS3Store} for `s3://` locations. */
  readonly s3?: Omit<S3StoreOptions, 'location'> | undefined
  /** Options of {@link createGcsStore} for `gs://` locations. */
  readonly gcs?: Omit<GcsStoreOptions, 'location'> | undefined
}

/** Schemes of Azure Blob Storage locations. */
const AZURE_SCHEMES: ReadonlySet<string> = new Set(['az', 'abfs', 'abfss', 'wasb', 'wasbs'])

/** Named memory stores shared by every `openStore('memory://<name>')` of this process. */
const namedMemoryStores = new Map<string, ObjectStore>()

/**
 * Opens the store behind a table location:
 * - a local path (relative paths resolve against the working directory) or a `file://` URL: a
 *   local store rooted at that absolute directory;
 * - `memory://<name>`: the process-wide memory store of that name, created on first use, so that
 *   two opens of one name share their objects;
 * - `az://<container>/<prefix>`, `abfss://<container>@<account>.dfs.core.windows.net/<prefix>` or
 *   `https://<account>.blob.core.windows.net/<container>/<prefix>`: an Azure Blob Storage store
 *   (see {@link createAzureStore} for credentials and environment variables);
 * - `s3://<bucket>/<prefix>` (or `s3a://`, `s3n://`): an S3 store (see {@link createS3Store});
 * - `gs://<bucket>/<prefix>`: a Google Cloud Storage store (see {@link createGcsStore}).
 *
 * ### Examples
 * ```ts
 * const store = openStore('file:///data/my-table')
 * const scratch = openStore('memory://tests')
 * const azure = openStore('az://tables/sales', { azure: { connectionString } })
 * const s3 = openStore('s3://lake/sales', { s3: { region: 'eu-west-1' } })
 * const gcs = openStore('gs://lake/sales', { gcs: { keyFilename: '/secrets/sa.json' } })
 * ```
 *
 * @param location - the table location
 * @param options - backend options, used when the location names that backend
 * @returns the store rooted at `location`
 * @throws {InvalidArgumentError} when the location is empty, a malformed `file://` URL, a memory
 *   location without a name, or a malformed remote location; or when a remote backend finds no
 *   usable credentials
 * @throws {UnsupportedError} for any other URL scheme
 */
export function openStore(location: string, options?: OpenStoreOptions): ObjectStore {
  if (typeof location !== 'string' || location.trim() === '') {
    throw new InvalidArgumentError('A table location must be a non-empty path or URL', {
      argument: 'location',
    })
  }
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\//.exec(location)?.[1]?.toLowerCase()
  if (scheme === undefined) return createLocalStore(path.resolve(location))
  if (scheme === 'file') return createLocalStore(filePathOf(location))
  if (scheme === 'memory') return namedMemoryStore(location)
  if (
    AZURE_SCHEMES.has(scheme) ||
    (scheme === 'https' && /^https:\/\/[a-z0-9]+\.(?:blob|dfs)\./i.test(location))
  ) {
    return createAzureStore(location, options?.azure)
  }
  if (scheme === 's3' || scheme === 's3a' || scheme === 's3n') return createS3Store(location, options?.s3)
  if (scheme === 'gs') return createGcsStore(location, options?.gcs)
  throw new UnsupportedError(
    `Cannot open '${location.split('?')[0]}': the '${scheme}://' storage scheme is not supported. Use a local path, a file:// URL, memory://<name>, az://<container>/<prefix>, s3://<bucket>/<prefix> or gs://<bucket>/<prefix>.`,
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
