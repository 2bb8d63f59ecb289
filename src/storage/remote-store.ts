/**
 * What every SDK-backed store (Azure Blob Storage, S3) shares: argument checks, the retry loop
 * with its error mapping, listing order and bounds, and the handling of store options. A backend
 * supplies only its SDK calls and what its SDK's errors mean; the {@link ObjectStore} contract
 * itself is kept here, once.
 */
import { FileAlreadyExistsError, FileNotFoundError, InvalidArgumentError } from '../errors/index.js'
import { appendAll } from '../util/arrays.js'
import {
  checkData,
  checkDirectoryKey,
  checkKey,
  checkObjectKey,
  checkRange,
  dirOf,
  isObjectKey,
  sortFrom,
} from './keys.js'
import type { ByteRange, FileMeta, ObjectStore, PutOptions, StoreCallOptions } from './object-store.js'
import { commonVerdict, type RequestFailure, sanitizedCause, timeoutFailure } from './request-failure.js'
import {
  type AttemptVerdict,
  type RetriedCall,
  type RetryPolicy,
  runWithRetries,
  verdictForOwnError,
} from './retry.js'

/** A backend's reading of one failure, before the verdicts every store shares. */
export type FailureVerdict = (failure: RequestFailure) => AttemptVerdict | undefined

/** The size and time of an object, as a backend's head request reports them. */
export interface ObjectProperties {
  readonly size: number
  readonly lastModified: number
}

/** What a remote store is built from, besides its SDK client. */
export interface RemoteStoreSettings {
  /** The location the store is rooted at, without secrets. */
  readonly root: string
  /** The root as a URI naming what `root` leaves out (see {@link ObjectStore.rootUri}). */
  readonly rootUri?: string | undefined
  /** The service, as named in messages (`'S3'`). */
  readonly service: string
  /** The key prefix inside the bucket or container: `''` or ending in `/`. */
  readonly prefix: string
  readonly policy: RetryPolicy
  /** Literal secrets removed from every service message. */
  readonly secrets: readonly string[]
  /** Which settings hold the credentials, for the hint of a rejection. */
  readonly credentialHint: string
}

/**
 * The {@link ObjectStore} methods over a backend's SDK calls. Each public method checks its
 * arguments and the caller's signal, then runs the backend's attempt through {@link run}, which
 * retries transient failures and maps the rest to typed errors.
 */
export abstract class RemoteStore implements ObjectStore {
  readonly root: string
  // Private, so that neither util.inspect nor JSON.stringify reaches the secrets it lists.
  readonly #settings: RemoteStoreSettings
  // Declared, not defined: a store whose root names everything has none.
  declare readonly rootUri?: string

  protected constructor(settings: RemoteStoreSettings) {
    this.root = settings.root
    if (settings.rootUri !== undefined) this.rootUri = settings.rootUri
    this.#settings = settings
  }

  /** The store's settings, secrets included: for the backend's own calls only. */
  protected get settings(): RemoteStoreSettings {
    return this.#settings
  }

  /**
   * What `JSON.stringify` writes: the service and the root, never a credential.
   *
   * @returns `{ service, root }`
   */
  toJSON(): { readonly service: string; readonly root: string } {
    return { service: this.#settings.service, root: this.root }
  }

  /** What `util.inspect` and `console.log` show: the same as {@link toJSON}. */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `${this.constructor.name} { service: ${JSON.stringify(this.#settings.service)}, root: ${JSON.stringify(this.root)} }`
  }

  // === What a backend supplies ===

  /**
   * One attempt to read `count` bytes (all to the end when undefined) from `offset`.
   *
   * @param objectKey - the key inside the bucket or container (with the store's prefix)
   * @param path - the object's path, for messages
   */
  protected abstract readAttempt(
    objectKey: string,
    offset: number,
    count: number | undefined,
    signal: AbortSignal,
    path: string,
  ): Promise<Uint8Array>

  /** One attempt to fetch an object's properties; a missing object fails with a 404. */
  protected abstract headAttempt(objectKey: string, signal: AbortSignal): Promise<ObjectProperties>

  /** The put of {@link ObjectStore.put}, its arguments checked. */
  protected abstract putObject(
    key: string,
    data: Uint8Array,
    ifNotExists: boolean,
    signal: AbortSignal | undefined,
  ): Promise<FileMeta | undefined>

  /** One attempt to delete an object; deleting a missing one succeeds. */
  protected abstract deleteAttempt(objectKey: string, signal: AbortSignal): Promise<void>

  /**
   * Pages of a listing of the names that start with `dirKey` (a directory key, or for
   * {@link listByPrefix} any start of a key); `hierarchical` pages hold one directory level.
   * `from`, when given, is the lower bound of a {@link ObjectStore.listFrom}: a backend may use it
   * to skip what sorts before it.
   */
  protected abstract pages(
    dirKey: string,
    hierarchical: boolean,
    from: string | undefined,
    signal: AbortSignal | undefined,
  ): AsyncIterable<FileMeta[]>

