/**
 * Z-order OPTIMIZE on a table with row tracking enabled (design beyond-rlc 7.3, W1-W3): every
 * output row carries its stable row id and commit version in the materialized columns, so each
 * row keeps its (id, values) pair across the permutation, sources that were themselves earlier
 * OPTIMIZE outputs included (their ids are the materialized ones, not `baseRowId` plus position:
 * edge 1); the commit is tagged as preserving and its tombstones carry no composition tags.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { COMPACTED_INTO_TAG, COMPACTION_INFO_TAG } from '../../src/protocol/composition-tags.js'
import { ROW_TRACKING_PRESERVED_TAG } from '../../src/protocol/row-tracking.js'
import { DeltaTable } from '../../src/table/delta-table.js'
import { addsOf, commitActions, commitInfoOf, readParquet, removesOf } from './ops-support.js'

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

async function createTracked(properties: Record<string, string> = {}): Promise<DeltaTable> {
  const root = await mkdtemp(join(tmpdir(), 'delta-rlc-zorder-rt-'))
  roots.push(root)
  return DeltaTable.create(join(root, 't'), {
    schema: 'id long not null, x int, y int',
    properties: { 'delta.enableRowTracking': 'true', ...properties },
  })
}

/** Live rows as `_row_id -> "id,x,y|commit version"`. */
async function pairs(table: DeltaTable): Promise<Map<bigint, string>> {
  const rows = await table.scan({ withRowTracking: true }).toArray()
  const out = new Map<bigint, string>()
  for (const r of rows) {
    const id = r._row_id as bigint
    assert.ok(!out.has(id), `row id ${id} is unique`)
    out.set(id, `${r.id},${r.x},${r.y}|${r._row_commit_version}`)
  }
  return out
}

/** Rows spread over x and y so that a Z-order really permutes them. */
function rows(from: number, n: number): Record<string, unknown>[] {
  return Array.from({ length: n }, (_, i) => {
    const k = from + i
    return { id: BigInt(k), x: (k * 37) % 101, y: (k * 53) % 89 }
  })
}

describe('Z-order OPTIMIZE preserves row ids', () => {
  it('keeps every (row id, values) pair and commit version, with unique ids, tagged as preserving and without composition tags', async () => {
    const table = await createTracked()
    try {
      for (let f = 0; f < 4; f++) await table.append(rows(f * 50, 50))
      await table.delete('id % 7 = 0')
      const before = await pairs(table)
      const r = await table.optimize({ zOrderBy: ['x', 'y'] })
      assert.ok(r.committed)
      assert.deepEqual(await pairs(table), before)

      const actions = await commitActions(table.location, r.version)
      const tags = commitInfoOf(actions).tags as Readonly<Record<string, string>> | undefined
      assert.equal(tags?.[ROW_TRACKING_PRESERVED_TAG], 'true')
      const removes = removesOf(actions)
      assert.equal(removes.length, 4)
      for (const x of removes) {
        assert.equal(x.tags?.[COMPACTED_INTO_TAG], undefined)
        assert.equal(x.tags?.[COMPACTION_INFO_TAG], undefined)
        assert.notEqual(x.baseRowId, undefined)
      }
      // Each output holds the ids in the materialized column, none null, in Z-order (not id order).
      const config = (await table.snapshot()).metadata.configuration
      const idCol = config['delta.rowTracking.materializedRowIdColumnName'] as string
      const versionCol = config['delta.rowTracking.materializedRowCommitVersionColumnName'] as string
      const [output] = addsOf(actions)
      assert.ok(output)
      const written = await readParquet(join(table.location, output.path), [idCol, versionCol, 'id'])
      assert.equal(written.length, before.size)
      assert.ok(written.every((w) => w[idCol] !== null && w[versionCol] !== null))
      const ids = written.map((w) => Number(w.id))
      assert.notDeepEqual(
        ids,
        [...ids].sort((a, b) => a - b),
      )
    } finally {
      await table.close()
    }
  })

  it('keeps the materialized ids of sources that were earlier OPTIMIZE outputs (not baseRowId + position)', async () => {
    const table = await createTracked()
    try {
      for (let f = 0; f < 3; f++) await table.append(rows(f * 40, 40))
      // A bin-pack gives the rows a new file whose baseRowId is fresh: their ids are now only in
      // the materialized column.
      await table.optimize()
      await table.delete('id % 5 = 1')
      await table.append(rows(1000, 30))
      const snap = await table.snapshot()
      const compacted = snap.activeFiles().find((f) => (f.baseRowId ?? 0n) >= 120n && f.deletionVector)
      assert.ok(compacted, 'the compacted file has a fresh baseRowId above every original id')
      const before = await pairs(table)
      const r = await table.optimize({ zOrderBy: ['y'] })
      assert.ok(r.committed)
      assert.equal((await table.snapshot()).activeFiles().length, 1)
      assert.deepEqual(await pairs(table), before)
      // And again: Z-order outputs relocated by a second Z-order keep them too.
      await table.append(rows(2000, 10))
      const again = await pairs(table)
      await table.optimize({ zOrderBy: ['x'] })
      assert.deepEqual(await pairs(table), again)
    } finally {
      await table.close()
    }
  })
})
