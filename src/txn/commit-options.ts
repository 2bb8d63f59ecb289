/** How the commit loop retries. */
export interface CommitRetryPolicy {
  /**
   * Put attempts before `MaxCommitRetriesError` (default 10,000: each attempt follows new
   * winners that were all checked, so the bound guards against a runaway, not contention).
   */
  readonly maxAttempts: number
  /**
   * Storage failures (errors other than a lost race) tolerated while committing, before the
   * error is reported (default 8). Kept apart from `maxAttempts`: contention resolves itself,
   * a failing store usually does not.
   */
  readonly maxStorageRetries: number
  /** First backoff after a lost race, ms (default 2); doubles per attempt with full jitter. */
  readonly baseDelayMs: number
  /** Backoff ceiling, ms (default 100: the winners are already checked, so a long wait only lets others overtake). */
  readonly maxDelayMs: number
}

/** The defaults of {@link CommitRetryPolicy}. */
export const DEFAULT_RETRY_POLICY: CommitRetryPolicy = Object.freeze({
  maxAttempts: 10_000,
  maxStorageRetries: 8,
  baseDelayMs: 2,
  maxDelayMs: 100,
})

/**
 * The delay before attempt `attempt` (1-based): exponential with full jitter, so that writers
 * that lost the same race do not collide again in lockstep.
 *
 * @param policy - the retry policy
 * @param attempt - the attempt that just failed
 * @param random - a uniform random number in [0, 1)
 */
export function backoffDelay(policy: CommitRetryPolicy, attempt: number, random: number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(attempt - 1, 20))
  return Math.floor(random * ceiling)
}
