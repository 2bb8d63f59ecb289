import { DeltaError } from './delta-error.js'
import { describeRow } from './describe-row.js'

/**
 * An overwrite with `replaceWhere` was given a row the predicate does not select (it is false or
 * NULL for the row), as Spark's replaceWhere constraint check refuses it: the write would put rows
 * outside the range it replaces. Nothing is committed.
 */
export class ReplaceWhereMismatchError extends DeltaError {
  readonly code = 'DELTA_REPLACE_WHERE_MISMATCH'
  /** The replaceWhere predicate, as text. */
  readonly predicate: string
  /** One offending row, as the data plane read it back (column name to value). */
  readonly row: Readonly<Record<string, unknown>>
  constructor(predicate: string, row: Readonly<Record<string, unknown>>) {
    super(`A row written by the overwrite does not match replaceWhere '${predicate}': ${describeRow(row)}`, {
      hint: 'Every new row must satisfy the replaceWhere predicate; filter the rows first, or widen the predicate.',
    })
    this.predicate = predicate
    this.row = Object.freeze({ ...row })
  }
}

/**
 * RESTORE would bring back files whose objects are gone (VACUUM deleted them, or they were removed
 * by hand): the table would point at missing data. Checked before anything is committed.
 */
export class RestoreFilesMissingError extends DeltaError {
  readonly code = 'DELTA_RESTORE_FILES_MISSING'
  /** The version RESTORE was asked to bring back. */
  readonly version: bigint
  /** Store keys of missing objects (data files and deletion-vector files), at most a hundred. */
  readonly missing: readonly string[]
  constructor(version: bigint, missing: readonly string[], total: number) {
    const shown = missing.slice(0, 5).join(', ')
    const more = total > 5 ? ` and ${total - 5} more` : ''
    super(
      `Cannot restore version ${version}: ${total} file${total === 1 ? '' : 's'} it needs ${total === 1 ? 'is' : 'are'} gone (${shown}${more})`,
      {
        hint: 'VACUUM (or a manual delete) removed them; restore a more recent version (see `delta-rlc history`), one whose files are still inside the retention window.',
      },
    )
    this.version = version
    this.missing = Object.freeze([...missing])
  }
}
