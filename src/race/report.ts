/**
 * The result of a race: one run, or two with `compare` (reconciliation off, then on).
 */
import type { ExitEvent } from './events.js'
import {
  comparisonHeadline,
  comparisonNotes,
  type GlossaryEntry,
  glossaryFor,
  type RunFigures,
  runHeadline,
} from './glossary.js'
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

/**
 * The figures of a run that the headline and the notes compare.
 *
 * @param run - one run of a race
 * @returns its attempts, commits, aborts, reconciliations and median commit latency
 */
export function runFigures(run: RaceRunReport): RunFigures {
  const t = run.stats.totals
  return {
    attempts: t.attempts,
    commits: t.commits + t.alreadyCommitted,
    aborts: t.aborts,
    reconciliations: t.reconciliations,
    p50Ms: t.p50Ms,
  }
}

/**
 * The one-line headline of a race: both runs of a `compare` race, or the single run.
 *
 * @param report - what {@link runRace} returned
 * @returns the headline, measured numbers only
 */
export function reportHeadline(report: RaceReport): string {
  const [off, on] = report.runs
  if (off === undefined) return 'no runs'
  if (report.compare && on !== undefined) return comparisonHeadline(runFigures(off), runFigures(on))
  return runHeadline(off.label, runFigures(off))
}

/**
 * The glossary entries for the reconciliation cases and abort codes that occurred in any run.
 *
 * @param report - what {@link runRace} returned
 * @returns the entries, in print order
 */
export function reportGlossary(report: RaceReport): GlossaryEntry[] {
  return glossaryFor(
    report.runs.flatMap((r) => Object.keys(r.stats.totals.reconciliationsByCase)),
    report.runs.flatMap((r) => Object.keys(r.stats.totals.abortsByCode)),
  )
}

/**
 * The notes on a row-level run's numbers that look odd (see {@link comparisonNotes}); none for a
 * file-level run alone.
 *
 * @param report - what {@link runRace} returned
 * @returns the notes, possibly none
 */
export function reportNotes(report: RaceReport): string[] {
  const [off, on] = report.runs
  if (off === undefined) return []
  if (report.compare && on !== undefined) return comparisonNotes(runFigures(on), runFigures(off))
  return off.config.conflictsLabel === 'none' ? [] : comparisonNotes(runFigures(off))
}
