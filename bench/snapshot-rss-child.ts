/**
 * One measurement of `snapshot.open-rss`, in a process of its own so that its peak RSS is the
 * load's alone: `load` opens the table at `dir` (its checkpoint) with `loadSnapshot`; `floor`
 * reads the same checkpoint files with DuckDB into a materialized result. Prints one JSON line:
 * the wall time, the RSS before the work and the process's peak RSS, in MiB.
 *
 * Usage: node --import tsx bench/snapshot-rss-child.ts <table dir> load|floor
 */
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { createDefaultEngine } from '../src/engine-default/default-engine.js'
import { loadSnapshot } from '../src/snapshot/load-snapshot.js'
import { createLocalStore } from '../src/storage/local-store.js'

const [dir, mode] = process.argv.slice(2)
if (dir === undefined || (mode !== 'load' && mode !== 'floor')) {
  console.error('usage: snapshot-rss-child.ts <table dir> load|floor')
  process.exit(2)
}
const mib = (bytes: number): number => Math.round(bytes / 2 ** 20)
let files = 0
let ms: number
let rssBefore: number
if (mode === 'load') {
  const engine = createDefaultEngine(createLocalStore(dir))
  rssBefore = process.memoryUsage().rss
  const t0 = performance.now()
  files = (await loadSnapshot(engine, dir)).activeFiles().length
  ms = performance.now() - t0
  await engine.close()
} else {
  const logDir = join(dir, '_delta_log')
  const parts = (await readdir(logDir)).filter((n) => n.includes('.checkpoint') && n.endsWith('.parquet'))
  const list = parts.map((n) => `'${join(logDir, n)}'`).join(', ')
  rssBefore = process.memoryUsage().rss
  // Timed from the instance's creation: the load's engine creates its DuckDB instance on first use.
  const t0 = performance.now()
  const instance = await DuckDBInstance.create(':memory:', {
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
  })
  const con = await instance.connect()
  files = (await con.runAndReadAll(`SELECT * FROM read_parquet([${list}], union_by_name = true)`))
    .currentRowCount
  ms = performance.now() - t0
  con.closeSync()
  instance.closeSync()
}
console.log(
  JSON.stringify({
    ms,
    files,
    rssBeforeMiB: mib(rssBefore),
    peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
  }),
)
