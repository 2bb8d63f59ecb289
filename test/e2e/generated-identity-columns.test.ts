/**
 * Generated columns and identity columns through the public API, input files and the CLI: values
 * computed on append, overwrite, UPDATE and MERGE (a date partition generated from a timestamp
 * among them), a given value that differs from the expression refused, identity values above the
 * high-water mark across appends and a MERGE insert with the mark moved in the same commit, explicit
 * values refused or kept as the column says, tables written as Spark writes them read back, and
 * the on-disk shapes of the protocol and the schema metadata.
 */
import assert from 'node:assert/strict'
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { DuckDBInstance } from '@duckdb/node-api'
import { tableFromArrays } from 'apache-arrow'
import {
  GeneratedColumnMismatchError,
  IdentityColumnError,
  InvalidArgumentError,
  UnsupportedError,
} from '../../src/errors/index.js'
import { DeltaTable } from '../../src/table/delta-table.js'
import { runCliInProcess } from '../helpers/cli-in-process.js'
import { commitCount, type LogLine, logLines } from './ops-support.js'

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

async function tableDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'delta-rlc-computed-'))
  roots.push(d)
  return join(d, 't')
}

type Row = Record<string, unknown>

/** The schema fields of the commit's metaData action: name and metadata. */
const fieldMetadata = (lines: LogLine[]): [string, Record<string, unknown>][] =>
  JSON.parse(lines.find((l) => l.metaData)?.metaData.schemaString).fields.map((f: LogLine) => [
    f.name,
    f.metadata,
  ])

const highWaterMark = async (dir: string, version: bigint | number, column = 'id'): Promise<unknown> => {
  const lines = await logLines(dir, version)
  if (!lines.some((l) => l.metaData)) return 'no metaData'
  return Object.fromEntries(fieldMetadata(lines))[column]?.['delta.identity.highWaterMark']
}

const sorted = (rows: Row[], key = 'id') =>
  rows.sort((a, b) =>
    (a[key] as bigint) < (b[key] as bigint) ? -1 : (a[key] as bigint) > (b[key] as bigint) ? 1 : 0,
  )

/**
 * A table as Spark writes one with an identity column `id` (mark 2) and a generated column `g`:
 * legacy protocol 1/6, one data file of two rows written by DuckDB.
 */
async function sparkTable(
  expression: string,
  type: string,
  values: readonly [string, string],
): Promise<string> {
  const dir = await tableDir()
  await mkdir(join(dir, '_delta_log'), { recursive: true })
  const file = join(dir, 'part-00000-spark.c000.snappy.parquet')
  const duck = await DuckDBInstance.create(':memory:', { threads: '1' })
  const con = await duck.connect()
  try {
    await con.run(`SET TimeZone = 'UTC'`)
    await con.run(
      `COPY (SELECT * FROM (VALUES (1::BIGINT, TIMESTAMPTZ '2026-03-01 08:00:00+00', ${values[0]}), (2::BIGINT, TIMESTAMPTZ '2025-07-01 08:00:00+00', ${values[1]})) v(id, ts, g)) TO '${file}' (FORMAT parquet)`,
    )
  } finally {
    con.closeSync()
  }
  const schema = {
    type: 'struct',
    fields: [
      {
        name: 'id',
        type: 'long',
        nullable: false,
        metadata: {
          'delta.identity.start': 1,
          'delta.identity.step': 1,
          'delta.identity.highWaterMark': 2,
          'delta.identity.allowExplicitInsert': false,
        },
      },
      { name: 'ts', type: 'timestamp', nullable: true, metadata: {} },
      { name: 'g', type, nullable: true, metadata: { 'delta.generationExpression': expression } },
    ],
  }
  const log = [
    { commitInfo: { timestamp: 1, operation: 'CREATE TABLE' } },
    { protocol: { minReaderVersion: 1, minWriterVersion: 6 } },
    {
      metaData: {
        id: 'spark-table',
        format: { provider: 'parquet', options: {} },
        schemaString: JSON.stringify(schema),
        partitionColumns: [],
        configuration: {},
        createdTime: 1,
      },
    },
    {
      add: {
        path: 'part-00000-spark.c000.snappy.parquet',
        partitionValues: {},
        size: (await stat(file)).size,
        modificationTime: 1,
        dataChange: true,
        stats: '{"numRecords":2}',
      },
    },
  ]
  const text = `${log.map((a) => JSON.stringify(a)).join('\n')}\n`
  await writeFile(join(dir, '_delta_log', '00000000000000000000.json'), text)
  return dir
}

