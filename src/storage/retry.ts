/**
 * Bounded retries with exponential backoff for the remote stores. The SDKs' own retries are
 * turned off so that this loop alone decides what is repeated: a conditional put must never be
 * repeated after an attempt that may have landed, because the repeat would then fail with
 * "already exists" and the writer would believe it lost a commit it actually won.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { DeltaError, InvalidArgumentError, StorageError } from '../errors/index.js'
import { describeFailure, type RequestFailure, sanitizedCause } from './request-failure.js'

/** How a remote store retries a failed request. Every field is optional. */
export interface RetryOptions {
  /** Attempts after the first one for a transient failure (default 4; 0 disables retries). */
  readonly maxRetries?: number | undefined
  /** Backoff before the first retry, doubled for each further one (default 100 ms). */
  readonly baseDelayMs?: number | undefined
  /** Upper bound of one backoff (default 5000 ms). */
  readonly maxDelayMs?: number | undefined
  /** An attempt that has not completed after this long is abandoned as timed out (default 30000 ms). */
  readonly attemptTimeoutMs?: number | undefined
}

/** A validated, complete {@link RetryOptions}. */
export interface RetryPolicy {
  readonly maxRetries: number
  readonly baseDelayMs: number
  readonly maxDelayMs: number
  readonly attemptTimeoutMs: number
}

/** The policy used when a store is given no retry options. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({
  maxRetries: 4,
  baseDelayMs: 100,
  maxDelayMs: 5000,
  attemptTimeoutMs: 30_000,
})

/**
 * Fills in and validates retry options.
 *
 * @param options - the caller's options, or undefined for the defaults
 * @returns a frozen, complete policy
 * @throws {InvalidArgumentError} when a field is negative, fractional (counts) or not finite
 */
export function resolveRetryPolicy(options: RetryOptions | undefined): RetryPolicy {
  const policy = { ...DEFAULT_RETRY_POLICY }
  for (const field of ['maxRetries', 'baseDelayMs', 'maxDelayMs', 'attemptTimeoutMs'] as const) {
    const value = options?.[field]
    if (value === undefined) continue
    const valid =
      typeof value === 'number' &&
      Number.isFinite(value) &&
      value >= 0 &&
      (field !== 'maxRetries' || Number.isSafeInteger(value)) &&
      (field !== 'attemptTimeoutMs' || value > 0)
    if (!valid) {
      throw new InvalidArgumentError(
        `Invalid retry option ${field}: ${String(value)}. Use a non-negative number${field === 'maxRetries' ? ' of retries' : ' of milliseconds'}${field === 'attemptTimeoutMs' ? ' above 0' : ''}.`,
        { argument: `retry.${field}` },
      )
    }
    policy[field] = value
  }
  return Object.freeze(policy)
}

/**
 * The pause before retry number `retry` (0 for the first retry): exponential growth from
 * `baseDelayMs`, capped at `maxDelayMs`, with the upper half randomised so that writers that
 * failed together do not retry together.
 *
 * @param policy - the retry policy
 * @param retry - 0-based retry number
 * @param random - a source of numbers in [0, 1)
 * @returns the delay in milliseconds, within [cap / 2, cap]
 */
export function backoffDelayMs(
  policy: RetryPolicy,
  retry: number,
  random: () => number = Math.random,
): number {
  const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(retry, 30))
  return cap / 2 + (random() * cap) / 2
}

/**
 * The verdict on one failed attempt:
 * - `throw`: stop and throw `error`;
 * - `retry`: the failure is transient; retry while the budget lasts. `mayHaveLanded` records that
 *   the request may have taken effect (only a repeatable request may be judged so).
 */
export type AttemptVerdict =
  | { readonly kind: 'throw'; readonly error: unknown }
  | { readonly kind: 'retry'; readonly failure: RequestFailure; readonly mayHaveLanded: boolean }

