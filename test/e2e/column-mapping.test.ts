/**
 * Column mapping written end to end through the public API on local tables: tables created with
 * mode `name` or `id` (and Spark-written golden copies) taken through every write path, each step
 * read back exactly; the log's shapes (ids, physical names, `maxColumnId`, stats and partition
 * values keyed by physical name) and the Parquet files as an independent DuckDB reads them
 * (physical names only, field ids); column mapping turned on for an existing table; DROP COLUMNS
 * and RENAME COLUMN with their refusals, through the API and the CLI.
 */
import assert from 'node:assert/strict'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { DuckDBInstance } from '@duckdb/node-api'
import {
  ColumnChangeRefusedError,
  ColumnMappingModeChangeError,
  ColumnMappingRequiredError,
} from '../../src/errors/column-mapping-errors.js'
import { InvalidArgumentError } from '../../src/errors/index.js'
import type { StructField, StructType } from '../../src/protocol/schema.js'
import { DeltaTable } from '../../src/table/delta-table.js'
import { runCliInProcess } from '../helpers/cli-in-process.js'
import { GOLDEN_SKIP, prepareGoldenTable } from '../helpers/golden.js'
import { assertSameRows, commitCount, keyOf, type LogLine, logLines, type Row } from './ops-support.js'

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'delta-rlc-colmap-'))
  roots.push(d)
  return join(d, 't')
}

const ID = 'delta.columnMapping.id'
const PHYS = 'delta.columnMapping.physicalName'
const MAX_ID = 'delta.columnMapping.maxColumnId'

/** Every field of a schema, nested ones included, with its dotted path. */
function allFields(schema: StructType, prefix = ''): [string, StructField][] {
  const out: [string, StructField][] = []
  for (const f of schema.fields) {
    out.push([`${prefix}${f.name}`, f])
    if (typeof f.type === 'object' && f.type.type === 'struct')
      out.push(...allFields(f.type, `${prefix}${f.name}.`))
  }
  return out
}

/** The physical names of a schema's fields (nested ones included). */
function physicalNames(schema: StructType): Set<string> {
  return new Set(allFields(schema).map(([, f]) => String(f.metadata[PHYS])))
}

/** Every log line of every commit of the table. */
async function allLogLines(dir: string): Promise<LogLine[]> {
  const out: LogLine[] = []
  const names = (await readdir(join(dir, '_delta_log'))).filter((n) => /^\d{20}\.json$/.test(n)).sort()
  for (const n of names) out.push(...(await logLines(dir, Number(n.slice(0, 20)))))
  return out
}

/** The keys of a stats object, nested ones included, as dotted paths. */
function statsKeys(o: Record<string, unknown>, prefix = ''): string[] {
  const out: string[] = []
  for (const [k, v] of Object.entries(o)) {
    if (v !== null && typeof v === 'object' && !Array.isArray(v))
      out.push(...statsKeys(v as Record<string, unknown>, `${prefix}${k}.`))
    else out.push(`${prefix}${k}`)
  }
  return out
}

let duck: Promise<DuckDBInstance> | undefined

/** The columns (and field ids) of a Parquet file as an independent DuckDB reads them. */
async function parquetSchema(path: string): Promise<{ name: string; fieldId: number | null }[]> {
  duck ??= DuckDBInstance.create(':memory:', { threads: '1' })
  const con = await (await duck).connect()
  try {
    const r = await con.runAndReadAll(
      `SELECT name, field_id FROM parquet_schema('${path.replaceAll("'", "''")}') WHERE name <> 'duckdb_schema'`,
    )
    return (r.getRowObjectsJS() as { name: string; field_id: number | null }[]).map((x) => ({
      name: x.name,
      fieldId: x.field_id === null ? null : Number(x.field_id),
    }))
  } finally {
    con.closeSync()
  }
}

/**
 * Asserts what the protocol asks of a mapped table on disk: every field has an id and a physical
 * name, `maxColumnId` is at least the highest id, every add's stats and partition values are
 * keyed by physical names only, and every live data file names its columns physically (with
 * Parquet field ids in mode id).
 */
