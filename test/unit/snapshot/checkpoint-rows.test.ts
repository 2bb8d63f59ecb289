/**
 * Checkpoint rows read as typed columns (the fast way snapshot loading takes) give exactly the
 * actions their JSON lines give, on every checkpoint of the golden tables, on a checkpoint that
 * sets every `add` field in several chunks, and on checkpoints typed otherwise or malformed
 * (which the typed way leaves to the JSON reader, message for message).
 */
import assert from 'node:assert/strict'
import { readdirSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { DuckDBInstance } from '@duckdb/node-api'
import type { ActionRow, Engine } from '../../../src/engine/engine.js'
import { createDefaultEngine } from '../../../src/engine-default/default-engine.js'
import { serializeAction, serializeCommit } from '../../../src/protocol/action-json.js'
import type { Action, AddFile } from '../../../src/protocol/actions.js'
import type { DeferredCheckpointRow } from '../../../src/snapshot/checkpoint-parsed-rows.js'
import { loadSnapshot } from '../../../src/snapshot/load-snapshot.js'
import { parseRowsInto } from '../../../src/snapshot/read-checkpoint.js'
import { writeCheckpoint } from '../../../src/snapshot/write-checkpoint.js'
import { createLocalStore } from '../../../src/storage/local-store.js'
import { GOLDEN_DIR, GOLDEN_SKIP } from '../../helpers/golden.js'

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'delta-rlc-cp-rows-'))
  roots.push(dir)
  return dir
}

/** What one way of reading gave: the actions, the rows set aside, or the error. */
interface Read {
  readonly actions: Action[]
  readonly deferred: DeferredCheckpointRow[]
  readonly error?: { readonly code: unknown; readonly reason: unknown; readonly message: string }
  /** Rows that came decoded rather than as JSON text. */
  readonly typedRows: number
}

async function readAs(engine: Engine, keys: string[], typed: boolean): Promise<Read> {
  const actions: Action[] = []
  const deferred: DeferredCheckpointRow[] = []
  const ctx = { path: keys[0], version: 7n }
  let typedRows = 0
  try {
    if (typed) {
      const read = engine.parquet.readActionRowBatches
      assert.ok(read, 'the default engine reads checkpoint rows in batches')
      await read.call(engine.parquet, keys, (rows: readonly ActionRow[]) => {
        for (const r of rows) if (typeof r !== 'string') typedRows++
        parseRowsInto(actions, rows, ctx, deferred)
      })
    } else {
      parseRowsInto(actions, await engine.parquet.readActionRows(keys), ctx, deferred)
    }
  } catch (err) {
    const e = err as { code?: unknown; reason?: unknown; message?: string }
    return {
      actions,
      deferred,
      typedRows,
      error: { code: e.code, reason: e.reason, message: String(e.message) },
    }
  }
  return { actions, deferred, typedRows }
}

/** Reads `keys` both ways and checks that they agree; returns the typed read. */
async function assertSameBothWays(engine: Engine, keys: string[]): Promise<Read> {
  const json = await readAs(engine, keys, false)
  const typed = await readAs(engine, keys, true)
  assert.deepStrictEqual(typed.error, json.error, `errors of ${keys.join(', ')}`)
  if (json.error === undefined) {
    assert.equal(typed.actions.length, json.actions.length, `actions of ${keys.join(', ')}`)
    for (let i = 0; i < json.actions.length; i++) {
      assert.deepStrictEqual(typed.actions[i], json.actions[i], `action ${i} of ${keys.join(', ')}`)
    }
    assert.deepStrictEqual(typed.deferred, json.deferred)
  }
  return typed
}

function parquetFilesUnder(dir: string): string[] {
  const out: string[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) for (const p of parquetFilesUnder(path)) out.push(p)
    else if (entry.name.endsWith('.parquet')) out.push(path)
  }
  return out
}

