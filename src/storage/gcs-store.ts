/**
 * The Google Cloud Storage backend (also fake-gcs-server and other emulators of its JSON API).
 *
 * Put-if-absent is an upload with `ifGenerationMatch=0`, which the service evaluates atomically:
 * of concurrent uploads of one name exactly one succeeds, the others get 412
 * `conditionNotMet`. An object is visible whole or not at all.
 *
 * The SDK's own retries are disabled (`autoRetry: false`) for the reason given in `retry.ts`.
 * Its JSON API calls take no abort signal: an attempt abandoned on timeout or cancellation stops
 * waiting at once (the read and upload streams are destroyed), while a metadata, listing or
 * delete request already sent runs to its end unobserved.
 */
import { createRequire } from 'node:module'
import type { Bucket, File, Storage } from '@google-cloud/storage'
import { InvalidArgumentError, StorageError } from '../errors/index.js'
import type { FileMeta, ObjectStore, StoreCallOptions } from './object-store.js'
import { readFully } from './read-fully.js'
import {
  checkListPageSize,
  type FailureVerdict,
  locationPrefix,
  nonEmpty,
  type ObjectProperties,
  optionsWithLocation,
  RemoteStore,
} from './remote-store.js'
import { firstLine, type RequestFailure, sanitizedCause } from './request-failure.js'
import {
  type AttemptVerdict,
  type RetriedCall,
  type RetryOptions,
  type RetryPolicy,
  resolveRetryPolicy,
} from './retry.js'

/** A service account key, as in the JSON key file Google Cloud issues. */
export interface GcsServiceAccountKey {
  readonly client_email: string
  readonly private_key: string
}

