/**
 * A table of 130,000 live files, loaded from its checkpoint and from JSON commits: large
 * snapshots must not hit engine limits (a spread of every action into one call once overflowed
 * the stack past about 125,000 actions).
 */
import assert from 'node:assert/strict'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { serializeCommit } from '../../../src/protocol/action-json.js'
import type { Action } from '../../../src/protocol/actions.js'
import { DeltaTable } from '../../../src/table/delta-table.js'

const FILES = 130_000
const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

function commitZero(): Action[] {
  const actions: Action[] = [
    { protocol: { minReaderVersion: 1, minWriterVersion: 2 } },
    {
      metaData: {
        id: 'large',
        format: { provider: 'parquet', options: {} },
        schemaString:
          '{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}',
        partitionColumns: [],
        configuration: {},
      },
    },
  ]
  for (let i = 0; i < FILES; i++) {
    actions.push({
      add: { path: `f${i}.parquet`, partitionValues: {}, size: 100n, modificationTime: 1n, dataChange: true },
    })
  }
  return actions
}

describe('large snapshots', () => {
  it(`${FILES} live files load from a JSON commit and from a checkpoint`, { timeout: 120_000 }, async () => {
    const root = await mkdtemp(join(tmpdir(), 'delta-rlc-large-'))
    roots.push(root)
    await mkdir(join(root, '_delta_log'))
    await writeFile(join(root, '_delta_log', '00000000000000000000.json'), serializeCommit(commitZero()))
    const table = await DeltaTable.open(root)
    try {
      assert.equal((await (await table.snapshot()).files()).length, FILES)
      const cp = await table.checkpoint()
      assert.equal(cp.numOfAddFiles, FILES)
      const reopened = await DeltaTable.open(root)
      try {
        const snap = await reopened.snapshot()
        assert.equal(snap.logSegment.checkpoint?.version, 0n)
        assert.equal((await snap.files()).length, FILES)
      } finally {
        await reopened.close()
      }
    } finally {
      await table.close()
    }
  })
})
