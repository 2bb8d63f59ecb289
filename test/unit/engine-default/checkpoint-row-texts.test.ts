/**
 * Checkpoint rows travel from DuckDB as a few long texts, each joining the numbered texts of a
 * group of rows. The rows of a text come back in row order even when DuckDB joined them in
 * another, and a checkpoint whose own columns hide DuckDB's row numbers (a column named
 * `file_row_number`) is read to the same snapshot row by row.
 */
import assert from 'node:assert/strict'
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { DuckDBInstance } from '@duckdb/node-api'
import type { ActionRow } from '../../../src/engine/engine.js'
import { type MapTextCache, splitRows } from '../../../src/engine-default/checkpoint-typed-rows.js'
import { createDefaultEngine } from '../../../src/engine-default/default-engine.js'
import { serializeCommit } from '../../../src/protocol/action-json.js'
import type { Action } from '../../../src/protocol/actions.js'
import { loadSnapshot } from '../../../src/snapshot/load-snapshot.js'
import { writeCheckpoint } from '../../../src/snapshot/write-checkpoint.js'
import { createLocalStore } from '../../../src/storage/local-store.js'
import { syntheticTableSetup } from '../../helpers/synthetic-table.js'

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

const F = '\u0001'
const R = '\u001e'

/** A typed add row's text: path, partition values, size, time, data change, then 10 empty fields and the stats. */
function typedAdd(path: string, stats: string): string {
  return `${F}${path}${F}{}${F}100${F}5${F}t${F.repeat(10)}${F}+${stats}`
}

describe('checkpoint row texts', () => {
  it('come back in row order whatever order DuckDB joined them in', () => {
    const cases: Array<[string, number[]]> = [
      ['in order', [0, 1, 2, 3]],
      ['reversed', [3, 2, 1, 0]],
      ['one late row', [0, 1, 3, 2]],
      ['first row last', [1, 2, 3, 0]],
    ]
    const texts = [
      '{"txn":{"appId":"a","version":1}}',
      typedAdd('f1.parquet', '{"numRecords":1}'),
      '{"remove":{"path":"gone.parquet","dataChange":true}}',
      typedAdd('f3.parquet', '{"numRecords":3}'),
    ]
    for (const [what, order] of cases) {
      const rows: ActionRow[] = ['before']
      const maps: MapTextCache = new Map()
      splitRows(order.map((n) => `${n + 4000}${texts[n]}`).join(R), rows, maps, true)
      assert.equal(rows.length, 5, what)
      assert.equal(rows[0], 'before', what)
      assert.equal(rows[1], texts[0], what)
      assert.equal((rows[2] as { add: { path: string } }).add.path, 'f1.parquet', what)
      assert.equal(rows[3], texts[2], what)
      assert.deepStrictEqual(
        rows[4],
        {
          add: {
            path: 'f3.parquet',
            partitionValues: {},
            size: 100n,
            modificationTime: 5n,
            dataChange: true,
            stats: '{"numRecords":3}',
            tags: null,
            deletionVector: null,
            baseRowId: null,
            defaultRowCommitVersion: null,
            clusteringProvider: null,
          },
        },
        what,
      )
    }
  })

  it('of a checkpoint with a file_row_number column load the same snapshot', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'delta-rlc-cp-texts-'))
    roots.push(dir)
    const log = join(dir, '_delta_log')
    await mkdir(log)
    const now = 1_700_000_000_000n
    const actions: Action[] = [...syntheticTableSetup(now)]
    for (let i = 0; i < 300; i++) {
      actions.push({
        add: {
          path: `part-${i}.parquet`,
          partitionValues: {},
          size: BigInt(1000 + i),
          modificationTime: now,
          dataChange: true,
          stats: `{"numRecords":${i}}`,
        },
      })
    }
    for (let i = 0; i < 20; i++) {
      actions.push({ remove: { path: `old-${i}.parquet`, deletionTimestamp: now, dataChange: true } })
    }
    await writeFile(join(log, '00000000000000000000.json'), serializeCommit(actions))
    const engine = createDefaultEngine(createLocalStore(dir))
    try {
      const fromJson = await loadSnapshot(engine, dir)
      const cp = await writeCheckpoint(engine, fromJson)
      const plain = await loadSnapshot(engine, dir)
      assert.equal(plain.logSegment.checkpoint?.version, 0n)
      // The same checkpoint with one more column, named like DuckDB's row number column.
      const path = join(dir, cp.key)
      const instance = await DuckDBInstance.create(':memory:')
      const con = await instance.connect()
      try {
        await con.run(
          `COPY (SELECT *, 7 AS file_row_number FROM read_parquet('${path}')) TO '${path}.tmp' (FORMAT parquet)`,
        )
      } finally {
        con.closeSync()
        instance.closeSync()
      }
      await rename(`${path}.tmp`, path)
      const odd = await loadSnapshot(engine, dir)
      assert.equal(odd.logSegment.checkpoint?.version, 0n)
      assert.equal(odd.activeFiles().length, 300)
      assert.deepStrictEqual(odd.activeFiles(), plain.activeFiles())
      assert.deepStrictEqual(odd.tombstones(), plain.tombstones())
    } finally {
      await engine.close()
    }
  })
})
