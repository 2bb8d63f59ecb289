import assert from 'node:assert/strict'
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { DuckDBInstance } from '@duckdb/node-api'
import type { DataFileRef } from '../../../src/engine/data-plane.js'
import type { CompactionOutput, WrittenFile } from '../../../src/engine/data-writer.js'
import { DuckDbRuntime } from '../../../src/engine-default/duckdb-runtime.js'
import { DuckDbWriter } from '../../../src/engine-default/duckdb-writer.js'
import { InvalidArgumentError } from '../../../src/errors/index.js'
import { decodeAddPath } from '../../../src/protocol/partition-values.js'
import { type ColumnMappingMode, parseSchema, type StructType } from '../../../src/protocol/schema.js'
import { createLocalStore } from '../../../src/storage/index.js'
import type { ObjectStore } from '../../../src/storage/object-store.js'
import { GOLDEN_DIR, GOLDEN_SKIP } from '../../helpers/golden.js'
import {
  listKeys,
  parseStatsText,
  readFileRows,
  schemaOf,
  targetOf,
  type WriterEnv,
  writerEnv,
} from './writer-helpers.js'

const schema = schemaOf(
  { name: 'id', type: 'long', nullable: false },
  { name: 'v', type: 'string' },
  { name: 'p', type: 'string' },
)
const target = targetOf(schema, { partitionColumns: ['p'] })

/** A source file, its DV, and its rows in physical order. */
interface Source {
  readonly ref: DataFileRef
  readonly rows: Record<string, unknown>[]
}

/** Each source's live rows must sit, in order, at its reported offset in the bin's output. */
async function checkOutput(
  store: ObjectStore,
  out: CompactionOutput,
  bin: readonly Source[],
  tableSchema: StructType,
  partitionColumns: readonly string[],
  mode: ColumnMappingMode = 'none',
): Promise<void> {
  assert.deepStrictEqual(
    out.sources.map((s) => s.key),
    bin.map((s) => s.ref.key),
  )
  let offset = 0
  const expectedLive: Record<string, unknown>[][] = []
  for (const [i, s] of bin.entries()) {
    const deleted = new Set(Array.from(s.ref.deletedRows ?? []))
    const live = s.rows.filter((_, pos) => !deleted.has(pos))
    expectedLive.push(live)
    const reported = out.sources[i]
    assert.deepStrictEqual(reported, {
      key: s.ref.key,
      rowOffsetInTarget: offset,
      rowCount: live.length,
      physicalRowCount: s.rows.length,
    })
    offset += live.length
  }
  if (offset === 0) {
    assert.equal(out.file, null)
    return
  }
  const file = out.file as WrittenFile
  assert.equal(file.numRecords, offset)
  assert.equal((parseStatsText(file.stats) as { numRecords: string }).numRecords, `#${offset}`)
  assert.deepStrictEqual(file.partitionValues, (bin[0] as Source).ref.partitionValues)
  const back = await readFileRows(store, file.key, tableSchema, { partitionColumns, mode })
  assert.deepStrictEqual(
    back.positions,
    back.rows.map((_, i) => i),
  )
  for (const [i, live] of expectedLive.entries()) {
    const at = (out.sources[i] as { rowOffsetInTarget: number }).rowOffsetInTarget
    assert.deepStrictEqual(back.rows.slice(at, at + live.length), live, `rows of source ${i}`)
  }
  assert.equal(back.rows.length, offset)
}