const EVENTS =
  'id long generated always as identity, ts timestamp, day date generated always as (CAST(ts AS DATE)), ' +
  'name string, tag string generated always as (upper(name))'

describe('generated columns', () => {
  it('compute a date partition from a timestamp on append, input files, overwrite, UPDATE and MERGE', async () => {
    const dir = await tableDir()
    const t = await DeltaTable.create(dir, { schema: EVENTS, partitionBy: ['day'] })
    try {
      const v0 = await logLines(dir, 0)
      assert.deepEqual(v0.find((l) => l.protocol)?.protocol, {
        minReaderVersion: 3,
        minWriterVersion: 7,
        readerFeatures: ['deletionVectors'],
        writerFeatures: ['generatedColumns', 'identityColumns', 'deletionVectors'],
      })
      assert.deepEqual(fieldMetadata(v0), [
        [
          'id',
          {
            'delta.identity.start': 1,
            'delta.identity.step': 1,
            'delta.identity.allowExplicitInsert': false,
          },
        ],
        ['ts', {}],
        ['day', { 'delta.generationExpression': 'CAST(ts AS DATE)' }],
        ['name', {}],
        ['tag', { 'delta.generationExpression': 'upper(name)' }],
      ])

      const r1 = await t.append([
        { ts: '2026-12-01T10:00:00Z', name: 'a' },
        { ts: '2026-12-02T23:30:00Z', name: 'b' },
        { ts: '2026-12-01T00:00:00Z', name: 'c', day: '2026-12-01', tag: 'C' },
      ])
      const adds = (await logLines(dir, r1.version)).filter((l) => l.add).map((l) => l.add.partitionValues)
      assert.deepEqual(
        adds.sort((a, b) => a.day.localeCompare(b.day)),
        [{ day: '2026-12-01' }, { day: '2026-12-02' }],
      )
      const input = join(dir, '..', 'more.jsonl')
      await writeFile(input, '{"ts":"2026-12-03T05:00:00Z","name":"d"}\n')
      await t.appendFile(input)

      await t.update({ where: "name = 'a'", set: { ts: "TIMESTAMP '2026-12-04 01:00:00'", name: "'e'" } })
      await t.merge(
        [
          { name: 'b', ts: '2026-12-05T12:00:00Z' },
          { name: 'f', ts: '2026-12-06T12:00:00Z' },
        ],
        {
          on: 'target.name = source.name',
          whenMatched: [{ update: { ts: 'source.ts' } }],
          whenNotMatched: [{ insert: { name: 'source.name', ts: 'source.ts' } }],
        },
      )
      assert.deepEqual(sorted(await t.scan().toArray()), [
        { id: 1n, ts: '2026-12-04T01:00:00.000000Z', day: '2026-12-04', name: 'e', tag: 'E' },
        { id: 2n, ts: '2026-12-05T12:00:00.000000Z', day: '2026-12-05', name: 'b', tag: 'B' },
        { id: 3n, ts: '2026-12-01T00:00:00.000000Z', day: '2026-12-01', name: 'c', tag: 'C' },
        { id: 4n, ts: '2026-12-03T05:00:00.000000Z', day: '2026-12-03', name: 'd', tag: 'D' },
        { id: 5n, ts: '2026-12-06T12:00:00.000000Z', day: '2026-12-06', name: 'f', tag: 'F' },
      ])

      await t.append([{ ts: '2027-01-01T00:00:00Z', name: 'g' }], { mode: 'overwrite' })
      assert.deepEqual(await t.scan().toArray(), [
        { id: 6n, ts: '2027-01-01T00:00:00.000000Z', day: '2027-01-01', name: 'g', tag: 'G' },
      ])
    } finally {
      await t.close()
    }
  })

  it('compute a year / month partition from a timestamp (Spark year(), month()) on append and UPDATE', async () => {
    const dir = await tableDir()
    const t = await DeltaTable.create(dir, {
      schema:
        'id long, ts timestamp, y int generated always as (year(ts)), m int generated always as (month(ts))',
      partitionBy: ['y'],
    })
    try {
      await t.append([
        { id: 1n, ts: '2025-12-31T23:30:00Z' },
        { id: 2n, ts: '2026-01-01T00:30:00Z' },
      ])
      // UPDATE recomputes both in the data plane and moves the row to another partition.
      await t.update({ set: { ts: "TIMESTAMP '2027-06-15 12:00:00'" }, where: 'id = 1' })
      assert.deepEqual(
        sorted(await t.scan().toArray()).map((r) => [r.id, r.y, r.m]),
        [
          [1n, 2027, 6],
          [2n, 2026, 1],
        ],
      )
      assert.deepEqual(
        (await t.snapshot())
          .activeFiles()
          .map((f) => f.partitionValues.y)
          .sort(),
        ['2026', '2027'],
      )
      await assert.rejects(
        t.append([{ id: 3n, ts: '2026-05-01T00:00:00Z', y: 2025 }]),
        (e: unknown) => e instanceof GeneratedColumnMismatchError,
      )
    } finally {
      await t.close()
    }
  })

  it('refuse a given value that differs from the expression, naming the column and the row, committing nothing', async () => {
    const dir = await tableDir()
    const t = await DeltaTable.create(dir, {
      schema:
        'ts timestamp, day date generated always as (CAST(ts AS DATE)), n long, m long generated always as (n * 2)',
      partitionBy: ['day'],
    })
    try {
      await t.append([{ ts: '2026-12-01T10:00:00Z', n: 1n }])
      const before = await commitCount(dir)
      await assert.rejects(
        t.append([
          { ts: '2026-12-01T10:00:00Z', n: 2n },
          { ts: '2026-12-02T10:00:00Z', day: '2026-12-01', n: 3n },
        ]),
        (e: unknown) =>
          e instanceof GeneratedColumnMismatchError &&
          e.code === 'DELTA_GENERATED_COLUMNS_VALUE_MISMATCH' &&
          e.column === 'day' &&
          e.expression === 'CAST(ts AS DATE)' &&
          e.row.day === '2026-12-01' &&
          e.row.n === 3n,
      )
      // A null is a value too: it differs from a non-null expression.
      await assert.rejects(t.append([{ ts: '2026-12-01T10:00:00Z', n: 4n, m: null }]), (e: unknown) => {
        return e instanceof GeneratedColumnMismatchError && e.column === 'm' && e.row.n === 4n
      })
      // An UPDATE that assigns a generated column a different value is refused the same way.
      await assert.rejects(
        t.update({ set: { m: '5' } }),
        (e: unknown) => e instanceof GeneratedColumnMismatchError && e.column === 'm',
      )
      assert.equal(await commitCount(dir), before)
      // An UPDATE of an input recomputes the column; an equal given value is accepted.
      await t.update({ set: { n: 'n + 10' } })
      await t.append([{ ts: '2026-12-03T00:00:00Z', day: '2026-12-03', n: 5n, m: 10n }])
      assert.deepEqual(sorted(await t.scan().toArray(), 'n'), [
        { ts: '2026-12-03T00:00:00.000000Z', day: '2026-12-03', n: 5n, m: 10n },
        { ts: '2026-12-01T10:00:00.000000Z', day: '2026-12-01', n: 11n, m: 22n },
      ])
    } finally {
      await t.close()
    }
  })
})

