/**
 * RESTORE: brings a table back to an earlier version, as Delta's `RESTORE TABLE ... TO VERSION AS
 * OF` does, by one commit (operation `RESTORE`) of the differences between the two states: a
 * `remove` of every file live now but not then, and an `add` (with `dataChange = true`) of every
 * file live then but not now, each keeping its deletion vector, statistics, partition values and
 * row-tracking fields. A file is the same in both states only with the same path and the same
 * deletion vector. The earlier metadata is set back; the protocol is never downgraded.
 *
 * Before anything is committed, every object the restored files need (data files, deletion-vector
 * files) is checked to exist: a version whose files VACUUM deleted cannot be restored.
 *
 * It reads the whole table, as Delta's does (Delta commits it without conflict resolution), so
 * any concurrent change of data aborts it.
 */
import { InvalidArgumentError, RestoreFilesMissingError } from '../errors/index.js'
import type { Action, AddFile, Protocol, Version } from '../protocol/actions.js'
import { createAddFile, createProtocol } from '../protocol/actions.js'
import { withFurtherHighWaterMarks } from '../protocol/computed-columns.js'
import { tombstoneOf } from '../protocol/file-action-rewrites.js'
import { readerFeaturesOf, writerFeaturesOf } from '../protocol/table-features.js'
import { loadSnapshot } from '../snapshot/load-snapshot.js'
import type { OperationContext, PreparedOperation } from '../txn/staged-operation.js'
import { checkLiveFiles } from './fsck.js'

/** Which version RESTORE brings back: exactly one of `version` and `timestamp`. */
export interface RestoreOptions {
  /** The version to restore. */
  readonly version?: Version | number | undefined
  /**
   * The latest version committed at or before this instant (Date, ms since the epoch, or ISO
   * text), as time travel selects it.
   */
  readonly timestamp?: Date | number | string | undefined
  /** Stops the RESTORE before its commit. */
  readonly signal?: AbortSignal | undefined
}

/** How many missing objects a refusal lists. */
const MISSING_LISTED = 100

/**
 * Builds a RESTORE of the transaction's table to the version `options` selects.
 *
 * @param ctx - the transaction's context (its snapshot is the state restored from)
 * @param options - `version` or `timestamp`
 * @returns the operation, with Delta's RESTORE metrics
 * @throws {InvalidArgumentError} when the selected version is not older than the read version
 * @throws {VersionNotFoundError} when the log cannot rebuild that version
 * @throws {RestoreFilesMissingError} when a data or deletion-vector file it needs is gone
 */
export async function buildRestore(
  ctx: OperationContext,
  options: RestoreOptions,
): Promise<PreparedOperation> {
  const latest = ctx.snapshot
  const selector =
    options.version !== undefined ? { version: options.version } : { timestamp: options.timestamp }
  const target = await loadSnapshot(ctx.engine, latest.location, { ...selector, signal: ctx.signal })
  if (target.version >= latest.version) {
    throw new InvalidArgumentError(
      `The version to restore (${target.version}) must be older than the latest version (${latest.version})`,
      {
        argument: options.version !== undefined ? 'options.version' : 'options.timestamp',
        hint: 'Pick an earlier version or timestamp; see `delta-rlc history`.',
      },
    )
  }
  ctx.recordWholeTableRead()
  const now = latest.state.activeFiles
  const then = target.state.activeFiles
  const toAdd: AddFile[] = []
  const toRemove: AddFile[] = []
  // Both maps are keyed by path and deletion vector (the snapshot's file keys).
  for (const [key, f] of then) if (!now.has(key)) toAdd.push(f)
  for (const [key, f] of now) if (!then.has(key)) toRemove.push(f)
  const check = await checkLiveFiles(ctx.engine, toAdd, ctx.signal)
  if (check.missing.length > 0) {
    const keys = [...new Set(check.missing.map((m) => m.key))]
    throw new RestoreFilesMissingError(target.version, keys.slice(0, MISSING_LISTED), keys.length)
  }
  const deletedAt = BigInt(ctx.now())
  const actions: Action[] = []
  const protocol = mergedProtocol(target.protocol, latest.protocol)
  if (protocol !== undefined) actions.push({ protocol })
  // Identity values generated since `target` may live on in history: their marks never go back.
  actions.push({ metaData: withFurtherHighWaterMarks(target.metadata, latest.metadata) })
  for (const f of toRemove) actions.push({ remove: tombstoneOf(f, deletedAt, true) })
  for (const f of toAdd) actions.push({ add: createAddFile({ ...f, dataChange: true }) })
  let tableSize = 0n
  for (const f of then.values()) tableSize += f.size
  return {
    operation: 'RESTORE',
    parameters:
      options.version !== undefined
        ? { version: String(options.version) }
        : { timestamp: timestampText(options.timestamp) },
    actions,
    metrics: {
      numRestoredFiles: toAdd.length,
      restoredFilesSize: sizeOf(toAdd),
      numRemovedFiles: toRemove.length,
      removedFilesSize: sizeOf(toRemove),
      numOfFilesAfterRestore: then.size,
      tableSizeAfterRestore: Number(tableSize),
    },
    changesData: true,
    // Restored files keep their own baseRowId and defaultRowCommitVersion: no row moves.
    preservesRowIds: true,
  }
}

// === Internals ===

function sizeOf(files: readonly AddFile[]): number {
  let n = 0n
  for (const f of files) n += f.size
  return Number(n)
}

function timestampText(t: Date | number | string | undefined): string {
  if (t instanceof Date) return t.toISOString()
  if (typeof t === 'number') return new Date(t).toISOString()
  return String(t)
}

/**
 * The protocol a RESTORE commits: undefined when the current one already supports everything the
 * restored one does (a RESTORE never downgrades), else the union of both, as Delta's
 * `Protocol.merge`.
 */
function mergedProtocol(restored: Protocol, current: Protocol): Protocol | undefined {
  const reader = Math.max(restored.minReaderVersion, current.minReaderVersion)
  const writer = Math.max(restored.minWriterVersion, current.minWriterVersion)
  const readerFeatures = union(readerFeaturesOf(current), readerFeaturesOf(restored))
  const writerFeatures = union(writerFeaturesOf(current), writerFeaturesOf(restored))
  const grows =
    reader > current.minReaderVersion ||
    writer > current.minWriterVersion ||
    readerFeatures.length > readerFeaturesOf(current).length ||
    writerFeatures.length > writerFeaturesOf(current).length
  if (!grows) return undefined
  return createProtocol({
    minReaderVersion: reader,
    minWriterVersion: writer,
    ...(reader >= 3 ? { readerFeatures } : {}),
    ...(writer >= 7 ? { writerFeatures } : {}),
  })
}

function union(a: readonly string[], b: readonly string[]): string[] {
  const out = [...a]
  for (const x of b) if (!out.includes(x)) out.push(x)
  return out
}