describe('compact', () => {
  let env: WriterEnv
  const src: Record<string, Source> = {}

  async function addSource(
    name: string,
    rows: Record<string, unknown>[],
    deletedRows?: number[],
  ): Promise<void> {
    const [f] = await env.writer.writeRows({ rows: rows.map((r) => ({ ...r, p: 'x' })), target })
    const file = f as WrittenFile
    const back = await readFileRows(env.store, file.key, schema, { partitionColumns: ['p'] })
    src[name] = {
      ref: { key: file.key, partitionValues: file.partitionValues, deletedRows },
      rows: back.rows,
    }
  }

  before(async () => {
    env = await writerEnv()
    const ids = (list: number[]) => list.map((id) => ({ id: BigInt(id), v: `v${id}` }))
    await addSource('plain', ids([30, 10, 20, 60, 50, 40, 0]))
    await addSource('dv', ids([105, 101, 104, 102, 103]), [0, 2])
    await addSource('allDeleted', ids([201, 200, 203, 202]), [0, 1, 2, 3])
    await addSource('lastDeleted', ids([302, 301, 300]), [2])
    const n = 300_000
    const big = Array.from({ length: n }, (_, i) => ({
      id: BigInt(1_000_000 + ((i * 7919) % n)),
      v: i % 3 === 0 ? null : `b${i}`,
    }))
    const bigDv = [0, 122_879, 122_880, 245_759, 245_760, n - 1]
    for (let p = 997; p < n; p += 997) bigDv.push(p)
    await addSource(
      'big',
      big,
      [...new Set(bigDv)].sort((a, b) => a - b),
    )
    // An older file without the `v` column (added later) and with `id` still an integer.
    const [old] = await env.writer.writeRows({
      rows: [
        { id: 401, p: 'x' },
        { id: 400, p: 'x' },
      ],
      target: targetOf(schemaOf({ name: 'id', type: 'integer' }, { name: 'p', type: 'string' }), {
        partitionColumns: ['p'],
      }),
    })
    src.older = {
      ref: { key: (old as WrittenFile).key, partitionValues: { p: 'x' } },
      rows: [
        { id: 401n, v: null },
        { id: 400n, v: null },
      ],
    }
    // A file with no rows at all.
    const emptyKey = 'p=x/empty.parquet'
    const localPath = env.store.localPath?.(emptyKey) as string
    const db = await DuckDBInstance.create(':memory:')
    const con = await db.connect()
    await con.run(
      `COPY (SELECT CAST(1 AS BIGINT) AS id, 'a' AS v LIMIT 0) TO '${localPath}' (FORMAT parquet)`,
    )
    con.closeSync()
    db.closeSync()
    src.empty = { ref: { key: emptyKey, partitionValues: { p: 'x' } }, rows: [] }
  })
  after(async () => {
    await env.close()
  })

  const bins: [string, string[]][] = [
    ['one source without a DV', ['plain']],
    ['sources in bin order, DVs applied', ['dv', 'plain', 'lastDeleted']],
    ['a source with no live rows between others', ['plain', 'allDeleted', 'dv']],
    ['a physically empty source', ['empty', 'lastDeleted']],
    ['an older file read as the table schema', ['older', 'plain']],
    ['a large source across row groups with a DV', ['lastDeleted', 'big', 'dv']],
    ['a bin without live rows', ['allDeleted', 'empty']],
  ]

  it('writes each bin to one file with every source at its recorded offset', async () => {
    const before = new Set(await listKeys(env.store))
    const binSources = bins.map(([, names]) => names.map((n) => src[n] as Source))
    const outputs = await env.writer.compact({ bins: binSources.map((b) => b.map((s) => s.ref)), target })
    assert.equal(outputs.length, bins.length)
    for (const [i, [name]] of bins.entries()) {
      await test(name, () =>
        checkOutput(env.store, outputs[i] as CompactionOutput, binSources[i] as Source[], schema, ['p']),
      )
    }
    const added = (await listKeys(env.store)).filter((k) => !before.has(k))
    assert.deepStrictEqual(
      added.sort(),
      outputs
        .map((o) => o.file?.key)
        .filter((k): k is string => k !== undefined)
        .sort(),
    )
    for (const o of outputs) if (o.file) assert.ok(o.file.key.startsWith('p=x/part-'), o.file.key)
  })

  async function test(name: string, fn: () => Promise<void>): Promise<void> {
    try {
      await fn()
    } catch (err) {
      if (err instanceof Error) err.message = `${name}: ${err.message}`
      throw err
    }
  }

  const errors: [string, () => DataFileRef[][], RegExp][] = [
    ['an empty bin', () => [[]], /bin 0 is empty/],
    ['a key twice in a bin', () => [[(src.plain as Source).ref, (src.plain as Source).ref]], /listed twice/],
    [
      'sources of different partitions',
      () => [[(src.plain as Source).ref, { ...(src.dv as Source).ref, partitionValues: { p: 'y' } }]],
      /mixes partitions/,
    ],
  ]
  for (const [name, bins, message] of errors) {
    it(`rejects ${name}`, async () => {
      await assert.rejects(env.writer.compact({ bins: bins(), target }), (err: unknown) => {
        assert.ok(err instanceof InvalidArgumentError)
        assert.match(err.message, message)
        return true
      })
    })
  }

  it('compacts through a store without local paths', async () => {
    const mem = await writerEnv('memory')
    try {
      const sources: Source[] = []
      for (const ids of [
        [3, 1, 2],
        [9, 8],
      ]) {
        const [f] = await mem.writer.writeRows({
          rows: ids.map((id) => ({ id: BigInt(id), v: null, p: 'x' })),
          target,
        })
        const file = f as WrittenFile
        sources.push({
          ref: { key: file.key, partitionValues: file.partitionValues, deletedRows: [1] },
          rows: ids.map((id) => ({ id: BigInt(id), v: null })),
        })
      }
      const [out] = await mem.writer.compact({ bins: [sources.map((s) => s.ref)], target })
      await checkOutput(mem.store, out as CompactionOutput, sources, schema, ['p'])
    } finally {
      await mem.close()
    }
  })
})

