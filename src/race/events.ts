/**
 * The race's event log: one JSON object per line. Writers append their own file and flush every
 * line to disk before going on, so that a writer killed with SIGKILL leaves every event it
 * logged; the harness merges the files, behind a header holding the configuration, into the
 * run's `events.jsonl`, which is all the verifier needs besides the table.
 */
import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { InvalidArgumentError } from '../index.js'
import type { RaceConfig } from './options.js'
import type { OpKind } from './plan.js'

/** The first line of a run's event log. */
export interface RunEvent {
  readonly type: 'run'
  readonly t: number
  readonly config: RaceConfig
  /** The table version holding the initial rows; the writers start after it. */
  readonly initialVersion: number
}

/** A reconciliation as logged. */
export interface LoggedReconciliation {
  readonly kind: string
  readonly winnerVersion: number
  readonly winnerOperation: string | undefined
}

/** An operation is about to start (logged before anything touches the table). */
export interface OpStartEvent {
  readonly type: 'op-start'
  readonly t: number
  readonly writer: number
  readonly seq: number
  readonly kind: OpKind
  /** Which run of this operation: 0, then 1, 2... after restarts and retries. */
  readonly try: number
}

/** How an attempt ended. */
export type AttemptOutcome =
  /** `commit()` returned: the commit is acknowledged. */
  | 'committed'
  /** The transaction threw: conflict, storage fault, or anything else. */
  | 'aborted'
  /** The idempotency marker showed the operation already landed (an earlier, killed or failed try). */
  | 'already-committed'
  /** The transaction had nothing to commit (an OPTIMIZE with nothing to compact): no version. */
  | 'no-op'

/** One attempt of one operation: the JSON line the issue asks for. */
export interface AttemptEvent {
  readonly type: 'attempt'
  readonly t: number
  readonly writer: number
  readonly seq: number
  readonly try: number
  readonly kind: OpKind
  /** The operation's parameters: its keys (or their count and first key), delta, tag. */
  readonly params: Readonly<Record<string, unknown>>
  /** The version the transaction read, when it got that far. */
  readonly readVersion: number | undefined
  readonly outcome: AttemptOutcome
  /** The committed version (`committed`). */
  readonly version?: number | undefined
  /** The commit's `commitInfo.txnId` (`committed`). */
  readonly txnId?: string | undefined
  /** The error code (`aborted`). */
  readonly code?: string | undefined
  readonly message?: string | undefined
  /** For a conflict: the winning commit. */
  readonly winnerVersion?: number | undefined
  readonly winnerOperation?: string | undefined
  /** For a conflict: the check that failed and why a reconciliation was refused. */
  readonly check?: string | undefined
  readonly reconcileRefused?: string | undefined
  /** Whether the error leaves the outcome unknown (an ambiguous storage error). */
  readonly ambiguous?: boolean | undefined
  /** Put attempts of the commit loop (1 when nobody committed in between). */
  readonly attempts: number
  readonly reconciliations: readonly LoggedReconciliation[]
  /** Wall-clock ms since the epoch: start, read snapshot taken, commit called, end. */
  readonly startedAt: number
  readonly commitStartedAt?: number | undefined
  readonly endedAt: number
}

/** A writer is about to kill itself with SIGKILL (fault injection). */
export interface KillEvent {
  readonly type: 'kill'
  readonly t: number
  readonly writer: number
  readonly seq: number
  readonly try: number
  /** When in the operation: before-data, after-data, before-log-put or after-log-put. */
  readonly moment: KillMoment
}

/** The moments of an operation a kill fault can hit. */
export type KillMoment = 'before-data' | 'after-data' | 'before-log-put' | 'after-log-put'

/** The harness saw a writer process exit. */
export interface ExitEvent {
  readonly type: 'exit'
  readonly t: number
  readonly writer: number
  readonly pid: number | undefined
  readonly code: number | null
  readonly signal: string | null
  /** Whether the harness starts the writer again. */
  readonly restart: boolean
  /**
   * The writer killed itself as a fault (its last event is a `kill`); such an exit is never a
   * crash, even when it came too late in the run to be restarted.
   */
  readonly faultKill?: boolean | undefined
  /** The end of the writer's standard error, for a crash. */
  readonly stderr?: string | undefined
}

/** A writer finished its loop normally. */
export interface WriterDoneEvent {
  readonly type: 'writer-done'
  readonly t: number
  readonly writer: number
  readonly nextSeq: number
}

/** Anything in a race event log. */
export type RaceEvent = RunEvent | OpStartEvent | AttemptEvent | KillEvent | ExitEvent | WriterDoneEvent

/**
 * Appends events to a JSONL file, each flushed to disk before `write` returns.
 */
export class EventSink {
  readonly path: string
  #fd: number | undefined

  /**
   * Opens (creating or appending to) the file.
   *
   * @param path - the JSONL file
   */
  constructor(path: string) {
    this.path = path
    this.#fd = openSync(path, 'a')
  }

  /**
   * Writes one event and waits for it to reach the disk.
   *
   * @param event - the event
   */
  write(event: RaceEvent): void {
    if (this.#fd === undefined) return
    writeSync(this.#fd, `${JSON.stringify(event)}\n`)
    fsyncSync(this.#fd)
  }

  /** Closes the file. Idempotent. */
  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd)
    this.#fd = undefined
  }
}

/**
 * Reads a JSONL event file. A torn last line (a writer killed mid-write) is ignored; a torn line
 * anywhere else is an error.
 *
 * @param path - the file
 * @returns the events in file order
 * @throws {InvalidArgumentError} when a line other than the last is not JSON
 */
export async function readEvents(path: string): Promise<RaceEvent[]> {
  const text = await readFile(path, 'utf8')
  const lines = text.split('\n')
  const out: RaceEvent[] = []
  for (const [i, line] of lines.entries()) {
    if (line.trim() === '') continue
    try {
      out.push(JSON.parse(line) as RaceEvent)
    } catch (err) {
      // Only an unterminated last line can be torn.
      if (i === lines.length - 1) continue
      throw new InvalidArgumentError(`Line ${i + 1} of the event log ${path} is not JSON`, {
        argument: 'eventsPath',
        cause: err,
        hint: 'Pass the events.jsonl a race wrote.',
      })
    }
  }
  return out
}

/**
 * Where a writer's events go: one JSON-lines file per writer in the race's output directory.
 *
 * @param config - the race
 * @param writer - the writer's index
 * @returns the file's path
 */
export function writerEventsPath(config: RaceConfig, writer: number): string {
  return join(config.outDir, `events-w${writer}.jsonl`)
}
