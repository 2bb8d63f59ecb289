export type {
  ColumnBatch,
  ColumnSpec,
  ColumnVector,
  DataFileRef,
  DataPlane,
  DeletedRowSet,
  FileMatches,
  RowTrackingColumns,
  ScanRequest,
} from './data-plane.js'
export type {
  CompactedSource,
  CompactionOutput,
  CompactRequest,
  DataWriter,
  RewriteRequest,
  WriteCallOptions,
  WriteRowsRequest,
  WriteTarget,
  WrittenFile,
} from './data-writer.js'
export type {
  ActionRow,
  CheckpointWriteOptions,
  Engine,
  EngineCallOptions,
  ParquetHandler,
} from './engine.js'
export type {
  MergeDeleteClause,
  MergeExecutor,
  MergeInsertClause,
  MergeMultipleMatch,
  MergeRequest,
  MergeResult,
  MergeSourceColumn,
  MergeTargetClause,
  MergeUpdateClause,
  MergeWrite,
  MergeWritten,
} from './merge-plan.js'