/** What a retried call is, for messages. */
export interface RetriedCall {
  /** A verb phrase: `'read'`, `'list'`, `'put'`. */
  readonly action: string
  /** The object or listing concerned (never contains secrets). */
  readonly path: string
  /** The service, as named in messages. */
  readonly service: string
  /**
   * Set for puts: `'conditional'` for puts with `ifNotExists`. Only a write reports that failed
   * attempts may have landed.
   */
  readonly write?: 'plain' | 'conditional' | undefined
}

/**
 * Runs `attempt` until it succeeds, `judge` says to stop, the caller aborts, or the retry budget
 * is spent. Each attempt gets its own signal, aborted when the caller's signal aborts or when
 * the attempt outlives `policy.attemptTimeoutMs`; `judge` learns which of the two happened.
 *
 * @param policy - the retry policy
 * @param call - what is being done, for messages
 * @param signal - the caller's signal
 * @param attempt - performs one attempt
 * @param judge - classifies the error of a failed attempt; `timedOut` is true when the attempt
 *   was abandoned for exceeding its timeout
 * @returns the result of the first successful attempt
 * @throws the caller's abort reason (an `AbortError`) when the caller aborts
 * @throws {StorageError} with `retryable` set when transient failures outlast the budget, and
 *   `ambiguous` set when one of the failed attempts may have landed
 * @throws whatever `judge` says to throw
 */
export async function runWithRetries<T>(
  policy: RetryPolicy,
  call: RetriedCall,
  signal: AbortSignal | undefined,
  attempt: (attemptSignal: AbortSignal) => Promise<T>,
  judge: (err: unknown, timedOut: boolean) => AttemptVerdict,
): Promise<T> {
  let mayHaveLanded = false
  for (let retry = 0; ; retry++) {
    signal?.throwIfAborted()
    const controller = new AbortController()
    const forwardAbort = () => controller.abort(signal?.reason)
    signal?.addEventListener('abort', forwardAbort, { once: true })
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      controller.abort()
    }, policy.attemptTimeoutMs)
    let verdict: AttemptVerdict
    try {
      return await attempt(controller.signal)
    } catch (err) {
      signal?.throwIfAborted()
      verdict = judge(err, timedOut)
    } finally {
      clearTimeout(timer)
      signal?.removeEventListener('abort', forwardAbort)
    }
    if (verdict.kind === 'throw') throw verdict.error
    mayHaveLanded ||= verdict.mayHaveLanded && call.write !== undefined
    if (retry >= policy.maxRetries) throw retriesExhausted(call, verdict.failure, retry + 1, mayHaveLanded)
    try {
      await sleep(backoffDelayMs(policy, retry), undefined, { signal })
    } catch (err) {
      signal?.throwIfAborted()
      throw err
    }
  }
}

/**
 * The verdict for an error thrown by our own code inside an attempt: a retryable
 * {@link StorageError} (a truncated body, say) is retried, any other {@link DeltaError} is
 * thrown as is.
 *
 * @param err - the error
 * @returns a verdict, or undefined when `err` is not a {@link DeltaError}
 */
export function verdictForOwnError(err: unknown): AttemptVerdict | undefined {
  if (!(err instanceof DeltaError)) return undefined
  if (err instanceof StorageError && err.retryable && !err.ambiguous) {
    return {
      kind: 'retry',
      failure: { status: undefined, code: 'INCOMPLETE', message: err.message, requestId: undefined },
      mayHaveLanded: false,
    }
  }
  return { kind: 'throw', error: err }
}

function retriesExhausted(
  call: RetriedCall,
  failure: RequestFailure,
  attempts: number,
  mayHaveLanded: boolean,
): StorageError {
  const landed = mayHaveLanded ? ' The write may have landed despite the errors.' : ''
  return new StorageError(
    `Could not ${call.action} ${call.path}: ${call.service} failed ${attempts} time${attempts === 1 ? '' : 's'} in a row, last with ${describeFailure(failure)}.${landed}`,
    {
      path: call.path,
      retryable: true,
      ambiguous: mayHaveLanded,
      cause: sanitizedCause(call.service, failure),
      hint: mayHaveLanded
        ? 'Check whether the object was written before writing it again.'
        : 'The service is unreachable, overloaded or throttling; retry later.',
    },
  )
}