async function assertMappedOnDisk(dir: string, t: DeltaTable, opts: { freshNames: boolean }): Promise<void> {
  const snap = await t.snapshot()
  const fields = allFields(snap.schema)
  const mode = snap.properties['delta.columnMapping.mode']
  for (const [path, f] of fields) {
    assert.equal(typeof f.metadata[ID], 'number', `${path} has an id`)
    assert.equal(typeof f.metadata[PHYS], 'string', `${path} has a physical name`)
    if (opts.freshNames)
      assert.match(String(f.metadata[PHYS]), /^col-[0-9a-f-]{36}$/, `${path} is col-<uuid>`)
  }
  const maxId = Math.max(...fields.map(([, f]) => Number(f.metadata[ID])))
  assert.ok(Number(snap.properties[MAX_ID]) >= maxId, 'maxColumnId covers every id')
  const physical = physicalNames(snap.schema)
  const logical = new Set(fields.map(([p]) => p))
  let adds = 0
  for (const line of await allLogLines(dir)) {
    const add = line.add
    if (add === undefined) continue
    for (const k of Object.keys(add.partitionValues))
      assert.ok(!logical.has(k) || physical.has(k), `partition key ${k}`)
    if (add.stats === undefined) continue
    const stats = JSON.parse(add.stats)
    for (const part of ['minValues', 'maxValues', 'nullCount']) {
      for (const k of statsKeys(stats[part] ?? {})) {
        for (const seg of k.split('.'))
          assert.ok(!opts.freshNames || !logical.has(seg), `stats key ${k} is physical`)
      }
    }
    adds++
  }
  assert.ok(adds > 0)
  for (const f of snap.activeFiles()) {
    const cols = await parquetSchema(join(dir, keyOf(f.path)))
    for (const c of cols) {
      const known =
        physical.has(c.name) ||
        c.name.startsWith('_row-') ||
        ['list', 'element', 'key_value', 'key', 'value'].includes(c.name)
      if (opts.freshNames) assert.ok(known || !logical.has(c.name), `${f.path}: column ${c.name} is physical`)
      if (mode === 'id' && physical.has(c.name)) assert.notEqual(c.fieldId, null, `${c.name} has a field id`)
    }
  }
}

// === Every write path on a mapped table ===

interface Cols {
  /** Key, value and partition column names. */
  readonly k: string
  readonly v: string
  readonly p: string
}

interface WriteCase {
  readonly name: string
  readonly freshNames: boolean
  /** Whether the table tracks rows: ids then survive every rewrite. */
  readonly rowTracking?: boolean
  readonly cols: Cols
  open(): Promise<{ dir: string; t: DeltaTable; row(k: number, v: string, p: number): Row }>
}

const FRESH_SCHEMA = 'id long not null, name string, part int, s struct<a: int, b: string>'
const fresh =
  (properties: Record<string, string>, partitioned: boolean) =>
  async (): Promise<{ dir: string; t: DeltaTable; row(k: number, v: string, p: number): Row }> => {
    const dir = await tempDir()
    const t = await DeltaTable.create(dir, {
      schema: FRESH_SCHEMA,
      partitionBy: partitioned ? ['part'] : [],
      properties,
    })
    const row = (k: number, v: string, p: number): Row => ({
      id: BigInt(k),
      name: v,
      part: p,
      s: { a: k, b: `b${k}` },
    })
    await t.append([0, 1, 2, 3, 4, 5, 6, 7].map((i) => row(i, `n${i}`, i % 3)))
    await t.append([8, 9, 10, 11].map((i) => row(i, `n${i}`, i % 3)))
    return { dir, t, row }
  }

