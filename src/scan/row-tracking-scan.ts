/**
 * What a scan with `withRowTracking` asks of the data plane, checked against the snapshot first:
 * row tracking must be enabled, every file read must carry its `baseRowId` and
 * `defaultRowCommitVersion`, and the two added columns must not clash with the table's own.
 */
import { ROW_COMMIT_VERSION_COLUMN, ROW_ID_COLUMN, type RowTrackingColumns } from '../engine/data-plane.js'
import { InvalidArgumentError, InvalidTableError } from '../errors/index.js'
import type { AddFile } from '../protocol/actions.js'
import {
  checkMaterializedColumnNames,
  checkRowIdsReadable,
  rowTrackingState,
} from '../protocol/row-tracking.js'
import type { StructField } from '../protocol/schema.js'
import type { Snapshot } from '../snapshot/snapshot.js'

/**
 * The row-tracking columns of a scan of `snap`, or `undefined` when the scan does not ask for them.
 *
 * @param snap - the snapshot read
 * @param withRowTracking - the scan option
 * @param columns - the table's top-level columns, logical and physical names
 * @returns where the materialized values are, for the data plane
 * @throws {RowTrackingNotEnabledError} when the table does not enable row tracking
 * @throws {InvalidArgumentError} when the table has a column named `_row_id` or `_row_commit_version`
 * @throws {InvalidTableError} `malformed-action` when the row-tracking configuration contradicts itself
 */
export function scanRowTracking(
  snap: Snapshot,
  withRowTracking: boolean | undefined,
  columns: readonly { readonly name: string; readonly physicalName: string }[],
): RowTrackingColumns | undefined {
  if (withRowTracking !== true) return undefined
  const state = rowTrackingState(snap.protocol, snap.metadata)
  checkRowIdsReadable(state)
  checkMaterializedColumnNames(state, columns)
  for (const c of columns) {
    const lower = c.name.toLowerCase()
    if (lower === ROW_ID_COLUMN || lower === ROW_COMMIT_VERSION_COLUMN) {
      throw new InvalidArgumentError(
        `The table has a column '${c.name}', the name a row-tracking scan gives its row ids or commit versions`,
        { argument: 'withRowTracking', hint: 'Rename the column to read row ids with it.' },
      )
    }
  }
  return Object.freeze({
    materializedRowIdColumn: state.materializedRowIdColumn,
    materializedRowCommitVersionColumn: state.materializedRowCommitVersionColumn,
  })
}

/**
 * Checks that every file of a row-tracking scan has its default row id and commit version, as
 * the protocol requires of every live file once tracking is enabled (a backfill commit sets
 * them): without them a row whose file has no materialized value would have no id.
 *
 * @param files - the files the scan reads
 * @throws {InvalidTableError} `malformed-action` naming the first file without them
 */
export function checkFilesTrackRows(files: readonly AddFile[]): void {
  for (const f of files) {
    if (f.baseRowId === undefined || f.defaultRowCommitVersion === undefined) {
      throw new InvalidTableError(
        'malformed-action',
        `The table enables row tracking, but the add of ${f.path} has no ${f.baseRowId === undefined ? 'baseRowId' : 'defaultRowCommitVersion'}`,
        { path: f.path, hint: 'Row ids of this table cannot be read; a writer must backfill them first.' },
      )
    }
  }
}

/** The two fields a row-tracking scan adds to each row, as Arrow output types them (Int64). */
export const ROW_TRACKING_FIELDS: readonly StructField[] = Object.freeze([
  Object.freeze({ name: ROW_ID_COLUMN, type: 'long', nullable: false, metadata: Object.freeze({}) }),
  Object.freeze({
    name: ROW_COMMIT_VERSION_COLUMN,
    type: 'long',
    nullable: false,
    metadata: Object.freeze({}),
  }),
])
