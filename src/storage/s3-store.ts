/**
 * The Amazon S3 backend (and S3-compatible services).
 *
 * Put-if-absent is a PutObject with `If-None-Match: *`: 412 `PreconditionFailed` means the key
 * exists; 409 `ConditionalRequestConflict` means another conditional write of the key is in flight,
 * so the put is repeated a bounded number of times and, if the conflict persists, the key is
 * inspected to decide. A service that ignores `If-None-Match` would let two writers both
 * "win" one commit; for such services set `conditionalPut: 'disabled'` and commits are refused.
 *
 * The SDK's own retries are disabled (`maxAttempts: 1`) for the reason given in `retry.ts`.
 *
 * The test suite runs against s3rver with a guard that gives it S3's conditional-put semantics
 * (412 and 409), not against AWS S3 itself.
 */

import { createRequire } from 'node:module'
import { setTimeout as sleep } from 'node:timers/promises'
import type { ListObjectsV2CommandOutput, S3Client } from '@aws-sdk/client-s3'
import {
  FileAlreadyExistsError,
  FileNotFoundError,
  InvalidArgumentError,
  StorageError,
  UnsupportedError,
} from '../errors/index.js'
import { appendAll } from '../util/arrays.js'
import {
  checkData,
  checkDirectoryKey,
  checkKey,
  checkObjectKey,
  checkRange,
  compareUtf8,
  dirOf,
  isObjectKey,
  sortFrom,
} from './keys.js'
import type { ByteRange, FileMeta, ObjectStore, PutOptions, StoreCallOptions } from './object-store.js'
import { readFully } from './read-fully.js'
import {
  commonVerdict,
  firstLine,
  type RequestFailure,
  sanitizedCause,
  timeoutFailure,
} from './request-failure.js'
import {
  type AttemptVerdict,
  backoffDelayMs,
  type RetriedCall,
  type RetryOptions,
  type RetryPolicy,
  resolveRetryPolicy,
  runWithRetries,
  verdictForOwnError,
} from './retry.js'

