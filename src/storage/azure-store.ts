/**
 * The Azure Blob Storage backend (also Azurite, the local emulator).
 *
 * Put-if-absent is a single Put Blob with `If-None-Match: *`, which the service evaluates
 * atomically: of concurrent puts on one name exactly one succeeds, the others get 409
 * `BlobAlreadyExists` (or 412). A Put Blob is visible whole or not at all.
 *
 * The SDK's own retry policy is disabled (`maxTries: 1`): {@link runWithRetries} decides alone,
 * so that a conditional put whose response was lost is reported as ambiguous instead of being
 * sent again and answered "already exists".
 */
import { createRequire } from 'node:module'
import type {
  AnonymousCredential,
  BlobServiceClient,
  ContainerClient,
  RestError,
  StorageSharedKeyCredential,
} from '@azure/storage-blob'
import { InvalidArgumentError, StorageError } from '../errors/index.js'
import { redactLocation } from '../errors/redact-location.js'
import { appendAll } from '../util/arrays.js'
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
  type RetriedCall,
  type RetryOptions,
  type RetryPolicy,
  resolveRetryPolicy,
} from './retry.js'

/** A token credential (from `@azure/identity`, say), as the SDK accepts it. */
export type AzureTokenCredential = Exclude<
  BlobServiceClient['credential'],
  StorageSharedKeyCredential | AnonymousCredential
>

