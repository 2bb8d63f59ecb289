/**
 * The race: a multi-writer race of real OS processes on one table that proves row-level
 * concurrency, with fault injection, a verifier that replays the committed operations on a model,
 * and terminal and HTML reports.
 *
 * ### Examples
 * ```ts
 * import { renderTerminalReport, runRace } from './race/index.js'
 * const report = await runRace({ location: '/tmp/race-table', durationMs: 10_000, compare: true })
 * process.stdout.write(renderTerminalReport(report))
 * ```
 */
export type {
  AttemptEvent,
  AttemptOutcome,
  ExitEvent,
  KillEvent,
  KillMoment,
  LoggedReconciliation,
  OpStartEvent,
  RaceEvent,
  RunEvent,
  WriterDoneEvent,
} from './events.js'
export { readEvents } from './events.js'
export { type RaceIo, runRace } from './harness.js'
export {
  CONFLICT_CASE_FLAGS,
  DEFAULT_WRITER_MIX,
  type FaultRates,
  type KeyOverlap,
  NO_FAULTS,
  parseFaultRates,
  parseRaceConflicts,
  parseWriterMix,
  type RaceConfig,
  type RaceConflicts,
  type RaceIsolationLevel,
  type RaceOptions,
  resolveRaceConfig,
  WRITER_KINDS,
  type WriterKind,
  type WriterSpec,
} from './options.js'
export { type PlannedOp, planOperation, RACE_SCHEMA } from './plan.js'
export { labelOf, type RaceReport, type RaceRunReport } from './report.js'
export { renderHtmlReport } from './report-html.js'
export { renderTerminalReport } from './report-terminal.js'
export type { RunStats, TimelineEntry, WriterStats } from './stats.js'
export {
  type AbortClass,
  type AbortExplanation,
  CONFLICT_CODES,
  type Divergence,
  type VerifyCheck,
  type VerifyOptions,
  type VerifyReport,
  verifyRace,
} from './verify.js'
