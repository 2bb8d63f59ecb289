/**
 * A small benchmark harness: each benchmark runs its subject and its baseline in the same
 * process, several times, and reports medians and their ratio. No timing is ever asserted.
 *
 * A row names its size parameter (`sizeParameter`), so that {@link scalingLines} can say how a
 * cost grows from one size to the next.
 */
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import os, { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { DeltaTable } from '../src/table/delta-table.js'
import { maxOf, minOf } from '../src/util/arrays.js'

/** One measured row. */
export interface BenchResult {
  readonly name: string
  readonly parameters: Readonly<Record<string, string | number>>
  /** The parameter whose growth the row's family tracks (rows of one name differ in it). */
  readonly sizeParameter?: string | undefined
  /**
   * The family the row's growth is tracked in, when rows of one name form several (one per
   * store, say); the name when absent.
   */
  readonly family?: string | undefined
  /** Median, min and max wall time of the subject, ms. */
  readonly medianMs: number
  readonly minMs: number
  readonly maxMs: number
  /** Number of timed runs behind the median. */
  readonly runs: number
  /** Median wall time of the baseline, ms. */
  readonly baselineMedianMs: number
  readonly baseline: string
  /** subject / baseline (lower is better; 1.0 = as fast as the baseline). */
  readonly ratio: number
  /** Peak resident set size of the benchmark process so far, MiB (each suite runs in its own process). */
  readonly peakRssMiB: number
  /** Extra figures (throughput, counts, percentiles). */
  readonly extra: Readonly<Record<string, string | number>>
}

/** Options of {@link timeRuns}. */
export interface TimeRunsOptions {
  /** Untimed runs first, so the timed ones see warm code and caches (default 0). */
  readonly warmup?: number | undefined
  /** Untimed set-up before every run, warm-ups included (e.g. restoring a table). */
  readonly before?: (() => Promise<unknown>) | undefined
}

/**
 * Runs `fn` `runs` times and returns the wall times.
 *
 * @param runs - timed runs (at least 1)
 * @param fn - the work to time
 * @param options - warm-up runs and untimed set-up
 * @returns the wall time of each timed run, ms
 */
export async function timeRuns(
  runs: number,
  fn: () => Promise<unknown>,
  options: TimeRunsOptions = {},
): Promise<number[]> {
  const times: number[] = []
  const warmup = options.warmup ?? 0
  for (let i = 0; i < warmup + runs; i++) {
    await options.before?.()
    const t0 = performance.now()
    await fn()
    const dt = performance.now() - t0
    if (i >= warmup) times.push(dt)
  }
  return times
}

/** Options of {@link timeBoth}. */
export interface TimeBothOptions {
  /** Untimed rounds first (default 0). */
  readonly warmup?: number | undefined
  /** Untimed set-up before every subject run (e.g. restoring a table). */
  readonly beforeSubject?: (() => Promise<unknown>) | undefined
}

/**
 * Times a subject and its baseline in alternation, one run of each per round, so that both see
 * the same machine: on a shared machine, load that comes and goes then skews both alike and the
 * ratio stays meaningful.
 *
 * @param runs - timed rounds (at least 1)
 * @param subject - the code under test
 * @param baseline - what it is compared with
 * @param options - warm-up rounds and untimed set-up
 * @returns the wall times of the subject and of the baseline, ms
 */
export async function timeBoth(
  runs: number,
  subject: () => Promise<unknown>,
  baseline: () => Promise<unknown>,
  options: TimeBothOptions = {},
): Promise<[number[], number[]]> {
  const ours: number[] = []
  const theirs: number[] = []
  const warmup = options.warmup ?? 0
  for (let i = 0; i < warmup + runs; i++) {
    await options.beforeSubject?.()
    let t0 = performance.now()
    await subject()
    const a = performance.now() - t0
    t0 = performance.now()
    await baseline()
    const b = performance.now() - t0
    if (i >= warmup) {
      ours.push(a)
      theirs.push(b)
    }
  }
  return [ours, theirs]
}

/**
 * Median of a list.
 *
 * @param xs - the sample
 * @returns its median, NaN for an empty sample
 */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN
  const s = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2
}

