/**
 * A scan over 2,000,000 rows in 20 files with about 10% of the rows deleted by deletion
 * vectors returns exactly the live rows, checked against the independently known truth
 * (count and sum of ids computed while the table was generated).
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { DeltaTable } from '../../src/table/delta-table.js'
import { buildSyntheticTable, type SyntheticTable } from '../helpers/synthetic-table.js'

describe('DV-aware scan at scale', () => {
  let root: string
  let table: SyntheticTable
  let delta: DeltaTable

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'delta-rlc-scan-large-'))
    table = await buildSyntheticTable(join(root, 't'), {
      files: 20,
      rowsPerFile: 100_000,
      deleteFraction: 0.1,
    })
    delta = await DeltaTable.open(table.dir)
  })
  after(async () => {
    await delta?.close()
    await rm(root, { recursive: true, force: true })
  })

  it('2,000,000 rows in 20 files with 10% deleted: exactly the live rows', async () => {
    assert.equal(table.totalRows, 2_000_000)
    assert.ok(
      table.liveRows < 1_850_000 && table.liveRows > 1_750_000,
      `about 10% deleted: ${table.liveRows}`,
    )
    assert.equal(await delta.scan().count(), table.liveRows)
    let rows = 0
    let idSum = 0n
    for await (const batch of delta.scan({ columns: ['id'], batchSize: 50_000 })) {
      for (const r of batch) {
        rows++
        idSum += r.id as bigint
      }
    }
    assert.equal(rows, table.liveRows)
    assert.equal(idSum, table.liveIdSum)
  })

  it('a predicate over the DV-masked table counts only live matching rows', async () => {
    // Files 0..4 hold ids [0, 500000); live rows among them are those the generator kept.
    const scan = delta.scan({ where: 'id < 500000' })
    const plan = await scan.plan()
    assert.equal(plan.files.length, 5, 'stats skipping keeps only the five files that may match')
    const expected = table.liveRowsPerFile.slice(0, 5).reduce((a, b) => a + b, 0)
    assert.equal(await scan.count(), expected)
  })
})
