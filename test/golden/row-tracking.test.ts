/**
 * The Databricks-written row-tracking table of `../shared/fixtures/row-tracking/` (its README
 * states the expected values): ten one-row files, `id` 0..9, `baseRowId` 0..9, no materialized
 * columns in the files, so each row's id equals its `id` and its commit version is 0. The table
 * is copied to a temp dir first; the tests skip when `../shared` is absent.
 */
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { cp, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { DeltaTable } from '../../src/table/delta-table.js'

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const FIXTURE = resolve(repoRoot, '../shared/fixtures/row-tracking/table_with_liquid_clustering')
const SKIP = existsSync(join(FIXTURE, '_delta_log')) ? false : `row-tracking fixture not found at ${FIXTURE}`

async function withFixture(fn: (t: DeltaTable) => Promise<void>): Promise<void> {
  const base = await mkdtemp(join(tmpdir(), 'delta-rlc-row-tracking-fixture-'))
  const dir = join(base, 'table')
  await cp(FIXTURE, dir, { recursive: true })
  const table = await DeltaTable.open(dir)
  try {
    await fn(table)
  } finally {
    await table.close()
    await rm(base, { recursive: true, force: true })
  }
}

describe('row-tracking fixture (Databricks, liquid clustering)', { skip: SKIP }, () => {
  it('reads 10 rows whose row id equals id and whose row commit version is 0', () =>
    withFixture(async (t) => {
      const rows = await t.scan({ withRowTracking: true }).toArray()
      const sorted = rows
        .map((r) => [r.id, r._row_id, r._row_commit_version])
        .sort((a, b) => Number(a[0]) - Number(b[0]))
      assert.deepEqual(
        sorted,
        Array.from({ length: 10 }, (_, i) => [BigInt(i), BigInt(i), 0n]),
      )
    }))

  it('Arrow output carries _row_id and _row_commit_version as Int64', () =>
    withFixture(async (t) => {
      const arrow = await t.scan({ withRowTracking: true, where: 'id >= 7' }).toArrow()
      assert.deepEqual(
        arrow.schema.fields.map((f) => `${f.name}:${f.type}`),
        ['id:Int64', '_row_id:Int64', '_row_commit_version:Int64'],
      )
      const column = (name: string): bigint[] => {
        const child = arrow.getChild(name)
        assert.ok(child, name)
        return [...(child.toArray() as BigInt64Array)]
      }
      assert.deepEqual(column('_row_id').sort(), [7n, 8n, 9n])
      assert.deepEqual(column('_row_commit_version'), [0n, 0n, 0n])
    }))

  it('reads as before without the option', () =>
    withFixture(async (t) => {
      const rows = await t.scan().toArray()
      assert.equal(rows.length, 10)
      for (const r of rows) assert.deepEqual(Object.keys(r), ['id'])
    }))

  it('appends give the new row the next id and the append version; an UPDATE keeps its id', () =>
    withFixture(async (t) => {
      const { version } = await t.append([{ id: 10n }])
      const row = (await t.scan({ withRowTracking: true, where: 'id = 10' }).toArray())[0]
      assert.deepEqual([row?._row_id, row?._row_commit_version], [10n, version])
      const updated = await t.update({ set: { id: '100' }, where: 'id = 10' })
      const moved = (await t.scan({ withRowTracking: true, where: 'id = 100' }).toArray())[0]
      assert.deepEqual([moved?._row_id, moved?._row_commit_version], [10n, updated.version])
      assert.equal((await t.scan().toArray()).length, 11)
    }))
})
