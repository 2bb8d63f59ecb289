/**
 * The result of a race: one run, or two with `compare` (reconciliation off, then on).
 */
import type { ExitEvent } from './events.js'
import type { RaceConfig } from './options.js'
import type { RunStats } from './stats.js'
import type { VerifyReport } from './verify.js'

/** One run of the race on one table. */
export interface RaceRunReport {
  /** `file-level` (conflicts none), `row-level` (conflicts all) or the conflicts list. */
  readonly label: string
  readonly config: RaceConfig
  /** The run's merged event log. */
  readonly eventsPath: string
  /** The version holding the initial rows. */
  readonly initialVersion: number
  readonly stats: RunStats
  /** Writer processes that exited abnormally (not a kill fault): these are failures. */
  readonly crashes: readonly ExitEvent[]
  /** Writer restarts after kill faults. */
  readonly restarts: number
  /** The verifier's report, unless verification was turned off. */
  readonly verify?: VerifyReport | undefined
}

/** What {@link runRace} returns. */
export interface RaceReport {
  readonly runs: readonly RaceRunReport[]
  /** Whether this was a `compare` race (runs[0] file-level, runs[1] row-level). */
  readonly compare: boolean
  /** Every run verified and no writer crashed. */
  readonly ok: boolean
  /** Where the HTML and JSON reports were written. */
  readonly htmlPath?: string | undefined
  readonly jsonPath?: string | undefined
}

/**
 * A label for a `conflicts` setting.
 *
 * @param conflictsLabel - `all`, `none` or a list
 * @returns `row-level`, `file-level` or `row-level (<list>)`
 */
export function labelOf(conflictsLabel: string): string {
  if (conflictsLabel === 'none') return 'file-level'
  if (conflictsLabel === 'all') return 'row-level'
  return `row-level (${conflictsLabel})`
}
