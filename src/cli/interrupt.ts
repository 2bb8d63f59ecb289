import { constants } from 'node:os'
import { DeltaError, DeltaTable, type ObjectStore, openStore } from '../index.js'
import { type CommandContext, type OptionValues, openOptions } from './command.js'

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
  /**
   * @param signal - the signal received
   * @param removedFiles - staged data and deletion-vector files deleted again, once known
   * @param text - a message and hint of its own, for a command that stages nothing (VACUUM)
   */
  constructor(signal: StopSignal, removedFiles?: number, text?: { message: string; hint: string }) {
    super(
      text !== undefined
        ? `Interrupted by ${signal}: ${text.message}`
        : removedFiles === undefined
          ? `Interrupted by ${signal}`
          : `Interrupted by ${signal}: removed ${removedFiles} staged data file${removedFiles === 1 ? '' : 's'}; nothing was committed`,
      { hint: text?.hint ?? 'The table is unchanged. Run the command again to write the input.' },
    )
    this.signal = signal
    this.removedFiles = removedFiles
  }

  /** 128 plus the signal number. */
  get exitCode(): number {
    return 128 + constants.signals[this.signal]
  }
}

/** What a command's table handle stored and deleted, seen at its store. */
export interface StoreWrites {
  /** Objects outside the log that were stored and then deleted again (staged files undone). */
  readonly removed: number
  /** Objects deleted, whoever stored them. */
  readonly deleted: number
}

/**
 * Opens a table whose store reports what the command stores and deletes, so an interrupted
 * command can say how many staged files the operation's undo removed (those its data writer
 * removed half-way included) and VACUUM how many files it deleted before it stopped.
 *
 * @param location - the table location
 * @param values - the parsed options (`--conflicts`)
 * @returns the open table and the live counts
 */
export async function openWatchedTable(
  location: string,
  values: OptionValues,
): Promise<{ table: DeltaTable; writes: StoreWrites }> {
  const stored = new Set<string>()
  const writes = { removed: 0, deleted: 0 }
  const store = openStore(location)
  const watched = new Proxy(store, {
    get(target, prop) {
      if (prop === 'put') {
        return async (...args: Parameters<ObjectStore['put']>): Promise<void> => {
          await target.put(...args)
          if (!args[0].startsWith('_delta_log/')) stored.add(args[0])
        }
      }
      if (prop === 'delete') {
        return async (...args: Parameters<ObjectStore['delete']>): Promise<void> => {
          await target.delete(...args)
          writes.deleted++
          if (stored.delete(args[0])) writes.removed++
        }
      }
      const value: unknown = Reflect.get(target, prop, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
  const table = await DeltaTable.open(location, { ...openOptions(values), storage: watched })
  return { table, writes }
}

/**
 * Runs a command's operation so that SIGINT and SIGTERM (`ctx.io.interrupt`) stop it cleanly:
 * the signal goes to `run`, which passes it to the table API, and a stop becomes the
 * {@link InterruptedError} that `stopped` builds. While `run` is going the CLI does not end the
 * process on the first signal, so an operation always gets to undo its staged files, and a
 * commit that has started completes (`late` then says what happened).
 *
 * @param ctx - the command context
 * @param run - the operation, given the signal to stop it with
 * @param stopped - the report of a stop, given the signal
 * @param late - the note printed when the signal came too late to stop the operation
 * @returns what `run` returned
 * @throws {InterruptedError} when a stop signal ended the operation
 */
export async function runStoppable<T>(
  ctx: CommandContext,
  run: (signal: AbortSignal | undefined) => Promise<T>,
  stopped: (signal: StopSignal) => InterruptedError,
  late: (result: T) => string,
): Promise<T> {
  const interrupt = ctx.io.interrupt
  // A listener keeps main from exiting on the first signal: the operation ends on its own.
  const hold = (): void => {}
  interrupt?.addEventListener('abort', hold, { once: true })
  try {
    const result = await run(interrupt)
    if (interrupt?.aborted) ctx.io.stderr.write(`${ctx.err.paint('yellow', 'note')}: ${late(result)}\n`)
    return result
  } catch (err) {
    if (interrupt?.aborted !== true) throw err
    // The table API rejects with the reason itself; a store call the signal reached, with an AbortError.
    const isStop = err === interrupt.reason || (err instanceof Error && err.name === 'AbortError')
    if (!isStop) throw err
    const reason: unknown = interrupt.reason
    throw stopped(reason instanceof InterruptedError ? reason.signal : 'SIGINT')
  } finally {
    interrupt?.removeEventListener('abort', hold)
  }
}

/**
 * {@link runStoppable} for an operation that stages files and commits them (DELETE, UPDATE,
 * MERGE, OPTIMIZE): a stop says how many staged files were removed again.
 *
 * @param ctx - the command context
 * @param writes - the counts of {@link openWatchedTable}
 * @param run - the operation, given the signal to stop it with
 * @returns the commit
 * @throws {InterruptedError} when a stop signal ended the operation before its commit
 */
export function runCommitting<T extends { readonly version: bigint }>(
  ctx: CommandContext,
  writes: StoreWrites,
  run: (signal: AbortSignal | undefined) => Promise<T>,
): Promise<T> {
  return runStoppable(
    ctx,
    run,
    (signal) => new InterruptedError(signal, writes.removed),
    (result) => `the interrupt came while committing; the commit completed (version ${result.version})`,
  )
}