/**
 * The `p`-th percentile of a sample, nearest rank.
 *
 * @param xs - the sample
 * @param p - in [0, 100]
 * @returns the percentile, NaN for an empty sample
 */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return Number.NaN
  const s = [...xs].sort((a, b) => a - b)
  const rank = Math.min(s.length, Math.max(1, Math.ceil((p / 100) * s.length)))
  return s[rank - 1] as number
}

/** What {@link result} needs besides the timings. */
export interface ResultOptions {
  /** The parameter that is the size of the row's family. */
  readonly sizeParameter?: string | undefined
  /** The row's growth family when the name has several (see {@link BenchResult.family}). */
  readonly family?: string | undefined
  readonly extra?: Record<string, string | number> | undefined
}

/**
 * Builds a result row from subject and baseline timings.
 *
 * @param name - the benchmark's name; rows of one name form a family over sizes
 * @param parameters - what was measured (sizes, shares, modes)
 * @param subject - the subject's wall times, ms
 * @param baseline - what the baseline is, in words
 * @param baselineTimes - the baseline's wall times, ms
 * @param options - size parameter and extra figures
 * @returns the row
 */
export function result(
  name: string,
  parameters: Record<string, string | number>,
  subject: readonly number[],
  baseline: string,
  baselineTimes: readonly number[],
  options: ResultOptions = {},
): BenchResult {
  const m = median(subject)
  const b = median(baselineTimes)
  return {
    name,
    parameters,
    sizeParameter: options.sizeParameter,
    ...(options.family === undefined ? {} : { family: options.family }),
    medianMs: round(m),
    minMs: round(minOf(subject)),
    maxMs: round(maxOf(subject)),
    runs: subject.length,
    baselineMedianMs: round(b),
    baseline,
    ratio: round(m / b),
    peakRssMiB: peakRssMiB(),
    extra: options.extra ?? {},
  }
}

/**
 * Peak resident set size of this process so far.
 *
 * @returns MiB, two decimals
 */
export function peakRssMiB(): number {
  return round(process.resourceUsage().maxRSS / 1024)
}

/**
 * Rounds to two decimals (three significant digits for small values), for readable rows.
 *
 * @param x - a number
 * @returns the rounded number
 */
export function round(x: number): number {
  if (!Number.isFinite(x)) return x
  if (Math.abs(x) < 1 && x !== 0) return Number(x.toPrecision(3))
  return Math.round(x * 100) / 100
}

/**
 * Prints a row as it is measured.
 *
 * @param r - the row
 */
export function printRow(r: BenchResult): void {
  const params = Object.entries(r.parameters)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ')
  const extra = Object.entries(r.extra)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ')
  console.log(
    `${r.name.padEnd(26)} ${params.padEnd(40)} median ${String(r.medianMs).padStart(9)} ms  ` +
      `baseline ${String(r.baselineMedianMs).padStart(9)} ms  ratio ${String(r.ratio).padStart(6)}  ` +
      `rss ${r.peakRssMiB} MiB  ${extra}`,
  )
}

/**
 * How each family's cost grows with its size parameter: one line per size, with the growth
 * exponent from the previous size (1.0 = linear, 0 = constant, 2 = quadratic), for the subject
 * and for its baseline. Rows group by family (their name unless they name one).
 *
 * @param results - every row
 * @returns printable lines, families in first-seen order
 */
