/**
 * `npm run bench` runs every benchmark; `npm run bench -- --quick` runs a small smoke version
 * (CI runs it to keep the suite working). Results go to bench/results/latest.json.
 *
 * Options: `--quick`, `--only=scan,write` (suites to run), `--out=<file>` (another results file).
 * Each suite runs in its own child process, so that its peak RSS is its own and a large heap in
 * one suite does not slow the next.
 */
import { spawn } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { InvalidArgumentError } from '../src/errors/index.js'
import { appendAll } from '../src/util/arrays.js'
import { commitBenchmarks } from './commit.bench.js'
import { contentionBenchmarks, contentionLatencyBenchmarks } from './contention.bench.js'
import { dmlBenchmarks } from './dml.bench.js'
import { type BenchResult, machine, printRow, saveResults, scalingLines } from './harness.js'
import { scanBenchmarks } from './scan.bench.js'
import { snapshotBenchmarks } from './snapshot.bench.js'
import { writeBenchmarks } from './write.bench.js'

const suites: Array<[string, (quick: boolean) => Promise<BenchResult[]>]> = [
  ['contention', contentionBenchmarks],
  ['contention-latency', contentionLatencyBenchmarks],
  ['snapshot', snapshotBenchmarks],
  ['scan', scanBenchmarks],
  ['write', writeBenchmarks],
  ['dml', dmlBenchmarks],
  ['commit', commitBenchmarks],
]
suites.push(['conflict', (q) => import('./conflict.bench.js').then((m) => m.conflictBenchmarks(q))])
suites.push([
  'conflict-merge',
  (q) => import('./conflict-merge.bench.js').then((m) => m.conflictMergeBenchmarks(q)),
])
suites.push([
  'conflict-relocation',
  (q) => import('./conflict-relocation.bench.js').then((m) => m.conflictRelocationBenchmarks(q)),
])

const quick = process.argv.includes('--quick')
const only = option('only')?.split(',')
const suite = option('suite')
const out = resolve(option('out') ?? join(import.meta.dirname, 'results', 'latest.json'))

if (suite !== undefined) {
  // Child mode: one suite, its rows printed as they come and saved for the parent.
  const entry = suites.find(([name]) => name === suite)
  if (entry === undefined) throw new InvalidArgumentError(`Unknown benchmark suite '${suite}'`)
  const rows: BenchResult[] = []
  for (const r of await entry[1](quick)) {
    printRow(r)
    rows.push(r)
  }
  await saveResults(out, rows, quick)
} else {
  const unknown = (only ?? []).filter((n) => !suites.some(([name]) => name === n))
  if (unknown.length > 0) {
    throw new InvalidArgumentError(`Unknown benchmark suite(s): ${unknown.join(', ')}`, {
      argument: 'only',
      hint: `Suites: ${suites.map(([name]) => name).join(', ')}`,
    })
  }
  const started = Date.now()
  console.log(`delta-rlc benchmarks${quick ? ' (quick)' : ''} on ${JSON.stringify(machine())}`)
  const results: BenchResult[] = []
  const failed: string[] = []
  const scratch = await mkdtemp(join(tmpdir(), 'delta-rlc-bench-'))
  try {
    for (const [name] of suites) {
      if (only && !only.includes(name)) continue
      const file = join(scratch, `${name}.json`)
      const t0 = Date.now()
      const loadBefore = loadavg()[0] ?? 0
      const code = await runChild(name, file)
      if (code !== 0) {
        failed.push(name)
        console.log(`suite ${name} failed (exit ${code})`)
        continue
      }
      const saved = JSON.parse(await readFile(file, 'utf8')) as { results: BenchResult[] }
      appendAll(results, saved.results)
      console.log(
        `suite ${name}: ${saved.results.length} rows in ${((Date.now() - t0) / 1000).toFixed(1)} s ` +
          `(load average ${loadBefore.toFixed(1)} before, ${(loadavg()[0] ?? 0).toFixed(1)} after, on ${cpus().length} cores)`,
      )
    }
  } finally {
    await rm(scratch, { recursive: true, force: true })
  }
  const scaling = scalingLines(results)
  if (scaling.length > 0) {
    console.log('\nHow each cost grows with its size (growth exponent from the previous size):')
    for (const line of scaling) console.log(line)
  }
  await saveResults(out, results, quick)
  console.log(
    `\n${results.length} results written to ${out} in ${((Date.now() - started) / 1000).toFixed(0)} s`,
  )
  if (failed.length > 0) {
    console.log(`failed suites: ${failed.join(', ')}`)
    process.exitCode = 1
  }
}

/** Runs one suite in a child process with this process's loader flags and a larger heap. */
function runChild(name: string, file: string): Promise<number> {
  const args = [
    ...process.execArgv,
    '--max-old-space-size=12288',
    import.meta.filename,
    `--suite=${name}`,
    `--out=${file}`,
    ...(quick ? ['--quick'] : []),
  ]
  return new Promise((resolveExit) => {
    const child = spawn(process.execPath, args, { stdio: 'inherit' })
    child.once('exit', (code, signal) => resolveExit(code ?? (signal === null ? 1 : 128)))
    child.once('error', () => resolveExit(1))
  })
}

function option(name: string): string | undefined {
  const prefix = `--${name}=`
  return process.argv.find((a) => a.startsWith(prefix))?.slice(prefix.length)
}
