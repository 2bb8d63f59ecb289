/**
 * Which operations may write to tables whose features bind rewrites: with row tracking enabled a
 * copied row must keep its stable id (written to the materialized columns). Appends and DELETEs
 * with deletion vectors leave every existing row in its file, so they write to such tables;
 * OPTIMIZE (bin-packing, Z-order and clustering), UPDATE, MERGE and a copy-on-write DELETE write
 * the materialized columns ({@link rowTrackingToPreserve}); any other operation that copies rows
 * is refused before it writes anything ({@link checkRowCopyingSupported}, called by each such
 * operation), and the transaction refuses any staged work that copies rows without declaring that
 * it preserved their ids ({@link checkNoRowCopying}), so a new operation cannot forget the rule.
 */

import type { RowTrackingColumns } from '../engine/data-plane.js'
import { type Action, isAdd, isRemove } from '../protocol/actions.js'
import { type RowTrackingState, rowCopyingUnsupported, rowTrackingState } from '../protocol/row-tracking.js'
import type { Snapshot } from '../snapshot/snapshot.js'

/**
 * The clustering writer features, which every write honors: new files are unclustered (no
 * `clusteringProvider`) and carry statistics for every clustering column, which the protocol
 * allows (a writer need not cluster a file at any given moment), and OPTIMIZE clusters them.
 * `liquid` is Databricks' early name of `clustering`.
 */
export const IN_PLACE_ONLY_FEATURES: readonly string[] = Object.freeze(['clustering', 'liquid'])

/**
 * Refuses an operation that copies rows to new files (UPDATE, MERGE, a copy-on-write DELETE,
 * OPTIMIZE) on a table it cannot write that way, before it writes anything:
 *
 * row tracking enabled: the copies must preserve each row's stable id and commit version in the
 * materialized columns, and an operation that does not would silently give every copied row a new
 * id (a table that only supports row tracking makes no such promise: its copies take fresh ids,
 * as the protocol allows). A clustered table binds no rewrite: rewritten files are unclustered
 * until the next OPTIMIZE, as the protocol allows.
 *
 * An operation that writes the copied rows' ids to the materialized columns says so with
 * `preservesRowIds` (the table's configuration must name both columns).
 *
 * @param snap - the read snapshot
 * @param operation - the operation's name, for the message
 * @param options - whether the operation preserves the row ids it copies
 * @throws {UnsupportedTableFeatureError} `DELTA_UNSUPPORTED_TABLE_FEATURE` naming the feature
 */
export function checkRowCopyingSupported(
  snap: Snapshot,
  operation: string,
  options: { readonly preservesRowIds?: boolean | undefined } = {},
): void {
  const state = rowTrackingState(snap.protocol, snap.metadata)
  if (state.enabled && !(options.preservesRowIds === true && canMaterializeRowIds(state))) {
    throw rowCopyingUnsupported(operation)
  }
}

/**
 * The backstop of {@link checkRowCopyingSupported} over staged actions: work that removes files
 * and adds files of other paths moved rows into new files.
 *
 * @param snap - the read snapshot
 * @param operation - the staged operation's name
 * @param actions - its actions
 * @param options - whether the operation declared it preserves the row ids it copies
 * @throws {UnsupportedTableFeatureError} as {@link checkRowCopyingSupported} does
 */
export function checkNoRowCopying(
  snap: Snapshot,
  operation: string,
  actions: readonly Action[],
  options: { readonly preservesRowIds?: boolean | undefined } = {},
): void {
  const removed = new Set<string>()
  for (const a of actions) if (isRemove(a)) removed.add(a.remove.path)
  if (removed.size === 0) return
  if (actions.some((a) => isAdd(a) && !removed.has(a.add.path))) {
    checkRowCopyingSupported(snap, operation, options)
  }
}

/**
 * The materialized row-tracking columns that rows copied or updated on this table must be written
 * with: the table's names when row tracking is enabled and names both, else `undefined` (a table
 * that only supports row tracking gives copies fresh ids, as the protocol allows, and an enabled
 * one without the names is refused by {@link checkRowCopyingSupported}).
 *
 * @param snap - the read snapshot
 */
export function rowTrackingToPreserve(snap: Snapshot): RowTrackingColumns | undefined {
  const state = rowTrackingState(snap.protocol, snap.metadata)
  if (!state.enabled || !canMaterializeRowIds(state)) return undefined
  return Object.freeze({
    materializedRowIdColumn: state.materializedRowIdColumn,
    materializedRowCommitVersionColumn: state.materializedRowCommitVersionColumn,
  })
}

/**
 * Whether the table names both materialized row-tracking columns, which a writer that preserves
 * row ids writes.
 */
export function canMaterializeRowIds(state: RowTrackingState): boolean {
  return state.materializedRowIdColumn !== undefined && state.materializedRowCommitVersionColumn !== undefined
}
