import { DeltaError } from './delta-error.js'

/**
 * A change data read covers a version at which the table did not record change data
 * (`delta.enableChangeDataFeed` was not true), as Delta's `DELTA_MISSING_CHANGE_DATA`.
 */
export class MissingChangeDataError extends DeltaError {
  readonly code = 'DELTA_MISSING_CHANGE_DATA'
  /** The first version of the range without change data. */
  readonly version: bigint
  constructor(start: bigint, end: bigint, version: bigint) {
    super(
      `Cannot read change data for versions ${start} to ${end}: change data was not recorded for version ${version}`,
      {
        hint: 'Start the range at a version where delta.enableChangeDataFeed is true (`delta-rlc history` shows when it was set); to record change data from now on, set it with alter.setProperties.',
      },
    )
    this.version = version
  }
}

/**
 * A change data range that selects no version of the table: its start is after its end, or after
 * the latest version, as Delta's `DELTA_INVALID_CDC_RANGE`.
 */
export class ChangeDataRangeError extends DeltaError {
  readonly code = 'DELTA_INVALID_CDC_RANGE'
  constructor(message: string, hint: string) {
    super(message, { hint })
  }
}

/**
 * A file a change data read needs (a `cdc` file, or the data file of an add or remove it reads as
 * inserted or deleted rows) is gone from the store, as Delta's `DELTA_CHANGE_DATA_FILE_NOT_FOUND`.
 */
export class ChangeDataFileNotFoundError extends DeltaError {
  readonly code = 'DELTA_CHANGE_DATA_FILE_NOT_FOUND'
  /** The version whose change data could not be read. */
  readonly version: bigint
  constructor(version: bigint, options: { cause?: unknown } = {}) {
    super(`A file holding the change data of version ${version} is missing`, {
      hint: 'VACUUM deletes change data files once they are older than the retention period (delta.deletedFileRetentionDuration); read a more recent range, or keep files longer before vacuuming.',
      ...options,
    })
    this.version = version
  }
}
