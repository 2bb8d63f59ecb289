/**
 * What the Delta logic needs from the outside world, as interfaces. The pure modules describe
 * *what* to read or write; an {@link Engine} does it. `engine-default/` is the implementation
 * over node's file system and DuckDB; tests or embedders may pass their own.
 */
import type { StructType } from '../protocol/schema.js'
import type { ObjectStore } from '../storage/object-store.js'
import type { DataPlane } from './data-plane.js'
import type { DataWriter } from './data-writer.js'
import type { MergeExecutor } from './merge-plan.js'

/** The I/O and compute a table needs. */
export interface Engine {
  /** Where the table lives; keys are relative to the table root. */
  readonly storage: ObjectStore
  /** Parquet access for log files (checkpoints, sidecars). */
  readonly parquet: ParquetHandler
  /** Row-level work on data files: scans, predicate matches, writes. */
  readonly data: DataPlane
  /** New data files with exact statistics: appends, rewrites, compaction. */
  readonly writer: DataWriter
  /** The MERGE join; MERGE is refused with `UnsupportedError` by an engine without it. */
  readonly merge?: MergeExecutor
  /** Releases native resources (DuckDB instances, caches). Idempotent. */
  close(): Promise<void>
}

/** Options of engine calls. */
export interface EngineCallOptions {
  readonly signal?: AbortSignal | undefined
}

/**
 * Parquet access for the Delta log.
 *
 * Checkpoint and sidecar files have one column per action type (`add`, `remove`, `metaData`,
 * `protocol`, `txn`, `domainMetadata`, `checkpointMetadata`, `sidecar`); each row sets one.
 */
export interface ParquetHandler {
  /**
   * Reads the action rows of checkpoint or sidecar files, in file order, then row order.
   *
   * @param keys - store keys of the Parquet files
   * @returns one JSON text per row: an object with the row's non-null action column, in the
   *   shape of a commit line (`{"add":{...}}`); integers are exact JSON integers; nested null
   *   fields appear as `null`
   * @throws {FileNotFoundError} when a file is missing
   * @throws {InvalidTableError} (`invalid-checkpoint`) when a file is not readable Parquet
   */
  readActionRows(keys: readonly string[], opts?: EngineCallOptions): Promise<readonly string[]>

  /**
   * Reads the same rows as {@link readActionRows}, in the same order, handing them over in
   * batches as they are read: a checkpoint of a million files is then never held whole in
   * memory, neither in the data plane nor as text. A row may also come already decoded (see
   * {@link ActionRow}). Snapshot loading uses it when present.
   *
   * @param keys - store keys of the Parquet files
   * @param onBatch - called with each batch, in order; what it throws ends the read unchanged
   * @throws {FileNotFoundError} when a file is missing
   * @throws {InvalidTableError} (`invalid-checkpoint`) when a file is not readable Parquet
   */
  readActionRowBatches?(
    keys: readonly string[],
    onBatch: (rows: readonly ActionRow[]) => void,
    opts?: EngineCallOptions,
  ): Promise<void>

  /**
   * Writes actions, given as commit-style JSON lines, to a Parquet file in the checkpoint schema
   * and stores it under `key` (replacing any object there). An `add` line may carry
   * `stats_parsed` and `partitionValues_parsed` objects; they are written with the types `opts`
   * gives, and left out when `opts` gives none.
   *
   * @returns the size of the stored file in bytes
   */
  writeActionRows(key: string, jsonLines: readonly string[], opts?: CheckpointWriteOptions): Promise<number>
}

/**
 * One checkpoint row from {@link ParquetHandler.readActionRowBatches}: its JSON text, as
 * {@link ParquetHandler.readActionRows} gives it, or the row already decoded, as
 * `parseCheckpointRow` takes it (`{ add: {...} }`, 64-bit integers as `bigint`, maps as plain
 * objects, a null field as `null`). Either way the same action reader validates it.
 */
export type ActionRow = string | Readonly<Record<string, unknown>>

/**
 * How a checkpoint carries per-file statistics and partition values
 * (`delta.checkpoint.writeStatsAsJson`, `delta.checkpoint.writeStatsAsStruct`).
 */
export interface CheckpointWriteOptions extends EngineCallOptions {
  /** Whether `add.stats` (JSON text) is a column of the file; true when absent. */
  readonly statsAsJson?: boolean | undefined
  /** The type of `add.stats_parsed`; the column is written only when given. */
  readonly statsParsedType?: StructType | undefined
  /** The type of `add.partitionValues_parsed`; the column is written only when given. */
  readonly partitionValuesParsedType?: StructType | undefined
  /**
   * Whether the file has a `checkpointMetadata` column: a V2 checkpoint (on a `v2Checkpoint`
   * table), whose lines then include one `checkpointMetadata` action.
   */
  readonly checkpointMetadata?: boolean | undefined
}
