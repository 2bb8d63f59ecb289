/**
 * Writing the change data feed (protocol: Change Data Files, Add CDC File): on a table with
 * `delta.enableChangeDataFeed = true` a DML commit that changes rows inside files carries `cdc`
 * actions whose files hold every row it changed, each with its `_change_type`. A CDF reader then
 * takes that version's changes from the `cdc` files alone, so they cover every change of the
 * commit (the inserted rows of a MERGE that also updates, the rows of files removed whole).
 *
 * A commit that only adds files, or only removes whole files, writes none: readers take its adds
 * as inserts and its removes as deletes, as Delta's own writers leave them.
 */
import type { DataFileRef } from '../engine/data-plane.js'
import type { ChangeDataPart, ChangeType, WrittenFile } from '../engine/data-writer.js'
import { UnsupportedError } from '../errors/index.js'
import { type Action, createAddCdcFile } from '../protocol/actions.js'
import type { StructType } from '../protocol/schema.js'
import { isFeatureActive } from '../protocol/table-features.js'
import type { Snapshot } from '../snapshot/snapshot.js'
import type { OperationContext } from '../txn/staged-operation.js'
import type { TouchedFile } from './dml-support.js'
import { writeTargetOf } from './write-support.js'

/**
 * Whether writers must produce change data for this table: `delta.enableChangeDataFeed` is true
 * and, at writer version 7, the `changeDataFeed` feature is listed (protocol: Writer
 * Requirements for AddCDCFile).
 *
 * @param snap - the read snapshot
 * @returns true when DML must write `cdc` files
 */
export function changeDataFeedOn(snap: Snapshot): boolean {
  return isFeatureActive(snap.protocol, snap.metadata, 'changeDataFeed')
}

/** The rows one commit changes, by change type. */
export interface ChangedRows {
  /** Rows taken out of their files (DELETE, MERGE delete clauses, a replaceWhere overwrite). */
  readonly deleted?: readonly TouchedFile[] | undefined
  /** Rows an UPDATE or a MERGE update clause replaced, as they were. */
  readonly preimages?: readonly TouchedFile[] | undefined
  /** New files holding only the replacing images. */
  readonly postimages?: readonly WrittenFile[] | undefined
  /** New files holding only inserted rows. */
  readonly inserted?: readonly WrittenFile[] | undefined
  /** The schema the commit gives the table, when it evolves it (default: the snapshot's). */
  readonly schema?: StructType | undefined
}

/** What {@link changeDataActions} wrote. */
export interface ChangeData {
  /** The `cdc` actions (`dataChange: false`), one per file. */
  readonly actions: readonly Action[]
  /** Change data files written. */
  readonly files: number
}

const NONE: ChangeData = Object.freeze({ actions: Object.freeze([]), files: 0 })

/**
 * Writes the change data of a commit under `_change_data/` and returns its `cdc` actions; nothing
 * when the table does not enable change data feed, or no existing row changed (only inserts:
 * readers take the adds as inserts). The rows are read from the files in the data plane: the
 * leaving rows by position from their source files (their deletion vectors at read time
 * applied), the new images and inserts whole from the files the commit adds. Each file written
 * is handed to `ctx.wrote`.
 *
 * @param ctx - the transaction's context
 * @param rows - the changed rows by change type
 * @returns the actions and the number of files
 * @throws {UnsupportedError} when the engine's writer cannot write change data
 * @throws {StorageError} when writing fails
 */
export async function changeDataActions(ctx: OperationContext, rows: ChangedRows): Promise<ChangeData> {
  const snap = ctx.snapshot
  if (!changeDataFeedOn(snap)) return NONE
  const touched = [...(rows.deleted ?? []), ...(rows.preimages ?? [])].some((t) => t.positions.length > 0)
  if (!touched) return NONE
  const write = ctx.engine.writer.writeChangeData?.bind(ctx.engine.writer)
  if (write === undefined) {
    throw new UnsupportedError(
      `This engine cannot write change data, which ${snap.location} records (delta.enableChangeDataFeed = true)`,
      { hint: 'Use the default engine, or turn the feed off with alter.setProperties.' },
    )
  }
  const parts: ChangeDataPart[] = [
    positional('delete', rows.deleted),
    positional('update_preimage', rows.preimages),
    whole('update_postimage', rows.postimages),
    whole('insert', rows.inserted),
  ].filter((p): p is ChangeDataPart => p !== undefined)
  // Written against the schema the commit leaves, so columns it adds keep their values.
  const target =
    rows.schema === undefined ? writeTargetOf(snap) : { ...writeTargetOf(snap), schema: rows.schema }
  const written = await write({ parts, target, signal: ctx.signal })
  ctx.wrote(written.map((f) => f.key))
  const actions: Action[] = written.map((f) => ({
    cdc: createAddCdcFile({
      path: f.path,
      partitionValues: f.partitionValues,
      size: BigInt(f.size),
      dataChange: false,
    }),
  }))
  return Object.freeze({ actions: Object.freeze(actions), files: written.length })
}

function positional(
  changeType: ChangeType,
  files: readonly TouchedFile[] | undefined,
): ChangeDataPart | undefined {
  const leaving = (files ?? []).filter((t) => t.positions.length > 0)
  if (leaving.length === 0) return undefined
  return {
    changeType,
    sources: leaving.map((t) => t.ref),
    positions: new Map(leaving.map((t) => [t.ref.key, t.positions])),
  }
}

function whole(
  changeType: ChangeType,
  files: readonly WrittenFile[] | undefined,
): ChangeDataPart | undefined {
  if (files === undefined || files.length === 0) return undefined
  const sources: DataFileRef[] = files.map((f) =>
    Object.freeze({ key: f.key, partitionValues: f.partitionValues }),
  )
  return { changeType, sources }
}
