/**
 * DML on a 10M-row table (20 files of 500k rows, deletion vectors enabled): DELETE and UPDATE of
 * 0.1% and 10% of the rows (spread over every file, so every file is touched), MERGE of 10k and
 * 100k source rows (half matching rows spread over the table, half new), and OPTIMIZE of 100 and
 * 1,000 small files.
 *
 * Each has its lower bound, DuckDB over the same files doing only what any implementation must:
 * - DELETE: the predicate scan that finds the matching row positions per file;
 * - UPDATE: that scan plus writing the updated rows to one new Parquet file;
 * - MERGE: the join scan that finds the matched positions plus writing the source rows (the
 *   updated images and the inserts) to one new Parquet file;
 * - OPTIMIZE: copying every row of the small files, in file and row order, to one Parquet file.
 *
 * Every timed run starts from the same table: the log is cut back to version 0 and the files the
 * previous run wrote are deleted (untimed).
 */
import { readdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api'
import { DeltaTable } from '../src/table/delta-table.js'
import { buildSyntheticTable, type SyntheticTable } from '../test/helpers/synthetic-table.js'
import { type BenchResult, result, timeBoth, withTempDir } from './harness.js'

/**
 * Runs the DML benchmarks.
 *
 * @param quick - a small smoke run
 * @returns one row per operation and size
 */
export async function dmlBenchmarks(quick: boolean): Promise<BenchResult[]> {
  const out: BenchResult[] = []
  const runs = quick ? 1 : 3
  const warmup = quick ? 0 : 1
  const shape = quick ? { files: 4, rowsPerFile: 50_000 } : { files: 20, rowsPerFile: 500_000 }
  const totalRows = shape.files * shape.rowsPerFile
  await withTempDir('dml', async (root) => {
    const t = await buildSyntheticTable(join(root, 't'), shape)
    const handle = await openRewindable(t)
    const duck = await openDuck()
    const files = fileList(t)
    try {
      for (const [share, modulo] of [
        ['0.1%', 1000],
        ['10%', 10],
      ] as const) {
        const where = `id % ${modulo} = 0`
        const changed = Math.ceil(totalRows / modulo)
        const params = { tableRows: totalRows, share, rowsChanged: changed }
        let deleted = 0
        const [del, scan] = await timeBoth(
          runs,
          async () => {
            deleted = Number((await handle.table.delete(where)).metrics.numDeletedRows ?? 0)
          },
          () => positionsScan(duck.con, files, where),
          { warmup, beforeSubject: handle.reset },
        )
        out.push(
          result('dml.delete', params, del, 'duckdb predicate scan to row positions', scan, {
            sizeParameter: 'rowsChanged',
            extra: { deletedRows: deleted },
          }),
        )

        let updated = 0
        let k = 0
        const [upd, updFloor] = await timeBoth(
          runs,
          async () => {
            const r = await handle.table.update({ where, set: { value: 'value + 1' } })
            updated = Number(r.metrics.numUpdatedRows ?? 0)
          },
          async () => {
            await positionsScan(duck.con, files, where)
            await duck.con.run(
              `COPY (SELECT id, value + 1 AS value, name, part FROM read_parquet(${files}) WHERE ${where}) ` +
                `TO '${join(root, `update-${k++}.parquet`)}' (FORMAT parquet, COMPRESSION snappy)`,
            )
          },
          { warmup, beforeSubject: handle.reset },
        )
        out.push(
          result('dml.update', params, upd, 'duckdb predicate scan + COPY of the new images', updFloor, {
            sizeParameter: 'rowsChanged',
            extra: { updatedRows: updated },
          }),
        )
      }

      for (const sourceRows of quick ? [2_000] : [10_000, 100_000]) {
        const source = mergeSource(sourceRows, totalRows)
        let metrics: Readonly<Record<string, number>> = {}
        await duck.con.run(
          `CREATE OR REPLACE TEMP TABLE src AS SELECT * FROM (` +
            `SELECT (k * ${spread(sourceRows, totalRows)})::BIGINT AS id, -1.0::DOUBLE AS value, 'merged' AS name, 0::INTEGER AS part FROM range(${sourceRows / 2}) r(k) ` +
            `UNION ALL SELECT (${totalRows} + k)::BIGINT, -1.0::DOUBLE, 'merged', 0::INTEGER FROM range(${sourceRows / 2}) r(k))`,
        )
        let k = 0
        const [ours, floor] = await timeBoth(
          runs,
          async () => {
            metrics = (
              await handle.table.merge(source, {
                on: 'target.id = source.id',
                whenMatched: [{ update: '*' }],
                whenNotMatched: [{ insert: '*' }],
              })
            ).metrics
          },
          async () => {
            await duck.con.runAndReadAll(
              `SELECT filename, list(file_row_number ORDER BY file_row_number) FROM read_parquet(${files}, filename = true, file_row_number = true) t ` +
                'SEMI JOIN src ON t.id = src.id GROUP BY filename',
            )
            await duck.con.run(
              `COPY (SELECT * FROM src) TO '${join(root, `merge-${k++}.parquet`)}' (FORMAT parquet, COMPRESSION snappy)`,
            )
          },
          { warmup, beforeSubject: handle.reset },
        )
        out.push(
          result(
            'dml.merge',
            { tableRows: totalRows, sourceRows, matched: sourceRows / 2 },
            ours,
            'duckdb join scan to matched positions + COPY of the source rows',
            floor,
            {
              sizeParameter: 'sourceRows',
              extra: {
                updatedRows: metrics.numTargetRowsUpdated ?? 0,
                insertedRows: metrics.numTargetRowsInserted ?? 0,
              },
            },
          ),
        )
      }
    } finally {
      duck.close()
      await handle.table.close()
    }
  })

  for (const smallFiles of quick ? [50] : [100, 1_000]) {
    await withTempDir('optimize', async (root) => {
      const t = await buildSyntheticTable(join(root, 't'), { files: smallFiles, rowsPerFile: 1_000 })
      const handle = await openRewindable(t)
      const duck = await openDuck()
      const files = fileList(t)
      try {
        let removed = 0
        let k = 0
        const [ours, floor] = await timeBoth(
          runs,
          async () => {
            removed = Number((await handle.table.optimize()).metrics.numRemovedFiles ?? 0)
          },
          () =>
            duck.con.run(
              `COPY (SELECT id, value, name, part FROM read_parquet(${files}, filename = true, file_row_number = true) ` +
                `ORDER BY filename, file_row_number) TO '${join(root, `optimize-${k++}.parquet`)}' (FORMAT parquet, COMPRESSION snappy)`,
            ),
          { warmup, beforeSubject: handle.reset },
        )
        out.push(
          result(
            'dml.optimize',
            { files: smallFiles, rows: smallFiles * 1_000 },
            ours,
            'duckdb COPY of all rows in file/row order to one file',
            floor,
            { sizeParameter: 'files', extra: { removedFiles: removed } },
          ),
        )
      } finally {
        duck.close()
        await handle.table.close()
      }
    })
  }
  return out
}

/** Half the source rows update existing rows spread evenly over the table, half are new. */
function mergeSource(
  n: number,
  totalRows: number,
): Array<{ id: bigint; value: number; name: string; part: number }> {
  const half = n / 2
  const step = spread(n, totalRows)
  const rows: Array<{ id: bigint; value: number; name: string; part: number }> = []
  for (let k = 0; k < half; k++) rows.push({ id: BigInt(k * step), value: -1, name: 'merged', part: 0 })
  for (let k = 0; k < half; k++) rows.push({ id: BigInt(totalRows + k), value: -1, name: 'merged', part: 0 })
  return rows
}

function spread(sourceRows: number, totalRows: number): number {
  return Math.floor(totalRows / (sourceRows / 2))
}

/** The table's data files as a DuckDB list literal. */
function fileList(t: SyntheticTable): string {
  return `[${t.files.map((f) => `'${join(t.dir, f)}'`).join(', ')}]`
}

/** A private DuckDB for the baselines. */
interface Duck {
  readonly con: DuckDBConnection
  /** Releases the connection and the database. */
  close(): void
}

async function openDuck(): Promise<Duck> {
  const instance = await DuckDBInstance.create(':memory:', {
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
  })
  const con = await instance.connect()
  return {
    con,
    close: () => {
      con.closeSync()
      instance.closeSync()
    },
  }
}

/** The DuckDB floor of a DML predicate: the matching positions of every file. */
async function positionsScan(con: DuckDBConnection, files: string, where: string): Promise<void> {
  await con.runAndReadAll(
    `SELECT filename, list(file_row_number ORDER BY file_row_number) FROM read_parquet(${files}, filename = true, file_row_number = true) ` +
      `WHERE ${where} GROUP BY filename`,
  )
}

/** A table handle that `reset` rewinds to version 0 between timed runs. */
interface Rewindable {
  table: DeltaTable
  readonly reset: () => Promise<void>
}

/**
 * Opens `t` for runs that each start from version 0. A handle follows a log that only grows, as
 * Delta's logs do, so `reset` closes it, rewinds the table and opens a new one.
 */
async function openRewindable(t: SyntheticTable): Promise<Rewindable> {
  const handle: Rewindable = {
    table: await DeltaTable.open(t.dir),
    reset: async () => {
      await handle.table.close()
      await resetTable(t)
      handle.table = await DeltaTable.open(t.dir)
    },
  }
  return handle
}

/** Cuts the log back to version 0 and deletes every file a benchmark run wrote. */
async function resetTable(t: SyntheticTable): Promise<void> {
  const keep = new Set(t.files)
  for (const name of await readdir(t.dir)) {
    if (name === '_delta_log' || keep.has(name)) continue
    await rm(join(t.dir, name), { recursive: true, force: true })
  }
  const log = join(t.dir, '_delta_log')
  for (const name of await readdir(log)) {
    if (name !== '00000000000000000000.json') await rm(join(log, name), { force: true })
  }
}
