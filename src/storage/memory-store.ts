/**
 * An in-process backend over a `Map`, with the semantics of the local store: atomic puts,
 * put-if-absent, one-level sorted listings (from a key, or of the names with a prefix). Bytes are
 * copied in and out, so neither the writer nor a reader can change a stored object through a
 * buffer it holds.
 */
import { FileAlreadyExistsError, FileNotFoundError } from '../errors/index.js'
import { checkData, checkDirectoryKey, checkKey, checkObjectKey, checkRange, dirOf } from './keys.js'
import type { ByteRange, FileMeta, ObjectStore, PutOptions, StoreCallOptions } from './object-store.js'

interface StoredObject {
  readonly data: Uint8Array
  readonly lastModified: number
}

/**
 * Creates an empty in-memory store. Its `lastModified` values come from `Date.now()` and never
 * decrease within one store, even if the system clock steps back.
 *
 * ### Examples
 * ```ts
 * const store = createMemoryStore('scratch')
 * await store.put('a/b.json', new TextEncoder().encode('{}'), { ifNotExists: true })
 * ```
 *
 * @param name - a label shown in `root` (`memory://<name>`) and in error messages
 * @returns a new, empty {@link ObjectStore}
 */
export function createMemoryStore(name = 'anonymous'): ObjectStore {
  return new MemoryStore(`memory://${name}`)
}

class MemoryStore implements ObjectStore {
  readonly root: string
  readonly #objects = new Map<string, StoredObject>()
  #clock = 0

  constructor(root: string) {
    this.root = root
  }

  async read(key: string, range?: ByteRange, opts?: StoreCallOptions): Promise<Uint8Array> {
    checkObjectKey(key)
    checkRange(range)
    opts?.signal?.throwIfAborted()
    const data = this.#get(key).data
    const start = Math.min(range?.offset ?? 0, data.byteLength)
    const end = range === undefined ? data.byteLength : Math.min(start + range.length, data.byteLength)
    return data.slice(start, end)
  }

  async head(key: string, opts?: StoreCallOptions): Promise<FileMeta> {
    checkObjectKey(key)
    opts?.signal?.throwIfAborted()
    return meta(key, this.#get(key))
  }

  async put(key: string, data: Uint8Array, opts?: PutOptions): Promise<FileMeta> {
    checkObjectKey(key)
    checkData(data)
    opts?.signal?.throwIfAborted()
    // No await between the existence check and the write: the check-and-set is atomic.
    if (opts?.ifNotExists && this.#objects.has(key)) throw new FileAlreadyExistsError(this.#path(key))
    this.#clock = Math.max(this.#clock, Date.now())
    this.#objects.set(key, Object.freeze({ data: data.slice(), lastModified: this.#clock }))
    return Object.freeze({ key, size: data.byteLength, lastModified: this.#clock })
  }

  async delete(key: string, opts?: StoreCallOptions): Promise<void> {
    checkObjectKey(key)
    opts?.signal?.throwIfAborted()
    this.#objects.delete(key)
  }

  async *listFrom(from: string, opts?: StoreCallOptions): AsyncGenerator<FileMeta> {
    checkKey(from)
    const fromBytes = Buffer.from(from, 'utf8')
    yield* this.#listDirectory(from, opts?.signal, (_key, bytes) => Buffer.compare(bytes, fromBytes) >= 0)
  }

  async *listPrefix(prefix: string, opts?: StoreCallOptions): AsyncGenerator<FileMeta> {
    checkKey(prefix)
    yield* this.#listDirectory(prefix, opts?.signal, (key) => key.startsWith(prefix))
  }

  async *listRecursive(prefix: string, opts?: StoreCallOptions): AsyncGenerator<FileMeta> {
    checkKey(prefix)
    checkDirectoryKey(prefix)
    const signal = opts?.signal
    signal?.throwIfAborted()
    // A snapshot taken up front, so that puts made while the caller iterates cannot disturb it.
    const found: FileMeta[] = []
    for (const [key, obj] of this.#objects) if (key.startsWith(prefix)) found.push(meta(key, obj))
    for (const m of found) {
      signal?.throwIfAborted()
      yield m
    }
  }

  /** The objects directly inside the directory of `key` that `keep` accepts, in UTF-8 order. */
  async *#listDirectory(
    key: string,
    signal: AbortSignal | undefined,
    keep: (key: string, bytes: Buffer) => boolean,
  ): AsyncGenerator<FileMeta> {
    signal?.throwIfAborted()
    const dirKey = dirOf(key)
    // compareUtf8 order, with each key encoded once instead of once per comparison.
    const found: { key: string; bytes: Buffer; meta: FileMeta }[] = []
    for (const [k, obj] of this.#objects) {
      if (!k.startsWith(dirKey) || k.indexOf('/', dirKey.length) >= 0) continue
      const bytes = Buffer.from(k, 'utf8')
      if (keep(k, bytes)) found.push({ key: k, bytes, meta: meta(k, obj) })
    }
    found.sort((a, b) => Buffer.compare(a.bytes, b.bytes))
    for (const entry of found) {
      signal?.throwIfAborted()
      yield entry.meta
    }
  }

  #get(key: string): StoredObject {
    const obj = this.#objects.get(key)
    if (obj === undefined) throw new FileNotFoundError(this.#path(key))
    return obj
  }

  #path(key: string): string {
    return `${this.root}/${key}`
  }
}

function meta(key: string, obj: StoredObject): FileMeta {
  return Object.freeze({ key, size: obj.data.byteLength, lastModified: obj.lastModified })
}
