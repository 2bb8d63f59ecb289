import type { Engine } from '../engine/engine.js'
import { serializeAction } from '../protocol/action-json.js'
import type { Action, Version } from '../protocol/actions.js'
import { checkpointFileName, LOG_DIR, serializeLastCheckpoint } from '../protocol/log-files.js'
import { deletedFileRetentionMillis } from '../protocol/table-properties.js'
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
}

/**
 * The actions of a classic checkpoint of `snapshot`: protocol, metadata, app transactions, live
 * domain metadata, every live file, and the tombstones still inside the retention window.
 * Pure: the same snapshot and clock give the same list.
 *
 * @param snapshot - the state to persist
 * @param nowMs - the clock, for tombstone expiry
 * @returns the actions, in the order they are written
 */
export function planCheckpointActions(snapshot: Snapshot, nowMs: number): Action[] {
  const state = snapshot.state
  const actions: Action[] = [{ protocol: state.protocol }, { metaData: state.metadata }]
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

/**
 * Writes a classic single-file Parquet checkpoint of `snapshot` and points `_last_checkpoint`
 * at it. Safe to race: two writers of the same checkpoint produce equivalent files.
 *
 * @param engine - the table's engine
 * @param snapshot - the version to checkpoint; its commit must exist
 * @param options - the clock, for tombstone expiry
 * @returns what was written
 * @throws {StorageError} when the file cannot be written
 */
export async function writeCheckpoint(
  engine: Engine,
  snapshot: Snapshot,
  options: { nowMs?: number; signal?: AbortSignal } = {},
): Promise<CheckpointResult> {
  const actions = planCheckpointActions(snapshot, options.nowMs ?? Date.now())
  const key = `${LOG_DIR}${checkpointFileName(snapshot.version)}`
  const sizeInBytes = await engine.parquet.writeActionRows(key, actions.map(serializeAction), {
    signal: options.signal,
  })
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
  return { version: snapshot.version, key, size: actions.length, sizeInBytes, numOfAddFiles }
}