describe('identity columns', () => {
  it('generate start + k * step above the high-water mark across appends and a MERGE insert, moving the mark in the same commit', async () => {
    const dir = await tableDir()
    const t = await DeltaTable.create(dir, {
      schema: 'id long generated always as identity (start with 100 increment by -10), name string',
    })
    try {
      assert.equal(await highWaterMark(dir, 0), undefined)
      const r1 = await t.append([{ name: 'a' }, { name: 'b' }])
      const lines = await logLines(dir, r1.version)
      assert.deepEqual(
        lines.map((l) => Object.keys(l)[0]),
        ['commitInfo', 'metaData', 'add'],
      )
      assert.deepEqual(fieldMetadata(lines)[0], [
        'id',
        {
          'delta.identity.start': 100,
          'delta.identity.step': -10,
          'delta.identity.allowExplicitInsert': false,
          'delta.identity.highWaterMark': 90,
        },
      ])
      const r2 = await t.append([{ name: 'c' }])
      assert.equal(await highWaterMark(dir, r2.version), 80)
      const r3 = await t.merge([{ name: 'a' }, { name: 'd' }, { name: 'e' }], {
        on: 'target.name = source.name',
        whenMatched: [{ update: { name: 'upper(source.name)' } }],
        whenNotMatched: [{ insert: { name: 'source.name' } }],
      })
      assert.equal(await highWaterMark(dir, r3.version), 60)
      // A commit that generates nothing writes no metaData.
      const r4 = await t.delete("name = 'b'")
      assert.equal(await highWaterMark(dir, r4.version), 'no metaData')
      assert.deepEqual(sorted(await t.scan().toArray()), [
        { id: 60n, name: 'e' },
        { id: 70n, name: 'd' },
        { id: 80n, name: 'c' },
        { id: 100n, name: 'A' },
      ])
      // UPDATE and MERGE update never change an identity value.
      await assert.rejects(
        t.update({ set: { id: '1' } }),
        (e: unknown) =>
          e instanceof IdentityColumnError &&
          e.code === 'DELTA_IDENTITY_COLUMNS_UPDATE_NOT_SUPPORTED' &&
          e.column === 'id',
      )
      await assert.rejects(
        t.merge([{ name: 'A', id: 5n }], {
          on: 'target.name = source.name',
          whenMatched: [{ update: { id: 'source.id' } }],
        }),
        (e: unknown) => e instanceof IdentityColumnError && e.problem === 'update',
      )
      // update '*' leaves the identity column out; insert '*' generates it when the source lacks it.
      await t.merge([{ name: 'c' }, { name: 'f' }], {
        on: 'target.name = source.name',
        whenMatched: [{ update: '*' }],
        whenNotMatched: [{ insert: '*' }],
      })
      assert.deepEqual(
        sorted(await t.scan().toArray()).map((r) => r.id),
        [50n, 60n, 70n, 80n, 100n],
      )
    } finally {
      await t.close()
    }
  })

  it('refuse explicit values for GENERATED ALWAYS and keep them for GENERATED BY DEFAULT without moving the mark', async () => {
    const always = await DeltaTable.create(await tableDir(), {
      schema: 'id long not null generated always as identity, v string',
    })
    try {
      await assert.rejects(
        always.append([{ v: 'x' }, { id: 7n, v: 'y' }]),
        (e: unknown) =>
          e instanceof IdentityColumnError &&
          e.code === 'DELTA_IDENTITY_COLUMNS_EXPLICIT_INSERT_NOT_SUPPORTED' &&
          e.row?.id === 7n,
      )
      await assert.rejects(
        always.merge([{ k: 7n, v: 'y' }], {
          on: 'target.id = source.k',
          whenNotMatched: [{ insert: { id: 'source.k', v: 'source.v' } }],
        }),
        (e: unknown) => e instanceof IdentityColumnError && e.problem === 'explicit-insert',
      )
      // A null (or no value) asks for a generated one, also on a NOT NULL column.
      await always.append([{ id: null, v: 'x' }, { v: 'y' }])
      assert.deepEqual(sorted(await always.scan().toArray()), [
        { id: 1n, v: 'x' },
        { id: 2n, v: 'y' },
      ])
    } finally {
      await always.close()
    }

    const dir = await tableDir()
    const byDefault = await DeltaTable.create(dir, {
      schema: 'id long generated by default as identity (start with 1 increment by 1), v string',
    })
    try {
      const r1 = await byDefault.append([{ v: 'a' }, { id: 1000n, v: 'b' }])
      assert.equal(await highWaterMark(dir, r1.version), 1)
      // Only explicit values: nothing generated, no metaData.
      const r2 = await byDefault.append([{ id: 2000n, v: 'c' }])
      assert.equal(await highWaterMark(dir, r2.version), 'no metaData')
      await byDefault.merge([{ k: 3000n, v: 'd' }, { v: 'e' }], {
        on: 'target.v = source.v',
        whenNotMatched: [{ insert: { id: 'source.k', v: 'source.v' } }],
      })
      assert.deepEqual(sorted(await byDefault.scan().toArray()), [
        { id: 1n, v: 'a' },
        { id: 2n, v: 'e' },
        { id: 1000n, v: 'b' },
        { id: 2000n, v: 'c' },
        { id: 3000n, v: 'd' },
      ])
    } finally {
      await byDefault.close()
    }

    // The last long is generated; the row after it is refused and nothing is committed.
    const edge = await DeltaTable.create(await tableDir(), {
      schema: 'id long generated always as identity (start with 9223372036854775806), v string',
    })
    try {
      await edge.append([{ v: 'a' }])
      await assert.rejects(
        edge.append([{ v: 'b' }, { v: 'c' }]),
        (e: unknown) =>
          e instanceof IdentityColumnError &&
          e.code === 'DELTA_IDENTITY_COLUMNS_VALUE_OVERFLOW' &&
          e.row?.v === 'c',
      )
      await edge.append([{ v: 'b' }])
      assert.deepEqual(sorted(await edge.scan().toArray()), [
        { id: 9223372036854775806n, v: 'a' },
        { id: 9223372036854775807n, v: 'b' },
      ])
    } finally {
      await edge.close()
    }
  })
  it('keep their high-water mark across a RESTORE to a version before it moved: no value is generated twice', async () => {
    const dir = await tableDir()
    const t = await DeltaTable.create(dir, { schema: 'id long generated always as identity, v string' })
    try {
      await t.append([{ v: 'a' }, { v: 'b' }])
      await t.append([{ v: 'c' }])
      assert.equal(await highWaterMark(dir, 2), 3)
      const restored = await t.restore({ version: 1 })
      assert.equal(await highWaterMark(dir, restored.version), 3, 'RESTORE keeps the further mark')
      await t.append([{ v: 'd' }])
      assert.deepEqual(sorted(await t.scan().toArray()), [
        { id: 1n, v: 'a' },
        { id: 2n, v: 'b' },
        { id: 4n, v: 'd' },
      ])
    } finally {
      await t.close()
    }
  })
})

