/**
 * `npm run demo`: the multi-writer race on a fresh local table, run twice on the same seeded
 * workload, file-level conflict checking then row-level reconciliation, and the two side by
 * side.
 *
 * Seven writer processes (two appenders, two DELETE writers, one UPDATE, one MERGE and one
 * OPTIMIZE) work on disjoint keys that share data files. After each run the verifier replays every
 * committed operation on an in-memory model and checks the table against it. The HTML report
 * (timeline of every attempt, comparison chart) is written next to the tables.
 *
 * Usage: `npm run demo [-- <seconds per run>]` (default 30, so about a minute in all).
 */
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { InvalidArgumentError } from '../src/errors/index.js'
import { renderTerminalReport, runRace } from '../src/race/index.js'

const seconds = Number(process.argv[2] ?? 30)
if (!(Number.isFinite(seconds) && seconds > 0)) {
  throw new InvalidArgumentError(`Invalid duration '${process.argv[2]}': pass seconds per run, e.g. 30`, {
    argument: 'seconds',
  })
}
const root = await mkdtemp(join(tmpdir(), 'delta-rlc-demo-'))
const t0 = Date.now()
console.log(
  `delta-rlc demo: 7 concurrent writer processes on one table, ${seconds} s with file-level conflict checking, then ${seconds} s with row-level reconciliation\n`,
)
const report = await runRace(
  {
    location: join(root, 'orders'),
    writers: { append: 2, delete: 2, update: 1, merge: 1, optimize: 1 },
    overlap: 'disjoint',
    conflicts: 'all',
    compare: true,
    seed: 1,
    durationMs: Math.round(seconds * 1000),
  },
  { log: (line) => console.log(`  ${((Date.now() - t0) / 1000).toFixed(0).padStart(3)} s  ${line}`) },
)
console.log(`\n${renderTerminalReport(report)}`)
console.log(`Tables and event logs: ${root}`)
console.log(`HTML report: ${report.htmlPath}`)
process.exitCode = report.ok ? 0 : 1
