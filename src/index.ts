/**
 * delta-rlc: a Delta Lake table engine for Node.js with row-level concurrency.
 *
 * The package root exports the public surface; see the README for a quickstart.
 */

export type { ArrowInput } from './arrow/arrow-to-rows.js'
export type { ConflictFlags } from './conflict/flags.js'
export { CONFLICT_FLAG_KEYS, parseConflictFlags } from './conflict/flags.js'
export type { Reconciliation, ReconciliationKind } from './conflict/reconciliation.js'
export type {
  ActionRow,
  CheckpointWriteOptions,
  ColumnSpec,
  CompactedSource,
  CompactionOutput,
  CompactRequest,
  DataFileRef,
  DataPlane,
  DataWriter,
  Engine,
  EngineCallOptions,
  FileMatches,
  MergeDeleteClause,
  MergeExecutor,
  MergeInsertClause,
  MergeMultipleMatch,
  MergeRequest,
  MergeResult,
  MergeSourceColumn,
  MergeTargetClause,
  MergeUpdateClause,
  ParquetHandler,
  RewriteRequest,
  ScanRequest,
  WriteCallOptions,
  WriteRowsRequest,
  WriteTarget,
  WrittenFile,
} from './engine/index.js'
export { createDefaultEngine, type DefaultEngineOptions } from './engine-default/default-engine.js'
export {
  createDuckDbInstance,
  type DuckDbInstanceOptions,
  openStream,
  type ResultStream,
  type StreamChunksOptions,
  type StreamFailure,
  streamChunks,
} from './engine-default/duckdb-runtime.js'
export * from './errors/index.js'
export type { Expression } from './expressions/ast.js'
export { parseExpression, parsePredicate } from './expressions/parse-predicate.js'
export type { AppendOptions } from './ops/append.js'
export type {
  MergeAssignments,
  MergeDeleteAction,
  MergeInsertAction,
  MergeMatchedAction,
  MergeOptions,
  MergeUpdateAction,
} from './ops/merge-clauses.js'
export type { OptimizeOptions } from './ops/optimize.js'
export type { UpdateOptions } from './ops/update.js'
export type { VacuumOptions, VacuumResult } from './ops/vacuum.js'
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
export {
  type ColumnMappingMode,
  type DataType,
  parseDdlSchema,
  type StructField,
  type StructType,
} from './protocol/schema.js'
export { toJSONRow } from './scan/json-row.js'
export { type BatchesOptions, type Row, type ScanOptions, TableScan } from './scan/table-scan.js'
export type { LoadSnapshotOptions } from './snapshot/load-snapshot.js'
export { Snapshot } from './snapshot/snapshot.js'
export type { CheckpointResult } from './snapshot/write-checkpoint.js'
export {
  type AzureStoreOptions,
  createAzureStore,
  createFaultyStore,
  createLocalStore,
  createMemoryStore,
  createS3Store,
  type FaultPlan,
  type FaultRule,
  type FaultyStore,
  type OpenStoreOptions,
  openStore,
  type RetryOptions,
  type S3StoreOptions,
} from './storage/index.js'
export type {
  ByteRange,
  FileMeta,
  ObjectStore,
  PutOptions,
  StoreCallOptions,
} from './storage/object-store.js'
export type { AppendFileOptions, FileFormat } from './table/append-file.js'
export type { CreateOptions } from './table/create-table.js'
export {
  type CheckpointOptions,
  DeltaTable,
  type HistoryEntry,
  type HistoryOptions,
  type OpenOptions,
  type StopOptions,
} from './table/delta-table.js'
export { createSnapshotView, type SnapshotView, type SnapshotViewOptions } from './table/sql-view.js'
export type { CommitRetryPolicy } from './txn/commit-options.js'
export type { CommitResult } from './txn/commit-result.js'
export { type BeginOptions, Transaction } from './txn/transaction.js'
