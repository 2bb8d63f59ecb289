/**
 * Write: `table.append(rows)` of plain JavaScript rows, against DuckDB `COPY ... TO parquet` of
 * the same rows generated inside DuckDB (the floor: the same Parquet bytes with no JavaScript
 * rows to convert, no statistics and no commit).
 *
 * The extra figure `appenderOnlyMs` is the time DuckDB's row appender alone takes to take the
 * same JavaScript rows, value by value, into a table: the cost of the crossing itself.
 */
import { join } from 'node:path'
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api'
import { DeltaTable } from '../src/table/delta-table.js'
import { type BenchResult, median, result, timeBoth, timeRuns, withTempDir } from './harness.js'

const SCHEMA = 'id long, value double, name string, part int'

/**
 * Runs the append benchmarks.
 *
 * @param quick - a small smoke run
 * @returns one row per size
 */
export async function writeBenchmarks(quick: boolean): Promise<BenchResult[]> {
  const sizes = quick ? [100_000] : [1_000_000, 10_000_000]
  const out: BenchResult[] = []
  for (const rows of sizes) {
    const runs = quick ? 1 : rows >= 10_000_000 ? 2 : 3
    await withTempDir('write', async (root) => {
      const data = makeRows(rows)
      const table = await DeltaTable.create(join(root, 't'), {
        schema: SCHEMA,
        properties: { 'delta.enableDeletionVectors': 'true' },
      })
      const instance = await DuckDBInstance.create(':memory:', {
        autoinstall_known_extensions: 'false',
        autoload_known_extensions: 'false',
      })
      const con = await instance.connect()
      try {
        let files = 0
        let bytes = 0
        let k = 0
        const [ours, floor] = await timeBoth(
          runs,
          async () => {
            const r = await table.append(data)
            files = r.metrics.numFiles ?? 0
            bytes = r.metrics.numOutputBytes ?? 0
          },
          () =>
            con.run(
              `COPY (SELECT i::BIGINT AS id, (i * 0.5)::DOUBLE AS value, 'n' || (i % 1000) AS name, (i % 4)::INTEGER AS part ` +
                `FROM range(${rows}) t(i)) TO '${join(root, `copy-${k++}.parquet`)}' (FORMAT parquet, COMPRESSION snappy)`,
            ),
        )
        const appender = await timeRuns(1, () => appendOnly(con, data))
        const ms = median(ours)
        out.push(
          result('write.append', { rows }, ours, 'duckdb COPY (rows generated in SQL) TO parquet', floor, {
            sizeParameter: 'rows',
            extra: {
              rowsPerSec: Math.round(rows / (ms / 1000)),
              files,
              outputMiB: Math.round(bytes / 2 ** 20),
              appenderOnlyMs: Math.round(median(appender)),
            },
          }),
        )
      } finally {
        con.closeSync()
        instance.closeSync()
        await table.close()
      }
    })
  }
  return out
}

/**
 * The benchmark rows: `id` = row number, `value` = id / 2, `name` = 'n' + id % 1000,
 * `part` = id % 4; the same rows the DuckDB baseline generates.
 *
 * @param n - how many
 * @returns the rows
 */
export function makeRows(n: number): Array<{ id: bigint; value: number; name: string; part: number }> {
  const rows = new Array<{ id: bigint; value: number; name: string; part: number }>(n)
  for (let i = 0; i < n; i++) rows[i] = { id: BigInt(i), value: i * 0.5, name: `n${i % 1000}`, part: i % 4 }
  return rows
}

/** Appends the rows value by value through DuckDB's appender into a scratch table. */
async function appendOnly(
  con: DuckDBConnection,
  rows: ReadonlyArray<{ id: bigint; value: number; name: string; part: number }>,
): Promise<void> {
  await con.run('CREATE OR REPLACE TEMP TABLE appended (id BIGINT, value DOUBLE, name VARCHAR, part INTEGER)')
  const appender = await con.createAppender('appended', 'main', 'temp')
  for (const r of rows) {
    appender.appendBigInt(r.id)
    appender.appendDouble(r.value)
    appender.appendVarchar(r.name)
    appender.appendInteger(r.part)
    appender.endRow()
  }
  appender.closeSync()
  await con.run('DROP TABLE appended')
}
