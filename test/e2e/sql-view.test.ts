/**
 * The snapshot SQL view: the engine's live-rows relation on a caller's DuckDB connection. It
 * hides the rows deletion vectors delete (with and without partition columns, which take the two
 * join shapes of the relation), takes partition values from the log, drops its helper tables on
 * release, and quotes column names, so a name DuckDB's parser reads as a keyword works quoted or
 * qualified by the view.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import type { DuckDBConnection } from '@duckdb/node-api'
import { createDuckDbInstance } from '../../src/engine-default/duckdb-runtime.js'
import { DeltaTable } from '../../src/table/delta-table.js'
import { createSnapshotView } from '../../src/table/sql-view.js'

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

async function tempDir(): Promise<string> {
  const base = await mkdtemp(join(tmpdir(), 'delta-rlc-sql-view-'))
  roots.push(base)
  return base
}

async function withConnection<T>(fn: (con: DuckDBConnection) => Promise<T>): Promise<T> {
  const instance = await createDuckDbInstance({ threads: 1 })
  const con = await instance.connect()
  try {
    return await fn(con)
  } finally {
    con.closeSync()
    instance.closeSync()
  }
}

async function rowsOf(con: DuckDBConnection, sql: string): Promise<unknown[][]> {
  return (await con.runAndReadAll(sql)).getRowsJS()
}

/** A table of three appends (a file each, per partition), ids 0..29, then a delete of every id divisible by 4. */
async function tableWithDeletes(partitioned: boolean): Promise<DeltaTable> {
  const table = await DeltaTable.create(join(await tempDir(), 't'), {
    schema: 'id long not null, p string, v string',
    ...(partitioned ? { partitionBy: ['p'] } : {}),
    properties: { 'delta.enableDeletionVectors': 'true' },
  })
  for (let f = 0; f < 3; f++) {
    await table.append(
      Array.from({ length: 10 }, (_, i) => {
        const id = f * 10 + i
        return { id: BigInt(id), p: `p${id % 2}`, v: `v${id}` }
      }),
    )
  }
  await table.delete('id % 4 = 0')
  return table
}

describe('snapshot SQL view', () => {
  for (const partitioned of [false, true]) {
    it(`hides the rows deletion vectors delete in every file (${partitioned ? 'partitioned' : 'unpartitioned'})`, async () => {
      const table = await tableWithDeletes(partitioned)
      try {
        await withConnection(async (con) => {
          const view = await createSnapshotView(con, table)
          assert.equal(view.files, partitioned ? 6 : 3)
          assert.equal(view.deletedRows, 8)
          const ids = (await rowsOf(con, 'SELECT id FROM t ORDER BY id')).map((r) => Number(r[0]))
          const expected = Array.from({ length: 30 }, (_, i) => i).filter((i) => i % 4 !== 0)
          assert.deepEqual(ids, expected)
          // Partition values come from the log, typed as the column.
          assert.deepEqual(await rowsOf(con, 'SELECT p, count(*) FROM t GROUP BY p ORDER BY p'), [
            ['p0', 7n],
            ['p1', 15n],
          ])
          await view.release()
          const left = await rowsOf(
            con,
            "SELECT table_name FROM duckdb_tables() WHERE table_name LIKE 't%' UNION ALL " +
              "SELECT view_name FROM duckdb_views() WHERE view_name = 't'",
          )
          assert.deepEqual(left, [])
        })
      } finally {
        await table.close()
      }
    })
  }

  it('shows an earlier version, before the deletes, by time travel', async () => {
    const table = await tableWithDeletes(true)
    try {
      await withConnection(async (con) => {
        const view = await createSnapshotView(con, table, { version: 3n, name: 'before' })
        assert.equal(view.deletedRows, 0)
        assert.deepEqual(await rowsOf(con, 'SELECT count(*), sum(id) FROM before'), [[30n, 435n]])
        await view.release()
      })
    } finally {
      await table.close()
    }
  })

  it('reads a column named like a DuckDB keyword when the query quotes it or qualifies it by the view', async () => {
    const table = await DeltaTable.create(join(await tempDir(), 'k'), {
      schema: {
        type: 'struct',
        fields: [
          { name: 'at', type: 'long', nullable: true, metadata: {} },
          { name: 'order', type: 'string', nullable: true, metadata: {} },
          { name: 'My Col', type: 'integer', nullable: true, metadata: {} },
        ],
      },
    })
    try {
      await table.append([
        { at: 5n, order: 'b', 'My Col': 1 },
        { at: 9n, order: 'a', 'My Col': 2 },
      ])
      await withConnection(async (con) => {
        const view = await createSnapshotView(con, table)
        assert.deepEqual(await rowsOf(con, 'SELECT max("at"), min("order"), sum("My Col") FROM t'), [
          [9n, 'a', 3n],
        ])
        assert.deepEqual(await rowsOf(con, 'SELECT max(t.at), min(t."order") FROM t'), [[9n, 'a']])
        // DuckDB parses the query before it resolves names: a bare keyword is a syntax error
        // whatever the view defines. The documented rule is to quote such names.
        await assert.rejects(con.run('SELECT max(at) FROM t'), /syntax error/i)
        await view.release()
      })
    } finally {
      await table.close()
    }
  })
})