const WRITE_CASES: readonly WriteCase[] = [
  {
    name: "mode 'name', partitioned, deletion vectors",
    freshNames: true,
    cols: { k: 'id', v: 'name', p: 'part' },
    open: fresh({ 'delta.columnMapping.mode': 'name' }, true),
  },
  {
    name: "mode 'name', unpartitioned, copy-on-write",
    freshNames: true,
    cols: { k: 'id', v: 'name', p: 'part' },
    open: fresh({ 'delta.columnMapping.mode': 'name', 'delta.enableDeletionVectors': 'false' }, false),
  },
  {
    name: "mode 'id', partitioned, deletion vectors",
    freshNames: true,
    cols: { k: 'id', v: 'name', p: 'part' },
    open: fresh({ 'delta.columnMapping.mode': 'id', 'delta.checkpoint.writeStatsAsStruct': 'true' }, true),
  },
  {
    name: "mode 'name' with row tracking (materialized row-id columns)",
    freshNames: true,
    cols: { k: 'id', v: 'name', p: 'part' },
    rowTracking: true,
    open: fresh({ 'delta.columnMapping.mode': 'name', 'delta.enableRowTracking': 'true' }, true),
  },
  {
    name: 'Spark-written golden copy dv-with-columnmapping',
    freshNames: false,
    cols: { k: 'col1', v: 'col2', p: 'part' },
    open: async () => {
      const { dir, cleanup } = await prepareGoldenTable('dv-with-columnmapping')
      roots.push(dir)
      void cleanup
      const t = await DeltaTable.open(dir)
      return { dir, t, row: (k: number, v: string, p: number): Row => ({ col1: k, col2: v, part: p }) }
    },
  },
]

describe('column mapping: every write path reads back exactly', { skip: GOLDEN_SKIP }, () => {
  for (const c of WRITE_CASES) {
    it(`${c.name}: append, DELETE, UPDATE, MERGE, OPTIMIZE, Z-order, replaceWhere, checkpoint`, async () => {
      const { dir, t, row } = await c.open()
      const { k, v, p } = c.cols
      const key = (r: Row): number => Number(r[k] as bigint | number)
      const model = new Map<number, Row>()
      try {
        for (const r of await t.scan().toArray()) model.set(key(r), r)
        const rowIdOf = async (id: number): Promise<unknown> =>
          (await t.scan({ where: `${k} = ${id}`, withRowTracking: true }).toArray())[0]?._row_id
        const idOf3 = c.rowTracking === true ? await rowIdOf(3) : undefined
        const check = async (step: string): Promise<void> =>
          assertSameRows(await t.scan().toArray(), [...model.values()], `${c.name}: after ${step}`)
        const put = (rows: readonly Row[]): void => {
          for (const r of rows) model.set(key(r), r)
        }

        const appended = [row(1000, 'a0', 1), row(1001, 'a1', 2), row(1002, 'a2', 1)]
        await t.append(appended)
        put(appended)
        await check('append')

        await t.delete(`${k} = 1000 OR ${k} = 5`)
        model.delete(1000)
        model.delete(5)
        await check('DELETE')

        await t.update({ where: `${k} = 1001 OR ${k} = 2`, set: { [v]: "'upd'" } })
        for (const id of [1001, 2]) {
          const r = model.get(id)
          if (r !== undefined) model.set(id, { ...r, [v]: 'upd' })
        }
        await check('UPDATE')

        const source = [row(1002, 'm', 1), row(2000, 'm2', 0)]
        await t.merge(source, {
          on: `target.${k} = source.${k}`,
          whenMatched: [{ update: '*' }],
          whenNotMatched: [{ insert: '*' }],
        })
        put(source)
        await check('MERGE')

        await t.optimize()
        await check('OPTIMIZE')
        await t.optimize({ zOrderBy: [k] })
        await check('OPTIMIZE ZORDER BY')

        const replacement = [row(3000, 'o', 2)]
        await t.append(replacement, { mode: 'overwrite', replaceWhere: `${p} = 2` })
        for (const [id, r] of model) if (Number(r[p]) === 2) model.delete(id)
        put(replacement)
        await check('replaceWhere overwrite')

        if (c.rowTracking === true) {
          // Row 3 was rewritten by OPTIMIZE and Z-order yet keeps its id; no two rows share one.
          assert.equal(await rowIdOf(3), idOf3)
          const ids = (await t.scan({ withRowTracking: true }).toArray()).map((r) => r._row_id)
          assert.equal(new Set(ids).size, model.size)
        }
        await t.checkpoint()
        await assertMappedOnDisk(dir, t, { freshNames: c.freshNames })
        const reopened = await DeltaTable.open(dir)
        try {
          assertSameRows(
            await reopened.scan().toArray(),
            [...model.values()],
            `${c.name}: from the checkpoint`,
          )
          // Data skipping runs on the physical-name stats: a key predicate finds its row.
          assert.deepEqual((await reopened.scan({ where: `${k} = 3000` }).toArray()).map(key), [3000])
        } finally {
          await reopened.close()
        }
      } finally {
        await t.close()
      }
    })
  }

  it('golden table-with-columnmapping-mode-name (every type, nested struct): append, DELETE, OPTIMIZE, checkpoint', async () => {
    const { dir } = await prepareGoldenTable('table-with-columnmapping-mode-name')
    roots.push(dir)
    const t = await DeltaTable.open(dir)
    try {
      const before = await t.scan().toArray()
      const copy = before.find((r) => r.IntegerType !== null) as Row
      await t.append([copy])
      const expected = [...before, copy]
      assertSameRows(await t.scan().toArray(), expected, 'after append')
      const gone = expected.find((r) => r.IntegerType !== null && r.IntegerType !== copy.IntegerType) as Row
      await t.delete(`IntegerType = ${gone.IntegerType}`)
      const kept = expected.filter((r) => r.IntegerType !== gone.IntegerType)
      assertSameRows(await t.scan().toArray(), kept, 'after DELETE')
      await t.optimize()
      await t.checkpoint()
      const reopened = await DeltaTable.open(dir)
      try {
        assertSameRows(await reopened.scan().toArray(), kept, 'after OPTIMIZE and checkpoint')
      } finally {
        await reopened.close()
      }
      await assertMappedOnDisk(dir, t, { freshNames: false })
    } finally {
      await t.close()
    }
  })
})

