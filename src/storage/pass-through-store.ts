/**
 * The base of a store wrapper: every call goes to the wrapped store. A wrapper spreads it and
 * replaces the calls it watches, e.g. `{ ...passThroughStore(inner), put: ... }`.
 */
import type { ObjectStore } from './object-store.js'

/**
 * A store whose every call goes to `inner`; it has `rootUri`, `listPrefix`, `localPath` and
 * `listTemporaryFiles` exactly when `inner` has.
 *
 * @param inner - the wrapped store
 * @returns the delegating store
 */
export function passThroughStore(inner: ObjectStore): ObjectStore {
  const store: { -readonly [K in keyof ObjectStore]: ObjectStore[K] } = {
    root: inner.root,
    read: (key, range, opts) => inner.read(key, range, opts),
    listFrom: (from, opts) => inner.listFrom(from, opts),
    listRecursive: (prefix, opts) => inner.listRecursive(prefix, opts),
    put: (key, data, opts) => inner.put(key, data, opts),
    head: (key, opts) => inner.head(key, opts),
    delete: (key, opts) => inner.delete(key, opts),
  }
  if (inner.rootUri !== undefined) store.rootUri = inner.rootUri
  if (inner.listingReadsWholeDirectory !== undefined) {
    store.listingReadsWholeDirectory = inner.listingReadsWholeDirectory
  }
  if (inner.listPrefix !== undefined) {
    const listPrefix = inner.listPrefix.bind(inner)
    store.listPrefix = (prefix, opts) => listPrefix(prefix, opts)
  }
  if (inner.localPath !== undefined) {
    const localPath = inner.localPath.bind(inner)
    store.localPath = (key) => localPath(key)
  }
  if (inner.listTemporaryFiles !== undefined) {
    const listTemporaryFiles = inner.listTemporaryFiles.bind(inner)
    store.listTemporaryFiles = (opts) => listTemporaryFiles(opts)
  }
  return store
}
