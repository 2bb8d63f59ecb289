/**
 * delta-rlc: a Delta Lake table engine for Node.js with row-level concurrency.
 *
 * The package root exports the public surface; see the README for a quickstart.
 */

export type {
  ColumnSpec,
  DataFileRef,
  DataPlane,
  Engine,
  FileMatches,
  ParquetHandler,
  ScanRequest,
} from './engine/index.js'
export { createDefaultEngine, type DefaultEngineOptions } from './engine-default/default-engine.js'
export * from './errors/index.js'
export type { Expression } from './expressions/ast.js'
export { parsePredicate } from './expressions/parse-predicate.js'
export type {
  Action,
  AddFile,
  CommitInfo,
  DeletionVectorDescriptor,
  DomainMetadata,
  Metadata,
  Protocol,
  RemoveFile,
  SetTransaction,
  Version,
} from './protocol/actions.js'
export { parseDdlSchema, type StructField, type StructType } from './protocol/schema.js'
export { type Row, type ScanOptions, TableScan } from './scan/table-scan.js'
export type { LoadSnapshotOptions } from './snapshot/load-snapshot.js'
export { Snapshot } from './snapshot/snapshot.js'
export type { CheckpointResult } from './snapshot/write-checkpoint.js'
export { createLocalStore, createMemoryStore, openStore } from './storage/index.js'
export type {
  ByteRange,
  FileMeta,
  ObjectStore,
  PutOptions,
  StoreCallOptions,
} from './storage/object-store.js'
export { DeltaTable, type HistoryEntry, type OpenOptions } from './table/delta-table.js'
export { createSnapshotView, type SnapshotView, type SnapshotViewOptions } from './table/sql-view.js'
