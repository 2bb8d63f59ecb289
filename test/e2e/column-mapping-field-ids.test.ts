/**
 * Column mapping mode `id` reads a file's columns by Parquet field id first, then by physical
 * name. Files are written here with DuckDB's COPY ... (FIELD_IDS ...) so that their column names
 * disagree with the log's physical names, as in converted or cloned tables whose physical names
 * were rewritten: one file names every column otherwise, one has two columns' names swapped (read
 * by name, each would be the other column), one carries no field ids (read by physical name), and
 * one holds a stale column under a current physical name with another id (it reads as NULL). The
 * rows read, and the rows a copy-on-write DELETE and an UPDATE write back, must be those of the ids.
 */
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { DuckDBInstance } from '@duckdb/node-api'
import { serializeCommit } from '../../src/protocol/action-json.js'
import type { Action } from '../../src/protocol/actions.js'
import { commitFileName, LOG_DIR } from '../../src/protocol/log-files.js'
import { DeltaTable } from '../../src/table/delta-table.js'

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

const ID = 'delta.columnMapping.id'
const PHYS = 'delta.columnMapping.physicalName'

const q = (name: string) => `"${name.replace(/"/g, '""')}"`
const lit = (text: string) => `'${text.replace(/'/g, "''")}'`

describe("column mapping mode 'id': files are read by field id, then by physical name", () => {
  it('reads renamed, swapped, id-less and stale columns by their ids; DELETE and UPDATE rewrite them right', async () => {
    const base = await mkdtemp(join(tmpdir(), 'delta-rlc-fieldids-'))
    roots.push(base)
    const dir = join(base, 't')
    const table = await DeltaTable.create(dir, {
      schema: 'id long not null, name string, v int',
      properties: { 'delta.columnMapping.mode': 'id', 'delta.enableDeletionVectors': 'false' },
    })
    const fields = new Map(
      (await table.snapshot()).schema.fields.map((f) => [
        f.name,
        { id: Number(f.metadata[ID]), physical: String(f.metadata[PHYS]) },
      ]),
    )
    const col = (n: string) => fields.get(n) as { id: number; physical: string }
    const [id, name, v] = [col('id'), col('name'), col('v')]
    assert.notEqual(id.physical, 'id', 'the table maps names to physical names')

    const duck = await DuckDBInstance.create(':memory:')
    const con = await duck.connect()
    const files: { path: string; rows: number }[] = []
    /** Writes a file of `select` (its column names as given) with `ids` as field ids. */
    const write = async (select: string, ids: Record<string, number> | undefined, rows: number) => {
      const path = `part-${randomUUID()}.parquet`
      const fieldIds =
        ids === undefined
          ? ''
          : `, FIELD_IDS {${Object.entries(ids)
              .map(([n, i]) => `${q(n)}: ${i}`)
              .join(', ')}}`
      await con.run(`COPY (${select}) TO ${lit(join(dir, path))} (FORMAT parquet${fieldIds})`)
      files.push({ path, rows })
    }
    // Renamed: no column bears its physical name.
    await write(
      `SELECT 1::BIGINT AS old_id, 'one' AS old_name, 10::INTEGER AS old_v`,
      { old_id: id.id, old_name: name.id, old_v: v.id },
      1,
    )
    // Swapped: the column named like `v` holds `name` (its id says so), and the other way round.
    await write(
      `SELECT 2::BIGINT AS ${q(id.physical)}, 20::INTEGER AS ${q(name.physical)}, 'two' AS ${q(v.physical)}`,
      { [id.physical]: id.id, [name.physical]: v.id, [v.physical]: name.id },
      1,
    )
    // No field ids: found by physical name.
    await write(
      `SELECT 3::BIGINT AS ${q(id.physical)}, 'three' AS ${q(name.physical)}, 30::INTEGER AS ${q(v.physical)}`,
      undefined,
      1,
    )
    // A stale column under `v`'s physical name with an id no column has: `v` reads as NULL.
    await write(
      `SELECT 4::BIGINT AS ${q(id.physical)}, 'four' AS ${q(name.physical)}, 999::INTEGER AS ${q(v.physical)}`,
      { [id.physical]: id.id, [name.physical]: name.id, [v.physical]: 77 },
      1,
    )
    con.closeSync()

    const adds: Action[] = []
    for (const f of files) {
      adds.push({
        add: {
          path: f.path,
          partitionValues: {},
          size: BigInt((await stat(join(dir, f.path))).size),
          modificationTime: BigInt(Date.now()),
          dataChange: true,
          stats: JSON.stringify({ numRecords: f.rows }),
        },
      })
    }
    const info: Action = {
      commitInfo: { timestamp: BigInt(Date.now()), operation: 'CONVERT', txnId: randomUUID() },
    }
    await writeFile(join(dir, LOG_DIR, commitFileName(1n)), serializeCommit([info, ...adds]))

    const rowsOf = async (t: DeltaTable) =>
      (await t.scan().toArray())
        .map((r) => [Number(r.id as bigint), r.name, r.v])
        .sort((a, b) => (a[0] as number) - (b[0] as number))
    const reader = await DeltaTable.open(dir)
    try {
      assert.deepEqual(await rowsOf(reader), [
        [1, 'one', 10],
        [2, 'two', 20],
        [3, 'three', 30],
        [4, 'four', null],
      ])
      assert.equal(await reader.scan({ where: "name = 'two'" }).count(), 1)
      assert.equal(await reader.scan({ where: 'v = 20' }).count(), 1)

      // A copy-on-write DELETE and an UPDATE read the files they rewrite by id as well.
      await reader.delete('id = 1')
      await reader.update({ where: 'id = 2', set: { v: 'v + 1' } })
      assert.deepEqual(await rowsOf(reader), [
        [2, 'two', 21],
        [3, 'three', 30],
        [4, 'four', null],
      ])
    } finally {
      await reader.close()
    }
    const again = await DeltaTable.open(dir)
    try {
      assert.deepEqual(await rowsOf(again), [
        [2, 'two', 21],
        [3, 'three', 30],
        [4, 'four', null],
      ])
    } finally {
      await again.close()
    }
  })
})
