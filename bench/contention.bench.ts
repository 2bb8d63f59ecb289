/**
 * Contention goodput: the race's seeded writer mix (real writer processes on one local table)
 * for a fixed time, once with reconciliation off (file-level Delta) and once with every
 * reconciliation on, through `runRace` with `compare`.
 *
 * A row's times are milliseconds of wall time per committed operation (lower is better), so its
 * ratio is row-level over file-level, which is file-level goodput over row-level goodput; the
 * goodputs themselves, the aborts and the wasted work (time spent in attempts that aborted) are
 * in the extra figures, and `goodputRatio` is row-level goodput over file-level goodput.
 *
 * `contention.goodput-latency` runs the same mix where each writer's store requests take 20 ms
 * more (the race's `storeLatencyMs`: a delay store around the local table), the setting of
 * writers on separate machines sharing an object store, where an abort throws away a whole
 * operation and a reconciliation costs a few reads. There a writer runs an operation a conflict
 * aborted again (`conflictRetries`), as an application that must get its write done does, so
 * both runs do the same work and goodput counts completed operations: without retries the
 * file-level run would drop the DML that lose races and be credited for the cheap appends it
 * keeps.
 */
import { join } from 'node:path'
import { type RaceRunReport, runRace } from '../src/race/index.js'
import { type BenchResult, peakRssMiB, round, withTempDir } from './harness.js'

/** The added latency of every store request in `contention.goodput-latency`, ms. */
export const OBJECT_STORE_LATENCY_MS = 20

/** Runs of an operation after a conflict aborted it, in `contention.goodput-latency`. */
export const CONFLICT_RETRIES = 10

/**
 * Runs the contention benchmark on local disk.
 *
 * @param quick - a short smoke run
 * @returns one row per key overlap
 */
export async function contentionBenchmarks(quick: boolean): Promise<BenchResult[]> {
  const seconds = quick ? 2 : 45
  const out: BenchResult[] = []
  for (const overlap of quick ? (['disjoint'] as const) : (['disjoint', 'hot'] as const)) {
    const row = await compareRow('contention.goodput', overlap, seconds, quick, 0)
    if (row !== undefined) out.push(row)
  }
  return out
}

/**
 * Runs the contention benchmark where every store request of a writer takes
 * {@link OBJECT_STORE_LATENCY_MS} more (a delay store around the local table), as for writers on
 * separate machines sharing a table in an object store.
 *
 * @param quick - a short smoke run
 * @returns one row per key overlap
 */
export async function contentionLatencyBenchmarks(quick: boolean): Promise<BenchResult[]> {
  const seconds = quick ? 2 : 60
  const out: BenchResult[] = []
  for (const overlap of quick ? (['disjoint'] as const) : (['disjoint', 'hot'] as const)) {
    const row = await compareRow(
      'contention.goodput-latency',
      overlap,
      seconds,
      quick,
      OBJECT_STORE_LATENCY_MS,
    )
    if (row !== undefined) out.push(row)
  }
  return out
}

/** One seeded race with reconciliation off, then on, as one row. */
async function compareRow(
  name: string,
  overlap: 'disjoint' | 'hot',
  seconds: number,
  quick: boolean,
  storeLatencyMs: number,
): Promise<BenchResult | undefined> {
  return withTempDir('contention', async (root) => {
    const report = await runRace({
      location: join(root, 'race'),
      outDir: join(root, 'out'),
      // The smoke run of the latency race keeps three writers: each is a process to start.
      ...(quick && storeLatencyMs > 0 ? { writers: { append: 1, delete: 1, update: 1 } } : {}),
      compare: true,
      durationMs: seconds * 1000,
      overlap,
      seed: 7,
      rows: quick ? 2_000 : 20_000,
      verify: false,
      storeLatencyMs,
      ...(storeLatencyMs > 0 ? { conflictRetries: CONFLICT_RETRIES } : {}),
    })
    const [off, on] = report.runs
    if (off === undefined || on === undefined) return undefined
    const a = figures(off)
    const b = figures(on)
    return {
      name,
      parameters: {
        writers: on.config.writers.length,
        seconds,
        overlap,
        ...(storeLatencyMs > 0 ? { storeLatencyMs, conflictRetries: CONFLICT_RETRIES } : {}),
      },
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
        commitP50MsOn: round(b.p50Ms),
        commitP99MsOn: round(b.p99Ms),
        commitP50MsOff: round(a.p50Ms),
        commitP99MsOff: round(a.p99Ms),
      },
    }
  })
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
  /** Latency of acknowledged commits (start of transaction to acknowledgement), ms. */
  readonly p50Ms: number
  readonly p99Ms: number
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
    p50Ms: totals.p50Ms,
    p99Ms: totals.p99Ms,
  }
}