const SCHEMA = JSON.stringify({
  type: 'struct',
  fields: ['id', 'a', 'b', 'c'].map((name) => ({
    name,
    type: name === 'id' ? 'long' : 'string',
    nullable: true,
    metadata: {},
  })),
})

function tableSetup(partitionColumns: string[]): Action[] {
  return [
    {
      protocol: {
        minReaderVersion: 3,
        minWriterVersion: 7,
        readerFeatures: ['deletionVectors'],
        writerFeatures: ['deletionVectors'],
      },
    },
    {
      metaData: {
        id: 'cp-rows',
        format: { provider: 'parquet', options: {} },
        schemaString: SCHEMA,
        partitionColumns,
        configuration: { 'delta.enableDeletionVectors': 'true' },
        createdTime: 1_700_000_000_000n,
      },
    },
  ]
}

/** The `i`th add of the generated table: every optional field set on some files, unset on others. */
function variedAdd(i: number): AddFile {
  const dvs = [
    undefined,
    {
      storageType: 'u',
      pathOrInlineDv: 'ab^-aqEH.-t@S}K{vb[*k^',
      offset: 4,
      sizeInBytes: 40,
      cardinality: 6n,
    },
    {
      storageType: 'u',
      pathOrInlineDv: 'ab^-aqEH.-t@S}K{vb[*k^',
      offset: 1,
      sizeInBytes: 34,
      cardinality: 3n,
      maxRowIndex: 9_007_199_254_740_993n,
    },
    {
      storageType: 'i',
      pathOrInlineDv: 'wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L',
      sizeInBytes: 40,
      cardinality: 6n,
    },
    {
      storageType: 'p',
      pathOrInlineDv: 'file:///tmp/x/deletion_vector_1.bin',
      offset: 1,
      sizeInBytes: 36,
      cardinality: 2n,
    },
  ] as const
  const partitions = [
    { a: 'x', b: null, c: 'ü %/=' },
    { a: 'y', b: 'z', c: '' },
    { a: null, b: null, c: null },
    { a: 'a\u0001b', b: '\u0001', c: 'c' },
  ]
  return {
    path: `a=${i % 3}/part-${i}-${i % 7 === 0 ? 'sp%20ace' : 'plain'}.parquet`,
    partitionValues: partitions[i % 4] as AddFile['partitionValues'],
    size: i % 11 === 0 ? 2n ** 60n + BigInt(i) : BigInt(1000 + i),
    modificationTime: i % 13 === 0 ? 2n ** 53n + 1n : 1_700_000_000_000n + BigInt(i),
    dataChange: true,
    ...(i % 5 === 0
      ? {}
      : {
          stats: `{"numRecords":${i},"minValues":{"id":${i}},"maxValues":{"id":${i * 10_000_000_000_000_000}}}`,
        }),
    ...(i % 4 === 0 ? { tags: { INSERTION_TIME: `${i}`, other: null } } : {}),
    ...(dvs[i % 5] === undefined ? {} : { deletionVector: dvs[i % 5] }),
    ...(i % 6 === 0 ? { baseRowId: 2n ** 62n + BigInt(i), defaultRowCommitVersion: BigInt(i) } : {}),
    ...(i % 9 === 0 ? { clusteringProvider: 'liquid' } : {}),
  }
}

