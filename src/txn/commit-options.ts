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
  /**
   * Jitter after a lost race, ms (default 2): the next put waits a random time below this, so
   * that writers that lost the same race do not put again in lockstep. Also the first backoff
   * after a storage failure, which doubles per attempt with full jitter.
   */
  readonly baseDelayMs: number
  /**
   * Backoff ceiling after storage failures, ms (default 100). A lost race never waits longer than
   * `baseDelayMs`: its winners are already checked, and every millisecond of waiting lets another
   * writer take the next version (seven writers behind 20 ms of store latency: with lost races
   * backing off up to 100 ms, a commit's p99 was 5.4 s; with 2 ms of jitter, 1.4 s).
   */
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
 * The delay after a lost race whose winners were all checked: full jitter below `baseDelayMs`,
 * not growing with the attempts, so that the next put follows the check as closely as possible.
 *
 * @param policy - the retry policy
 * @param random - a uniform random number in [0, 1)
 */
export function lostRaceDelay(policy: CommitRetryPolicy, random: number): number {
  return Math.floor(random * Math.min(policy.baseDelayMs, policy.maxDelayMs))
}

/**
 * The delay before attempt `attempt` (1-based) after a storage failure: exponential with full
 * jitter, so that writers retrying a struggling store spread out.
 *
 * @param policy - the retry policy
 * @param attempt - the attempt that just failed
 * @param random - a uniform random number in [0, 1)
 */
export function backoffDelay(policy: CommitRetryPolicy, attempt: number, random: number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(attempt - 1, 20))
  return Math.floor(random * ceiling)
}