/** Options of {@link createAzureStore}. Explicit options win over environment variables. */
export interface AzureStoreOptions {
  /**
   * Where the store is rooted: `az://<container>/<prefix>`,
   * `abfss://<container>@<account>.dfs.core.windows.net/<prefix>` or
   * `https://<account>.blob.core.windows.net/<container>/<prefix>[?<sas>]`.
   */
  readonly location?: string | undefined
  /** Storage account name; also read from the location, the connection string or `AZURE_STORAGE_ACCOUNT`. */
  readonly account?: string | undefined
  /** Shared account key (base64). */
  readonly accountKey?: string | undefined
  /** A SAS token, with or without its leading `?`. */
  readonly sasToken?: string | undefined
  /** A storage connection string (AccountName, AccountKey or SharedAccessSignature, BlobEndpoint...). */
  readonly connectionString?: string | undefined
  /** A token credential such as `DefaultAzureCredential` from `@azure/identity`. */
  readonly credential?: AzureTokenCredential | undefined
  /**
   * The blob service URL, including the account path for Azurite
   * (`http://127.0.0.1:10000/devstoreaccount1`). Default: `https://<account>.blob.core.windows.net`.
   */
  readonly endpoint?: string | undefined
  /** Retry policy of every call. */
  readonly retry?: RetryOptions | undefined
  /** Maximum entries per listing request (the service default is 5000). */
  readonly listPageSize?: number | undefined
  /** The environment variables to read; `process.env` by default. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
}

/** A parsed Azure location. */
export interface AzureLocation {
  readonly container: string
  /** The key prefix, without leading or trailing `/`; `''` for the container root. */
  readonly prefix: string
  /** The account named by the location's host, if any. */
  readonly account: string | undefined
  /** The blob endpoint implied by the location's host, if any. */
  readonly endpoint: string | undefined
  /** A SAS token carried by an `https://` location's query, if any. */
  readonly sasToken: string | undefined
  /** The location without any query string: the store's `root`. */
  readonly display: string
}

const SERVICE = 'Azure Blob Storage'

type AzureSdk = typeof import('@azure/storage-blob')
let loadedSdk: AzureSdk | undefined

/**
 * The SDK, loaded on first use: it takes a noticeable share of a second to load, which processes
 * that never open an Azure location should not pay.
 */
function azureSdk(): AzureSdk {
  loadedSdk ??= createRequire(import.meta.url)('@azure/storage-blob') as AzureSdk
  return loadedSdk
}

/** The well-known account and key of the storage emulator (public, documented by Microsoft). */
const EMULATOR_ACCOUNT = 'devstoreaccount1'
const EMULATOR_KEY =
  'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='

const CREDENTIAL_HINT =
  'Check the account key, SAS token or connection string (options accountKey, sasToken, connectionString, or AZURE_STORAGE_KEY, AZURE_STORAGE_SAS_TOKEN, AZURE_STORAGE_CONNECTION_STRING) and that they grant access to this container.'

/**
 * Creates an Azure Blob Storage backend rooted at a container prefix.
 *
 * Credentials, first match wins:
 * 1. options `credential` (token), `connectionString`, `accountKey` (with the account), `sasToken`
 *    (or the query of an `https://` location);
 * 2. environment `AZURE_STORAGE_CONNECTION_STRING`, then `AZURE_STORAGE_KEY` (with the account),
 *    then `AZURE_STORAGE_SAS_TOKEN`.
 *
 * The account comes from options `account`, the location's host, the connection string or
 * `AZURE_STORAGE_ACCOUNT`; the endpoint from options `endpoint`, the location's host, the
 * connection string (`BlobEndpoint`, or `UseDevelopmentStorage=true` for Azurite on its default
 * port), else `https://<account>.blob.core.windows.net`.
 *
 * Behaviour: puts with `ifNotExists` use `If-None-Match: *`; 409 `BlobAlreadyExists` or 412 give
 * {@link FileAlreadyExistsError}. Timeouts, 408, 429, 5xx and connection failures are retried with
 * backoff (see {@link RetryOptions}), except a conditional put that may have landed, which fails
 * at once with an ambiguous {@link StorageError}. Listings skip the directory placeholders of
 * accounts with a hierarchical namespace. No secret appears in `root` or in any error.
 *
 * ### Examples
 * ```ts
 * const store = createAzureStore('az://tables/sales', { account: 'acme', accountKey: key })
 * const local = createAzureStore({
 *   location: 'az://tables/sales',
 *   connectionString: 'UseDevelopmentStorage=true',
 * })
 * ```
 *
 * @param location - the location (or put it in `options.location`)
 * @param options - credentials, endpoint, retry policy
 * @returns an {@link ObjectStore} whose `root` is the location without any query string
 * @throws {InvalidArgumentError} when the location is malformed, or no credentials or account
 *   can be found
 */
export function createAzureStore(location: string, options?: AzureStoreOptions): ObjectStore
export function createAzureStore(options: AzureStoreOptions): ObjectStore
export function createAzureStore(
  locationOrOptions: string | AzureStoreOptions,
  maybeOptions?: AzureStoreOptions,
): ObjectStore {
  const options = optionsWithLocation(
    locationOrOptions,
    maybeOptions,
    'createAzureStore needs a location such as az://<container>/<prefix>',
  )
  const location = parseAzureLocation(options.location)
  const access = resolveAccess(location, options, options.env ?? process.env)
  const pageSize = checkListPageSize(options.listPageSize, 5000)
  const policy = resolveRetryPolicy(options.retry)
  // Retries belong to runWithRetries; see the module comment.
  const pipeline = { retryOptions: { maxTries: 1 } }
  const { AnonymousCredential, BlobServiceClient, StorageSharedKeyCredential } = azureSdk()
  const service =
    access.auth.kind === 'key'
      ? new BlobServiceClient(
          access.endpoint,
          new StorageSharedKeyCredential(access.account ?? '', access.auth.key),
          pipeline,
        )
      : access.auth.kind === 'sas'
        ? new BlobServiceClient(
            `${access.endpoint}?${access.auth.token}`,
            new AnonymousCredential(),
            pipeline,
          )
        : new BlobServiceClient(access.endpoint, access.auth.credential, pipeline)
  return new AzureStore({
    root: location.display,
    // Spark writes absolute paths as abfss:// URIs with the account, which `az://` leaves out.
    rootUri:
      access.account === undefined
        ? undefined
        : `abfss://${location.container}@${access.account}.dfs.core.windows.net${location.prefix === '' ? '' : `/${location.prefix}`}`,
    container: service.getContainerClient(location.container),
    containerName: location.container,
    account: access.account,
    prefix: location.prefix === '' ? '' : `${location.prefix}/`,
    policy,
    secrets: access.secrets,
    pageSize,
  })
}

/**
 * Parses an Azure location (see {@link AzureStoreOptions.location}).
 *
 * @param location - the location
 * @returns its parts
 * @throws {InvalidArgumentError} when the location has another form, no container, or a prefix
 *   with empty, `.` or `..` segments
 */
export function parseAzureLocation(location: string): AzureLocation {
  const az = /^az:\/\/([^/?#]+)(?:\/([^?#]*))?$/i.exec(location)
  if (az !== null) {
    const container = az[1]!
    const prefix = normalizePrefix(az[2] ?? '', location)
    return freezeLocation({
      container,
      prefix,
      account: undefined,
      endpoint: undefined,
      sasToken: undefined,
      display: `az://${container}${prefix === '' ? '' : `/${prefix}`}`,
    })
  }
  const abfs = /^(abfss?|wasbs?):\/\/([^@/?#]+)@([^/?#]+)(?:\/([^?#]*))?$/i.exec(location)
  if (abfs !== null) {
    const [, scheme, container, host, rawPrefix] = abfs
    const account = accountOfHost(host!, location)
    const prefix = normalizePrefix(rawPrefix ?? '', location)
    return freezeLocation({
      container: container!,
      prefix,
      account: account.name,
      endpoint: `https://${account.name}.blob.${account.suffix}`,
      sasToken: undefined,
      display: `${scheme!.toLowerCase()}://${container}@${host}${prefix === '' ? '' : `/${prefix}`}`,
    })
  }
  const https = /^https:\/\/([^/?#]+)\/([^/?#]+)(?:\/([^?#]*))?(?:\?([^#]*))?$/i.exec(location)
  if (https !== null) {
    const [, host, container, rawPrefix, query] = https
    const account = accountOfHost(host!, location)
    let prefix: string
    try {
      prefix = normalizePrefix(decodeURIComponent(rawPrefix ?? ''), location)
    } catch (err) {
      if (err instanceof InvalidArgumentError) throw err
      throw new InvalidArgumentError(
        `Invalid Azure location '${redactLocation(location)}': bad percent-encoding`,
        {
          argument: 'location',
          cause: err,
        },
      )
    }
    return freezeLocation({
      container: decodeURIComponent(container!),
      prefix,
      account: account.name,
      endpoint: `https://${account.name}.blob.${account.suffix}`,
      sasToken: query === undefined || query === '' ? undefined : query,
      display: `https://${host}/${container}${rawPrefix ? `/${rawPrefix.replace(/^\/+|\/+$/g, '')}` : ''}`,
    })
  }
  throw new InvalidArgumentError(
    `Invalid Azure location '${redactLocation(location)}': use az://<container>/<prefix>, abfss://<container>@<account>.dfs.core.windows.net/<prefix> or https://<account>.blob.core.windows.net/<container>/<prefix>`,
    { argument: 'location' },
  )
}

// === Credentials ===

type Auth =
  | { readonly kind: 'key'; readonly key: string }
  | { readonly kind: 'sas'; readonly token: string }
  | { readonly kind: 'token'; readonly credential: AzureTokenCredential }

interface Access {
  readonly account: string | undefined
  readonly endpoint: string
  readonly auth: Auth
  readonly secrets: readonly string[]
}

interface ConnectionString {
  readonly account: string | undefined
  readonly accountKey: string | undefined
  readonly sasToken: string | undefined
  readonly endpoint: string | undefined
}

function resolveAccess(
  location: AzureLocation,
  options: AzureStoreOptions,
  env: Readonly<Record<string, string | undefined>>,
): Access {
  const optionConnection = nonEmpty(options.connectionString)
  const envConnection = nonEmpty(env.AZURE_STORAGE_CONNECTION_STRING)
  let connection: ConnectionString | undefined
  let auth: Auth | undefined
  const secrets: string[] = []
  const useConnection = (text: string, source: string) => {
    connection = parseConnectionString(text, source)
    secrets.push(text)
    auth =
      connection.accountKey !== undefined
        ? { kind: 'key', key: connection.accountKey }
        : { kind: 'sas', token: connection.sasToken! }
  }
  const sasOption = nonEmpty(options.sasToken) ?? location.sasToken
  if (options.credential !== undefined) auth = { kind: 'token', credential: options.credential }
  else if (optionConnection !== undefined) useConnection(optionConnection, 'the connectionString option')
  else if (nonEmpty(options.accountKey) !== undefined)
    auth = { kind: 'key', key: nonEmpty(options.accountKey)! }
  else if (sasOption !== undefined) auth = { kind: 'sas', token: sasOption.replace(/^\?/, '') }
  else if (envConnection !== undefined) useConnection(envConnection, 'AZURE_STORAGE_CONNECTION_STRING')
  else if (nonEmpty(env.AZURE_STORAGE_KEY) !== undefined)
    auth = { kind: 'key', key: nonEmpty(env.AZURE_STORAGE_KEY)! }
  else if (nonEmpty(env.AZURE_STORAGE_SAS_TOKEN) !== undefined) {
    auth = { kind: 'sas', token: nonEmpty(env.AZURE_STORAGE_SAS_TOKEN)!.replace(/^\?/, '') }
  }
  if (auth === undefined) {
    throw new InvalidArgumentError(
      `No Azure credentials for ${location.display}: pass accountKey, sasToken, connectionString or credential, or set AZURE_STORAGE_CONNECTION_STRING, AZURE_STORAGE_KEY (with AZURE_STORAGE_ACCOUNT) or AZURE_STORAGE_SAS_TOKEN.`,
      { argument: 'options' },
    )
  }
  if (auth.kind === 'key') secrets.push(auth.key)
  if (auth.kind === 'sas') appendAll(secrets, [auth.token, ...sasSignatures(auth.token)])

  const account =
    nonEmpty(options.account) ??
    location.account ??
    connection?.account ??
    nonEmpty(env.AZURE_STORAGE_ACCOUNT)
  if (
    options.account !== undefined &&
    location.account !== undefined &&
    options.account !== location.account
  ) {
    throw new InvalidArgumentError(
      `The account option '${options.account}' contradicts the account '${location.account}' of ${location.display}`,
      { argument: 'account' },
    )
  }
  if (auth.kind === 'key' && account === undefined) {
    throw new InvalidArgumentError(
      `An account key was given for ${location.display} but no account name: pass the account option or set AZURE_STORAGE_ACCOUNT.`,
      { argument: 'account' },
    )
  }
  const endpointText =
    nonEmpty(options.endpoint) ??
    location.endpoint ??
    connection?.endpoint ??
    (account === undefined ? undefined : `https://${account}.blob.core.windows.net`)
  if (endpointText === undefined) {
    throw new InvalidArgumentError(
      `No Azure storage account for ${location.display}: pass the account or endpoint option, or set AZURE_STORAGE_ACCOUNT.`,
      { argument: 'account' },
    )
  }
  return Object.freeze({
    account,
    endpoint: checkEndpoint(endpointText),
    auth,
    secrets: Object.freeze(secrets),
  })
}

/**
 * Parses `Key=Value;...` connection strings. Messages never quote the string: it holds a secret.
 */
function parseConnectionString(text: string, source: string): ConnectionString {
  const fields = new Map<string, string>()
  for (const part of text.split(';')) {
    const eq = part.indexOf('=')
    if (part.trim() === '') continue
    if (eq <= 0) {
      throw new InvalidArgumentError(
        `The Azure connection string from ${source} is malformed: expected Key=Value pairs separated by ';'`,
        {
          argument: 'connectionString',
        },
      )
    }
    fields.set(part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).trim())
  }
  if (fields.get('usedevelopmentstorage')?.toLowerCase() === 'true') {
    const proxy = fields.get('developmentstorageproxyuri')?.replace(/\/+$/, '') ?? 'http://127.0.0.1'
    return {
      account: EMULATOR_ACCOUNT,
      accountKey: EMULATOR_KEY,
      sasToken: undefined,
      endpoint: `${proxy}:10000/${EMULATOR_ACCOUNT}`,
    }
  }
  const account = fields.get('accountname') || undefined
  const accountKey = fields.get('accountkey') || undefined
  const sasToken = fields.get('sharedaccesssignature')?.replace(/^\?/, '') || undefined
  if (accountKey === undefined && sasToken === undefined) {
    throw new InvalidArgumentError(
      `The Azure connection string from ${source} has neither AccountKey nor SharedAccessSignature`,
      { argument: 'connectionString' },
    )
  }
  let endpoint = fields.get('blobendpoint') || undefined
  if (endpoint === undefined && account !== undefined) {
    const protocol = fields.get('defaultendpointsprotocol') || 'https'
    const suffix = fields.get('endpointsuffix') || 'core.windows.net'
    endpoint = `${protocol}://${account}.blob.${suffix}`
  }
  return { account, accountKey, sasToken, endpoint }
}

function sasSignatures(token: string): string[] {
  const out: string[] = []
  for (const part of token.split('&')) {
    const [name, value] = part.split('=', 2)
    if (name?.toLowerCase() === 'sig' && value) out.push(value, safeDecode(value))
  }
  return out
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value)
  } catch {
    return value
  }
}

function checkEndpoint(text: string): string {
  let url: URL
  try {
    url = new URL(text)
  } catch (err) {
    throw new InvalidArgumentError(
      `Invalid Azure endpoint '${redact(redactLocation(text), [])}': use an http(s) URL`,
      {
        argument: 'endpoint',
        cause: err,
      },
    )
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.search !== '') {
    throw new InvalidArgumentError(
      `Invalid Azure endpoint '${url.origin}${url.pathname}': use an http(s) URL without a query (pass a SAS with sasToken)`,
      { argument: 'endpoint' },
    )
  }
  return text.replace(/\/+$/, '')
}

function accountOfHost(host: string, location: string): { name: string; suffix: string } {
  const m = /^([a-z0-9]+)\.(?:dfs|blob)\.(.+)$/i.exec(host)
  if (m === null) {
    throw new InvalidArgumentError(
      `Invalid Azure location '${redactLocation(location)}': the host must be <account>.blob.<suffix> or <account>.dfs.<suffix>`,
      { argument: 'location' },
    )
  }
  return { name: m[1]!.toLowerCase(), suffix: m[2]!.toLowerCase() }
}

function normalizePrefix(raw: string, location: string): string {
  return locationPrefix(raw, `Invalid Azure location '${redactLocation(location)}'`)
}

function freezeLocation(location: AzureLocation): AzureLocation {
  return Object.freeze(location)
}

// === The store ===

interface AzureStoreParts {
  readonly root: string
  readonly rootUri: string | undefined
  readonly container: ContainerClient
  readonly containerName: string
  readonly account: string | undefined
  readonly prefix: string
  readonly policy: RetryPolicy
  readonly secrets: readonly string[]
  readonly pageSize: number | undefined
}

interface BlobListItem {
  readonly name: string
  readonly properties: { readonly contentLength?: number | undefined; readonly lastModified: Date }
  readonly metadata?: Record<string, string> | undefined
}

/** The Azure Blob Storage calls behind the shared {@link RemoteStore} scaffolding. */
class AzureStore extends RemoteStore {
  /**
   * A listing pages through the whole directory. The service's `startFrom` list option is not
   * sent: Azurite 3.35 does not implement it, so no test here could check what it returns. A
   * caller expecting one name heads it instead (one request, whatever the size of the directory),
   * and one expecting a block of names lists them by prefix ({@link listPrefix}).
   */
  readonly listingReadsWholeDirectory = true
  readonly #container: ContainerClient
  readonly #containerName: string
  readonly #account: string | undefined
  readonly #pageSize: number | undefined

  constructor(parts: AzureStoreParts) {
    super({
      root: parts.root,
      rootUri: parts.rootUri,
      service: SERVICE,
      prefix: parts.prefix,
      policy: parts.policy,
      secrets: parts.secrets,
      credentialHint: CREDENTIAL_HINT,
    })
    this.#container = parts.container
    this.#containerName = parts.containerName
    this.#account = parts.account
    this.#pageSize = parts.pageSize
  }

  /** The service selects the names by prefix (`listBlobsByHierarchy` with `prefix`). */
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
    const response = await this.#container
      .getBlobClient(objectKey)
      .download(offset, count, { abortSignal: signal, maxRetryRequests: 0 })
    return readFully(response.readableStreamBody, response.contentLength, signal, path)
  }

  protected override async headAttempt(objectKey: string, signal: AbortSignal): Promise<ObjectProperties> {
    const props = await this.#container.getBlobClient(objectKey).getProperties({ abortSignal: signal })
    return { size: props.contentLength ?? 0, lastModified: props.lastModified?.getTime() ?? 0 }
  }

  protected override async putObject(
    key: string,
    data: Uint8Array,
    ifNotExists: boolean,
    signal: AbortSignal | undefined,
  ): Promise<FileMeta | undefined> {
    const blob = this.#container.getBlockBlobClient(this.settings.prefix + key)
    const path = this.path(key)
    const exists: FailureVerdict = (failure) =>
      ifNotExists &&
      (failure.status === 412 || (failure.status === 409 && failure.code === 'BlobAlreadyExists'))
        ? this.alreadyExistsVerdict(path, failure)
        : undefined
    const response = await this.run(
      'put',
      path,
      signal,
      exists,
      (attemptSignal) =>
        blob.upload(data, data.byteLength, {
          abortSignal: attemptSignal,
          conditions: ifNotExists ? { ifNoneMatch: '*' } : undefined,
        }),
      ifNotExists ? 'conditional' : 'plain',
    )
    // The service's Last-Modified of the new blob, the one its properties report.
    const lastModified = response?.lastModified?.getTime()
    return lastModified === undefined
      ? undefined
      : Object.freeze({ key, size: data.byteLength, lastModified })
  }

  protected override async deleteAttempt(objectKey: string, signal: AbortSignal): Promise<void> {
    await this.#container.getBlobClient(objectKey).deleteIfExists({ abortSignal: signal })
  }

  /** Pages of a listing, each fetched with retries; hierarchical pages hold one directory level. */
  protected override async *pages(
    dirKey: string,
    hierarchical: boolean,
    _from: string | undefined,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<FileMeta[]> {
    const prefix = this.settings.prefix + dirKey
    const settings = { continuationToken: undefined as string | undefined, maxPageSize: this.#pageSize }
    do {
      const page = await this.run('list', this.path(dirKey), signal, undefined, async (attemptSignal) => {
        const options = { prefix, abortSignal: attemptSignal, includeMetadata: true }
        const result = hierarchical
          ? await this.#container.listBlobsByHierarchy('/', options).byPage(settings).next()
          : await this.#container.listBlobsFlat(options).byPage(settings).next()
        if (result.done) return { items: [] as BlobListItem[], next: undefined }
        return {
          items: result.value.segment.blobItems as BlobListItem[],
          next: result.value.continuationToken,
        }
      })
      yield page.items.flatMap((item) =>
        // Accounts with a hierarchical namespace list their directories as empty placeholder blobs.
        item.metadata?.hdi_isfolder === 'true'
          ? []
          : this.listed(
              item.name,
              item.properties.contentLength ?? 0,
              item.properties.lastModified.getTime(),
            ),
      )
      settings.continuationToken = page.next === '' ? undefined : page.next
    } while (settings.continuationToken !== undefined)
  }

  protected override storeVerdict(_call: RetriedCall, failure: RequestFailure): AttemptVerdict | undefined {
    return failure.code === 'ContainerNotFound'
      ? { kind: 'throw', error: this.#containerMissing(failure) }
      : undefined
  }

  protected override failureOf(err: unknown): RequestFailure {
    const secrets = this.settings.secrets
    if (isRestError(err)) {
      const detailCode = (err.details as { errorCode?: unknown } | undefined)?.errorCode
      return Object.freeze({
        status: err.statusCode,
        code: typeof detailCode === 'string' ? detailCode : err.code,
        message: firstLine(err.message, secrets),
        requestId: err.response?.headers.get('x-ms-request-id') ?? undefined,
      })
    }
    const e = err as { code?: unknown; name?: unknown; message?: unknown } | null
    return Object.freeze({
      status: undefined,
      code: typeof e?.code === 'string' ? e.code : typeof e?.name === 'string' ? e.name : undefined,
      message: firstLine(e?.message, secrets),
      requestId: undefined,
    })
  }

  #containerMissing(failure: RequestFailure): StorageError {
    const account = this.#account === undefined ? '' : ` in storage account '${this.#account}'`
    return new StorageError(
      `The Azure container '${this.#containerName}'${account} does not exist (location ${this.root}).`,
      {
        path: this.root,
        cause: sanitizedCause(SERVICE, failure),
        hint: 'Create the container first, or fix the container name in the location.',
      },
    )
  }
}

/**
 * Whether `err` is the SDK's RestError. Checked by name too: a second copy of the HTTP pipeline
 * package in an application's dependency tree would make `instanceof` miss.
 */
function isRestError(err: unknown): err is RestError {
  return err instanceof azureSdk().RestError || (err instanceof Error && err.name === 'RestError')
}