// === Spark-written files ===

interface GoldenAdd {
  readonly path: string
  readonly partitionValues: Record<string, string | null>
  readonly stats: string
}

/** Compares stats semantically: numbers by value, timestamps by instant, `tightBounds` ignored. */
function sameStats(actual: unknown, expected: unknown, at = 'stats'): void {
  if (typeof expected === 'string' && expected.startsWith('#')) {
    assert.equal(typeof actual, 'string', at)
    assert.equal(Number((actual as string).slice(1)), Number(expected.slice(1)), at)
    return
  }
  if (typeof expected === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(expected)) {
    assert.equal(Date.parse(actual as string), Date.parse(expected), at)
    return
  }
  if (typeof expected !== 'object' || expected === null) {
    assert.deepStrictEqual(actual, expected, at)
    return
  }
  const a = { ...(actual as Record<string, unknown>) }
  if (!('tightBounds' in expected)) delete a.tightBounds
  assert.deepStrictEqual(Object.keys(a).sort(), Object.keys(expected).sort(), at)
  for (const [k, v] of Object.entries(expected)) sameStats(a[k], v, `${at}.${k}`)
}

describe('compact on Spark-written files', { skip: GOLDEN_SKIP }, () => {
  const tables: [string, ColumnMappingMode][] = [
    ['table-with-columnmapping-mode-name', 'name'],
    ['data-skipping-basic-stats-all-types', 'none'],
  ]
  for (const [table, mode] of tables) {
    it(`${table}: rewritten files keep the rows, and their stats match Spark's`, async () => {
      const dir = await mkdtemp(join(tmpdir(), 'delta-rlc-golden-writer-'))
      const duck = new DuckDbRuntime({ threads: 2 })
      try {
        await cp(join(GOLDEN_DIR as string, table), join(dir, 'table'), { recursive: true })
        const store = createLocalStore(join(dir, 'table'))
        const writer = new DuckDbWriter(store, duck, join(dir, 'scratch'))
        const lines = (await readFile(join(dir, 'table/_delta_log/00000000000000000000.json'), 'utf8'))
          .split('\n')
          .filter((l) => l.trim() !== '')
          .map((l) => JSON.parse(l) as { metaData?: { schemaString: string }; add?: GoldenAdd })
        const tableSchema = parseSchema(lines.find((l) => l.metaData)?.metaData?.schemaString as string)
        const adds = lines.flatMap((l) => (l.add ? [l.add] : []))
        assert.ok(adds.length > 0)
        const refs = adds.map((a) => {
          const decoded = decodeAddPath(a.path)
          assert.equal(decoded.kind, 'relative')
          return { key: (decoded as { key: string }).key, partitionValues: a.partitionValues }
        })
        const outputs = await writer.compact({
          bins: refs.map((r) => [r]),
          target: targetOf(tableSchema, { columnMappingMode: mode }),
        })
        for (const [i, out] of outputs.entries()) {
          const source = await readFileRows(store, (refs[i] as DataFileRef).key, tableSchema, { mode })
          await checkOutput(
            store,
            out,
            [{ ref: refs[i] as DataFileRef, rows: source.rows }],
            tableSchema,
            [],
            mode,
          )
          sameStats(
            parseStatsText((out.file as WrittenFile).stats),
            parseStatsText((adds[i] as GoldenAdd).stats),
          )
        }
      } finally {
        await duck.close()
        await rm(dir, { recursive: true, force: true })
      }
    })
  }
})
