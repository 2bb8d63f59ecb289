import { DeltaError } from './delta-error.js'

/** A caller passed a value the library cannot accept (bad option, bad path, bad schema). */
export class InvalidArgumentError extends DeltaError {
  readonly code = 'DELTA_INVALID_ARGUMENT'
  /** The argument or option at fault, when known. */
  readonly argument: string | undefined
  constructor(message: string, options?: { argument?: string; cause?: unknown; hint?: string }) {
    super(message, options)
    this.argument = options?.argument
  }
}

/** A request that is valid Delta but that this library does not implement. */
export class UnsupportedError extends DeltaError {
  readonly code = 'DELTA_UNSUPPORTED'
}

/** An invariant of the library itself broke. This is a bug: please report it. */
export class InternalError extends DeltaError {
  readonly code = 'DELTA_INTERNAL'
  constructor(message: string, options?: { cause?: unknown }) {
    super(`Internal error: ${message}. This is a bug in delta-rlc, please report it.`, options)
  }
}