// === Create, turn on, drop, rename ===

describe('column mapping: create and ALTER', () => {
  it("create with mode 'name' gives every field an id and a col-<uuid> physical name, and the protocol columnMapping", async () => {
    const cases: [Record<string, string>, object][] = [
      [
        { 'delta.columnMapping.mode': 'name', 'delta.enableDeletionVectors': 'false' },
        { minReaderVersion: 2, minWriterVersion: 5 },
      ],
      [
        { 'delta.columnMapping.mode': 'name' },
        {
          minReaderVersion: 3,
          minWriterVersion: 7,
          readerFeatures: ['deletionVectors', 'columnMapping'],
          // FRESH_SCHEMA's `id long not null` is an invariant to Delta Spark.
          writerFeatures: ['deletionVectors', 'columnMapping', 'invariants'],
        },
      ],
    ]
    for (const [properties, protocol] of cases) {
      const dir = await tempDir()
      const t = await DeltaTable.create(dir, { schema: FRESH_SCHEMA, properties })
      try {
        const lines = await logLines(dir, 0)
        const p = lines.find((l) => l.protocol)?.protocol
        assert.deepEqual(
          {
            ...p,
            readerFeatures: p.readerFeatures?.slice().sort(),
            writerFeatures: p.writerFeatures?.slice().sort(),
          },
          {
            ...protocol,
            readerFeatures: (protocol as { readerFeatures?: string[] }).readerFeatures?.slice().sort(),
            writerFeatures: (protocol as { writerFeatures?: string[] }).writerFeatures?.slice().sort(),
          },
        )
        const meta = lines.find((l) => l.metaData)?.metaData
        assert.equal(meta.configuration[MAX_ID], '6')
        const schema = JSON.parse(meta.schemaString) as StructType
        assert.deepEqual(
          allFields(schema).map(([path, f]) => [path, f.metadata[ID]]),
          [
            ['id', 1],
            ['name', 2],
            ['part', 3],
            ['s', 4],
            ['s.a', 5],
            ['s.b', 6],
          ],
        )
        assert.equal(physicalNames(schema).size, 6)
      } finally {
        await t.close()
      }
    }
  })

  it('turns column mapping on for an existing table, then drops, renames and re-adds columns without rewriting data', async () => {
    const dir = await tempDir()
    const t = await DeltaTable.create(dir, { schema: FRESH_SCHEMA, partitionBy: ['part'] })
    try {
      const row = (i: number): Row => ({ id: BigInt(i), name: `n${i}`, part: i % 2, s: { a: i, b: `b${i}` } })
      await t.append([0, 1, 2, 3].map(row))

      // Without column mapping: typed refusals that name the property, nothing committed.
      const commits = await commitCount(dir)
      await assert.rejects(t.alter.dropColumns(['name']), (e: unknown) => {
        assert.ok(e instanceof ColumnMappingRequiredError)
        assert.equal(e.code, 'DELTA_UNSUPPORTED_DROP_COLUMN')
        assert.match(e.hint ?? '', /delta\.columnMapping\.mode/)
        return true
      })
      await assert.rejects(
        t.alter.renameColumn('name', 'label'),
        (e: unknown) =>
          e instanceof ColumnMappingRequiredError && e.code === 'DELTA_UNSUPPORTED_RENAME_COLUMN',
      )
      await assert.rejects(
        t.alter.setProperties({ 'delta.columnMapping.mode': 'id' }),
        (e: unknown) =>
          e instanceof ColumnMappingModeChangeError &&
          e.code === 'DELTA_UNSUPPORTED_COLUMN_MAPPING_MODE_CHANGE',
      )
      assert.equal(await commitCount(dir), commits)

      // Turn it on: physical names are the current names; no data file is added or removed.
      const on = await t.alter.setProperties({ 'delta.columnMapping.mode': 'name' })
      const onLines = await logLines(dir, on.version)
      assert.ok(!onLines.some((l) => l.add || l.remove))
      const proto = onLines.find((l) => l.protocol)?.protocol
      assert.ok(
        proto.readerFeatures.includes('columnMapping') && proto.writerFeatures.includes('columnMapping'),
      )
      const onMeta = onLines.find((l) => l.metaData)?.metaData
      assert.equal(onMeta.configuration[MAX_ID], '6')
      const onSchema = JSON.parse(onMeta.schemaString) as StructType
      assert.deepEqual(
        allFields(onSchema).map(([path, f]) => [path, f.metadata[ID], f.metadata[PHYS]]),
        [
          ['id', 1, 'id'],
          ['name', 2, 'name'],
          ['part', 3, 'part'],
          ['s', 4, 's'],
          ['s.a', 5, 'a'],
          ['s.b', 6, 'b'],
        ],
      )
      assertSameRows(await t.scan().toArray(), [0, 1, 2, 3].map(row), 'after turning mapping on')
      await t.append([row(4)])
      await assert.rejects(
        t.alter.setProperties({ 'delta.columnMapping.mode': 'none' }),
        ColumnMappingModeChangeError,
      )

      // Rename a data column, the partition column and a nested field: physical names stay.
      const ren = await t.alter.renameColumn('name', 'label')
      const renInfo = (await logLines(dir, ren.version)).find((l) => l.commitInfo)?.commitInfo
      assert.equal(renInfo.operation, 'RENAME COLUMN')
      assert.deepEqual(renInfo.operationParameters, { oldColumnPath: 'name', newColumnPath: 'label' })
      await t.alter.renameColumn('part', 'region')
      await t.alter.renameColumn('s.a', 'alpha')
      let snap = await t.snapshot()
      assert.deepEqual(snap.partitionColumns, ['region'])
      assert.deepEqual(
        allFields(snap.schema).map(([path, f]) => [path, f.metadata[PHYS]]),
        [
          ['id', 'id'],
          ['label', 'name'],
          ['region', 'part'],
          ['s', 's'],
          ['s.alpha', 'a'],
          ['s.b', 'b'],
        ],
      )
      const renamed = (i: number): Row => ({
        id: BigInt(i),
        label: `n${i}`,
        region: i % 2,
        s: { alpha: i, b: `b${i}` },
      })
      assertSameRows(await t.scan().toArray(), [0, 1, 2, 3, 4].map(renamed), 'after renames')
      await t.append([renamed(5)])
      assert.deepEqual(
        (await t.scan({ where: 'region = 1 AND s.alpha >= 3' }).toArray()).map((r) => r.id).sort(),
        [3n, 5n],
      )

      // Refusals: a partition column, a column a CHECK constraint uses, a taken name, a missing column.
      await t.alter.addConstraint('nonneg', 'id >= 0')
      const refusals: [() => Promise<unknown>, (e: unknown) => boolean][] = [
        [
          () => t.alter.dropColumns(['region']),
          (e) =>
            e instanceof ColumnChangeRefusedError && e.code === 'DELTA_UNSUPPORTED_DROP_PARTITION_COLUMN',
        ],
        [
          () => t.alter.dropColumns(['id']),
          (e) =>
            e instanceof ColumnChangeRefusedError &&
            e.code === 'DELTA_CONSTRAINT_DEPENDENT_COLUMN_CHANGE' &&
            e.dependents.some((d) => d.includes('nonneg')),
        ],
        [
          () => t.alter.renameColumn('id', 'key'),
          (e) =>
            e instanceof ColumnChangeRefusedError && e.code === 'DELTA_CONSTRAINT_DEPENDENT_COLUMN_CHANGE',
        ],
        [
          () => t.alter.renameColumn('label', 'ID'),
          (e) => e instanceof InvalidArgumentError && /exists/.test(e.message),
        ],
        [() => t.alter.renameColumn('label', 'a.b'), (e) => e instanceof InvalidArgumentError],
        [
          () => t.alter.dropColumns(['nope']),
          (e) => e instanceof InvalidArgumentError && /Unknown column 'nope'/.test(e.message),
        ],
        [
          () => t.alter.dropColumns(['s.alpha', 's.b']),
          (e) => e instanceof InvalidArgumentError && /every field of struct/.test(e.message),
        ],
      ]
      const before = await commitCount(dir)
      for (const [call, is] of refusals) await assert.rejects(call(), is)
      assert.equal(await commitCount(dir), before)
      assert.equal((await t.alter.dropColumns(['nope'], { ifExists: true })).committed, false)

      // Drop a nested field and a column: gone from scans, still in the old files.
      await t.alter.dropColumns(['s.b'])
      const drop = await t.alter.dropColumns(['label'])
      const dropInfo = (await logLines(dir, drop.version)).find((l) => l.commitInfo)?.commitInfo
      assert.equal(dropInfo.operation, 'DROP COLUMNS')
      assert.deepEqual(JSON.parse(dropInfo.operationParameters.columns), ['label'])
      const dropped = (i: number): Row => ({ id: BigInt(i), region: i % 2, s: { alpha: i } })
      assertSameRows(await t.scan().toArray(), [0, 1, 2, 3, 4, 5].map(dropped), 'after drops')
      snap = await t.snapshot()
      const oldFile = snap.activeFiles()[0]
      assert.ok(oldFile !== undefined)
      assert.ok(
        (await parquetSchema(join(dir, keyOf(oldFile.path)))).some((c) => c.name === 'name'),
        'the data stays',
      )

      // A column added under a dropped name is a new column: new id, new physical name, null before.
      await t.alter.addColumns('label string')
      snap = await t.snapshot()
      const label = snap.schema.fields.find((f) => f.name === 'label') as StructField
      assert.equal(label.metadata[ID], 7)
      assert.match(String(label.metadata[PHYS]), /^col-/)
      assert.equal(snap.properties[MAX_ID], '7')
      await t.append([{ id: 6n, region: 0, s: { alpha: 6 }, label: 'new' }])
      // Schema evolution on append gives its new column an id too.
      await t.append([{ id: 7n, region: 1, s: { alpha: 7 }, label: 'x', extra: 1n }], { schemaMode: 'merge' })
      snap = await t.snapshot()
      const extra = snap.schema.fields.find((f) => f.name === 'extra') as StructField
      assert.equal(extra.metadata[ID], 8)
      assert.equal(snap.properties[MAX_ID], '8')
      const final = [
        ...[0, 1, 2, 3, 4, 5].map((i) => ({ ...dropped(i), label: null, extra: null })),
        { id: 6n, region: 0, s: { alpha: 6 }, label: 'new', extra: null },
        { id: 7n, region: 1, s: { alpha: 7 }, label: 'x', extra: 1n },
      ]
      assertSameRows(await t.scan().toArray(), final, 'after re-adding label')
      await t.optimize()
      await t.checkpoint()
      const reopened = await DeltaTable.open(dir)
      try {
        assertSameRows(await reopened.scan().toArray(), final, 'from the checkpoint')
      } finally {
        await reopened.close()
      }
    } finally {
      await t.close()
    }
  })

  it('MERGE schema evolution and an append that widens and adds give new columns ids and raise maxColumnId', async () => {
    const dir = await tempDir()
    const t = await DeltaTable.create(dir, {
      schema: 'id long, v int',
      properties: { 'delta.columnMapping.mode': 'name', 'delta.enableTypeWidening': 'true' },
    })
    try {
      await t.append([{ id: 1n, v: 1 }])
      await t.merge([{ id: 2n, v: 2, extra: 'e' }], {
        on: 'target.id = source.id',
        whenNotMatched: [{ insert: '*' }],
        schemaEvolution: true,
      })
      await t.append([{ id: 3n, v: 3_000_000_000n, more: 'x' }], { schemaMode: 'merge' })
      const snap = await t.snapshot()
      assert.deepEqual(
        snap.schema.fields.map((f) => [f.name, f.type, f.metadata[ID]]),
        [
          ['id', 'long', 1],
          ['v', 'long', 2],
          ['extra', 'string', 3],
          ['more', 'string', 4],
        ],
      )
      assert.equal(snap.properties[MAX_ID], '4')
      assertSameRows(await t.scan().toArray(), [
        { id: 1n, v: 1n, extra: null, more: null },
        { id: 2n, v: 2n, extra: 'e', more: null },
        { id: 3n, v: 3_000_000_000n, extra: null, more: 'x' },
      ])
      await assertMappedOnDisk(dir, t, { freshNames: true })
    } finally {
      await t.close()
    }
  })

  it('a schema overwrite keeps the ids and physical names of kept columns and maps new ones', async () => {
    const dir = await tempDir()
    const t = await DeltaTable.create(dir, {
      schema: 'id long, v int, gone string',
      properties: { 'delta.columnMapping.mode': 'name' },
    })
    try {
      await t.append([{ id: 1n, v: 1, gone: 'g' }])
      const before = new Map((await t.snapshot()).schema.fields.map((f) => [f.name, f.metadata[PHYS]]))
      await t.append([{ id: 2n, city: 'Oslo' }], {
        mode: 'overwrite',
        schemaMode: 'overwrite',
        partitionBy: ['city'],
      })
      const snap = await t.snapshot()
      assert.deepEqual(
        snap.schema.fields.map((f) => [f.name, f.metadata[ID]]),
        [
          ['id', 1],
          ['city', 4],
        ],
      )
      assert.equal(
        snap.schema.fields[0]?.metadata[PHYS],
        before.get('id'),
        'a kept column keeps its physical name',
      )
      assert.match(String(snap.schema.fields[1]?.metadata[PHYS]), /^col-[0-9a-f-]{36}$/)
      assert.equal(snap.properties[MAX_ID], '4')
      assertSameRows(await t.scan().toArray(), [{ id: 2n, city: 'Oslo' }])
      await assertMappedOnDisk(dir, t, { freshNames: true })
    } finally {
      await t.close()
    }
  })

  it('refuses to drop a clustering column; the clustering domain names columns physically', async () => {
    const dir = await tempDir()
    const t = await DeltaTable.create(dir, {
      schema: 'id long, v string',
      clusterBy: ['id'],
      properties: { 'delta.columnMapping.mode': 'name' },
    })
    try {
      await t.append([{ id: 1n, v: 'a' }])
      const snap = await t.snapshot()
      const domain = (await logLines(dir, 0)).find((l) => l.domainMetadata)?.domainMetadata
      const phys = snap.schema.fields[0]?.metadata[PHYS]
      assert.deepEqual(JSON.parse(domain.configuration).clusteringColumns, [[phys]])
      await assert.rejects(
        t.alter.dropColumns(['id']),
        (e: unknown) =>
          e instanceof ColumnChangeRefusedError && e.code === 'DELTA_UNSUPPORTED_DROP_CLUSTERING_COLUMN',
      )
      await t.alter.renameColumn('id', 'key')
      await t.optimize()
      assertSameRows(await t.scan().toArray(), [{ key: 1n, v: 'a' }])
    } finally {
      await t.close()
    }
  })

  it('refuses to drop or rename a column a generated column is computed from', async () => {
    const dir = await tempDir()
    const t = await DeltaTable.create(dir, {
      schema: {
        type: 'struct',
        fields: [
          { name: 'a', type: 'long', nullable: true, metadata: {} },
          { name: 'b', type: 'long', nullable: true, metadata: { 'delta.generationExpression': 'a + 1' } },
          { name: 'c', type: 'string', nullable: true, metadata: {} },
        ],
      },
      properties: { 'delta.columnMapping.mode': 'name' },
    })
    try {
      for (const call of [() => t.alter.dropColumns(['a']), () => t.alter.renameColumn('a', 'x')]) {
        await assert.rejects(
          call(),
          (e: unknown) =>
            e instanceof ColumnChangeRefusedError &&
            e.code === 'DELTA_GENERATED_COLUMNS_DEPENDENT_COLUMN_CHANGE' &&
            e.dependents.some((d) => d.startsWith('b ')),
        )
      }
      await t.alter.renameColumn('c', 'note')
      await t.alter.dropColumns(['b'])
      await t.alter.renameColumn('a', 'x')
      assert.deepEqual(
        (await t.snapshot()).schema.fields.map((f) => f.name),
        ['x', 'note'],
      )
    } finally {
      await t.close()
    }
  })

  it('delta-rlc alter drop-columns and rename-column', async () => {
    const dir = await tempDir()
    const t = await DeltaTable.create(dir, {
      schema: 'id long, a string, b int',
      properties: { 'delta.columnMapping.mode': 'name' },
    })
    await t.append([{ id: 1n, a: 'x', b: 2 }])
    await t.close()
    const ok: [string[], RegExp][] = [
      [['alter', dir, 'rename-column', 'a', 'alpha'], /RENAME COLUMN/],
      [['alter', dir, 'drop-columns', 'b', 'nope', '--if-exists'], /DROP COLUMNS/],
    ]
    for (const [args, out] of ok) {
      const r = await runCliInProcess(args)
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`)
      assert.match(r.stdout, out)
    }
    const bad: [string[], RegExp][] = [
      [['alter', dir, 'rename-column', 'alpha'], /rename-column takes/],
      [['alter', dir, 'drop-columns', 'id', 'alpha'], /every data column/],
    ]
    for (const [args, err] of bad) {
      const r = await runCliInProcess(args)
      assert.notEqual(r.code, 0)
      assert.match(r.stderr, err)
    }
    const plain = await tempDir()
    await (await DeltaTable.create(plain, { schema: 'id long, a string' })).close()
    const refused = await runCliInProcess(['alter', plain, 'drop-columns', 'a'])
    assert.notEqual(refused.code, 0)
    assert.match(refused.stderr, /DELTA_UNSUPPORTED_DROP_COLUMN/)
    assert.match(refused.stderr, /delta\.columnMapping\.mode/)
    const r = await DeltaTable.open(dir)
    try {
      assertSameRows(await r.scan().toArray(), [{ id: 1n, alpha: 'x' }])
    } finally {
      await r.close()
    }
  })
})
