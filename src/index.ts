/**
 * delta-rlc: a Delta Lake table engine for Node.js with row-level concurrency.
 *
 * The package root exports the public surface; see the README for a quickstart.
 */
export * from './errors/index.js'
export type {
  ByteRange,
  FileMeta,
  ObjectStore,
  PutOptions,
  StoreCallOptions,
} from './storage/object-store.js'