describe('checkpoint rows read as typed columns', () => {
  it('give the actions of their JSON lines on every golden checkpoint and sidecar', {
    skip: GOLDEN_SKIP,
  }, async () => {
    let files = 0
    let typedRows = 0
    for (const table of readdirSync(GOLDEN_DIR as string)) {
      const logDir = join(GOLDEN_DIR as string, table, '_delta_log')
      let keys: string[]
      try {
        keys = parquetFilesUnder(logDir).map((p) => p.slice(join(GOLDEN_DIR as string, table).length + 1))
      } catch {
        continue
      }
      if (keys.length === 0) continue
      const engine = createDefaultEngine(createLocalStore(join(GOLDEN_DIR as string, table)))
      try {
        for (const key of keys) {
          typedRows += (await assertSameBothWays(engine, [key])).typedRows
          files++
        }
      } finally {
        await engine.close()
      }
    }
    assert.ok(files >= 5, `golden checkpoint files found: ${files}`)
    assert.ok(typedRows > 0, 'some golden rows were read as typed columns')
  })

  it('give the same actions for every add and remove field, over several chunks, and load the same snapshot', async () => {
    const dir = await tempDir()
    await mkdir(join(dir, '_delta_log'))
    const n = 5_000
    const actions = tableSetup(['a', 'b', 'c'])
    for (let i = 0; i < n; i++) actions.push({ add: variedAdd(i) })
    actions.push({ txn: { appId: 'app', version: 3n, lastUpdated: 1_700_000_000_000n } })
    actions.push({ domainMetadata: { domain: 'd', configuration: '{}', removed: false } })
    const removes = 60
    for (let i = 0; i < removes; i++) {
      // Every optional field of a tombstone set in some rows and missing in others.
      const like = variedAdd(n + i)
      actions.push({
        remove: {
          path: `gone-${i}${i % 7 === 0 ? '-sp%20ace' : ''}.parquet`,
          ...(i % 8 === 0 ? {} : { deletionTimestamp: BigInt(Date.now()) + BigInt(i) }),
          dataChange: i % 2 === 0,
          ...(i % 3 === 0 ? {} : { extendedFileMetadata: i % 3 === 1 }),
          ...(i % 3 === 0 ? {} : { partitionValues: like.partitionValues, size: like.size }),
          ...(like.stats === undefined || i % 2 === 0 ? {} : { stats: like.stats }),
          ...(like.tags === undefined ? {} : { tags: like.tags }),
          ...(like.deletionVector === undefined ? {} : { deletionVector: like.deletionVector }),
          ...(like.baseRowId === undefined
            ? {}
            : { baseRowId: like.baseRowId, defaultRowCommitVersion: like.defaultRowCommitVersion }),
        },
      })
    }
    await writeFile(join(dir, '_delta_log', '00000000000000000000.json'), serializeCommit(actions))
    const engine = createDefaultEngine(createLocalStore(dir))
    try {
      const fromJson = await loadSnapshot(engine, dir)
      const cp = await writeCheckpoint(engine, fromJson)
      const typed = await assertSameBothWays(engine, [cp.key])
      assert.equal(typed.typedRows, n + removes, 'every add and remove was read as typed columns')
      const fromCheckpoint = await loadSnapshot(engine, dir)
      assert.equal(fromCheckpoint.logSegment.checkpoint?.version, 0n)
      const byPath = new Map(fromJson.activeFiles().map((f) => [f.path, f]))
      assert.equal(fromCheckpoint.activeFiles().length, n)
      for (const file of fromCheckpoint.activeFiles()) {
        // A checkpoint records every file with dataChange false; every other field is kept.
        assert.deepStrictEqual(file, { ...byPath.get(file.path), dataChange: false }, file.path)
      }
      assert.deepStrictEqual(
        fromCheckpoint
          .tombstones()
          .map((t) => t.path)
          .sort(),
        fromJson
          .tombstones()
          .map((t) => t.path)
          .sort(),
      )
      assert.deepStrictEqual(fromCheckpoint.setTransactions(), fromJson.setTransactions())
    } finally {
      await engine.close()
    }
  })

  it('are read as JSON, to the same actions, when the add or remove column is typed otherwise', async () => {
    const dir = await tempDir()
    await mkdir(join(dir, '_delta_log'))
    const instance = await DuckDBInstance.create(':memory:')
    const con = await instance.connect()
    try {
      // size as a 32-bit integer and the partition values as a list of pairs: not the types the
      // typed reading expects.
      await con.run(
        `COPY (SELECT {'path': 'f' || i || '.parquet', 'partitionValues': MAP {'p': 'v' || (i % 2)}, 'size': i::INTEGER, 'modificationTime': 5::BIGINT, 'dataChange': true, 'stats': '{"numRecords":1}'} AS "add" FROM range(3000) t(i)) TO '${join(dir, '_delta_log', 'odd.parquet')}' (FORMAT parquet)`,
      )
      // A tombstone's size as a 32-bit integer, and one with a field the protocol does not name.
      await con.run(
        `COPY (SELECT {'path': 'g' || i || '.parquet', 'dataChange': true, 'size': i::INTEGER} AS "remove" FROM range(2000) t(i)) TO '${join(dir, '_delta_log', 'odd-remove.parquet')}' (FORMAT parquet)`,
      )
      await con.run(
        `COPY (SELECT {'path': 'h' || i || '.parquet', 'dataChange': true, 'size': i::BIGINT, 'extra': 'x'} AS "remove" FROM range(2000) t(i)) TO '${join(dir, '_delta_log', 'extra-remove.parquet')}' (FORMAT parquet)`,
      )
    } finally {
      con.closeSync()
      instance.closeSync()
    }
    const engine = createDefaultEngine(createLocalStore(dir))
    try {
      const read = await assertSameBothWays(engine, ['_delta_log/odd.parquet'])
      assert.equal(read.typedRows, 0)
      assert.equal(read.actions.length, 3000)
      for (const key of ['_delta_log/odd-remove.parquet', '_delta_log/extra-remove.parquet']) {
        const removes = await assertSameBothWays(engine, [key])
        assert.equal(removes.typedRows, 0, key)
        assert.equal(removes.actions.length, 2000, key)
      }
    } finally {
      await engine.close()
    }
  })

  it('leave an add whose path holds their separator to the JSON reader', async () => {
    const dir = await tempDir()
    await mkdir(join(dir, '_delta_log'))
    const engine = createDefaultEngine(createLocalStore(dir))
    try {
      const odd = { ...variedAdd(2), path: 'odd\u0001name.parquet' }
      const key = '_delta_log/separator.parquet'
      await engine.parquet.writeActionRows(
        key,
        [variedAdd(1), odd, variedAdd(3)].map((add) => serializeAction({ add })),
      )
      const read = await assertSameBothWays(engine, [key])
      assert.equal(read.typedRows, 2)
      assert.equal(read.actions.length, 3)
      assert.deepStrictEqual(read.actions[1], { add: odd })
    } finally {
      await engine.close()
    }
  })

  it('leave a malformed add to the JSON reader, which refuses it with the same message', async () => {
    const dir = await tempDir()
    await mkdir(join(dir, '_delta_log'))
    const engine = createDefaultEngine(createLocalStore(dir))
    const good = serializeAction({ add: variedAdd(1) })
    const cases: Array<[string, string]> = [
      ['no path', good.replace(/"path":"[^"]*",/, '')],
      ['no size', good.replace(/"size":\d+,/, '')],
      ['no partition values', good.replace(/"partitionValues":\{[^}]*\},/, '')],
      ['a bad DV storage type', good.replace('"storageType":"u"', '"storageType":"x"')],
      ['a DV without cardinality', good.replace(/,"cardinality":\d+/, '')],
    ]
    try {
      for (const [what, line] of cases) {
        assert.notEqual(line, good, what)
        const key = `_delta_log/${what.replaceAll(' ', '-')}.parquet`
        await engine.parquet.writeActionRows(key, [good, line, good])
        const read = await assertSameBothWays(engine, [key])
        assert.equal(read.error?.code, 'DELTA_INVALID_TABLE', what)
        assert.equal(read.error?.reason, 'malformed-action', what)
        assert.equal(read.typedRows, 2, `${what}: the good rows around it came typed`)
      }
    } finally {
      await engine.close()
    }
  })
})
