/**
 * A tiny benchmark harness: each benchmark runs its subject and its baseline in the same
 * process, several times, and reports medians and their ratio. No timing is ever asserted.
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'

/** One measured row. */
export interface BenchResult {
  readonly name: string
  readonly parameters: Readonly<Record<string, string | number>>
  /** Median, min and max wall time of the subject, ms. */
  readonly medianMs: number
  readonly minMs: number
  readonly maxMs: number
  /** Median wall time of the baseline, ms. */
  readonly baselineMedianMs: number
  readonly baseline: string
  /** subject / baseline (lower is better; 1.0 = as fast as the baseline). */
  readonly ratio: number
  /** Peak resident set size of the process so far, MiB. */
  readonly peakRssMiB: number
  /** Extra figures (throughput, counts). */
  readonly extra: Readonly<Record<string, string | number>>
}

/** Runs `fn` `runs` times and returns the wall times in ms. */
export async function timeRuns(runs: number, fn: () => Promise<unknown>): Promise<number[]> {
  const times: number[] = []
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now()
    await fn()
    times.push(performance.now() - t0)
  }
  return times
}

/** Median of a non-empty list. */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2
}

/** Builds a result row from subject and baseline timings. */
export function result(
  name: string,
  parameters: Record<string, string | number>,
  subject: readonly number[],
  baseline: string,
  baselineTimes: readonly number[],
  extra: Record<string, string | number> = {},
): BenchResult {
  const m = median(subject)
  const b = median(baselineTimes)
  return {
    name,
    parameters,
    medianMs: round(m),
    minMs: round(Math.min(...subject)),
    maxMs: round(Math.max(...subject)),
    baselineMedianMs: round(b),
    baseline,
    ratio: round(m / b),
    peakRssMiB: round(process.resourceUsage().maxRSS / 1024),
    extra,
  }
}

function round(x: number): number {
  return Math.round(x * 100) / 100
}

/** Prints a row as it is measured. */
export function printRow(r: BenchResult): void {
  const params = Object.entries(r.parameters)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ')
  const extra = Object.entries(r.extra)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ')
  console.log(
    `${r.name.padEnd(28)} ${params.padEnd(36)} median ${String(r.medianMs).padStart(9)} ms  ` +
      `baseline ${String(r.baselineMedianMs).padStart(9)} ms  ratio ${String(r.ratio).padStart(6)}  ` +
      `rss ${r.peakRssMiB} MiB  ${extra}`,
  )
}

/** Writes all rows to `bench/results/latest.json` with the machine description. */
export async function saveResults(
  path: string,
  results: readonly BenchResult[],
  quick: boolean,
): Promise<void> {
  await mkdir(dirname(path), { recursive: true })
  const os = await import('node:os')
  await writeFile(
    path,
    `${JSON.stringify(
      {
        date: new Date().toISOString(),
        quick,
        machine: {
          cpus: os.cpus().length,
          cpuModel: os.cpus()[0]?.model,
          memGiB: Math.round(os.totalmem() / 2 ** 30),
          node: process.version,
        },
        results,
      },
      null,
      2,
    )}\n`,
  )
}
