/**
 * The embedded DuckDB: it reads and writes Parquet with no extension directory on disk, an
 * engine leaves nothing behind in the temp directory but the user's empty private scratch directory, and what does not fit its memory limit
 * spills into the scratch directory (never into the working directory), gone once it closes.
 */
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { describe, it } from 'node:test'
import { DuckDbRuntime, duckDbMemoryLimit, sqlString } from '../../../src/engine-default/duckdb-runtime.js'
import { defaultScratchDir } from '../../../src/engine-default/scratch-dir.js'
import { DeltaTable } from '../../../src/index.js'

describe('DuckDbRuntime', () => {
  it('leaves nothing in the temp directory', async () => {
    const scratch = await mkdtemp(join(tmpdir(), 'delta-rlc-runtime-'))
    const saved = process.env.TMPDIR
    process.env.TMPDIR = scratch
    const file = join(scratch, 'probe.parquet')
    try {
      const runtime = new DuckDbRuntime({ threads: 1 })
      const rows = await runtime.withConnection(async (con) => {
        await con.run(`COPY (SELECT 42 AS a) TO ${sqlString(file)} (FORMAT parquet)`)
        return (await con.runAndReadAll(`SELECT a FROM read_parquet(${sqlString(file)})`)).getRowsJS()
      })
      await runtime.close()
      assert.deepEqual(rows, [[42]])
      // Only the user's private scratch directory (where a spill would go), and it is empty.
      const own = basename(defaultScratchDir())
      assert.deepEqual((await readdir(scratch)).sort(), [own, 'probe.parquet'].sort())
      assert.deepEqual(await readdir(join(scratch, own)), [])
      assert.equal((await stat(join(scratch, own))).mode & 0o777, 0o700)
    } finally {
      if (saved === undefined) delete process.env.TMPDIR
      else process.env.TMPDIR = saved
      await rm(scratch, { recursive: true, force: true })
    }
  })

  it('spills beyond its memory limit into an entry of the scratch directory, removed on close', async () => {
    const scratch = await mkdtemp(join(tmpdir(), 'delta-rlc-spill-'))
    const scratchDir = join(scratch, 'not-yet-created')
    const runtime = new DuckDbRuntime({ threads: 1, memoryLimit: '48MB', scratchDir })
    try {
      const seen = await runtime.withConnection(async (con) => {
        const limit = (
          await con.runAndReadAll(`SELECT value FROM duckdb_settings() WHERE name = 'memory_limit'`)
        ).getRowsJS()
        // A sort of about 200 MB of rows cannot stay within 48 MB.
        await con.run('CREATE TABLE t AS SELECT i, md5(i::VARCHAR) AS s FROM range(3000000) r(i)')
        const sorted = await con.runAndReadAll('SELECT count(*), max(s) FROM (SELECT * FROM t ORDER BY s)')
        const entries = await readdir(scratchDir)
        return { limit, count: sorted.getRowsJS()[0]?.[0], entries }
      })
      assert.match(String(seen.limit[0]?.[0]), /^4[0-9](\.[0-9])? MiB$/)
      assert.equal(seen.count, 3_000_000n)
      assert.equal(seen.entries.length, 1)
      assert.match(seen.entries[0] as string, new RegExp(`^drlc-${process.pid}-duckdb-spill-`))
      assert.equal(existsSync(join(process.cwd(), '.tmp', 'duckdb_temp_storage_DEFAULT-0.tmp')), false)
      await runtime.close()
      assert.deepEqual(await readdir(scratchDir), [])
    } finally {
      await runtime.close()
      await rm(scratch, { recursive: true, force: true })
    }
  })

  it('takes a memory limit in bytes or with a unit, and refuses anything else with a typed error', async () => {
    assert.equal(duckDbMemoryLimit(1_073_741_824), '1073741824B')
    assert.equal(duckDbMemoryLimit(' 4GB '), '4GB')
    assert.equal(duckDbMemoryLimit('512MiB'), '512MiB')
    for (const bad of [0, -1, 1.5, Number.NaN, '', '4', 'lots', '80%', '4 GB; DROP TABLE t']) {
      assert.throws(() => duckDbMemoryLimit(bad), { code: 'DELTA_INVALID_ARGUMENT' }, String(bad))
    }
    const dir = await mkdtemp(join(tmpdir(), 'delta-rlc-limit-'))
    try {
      await assert.rejects(
        DeltaTable.create(dir, { schema: 'id long' }, { engineOptions: { memoryLimit: 'lots' } }),
        (err: { code?: string; message?: string }) =>
          err.code === 'DELTA_INVALID_ARGUMENT' && /Invalid memoryLimit 'lots'/.test(String(err.message)),
      )
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