  /** The SDK-neutral facts of an error thrown by the SDK (secrets removed). */
  protected abstract failureOf(err: unknown): RequestFailure

  /** Failures that mean the same whatever the call: a missing bucket, missing credentials. */
  protected abstract storeVerdict(call: RetriedCall, failure: RequestFailure): AttemptVerdict | undefined

  /** Whether a failed read says the object is missing (a head says so with any 404). */
  protected isMissingObject(failure: RequestFailure): boolean {
    return failure.status === 404
  }

  // === The ObjectStore contract ===

  async read(key: string, range?: ByteRange, opts?: StoreCallOptions): Promise<Uint8Array> {
    checkObjectKey(key)
    checkRange(range)
    opts?.signal?.throwIfAborted()
    // Neither service can express an empty range (Azure reads a zero count as "to the end"), so
    // an empty read only checks that the object exists.
    if (range?.length === 0) {
      await this.head(key, opts)
      return new Uint8Array(0)
    }
    const path = this.path(key)
    const offset = range?.offset ?? 0
    const count = range === undefined || range.length === Infinity ? undefined : range.length
    const missing: FailureVerdict = (failure) =>
      this.isMissingObject(failure) ? this.notFoundVerdict(path, failure) : undefined
    return this.run('read', path, opts?.signal, missing, async (signal) => {
      try {
        return await this.readAttempt(this.settings.prefix + key, offset, count, signal, path)
      } catch (err) {
        // 416: the range starts at or past the end of an existing object.
        if (this.failureOf(err).status === 416) return new Uint8Array(0)
        throw err
      }
    })
  }

  async head(key: string, opts?: StoreCallOptions): Promise<FileMeta> {
    checkObjectKey(key)
    opts?.signal?.throwIfAborted()
    const path = this.path(key)
    const props = await this.run(
      'head',
      path,
      opts?.signal,
      (failure) => (failure.status === 404 ? this.notFoundVerdict(path, failure) : undefined),
      (signal) => this.headAttempt(this.settings.prefix + key, signal),
    )
    return Object.freeze({ key, size: props.size, lastModified: props.lastModified })
  }

  async put(key: string, data: Uint8Array, opts?: PutOptions): Promise<FileMeta | undefined> {
    checkObjectKey(key)
    checkData(data)
    opts?.signal?.throwIfAborted()
    return this.putObject(key, data, opts?.ifNotExists === true, opts?.signal)
  }

  async delete(key: string, opts?: StoreCallOptions): Promise<void> {
    checkObjectKey(key)
    opts?.signal?.throwIfAborted()
    await this.run('delete', this.path(key), opts?.signal, undefined, (signal) =>
      this.deleteAttempt(this.settings.prefix + key, signal),
    )
  }

  async *listFrom(from: string, opts?: StoreCallOptions): AsyncGenerator<FileMeta> {
    checkKey(from)
    yield* this.#listLevel(dirOf(from), from, opts?.signal)
  }

  async *listRecursive(prefix: string, opts?: StoreCallOptions): AsyncGenerator<FileMeta> {
    checkKey(prefix)
    checkDirectoryKey(prefix)
    const signal = opts?.signal
    signal?.throwIfAborted()
    for await (const page of this.pages(prefix, false, undefined, signal)) {
      for (const meta of page) {
        signal?.throwIfAborted()
        yield meta
      }
    }
  }

  // === For backends ===

  /**
   * The {@link ObjectStore.listPrefix} of a backend whose service selects names by prefix: the
   * prefix goes to the service, so the pages hold only the matching names of one level.
   */
  protected async *listByPrefix(prefix: string, opts?: StoreCallOptions): AsyncGenerator<FileMeta> {
    checkKey(prefix)
    yield* this.#listLevel(prefix, undefined, opts?.signal)
  }

  /**
   * One level of the names that start with `start`, from `from` on when given (else from
   * `start`), in UTF-8 order.
   */
  async *#listLevel(
    start: string,
    from: string | undefined,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<FileMeta> {
    signal?.throwIfAborted()
    // Services list in their own order (UTF-16 for some emulators); the contract's is UTF-8.
    const found: FileMeta[] = []
    for await (const page of this.pages(start, true, from, signal)) appendAll(found, page)
    for (const meta of sortFrom(found, from ?? start)) {
      signal?.throwIfAborted()
      yield meta
    }
  }

  /** The path of a key, for messages: `<root>/<key>`. */
  protected path(key: string): string {
    return `${this.root}/${key}`
  }

