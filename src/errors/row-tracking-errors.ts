import { DeltaError } from './delta-error.js'

/**
 * A read asked for row ids (`scan({ withRowTracking: true })`) of a table that does not enable
 * row tracking: without `delta.enableRowTracking=true` and the `rowTracking` writer feature the
 * protocol does not promise that every row has a stable id, so none is made up.
 */
export class RowTrackingNotEnabledError extends DeltaError {
  readonly code = 'DELTA_ROW_TRACKING_NOT_ENABLED'
  /** Why the table's row ids cannot be relied upon. */
  readonly reason: 'not-supported' | 'not-enabled'
  constructor(reason: 'not-supported' | 'not-enabled') {
    super(
      reason === 'not-supported'
        ? 'The table does not track row ids: its protocol has no rowTracking writer feature'
        : 'The table supports row tracking but does not enable it (delta.enableRowTracking is not true), ' +
            'so row ids may be missing or may change when rows are copied',
      {
        hint:
          "Create the table with properties { 'delta.enableRowTracking': 'true' }, or enable it on the existing " +
          "table with an engine that backfills row ids (Spark: ALTER TABLE t SET TBLPROPERTIES ('delta.enableRowTracking' = 'true')); " +
          'scan without withRowTracking otherwise.',
      },
    )
    this.reason = reason
  }
}

/**
 * A new data file of a row-tracking table cannot get row ids: its `add` has no `numRecords`
 * statistic, so how many ids it takes is unknown. The commit is refused before anything is written
 * to the log.
 */
export class RowIdAssignmentWithoutStatsError extends DeltaError {
  readonly code = 'DELTA_ROW_ID_ASSIGNMENT_WITHOUT_STATS'
  /** The `add` path at fault. */
  readonly path: string
  constructor(path: string) {
    super(`Cannot assign row ids to the new data file ${path}: its add action has no numRecords statistic`, {
      hint: 'Every file added to a table with row tracking needs statistics with numRecords; write the file with statistics.',
    })
    this.path = path
  }
}
