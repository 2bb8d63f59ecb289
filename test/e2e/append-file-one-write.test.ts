/**
 * A large input file is one write: `appendFile` and the CLI's `append` read it in batches but
 * hand every batch to one write, so its files are cut by the target file size (one file under
 * the default 128 MiB, several near 1 MiB under `delta.targetFileSize=1mb`) rather than once per
 * batch, every row lands exactly once, and a bad value in the last row fails the whole append by
 * its line with the table unchanged.
 */
import assert from 'node:assert/strict'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { DuckDBInstance } from '@duckdb/node-api'
import { DeltaTable, InvalidArgumentError } from '../../src/index.js'
import { createSnapshotView } from '../../src/subpaths/duckdb.js'
import { buildCli, startCli } from '../helpers/cli-build.js'

const ROWS = 1_000_000
const MiB = 1024 * 1024
const SCHEMA = 'id long not null, payload string'
/** Row content and checksum, over a relation with `id` and `payload`. */
const SUMMARY = 'SELECT count(*) AS n, sum(hash(CAST(id AS BIGINT), CAST(payload AS VARCHAR))) AS h'

let work: string
let csv: string
let badCsv: string
let expected: { n: bigint; h: bigint }

async function withDuckDb<T>(fn: (run: (sql: string) => Promise<unknown[][]>) => Promise<T>): Promise<T> {
  const instance = await DuckDBInstance.create(':memory:')
  const con = await instance.connect()
  try {
    return await fn(async (sql) => (await con.runAndReadAll(sql)).getRows())
  } finally {
    con.closeSync()
    instance.closeSync()
  }
}

/** Row count and checksum of the table's live rows, read through the SQL view. */
async function summaryOf(location: string): Promise<{ n: bigint; h: bigint; version: bigint }> {
  const table = await DeltaTable.open(location)
  try {
    const instance = await DuckDBInstance.create(':memory:')
    const con = await instance.connect()
    try {
      const view = await createSnapshotView(con, table, { name: 't' })
      try {
        const [[n, h]] = (await con.runAndReadAll(`${SUMMARY} FROM t`)).getRows() as [[bigint, bigint]]
        return { n: BigInt(n), h: BigInt(h ?? 0), version: view.version }
      } finally {
        await view.release()
      }
    } finally {
      con.closeSync()
      instance.closeSync()
    }
  } finally {
    await table.close()
  }
}

async function dataFileSizes(table: DeltaTable): Promise<number[]> {
  return (await (await table.snapshot()).files()).map((f) => Number(f.size))
}

async function parquetFiles(location: string): Promise<string[]> {
  return (await readdir(location)).filter((f) => f.endsWith('.parquet')).sort()
}

before(async () => {
  await buildCli()
  work = await mkdtemp(join(tmpdir(), 'delta-rlc-one-write-'))
  csv = join(work, 'rows.csv')
  badCsv = join(work, 'bad.csv')
  expected = await withDuckDb(async (run) => {
    // Payloads that do not compress away, so the files have a real size to cut.
    const rows = `SELECT i AS id, left(md5(i::VARCHAR), 12) AS payload FROM range(${ROWS}) t(i)`
    await run(`COPY (${rows}) TO '${csv}' (HEADER)`)
    // The last row has no id, which the table's id column requires.
    await run(
      `COPY (SELECT CASE WHEN id = ${ROWS - 1} THEN NULL ELSE id END AS id, payload FROM (${rows})) TO '${badCsv}' (HEADER)`,
    )
    const [[n, h]] = (await run(`${SUMMARY} FROM read_csv('${csv}', header = true)`)) as [[bigint, bigint]]
    return { n: BigInt(n), h: BigInt(h) }
  })
})

after(async () => {
  if (work) await rm(work, { recursive: true, force: true })
})

describe('a large input file is one write', () => {
  it('appendFile of a 1,000,000-row CSV under delta.targetFileSize=1mb writes files near 1 MiB with every row once', async () => {
    const location = join(work, 'sized')
    const table = await DeltaTable.create(location, {
      schema: SCHEMA,
      properties: { 'delta.targetFileSize': '1mb' },
    })
    try {
      const result = await table.appendFile(csv, { batchRows: 50_000 })
      assert.equal(result.version, 1n)
      const sizes = await dataFileSizes(table)
      const total = sizes.reduce((a, b) => a + b, 0)
      // Twenty batches: cut per batch they would be at least twenty files of ~0.5 MiB.
      assert.ok(sizes.length >= 3 && sizes.length <= Math.ceil(total / MiB) + 2, `sizes ${sizes.join(', ')}`)
      // DuckDB checks a file's size after a row group is flushed; its two writer threads can flush
      // one each into the same file first (seen under load), so a file holds at most two.
      assert.ok(Math.max(...sizes) <= 4.5 * MiB, `sizes ${sizes.join(', ')}`)
      const near = sizes.filter((s) => s >= 0.75 * MiB).length
      assert.ok(near >= 0.75 * sizes.length, `sizes ${sizes.join(', ')}`)
    } finally {
      await table.close()
    }
    assert.deepEqual(await summaryOf(location), { ...expected, version: 1n })
  })

  it('the CLI appends a 1,000,000-row CSV in 50,000-row batches as one file under the default target size', async () => {
    const location = join(work, 'default')
    await (await DeltaTable.create(location, { schema: SCHEMA })).close()
    const r = await startCli(['append', location, csv, '--batch-rows', '50000', '--json']).done
    assert.equal(r.code, 0, r.stderr)
    assert.match(r.stdout, /"numFiles": 1\b/)
    assert.equal((await parquetFiles(location)).length, 1)
    assert.deepEqual(await summaryOf(location), { ...expected, version: 1n })
  })

  it('a 1,000,000-row CSV whose last row lacks a required value fails by its line, and the table is unchanged', async () => {
    const location = join(work, 'default')
    const files = await parquetFiles(location)
    const table = await DeltaTable.open(location)
    try {
      await assert.rejects(
        table.appendFile(badCsv, { batchRows: 50_000 }),
        (err: unknown) =>
          err instanceof InvalidArgumentError &&
          /line 1000001 \(row 1000000\), column 'id', which is not nullable/.test(err.message),
      )
    } finally {
      await table.close()
    }
    const r = await startCli(['append', location, badCsv]).done
    assert.equal(r.code, 3, r.stderr)
    assert.match(r.stderr, /line 1000001 \(row 1000000\), column 'id'/)
    assert.deepEqual(await parquetFiles(location), files)
    assert.deepEqual(await summaryOf(location), { ...expected, version: 1n })
  })
})
