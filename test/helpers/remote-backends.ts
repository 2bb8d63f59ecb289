/**
 * Tables on non-local stores for the end-to-end tests: a memory store, Azurite and S3 (moto, or
 * s3rver with the conditional-put guard where moto is not installed: the servers of `servers.ts`), each giving fresh, empty table locations with the options
 * `DeltaTable.open` needs, and a direct store on the same location to upload or inspect objects.
 */
import { randomUUID } from 'node:crypto'
import { rmSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative, sep } from 'node:path'
import {
  createAzureStore,
  createS3Store,
  type ObjectStore,
  type OpenStoreOptions,
  openStore,
} from '../../src/storage/index.js'
import type { OpenOptions } from '../../src/table/delta-table.js'
import { mapLimit } from '../../src/util/map-limit.js'
import {
  AZURITE_ACCOUNT,
  AZURITE_KEY,
  createAzureContainer,
  createS3Bucket,
  S3RVER_CREDENTIALS,
  s3ServerName,
  startAzurite,
  startS3,
  startS3rver,
  type TestServer,
  uniqueName,
} from './servers.js'

/** A fresh table location on a backend. */
export interface RemoteLocation {
  /** The location to give `DeltaTable.open` / `create`. */
  readonly location: string
  /** The options that reach it (credentials and endpoint for the servers). */
  readonly openOptions: OpenOptions
  /** A store rooted at the location, independent of any table's engine. */
  readonly store: ObjectStore
}

/** A backend the remote suites run on. */
export interface RemoteBackend {
  readonly name: string
  /**
   * Finest resolution of the `lastModified` the backend reports, ms: object stores report whole
   * seconds.
   */
  readonly mtimeResolutionMs: number
  /** Starts the server (or reuses one) and creates a fresh container or bucket. */
  start(): Promise<void>
  /** Stops a server this process started. */
  stop(): Promise<void>
  /** A fresh, empty location under the backend's container or bucket. */
  fresh(stem: string): RemoteLocation
}

/**
 * Staging cache directories of this test process, one per table location, removed when it exits.
 * The default cache is shared by every process on the machine and keeps what earlier runs left in
 * it (up to its 1 GiB bound), and each fill's eviction pass stats every entry in the directory:
 * thousands of calls per remote read. No two locations share objects, so one directory each
 * keeps every pass as short as its own table.
 */
let processCacheRoot: string | undefined
let cacheDirs = 0

/** Engine options of a fresh remote location: a staging cache directory of its own. */
export function testEngineOptions(): { readonly cacheDir: string } {
  if (processCacheRoot === undefined) {
    const root = join(tmpdir(), `delta-rlc-test-cache-${process.pid}-${randomUUID().slice(0, 8)}`)
    process.once('exit', () => rmSync(root, { recursive: true, force: true }))
    processCacheRoot = root
  }
  return { cacheDir: join(processCacheRoot, String(cacheDirs++)) }
}

/** Memory: the same process-wide named store `openStore('memory://...')` returns. */
export function memoryBackend(): RemoteBackend {
  return {
    name: 'memory',
    mtimeResolutionMs: 1,
    start: async () => {},
    stop: async () => {},
    fresh(stem) {
      const location = `memory://${uniqueName(stem)}`
      return { location, openOptions: { engineOptions: testEngineOptions() }, store: openStore(location) }
    },
  }
}

/** Azure Blob Storage on Azurite, with the emulator's well-known key. */
export function azuriteBackend(): RemoteBackend & { readonly server: () => TestServer | undefined } {
  let server: TestServer | undefined
  let container = ''
  return {
    name: 'azure (Azurite)',
    mtimeResolutionMs: 1000,
    server: () => server,
    async start() {
      server = await startAzurite()
      container = uniqueName('tables')
      await createAzureContainer(server.endpoint, container)
    },
    async stop() {
      await server?.stop()
    },
    fresh(stem) {
      if (server === undefined) throw new Error('Azurite is not started')
      const location = `az://${container}/${uniqueName(stem)}`
      const storageOptions = azuriteStorageOptions(server.endpoint)
      return {
        location,
        openOptions: { storageOptions, engineOptions: testEngineOptions() },
        store: createAzureStore(location, storageOptions.azure),
      }
    },
  }
}

