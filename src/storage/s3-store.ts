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
import { redactLocation } from '../errors/redact-location.js'
import { compareUtf8 } from './keys.js'
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
import { firstLine, type RequestFailure, redact, sanitizedCause } from './request-failure.js'
import {
  type AttemptVerdict,
  backoffDelayMs,
  type RetriedCall,
  type RetryOptions,
  type RetryPolicy,
  resolveRetryPolicy,
} from './retry.js'

/** Options of {@link createS3Store}. Explicit options win over environment variables. */
export interface S3StoreOptions {
  /** Where the store is rooted: `s3://<bucket>/<prefix>` (`s3a://` and `s3n://` are accepted too). */
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
  const options = optionsWithLocation(
    locationOrOptions,
    maybeOptions,
    'createS3Store needs a location such as s3://<bucket>/<prefix>',
  )
  const location = parseS3Location(options.location)
  const env = options.env ?? process.env

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
  const pageSize = checkListPageSize(options.listPageSize, 1000) ?? 1000
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
    secrets: Object.freeze(
      [secretAccessKey, sessionToken, ...endpointPasswords(endpoint)].filter(
        (s): s is string => s !== undefined,
      ),
    ),
    conditionalPut: conditionalPut === 'enabled',
    pageSize,
  })
}

/**
 * Parses an S3 location.
 *
 * @param location - `s3://<bucket>/<prefix>`, or the same with `s3a://` or `s3n://`
 * @returns its parts
 * @throws {InvalidArgumentError} when the location has another form, no bucket, or a prefix with
 *   empty, `.` or `..` segments
 */
