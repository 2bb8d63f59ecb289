/**
 * delta-rlc: a Delta Lake table engine for Node.js with row-level concurrency.
 *
 * The package root exports the table API: tables, snapshots, scans, transactions, the stores a
 * table opens (local, memory, and any location through `openStore`), the errors and the types a
 * caller needs. Everything else has its own entry point, so that the root pulls in no test tool
 * and no backend detail:
 * - `delta-rlc/engine`: the Engine interface a custom engine implements, and the default engine;
 * - `delta-rlc/storage/azure`, `delta-rlc/storage/s3`: the cloud stores and their options;
 * - `delta-rlc/duckdb`: DuckDB views and result streams, which take DuckDB values;
 * - `delta-rlc/testing`: fault and latency stores, and physical readers of the log and files.
 * See the README for a quickstart.
 */

export type { ArrowInput } from './arrow/arrow-to-rows.js'
export type { ConflictFlags } from './conflict/flags.js'
export { CONFLICT_FLAG_KEYS, parseConflictFlags } from './conflict/flags.js'
export type { Reconciliation, ReconciliationDetail, ReconciliationKind } from './conflict/reconciliation.js'
export * from './errors/index.js'
export type { Expression } from './expressions/ast.js'
export { parseExpression, parsePredicate } from './expressions/parse-predicate.js'
export type { AppendOptions } from './ops/append.js'
export type { FileCheck, FsckOptions, FsckResult, MissingFile } from './ops/fsck.js'
export type {
  MergeAssignments,
  MergeDeleteAction,
  MergeInsertAction,
  MergeMatchedAction,
  MergeOptions,
  MergeUpdateAction,
} from './ops/merge-clauses.js'
export type { OptimizeOptions } from './ops/optimize.js'
export type { OverwriteOptions, RowBatch, RowBatches } from './ops/overwrite.js'
export type { RestoreOptions } from './ops/restore.js'
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
export { type ClusteringSource, clusteringOf, type TableClustering } from './protocol/clustering.js'
export {
  type GeneratedColumnText,
  generatedColumnsOf,
  type IdentityColumn,
  identityColumnsOf,
} from './protocol/computed-columns.js'
export {
  type ColumnMappingMode,
  type DataType,
  parseDdlSchema,
  type StructField,
  type StructType,
} from './protocol/schema.js'
export { toJSONRow } from './scan/json-row.js'
export { type ChangesOptions, TableChanges } from './scan/table-changes.js'
export { type BatchesOptions, type Row, type ScanOptions, TableScan } from './scan/table-scan.js'
export type { LoadSnapshotOptions } from './snapshot/load-snapshot.js'
export type { LogCleanupFailure, LogCleanupResult } from './snapshot/log-cleanup.js'
export { Snapshot } from './snapshot/snapshot.js'
export type { CheckpointResult } from './snapshot/write-checkpoint.js'
export {
  type AzureStoreOptions,
  createLocalStore,
  createMemoryStore,
  type GcsStoreOptions,
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
  type CleanupMetadataOptions,
  DeltaTable,
  type HistoryEntry,
  type HistoryOptions,
  type OpenOptions,
  type StopOptions,
} from './table/delta-table.js'
export type { AlterOptions, SetPropertiesOptions, TableAlter } from './table/table-alter.js'
export { Transaction } from './table/transaction.js'
export type { CommitRetryPolicy } from './txn/commit-options.js'
export type { CommitResult } from './txn/commit-result.js'
export type { BeginOptions } from './txn/transaction.js'
