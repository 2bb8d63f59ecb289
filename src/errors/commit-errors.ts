import { DeltaError } from './delta-error.js'

/** The commit loop ran out of attempts while other writers kept winning. */
export class MaxCommitRetriesError extends DeltaError {
  readonly code = 'DELTA_MAX_COMMIT_RETRIES'
  readonly attempts: number
  constructor(attempts: number, options?: { cause?: unknown }) {
    super(`Gave up committing after ${attempts} attempts: other writers kept committing first`, {
      ...options,
      hint: 'Raise maxCommitAttempts, or reduce contention on this table.',
    })
    this.attempts = attempts
  }
}

/**
 * A put of the log entry failed in a way that may or may not have taken effect, and the log
 * could not tell which. The table is consistent either way; whether this transaction landed is
 * unknown.
 */
export class CommitStateUnknownError extends DeltaError {
  readonly code = 'DELTA_COMMIT_STATE_UNKNOWN'
  readonly version: bigint
  readonly txnId: string
  constructor(version: bigint, txnId: string, options?: { cause?: unknown }) {
    super(`Cannot tell whether commit ${txnId} landed as version ${version}`, {
      ...options,
      hint: `Look for txnId ${txnId} in the table history before rerunning the operation.`,
    })
    this.version = version
    this.txnId = txnId
  }
}
