/**
 * Contention goodput: the race's seeded writer mix (real writer processes on one local table)
 * for a fixed time, once with reconciliation off (file-level Delta) and once with every
 * reconciliation on, through `runRace` with `compare`.
 *
 * A row's times are milliseconds of wall time per committed operation (lower is better), so its
 * ratio is row-level over file-level, which is file-level goodput over row-level goodput; the
 * goodputs themselves, the aborts and the wasted work (time spent in attempts that aborted) are
 * in the extra figures, and `goodputRatio` is row-level goodput over file-level goodput.
 */
import { join } from 'node:path'
import { type RaceRunReport, runRace } from '../src/race/index.js'
import { type BenchResult, peakRssMiB, round, withTempDir } from './harness.js'

/**
 * Runs the contention benchmark.
 *
 * @param quick - a short smoke run
 * @returns one row per key overlap
 */
export async function contentionBenchmarks(quick: boolean): Promise<BenchResult[]> {
  const seconds = quick ? 4 : 45
  const out: BenchResult[] = []
  for (const overlap of quick ? (['disjoint'] as const) : (['disjoint', 'hot'] as const)) {
    await withTempDir('contention', async (root) => {
      const report = await runRace({
        location: join(root, 'race'),
        outDir: join(root, 'out'),
        compare: true,
        durationMs: seconds * 1000,
        overlap,
        seed: 7,
        rows: quick ? 2_000 : 20_000,
        verify: false,
      })
      const [off, on] = report.runs
      if (off === undefined || on === undefined) return
      const a = figures(off)
      const b = figures(on)
      out.push({
        name: 'contention.goodput',
        parameters: { writers: on.config.writers.length, seconds, overlap },
        medianMs: round(b.msPerCommit),
        minMs: round(b.msPerCommit),
        maxMs: round(b.msPerCommit),
        runs: 1,
        baselineMedianMs: round(a.msPerCommit),
        baseline: 'the same seeded race with reconciliation off (ms of wall time per committed op)',
        ratio: round(b.msPerCommit / a.msPerCommit),
        peakRssMiB: peakRssMiB(),
        extra: {
          goodputOn: round(b.goodput),
          goodputOff: round(a.goodput),
          goodputRatio: round(b.goodput / a.goodput),
          commitsOn: b.commits,
          commitsOff: a.commits,
          abortsOn: b.aborts,
          abortsOff: a.aborts,
          wastedSecOn: round(b.wastedMs / 1000),
          wastedSecOff: round(a.wastedMs / 1000),
          reconciliationsOn: b.reconciliations,
        },
      })
    })
  }
  return out
}

interface RunFigures {
  readonly commits: number
  readonly aborts: number
  readonly reconciliations: number
  /** Committed operations per second of the run's wall time. */
  readonly goodput: number
  readonly msPerCommit: number
  /** Time spent in attempts that aborted, summed over writers, ms. */
  readonly wastedMs: number
}

function figures(run: RaceRunReport): RunFigures {
  const totals = run.stats.totals
  const wallMs = Math.max(1, run.stats.endedAt - run.stats.startedAt)
  const wastedMs = run.stats.timeline
    .filter((t) => t.outcome === 'aborted')
    .reduce((sum, t) => sum + (t.end - t.start), 0)
  const goodput = totals.commits / (wallMs / 1000)
  return {
    commits: totals.commits,
    aborts: totals.aborts,
    reconciliations: totals.reconciliations,
    goodput,
    msPerCommit: totals.commits > 0 ? wallMs / totals.commits : Number.POSITIVE_INFINITY,
    wastedMs,
  }
}
