/**
 * Statistics of a race, computed from its event log alone: per writer and in total, commits,
 * aborts by error code, reconciliations by case, retries, kills and latency percentiles, plus
 * the attempt timeline the HTML report draws.
 */
import { maxOf, minOf } from '../util/arrays.js'
import type { AttemptEvent, RaceEvent } from './events.js'
import type { WriterKind, WriterSpec } from './options.js'

/** Counters and latencies of one writer, or of all of them. */
export interface WriterStats {
  /** Writer index; -1 for the totals. */
  readonly writer: number
  /** The writer's kind; `total` for the totals. */
  readonly kind: WriterKind | 'total'
  /** Attempts that reached an outcome (committed, aborted, or found already committed). */
  readonly attempts: number
  /** Acknowledged commits. */
  readonly commits: number
  /** Tries that found their operation already committed by an earlier try. */
  readonly alreadyCommitted: number
  /** Transactions with nothing to commit (OPTIMIZE with nothing to compact). */
  readonly noOps: number
  readonly aborts: number
  readonly abortsByCode: Readonly<Record<string, number>>
  readonly reconciliations: number
  readonly reconciliationsByCase: Readonly<Record<string, number>>
  /** Lost put races the commit loop checked and retried (sum of attempts - 1 over commits). */
  readonly retries: number
  /** Operations tried again after a storage failure or a kill. */
  readonly opRetries: number
  /** Kill faults (SIGKILL) the writer took. */
  readonly kills: number
  /** Commit latency percentiles over acknowledged commits, ms (start of transaction to acknowledgement). */
  readonly p50Ms: number
  readonly p99Ms: number
  /** Mean commits per second over the run's wall time. */
  readonly commitsPerSecond: number
}

/** One attempt on the report's timeline. */
export interface TimelineEntry {
  readonly writer: number
  readonly seq: number
  readonly kind: string
  /** Offsets from the run's start, ms. */
  readonly start: number
  readonly end: number
  readonly outcome: 'committed' | 'aborted' | 'already-committed' | 'no-op' | 'killed'
  readonly version?: number | undefined
  readonly code?: string | undefined
  readonly reconciliations: readonly string[]
}

/** Statistics of a whole run. */
export interface RunStats {
  readonly writers: readonly WriterStats[]
  readonly totals: WriterStats
  readonly timeline: readonly TimelineEntry[]
  /** First and last event times, ms since the epoch. */
  readonly startedAt: number
  readonly endedAt: number
}

/**
 * Computes a run's statistics from its events.
 *
 * @param writers - the run's writers
 * @param events - the run's events (any order)
 * @returns per-writer and total statistics and the timeline
 */
export function computeRunStats(writers: readonly WriterSpec[], events: readonly RaceEvent[]): RunStats {
  const starts = events.filter((e) => e.type === 'op-start').map((e) => e.t)
  const startedAt = starts.length > 0 ? minOf(starts) : (events[0]?.t ?? 0)
  const endedAt = maxOf(
    events.map((e) => e.t),
    startedAt,
  )
  const wallSeconds = Math.max(0.001, (endedAt - startedAt) / 1000)
  const attempts = events.filter((e): e is AttemptEvent => e.type === 'attempt')
  const per = writers.map((w) =>
    statsOf(
      w.index,
      w.kind,
      attempts.filter((a) => a.writer === w.index),
      events.filter((e) => e.type === 'kill' && e.writer === w.index).length,
      wallSeconds,
    ),
  )
  const totals = statsOf(-1, 'total', attempts, events.filter((e) => e.type === 'kill').length, wallSeconds)
  const timeline: TimelineEntry[] = attempts.map((a) => ({
    writer: a.writer,
    seq: a.seq,
    kind: a.kind,
    start: a.startedAt - startedAt,
    end: a.endedAt - startedAt,
    outcome: a.outcome,
    version: a.version,
    code: a.code,
    reconciliations: a.reconciliations.map((r) => r.kind),
  }))
  for (const e of events) {
    if (e.type !== 'kill') continue
    const start = events.find(
      (s) => s.type === 'op-start' && s.writer === e.writer && s.seq === e.seq && s.try === e.try,
    )
    timeline.push({
      writer: e.writer,
      seq: e.seq,
      kind: start?.type === 'op-start' ? start.kind : 'unknown',
      start: (start?.t ?? e.t) - startedAt,
      end: e.t - startedAt,
      outcome: 'killed',
      code: e.moment,
      reconciliations: [],
    })
  }
  timeline.sort((a, b) => a.start - b.start)
  return { writers: per, totals, timeline, startedAt, endedAt }
}

/**
 * The `p`-th percentile (nearest rank) of `values`.
 *
 * @param values - the sample
 * @param p - in [0, 100]
 * @returns the percentile, 0 for an empty sample
 */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0
  const sorted = [...values].sort((a, b) => a - b)
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)))
  return sorted[rank - 1] as number
}

function statsOf(
  writer: number,
  kind: WriterKind | 'total',
  attempts: readonly AttemptEvent[],
  kills: number,
  wallSeconds: number,
): WriterStats {
  const abortsByCode: Record<string, number> = {}
  const reconciliationsByCase: Record<string, number> = {}
  const latencies: number[] = []
  let commits = 0
  let alreadyCommitted = 0
  let noOps = 0
  let aborts = 0
  let reconciliations = 0
  let retries = 0
  let opRetries = 0
  for (const a of attempts) {
    if (a.try > 0) opRetries++
    if (a.outcome === 'committed') {
      commits++
      retries += Math.max(0, a.attempts - 1)
      latencies.push(a.endedAt - a.startedAt)
      for (const r of a.reconciliations) {
        reconciliations++
        reconciliationsByCase[r.kind] = (reconciliationsByCase[r.kind] ?? 0) + 1
      }
    } else if (a.outcome === 'already-committed') {
      alreadyCommitted++
    } else if (a.outcome === 'no-op') {
      noOps++
    } else {
      aborts++
      const code = a.code ?? 'UNKNOWN'
      abortsByCode[code] = (abortsByCode[code] ?? 0) + 1
    }
  }
  return Object.freeze({
    writer,
    kind,
    attempts: attempts.length,
    commits,
    alreadyCommitted,
    noOps,
    aborts,
    abortsByCode,
    reconciliations,
    reconciliationsByCase,
    retries,
    opRetries,
    kills,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    commitsPerSecond: commits / wallSeconds,
  })
}
