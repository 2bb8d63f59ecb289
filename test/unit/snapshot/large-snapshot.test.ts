/**
 * Large snapshots: a table of 130,000 live files, loaded from its checkpoint and from JSON
 * commits, must not hit engine limits (a spread of every action into one call once overflowed
 * the stack past about 125,000 actions); and a table of 1,000,000 live files (opt-in,
 * DELTA_RLC_BIG=1) opens from a two-part checkpoint, with its files' fields intact. The big test
 * prints the time and the process's peak RSS as diagnostics; it asserts neither.
 */
import assert from 'node:assert/strict'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { DuckDBInstance } from '@duckdb/node-api'
import { createDefaultEngine } from '../../../src/engine-default/default-engine.js'
import { serializeAction, serializeCommit } from '../../../src/protocol/action-json.js'
import type { Action } from '../../../src/protocol/actions.js'
import { createLocalStore } from '../../../src/storage/local-store.js'
import { DeltaTable } from '../../../src/table/delta-table.js'

const FILES = 130_000
const BIG = process.env.DELTA_RLC_BIG === '1'
const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

const SCHEMA =
  '{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"part","type":"string","nullable":true,"metadata":{}}]}'

function setup(partitionColumns: string[]): Action[] {
  return [
    { protocol: { minReaderVersion: 1, minWriterVersion: 2 } },
    {
      metaData: {
        id: 'large',
        format: { provider: 'parquet', options: {} },
        schemaString: SCHEMA,
        partitionColumns,
        configuration: {},
      },
    },
  ]
}

function commitZero(): Action[] {
  const actions = setup([])
  for (let i = 0; i < FILES; i++) {
    actions.push({
      add: { path: `f${i}.parquet`, partitionValues: {}, size: 100n, modificationTime: 1n, dataChange: true },
    })
  }
  return actions
}

/** The statistics of big-table file `i`, as the SQL below writes them. */
function bigStats(i: number): string {
  return `{"numRecords":1000,"minValues":{"id":${i * 1000}},"maxValues":{"id":${i * 1000 + 999}},"nullCount":{"id":0}}`
}

/**
 * Writes a table of `files` live files, partitioned by `part` into 1,000 partitions, whose
 * version 1 is a two-part checkpoint (protocol and metadata in the first part, every add in the
 * second, as Spark splits a large checkpoint) and whose version 0 only creates the table. DuckDB
 * writes the adds, so building the table costs seconds, not the load under test.
 */
async function writeBigTable(root: string, files: number): Promise<void> {
  const log = join(root, '_delta_log')
  await mkdir(log)
  await writeFile(join(log, '00000000000000000000.json'), serializeCommit(setup(['part'])))
  const engine = createDefaultEngine(createLocalStore(root))
  try {
    await engine.parquet.writeActionRows(
      '_delta_log/00000000000000000001.checkpoint.0000000001.0000000002.parquet',
      setup(['part']).map(serializeAction),
    )
  } finally {
    await engine.close()
  }
  const instance = await DuckDBInstance.create(':memory:')
  const con = await instance.connect()
  try {
    const dv =
      'STRUCT(storageType VARCHAR, pathOrInlineDv VARCHAR, "offset" INTEGER, sizeInBytes INTEGER, cardinality BIGINT, maxRowIndex BIGINT)'
    await con.run(
      `COPY (SELECT {
          'path': 'part=' || (i % 1000) || '/part-' || lpad(i::VARCHAR, 7, '0') || '-8b1c2d3e-0000-4000-8000-00000000abcd.c000.snappy.parquet',
          'partitionValues': MAP {'part': (i % 1000)::VARCHAR},
          'size': (100000 + i)::BIGINT,
          'modificationTime': 1700000000000::BIGINT,
          'dataChange': false,
          'tags': NULL::MAP(VARCHAR, VARCHAR),
          'deletionVector': NULL::${dv},
          'baseRowId': NULL::BIGINT,
          'defaultRowCommitVersion': NULL::BIGINT,
          'clusteringProvider': NULL::VARCHAR,
          'stats': '{"numRecords":1000,"minValues":{"id":' || (i * 1000) || '},"maxValues":{"id":' || (i * 1000 + 999) || '},"nullCount":{"id":0}}'
        } AS "add" FROM range(${files}) t(i))
        TO '${join(log, '00000000000000000001.checkpoint.0000000002.0000000002.parquet')}' (FORMAT parquet, COMPRESSION snappy)`,
    )
  } finally {
    con.closeSync()
    instance.closeSync()
  }
  await writeFile(join(log, '_last_checkpoint'), JSON.stringify({ version: 1, size: files + 2, parts: 2 }))
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

  it('1,000,000 live files open from a two-part checkpoint', {
    timeout: 600_000,
    skip: BIG
      ? false
      : 'opt-in: set DELTA_RLC_BIG=1 (writes a 1,000,000-file checkpoint, about 1 GiB of memory)',
  }, async (t) => {
    const files = 1_000_000
    const root = await mkdtemp(join(tmpdir(), 'delta-rlc-large-'))
    roots.push(root)
    await writeBigTable(root, files)
    const rssBefore = process.memoryUsage().rss
    const started = performance.now()
    const table = await DeltaTable.open(root)
    try {
      const snap = await table.snapshot()
      const openMs = performance.now() - started
      assert.equal(snap.version, 1n)
      assert.equal(snap.logSegment.checkpoint?.files.length, 2)
      const all = await snap.files()
      assert.equal(all.length, files)
      for (const i of [0, 123_456, files - 1]) {
        const path = `part=${i % 1000}/part-${String(i).padStart(7, '0')}-8b1c2d3e-0000-4000-8000-00000000abcd.c000.snappy.parquet`
        const f = all.find((x) => x.path === path)
        assert.ok(f, path)
        assert.deepStrictEqual(f.partitionValues, { part: String(i % 1000) })
        assert.equal(f.size, BigInt(100_000 + i))
        assert.equal(f.stats, bigStats(i))
      }
      t.diagnostic(
        `opened ${files} files in ${Math.round(openMs)} ms; RSS ${Math.round(rssBefore / 2 ** 20)} MiB before, ` +
          `peak ${Math.round(process.resourceUsage().maxRSS / 1024)} MiB; heap used ${Math.round(process.memoryUsage().heapUsed / 2 ** 20)} MiB`,
      )
    } finally {
      await table.close()
    }
  })
})