export function scalingLines(results: readonly BenchResult[]): string[] {
  const families = new Map<string, BenchResult[]>()
  for (const r of results) {
    if (r.sizeParameter === undefined) continue
    const family = r.family ?? r.name
    const list = families.get(family) ?? []
    list.push(r)
    families.set(family, list)
  }
  const lines: string[] = []
  for (const [name, rows] of families) {
    const key = rows[0]?.sizeParameter as string
    const sized = rows
      .map((r) => ({ r, size: Number(r.parameters[key]) }))
      .filter((x) => Number.isFinite(x.size) && x.size > 0)
      .sort((a, b) => a.size - b.size)
    let prev: { r: BenchResult; size: number } | undefined
    for (const cur of sized) {
      const other = Object.entries(cur.r.parameters)
        .filter(([k]) => k !== key)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ')
      const growth = prev === undefined ? '' : `  growth x${exponent(prev, cur, 'medianMs')}`
      const baseGrowth = prev === undefined ? '' : ` (baseline x${exponent(prev, cur, 'baselineMedianMs')})`
      lines.push(
        `${name.padEnd(26)} ${`${key}=${cur.size}`.padEnd(16)} ${other.padEnd(28)} ` +
          `${String(cur.r.medianMs).padStart(9)} ms  ${perUnit(cur.r.medianMs, cur.size)}/unit${growth}${baseGrowth}`,
      )
      prev = cur
    }
  }
  return lines
}

function exponent(
  a: { r: BenchResult; size: number },
  b: { r: BenchResult; size: number },
  field: 'medianMs' | 'baselineMedianMs',
): string {
  if (a.size === b.size || !(a.r[field] > 0) || !(b.r[field] > 0)) return '-'
  return (Math.log(b.r[field] / a.r[field]) / Math.log(b.size / a.size)).toFixed(2)
}

function perUnit(ms: number, size: number): string {
  const us = (ms * 1000) / size
  return us >= 1000 ? `${(us / 1000).toFixed(2)} ms` : `${us.toPrecision(3)} us`
}

/**
 * Writes all rows with the machine description.
 *
 * @param path - where (normally `bench/results/latest.json`)
 * @param results - the rows
 * @param quick - whether this was a `--quick` run
 */
export async function saveResults(
  path: string,
  results: readonly BenchResult[],
  quick: boolean,
): Promise<void> {
  await mkdir(dirname(path), { recursive: true })
  await writeFile(
    path,
    `${JSON.stringify({ date: new Date().toISOString(), quick, machine: machine(), results }, null, 2)}\n`,
  )
}

/**
 * The machine the numbers come from.
 *
 * @returns cores, CPU model, memory, Node version, OS, and the 1-minute load average now (the
 *   machine may be shared: a high load makes every figure noisier)
 */
export function machine(): Record<string, string | number | undefined> {
  return {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    memGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    os: `${os.type()} ${os.release()}`,
    loadAverage1m: round(os.loadavg()[0] ?? Number.NaN),
  }
}

/**
 * Runs `fn` with a fresh temporary directory and removes it afterwards.
 *
 * @param stem - a readable part of the directory name
 * @param fn - the work
 * @returns what `fn` returns
 */
export async function withTempDir<T>(stem: string, fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), `delta-rlc-bench-${stem}-`))
  try {
    return await fn(dir)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/**
 * A fresh copy of a prepared table, opened without checkpoints and with file-level aborts as the
 * open-source rules make them (no explanation of what would reconcile): each run of a conflict
 * benchmark starts from the same state.
 *
 * @param template - the prepared table's directory
 * @param conflicts - the reconciliations the copy runs with
 * @returns the opened copy; {@link disposeCopy} closes and deletes it
 */
export async function tableCopy(
  template: string,
  conflicts: 'all' | Readonly<Record<string, boolean>>,
): Promise<DeltaTable> {
  const dir = await mkdtemp(join(tmpdir(), 'delta-rlc-bench-run-'))
  await cp(template, join(dir, 't'), { recursive: true })
  return DeltaTable.open(join(dir, 't'), { conflicts, autoCheckpoint: false, explainConflicts: false })
}

/**
 * Closes a {@link tableCopy} and deletes it.
 *
 * @param table - the copy
 */
export async function disposeCopy(table: DeltaTable): Promise<void> {
  await table.close()
  await rm(join(table.location, '..'), { recursive: true, force: true })
}