  /**
   * Runs one request with retries. A failure is judged, in order, as our own error, as a
   * store-wide failure ({@link storeVerdict}), by `specific`, then by the rules every store
   * shares (credentials rejected, transient, ambiguous conditional put).
   *
   * @param action - a verb phrase for messages (`'read'`)
   * @param path - the object or listing concerned
   * @param signal - the caller's signal
   * @param specific - the call's own cases (not found, already exists)
   * @param attempt - one attempt, given a signal that also fires on the attempt timeout
   * @param write - set for puts; `'conditional'` for puts with `ifNotExists`
   * @returns the result of the first successful attempt
   */
  protected run<T>(
    action: string,
    path: string,
    signal: AbortSignal | undefined,
    specific: FailureVerdict | undefined,
    attempt: (signal: AbortSignal) => Promise<T>,
    write?: 'plain' | 'conditional',
  ): Promise<T> {
    const { policy, service, credentialHint } = this.settings
    const call: RetriedCall = { action, path, service, write }
    return runWithRetries(policy, call, signal, attempt, (err, timedOut) => {
      const own = verdictForOwnError(err)
      if (own !== undefined) return own
      const failure = timedOut ? timeoutFailure(policy.attemptTimeoutMs) : this.failureOf(err)
      return (
        this.storeVerdict(call, failure) ??
        specific?.(failure) ??
        commonVerdict(call, failure, credentialHint)
      )
    })
  }

  /** A {@link FileNotFoundError} verdict for the object at `path`. */
  protected notFoundVerdict(path: string, failure: RequestFailure): AttemptVerdict {
    return {
      kind: 'throw',
      error: new FileNotFoundError(path, { cause: sanitizedCause(this.settings.service, failure) }),
    }
  }

  /** A {@link FileAlreadyExistsError} verdict for a put-if-absent that lost to `path`. */
  protected alreadyExistsVerdict(path: string, failure: RequestFailure): AttemptVerdict {
    return {
      kind: 'throw',
      error: new FileAlreadyExistsError(path, { cause: sanitizedCause(this.settings.service, failure) }),
    }
  }

  /**
   * The entry of a listed object, or none when its name is no usable key (names other tools
   * wrote that no key could address).
   *
   * @param name - the object's full name in the bucket or container
   */
  protected listed(name: string, size: number, lastModified: number): FileMeta[] {
    const key = name.slice(this.settings.prefix.length)
    if (!isObjectKey(key)) return []
    return [Object.freeze({ key, size, lastModified })]
  }
}

// === Options ===

/**
 * The options of a `createXStore(location, options)` or `createXStore(options)` call, with the
 * location in them.
 *
 * @param locationOrOptions - the first argument
 * @param maybeOptions - the second argument
 * @param missing - the message when no location is given
 * @returns the options with a string `location`
 * @throws {InvalidArgumentError} when no location is given
 */
export function optionsWithLocation<O extends { readonly location?: string | undefined }>(
  locationOrOptions: string | O,
  maybeOptions: O | undefined,
  missing: string,
): O & { readonly location: string } {
  const options: O =
    typeof locationOrOptions === 'string'
      ? ({ ...maybeOptions, location: locationOrOptions } as O)
      : locationOrOptions
  if (typeof options.location !== 'string') {
    throw new InvalidArgumentError(missing, { argument: 'location' })
  }
  return options as O & { readonly location: string }
}

/**
 * A setting with surrounding white space removed, or undefined when absent or blank.
 *
 * @param value - an option or environment variable
 * @returns the trimmed value, or undefined
 */
export function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim()
}

/**
 * The key prefix of a location's path: without leading or trailing `/`, checked like a key.
 *
 * @param raw - the path part of the location
 * @param invalid - the start of the message for a bad path (`Invalid S3 location '...'`)
 * @returns the prefix, `''` for the root
 * @throws {InvalidArgumentError} when the path has an empty, `.` or `..` segment
 */
export function locationPrefix(raw: string, invalid: string): string {
  const prefix = raw.replace(/^\/+|\/+$/g, '')
  if (prefix === '') return ''
  try {
    checkKey(prefix)
  } catch (err) {
    throw new InvalidArgumentError(`${invalid}: its path has an empty, '.' or '..' segment`, {
      argument: 'location',
      cause: err,
    })
  }
  return prefix
}

/**
 * Checks the `listPageSize` option.
 *
 * @param size - the option
 * @param max - the service's maximum
 * @returns the size, or undefined when not given
 * @throws {InvalidArgumentError} when it is not an integer from 1 to `max`
 */
export function checkListPageSize(size: number | undefined, max: number): number | undefined {
  if (size === undefined) return undefined
  if (!Number.isSafeInteger(size) || size < 1 || size > max) {
    throw new InvalidArgumentError(`Invalid listPageSize ${size}: use an integer from 1 to ${max}`, {
      argument: 'listPageSize',
    })
  }
  return size
}
