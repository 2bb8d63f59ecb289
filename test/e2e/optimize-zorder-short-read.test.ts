/**
 * End-to-end: Z-order OPTIMIZE reads every live row before it rewrites them. When a data file on
 * storage holds fewer rows than its log entry says (it was replaced behind the table's back),
 * the read comes back short; OPTIMIZE must refuse before writing instead of committing a
 * rewrite that drops the missing rows from the table for good.
 */
import assert from 'node:assert/strict'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, it } from 'node:test'
import { DuckDBInstance } from '@duckdb/node-api'
import { DeltaTable, isDeltaError } from '../../src/index.js'

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

it('Z-order OPTIMIZE over a data file shorter than its log entry fails with DELTA_STORAGE_ERROR and writes nothing', async () => {
  const root = await mkdtemp(join(tmpdir(), 'delta-rlc-zorder-short-'))
  roots.push(root)
  const dir = join(root, 't')
  const table = await DeltaTable.create(dir, { schema: 'id long not null, v double' })
  try {
    const rows = (from: number) =>
      Array.from({ length: 1000 }, (_, i) => ({ id: BigInt(from + i), v: (from + i) / 2 }))
    await table.append(rows(0))
    await table.append(rows(1000))
    const before = (await readdir(dir)).filter((f) => f.endsWith('.parquet')).sort()
    assert.equal(before.length, 2)
    // Replace the first file with a valid Parquet file of the same columns but 10 rows.
    const instance = await DuckDBInstance.create(':memory:')
    const con = await instance.connect()
    try {
      await con.run(
        `COPY (SELECT i::BIGINT AS id, i / 2 AS v FROM range(10) t(i)) TO '${join(dir, before[0] as string)}' (FORMAT parquet)`,
      )
    } finally {
      con.closeSync()
      instance.closeSync()
    }
    const version = (await table.snapshot()).version
    await assert.rejects(table.optimize({ zOrderBy: ['id'] }), (err: unknown) => {
      assert.ok(isDeltaError(err, 'DELTA_STORAGE_ERROR'), String(err))
      assert.match(
        err.message,
        /read 1010 rows from 2 data files whose log entries count 2000 live rows; nothing was written/,
      )
      return true
    })
    assert.deepEqual((await readdir(dir)).filter((f) => f.endsWith('.parquet')).sort(), before)
    assert.equal((await table.snapshot()).version, version)
  } finally {
    await table.close()
  }
})
