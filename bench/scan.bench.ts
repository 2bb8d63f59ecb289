/**
 * Scan: live rows of a table with 10% of rows deleted by DVs, against DuckDB `read_parquet`
 * over the same files without DVs (the floor: the same bytes, no DV work).
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { DeltaTable } from '../src/table/delta-table.js'
import { buildSyntheticTable } from '../test/helpers/synthetic-table.js'
import { type BenchResult, result, timeRuns } from './harness.js'

export async function scanBenchmarks(quick: boolean): Promise<BenchResult[]> {
  const sizes = quick
    ? [{ files: 4, rowsPerFile: 50_000 }]
    : [
        { files: 20, rowsPerFile: 100_000 },
        { files: 20, rowsPerFile: 500_000 },
      ]
  const runs = quick ? 1 : 3
  const out: BenchResult[] = []
  for (const size of sizes) {
    const root = await mkdtemp(join(tmpdir(), 'delta-rlc-bench-scan-'))
    try {
      const t = await buildSyntheticTable(join(root, 't'), { ...size, deleteFraction: 0.1 })
      const table = await DeltaTable.open(t.dir)
      const instance = await DuckDBInstance.create(':memory:', {
        autoinstall_known_extensions: 'false',
        autoload_known_extensions: 'false',
      })
      const con = await instance.connect()
      const list = `[${t.files.map((f) => `'${join(t.dir, f)}'`).join(', ')}]`
      const rows = size.files * size.rowsPerFile
      const params = { rows, files: size.files, deleted: '10%' }

      const countOurs = await timeRuns(runs, () => table.scan().count())
      const countDuck = await timeRuns(runs, () =>
        con.runAndReadAll(`SELECT count(*) FROM read_parquet(${list})`),
      )
      out.push(result('scan.count', params, countOurs, 'duckdb read_parquet count(*) without DVs', countDuck))

      const iterOurs = await timeRuns(runs, async () => {
        let n = 0
        for await (const b of table.scan({ batchSize: 65_536 })) n += b.length
        return n
      })
      const iterDuck = await timeRuns(runs, async () => {
        const r = await con.stream(`SELECT * FROM read_parquet(${list})`)
        const names = r.columnNames()
        let n = 0
        for (;;) {
          const chunk = await r.fetchChunk()
          if (!chunk || chunk.rowCount === 0) break
          n += chunk.getRowObjects(names).length
        }
        return n
      })
      out.push(
        result('scan.rows-to-js', params, iterOurs, 'duckdb read_parquet rows to JS without DVs', iterDuck, {
          rowsPerSec: Math.round(t.liveRows / (iterOurs.reduce((a, b) => a + b, 0) / iterOurs.length / 1000)),
        }),
      )
      con.closeSync()
      instance.closeSync()
      await table.close()
    } finally {
      await rm(root, { recursive: true, force: true })
    }
  }
  return out
}