/** S3 on moto, or on s3rver with the conditional-put guard where moto is not installed. */
export function s3Backend(): RemoteBackend & { readonly server: () => TestServer | undefined } {
  return s3BackendOn(s3ServerName() === 'moto' ? 's3 (moto)' : 's3 (s3rver)', () => startS3())
}

/** S3 on s3rver with the conditional-put guard. */
export function s3rverBackend(): RemoteBackend & { readonly server: () => TestServer | undefined } {
  return s3BackendOn('s3 (s3rver)', () => startS3rver())
}

function s3BackendOn(
  name: string,
  startServer: () => Promise<TestServer>,
): RemoteBackend & { readonly server: () => TestServer | undefined } {
  let server: TestServer | undefined
  let bucket = ''
  return {
    name,
    mtimeResolutionMs: 1000,
    server: () => server,
    async start() {
      server = await startServer()
      bucket = uniqueName('tables')
      await createS3Bucket(server.endpoint, bucket)
    },
    async stop() {
      await server?.stop()
    },
    fresh(stem) {
      if (server === undefined) throw new Error(`${name} is not started`)
      const location = `s3://${bucket}/${uniqueName(stem)}`
      const storageOptions = s3rverStorageOptions(server.endpoint)
      return {
        location,
        openOptions: { storageOptions, engineOptions: testEngineOptions() },
        store: createS3Store(location, storageOptions.s3),
      }
    },
  }
}

/**
 * Store options for an Azurite endpoint; `env: {}` keeps the developer's own variables out.
 *
 * @param endpoint - the account URL
 * @param retry - the retry policy, when not the default
 */
export function azuriteStorageOptions(
  endpoint: string,
  retry?: NonNullable<OpenStoreOptions['azure']>['retry'],
): OpenStoreOptions & { azure: NonNullable<OpenStoreOptions['azure']> } {
  return {
    azure: {
      endpoint,
      account: AZURITE_ACCOUNT,
      accountKey: AZURITE_KEY,
      env: {},
      ...(retry ? { retry } : {}),
    },
  }
}

/**
 * Store options for an S3 test endpoint (moto or s3rver); `env: {}` keeps the developer's own variables out.
 *
 * @param endpoint - the service URL
 * @param retry - the retry policy, when not the default
 */
export function s3rverStorageOptions(
  endpoint: string,
  retry?: NonNullable<OpenStoreOptions['s3']>['retry'],
): OpenStoreOptions & { s3: NonNullable<OpenStoreOptions['s3']> } {
  return { s3: { endpoint, ...S3RVER_CREDENTIALS, env: {}, ...(retry ? { retry } : {}) } }
}

/**
 * Uploads every file under a local directory (hidden ones included) to a store, keyed by its
 * path relative to the directory. Keys in `last` are uploaded after all others, one by one in
 * that order, `gapMs` apart, so that their modification times are ordered as the list is.
 *
 * @param dir - the local directory
 * @param store - the destination
 * @param options - keys to upload last, and the gap between them
 * @returns the keys uploaded
 */
export async function uploadDirectory(
  dir: string,
  store: ObjectStore,
  options: { readonly last?: readonly string[]; readonly gapMs?: number } = {},
): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true })
  const keys = entries
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)).split(sep).join('/'))
  const last = new Set(options.last ?? [])
  await mapLimit(
    keys.filter((k) => !last.has(k)),
    8,
    async (key) => store.put(key, await readFile(join(dir, key))),
  )
  for (const key of options.last ?? []) {
    if (!keys.includes(key)) continue
    await new Promise((r) => setTimeout(r, options.gapMs ?? 0))
    await store.put(key, await readFile(join(dir, key)))
  }
  return keys
}
