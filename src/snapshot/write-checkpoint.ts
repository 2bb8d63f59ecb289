import type { CheckpointWriteOptions, Engine } from '../engine/engine.js'
import { serializeAction } from '../protocol/action-json.js'
import type { Action, AddFile, Version } from '../protocol/actions.js'
import { stringifyJson } from '../protocol/json-text.js'
import { checkpointFileName, LOG_DIR, serializeLastCheckpoint } from '../protocol/log-files.js'
import {
  type ParsedColumnsLayout,
  parsedColumnsLayout,
  parsedFromPartitionValues,
  parsedFromStatsJson,
} from '../protocol/parsed-stats.js'
import { columnMappingMode, requiresV2Checkpoints } from '../protocol/table-features.js'
import {
  checkpointWriteStatsAsJson,
  checkpointWriteStatsAsStruct,
  deletedFileRetentionMillis,
} from '../protocol/table-properties.js'
import {
  cleanUpExpiredLogs,
  expiredLogCleanupEnabled,
  type LogCleanupFailure,
  type LogCleanupResult,
} from './log-cleanup.js'
import type { Snapshot } from './snapshot.js'

/** What a written checkpoint holds. */
export interface CheckpointResult {
  readonly version: Version
  /** Store key of the checkpoint file. */
  readonly key: string
  /** Number of actions (rows) in it. */
  readonly size: number
  readonly sizeInBytes: number
  readonly numOfAddFiles: number
  /**
   * The expired log cleanup that followed the checkpoint (see {@link cleanUpExpiredLogs});
   * absent when it did not run (`delta.enableExpiredLogCleanup` false, or turned off by the
   * caller). A cleanup that failed is reported in its `failures`, never thrown: the checkpoint
   * is written either way.
   */
  readonly logCleanup?: LogCleanupResult
}

/** Options of {@link writeCheckpoint}. */
export interface WriteCheckpointOptions {
  /** The clock, for tombstone expiry and the log retention cutoff. */
  readonly nowMs?: number | undefined
  readonly signal?: AbortSignal | undefined
  /**
   * Clean up expired log files once the checkpoint is written; default: the table's
   * `delta.enableExpiredLogCleanup` (true when absent).
   */
  readonly cleanUpExpiredLogs?: boolean | undefined
}

/**
 * The actions of a classic-named checkpoint of `snapshot`: protocol, metadata (and, on a
 * `v2Checkpoint` table, the V2 `checkpointMetadata` header), app transactions, live domain
 * metadata, every live file, and the tombstones still inside the retention window.
 * Pure: the same snapshot and clock give the same list.
 *
 * @param snapshot - the state to persist
 * @param nowMs - the clock, for tombstone expiry
 * @returns the actions, in the order they are written
 */
export function planCheckpointActions(snapshot: Snapshot, nowMs: number): Action[] {
  const state = snapshot.state
  const actions: Action[] = [{ protocol: state.protocol }, { metaData: state.metadata }]
  // A `v2Checkpoint` table takes only V2 checkpoints: a classic-named one is V2 with its header.
  if (requiresV2Checkpoints(state.protocol, state.metadata))
    actions.push({ checkpointMetadata: { version: snapshot.version } })
  for (const txn of state.setTransactions.values()) actions.push({ txn })
  for (const dm of state.domainMetadata.values()) if (!dm.removed) actions.push({ domainMetadata: dm })
  // A checkpoint replaces history, so nothing in it is a data change.
  for (const add of state.activeFiles.values()) actions.push({ add: { ...add, dataChange: false } })
  const horizon = BigInt(Math.floor(nowMs - deletedFileRetentionMillis(snapshot.properties)))
  for (const rm of state.tombstones.values()) {
    if (rm.deletionTimestamp !== undefined && rm.deletionTimestamp < horizon) continue
    // The protocol leaves stats and tags out of checkpoint tombstones.
    const { stats: _stats, tags: _tags, ...rest } = rm
    actions.push({ remove: { ...rest, dataChange: false } })
  }
  return actions
}

/** How a checkpoint of a table carries statistics, from its properties. */
export interface CheckpointStatsFormat {
  /** `add.stats` as JSON text (`delta.checkpoint.writeStatsAsJson`, default true). */
  readonly asJson: boolean
  /**
   * The typed `add.stats_parsed` and, on a partitioned table, `add.partitionValues_parsed`
   * (`delta.checkpoint.writeStatsAsStruct`, default false); absent when not written.
   */
  readonly struct?: ParsedColumnsLayout
}

/**
 * The statistics format a checkpoint of `snapshot` uses.
 *
 * @param snapshot - the state to persist
 * @returns the format
 * @throws {InvalidArgumentError} when a `delta.checkpoint.writeStats*` property is not a boolean
 * @throws {InvalidTableError} `missing-schema` when column mapping is on and a field lacks its
 *   physical name
 */
export function checkpointStatsFormat(snapshot: Snapshot): CheckpointStatsFormat {
  const config = snapshot.properties
  const asJson = checkpointWriteStatsAsJson(config)
  if (!checkpointWriteStatsAsStruct(config)) return { asJson }
  const mode = columnMappingMode(snapshot.protocol, snapshot.metadata)
  return { asJson, struct: parsedColumnsLayout(snapshot.schema, snapshot.partitionColumns, mode) }
}

