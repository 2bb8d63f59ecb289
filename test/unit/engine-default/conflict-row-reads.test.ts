/**
 * The conflict checker's row reads (Case 6) through the default engine on a real data file: a
 * changed-rows read (`onlyDeletedBy`) returns exactly the rows a deletion-vector update took out,
 * and no answer when the update brought rows back or the file's row count is unknown.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { RowReadRequest } from '../../../src/conflict/fetched-facts.js'
import { initDeletionVectors, RoaringBitmapArray } from '../../../src/dv/index.js'
import { createDefaultEngine } from '../../../src/engine-default/default-engine.js'
import { parsePredicate } from '../../../src/expressions/index.js'
import type { AddFile, DeletionVectorDescriptor } from '../../../src/protocol/actions.js'
import { columnSpecs } from '../../../src/scan/column-specs.js'
import { createLocalStore } from '../../../src/storage/index.js'
import { DeltaTable } from '../../../src/table/delta-table.js'
import { loadRowReads } from '../../../src/txn/conflict-row-reads.js'
import { inlineDv } from '../conflict/factories.js'

await initDeletionVectors()

let root: string
let location: string
let file: AddFile
let columns: ReturnType<typeof columnSpecs>

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'delta-rlc-row-reads-'))
  location = join(root, 't')
  const table = await DeltaTable.create(location, {
    schema: 'id long, v int',
    properties: { 'delta.enableDeletionVectors': 'true' },
  })
  await table.append(Array.from({ length: 10 }, (_, i) => ({ id: BigInt(100 + i), v: i })))
  const snap = await table.snapshot()
  file = snap.activeFiles()[0]!
  columns = columnSpecs(snap, undefined)
  await table.close()
})
after(() => rm(root, { recursive: true, force: true }))

/** Reads `file` under the deletion vector `live`, only the rows `taken` deletes. */
async function read(
  live: readonly number[] | undefined,
  taken: readonly number[],
  o: { stats?: string } = {},
): Promise<readonly bigint[] | undefined> {
  const engine = createDefaultEngine(createLocalStore(location))
  try {
    const bitmaps = new Map<DeletionVectorDescriptor, RoaringBitmapArray>()
    const dv = (positions: readonly number[]) => {
      const d = inlineDv(positions)
      bitmaps.set(d, RoaringBitmapArray.fromPositions(positions))
      return d
    }
    const request: RowReadRequest = {
      key: 'k',
      file: {
        ...file,
        ...(o.stats === undefined ? {} : { stats: o.stats }),
        ...(live === undefined ? {} : { deletionVector: dv(live) }),
      },
      predicate: parsePredicate('id >= 0'),
      columns: ['id'],
      ids: 'position',
      maxRows: 100,
      onlyDeletedBy: dv(taken),
    }
    const answers = await loadRowReads(engine, columns, [request], async (d) => bitmaps.get(d)!, undefined)
    const rows = answers.get('k')
    return rows?.map((r) => r.values[0] as bigint).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  } finally {
    await engine.close()
  }
}

describe('changed-rows reads of a deletion-vector update', () => {
  it('return exactly the rows the new deletion vector takes out', async () => {
    assert.deepEqual(await read([1], [1, 2, 7]), [102n, 107n])
    assert.deepEqual(await read(undefined, [0, 9]), [100n, 109n])
  })

  it('return nothing when the update takes out no live row', async () => {
    assert.deepEqual(await read([1, 2], [1, 2]), [])
  })

  it('give no answer when the update brought a row back', async () => {
    assert.equal(await read([1, 2], [1, 3]), undefined)
  })

  it('give no answer without the row count the statistics hold', async () => {
    assert.equal(await read([1], [1, 2], { stats: '{}' }), undefined)
  })

  it('past a row count that undercounts the file, return every row there: a change too many, never one missed', async () => {
    assert.deepEqual(await read([1], [1, 8], { stats: '{"numRecords":5}' }), [105n, 106n, 107n, 108n, 109n])
  })
})
