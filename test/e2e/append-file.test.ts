/**
 * `table.appendFile` appends CSV, JSON lines and Parquet files as the `append` command does: one
 * commit for all batches, values converted to the column types, and on a bad value nothing
 * committed and no data file left behind.
 */
import assert from 'node:assert/strict'
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { DuckDBInstance } from '@duckdb/node-api'
import { FileNotFoundError, InvalidArgumentError } from '../../src/errors/index.js'
import { DeltaTable } from '../../src/table/delta-table.js'

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

async function setup(): Promise<{ root: string; table: DeltaTable }> {
  const root = await mkdtemp(join(tmpdir(), 'delta-rlc-append-file-'))
  roots.push(root)
  const table = await DeltaTable.create(join(root, 't'), {
    schema: 'id long not null, name string, amount decimal(10,2), at timestamp, day date',
  })
  return { root, table }
}

const parquetFiles = async (dir: string) => (await readdir(dir)).filter((f) => f.endsWith('.parquet'))

describe('appendFile', () => {
  it('appends CSV, JSON lines and Parquet, each file set as one commit', async () => {
    const { root, table } = await setup()
    try {
      const csv = join(root, 'a.csv')
      await writeFile(
        csv,
        'id,name,amount,at,day\n1,one,1.50,2024-01-01 10:00:00,2024-01-01\n2,two,,2024-01-02 00:00:00Z,\n',
      )
      const jsonl = join(root, 'b.jsonl')
      await writeFile(
        jsonl,
        '{"id": 3, "name": "three", "amount": 3.25, "at": "2024-01-03T00:00:00Z", "day": "2024-01-03"}\n{"id": 4}\n',
      )
      const parquet = join(root, 'c.parquet')
      const instance = await DuckDBInstance.create(':memory:')
      const con = await instance.connect()
      await con.run(
        `COPY (SELECT 5::BIGINT AS id, 'five' AS name, 5.05::DECIMAL(10,2) AS amount) TO '${parquet}' (FORMAT parquet)`,
      )
      con.closeSync()
      instance.closeSync()

      assert.equal((await table.appendFile(csv)).version, 1n)
      assert.equal((await table.appendFile([jsonl], { batchRows: 1 })).version, 2n)
      const last = await table.appendFile(parquet, { format: 'parquet' })
      assert.equal(last.version, 3n)
      const rows = await table.scan().toArray()
      rows.sort((a, b) => Number(a.id) - Number(b.id))
      assert.deepEqual(rows, [
        { id: 1n, name: 'one', amount: '1.50', at: '2024-01-01T10:00:00.000000Z', day: '2024-01-01' },
        { id: 2n, name: 'two', amount: null, at: '2024-01-02T00:00:00.000000Z', day: null },
        { id: 3n, name: 'three', amount: '3.25', at: '2024-01-03T00:00:00.000000Z', day: '2024-01-03' },
        { id: 4n, name: null, amount: null, at: null, day: null },
        { id: 5n, name: 'five', amount: '5.05', at: null, day: null },
      ])
      const history = await table.history({ limit: 2 })
      assert.equal(history[1]?.operation, 'WRITE')
    } finally {
      await table.close()
    }
  })

  it('a bad value, an extra column or a missing file commits nothing and leaves no data file', async () => {
    const { root, table } = await setup()
    try {
      const bad = join(root, 'bad.jsonl')
      const lines = Array.from({ length: 50 }, (_, i) => JSON.stringify({ id: i, name: `n${i}` }))
      lines.push('{"id": "not a number"}')
      await writeFile(bad, `${lines.join('\n')}\n`)
      await assert.rejects(
        () => table.appendFile(bad, { batchRows: 10 }),
        (err: unknown) => err instanceof InvalidArgumentError && /id/.test(err.message),
      )
      const extra = join(root, 'extra.csv')
      await writeFile(extra, 'id,colour\n1,red\n')
      await assert.rejects(
        () => table.appendFile(extra),
        (err: unknown) => err instanceof InvalidArgumentError && /colour/.test(err.message),
      )
      await assert.rejects(() => table.appendFile(join(root, 'missing.csv')), FileNotFoundError)
      await assert.rejects(
        () => table.appendFile(join(root, 'x.xlsx')),
        (err: unknown) => err instanceof InvalidArgumentError && err.argument === 'options.format',
      )
      await assert.rejects(
        // biome-ignore lint/suspicious/noExplicitAny: an unknown option on purpose
        () => table.appendFile(extra, { ignoreExtra: true } as any),
        (err: unknown) =>
          err instanceof InvalidArgumentError && /did you mean 'ignoreExtraColumns'/.test(err.message),
      )
      assert.equal((await table.history()).length, 1)
      assert.deepEqual(await parquetFiles(join(root, 't')), [])
      // With ignoreExtraColumns the extra column is left out.
      await table.appendFile(extra, { ignoreExtraColumns: true })
      assert.deepEqual(await table.scan().toArray(), [
        { id: 1n, name: null, amount: null, at: null, day: null },
      ])
    } finally {
      await table.close()
    }
  })

  it('an aborted signal stops the append before its commit', async () => {
    const { root, table } = await setup()
    try {
      const csv = join(root, 'a.csv')
      await writeFile(csv, 'id\n1\n2\n')
      const stop = new AbortController()
      stop.abort(new Error('stopped'))
      await assert.rejects(() => table.appendFile(csv, { signal: stop.signal }), /stopped/)
      assert.equal(await table.scan().count(), 0)
      assert.deepEqual(await parquetFiles(join(root, 't')), [])
    } finally {
      await table.close()
    }
  })
})
