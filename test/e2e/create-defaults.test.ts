/**
 * Tables delta-rlc creates have deletion vectors on unless `delta.enableDeletionVectors` is set
 * to `'false'`: a DELETE then marks rows in a deletion vector instead of rewriting the file.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { DeltaTable } from '../../src/table/delta-table.js'

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

async function deleteOne(properties?: Record<string, string>) {
  const root = await mkdtemp(join(tmpdir(), 'delta-rlc-create-defaults-'))
  roots.push(root)
  const table = await DeltaTable.create(join(root, 't'), { schema: 'id long not null', properties })
  try {
    await table.append([{ id: 1n }, { id: 2n }, { id: 3n }])
    await table.delete('id = 2')
    const snap = await table.snapshot()
    const files = await snap.files()
    const ids = (await table.scan().toArray()).map((r) => r.id).sort()
    return { snap, files, ids }
  } finally {
    await table.close()
  }
}

describe('table defaults at creation', () => {
  it('deletion vectors are on without the property: protocol 3/7 and a DELETE writes a DV', async () => {
    const { snap, files, ids } = await deleteOne()
    assert.equal(snap.properties['delta.enableDeletionVectors'], 'true')
    assert.equal(snap.protocol.minReaderVersion, 3)
    assert.equal(snap.protocol.minWriterVersion, 7)
    assert.ok(snap.protocol.readerFeatures?.includes('deletionVectors'))
    assert.equal(files.length, 1)
    assert.equal(files[0]?.deletionVector?.cardinality, 1n)
    assert.deepEqual(ids, [1n, 3n])
  })

  it("delta.enableDeletionVectors='false' opts out: no DV feature, and a DELETE rewrites the file", async () => {
    const { snap, files, ids } = await deleteOne({ 'delta.enableDeletionVectors': 'false' })
    assert.equal(snap.properties['delta.enableDeletionVectors'], 'false')
    assert.ok(!(snap.protocol.readerFeatures ?? []).includes('deletionVectors'))
    assert.equal(files.length, 1)
    assert.equal(files[0]?.deletionVector, undefined)
    assert.deepEqual(ids, [1n, 3n])
  })
})