describe('tables with generated and identity columns', () => {
  it('written as Spark writes them (writer version 6, a mark already set) read back; appends continue above the mark', async () => {
    // Spark's date_format() is outside delta-rlc's expression language: the table reads, rows are
    // refused.
    const spark = await DeltaTable.open(
      await sparkTable("date_format(ts, 'yyyy-MM')", 'string', ["'2026-03'", "'2025-07'"]),
    )
    try {
      assert.deepEqual(sorted(await spark.scan().toArray()), [
        { id: 1n, ts: '2026-03-01T08:00:00.000000Z', g: '2026-03' },
        { id: 2n, ts: '2025-07-01T08:00:00.000000Z', g: '2025-07' },
      ])
      const before = await commitCount(spark.location)
      await assert.rejects(
        spark.append([{ ts: '2026-01-01T00:00:00Z', g: '2026-01' }]),
        (e: unknown) => e instanceof UnsupportedError && /date_format/.test(e.message),
      )
      assert.equal(await commitCount(spark.location), before)
      // A DELETE that writes no rows does not need the expression.
      await spark.delete('id = 1')
      assert.deepEqual(await spark.scan().toArray(), [
        { id: 2n, ts: '2025-07-01T08:00:00.000000Z', g: '2025-07' },
      ])
    } finally {
      await spark.close()
    }
    // year(ts) is: appends compute it.
    const yearly = await DeltaTable.open(await sparkTable('year(ts)', 'integer', ['2026', '2025']))
    try {
      await yearly.append([{ ts: '2024-12-31T23:30:00Z' }])
      assert.deepEqual(
        sorted(await yearly.scan().toArray()).map((r) => [r.id, r.g]),
        [
          [1n, 2026],
          [2n, 2025],
          [3n, 2024],
        ],
      )
    } finally {
      await yearly.close()
    }
    const dir = await sparkTable('CAST(ts AS DATE)', 'date', ["DATE '2026-03-01'", "DATE '2025-07-01'"])
    const t = await DeltaTable.open(dir)
    try {
      const r = await t.append([{ ts: '2026-12-01T10:00:00Z' }])
      assert.equal(await highWaterMark(dir, r.version), 3)
      assert.deepEqual(sorted(await t.scan().toArray()), [
        { id: 1n, ts: '2026-03-01T08:00:00.000000Z', g: '2026-03-01' },
        { id: 2n, ts: '2025-07-01T08:00:00.000000Z', g: '2025-07-01' },
        { id: 3n, ts: '2026-12-01T10:00:00.000000Z', g: '2026-12-01' },
      ])
    } finally {
      await t.close()
    }
  })

  it('take Arrow input; an append that adds columns commits one metaData holding them and the mark; a schema overwrite drops them', async () => {
    const dir = await tableDir()
    const t = await DeltaTable.create(dir, {
      schema: 'id long generated always as identity, n long, m long generated always as (n * 2)',
    })
    try {
      await t.append([{ n: 1n }])
      const r = await t.append([{ n: 2n, extra: 'x' }], { schemaMode: 'merge' })
      const lines = await logLines(dir, r.version)
      assert.equal(lines.filter((l) => l.metaData).length, 1)
      assert.deepEqual(
        fieldMetadata(lines).map(([name, metadata]) => [name, metadata['delta.identity.highWaterMark']]),
        [
          ['id', 2],
          ['n', undefined],
          ['m', undefined],
          ['extra', undefined],
        ],
      )
      await t.append(tableFromArrays({ n: BigInt64Array.from([5n, 6n]) }))
      assert.deepEqual(sorted(await t.scan().toArray()), [
        { id: 1n, n: 1n, m: 2n, extra: null },
        { id: 2n, n: 2n, m: 4n, extra: 'x' },
        { id: 3n, n: 5n, m: 10n, extra: null },
        { id: 4n, n: 6n, m: 12n, extra: null },
      ])
      // An overwrite that replaces the schema with the rows' columns keeps no computed column.
      await t.append([{ n: 7n }], { mode: 'overwrite', schemaMode: 'overwrite' })
      assert.deepEqual(await t.scan().toArray(), [{ n: 7n }])
      assert.deepEqual(
        (await t.snapshot()).schema.fields.map((f) => [f.name, f.metadata]),
        [['n', {}]],
      )
    } finally {
      await t.close()
    }
  })

  it('refuse invalid definitions at create', async () => {
    const cases: [string, string | object, (e: unknown) => boolean][] = [
      [
        'identity on a string',
        'id string generated always as identity',
        (e) => e instanceof InvalidArgumentError,
      ],
      [
        'a zero step',
        'id long generated always as identity (increment by 0)',
        (e) => e instanceof InvalidArgumentError,
      ],
      [
        'BY DEFAULT for an expression',
        'a long, b long generated by default as (a)',
        (e) => e instanceof InvalidArgumentError,
      ],
      [
        'an expression over a missing column',
        'a long, b long generated always as (c + 1)',
        (e) => e instanceof InvalidArgumentError && /reads column 'c'/.test(e.message),
      ],
      [
        'an expression over an identity column',
        'a long generated always as identity, b long generated always as (a + 1)',
        (e) => e instanceof InvalidArgumentError && /identity column/.test(e.message),
      ],
      [
        'an expression delta-rlc cannot evaluate',
        's string, y string generated always as (substring(s, 1, 2))',
        (e) => e instanceof UnsupportedError && /substring/.test(e.message),
      ],
      [
        'a high-water mark on a new table',
        {
          type: 'struct',
          fields: [
            {
              name: 'id',
              type: 'long',
              nullable: true,
              metadata: {
                'delta.identity.start': 1,
                'delta.identity.step': 1,
                'delta.identity.highWaterMark': 5,
              },
            },
          ],
        },
        (e) => e instanceof InvalidArgumentError && /highWaterMark/.test(e.message),
      ],
    ]
    for (const [name, schema, check] of cases) {
      await assert.rejects(DeltaTable.create(await tableDir(), { schema: schema as never }), check, name)
    }
    await assert.rejects(
      DeltaTable.create(await tableDir(), {
        schema: 'id long generated always as identity, v string',
        partitionBy: ['id'],
      }),
      (e: unknown) => e instanceof InvalidArgumentError && e.argument === 'partitionBy',
    )
  })

  it('are created by the CLI from DDL, the CLI appends compute their values, and describe shows them as DDL', async () => {
    const dir = await tableDir()
    const created = await runCliInProcess([
      'create',
      dir,
      '--schema',
      'id long generated always as identity, ts timestamp, day date generated always as (CAST(ts AS DATE))',
      '--partition-by',
      'day',
    ])
    assert.equal(created.code, 0, created.stderr)
    const input = join(dir, '..', 'rows.jsonl')
    await writeFile(input, '{"ts":"2026-12-01T10:00:00Z"}\n{"ts":"2026-12-02T10:00:00Z"}\n')
    const appended = await runCliInProcess(['append', dir, input])
    assert.equal(appended.code, 0, appended.stderr)
    const t = await DeltaTable.open(dir)
    try {
      assert.deepEqual(sorted(await t.scan().toArray()), [
        { id: 1n, ts: '2026-12-01T10:00:00.000000Z', day: '2026-12-01' },
        { id: 2n, ts: '2026-12-02T10:00:00.000000Z', day: '2026-12-02' },
      ])
      assert.equal(await highWaterMark(dir, 1), 2)
    } finally {
      await t.close()
    }
    const described = await runCliInProcess(['describe', dir])
    assert.equal(described.code, 0, described.stderr)
    assert.match(
      described.stdout,
      /^\s+id\s+long\s+generated always as identity \(start with 1 increment by 1, high-water mark 2\)$/m,
    )
    assert.match(described.stdout, /^\s+day\s+date\s+generated always as \(CAST\(ts AS DATE\)\)$/m)
  })
})
