/**
 * A store wrapper that adds a fixed latency to every request, as an object store reached over a
 * network does, and counts the requests. Benchmarks put it around the local store to measure
 * what a table costs where each request takes tens of milliseconds; tests can use it to see how
 * many requests an operation makes.
 *
 * A request is one call, and for a listing one page of results: a listing of 2,500 keys with
 * pages of 1,000 is three requests, as on S3 or Azure. Half of the latency is spent before the
 * call reaches the wrapped store and half after it returns, so that what other clients see of a
 * put lands between the two, as with a real round trip. Only the requests pay it: bytes move at
 * the wrapped store's speed, and files the data plane reads in place through `localPath` pay only
 * for the `head` that precedes such a read.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { InvalidArgumentError } from '../errors/index.js'
import type { StoreMethod } from './faulty-store.js'
import type { ByteRange, FileMeta, ObjectStore, PutOptions, StoreCallOptions } from './object-store.js'
import { passThroughStore } from './pass-through-store.js'

/** Options of {@link createDelayStore}. */
export interface DelayStoreOptions {
  /** Milliseconds every request takes on top of the wrapped store's own time (0 or more). */
  readonly latencyMs: number
  /** Keys per listing page; every page is one request (default 1,000, S3's page size). */
  readonly listPageSize?: number | undefined
  /**
   * How a wait is spent (default a timer). Tests pass a function that records the waits instead
   * of taking them.
   */
  readonly wait?: ((ms: number, signal: AbortSignal | undefined) => Promise<void>) | undefined
}

/**
 * Requests made through a {@link DelayStore}, per method; a listing counts one per page, and a
 * prefix listing (`listPrefix`) counts as a `listFrom`.
 */
export type DelayStoreRequests = Readonly<Record<StoreMethod | 'listTemporaryFiles', number>>

/** An {@link ObjectStore} whose every request takes an added latency. */
export interface DelayStore extends ObjectStore {
  /** The wrapped store. */
  readonly inner: ObjectStore
  /** The added latency of one request, ms. */
  readonly latencyMs: number
  /** A snapshot of the request counters. */
  readonly requests: DelayStoreRequests
  /** Sets every request counter back to zero. */
  resetRequests(): void
}

/**
 * Wraps `inner` in a store whose requests each take `latencyMs` more. The wrapper has
 * `listPrefix`, `localPath` and `listTemporaryFiles` exactly when `inner` has.
 *
 * ### Example
 * ```ts
 * // A local table that behaves like one in an object store 20 ms away.
 * const store = createDelayStore(createLocalStore('/data/t'), { latencyMs: 20 })
 * const table = await DeltaTable.open('/data/t', { storage: store })
 * ```
 *
 * @param inner - the store doing the work
 * @param options - the latency and the listing page size
 * @returns the wrapper
 * @throws {InvalidArgumentError} when the latency is negative or not finite, or the page size is
 *   not a positive integer
 */
export function createDelayStore(inner: ObjectStore, options: DelayStoreOptions): DelayStore {
  const latencyMs = options?.latencyMs
  if (typeof latencyMs !== 'number' || !Number.isFinite(latencyMs) || latencyMs < 0) {
    throw new InvalidArgumentError(`Invalid store latency ${String(latencyMs)}: use a number of ms >= 0`, {
      argument: 'latencyMs',
    })
  }
  const pageSize = options.listPageSize ?? 1_000
  if (!Number.isSafeInteger(pageSize) || pageSize < 1) {
    throw new InvalidArgumentError(`Invalid listing page size ${String(pageSize)}: use an integer >= 1`, {
      argument: 'listPageSize',
    })
  }
  const wait = options.wait ?? ((ms, signal) => sleep(ms, undefined, signal === undefined ? {} : { signal }))
  const half = latencyMs / 2
  let counts = zeroCounts()

  /** Runs one request: half the latency, the call, the other half (also after a failure). */
  async function request<T>(
    method: keyof typeof counts,
    signal: AbortSignal | undefined,
    call: () => Promise<T>,
  ): Promise<T> {
    counts[method]++
    if (half > 0) await wait(half, signal)
    try {
      return await call()
    } finally {
      if (half > 0) await wait(half, signal)
    }
  }

  /** A listing fetched page by page, each page one request, as far as the caller iterates. */
  async function* paged(
    method: 'listFrom' | 'listRecursive' | 'listTemporaryFiles',
    signal: AbortSignal | undefined,
    source: () => AsyncIterable<FileMeta>,
  ): AsyncGenerator<FileMeta> {
    const it = source()[Symbol.asyncIterator]()
    // The first entry of the next page, read ahead so that a page knows whether it is the last
    // one, as a real listing's continuation token says.
    let ahead: IteratorResult<FileMeta> | undefined
    let done = false
    try {
      while (!done) {
        const page = await request(method, signal, async () => {
          const entries: FileMeta[] = []
          let next = ahead ?? (await it.next())
          while (next.done !== true && entries.length < pageSize) {
            entries.push(next.value)
            next = await it.next()
          }
          ahead = next
          done = next.done === true
          return entries
        })
        yield* page
      }
    } finally {
      if (!done) await it.return?.()
    }
  }

  const base = passThroughStore(inner)
  const store: DelayStore = {
    ...base,
    inner,
    latencyMs,
    get requests(): DelayStoreRequests {
      return Object.freeze({ ...counts })
    },
    resetRequests() {
      counts = zeroCounts()
    },
    read: (key: string, range?: ByteRange, opts?: StoreCallOptions) =>
      request('read', opts?.signal, () => inner.read(key, range, opts)),
    head: (key: string, opts?: StoreCallOptions) =>
      request('head', opts?.signal, () => inner.head(key, opts)),
    put: (key: string, data: Uint8Array, opts?: PutOptions) =>
      request('put', opts?.signal, () => inner.put(key, data, opts)),
    delete: (key: string, opts?: StoreCallOptions) =>
      request('delete', opts?.signal, () => inner.delete(key, opts)),
    listFrom: (from: string, opts?: StoreCallOptions) =>
      paged('listFrom', opts?.signal, () => inner.listFrom(from, opts)),
    listRecursive: (prefix: string, opts?: StoreCallOptions) =>
      paged('listRecursive', opts?.signal, () => inner.listRecursive(prefix, opts)),
  }
  if (inner.listPrefix !== undefined) {
    const listPrefix = inner.listPrefix.bind(inner)
    // Counted with the listings of a directory, of which it is the bounded form.
    store.listPrefix = (prefix: string, opts?: StoreCallOptions) =>
      paged('listFrom', opts?.signal, () => listPrefix(prefix, opts))
  }
  if (inner.listTemporaryFiles !== undefined) {
    const listTemporaryFiles = inner.listTemporaryFiles.bind(inner)
    store.listTemporaryFiles = (opts?: StoreCallOptions) =>
      paged('listTemporaryFiles', opts?.signal, () => listTemporaryFiles(opts))
  }
  return store
}

function zeroCounts(): Record<StoreMethod | 'listTemporaryFiles', number> {
  return { read: 0, head: 0, put: 0, delete: 0, listFrom: 0, listRecursive: 0, listTemporaryFiles: 0 }
}
