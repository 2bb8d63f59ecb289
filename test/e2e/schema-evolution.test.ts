/**
 * Schema evolution beyond adding columns on append: an overwrite that merges or replaces the
 * schema (`schemaMode: 'merge' | 'overwrite'`), and type widening on write where the table enables
 * it (`delta.enableTypeWidening`), each read back exactly with the log's metaData checked.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { Float64, Int64, makeVector, Table, vectorFromArray } from 'apache-arrow'
import { InvalidArgumentError, UnsupportedError } from '../../src/errors/index.js'
import { DeltaTable } from '../../src/table/delta-table.js'
import { runCliInProcess } from '../helpers/cli-in-process.js'
import { commitCount, type LogLine, logLines } from './ops-support.js'

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

async function tableDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'delta-rlc-schema-evolution-'))
  roots.push(d)
  return join(d, 't')
}

const metaDataOf = (lines: LogLine[]): LogLine => lines.find((l) => l.metaData)?.metaData
const schemaOf = (lines: LogLine[]): LogLine[] => JSON.parse(metaDataOf(lines).schemaString).fields
const byId = (rows: Record<string, unknown>[]) => rows.sort((a, b) => Number(a.id) - Number(b.id))

describe('overwrite with schemaMode', () => {
  it("'merge' adds the rows' new columns in the overwrite's commit, also with replaceWhere and dynamic partition overwrite", async () => {
    const dir = await tableDir()
    const t = await DeltaTable.create(dir, { schema: 'id long not null, day string', partitionBy: ['day'] })
    try {
      await t.append([
        { id: 1n, day: 'a' },
        { id: 2n, day: 'b' },
      ])
      const r = await t.append([{ id: 3n, day: 'a', note: 'x' }], {
        mode: 'overwrite',
        replaceWhere: "day = 'a'",
        schemaMode: 'merge',
      })
      const lines = await logLines(dir, r.version)
      assert.deepEqual(
        schemaOf(lines).map((f) => [f.name, f.type, f.nullable]),
        [
          ['id', 'long', false],
          ['day', 'string', true],
          ['note', 'string', true],
        ],
      )
      assert.deepEqual(metaDataOf(lines).partitionColumns, ['day'])
      assert.equal(lines.find((l) => l.commitInfo)?.commitInfo.operationParameters.mode, 'Overwrite')
      assert.deepEqual(byId(await t.scan().toArray()), [
        { id: 2n, day: 'b', note: null },
        { id: 3n, day: 'a', note: 'x' },
      ])
      // Dynamic partition overwrite: only partition b is replaced.
      await t.append([{ id: 5n, day: 'b', flag: true }], {
        mode: 'overwrite',
        partitionOverwriteMode: 'dynamic',
        schemaMode: 'merge',
      })
      assert.deepEqual(byId(await t.scan().toArray()), [
        { id: 3n, day: 'a', note: 'x', flag: null },
        { id: 5n, day: 'b', note: null, flag: true },
      ])
      // The whole table, with another new column.
      await t.append([{ id: 4n, day: 'c', score: 1.5 }], { mode: 'overwrite', schemaMode: 'merge' })
      assert.deepEqual(await t.scan().toArray(), [{ id: 4n, day: 'c', note: null, flag: null, score: 1.5 }])
    } finally {
      await t.close()
    }
  })

  it("'overwrite' replaces the schema: dropped columns are gone, kept ones keep their type, partitionBy repartitions", async () => {
    const dir = await tableDir()
    const t = await DeltaTable.create(dir, {
      schema: 'id int not null, name string, day string',
      partitionBy: ['day'],
    })
    try {
      await t.append([
        { id: 1, name: 'a', day: 'd1' },
        { id: 2, name: 'b', day: 'd2' },
      ])
      const r = await t.append(
        [
          { id: 10, city: 'Oslo', rank: 1n },
          { id: 11, city: 'Rome', rank: 2n },
        ],
        { mode: 'overwrite', schemaMode: 'overwrite', partitionBy: ['city'] },
      )
      const lines = await logLines(dir, r.version)
      assert.deepEqual(
        schemaOf(lines).map((f) => [f.name, f.type, f.nullable]),
        [
          ['id', 'integer', false],
          ['city', 'string', true],
          ['rank', 'long', true],
        ],
      )
      assert.deepEqual(metaDataOf(lines).partitionColumns, ['city'])
      assert.equal(lines.filter((l) => l.remove).length, 2)
      assert.deepEqual(
        lines.filter((l) => l.add).map((l) => l.add.partitionValues),
        [{ city: 'Oslo' }, { city: 'Rome' }],
      )
      const snap = await t.snapshot()
      assert.deepEqual(snap.partitionColumns, ['city'])
      assert.deepEqual(byId(await t.scan().toArray()), [
        { id: 10, city: 'Oslo', rank: 1n },
        { id: 11, city: 'Rome', rank: 2n },
      ])
      // The old version still reads with its own schema.
      assert.deepEqual(byId(await t.scan({ version: r.version - 1n }).toArray()), [
        { id: 1, name: 'a', day: 'd1' },
        { id: 2, name: 'b', day: 'd2' },
      ])
    } finally {
      await t.close()
    }
  })

  it('refuses a schema overwrite that would not replace every row, or without an overwrite, committing nothing', async () => {
    const dir = await tableDir()
    const t = await DeltaTable.create(dir, { schema: 'id long, day string', partitionBy: ['day'] })
    try {
      await t.append([{ id: 1n, day: 'a' }])
      const before = await commitCount(dir)
      const refusals: [Parameters<DeltaTable['append']>[1], RegExp][] = [
        [{ mode: 'overwrite', schemaMode: 'overwrite', replaceWhere: "day = 'a'" }, /replaceWhere/],
        [{ mode: 'overwrite', schemaMode: 'overwrite', partitionOverwriteMode: 'dynamic' }, /dynamic/],
        [{ schemaMode: 'overwrite' }, /overwrite only/],
        [{ mode: 'overwrite', partitionBy: ['id'] }, /partitionBy/],
        [{ mode: 'overwrite', schemaMode: 'overwrite' }, /Partition column 'day'/],
        [{ mode: 'overwrite', schemaMode: 'overwrite', partitionBy: ['nope'] }, /nope/],
      ]
      for (const [options, message] of refusals) {
        await assert.rejects(
          t.append([{ id: 2n, x: 'y' }], options),
          (e: unknown) => e instanceof InvalidArgumentError && message.test(e.message),
          JSON.stringify(options),
        )
      }
      assert.equal(await commitCount(dir), before)
      assert.deepEqual(await t.scan().toArray(), [{ id: 1n, day: 'a' }])
    } finally {
      await t.close()
    }
  })
})

describe('type widening on write', () => {
  it('widens integer -> long and float -> double where the table enables it; old files read back exactly', async () => {
    const dir = await tableDir()
    const t = await DeltaTable.create(dir, {
      schema: 'id long not null, n int, f float',
      properties: { 'delta.enableTypeWidening': 'true' },
    })
    try {
      await t.append([
        { id: 1n, n: 7, f: 0.5 },
        { id: 2n, n: -2147483648, f: 3 },
      ])
      const big = 2n ** 40n
      const r = await t.append([{ id: 3n, n: big, f: 0.1 }], { schemaMode: 'merge' })
      const lines = await logLines(dir, r.version)
      assert.equal(lines.filter((l) => l.add).length, 1)
      assert.deepEqual(schemaOf(lines), [
        { name: 'id', type: 'long', nullable: false, metadata: {} },
        {
          name: 'n',
          type: 'long',
          nullable: true,
          metadata: { 'delta.typeChanges': [{ fromType: 'integer', toType: 'long' }] },
        },
        {
          name: 'f',
          type: 'double',
          nullable: true,
          metadata: { 'delta.typeChanges': [{ fromType: 'float', toType: 'double' }] },
        },
      ])
      assert.deepEqual(byId(await t.scan().toArray()), [
        { id: 1n, n: 7n, f: 0.5 },
        { id: 2n, n: -2147483648n, f: 3 },
        { id: 3n, n: big, f: 0.1 },
      ])
      // Stats of the older file still prune right against the wider type.
      assert.deepEqual(await t.scan({ where: 'n < 0' }).toArray(), [{ id: 2n, n: -2147483648n, f: 3 }])
      // Values that fit write no metaData.
      const plain = await t.append([{ id: 4n, n: 1, f: 2.5 }], { schemaMode: 'merge' })
      assert.equal(
        (await logLines(dir, plain.version)).some((l) => l.metaData),
        false,
      )
    } finally {
      await t.close()
    }
  })

  it('refuses a value that needs a wider type without type widening or without schemaMode merge', async () => {
    const dir = await tableDir()
    const t = await DeltaTable.create(dir, { schema: 'id long, n int' })
    const widening = await DeltaTable.create(`${dir}-w`, {
      schema: 'id long, n int',
      properties: { 'delta.enableTypeWidening': 'true' },
    })
    try {
      for (const [table, options] of [
        [t, { schemaMode: 'merge' }],
        [widening, {}],
      ] as const) {
        await assert.rejects(table.append([{ id: 1n, n: 2n ** 40n }], options), InvalidArgumentError)
        assert.deepEqual(await table.scan().toArray(), [])
      }
      // An integer column is never widened to a fraction: 2.5 is refused.
      await assert.rejects(
        widening.append([{ id: 1n, n: 2.5 }], { schemaMode: 'merge' }),
        InvalidArgumentError,
      )
    } finally {
      await t.close()
      await widening.close()
    }
  })
})

describe('schema modes of typed input', () => {
  it('Arrow input: merge adds its columns and widens to its declared wider types; overwrite takes its schema', async () => {
    const dir = await tableDir()
    const t = await DeltaTable.create(dir, {
      schema: 'id long not null, n int',
      properties: { 'delta.enableTypeWidening': 'true' },
    })
    try {
      await t.append([{ id: 1n, n: 5 }])
      const arrow = new Table({
        id: vectorFromArray([2n, 3n], new Int64()),
        n: vectorFromArray([6n, 7n], new Int64()),
        w: vectorFromArray([0.25, null], new Float64()),
      })
      const r = await t.append(arrow, { schemaMode: 'merge' })
      assert.deepEqual(
        schemaOf(await logLines(dir, r.version)).map((f) => [f.name, f.type, f.metadata]),
        [
          ['id', 'long', {}],
          ['n', 'long', { 'delta.typeChanges': [{ fromType: 'integer', toType: 'long' }] }],
          ['w', 'double', {}],
        ],
      )
      assert.deepEqual(byId(await t.scan().toArray()), [
        { id: 1n, n: 5n, w: null },
        { id: 2n, n: 6n, w: 0.25 },
        { id: 3n, n: 7n, w: null },
      ])
      const replaced = new Table({ k: makeVector(Int32Array.from([9])) })
      await t.append(replaced, { mode: 'overwrite', schemaMode: 'overwrite' })
      const snap = await t.snapshot()
      assert.deepEqual(
        snap.schema.fields.map((f) => [f.name, f.type]),
        [['k', 'integer']],
      )
      assert.deepEqual(await t.scan().toArray(), [{ k: 9 }])
      // Without a schema mode a declared wider type is only a value check, as before.
      await assert.rejects(
        t.append(new Table({ k: vectorFromArray([2n ** 40n], new Int64()) })),
        InvalidArgumentError,
      )
    } finally {
      await t.close()
    }
  })

  it('the CLI append --mode overwrite --schema-mode overwrite|merge, and its usage errors', async () => {
    const dir = await tableDir()
    const t = await DeltaTable.create(dir, { schema: 'id long, day string', partitionBy: ['day'] })
    await t.append([{ id: 1n, day: 'a' }])
    await t.close()
    const csv = `${dir}-in.csv`
    await writeFile(csv, 'id,city\n5,Oslo\n6,Rome\n')
    const usage = await runCliInProcess([
      'append',
      dir,
      csv,
      '--mode',
      'overwrite',
      '--schema-mode',
      'overwrite',
      '--replace-where',
      "day = 'a'",
    ])
    assert.equal(usage.code, 1)
    assert.match(usage.stderr, /--replace-where/)
    const missing = await runCliInProcess([
      'append',
      dir,
      csv,
      '--mode',
      'overwrite',
      '--schema-mode',
      'overwrite',
    ])
    assert.notEqual(missing.code, 0)
    assert.match(missing.stderr, /Partition column 'day'/)
    const ok = await runCliInProcess([
      'append',
      dir,
      csv,
      '--mode',
      'overwrite',
      '--schema-mode',
      'overwrite',
      '--partition-by',
      'city',
    ])
    assert.equal(ok.code, 0, ok.stderr)
    const merged = await runCliInProcess([
      'append',
      dir,
      csv,
      '--mode',
      'overwrite',
      '--schema-mode',
      'merge',
    ])
    assert.equal(merged.code, 0, merged.stderr)
    const t2 = await DeltaTable.open(dir)
    try {
      const snap = await t2.snapshot()
      assert.deepEqual(
        snap.schema.fields.map((f) => [f.name, f.type]),
        [
          ['id', 'long'],
          ['city', 'string'],
        ],
      )
      assert.deepEqual(snap.partitionColumns, ['city'])
      assert.deepEqual(byId(await t2.scan().toArray()), [
        { id: 5n, city: 'Oslo' },
        { id: 6n, city: 'Rome' },
      ])
    } finally {
      await t2.close()
    }
  })
})

describe('MERGE with schemaEvolution', () => {
  it("update '*' and insert '*' add the source's new columns in the MERGE's commit; rows not touched read null", async () => {
    const dir = await tableDir()
    const t = await DeltaTable.create(dir, { schema: 'id long not null, v string' })
    try {
      await t.append([
        { id: 1n, v: 'a' },
        { id: 2n, v: 'b' },
      ])
      const r = await t.merge(
        [
          { id: 2n, v: 'B', score: 2.5, tag: 'x' },
          { id: 3n, v: 'c', score: 3, tag: null },
        ],
        {
          on: 'target.id = source.id',
          whenMatched: [{ update: '*' }],
          whenNotMatched: [{ insert: '*' }],
          schemaEvolution: true,
        },
      )
      const lines = await logLines(dir, r.version)
      assert.equal(lines.find((l) => l.commitInfo)?.commitInfo.operation, 'MERGE')
      assert.equal(Object.keys(lines.find((l) => l.metaData) ?? {})[0], 'metaData')
      assert.deepEqual(
        schemaOf(lines).map((f) => [f.name, f.type, f.nullable]),
        [
          ['id', 'long', false],
          ['v', 'string', true],
          ['score', 'double', true],
          ['tag', 'string', true],
        ],
      )
      assert.deepEqual(byId(await t.scan().toArray()), [
        { id: 1n, v: 'a', score: null, tag: null },
        { id: 2n, v: 'B', score: 2.5, tag: 'x' },
        { id: 3n, v: 'c', score: 3, tag: null },
      ])
    } finally {
      await t.close()
    }
  })

  it('an assignment of source.<name> to a new column adds it; other new columns are refused, as without the flag', async () => {
    const dir = await tableDir()
    const t = await DeltaTable.create(dir, { schema: 'id long not null, v string' })
    try {
      await t.append([{ id: 1n, v: 'a' }])
      const before = await commitCount(dir)
      const source = [{ id: 1n, v: 'A', note: 'n1', unused: 5n }]
      const on = 'target.id = source.id'
      // Without the flag: unknown column, nothing committed.
      await assert.rejects(
        t.merge(source, { on, whenMatched: [{ update: { note: 'source.note' } }] }),
        (e: unknown) => e instanceof InvalidArgumentError && /unknown column 'note'/.test(e.message),
      )
      // An expression is not a direct assignment: still unknown.
      await assert.rejects(
        t.merge(source, {
          on,
          whenMatched: [{ update: { note: "source.note || '!'" } }],
          schemaEvolution: true,
        }),
        (e: unknown) => e instanceof InvalidArgumentError && /unknown column 'note'/.test(e.message),
      )
      assert.equal(await commitCount(dir), before)
      await t.merge(source, {
        on,
        whenMatched: [{ if: 'source.unused > 0', update: { v: 'source.v', note: 'source.note' } }],
        schemaEvolution: true,
      })
      // `unused` appears only in a condition: not added.
      assert.deepEqual(
        (await t.snapshot()).schema.fields.map((f) => f.name),
        ['id', 'v', 'note'],
      )
      assert.deepEqual(await t.scan().toArray(), [{ id: 1n, v: 'A', note: 'n1' }])
    } finally {
      await t.close()
    }
  })

  it('widens an assigned column where the table enables type widening; the CLI --schema-evolution', async () => {
    const dir = await tableDir()
    const t = await DeltaTable.create(dir, {
      schema: 'id long not null, n int',
      properties: { 'delta.enableTypeWidening': 'true' },
    })
    const big = 2n ** 40n
    try {
      await t.append([
        { id: 1n, n: 1 },
        { id: 2n, n: 2 },
      ])
      const r = await t.merge([{ id: 2n, n: big }], {
        on: 'target.id = source.id',
        whenMatched: [{ update: '*' }],
        schemaEvolution: true,
      })
      assert.deepEqual(schemaOf(await logLines(dir, r.version))[1], {
        name: 'n',
        type: 'long',
        nullable: true,
        metadata: { 'delta.typeChanges': [{ fromType: 'integer', toType: 'long' }] },
      })
      assert.deepEqual(byId(await t.scan().toArray()), [
        { id: 1n, n: 1n },
        { id: 2n, n: big },
      ])
    } finally {
      await t.close()
    }
    const json = `${dir}-src.jsonl`
    await writeFile(json, '{"id": 1, "n": 5, "city": "Oslo"}\n{"id": 9, "n": 9, "city": "Rome"}\n')
    // Without the flag the upsert's '*' leaves the source's extra column out.
    const plain = await runCliInProcess(['merge', dir, json, '--on', 'target.id = source.id'])
    assert.equal(plain.code, 0, plain.stderr)
    const ok = await runCliInProcess([
      'merge',
      dir,
      json,
      '--on',
      'target.id = source.id',
      '--schema-evolution',
    ])
    assert.equal(ok.code, 0, ok.stderr)
    const t2 = await DeltaTable.open(dir)
    try {
      assert.deepEqual(byId(await t2.scan().toArray()), [
        { id: 1n, n: 5n, city: 'Oslo' },
        { id: 2n, n: big, city: null },
        { id: 9n, n: 9n, city: 'Rome' },
      ])
    } finally {
      await t2.close()
    }
  })
})

describe('ALTER COLUMN TYPE (changeColumnType)', () => {
  it('widens columns and nested fields in a metadata commit; files written before read back with the wider types', async () => {
    const dir = await tableDir()
    const t = await DeltaTable.create(dir, {
      schema: 'id long not null, i int, f float, dec decimal(10,2), d date, s struct<x: int>',
      properties: { 'delta.enableTypeWidening': 'true' },
    })
    try {
      await t.append([
        { id: 1n, i: -5, f: 1.5, dec: '12.34', d: '2026-01-02', s: { x: 7 } },
        { id: 2n, i: 9, f: 0.25, dec: '-1.00', d: '2026-03-04', s: { x: -7 } },
      ])
      const changes: [string, string][] = [
        ['i', 'long'],
        ['f', 'double'],
        ['dec', 'decimal(12,4)'],
        ['d', 'timestamp_ntz'],
        ['s.x', 'bigint'],
      ]
      for (const [column, type] of changes) {
        const r = await t.alter.changeColumnType(column, type)
        const lines = await logLines(dir, r.version)
        assert.equal(lines.find((l) => l.commitInfo)?.commitInfo.operation, 'CHANGE COLUMN')
        assert.equal(lines.filter((l) => l.add || l.remove).length, 0)
      }
      const snap = await t.snapshot()
      assert.deepEqual(
        snap.schema.fields.map((f) => [f.name, f.type, f.metadata['delta.typeChanges']]),
        [
          ['id', 'long', undefined],
          ['i', 'long', [{ fromType: 'integer', toType: 'long' }]],
          ['f', 'double', [{ fromType: 'float', toType: 'double' }]],
          ['dec', 'decimal(12,4)', [{ fromType: 'decimal(10,2)', toType: 'decimal(12,4)' }]],
          ['d', 'timestamp_ntz', [{ fromType: 'date', toType: 'timestamp_ntz' }]],
          [
            's',
            {
              type: 'struct',
              fields: [
                {
                  name: 'x',
                  type: 'long',
                  nullable: true,
                  metadata: { 'delta.typeChanges': [{ fromType: 'integer', toType: 'long' }] },
                },
              ],
            },
            undefined,
          ],
        ],
      )
      assert.ok(snap.protocol.writerFeatures?.includes('timestampNtz'))
      await t.append([
        { id: 3n, i: 2n ** 40n, f: 0.1, dec: '12345678.1234', d: '2026-05-06T07:08:09', s: { x: 2n ** 40n } },
      ])
      assert.deepEqual(byId(await t.scan({ jsonSafe: true }).toArray()), [
        { id: 1, i: -5, f: 1.5, dec: '12.3400', d: '2026-01-02T00:00:00.000000', s: { x: 7 } },
        { id: 2, i: 9, f: 0.25, dec: '-1.0000', d: '2026-03-04T00:00:00.000000', s: { x: -7 } },
        {
          id: 3,
          i: 2 ** 40,
          f: 0.1,
          dec: '12345678.1234',
          d: '2026-05-06T07:08:09.000000',
          s: { x: 2 ** 40 },
        },
      ])
      // The older file's stats prune against the wider types.
      assert.deepEqual(
        (await t.scan({ where: "i < 0 AND d < '2026-02-01'" }).toArray()).map((r) => r.id),
        [1n],
      )
      // The same type again: nothing committed.
      assert.equal((await t.alter.changeColumnType('i', 'long')).committed, false)
    } finally {
      await t.close()
    }
  })

  it('refuses narrowing, unsupported changes, partition columns and tables without type widening; the CLI change-column-type', async () => {
    const dir = await tableDir()
    const t = await DeltaTable.create(dir, {
      schema: 'id long, i int, name string, p int',
      partitionBy: ['p'],
      properties: { 'delta.enableTypeWidening': 'true' },
    })
    const plain = await DeltaTable.create(`${dir}-plain`, { schema: 'i int' })
    try {
      const before = await commitCount(dir)
      for (const [column, type, message] of [
        ['id', 'int', /not a type widening/],
        ['name', 'long', /not a type widening/],
        ['i', 'string', /not a type widening/],
        ['nope', 'long', /Unknown column 'nope'/],
        ['i', 'array<int>', /primitive/],
      ] as const) {
        await assert.rejects(
          t.alter.changeColumnType(column, type),
          (e: unknown) => e instanceof InvalidArgumentError && message.test(e.message),
          `${column} ${type}`,
        )
      }
      await assert.rejects(t.alter.changeColumnType('p', 'long'), UnsupportedError)
      await assert.rejects(
        plain.alter.changeColumnType('i', 'long'),
        (e: unknown) => e instanceof InvalidArgumentError && /enableTypeWidening/.test(e.hint ?? ''),
      )
      assert.equal(await commitCount(dir), before)
      // Integer to double is allowed when asked for explicitly.
      const ok = await runCliInProcess(['alter', dir, 'change-column-type', 'i', 'double'])
      assert.equal(ok.code, 0, ok.stderr)
      assert.deepEqual(
        (await t.snapshot()).schema.fields.map((f) => f.type),
        ['long', 'double', 'string', 'integer'],
      )
    } finally {
      await t.close()
      await plain.close()
    }
  })
})

describe('schema evolution with change data feed', () => {
  async function cdfTable(): Promise<{ dir: string; t: DeltaTable }> {
    const dir = await tableDir()
    const t = await DeltaTable.create(dir, {
      schema: 'id long not null, v string',
      properties: { 'delta.enableChangeDataFeed': 'true' },
    })
    await t.append([
      { id: 1n, v: 'a' },
      { id: 2n, v: 'b' },
    ])
    return { dir, t }
  }

  async function changeRows(t: DeltaTable, from: bigint): Promise<unknown[][]> {
    const rows: Record<string, unknown>[] = []
    for await (const batch of t.changes({ startingVersion: from })) {
      for (const r of batch) rows.push(r)
    }
    return rows
      .map((r) => [r._change_type, r.id, r.v, r.note, r.n])
      .sort((a, b) => String(a).localeCompare(String(b)))
  }

  it('the change rows of a MERGE that adds columns carry their values', async () => {
    const { t } = await cdfTable()
    try {
      const merged = await t.merge(
        [
          { id: 2n, v: 'B', note: 'x' },
          { id: 3n, v: 'c', note: 'y' },
        ],
        {
          on: 'target.id = source.id',
          whenMatched: [{ update: '*' }],
          whenNotMatched: [{ insert: '*' }],
          schemaEvolution: true,
        },
      )
      assert.deepEqual(await changeRows(t, merged.version), [
        ['insert', 3n, 'c', 'y', undefined],
        ['update_postimage', 2n, 'B', 'x', undefined],
        ['update_preimage', 2n, 'b', null, undefined],
      ])
    } finally {
      await t.close()
    }
  })

  it('the change rows of a replaceWhere overwrite that adds columns carry their values', async () => {
    const { t } = await cdfTable()
    try {
      const replaced = await t.append([{ id: 1n, v: 'A', note: 'z', n: 7n }], {
        mode: 'overwrite',
        replaceWhere: 'id = 1',
        schemaMode: 'merge',
      })
      assert.deepEqual(await changeRows(t, replaced.version), [
        ['delete', 1n, 'a', null, null],
        ['insert', 1n, 'A', 'z', 7n],
      ])
    } finally {
      await t.close()
    }
  })
})
