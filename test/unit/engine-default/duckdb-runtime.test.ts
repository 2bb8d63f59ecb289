/**
 * The embedded DuckDB: it reads and writes Parquet with no extension directory on disk, and an
 * engine leaves nothing behind in the temp directory.
 */
import assert from 'node:assert/strict'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { DuckDbRuntime, sqlString } from '../../../src/engine-default/duckdb-runtime.js'

describe('DuckDbRuntime', () => {
  it('leaves nothing in the temp directory', async () => {
    const scratch = await mkdtemp(join(tmpdir(), 'delta-rlc-runtime-'))
    const saved = process.env.TMPDIR
    process.env.TMPDIR = scratch
    const file = join(scratch, 'probe.parquet')
    try {
      const runtime = new DuckDbRuntime(1)
      const rows = await runtime.withConnection(async (con) => {
        await con.run(`COPY (SELECT 42 AS a) TO ${sqlString(file)} (FORMAT parquet)`)
        return (await con.runAndReadAll(`SELECT a FROM read_parquet(${sqlString(file)})`)).getRowsJS()
      })
      await runtime.close()
      assert.deepEqual(rows, [[42]])
      assert.deepEqual(await readdir(scratch), ['probe.parquet'])
    } finally {
      if (saved === undefined) delete process.env.TMPDIR
      else process.env.TMPDIR = saved
      await rm(scratch, { recursive: true, force: true })
    }
  })
})
