/**
 * File names with glob characters (`[ ] * ? { }`) in directory names, file names and partition
 * values name exactly one file: DuckDB would expand them, so that `[e]vil/x.parquet` read
 * `evil/x.parquet` through a link out of the table, and `sub/*.parquet` read files the table
 * never committed. Scan, DELETE and OPTIMIZE see the committed files and nothing else.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { createDuckDbInstance, sqlString } from '../../src/engine-default/duckdb-runtime.js'
import { DeltaTable } from '../../src/table/delta-table.js'

/** Committed files (key as on disk, partition value), and the decoys a glob would also match. */
const COMMITTED: readonly { key: string; p: string }[] = [
  { key: 'p=a/[e]vil/x.parquet', p: 'a' },
  { key: 'p=a/sub/*.parquet', p: 'a' },
  { key: 'p=a/q?/f?.parquet', p: 'a' },
  { key: 'p=a/r]/g].parquet', p: 'a' },
  { key: 'p=a/[/v[.parquet', p: 'a' },
  { key: 'p=a/s{a,b}/h{1,2}.parquet', p: 'a' },
  { key: 'p=a/t**/u*.parquet', p: 'a' },
  // A partition value with glob characters, its directory written raw (as some writers do).
  { key: 'p=[x]/part.parquet', p: '[x]' },
  { key: 'p=y?/part.parquet', p: 'y?' },
]
const DECOYS: readonly string[] = [
  'p=a/sub/other.parquet',
  'p=a/qa/fa.parquet',
  'p=a/sa/h1.parquet',
  'p=a/tzz/uzz.parquet',
  'p=x/part.parquet',
  'p=yz/part.parquet',
]

/** The key as a Delta log spells it: percent-encoded. */
const logPath = (key: string) => key.split('/').map(encodeURIComponent).join('/')

describe('file names with glob characters', () => {
  let root: string
  let location: string
  let outside: string
  const sizes = new Map<string, number>()

  before(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'delta-rlc-glob-'))
    location = path.join(root, 'table')
    outside = path.join(root, 'outside')
    const table = await DeltaTable.create(location, {
      schema: 'id long, tag string, p string',
      partitionBy: ['p'],
    })
    await table.close()
    const instance = await createDuckDbInstance({ threads: 1 })
    const con = await instance.connect()
    const write = async (file: string, id: number, tag: string) => {
      await fs.mkdir(path.dirname(file), { recursive: true })
      await con.run(
        `COPY (SELECT ${id}::BIGINT AS id, ${sqlString(tag)} AS tag) TO ${sqlString(file)} (FORMAT parquet)`,
      )
      return (await fs.stat(file)).size
    }
    for (const [i, f] of COMMITTED.entries())
      sizes.set(f.key, await write(path.join(location, f.key), i, f.key))
    for (const [i, d] of DECOYS.entries()) await write(path.join(location, d), 100 + i, `decoy ${d}`)
    // `p=a/evil` is a link out of the table, which `[e]vil` would match.
    await write(path.join(outside, 'x.parquet'), 666, 'outside the table')
    await fs.symlink(path.relative(path.join(location, 'p=a'), outside), path.join(location, 'p=a', 'evil'))
    con.closeSync()
    instance.closeSync()
    const adds = COMMITTED.map((f) =>
      JSON.stringify({
        add: {
          path: logPath(f.key),
          partitionValues: { p: f.p },
          size: sizes.get(f.key),
          modificationTime: Date.now(),
          dataChange: true,
        },
      }),
    )
    await fs.writeFile(path.join(location, '_delta_log', '00000000000000000001.json'), `${adds.join('\n')}\n`)
  })
  after(async () => {
    await fs.rm(root, { recursive: true, force: true })
  })

  const tags = async (t: DeltaTable) => (await t.scan().toArray()).map((r) => String(r.tag)).sort()
  const expected = COMMITTED.map((f) => f.key).sort()

  it('scan reads each committed file and nothing a glob would match', async () => {
    const table = await DeltaTable.open(location)
    try {
      assert.deepEqual(await tags(table), expected)
      const rows = await table.scan({ where: "p = '[x]'" }).toArray()
      assert.deepEqual(
        rows.map((r) => r.tag),
        ['p=[x]/part.parquet'],
      )
    } finally {
      await table.close()
    }
  })

  it('DELETE sees the rows scan sees, and OPTIMIZE rewrites exactly them', async () => {
    const table = await DeltaTable.open(location)
    try {
      const optimized = await table.optimize()
      // The seven files of partition `a` become one; the other partitions hold one file each.
      assert.equal(optimized.metrics.numRemovedFiles, COMMITTED.filter((f) => f.p === 'a').length)
      assert.deepEqual(await tags(table), expected)
      const deleted = await table.delete("tag <> ''")
      assert.equal(deleted.metrics.numDeletedRows, COMMITTED.length)
      assert.deepEqual(await tags(table), [])
      // The decoys and the file outside are untouched.
      for (const d of DECOYS) await fs.stat(path.join(location, d))
      await fs.stat(path.join(outside, 'x.parquet'))
    } finally {
      await table.close()
    }
  })
})