/** Options of {@link createGcsStore}. Explicit options win over environment variables. */
export interface GcsStoreOptions {
  /** Where the store is rooted: `gs://<bucket>/<prefix>`. */
  readonly location?: string | undefined
  /**
   * The JSON API endpoint of an emulator or a private endpoint (`http://127.0.0.1:4443`); else
   * `STORAGE_EMULATOR_HOST`, else Google Cloud Storage itself. Requests to a custom endpoint are
   * sent without credentials, as emulators expect.
   */
  readonly endpoint?: string | undefined
  /** The project; else `GOOGLE_CLOUD_PROJECT`, else the one the credentials name. */
  readonly projectId?: string | undefined
  /** A service account key; else `keyFilename`. */
  readonly credentials?: GcsServiceAccountKey | undefined
  /**
   * A service account key file; else `GOOGLE_APPLICATION_CREDENTIALS`, else Application Default
   * Credentials (the metadata server, gcloud's user credentials).
   */
  readonly keyFilename?: string | undefined
  /** Retry policy of every call. */
  readonly retry?: RetryOptions | undefined
  /** Maximum entries per listing request, 1 to 5000 (the service default is 1000). */
  readonly listPageSize?: number | undefined
  /** The environment variables to read; `process.env` by default. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
}

/** A parsed Google Cloud Storage location. */
export interface GcsLocation {
  readonly bucket: string
  /** The key prefix, without leading or trailing `/`; `''` for the bucket root. */
  readonly prefix: string
  /** `gs://<bucket>/<prefix>`: the store's `root`. */
  readonly display: string
}

const SERVICE = 'Google Cloud Storage'

type GcsSdk = typeof import('@google-cloud/storage')
let loadedSdk: GcsSdk | undefined

/**
 * The SDK, loaded on first use: processes that never open a `gs://` location should not pay for
 * loading it.
 */
function gcsSdk(): GcsSdk {
  loadedSdk ??= createRequire(import.meta.url)('@google-cloud/storage') as GcsSdk
  return loadedSdk
}

const CREDENTIAL_HINT =
  'Check the service account key (options credentials or keyFilename, or GOOGLE_APPLICATION_CREDENTIALS) or the Application Default Credentials, and that they grant access to this bucket.'

/**
 * Creates a Google Cloud Storage backend rooted at a bucket prefix.
 *
 * Settings, each from the option, else the environment variable, else the default:
 * - endpoint: `endpoint`, `STORAGE_EMULATOR_HOST`, Google Cloud Storage (a custom endpoint gets
 *   no credentials);
 * - project: `projectId`, `GOOGLE_CLOUD_PROJECT`, the credentials' project;
 * - credentials: `credentials`, `keyFilename`, `GOOGLE_APPLICATION_CREDENTIALS`, then
 *   Application Default Credentials.
 *
 * Behaviour: puts with `ifNotExists` send `ifGenerationMatch=0`; 412 gives
 * {@link FileAlreadyExistsError}. Timeouts, 408, 429, 5xx and connection failures are retried
 * with backoff (see {@link RetryOptions}), except a conditional put that may have landed, which
 * fails at once with an ambiguous {@link StorageError}. Listings start at the requested name
 * (`startOffset`). No secret appears in `root`, in any error, or in the store's JSON or
 * `util.inspect` form.
 *
 * ### Examples
 * ```ts
 * const store = createGcsStore('gs://lake/sales', { keyFilename: '/secrets/sa.json' })
 * const local = createGcsStore({ location: 'gs://lake/sales', endpoint: 'http://127.0.0.1:4443' })
 * ```
 *
 * @param location - the location (or put it in `options.location`)
 * @param options - endpoint, project, credentials, retry policy
 * @returns an {@link ObjectStore} whose `root` is `gs://<bucket>/<prefix>`
 * @throws {InvalidArgumentError} when the location or an option is malformed
 */
export function createGcsStore(location: string, options?: GcsStoreOptions): ObjectStore
export function createGcsStore(options: GcsStoreOptions): ObjectStore
export function createGcsStore(
  locationOrOptions: string | GcsStoreOptions,
  maybeOptions?: GcsStoreOptions,
): ObjectStore {
  const options = optionsWithLocation(
    locationOrOptions,
    maybeOptions,
    'createGcsStore needs a location such as gs://<bucket>/<prefix>',
  )
  const location = parseGcsLocation(options.location)
  const env = options.env ?? process.env
  const endpoint = checkEndpoint(nonEmpty(options.endpoint) ?? nonEmpty(env.STORAGE_EMULATOR_HOST))
  const projectId = nonEmpty(options.projectId) ?? nonEmpty(env.GOOGLE_CLOUD_PROJECT)
  const credentials = checkCredentials(options.credentials)
  const keyFilename =
    credentials === undefined
      ? (nonEmpty(options.keyFilename) ?? nonEmpty(env.GOOGLE_APPLICATION_CREDENTIALS))
      : undefined
  const pageSize = checkListPageSize(options.listPageSize, 5000)
  const storage = new (gcsSdk().Storage)({
    ...(endpoint === undefined ? {} : { apiEndpoint: endpoint }),
    ...(projectId === undefined ? {} : { projectId }),
    ...(credentials === undefined
      ? {}
      : { credentials: { client_email: credentials.client_email, private_key: credentials.private_key } }),
    ...(keyFilename === undefined ? {} : { keyFilename }),
    // Retries belong to runWithRetries; see the module comment of retry.ts.
    retryOptions: { autoRetry: false, maxRetries: 0 },
  })
  // The SDK takes the JSON API base from process.env.STORAGE_EMULATOR_HOST as it is, whatever
  // the options say (and without the API path a host:port value needs): the options decide.
  storage.baseUrl = `${storage.apiEndpoint}/storage/v1`
  return new GcsStore({
    root: location.display,
    storage,
    bucket: location.bucket,
    prefix: location.prefix === '' ? '' : `${location.prefix}/`,
    policy: resolveRetryPolicy(options.retry),
    secrets: Object.freeze(credentials === undefined ? [] : [credentials.private_key]),
    pageSize,
  })
}

/**
 * Parses a Google Cloud Storage location.
 *
 * @param location - `gs://<bucket>/<prefix>`
 * @returns its parts
 * @throws {InvalidArgumentError} when the location has another form, no bucket, or a prefix with
 *   empty, `.` or `..` segments
 */
export function parseGcsLocation(location: string): GcsLocation {
  const m = /^gs:\/\/([^/?#]+)(?:\/([^?#]*))?$/i.exec(location)
  if (m === null) {
    throw new InvalidArgumentError(`Invalid GCS location '${location}': use gs://<bucket>/<prefix>`, {
      argument: 'location',
    })
  }
  const bucket = m[1]!
  const prefix = locationPrefix(m[2] ?? '', `Invalid GCS location '${location}'`)
  return Object.freeze({ bucket, prefix, display: `gs://${bucket}${prefix === '' ? '' : `/${prefix}`}` })
}

function checkEndpoint(text: string | undefined): string | undefined {
  if (text === undefined) return undefined
  // STORAGE_EMULATOR_HOST is often a bare host:port.
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`
  let url: URL
  try {
    url = new URL(withScheme)
  } catch (err) {
    throw new InvalidArgumentError(`Invalid GCS endpoint '${text}': use an http(s) URL`, {
      argument: 'endpoint',
      cause: err,
    })
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.search !== '') {
    throw new InvalidArgumentError(
      `Invalid GCS endpoint '${url.origin}': use an http(s) URL without a query`,
      {
        argument: 'endpoint',
      },
    )
  }
  // The Node SDK's documented form of STORAGE_EMULATOR_HOST ends in the API path; the origin is what counts.
  return withScheme.replace(/\/+$/, '').replace(/\/storage\/v1$/, '')
}

function checkCredentials(key: GcsServiceAccountKey | undefined): GcsServiceAccountKey | undefined {
  if (key === undefined) return undefined
  if (
    typeof key !== 'object' ||
    key === null ||
    nonEmpty(key.client_email) === undefined ||
    nonEmpty(key.private_key) === undefined
  ) {
    throw new InvalidArgumentError(
      'Invalid GCS credentials: pass a service account key with client_email and private_key, or use keyFilename',
      { argument: 'credentials' },
    )
  }
  return key
}

// === The store ===

interface GcsStoreParts {
  readonly root: string
  readonly storage: Storage
  readonly bucket: string
  readonly prefix: string
  readonly policy: RetryPolicy
  readonly secrets: readonly string[]
  readonly pageSize: number | undefined
}

/** The metadata fields of an object the store reads. */
interface ObjectMetadata {
  readonly size?: string | number | undefined
  readonly updated?: string | undefined
}

/** The Google Cloud Storage calls behind the shared {@link RemoteStore} scaffolding. */
class GcsStore extends RemoteStore {
  readonly #bucket: Bucket
  readonly #bucketName: string
  readonly #pageSize: number | undefined

  constructor(parts: GcsStoreParts) {
    super({
      root: parts.root,
      service: SERVICE,
      prefix: parts.prefix,
      policy: parts.policy,
      secrets: parts.secrets,
      credentialHint: CREDENTIAL_HINT,
    })
    this.#bucket = parts.storage.bucket(parts.bucket)
    this.#bucketName = parts.bucket
    this.#pageSize = parts.pageSize
  }

  /** The service selects the names by prefix (`prefix` of the objects list call). */
  listPrefix(prefix: string, opts?: StoreCallOptions): AsyncGenerator<FileMeta> {
    return this.listByPrefix(prefix, opts)
  }

  protected override async readAttempt(
    objectKey: string,
    offset: number,
    count: number | undefined,
    signal: AbortSignal,
    path: string,
  ): Promise<Uint8Array> {
    const whole = offset === 0 && count === undefined
    const stream = this.#bucket.file(objectKey).createReadStream({
      // A whole object is checked against its CRC32C; a range cannot be.
      validation: whole ? 'crc32c' : false,
      ...(whole ? {} : { start: offset }),
      ...(count === undefined ? {} : { end: offset + count - 1 }),
    })
    let announced: number | undefined
    stream.once('response', (response: { headers?: Record<string, string | undefined> }) => {
      const length = Number(response.headers?.['content-length'])
      // A decompressed (gzip-encoded) body has another length than the one announced.
      if (Number.isSafeInteger(length) && response.headers?.['content-encoding'] === undefined) {
        announced = length
      }
    })
    const bytes = await readFully(stream, undefined, signal, path)
    if (announced !== undefined && bytes.byteLength !== announced) {
      throw new StorageError(
        `Read of ${path} was cut short: ${bytes.byteLength} of ${announced} bytes arrived`,
        { path, retryable: true },
      )
    }
    return bytes
  }

  protected override async headAttempt(objectKey: string, signal: AbortSignal): Promise<ObjectProperties> {
    const [metadata] = await untilAborted(signal, () => this.#bucket.file(objectKey).getMetadata())
    return propertiesOf(metadata)
  }

  protected override async putObject(
    key: string,
    data: Uint8Array,
    ifNotExists: boolean,
    signal: AbortSignal | undefined,
  ): Promise<FileMeta | undefined> {
    const path = this.path(key)
    const exists: FailureVerdict = (failure) =>
      ifNotExists && failure.status === 412 ? this.alreadyExistsVerdict(path, failure) : undefined
    const metadata = await this.run(
      'put',
      path,
      signal,
      exists,
      (attemptSignal) =>
        this.#upload(this.#bucket.file(this.settings.prefix + key), data, ifNotExists, attemptSignal),
      ifNotExists ? 'conditional' : 'plain',
    )
    // The service's time and size of the new object, the ones its metadata reports.
    const props = metadata === undefined ? undefined : propertiesOf(metadata)
    return props === undefined || props.lastModified === 0
      ? undefined
      : Object.freeze({ key, size: props.size, lastModified: props.lastModified })
  }

  protected override async deleteAttempt(objectKey: string, signal: AbortSignal): Promise<void> {
    await untilAborted(signal, () => this.#bucket.file(objectKey).delete({ ignoreNotFound: true }))
  }

  /**
   * Pages of a listing, each fetched with retries; delimited pages hold one directory level. A
   * listing from a name starts there (`startOffset`), so it costs the names after it only.
   */
  protected override async *pages(
    dirKey: string,
    hierarchical: boolean,
    from: string | undefined,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<FileMeta[]> {
    const prefix = this.settings.prefix + dirKey
    const startOffset = from === undefined || from === dirKey ? undefined : this.settings.prefix + from
    let pageToken: string | undefined
    do {
      const token = pageToken
      const page = await this.run('list', this.path(dirKey), signal, undefined, async (attemptSignal) => {
        const [files, next] = await untilAborted(attemptSignal, () =>
          this.#bucket.getFiles({
            prefix,
            autoPaginate: false,
            ...(hierarchical ? { delimiter: '/' } : {}),
            ...(startOffset === undefined ? {} : { startOffset }),
            ...(this.#pageSize === undefined ? {} : { maxResults: this.#pageSize }),
            ...(token === undefined ? {} : { pageToken: token }),
          }),
        )
        return { files, next: (next as { pageToken?: string } | null | undefined)?.pageToken }
      })
      yield page.files.flatMap((file: File) => {
        const props = propertiesOf(file.metadata)
        return this.listed(file.name, props.size, props.lastModified)
      })
      pageToken = page.next === '' ? undefined : page.next
    } while (pageToken !== undefined)
  }

  protected override storeVerdict(call: RetriedCall, failure: RequestFailure): AttemptVerdict | undefined {
    // A listing or an upload finds no object missing: its 404 is the bucket's.
    const bucketMissing =
      failure.status === 404 &&
      (call.action === 'list' || call.action === 'put' || /bucket does not exist/i.test(failure.message))
    if (bucketMissing) return { kind: 'throw', error: this.#bucketMissing(failure) }
    // google-auth-library fails before any request when it finds no credentials.
    if (failure.status === undefined && /credentials|access token/i.test(failure.message)) {
      return {
        kind: 'throw',
        error: new StorageError(
          `Could not ${call.action} ${call.path}: no usable Google Cloud credentials (${failure.message}).`,
          { path: call.path, cause: sanitizedCause(SERVICE, failure), hint: CREDENTIAL_HINT },
        ),
      }
    }
    return undefined
  }

  protected override failureOf(err: unknown): RequestFailure {
    const e = err as {
      code?: unknown
      name?: unknown
      message?: unknown
      errors?: readonly { reason?: unknown }[]
      response?: { headers?: Record<string, unknown> }
    } | null
    const status = typeof e?.code === 'number' ? e.code : undefined
    const reason = e?.errors?.[0]?.reason
    const code =
      typeof reason === 'string'
        ? reason
        : typeof e?.code === 'string'
          ? e.code
          : typeof e?.name === 'string' && e.name !== 'Error'
            ? e.name
            : undefined
    const requestId = e?.response?.headers?.['x-guploader-uploadid']
    return Object.freeze({
      status,
      code,
      message: firstLine(e?.message, this.settings.secrets),
      requestId: typeof requestId === 'string' ? requestId : undefined,
    })
  }

  /** One upload attempt; `ifGenerationMatch: 0` makes it a put-if-absent. */
  #upload(file: File, data: Uint8Array, ifNotExists: boolean, signal: AbortSignal): Promise<ObjectMetadata> {
    return new Promise<ObjectMetadata>((resolve, reject) => {
      if (signal.aborted) {
        reject(signal.reason)
        return
      }
      const stream = file.createWriteStream({
        resumable: false,
        // The service checks the CRC32C the upload carries: a body damaged on the way is refused.
        validation: 'crc32c',
        ...(ifNotExists ? { preconditionOpts: { ifGenerationMatch: 0 } } : {}),
      })
      const onAbort = () => {
        stream.destroy()
        reject(signal.reason)
      }
      signal.addEventListener('abort', onAbort, { once: true })
      stream.once('error', (err) => {
        signal.removeEventListener('abort', onAbort)
        reject(err)
      })
      stream.once('finish', () => {
        signal.removeEventListener('abort', onAbort)
        resolve(file.metadata as ObjectMetadata)
      })
      stream.end(data)
    })
  }

  #bucketMissing(failure: RequestFailure): StorageError {
    return new StorageError(`The GCS bucket '${this.#bucketName}' does not exist (location ${this.root}).`, {
      path: this.root,
      cause: sanitizedCause(SERVICE, failure),
      hint: 'Create the bucket first, or fix the bucket name in the location.',
    })
  }
}

/** The size and update time of an object's metadata (the JSON API gives the size as a string). */
function propertiesOf(metadata: ObjectMetadata | undefined): ObjectProperties {
  const size = Number(metadata?.size ?? 0)
  const updated = metadata?.updated === undefined ? Number.NaN : Date.parse(metadata.updated)
  return {
    size: Number.isSafeInteger(size) ? size : 0,
    lastModified: Number.isFinite(updated) ? updated : 0,
  }
}

/**
 * Runs a call that takes no abort signal, and stops waiting for it when `signal` aborts: the
 * promise then rejects with the abort reason (the request runs on unobserved).
 */
function untilAborted<T>(signal: AbortSignal, call: () => Promise<T>): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    call().then(
      (value) => {
        signal.removeEventListener('abort', onAbort)
        resolve(value)
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort)
        reject(err)
      },
    )
  })
}