/**
 * Serializes the actions of a checkpoint as commit-style JSON lines in `format`: an `add` gets
 * `stats_parsed` and `partitionValues_parsed` objects when the struct form is on, and loses
 * `stats` when the JSON form is off.
 *
 * @param actions - the actions, from {@link planCheckpointActions}
 * @param format - the statistics format, from {@link checkpointStatsFormat}
 * @returns one JSON line per action
 */
export function checkpointLines(actions: readonly Action[], format: CheckpointStatsFormat): string[] {
  const lines: string[] = []
  for (const action of actions) {
    if (!('add' in action) || (format.asJson && format.struct === undefined)) {
      lines.push(serializeAction(action))
      continue
    }
    lines.push(stringifyJson({ add: checkpointAdd(action.add, format) }))
  }
  return lines
}

function checkpointAdd(add: AddFile, format: CheckpointStatsFormat): Record<string, unknown> {
  const { stats, ...rest } = add
  const out: Record<string, unknown> = format.asJson ? { ...rest, stats } : rest
  const layout = format.struct
  if (layout === undefined) return out
  if (layout.partitionValuesType)
    out.partitionValues_parsed = parsedFromPartitionValues(add.partitionValues, layout.partitionValuesType)
  out.stats_parsed = parsedFromStatsJson(stats, layout.statsType)
  return out
}

/**
 * Writes a classic single-file Parquet checkpoint of `snapshot` and points `_last_checkpoint`
 * at it, with statistics in the form the table's `delta.checkpoint.writeStatsAsJson` and
 * `delta.checkpoint.writeStatsAsStruct` ask for. Safe to race: two writers of the same
 * checkpoint produce equivalent files.
 *
 * Once both are durable, and when the table enables it (`delta.enableExpiredLogCleanup`,
 * default true), expired log files are cleaned up as Delta does after a checkpoint; a failure
 * there is reported in {@link CheckpointResult.logCleanup} and never fails the checkpoint.
 *
 * @param engine - the table's engine
 * @param snapshot - the version to checkpoint; its commit must exist
 * @param options - the clock, for tombstone expiry and the log retention; whether to clean up
 * @returns what was written, and what the cleanup did
 * @throws {StorageError} when the file cannot be written
 * @throws {InvalidArgumentError} when a `delta.checkpoint.writeStats*` property is not a boolean
 */
export async function writeCheckpoint(
  engine: Engine,
  snapshot: Snapshot,
  options: WriteCheckpointOptions = {},
): Promise<CheckpointResult> {
  const nowMs = options.nowMs ?? Date.now()
  const format = checkpointStatsFormat(snapshot)
  const actions = planCheckpointActions(snapshot, nowMs)
  const key = `${LOG_DIR}${checkpointFileName(snapshot.version)}`
  const writeOptions: CheckpointWriteOptions = {
    signal: options.signal,
    statsAsJson: format.asJson,
    statsParsedType: format.struct?.statsType,
    partitionValuesParsedType: format.struct?.partitionValuesType,
    checkpointMetadata: actions.some((a) => 'checkpointMetadata' in a),
  }
  const sizeInBytes = await engine.parquet.writeActionRows(
    key,
    checkpointLines(actions, format),
    writeOptions,
  )
  const numOfAddFiles = snapshot.state.activeFiles.size
  const hint = serializeLastCheckpoint({
    version: snapshot.version,
    size: actions.length,
    sizeInBytes,
    numOfAddFiles,
  })
  await engine.storage.put(`${LOG_DIR}_last_checkpoint`, new TextEncoder().encode(hint), {
    signal: options.signal,
  })
  const result = { version: snapshot.version, key, size: actions.length, sizeInBytes, numOfAddFiles }
  const logCleanup = await cleanUpAfterCheckpoint(engine, snapshot, options.cleanUpExpiredLogs, nowMs)
  return logCleanup === undefined ? result : { ...result, logCleanup }
}

/**
 * The cleanup that follows a checkpoint, when it is on: every failure (a property that does not
 * parse, a listing or delete that fails) becomes a reported failure, since the checkpoint it
 * follows, and the commit that asked for it, have already landed.
 */
async function cleanUpAfterCheckpoint(
  engine: Engine,
  snapshot: Snapshot,
  requested: boolean | undefined,
  nowMs: number,
): Promise<LogCleanupResult | undefined> {
  try {
    if (!(requested ?? expiredLogCleanupEnabled(snapshot))) return undefined
    return await cleanUpExpiredLogs(engine, snapshot, { nowMs })
  } catch (err) {
    const failure: LogCleanupFailure = {
      key: undefined,
      message: err instanceof Error ? err.message : String(err),
      cause: err,
    }
    return Object.freeze({
      dryRun: false,
      // Nothing was deleted: no file was older than this.
      cutoff: nowMs,
      boundary: undefined,
      files: [],
      bytes: 0,
      failures: Object.freeze([failure]),
    })
  }
}
