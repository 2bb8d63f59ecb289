/**
 * An append-only table (`delta.appendOnly = true`) takes appends and refuses every operation
 * that would remove rows (the protocol forbids `remove` actions with `dataChange = true` and new
 * deletion vectors there): DELETE, UPDATE and a MERGE that changes rows fail with
 * `DELTA_UNSUPPORTED`, and the table keeps its version and rows.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { DeltaError, DeltaTable } from '../../src/index.js'

describe('append-only table', () => {
  let dir: string
  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'append-only-'))
  })
  after(async () => {
    await fs.rm(dir, { recursive: true, force: true })
  })

  for (const dv of ['true', 'false']) {
    test(`DELETE, UPDATE and MERGE are refused, appends land (deletion vectors ${dv})`, async () => {
      const table = await DeltaTable.create(path.join(dir, `dv-${dv}`), {
        schema: 'id long not null, v int',
        properties: { 'delta.appendOnly': 'true', 'delta.enableDeletionVectors': dv },
      })
      await table.append([
        { id: 1n, v: 1 },
        { id: 2n, v: 2 },
      ])
      const refused = async (what: string, write: () => Promise<unknown>): Promise<void> => {
        await assert.rejects(write, (e: unknown) => {
          assert.ok(e instanceof DeltaError, `${what}: ${String(e)}`)
          assert.equal(e.code, 'DELTA_UNSUPPORTED', what)
          assert.match(e.message, /append-only/)
          return true
        })
      }
      await refused('DELETE of some rows', () => table.delete('id = 1'))
      await refused('DELETE of every row', () => table.delete())
      await refused('UPDATE', () => table.update({ where: 'id = 2', set: { v: '20' } }))
      await refused('MERGE update', () =>
        table.merge([{ id: 1n, v: 10 }], { on: 'target.id = source.id', whenMatched: [{ update: '*' }] }),
      )
      assert.equal((await table.snapshot()).version, 1n)
      await table.append([{ id: 3n, v: 3 }])
      const rows = await table.scan().toArray()
      assert.deepEqual(
        rows.map((r) => [r.id, r.v]).sort((a, b) => Number(a[0]) - Number(b[0])),
        [
          [1n, 1],
          [2n, 2],
          [3n, 3],
        ],
      )
      await table.close()
    })
  }
})
