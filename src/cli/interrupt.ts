import { constants } from 'node:os'
import { DeltaError } from '../index.js'

/** The signals the CLI stops cleanly on. */
export type StopSignal = 'SIGINT' | 'SIGTERM'

/**
 * The command was stopped by SIGINT or SIGTERM before it committed. It is also the reason the
 * CLI aborts a running operation with, so the operation's undo path sees where it came from.
 * The exit status is 128 plus the signal number, as a shell reports a process the signal ended
 * (130 for SIGINT, 143 for SIGTERM).
 */
export class InterruptedError extends DeltaError {
  readonly code = 'DELTA_INTERRUPTED'
  /** The signal received. */
  readonly signal: StopSignal
  /** Data files that had been staged and were deleted again, once known. */
  readonly removedFiles: number | undefined
  constructor(signal: StopSignal, removedFiles?: number) {
    super(
      removedFiles === undefined
        ? `Interrupted by ${signal}`
        : `Interrupted by ${signal}: removed ${removedFiles} staged data file${removedFiles === 1 ? '' : 's'}; nothing was committed`,
      { hint: 'The table is unchanged. Run the command again to write the input.' },
    )
    this.signal = signal
    this.removedFiles = removedFiles
  }

  /** 128 plus the signal number. */
  get exitCode(): number {
    return 128 + constants.signals[this.signal]
  }
}
