/**
 * Scan: live rows of a table with 10% of rows deleted by DVs, against DuckDB `read_parquet`
 * over the same files without DVs (the floor: the same bytes, no DV work).
 *
 * `scan.count` counts from the log when there is no predicate (no data is read), so its floor is
 * DuckDB's own metadata count; `scan.filtered-count` counts the live rows matching a predicate
 * that statistics cannot decide (the data is read and the DVs applied); `scan.rows-to-js` moves
 * every live row into JavaScript; `scan.to-arrow` builds an Arrow Table of every live row
 * (`scan().toArrow()`), against the same rows-to-JS floor.
 *
 * `scan.filtered-count` also runs with 0.1% and 50% of rows deleted (each its own growth family),
 * since deletion vectors are applied in a form chosen by their density.
 */
import { join } from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { openStream } from '../src/engine-default/duckdb-runtime.js'
import { DeltaTable } from '../src/table/delta-table.js'
import { buildSyntheticTable } from '../test/helpers/synthetic-table.js'
import { type BenchResult, median, result, timeBoth, withTempDir } from './harness.js'

/**
 * Runs the scan benchmarks.
 *
 * @param quick - a small smoke run
 * @returns one row per measure and size
 */
export async function scanBenchmarks(quick: boolean): Promise<BenchResult[]> {
  const sizes = quick
    ? [{ files: 4, rowsPerFile: 50_000 }]
    : [
        { files: 20, rowsPerFile: 100_000 },
        { files: 20, rowsPerFile: 500_000 },
      ]
  const runs = quick ? 1 : 3
  const warmup = quick ? 0 : 1
  const out: BenchResult[] = []
  for (const size of sizes) {
    await withTempDir('scan', async (root) => {
      const t = await buildSyntheticTable(join(root, 't'), { ...size, deleteFraction: 0.1 })
      const table = await DeltaTable.open(t.dir)
      const instance = await DuckDBInstance.create(':memory:', {
        autoinstall_known_extensions: 'false',
        autoload_known_extensions: 'false',
      })
      const con = await instance.connect()
      try {
        const list = `[${t.files.map((f) => `'${join(t.dir, f)}'`).join(', ')}]`
        const rows = size.files * size.rowsPerFile
        const params = { rows, files: size.files, deleted: '10%' }
        const opts = { sizeParameter: 'rows' }

        const [countOurs, countDuck] = await timeBoth(
          runs,
          () => table.scan().count(),
          () => con.runAndReadAll(`SELECT count(*) FROM read_parquet(${list})`),
          { warmup },
        )
        out.push(
          result(
            'scan.count',
            params,
            countOurs,
            'duckdb read_parquet count(*) without DVs',
            countDuck,
            opts,
          ),
        )

        // No file or row group statistic can decide this predicate, so both sides read the column.
        const where = 'id % 3 = 0'
        const [filteredOurs, filteredDuck] = await timeBoth(
          runs,
          () => table.scan({ where }).count(),
          () => con.runAndReadAll(`SELECT count(*) FROM read_parquet(${list}) WHERE ${where}`),
          { warmup },
        )
        out.push(
          result(
            'scan.filtered-count',
            params,
            filteredOurs,
            `duckdb read_parquet count(*) WHERE ${where} without DVs`,
            filteredDuck,
            opts,
          ),
        )

        // The floor of both row-delivery rows: DuckDB's rows to JS objects through the project's
        // stream reader (a stream DuckDB ends on an error throws instead of ending early, so a
        // failure cannot pass for a fast, short read).
        const duckRowsToJs = async (): Promise<number> => {
          const r = await openStream(con, `SELECT * FROM read_parquet(${list})`)
          const names = [...r.columnNames]
          let n = 0
          for await (const chunk of r.chunks()) n += chunk.getRowObjects(names).length
          return n
        }
        const [iterOurs, iterDuck] = await timeBoth(
          runs,
          async () => {
            let n = 0
            for await (const b of table.scan({ batchSize: 65_536 })) n += b.length
            return n
          },
          duckRowsToJs,
          { warmup },
        )
        out.push(
          result(
            'scan.rows-to-js',
            params,
            iterOurs,
            'duckdb read_parquet rows to JS without DVs',
            iterDuck,
            { ...opts, extra: { rowsPerSec: Math.round(t.liveRows / (median(iterOurs) / 1000)) } },
          ),
        )

        // The same live rows as an Arrow Table, built column by column from DuckDB's chunks.
        const [arrowOurs, arrowDuck] = await timeBoth(
          runs,
          async () => (await table.scan({ batchSize: 65_536 }).toArrow()).numRows,
          duckRowsToJs,
          { warmup },
        )
        out.push(
          result(
            'scan.to-arrow',
            params,
            arrowOurs,
            'duckdb read_parquet rows to JS without DVs',
            arrowDuck,
            { ...opts, extra: { rowsPerSec: Math.round(t.liveRows / (median(arrowOurs) / 1000)) } },
          ),
        )
      } finally {
        con.closeSync()
        instance.closeSync()
        await table.close()
      }
    })
    for (const density of [
      { fraction: 0.001, label: '0.1%' },
      { fraction: 0.5, label: '50%' },
    ]) {
      await withTempDir('scan-density', async (root) => {
        const t = await buildSyntheticTable(join(root, 't'), { ...size, deleteFraction: density.fraction })
        const table = await DeltaTable.open(t.dir)
        const instance = await DuckDBInstance.create(':memory:', {
          autoinstall_known_extensions: 'false',
          autoload_known_extensions: 'false',
        })
        const con = await instance.connect()
        try {
          const list = `[${t.files.map((f) => `'${join(t.dir, f)}'`).join(', ')}]`
          const where = 'id % 3 = 0'
          const [ours, duck] = await timeBoth(
            runs,
            () => table.scan({ where }).count(),
            () => con.runAndReadAll(`SELECT count(*) FROM read_parquet(${list}) WHERE ${where}`),
            { warmup },
          )
          out.push(
            result(
              'scan.filtered-count',
              { rows: size.files * size.rowsPerFile, files: size.files, deleted: density.label },
              ours,
              `duckdb read_parquet count(*) WHERE ${where} without DVs`,
              duck,
              { sizeParameter: 'rows', family: `scan.filtered-count deleted=${density.label}` },
            ),
          )
        } finally {
          con.closeSync()
          instance.closeSync()
          await table.close()
        }
      })
    }
  }
  return out
}