/** Options of {@link createS3Store}. Explicit options win over environment variables. */
export interface S3StoreOptions {
  /** Where the store is rooted: `s3://<bucket>/<prefix>` (`s3a://` is accepted too). */
  readonly location?: string | undefined
  /** Region; else `AWS_REGION`, `AWS_DEFAULT_REGION`, else `us-east-1`. */
  readonly region?: string | undefined
  /** Service URL of an S3-compatible server; else `AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`, else AWS. */
  readonly endpoint?: string | undefined
  /**
   * Path-style addressing (`<endpoint>/<bucket>/<key>`); else `AWS_S3_FORCE_PATH_STYLE`
   * (`true`/`false`), else on exactly when a custom endpoint is set.
   */
  readonly forcePathStyle?: boolean | undefined
  /** Access key id; else `AWS_ACCESS_KEY_ID`, else the SDK's default provider chain. */
  readonly accessKeyId?: string | undefined
  /** Secret access key; else `AWS_SECRET_ACCESS_KEY`. */
  readonly secretAccessKey?: string | undefined
  /** Session token of temporary credentials; else `AWS_SESSION_TOKEN`. */
  readonly sessionToken?: string | undefined
  /**
   * `'enabled'` (default): puts with `ifNotExists` send `If-None-Match: *`. `'disabled'`: for
   * services that ignore that header, such puts throw {@link UnsupportedError}, so that no commit
   * can be lost to a silent overwrite.
   */
  readonly conditionalPut?: 'enabled' | 'disabled' | undefined
  /** Retry policy of every call. */
  readonly retry?: RetryOptions | undefined
  /** Maximum entries per listing request, 1 to 1000 (the service maximum, and default). */
  readonly listPageSize?: number | undefined
  /** The environment variables to read; `process.env` by default. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
}

/** A parsed S3 location. */
export interface S3Location {
  readonly bucket: string
  /** The key prefix, without leading or trailing `/`; `''` for the bucket root. */
  readonly prefix: string
  /** `s3://<bucket>/<prefix>`: the store's `root`. */
  readonly display: string
}

const SERVICE = 'S3'

type S3Sdk = typeof import('@aws-sdk/client-s3')
let loadedSdk: S3Sdk | undefined

/**
 * The SDK, loaded on first use: processes that never open an S3 location should not pay for
 * loading it.
 */
function s3Sdk(): S3Sdk {
  loadedSdk ??= createRequire(import.meta.url)('@aws-sdk/client-s3') as S3Sdk
  return loadedSdk
}

/** Repeats of a conditional put answered 409 ConditionalRequestConflict before deciding. */
const CONFLICT_RETRIES = 8

const CREDENTIAL_HINT =
  'Check the access key pair (options accessKeyId, secretAccessKey, sessionToken, or AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN) and that it grants access to this bucket.'

/**
 * Creates an S3 backend rooted at a bucket prefix.
 *
 * Settings, each from the option, else the environment variable, else the default:
 * - region: `region`, `AWS_REGION`, `AWS_DEFAULT_REGION`, `us-east-1` (redirects to the bucket's
 *   region are followed);
 * - endpoint: `endpoint`, `AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`, AWS itself;
 * - path style: `forcePathStyle`, `AWS_S3_FORCE_PATH_STYLE`, on when a custom endpoint is set;
 * - credentials: `accessKeyId` + `secretAccessKey` (+ `sessionToken`), `AWS_ACCESS_KEY_ID` +
 *   `AWS_SECRET_ACCESS_KEY` (+ `AWS_SESSION_TOKEN`), else the SDK's default chain (shared config
 *   files, SSO, web identity, instance metadata).
 *
 * Behaviour: see the module comment for put-if-absent and `conditionalPut`. Timeouts, 408, 429,
 * 5xx and connection failures are retried with backoff (see {@link RetryOptions}), except a
 * conditional put that may have landed, which fails at once with an ambiguous
 * {@link StorageError}. Listings page with `StartAfter`. No secret appears in `root` or in any
 * error.
 *
 * ### Examples
 * ```ts
 * const store = createS3Store('s3://lake/sales', { region: 'eu-west-1' })
 * const minio = createS3Store({
 *   location: 's3://lake/sales',
 *   endpoint: 'http://127.0.0.1:9000',
 *   accessKeyId: 'minio',
 *   secretAccessKey: secret,
 * })
 * ```
 *
 * @param location - the location (or put it in `options.location`)
 * @param options - region, endpoint, credentials, retry policy, conditional puts
 * @returns an {@link ObjectStore} whose `root` is `s3://<bucket>/<prefix>`
 * @throws {InvalidArgumentError} when the location or an option is malformed, or only half of an
 *   access key pair is given
 */
export function createS3Store(location: string, options?: S3StoreOptions): ObjectStore
export function createS3Store(options: S3StoreOptions): ObjectStore
export function createS3Store(
  locationOrOptions: string | S3StoreOptions,
  maybeOptions?: S3StoreOptions,
): ObjectStore {
  const options: S3StoreOptions =
    typeof locationOrOptions === 'string'
      ? { ...maybeOptions, location: locationOrOptions }
      : locationOrOptions
  if (typeof options.location !== 'string') {
    throw new InvalidArgumentError('createS3Store needs a location such as s3://<bucket>/<prefix>', {
      argument: 'location',
    })
  }
  const location = parseS3Location(options.location)
  const env = options.env ?? process.env
  const nonEmpty = (v: string | undefined) => (v === undefined || v.trim() === '' ? undefined : v.trim())

  const region =
    nonEmpty(options.region) ?? nonEmpty(env.AWS_REGION) ?? nonEmpty(env.AWS_DEFAULT_REGION) ?? 'us-east-1'
  const endpoint = checkEndpoint(
    nonEmpty(options.endpoint) ?? nonEmpty(env.AWS_ENDPOINT_URL_S3) ?? nonEmpty(env.AWS_ENDPOINT_URL),
  )
  const forcePathStyle =
    options.forcePathStyle ??
    parseBoolean(env.AWS_S3_FORCE_PATH_STYLE, 'AWS_S3_FORCE_PATH_STYLE') ??
    endpoint !== undefined

  const fromOptions = options.accessKeyId !== undefined || options.secretAccessKey !== undefined
  const accessKeyId = fromOptions ? nonEmpty(options.accessKeyId) : nonEmpty(env.AWS_ACCESS_KEY_ID)
  const secretAccessKey = fromOptions
    ? nonEmpty(options.secretAccessKey)
    : nonEmpty(env.AWS_SECRET_ACCESS_KEY)
  const sessionToken = fromOptions ? nonEmpty(options.sessionToken) : nonEmpty(env.AWS_SESSION_TOKEN)
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    const source = fromOptions
      ? 'the options accessKeyId and secretAccessKey'
      : 'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY'
    throw new InvalidArgumentError(`Only half of an S3 access key pair was given: set both ${source}.`, {
      argument: fromOptions ? 'accessKeyId' : 'env',
    })
  }
  const conditionalPut = options.conditionalPut ?? 'enabled'
  if (conditionalPut !== 'enabled' && conditionalPut !== 'disabled') {
    throw new InvalidArgumentError(
      `Invalid conditionalPut '${String(conditionalPut)}': use 'enabled' or 'disabled'`,
      {
        argument: 'conditionalPut',
      },
    )
  }
  const pageSize = options.listPageSize ?? 1000
  if (!Number.isSafeInteger(pageSize) || pageSize < 1 || pageSize > 1000) {
    throw new InvalidArgumentError(`Invalid listPageSize ${pageSize}: use an integer from 1 to 1000`, {
      argument: 'listPageSize',
    })
  }
  const sdk = s3Sdk()
  const client = new sdk.S3Client({
    region,
    endpoint,
    forcePathStyle,
    credentials:
      accessKeyId === undefined || secretAccessKey === undefined
        ? undefined
        : { accessKeyId, secretAccessKey, sessionToken },
    // Retries belong to runWithRetries; see the module comment of retry.ts.
    maxAttempts: 1,
    followRegionRedirects: true,
  })
  return new S3Store({
    root: location.display,
    sdk,
    client,
    bucket: location.bucket,
    prefix: location.prefix === '' ? '' : `${location.prefix}/`,
    policy: resolveRetryPolicy(options.retry),
    secrets: Object.freeze([secretAccessKey, sessionToken].filter((s): s is string => s !== undefined)),
    conditionalPut: conditionalPut === 'enabled',
    pageSize,
  })
}

