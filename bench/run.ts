/**
 * `npm run bench` runs every benchmark; `npm run bench -- --quick` runs a small smoke version
 * (CI runs it to keep the suite working). Results go to bench/results/latest.json.
 */
import { join } from 'node:path'
import { type BenchResult, printRow, saveResults } from './harness.js'
import { scanBenchmarks } from './scan.bench.js'

const quick = process.argv.includes('--quick')
const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length)
const suites: Array<[string, (quick: boolean) => Promise<BenchResult[]>]> = [['scan', scanBenchmarks]]
suites.push(['conflict', (q) => import('./conflict.bench.js').then((m) => m.conflictBenchmarks(q))])

const results: BenchResult[] = []
for (const [name, run] of suites) {
  if (only && !only.split(',').includes(name)) continue
  for (const r of await run(quick)) {
    printRow(r)
    results.push(r)
  }
}
await saveResults(join(import.meta.dirname, 'results', 'latest.json'), results, quick)
console.log(`${results.length} results written to bench/results/latest.json`)