export function parseS3Location(location: string): S3Location {
  const m = /^s3[an]?:\/\/([^/?#]+)(?:\/([^?#]*))?$/i.exec(location)
  if (m === null) {
    throw new InvalidArgumentError(
      `Invalid S3 location '${redactLocation(location)}': use s3://<bucket>/<prefix>`,
      {
        argument: 'location',
      },
    )
  }
  const bucket = m[1]!
  const prefix = locationPrefix(m[2] ?? '', `Invalid S3 location '${redactLocation(location)}'`)
  return Object.freeze({ bucket, prefix, display: `s3://${bucket}${prefix === '' ? '' : `/${prefix}`}` })
}

/** The password of an endpoint URL (`http://user:password@host`) as written and decoded: SDK messages may echo it. */
function endpointPasswords(endpoint: string | undefined): string[] {
  if (endpoint === undefined) return []
  const password = new URL(endpoint).password
  return password === '' ? [] : [password, decodeURIComponent(password)]
}

function checkEndpoint(text: string | undefined): string | undefined {
  if (text === undefined) return undefined
  let url: URL
  try {
    url = new URL(text)
  } catch (err) {
    throw new InvalidArgumentError(
      `Invalid S3 endpoint '${redact(redactLocation(text), [])}': use an http(s) URL`,
      {
        argument: 'endpoint',
        cause: err,
      },
    )
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

/** The S3 calls behind the shared {@link RemoteStore} scaffolding. */
class S3Store extends RemoteStore {
  readonly #sdk: S3Sdk
  readonly #client: S3Client
  readonly #bucket: string
  readonly #conditionalPut: boolean
  readonly #pageSize: number
  /** Set once the bucket is known to exist, so that a HEAD 404 can only mean a missing object. */
  #bucketSeen = false

  constructor(parts: S3StoreParts) {
    super({
      root: parts.root,
      service: SERVICE,
      prefix: parts.prefix,
      policy: parts.policy,
      secrets: parts.secrets,
      credentialHint: CREDENTIAL_HINT,
    })
    this.#sdk = parts.sdk
    this.#client = parts.client
    this.#bucket = parts.bucket
    this.#conditionalPut = parts.conditionalPut
    this.#pageSize = parts.pageSize
  }

  override async head(key: string, opts?: StoreCallOptions): Promise<FileMeta> {
    try {
      const meta = await super.head(key, opts)
      this.#bucketSeen = true
      return meta
    } catch (err) {
      // HEAD answers carry no error code: a missing bucket looks like a missing key.
      if (err instanceof FileNotFoundError) await this.#checkBucket(opts?.signal)
      throw err
    }
  }

  protected override isMissingObject(failure: RequestFailure): boolean {
    return failure.status === 404 && failure.code === 'NoSuchKey'
  }

  protected override async readAttempt(
    objectKey: string,
    offset: number,
    count: number | undefined,
    signal: AbortSignal,
    path: string,
  ): Promise<Uint8Array> {
    const rangeHeader =
      offset === 0 && count === undefined
        ? undefined
        : `bytes=${offset}-${count === undefined ? '' : offset + count - 1}`
    const response = await this.#client.send(
      new this.#sdk.GetObjectCommand({ Bucket: this.#bucket, Key: objectKey, Range: rangeHeader }),
      { abortSignal: signal },
    )
    this.#bucketSeen = true
    return readFully(
      response.Body as AsyncIterable<Uint8Array> | undefined,
      response.ContentLength,
      signal,
      path,
    )
  }

  protected override async headAttempt(objectKey: string, signal: AbortSignal): Promise<ObjectProperties> {
    const response = await this.#client.send(
      new this.#sdk.HeadObjectCommand({ Bucket: this.#bucket, Key: objectKey }),
      { abortSignal: signal },
    )
    return { size: response.ContentLength ?? 0, lastModified: response.LastModified?.getTime() ?? 0 }
  }

  protected override async putObject(
    key: string,
    data: Uint8Array,
    ifNotExists: boolean,
    signal: AbortSignal | undefined,
  ): Promise<undefined> {
    const path = this.path(key)
    if (ifNotExists && !this.#conditionalPut) {
      throw new UnsupportedError(
        `Cannot put ${path} if absent (conditionalPut is 'disabled'): this S3 endpoint cannot guarantee put-if-absent; commits are refused rather than risk a lost write.`,
        { hint: "Use a service that honours If-None-Match (AWS S3 does) and set conditionalPut: 'enabled'." },
      )
    }
    const specific: FailureVerdict = (failure) => {
      if (!ifNotExists) return undefined
      if (failure.status === 412) return this.alreadyExistsVerdict(path, failure)
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
      this.#client.send(
        new this.#sdk.PutObjectCommand({
          Bucket: this.#bucket,
          Key: this.settings.prefix + key,
          Body: data,
          ContentLength: data.byteLength,
          IfNoneMatch: ifNotExists ? '*' : undefined,
        }),
        { abortSignal: attemptSignal },
      )
    for (let conflicts = 0; conflicts <= CONFLICT_RETRIES; conflicts++) {
      try {
        await this.run('put', path, signal, specific, attempt, ifNotExists ? 'conditional' : 'plain')
        this.#bucketSeen = true
        return undefined
      } catch (err) {
        if (!(err instanceof ConditionalRequestConflict)) throw err
      }
      if (conflicts < CONFLICT_RETRIES)
        await abortableSleep(backoffDelayMs(this.settings.policy, conflicts), signal)
    }
    // Every attempt was refused without effect, so an object there now was written by another
    // writer: this put lost. With no object, the key stayed contended for too long.
    try {
      await this.head(key, { signal })
    } catch (err) {
      if (!(err instanceof FileNotFoundError)) throw err
      throw new StorageError(
        `Could not put ${path} if absent: other conditional writes of the key kept it busy through ${CONFLICT_RETRIES + 1} attempts (409 ConditionalRequestConflict)`,
        { path, retryable: true, hint: 'Retry the write.' },
      )
    }
    throw new FileAlreadyExistsError(path)
  }

  protected override async deleteAttempt(objectKey: string, signal: AbortSignal): Promise<void> {
    try {
      await this.#client.send(new this.#sdk.DeleteObjectCommand({ Bucket: this.#bucket, Key: objectKey }), {
        abortSignal: signal,
      })
    } catch (err) {
      // Some S3-compatible services answer 404 for a missing key; deleting it still succeeds.
      if (statusOf(err) !== 404 || (err as { name?: unknown }).name !== 'NoSuchKey') throw err
    }
  }

  /**
   * Pages of a listing. Pages advance with StartAfter rather than continuation tokens: it is as
   * standard, and it skips a whole common prefix in one step.
   */
  protected override async *pages(
    dirKey: string,
    delimited: boolean,
    from: string | undefined,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<FileMeta[]> {
    const prefix = this.settings.prefix + dirKey
    // StartAfter is exclusive: starting after a proper prefix of `from` keeps `from` itself.
    let after =
      from === undefined || from === dirKey
        ? undefined
        : this.settings.prefix + from.slice(0, -lastCharLength(from))
    for (;;) {
      const response: ListObjectsV2CommandOutput = await this.run(
        'list',
        this.path(dirKey),
        signal,
        undefined,
        (attemptSignal) =>
          this.#client.send(
            new this.#sdk.ListObjectsV2Command({
              Bucket: this.#bucket,
              Prefix: prefix,
              Delimiter: delimited ? '/' : undefined,
              StartAfter: after,
              MaxKeys: this.#pageSize,
            }),
            { abortSignal: attemptSignal },
          ),
      )
      this.#bucketSeen = true
      const contents = response.Contents ?? []
      yield contents.flatMap((object) =>
        this.listed(object.Key ?? '', object.Size ?? 0, object.LastModified?.getTime() ?? 0),
      )
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
          `Could not list ${this.path(dirKey)}: the service returned a truncated page that does not advance`,
          {
            path: this.path(dirKey),
          },
        )
      }
      after = next
    }
  }

  protected override storeVerdict(call: RetriedCall, failure: RequestFailure): AttemptVerdict | undefined {
    if (failure.code === 'NoSuchBucket') {
      return { kind: 'throw', error: this.#bucketMissing(failure) }
    }
    if (failure.code === 'CredentialsProviderError') {
      return {
        kind: 'throw',
        error: new StorageError(
          `Could not ${call.action} ${call.path}: no S3 credentials were found (${failure.message}).`,
          {
            path: call.path,
            cause: sanitizedCause(SERVICE, failure),
            hint: CREDENTIAL_HINT,
          },
        ),
      }
    }
    return undefined
  }

  protected override failureOf(err: unknown): RequestFailure {
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
      message: firstLine(e?.message, this.settings.secrets),
      requestId: typeof requestId === 'string' ? requestId : undefined,
    })
  }

  async #checkBucket(signal: AbortSignal | undefined): Promise<void> {
    if (this.#bucketSeen) return
    const exists = await this.run(
      'check the bucket of',
      this.root,
      signal,
      undefined,
      async (attemptSignal) => {
        try {
          await this.#client.send(new this.#sdk.HeadBucketCommand({ Bucket: this.#bucket }), {
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

  #bucketMissing(failure: RequestFailure): StorageError {
    return new StorageError(`The S3 bucket '${this.#bucket}' does not exist (location ${this.root}).`, {
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