/**
 * Parses an S3 location.
 *
 * @param location - `s3://<bucket>/<prefix>` or `s3a://<bucket>/<prefix>`
 * @returns its parts
 * @throws {InvalidArgumentError} when the location has another form, no bucket, or a prefix with
 *   empty, `.` or `..` segments
 */
export function parseS3Location(location: string): S3Location {
  const m = /^s3a?:\/\/([^/?#]+)(?:\/([^?#]*))?$/i.exec(location)
  if (m === null) {
    throw new InvalidArgumentError(`Invalid S3 location '${location}': use s3://<bucket>/<prefix>`, {
      argument: 'location',
    })
  }
  const bucket = m[1]!
  const prefix = (m[2] ?? '').replace(/^\/+|\/+$/g, '')
  if (prefix !== '') {
    try {
      checkKey(prefix)
    } catch (err) {
      throw new InvalidArgumentError(
        `Invalid S3 location '${location}': its path has an empty, '.' or '..' segment`,
        {
          argument: 'location',
          cause: err,
        },
      )
    }
  }
  return Object.freeze({ bucket, prefix, display: `s3://${bucket}${prefix === '' ? '' : `/${prefix}`}` })
}

function checkEndpoint(text: string | undefined): string | undefined {
  if (text === undefined) return undefined
  let url: URL
  try {
    url = new URL(text)
  } catch (err) {
    throw new InvalidArgumentError(`Invalid S3 endpoint '${text}': use an http(s) URL`, {
      argument: 'endpoint',
      cause: err,
    })
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new InvalidArgumentError(`Invalid S3 endpoint '${url.origin}': use an http(s) URL`, {
      argument: 'endpoint',
    })
  }
  return text.replace(/\/+$/, '')
}

function parseBoolean(text: string | undefined, name: string): boolean | undefined {
  if (text === undefined || text.trim() === '') return undefined
  const v = text.trim().toLowerCase()
  if (v === 'true' || v === '1') return true
  if (v === 'false' || v === '0') return false
  throw new InvalidArgumentError(`Invalid ${name} '${text}': use true or false`, { argument: name })
}

// === The store ===

interface S3StoreParts {
  readonly root: string
  readonly sdk: S3Sdk
  readonly client: S3Client
  readonly bucket: string
  readonly prefix: string
  readonly policy: RetryPolicy
  readonly secrets: readonly string[]
  readonly conditionalPut: boolean
  readonly pageSize: number
}

/** A 409 ConditionalRequestConflict: another conditional write of the key is in flight. */
class ConditionalRequestConflict extends StorageError {}

class S3Store implements ObjectStore {
  readonly root: string
  readonly #p: S3StoreParts
  /** Set once the bucket is known to exist, so that a HEAD 404 can only mean a missing object. */
  #bucketSeen = false

  constructor(parts: S3StoreParts) {
    this.root = parts.root
    this.#p = parts
  }

  async read(key: string, range?: ByteRange, opts?: StoreCallOptions): Promise<Uint8Array> {
    checkObjectKey(key)
    checkRange(range)
    opts?.signal?.throwIfAborted()
    // A Range header cannot express an empty range; an empty read only checks existence.
    if (range?.length === 0) {
      await this.head(key, opts)
      return new Uint8Array(0)
    }
    const path = this.#path(key)
    const wholeObject = range === undefined || (range.offset === 0 && range.length === Infinity)
    const rangeHeader =
      wholeObject || range === undefined
        ? undefined
        : `bytes=${range.offset}-${range.length === Infinity ? '' : range.offset + range.length - 1}`
    return this.#run('read', path, opts?.signal, this.#notFound(path), async (signal) => {
      try {
        const response = await this.#p.client.send(
          new this.#p.sdk.GetObjectCommand({
            Bucket: this.#p.bucket,
            Key: this.#p.prefix + key,
            Range: rangeHeader,
          }),
          { abortSignal: signal },
        )
        this.#bucketSeen = true
        return await readFully(
          response.Body as AsyncIterable<Uint8Array> | undefined,
          response.ContentLength,
          signal,
          path,
        )
      } catch (err) {
        // 416: the range starts at or past the end of an existing object.
        if (statusOf(err) === 416) return new Uint8Array(0)
        throw err
      }
    })
  }

  async head(key: string, opts?: StoreCallOptions): Promise<FileMeta> {
    checkObjectKey(key)
    const signal = opts?.signal
    signal?.throwIfAborted()
    const path = this.#path(key)
    const response = await this.#run(
      'head',
      path,
      signal,
      (failure) =>
        failure.status === 404
          ? { kind: 'throw', error: new FileNotFoundError(path, { cause: sanitizedCause(SERVICE, failure) }) }
          : undefined,
      (attemptSignal) =>
        this.#p.client.send(
          new this.#p.sdk.HeadObjectCommand({ Bucket: this.#p.bucket, Key: this.#p.prefix + key }),
          {
            abortSignal: attemptSignal,
          },
        ),
    ).catch(async (err: unknown) => {
      // HEAD answers carry no error code: a missing bucket looks like a missing key.
      if (err instanceof FileNotFoundError) await this.#checkBucket(signal)
      throw err
    })
    this.#bucketSeen = true
    return Object.freeze({
      key,
      size: response.ContentLength ?? 0,
      lastModified: response.LastModified?.getTime() ?? 0,
    })
  }

  async put(key: string, data: Uint8Array, opts?: PutOptions): Promise<void> {
    checkObjectKey(key)
    checkData(data)
    const signal = opts?.signal
    signal?.throwIfAborted()
    const path = this.#path(key)
    const ifNotExists = opts?.ifNotExists === true
    if (ifNotExists && !this.#p.conditionalPut) {
      throw new UnsupportedError(
        `Cannot put ${path} if absent (conditionalPut is 'disabled'): this S3 endpoint cannot guarantee put-if-absent; commits are refused rather than risk a lost write.`,
        { hint: "Use a service that honours If-None-Match (AWS S3 does) and set conditionalPut: 'enabled'." },
      )
    }
    const specific = (failure: RequestFailure): AttemptVerdict | undefined => {
      if (!ifNotExists) return undefined
      if (failure.status === 412) {
        return {
          kind: 'throw',
          error: new FileAlreadyExistsError(path, { cause: sanitizedCause(SERVICE, failure) }),
        }
      }
      if (failure.status === 409 && failure.code === 'ConditionalRequestConflict') {
        return {
          kind: 'throw',
          error: new ConditionalRequestConflict(`A conditional write of ${path} is in flight`, { path }),
        }
      }
      if (failure.status === 501) {
        return {
          kind: 'throw',
          error: new UnsupportedError(
            `Cannot put ${path} if absent: the S3 endpoint does not implement conditional puts (${failure.code ?? 'HTTP 501'}); commits are refused rather than risk a lost write.`,
            { cause: sanitizedCause(SERVICE, failure) },
          ),
        }
      }
      return undefined
    }
    const attempt = (attemptSignal: AbortSignal) =>
      this.#p.client.send(
        new this.#p.sdk.PutObjectCommand({
          Bucket: this.#p.bucket,
          Key: this.#p.prefix + key,
          Body: data,
          ContentLength: data.byteLength,
          IfNoneMatch: ifNotExists ? '*' : undefined,
        }),
        { abortSignal: attemptSignal },
      )
    for (let conflicts = 0; conflicts <= CONFLICT_RETRIES; conflicts++) {
      try {
        await this.#run('put', path, signal, specific, attempt, ifNotExists ? 'conditional' : 'plain')
        this.#bucketSeen = true
        return
      } catch (err) {
        if (!(err instanceof ConditionalRequestConflict)) throw err
      }
      if (conflicts < CONFLICT_RETRIES)
        await abortableSleep(backoffDelayMs(this.#p.policy, conflicts), signal)
    }
    // Every attempt was refused without effect, so an object there now was written by another
    // writer: this put lost. With no object, the key stayed contended for too long.
    try {
      await this.head(key, opts)
    } catch (err) {
      if (!(err instanceof FileNotFoundError)) throw err
      throw new StorageError(
        `Could not put ${path} if absent: other conditional writes of the key kept it busy through ${CONFLICT_RETRIES + 1} attempts (409 ConditionalRequestConflict)`,
        { path, retryable: true, hint: 'Retry the write.' },
      )
    }
    throw new FileAlreadyExistsError(path)
  }

  async delete(key: string, opts?: StoreCallOptions): Promise<void> {
    checkObjectKey(key)
    opts?.signal?.throwIfAborted()
    const path = this.#path(key)
    await this.#run('delete', path, opts?.signal, undefined, async (attemptSignal) => {
      try {
        await this.#p.client.send(
          new this.#p.sdk.DeleteObjectCommand({ Bucket: this.#p.bucket, Key: this.#p.prefix + key }),
          {
            abortSignal: attemptSignal,
          },
        )
      } catch (err) {
        // Some S3-compatible services answer 404 for a missing key; deleting it still succeeds.
        if (statusOf(err) !== 404 || (err as { name?: unknown }).name !== 'NoSuchKey') throw err
      }
    })
  }

  async *listFrom(from: string, opts?: StoreCallOptions): AsyncGenerator<FileMeta> {
    checkKey(from)
    const signal = opts?.signal
    signal?.throwIfAborted()
    const dirKey = dirOf(from)
    // StartAfter is exclusive: starting after a proper prefix of `from` keeps `from` itself.
    const startAfter = from === dirKey ? undefined : this.#p.prefix + from.slice(0, -lastCharLength(from))
    const found: FileMeta[] = []
    for await (const page of this.#pages(dirKey, true, startAfter, signal)) appendAll(found, page)
    for (const meta of sortFrom(found, from)) {
      signal?.throwIfAborted()
      yield meta
    }
  }

  async *listRecursive(prefix: string, opts?: StoreCallOptions): AsyncGenerator<FileMeta> {
    checkKey(prefix)
    checkDirectoryKey(prefix)
    const signal = opts?.signal
    signal?.throwIfAborted()
    for await (const page of this.#pages(prefix, false, undefined, signal)) {
      for (const meta of page) {
        signal?.throwIfAborted()
        yield meta
      }
    }
  }

  // === Helpers ===

  #path(key: string): string {
    return `${this.root}/${key}`
  }

  /**
   * Pages of a listing. Pages advance with StartAfter rather than continuation tokens: it is as
   * standard, and it skips a whole common prefix in one step.
   */
  async *#pages(
    dirKey: string,
    delimited: boolean,
    startAfter: string | undefined,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<FileMeta[]> {
    const prefix = this.#p.prefix + dirKey
    let after = startAfter
    for (;;) {
      const response: ListObjectsV2CommandOutput = await this.#run(
        'list',
        this.#path(dirKey),
        signal,
        undefined,
        (attemptSignal) =>
          this.#p.client.send(
            new this.#p.sdk.ListObjectsV2Command({
              Bucket: this.#p.bucket,
              Prefix: prefix,
              Delimiter: delimited ? '/' : undefined,
              StartAfter: after,
              MaxKeys: this.#p.pageSize,
            }),
            { abortSignal: attemptSignal },
          ),
      )
      this.#bucketSeen = true
      const contents = response.Contents ?? []
      yield contents.flatMap((object) => {
        const key = (object.Key ?? '').slice(this.#p.prefix.length)
        if (!isObjectKey(key)) return []
        return [
          Object.freeze({ key, size: object.Size ?? 0, lastModified: object.LastModified?.getTime() ?? 0 }),
        ]
      })
      if (response.IsTruncated !== true) return
      // Past every key under the last common prefix: U+10FFFF sorts after any character.
      const candidates = [
        contents.at(-1)?.Key,
        ...(response.CommonPrefixes ?? []).map((p) =>
          p.Prefix === undefined ? undefined : `${p.Prefix}\u{10FFFF}`,
        ),
      ].filter((k): k is string => k !== undefined)
      const next = candidates.sort(compareUtf8).at(-1)
      if (next === undefined || (after !== undefined && compareUtf8(next, after) <= 0)) {
        throw new StorageError(
          `Could not list ${this.#path(dirKey)}: the service returned a truncated page that does not advance`,
          {
            path: this.#path(dirKey),
          },
        )
      }
      after = next
    }
  }

  async #checkBucket(signal: AbortSignal | undefined): Promise<void> {
    if (this.#bucketSeen) return
    const exists = await this.#run(
      'check the bucket of',
      this.root,
      signal,
      undefined,
      async (attemptSignal) => {
        try {
          await this.#p.client.send(new this.#p.sdk.HeadBucketCommand({ Bucket: this.#p.bucket }), {
            abortSignal: attemptSignal,
          })
          return true
        } catch (err) {
          const status = statusOf(err)
          if (status === 404) return false
          // Without permission to check the bucket, assume it exists: the key alone is missing.
          if (status === 403) return true
          throw err
        }
      },
    )
    if (!exists) {
      throw this.#bucketMissing({ status: 404, code: 'NoSuchBucket', message: '', requestId: undefined })
    }
    this.#bucketSeen = true
  }

  #notFound(path: string): (failure: RequestFailure) => AttemptVerdict | undefined {
    return (failure) =>
      failure.status === 404 && failure.code === 'NoSuchKey'
        ? { kind: 'throw', error: new FileNotFoundError(path, { cause: sanitizedCause(SERVICE, failure) }) }
        : undefined
  }

  #run<T>(
    action: string,
    path: string,
    signal: AbortSignal | undefined,
    specific: ((failure: RequestFailure) => AttemptVerdict | undefined) | undefined,
    attempt: (signal: AbortSignal) => Promise<T>,
    write?: 'plain' | 'conditional',
  ): Promise<T> {
    const call: RetriedCall = { action, path, service: SERVICE, write }
    return runWithRetries(this.#p.policy, call, signal, attempt, (err, timedOut) => {
      const own = verdictForOwnError(err)
      if (own !== undefined) return own
      const failure = timedOut ? timeoutFailure(this.#p.policy.attemptTimeoutMs) : this.#failureOf(err)
      if (failure.code === 'NoSuchBucket') {
        return { kind: 'throw', error: this.#bucketMissing(failure) }
      }
      if (failure.code === 'CredentialsProviderError') {
        return {
          kind: 'throw',
          error: new StorageError(
            `Could not ${action} ${path}: no S3 credentials were found (${failure.message}).`,
            {
              path,
              cause: sanitizedCause(SERVICE, failure),
              hint: CREDENTIAL_HINT,
            },
          ),
        }
      }
      return specific?.(failure) ?? commonVerdict(call, failure, CREDENTIAL_HINT)
    })
  }

  #failureOf(err: unknown): RequestFailure {
    const e = err as {
      name?: unknown
      message?: unknown
      code?: unknown
      Code?: unknown
      $metadata?: { httpStatusCode?: unknown; requestId?: unknown }
    } | null
    const status = typeof e?.$metadata?.httpStatusCode === 'number' ? e.$metadata.httpStatusCode : undefined
    const name = typeof e?.name === 'string' ? e.name : undefined
    const code =
      status === undefined
        ? typeof e?.code === 'string'
          ? e.code
          : name
        : typeof e?.Code === 'string'
          ? e.Code
          : name
    const requestId = e?.$metadata?.requestId
    return Object.freeze({
      status,
      code,
      message: firstLine(e?.message, this.#p.secrets),
      requestId: typeof requestId === 'string' ? requestId : undefined,
    })
  }

  #bucketMissing(failure: RequestFailure): StorageError {
    return new StorageError(`The S3 bucket '${this.#p.bucket}' does not exist (location ${this.root}).`, {
      path: this.root,
      cause: sanitizedCause(SERVICE, failure),
      hint: 'Create the bucket first, or fix the bucket name in the location.',
    })
  }
}

function statusOf(err: unknown): number | undefined {
  const status = (err as { $metadata?: { httpStatusCode?: unknown } } | null)?.$metadata?.httpStatusCode
  return typeof status === 'number' ? status : undefined
}

function lastCharLength(text: string): number {
  const last = text.codePointAt(text.length - 1)
  // A trailing low surrogate belongs to a pair: remove both halves.
  return last !== undefined && last >= 0xdc00 && last <= 0xdfff && text.length >= 2 ? 2 : 1
}

async function abortableSleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  try {
    await sleep(ms, undefined, { signal })
  } catch (err) {
    signal?.throwIfAborted()
    throw err
  }
}
