import { DeltaError } from '../index.js'

/**
 * A race table failed the verifier: the verifier did its job, so this is a finding about the table
 * (exit 3), not a fault of delta-rlc. The failed checks were printed before it.
 */
export class VerificationFailedError extends DeltaError {
  readonly code = 'DELTA_VERIFICATION_FAILED'
  /** The names of the checks that failed. */
  readonly failedChecks: readonly string[]
  /**
   * @param what - the table or race verified
   * @param failedChecks - names of the failed checks
   * @param report - where the full report is, when one was written
   */
  constructor(what: string, failedChecks: readonly string[], report?: string) {
    super(
      `verification failed for ${what}: ${failedChecks.length === 0 ? 'a divergence from the serial replay' : failedChecks.join(', ')}`,
      {
        hint:
          report === undefined
            ? 'Each failed check is listed above with what it found; --json gives the full report.'
            : `Each failed check is listed above with what it found; the full report is ${report}.`,
      },
    )
    this.failedChecks = failedChecks
  }
}
