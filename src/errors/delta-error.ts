/**
 * The root of every error this library throws.
 *
 * Each subclass carries a stable `code` (Spark-style error classes such as
 * `DELTA_CONCURRENT_APPEND`) and structured fields; callers branch on `code`, never on `message`.
 * The original failure, when there is one, travels on `cause`.
 */
export abstract class DeltaError extends Error {
  /** Stable, documented identifier of the failure. */
  abstract readonly code: string
  /** What the caller can do about it; printed by the CLI under the message. */
  readonly hint: string | undefined

  constructor(message: string, options?: { cause?: unknown; hint?: string }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause })
    this.name = new.target.name
    this.hint = options?.hint
  }
}
