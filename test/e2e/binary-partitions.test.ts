/**
 * Binary partition values decode one way everywhere: a partition value in the log is text, and
 * the bytes are that text's UTF-8 bytes (the protocol's example `"\u0001\u0002\u0003"` is JSON
 * escaping of the log line, not an escape language of the value). Values that look like escapes
 * (`a\x41`), backslashes and non-ASCII text go through every SQL path that injects partition
 * values: append, scan, count, the SQL view, DELETE, UPDATE, MERGE and OPTIMIZE.
 */
import assert from 'node:assert/strict'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { DuckDBInstance } from '@duckdb/node-api'
import { commitFileName, LOG_DIR } from '../../src/protocol/log-files.js'
import { DeltaTable } from '../../src/table/delta-table.js'
import { createSnapshotView } from '../../src/table/sql-view.js'

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

const utf8 = (s: string) => new TextEncoder().encode(s)
const hex = (b: unknown) => (b instanceof Uint8Array ? Buffer.from(b).toString('hex') : String(b))

/** id -> the partition bytes written; empty bytes are stored as "" and so read back as null. */
const VALUES: ReadonlyArray<readonly [number, Uint8Array | null]> = [
  [1, utf8('a\\x41')],
  [2, utf8('\\\\')],
  [3, utf8('back\\slash\\')],
  [4, utf8('é€😀')],
  [5, utf8('a\\u0001')],
  [6, new Uint8Array(0)],
  [7, null],
]

function expectedHex(bytes: Uint8Array | null): string {
  return bytes === null || bytes.length === 0 ? 'null' : hex(bytes)
}

async function rowsById(table: DeltaTable): Promise<Map<number, string>> {
  const out = new Map<number, string>()
  for (const r of await table.scan({ columns: ['id', 'b'] }).toArray()) {
    out.set(Number(r.id as bigint), r.b === null ? 'null' : hex(r.b))
  }
  return out
}

describe('binary partition values', () => {
  it('read back as the bytes written through scan, SQL view, DELETE, UPDATE, MERGE and OPTIMIZE', async () => {
    const base = await mkdtemp(join(tmpdir(), 'delta-rlc-binpart-'))
    roots.push(base)
    const dir = join(base, 't')
    const table = await DeltaTable.create(dir, {
      schema: 'id long not null, b binary, v string',
      partitionBy: ['b'],
      properties: { 'delta.enableDeletionVectors': 'true' },
    })
    try {
      const rows = VALUES.flatMap(([id, b]) => [
        { id: BigInt(id), b, v: `x${id}` },
        { id: BigInt(id + 100), b, v: `y${id}` },
      ])
      await table.append(rows)

      // The log holds the text whose UTF-8 bytes were written, not an escaped rendering.
      const log = await readFile(join(dir, LOG_DIR, commitFileName(1n)), 'utf8')
      const stored = log
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { add?: { partitionValues: Record<string, string | null> } })
        .flatMap((a) => (a.add ? [a.add.partitionValues.b] : []))
      assert.ok(stored.includes('a\\x41'))
      assert.ok(stored.includes('é€😀'))

      const expected = new Map<number, string>()
      for (const [id, b] of VALUES) {
        expected.set(id, expectedHex(b))
        expected.set(id + 100, expectedHex(b))
      }
      assert.deepEqual(await rowsById(table), expected)
      assert.equal(await table.scan({ where: 'id < 100' }).count(), VALUES.length)

      // The SQL view renders partition values with the same literal.
      const duck = await DuckDBInstance.create(':memory:')
      const con = await duck.connect()
      try {
        const view = await createSnapshotView(con, table)
        const got = (await con.runAndReadAll('SELECT id, hex(b) FROM t ORDER BY id')).getRowsJS()
        await view.release()
        const fromView = new Map(
          got.map((r) => [Number(r[0] as bigint), r[1] === null ? 'null' : String(r[1]).toLowerCase()]),
        )
        assert.deepEqual(fromView, expected)
      } finally {
        con.closeSync()
        duck.closeSync()
      }

      // DELETE with a deletion vector: the partition value of the kept rows is untouched.
      await table.delete('id = 101 OR id = 104')
      expected.delete(101)
      expected.delete(104)
      assert.deepEqual(await rowsById(table), expected)

      // UPDATE rewrites the rows of each touched file with the file's partition value.
      await table.update({ where: 'id < 100', set: { v: "'updated'" } })
      assert.deepEqual(await rowsById(table), expected)
      const updated = await table.scan({ where: "v = 'updated'", columns: ['id'] }).toArray()
      assert.equal(updated.length, VALUES.length)

      // MERGE: matched rows keep their partition; inserted rows land in the given partition.
      await table.merge(
        [
          { id: 102n, b: utf8('\\\\'), v: 'merged' },
          { id: 200n, b: utf8('a\\x41'), v: 'new' },
        ],
        {
          on: 'target.id = source.id',
          whenMatched: [{ update: { v: 'source.v' } }],
          whenNotMatched: [{ insert: '*' }],
        },
      )
      expected.set(200, hex(utf8('a\\x41')))
      assert.deepEqual(await rowsById(table), expected)
      const merged = await table.scan({ where: "v = 'merged'", columns: ['id', 'b'] }).toArray()
      assert.deepEqual(
        merged.map((r) => hex(r.b)),
        [hex(utf8('\\\\'))],
      )

      // OPTIMIZE compacts each partition's files through the writer's SQL path.
      await table.optimize()
      assert.deepEqual(await rowsById(table), expected)
    } finally {
      await table.close()
    }
  })
})
