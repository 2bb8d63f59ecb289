/**
 * Checkpoints carry per-file statistics in the form the table asks for
 * (`delta.checkpoint.writeStatsAsJson`, `delta.checkpoint.writeStatsAsStruct`), and a table whose
 * checkpoint holds only `stats_parsed` (as Spark and Databricks write it) keeps every file's
 * statistics through the checkpoints this library writes: same values field by field, the
 * deletion-vector files' numRecords included, and data skipping still prunes with them.
 */
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { after, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { DuckDBInstance } from '@duckdb/node-api'
import { parseStats } from '../../src/protocol/stats.js'
import { DeltaTable } from '../../src/table/delta-table.js'

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const FIXTURE = resolve(repoRoot, '../shared/fixtures/stats-parsed/v1-multi-part-struct-stats-only')
const FIXTURE_SKIP = existsSync(join(FIXTURE, '_delta_log'))
  ? false
  : 'stats-parsed fixture not found at ../shared/fixtures/stats-parsed'

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'delta-rlc-cp-stats-'))
  roots.push(d)
  return join(d, 't')
}

const checkpointPath = (dir: string, version: bigint): string =>
  join(dir, '_delta_log', `${String(version).padStart(20, '0')}.checkpoint.parquet`)

/** Every live file's `add.stats` text, by path. */
async function statsByPath(table: DeltaTable): Promise<Map<string, string | undefined>> {
  const snap = await table.snapshot()
  return new Map(snap.activeFiles().map((f) => [f.path, f.stats]))
}

/** Opens the table afresh and checks its state comes from the checkpoint at `version` alone. */
async function reopenFromCheckpoint(dir: string, version: bigint): Promise<DeltaTable> {
  const table = await DeltaTable.open(dir)
  const snap = await table.snapshot()
  assert.equal(snap.logSegment.checkpoint?.version, version)
  assert.equal(snap.logSegment.commits.length, 0, 'no commit after the checkpoint is replayed')
  return table
}

function assertSameStats(
  before: ReadonlyMap<string, string | undefined>,
  after: ReadonlyMap<string, string | undefined>,
): void {
  assert.deepEqual([...after.keys()].sort(), [...before.keys()].sort())
  for (const [path, stats] of before) {
    assert.ok(stats !== undefined, `${path} had statistics`)
    assert.deepEqual(parseStats(after.get(path)), parseStats(stats), path)
    assert.equal(after.get(path), stats, `${path}: same JSON text`)
  }
}

/** Runs `sql` in a private DuckDB and returns the rows as objects. */
async function duck(sql: string): Promise<Record<string, unknown>[]> {
  const inst = await DuckDBInstance.create(':memory:')
  const con = await inst.connect()
  try {
    await con.run(`SET TimeZone = 'UTC'`)
    return (await con.runAndReadAll(sql)).getRowObjectsJS() as Record<string, unknown>[]
  } finally {
    con.closeSync()
    inst.closeSync()
  }
}

async function addColumnType(file: string): Promise<string> {
  const rows = await duck(`DESCRIBE SELECT "add" FROM read_parquet('${file}')`)
  return String(rows[0]?.column_type)
}

const ids = async (t: DeltaTable, where?: string): Promise<number[]> =>
  (await t.scan({ columns: ['id'], ...(where ? { where } : {}) }).toArray())
    .map((r) => Number(r.id as bigint))
    .sort((a, b) => a - b)

describe('a Spark checkpoint with stats_parsed only', { skip: FIXTURE_SKIP }, () => {
  it('gives every file the statistics its commit recorded, prunes with them, and keeps them through an append and a checkpoint', async () => {
    const dir = await tempDir()
    await cp(FIXTURE, dir, { recursive: true })
    // The fixture's expected values: each file's stats as its own commit wrote them (the
    // checkpoint at version 5 carries the same in stats_parsed only).
    const expected = new Map<string, string>()
    for (let v = 1; v <= 5; v++) {
      const text = await readFile(join(dir, '_delta_log', `${String(v).padStart(20, '0')}.json`), 'utf8')
      for (const line of text.trim().split('\n')) {
        const add = JSON.parse(line).add
        if (add) expected.set(add.path, add.stats)
      }
    }
    assert.equal(expected.size, 5)

    const table = await reopenFromCheckpoint(dir, 5n)
    try {
      const fromCheckpoint = await statsByPath(table)
      assert.equal(fromCheckpoint.size, 5)
      for (const [path, stats] of expected) {
        const got = parseStats(fromCheckpoint.get(path))
        assert.ok(got, path)
        assert.deepEqual(got, parseStats(stats), path)
        const id = Number((got.minValues as { id: number }).id)
        assert.deepEqual(got, {
          numRecords: 1n,
          minValues: { id, value: `value_${id}` },
          maxValues: { id, value: `value_${id}` },
          nullCount: { id: 0, value: 0 },
          tightBounds: true,
        })
      }
      const plan = await table.scan({ where: 'id > 3' }).plan()
      assert.equal(plan.skipped, 3)
      assert.deepEqual(await ids(table, 'id > 3'), [4, 5])

      const appended = await table.append([{ id: 6n, value: 'value_6' }])
      assert.equal(appended.version, 6n)
      const before = await statsByPath(table)
      assert.equal(before.size, 6)
      const written = await table.checkpoint()
      assert.equal(written.version, 6n)

      // The table asks for struct statistics only, so the new checkpoint has no stats column.
      const file = checkpointPath(dir, 6n)
      const type = await addColumnType(file)
      assert.match(
        type,
        /stats_parsed STRUCT\(numRecords BIGINT, minValues STRUCT\(id BIGINT, "value" VARCHAR\)/,
      )
      assert.doesNotMatch(type, /\bstats VARCHAR/)
      const rows = await duck(
        `SELECT "add".path AS path, "add".stats_parsed.numRecords AS n, "add".stats_parsed.minValues.id AS lo ` +
          `FROM read_parquet('${file}') WHERE "add" IS NOT NULL ORDER BY lo`,
      )
      assert.deepEqual(
        rows.map((r) => [Number(r.n), Number(r.lo)]),
        [1, 2, 3, 4, 5, 6].map((i) => [1, i]),
      )

      const reopened = await reopenFromCheckpoint(dir, 6n)
      try {
        assertSameStats(before, await statsByPath(reopened))
        assert.equal((await reopened.scan({ where: 'id > 3' }).plan()).skipped, 3)
        assert.deepEqual(await ids(reopened), [1, 2, 3, 4, 5, 6])
        assert.deepEqual(await ids(reopened, 'id > 3'), [4, 5, 6])
      } finally {
        await reopened.close()
      }
    } finally {
      await table.close()
    }
  })
})

const SCHEMA =
  'id long not null, i int, f float, d double, dec decimal(38,18), s string, dt date, ts timestamp, ' +
  'tsn timestamp_ntz, flag boolean, bin binary, nested struct<a: int, b: struct<c: string, ts: timestamp>>, ' +
  'xs array<int>, part string, pday date'

function row(id: number, part: string, pday: string): Record<string, unknown> {
  const us = String(id % 1000).padStart(6, '0')
  return {
    id: BigInt(id),
    i: id % 2 === 0 ? -id : id,
    f: id / 10,
    d: id * 1.5,
    dec: `${id}12345678901234567.${String(id).padStart(18, '0')}`,
    s: `name-${id}-${'x'.repeat(id % 40)}`,
    dt: `2024-0${1 + (id % 9)}-1${id % 10}`,
    ts: `2024-03-0${1 + (id % 9)}T10:00:00.${us}Z`,
    tsn: `2023-12-0${1 + (id % 9)} 08:30:00.${us}`,
    flag: id % 3 === 0,
    bin: new TextEncoder().encode(`b${id}`),
    nested: { a: id, b: { c: id % 5 === 0 ? null : `c${id}`, ts: `2020-01-01T00:00:0${id % 10}.5Z` } },
    xs: [id, id + 1],
    part,
    pday,
  }
}

describe('checkpoints in the statistics format the table asks for', () => {
  it('writes stats_parsed and partitionValues_parsed without stats, and a DV file keeps its numRecords through two checkpoints', async () => {
    const dir = await tempDir()
    const table = await DeltaTable.create(dir, {
      schema: SCHEMA,
      partitionBy: ['part', 'pday'],
      properties: {
        'delta.enableDeletionVectors': 'true',
        'delta.checkpoint.writeStatsAsStruct': 'true',
        'delta.checkpoint.writeStatsAsJson': 'false',
        'delta.checkpointInterval': '1000',
      },
    })
    try {
      const all: number[] = []
      for (const [from, part, pday] of [
        [1, 'a', '2024-05-01'],
        [40, 'b', '2024-05-02'],
        [80, 'a', '2024-05-02'],
      ] as const) {
        const batch = Array.from({ length: 30 }, (_, k) => row(from + k, part, pday))
        for (const r of batch) all.push(Number(r.id))
        await table.append(batch)
      }
      await table.delete('id % 4 = 0')
      const live = all.filter((id) => id % 4 !== 0)
      const before = await statsByPath(table)
      const dvFiles = (await table.snapshot()).activeFiles().filter((f) => f.deletionVector !== undefined)
      assert.equal(dvFiles.length, 3, 'every file got a deletion vector')
      const cp1 = await table.checkpoint()

      // What other readers see: the typed structs, typed like the data columns, and no JSON stats.
      const file = checkpointPath(dir, cp1.version)
      const type = await addColumnType(file)
      assert.doesNotMatch(type, /\bstats VARCHAR/)
      assert.match(type, /partitionValues_parsed STRUCT\(part VARCHAR, pday DATE\)/)
      assert.match(
        type,
        /minValues STRUCT\(id BIGINT, i INTEGER, f FLOAT, d DOUBLE, "dec" DECIMAL\(38,18\), s VARCHAR, dt DATE, ts TIMESTAMP WITH TIME ZONE, tsn TIMESTAMP, nested STRUCT\(a INTEGER, b STRUCT\(c VARCHAR, ts TIMESTAMP WITH TIME ZONE\)\)\)/,
      )
      assert.match(
        type,
        /nullCount STRUCT\(id BIGINT, i BIGINT, .*flag BIGINT, bin BIGINT, nested STRUCT\(a BIGINT, b STRUCT\(c BIGINT, ts BIGINT\)\), xs BIGINT\)/,
      )
      const rows = await duck(
        `SELECT "add".path AS path, "add".stats_parsed.numRecords AS n, "add".partitionValues_parsed.part AS part, ` +
          `CAST("add".partitionValues_parsed.pday AS VARCHAR) AS pday, ` +
          `CAST("add".stats_parsed.maxValues.dec AS VARCHAR) AS dec_max, ` +
          `CAST("add".stats_parsed.minValues.ts AS VARCHAR) AS ts_min, ` +
          `"add".stats_parsed.nullCount.nested.b.c AS c_nulls, "add".stats_parsed.tightBounds AS tight ` +
          `FROM read_parquet('${file}') WHERE "add" IS NOT NULL`,
      )
      const snap = await table.snapshot()
      assert.equal(rows.length, snap.activeFiles().length)
      for (const r of rows) {
        const add = snap.activeFiles().find((f) => f.path === r.path)
        assert.ok(add, String(r.path))
        const stats = parseStats(add.stats)
        assert.ok(stats, add.path)
        assert.equal(BigInt(r.n as number), stats.numRecords)
        assert.equal(r.part, add.partitionValues.part)
        assert.equal(r.pday, add.partitionValues.pday)
        // The decimal bound keeps all 38 digits: the JSON text's digits, typed.
        assert.equal(r.dec_max, /"maxValues":\{.*?"dec":([-\d.]+)/.exec(add.stats ?? '')?.[1])
        // The same instant as the JSON bound (milliseconds, UTC).
        const tsMin = (stats.minValues as { ts: string }).ts
        assert.equal(Date.parse(String(r.ts_min).replace(' ', 'T').replace('+00', 'Z')), Date.parse(tsMin))
        assert.equal(
          Number(r.c_nulls),
          Number((stats.nullCount as { nested: { b: { c: number } } }).nested.b.c),
        )
        assert.equal(r.tight, stats.tightBounds)
      }

      // Reloaded from that checkpoint alone: the same statistics, field by field.
      const first = await reopenFromCheckpoint(dir, cp1.version)
      try {
        assertSameStats(before, await statsByPath(first))
        assert.deepEqual(await ids(first), live)
        const plan = await first.scan({ where: 'id > 100' }).plan()
        assert.equal(plan.files.length, 1, 'statistics prune the two files below 100')
        assert.deepEqual(
          await ids(first, 'id > 100'),
          live.filter((id) => id > 100),
        )
        // A second cycle: one more commit, a new checkpoint, reloaded again.
        await first.append([row(200, 'c', '2024-05-03')])
        const cp2 = await first.checkpoint()
        const second = await reopenFromCheckpoint(dir, cp2.version)
        try {
          const after2 = await statsByPath(second)
          assertSameStats(before, new Map([...after2].filter(([p]) => before.has(p))))
          const snap2 = await second.snapshot()
          for (const dv of dvFiles) {
            const now = snap2.activeFiles().find((f) => f.path === dv.path)
            assert.ok(now?.deletionVector, `${dv.path} still has its deletion vector`)
            assert.equal(
              parseStats(now.stats)?.numRecords,
              30n,
              `${dv.path}: numRecords counts the physical rows`,
            )
          }
          assert.deepEqual(await ids(second), [...live, 200])
        } finally {
          await second.close()
        }
      } finally {
        await first.close()
      }
    } finally {
      await table.close()
    }
  })

  for (const [label, properties, json, struct] of [
    ['the defaults', {}, true, false],
    ['both forms', { 'delta.checkpoint.writeStatsAsStruct': 'true' }, true, true],
  ] as const) {
    it(`writes ${label}: stats ${json ? 'as JSON' : 'not as JSON'}, ${struct ? 'with' : 'without'} stats_parsed`, async () => {
      const dir = await tempDir()
      const table = await DeltaTable.create(dir, {
        schema: 'id long, s string, part int',
        partitionBy: ['part'],
        properties,
      })
      try {
        await table.append(Array.from({ length: 10 }, (_, k) => ({ id: BigInt(k), s: `s${k}`, part: k % 2 })))
        const before = await statsByPath(table)
        const written = await table.checkpoint()
        const type = await addColumnType(checkpointPath(dir, written.version))
        assert.equal(/\bstats VARCHAR/.test(type), json)
        assert.equal(type.includes('stats_parsed STRUCT'), struct)
        assert.equal(type.includes('partitionValues_parsed STRUCT(part INTEGER)'), struct)
        const reopened = await reopenFromCheckpoint(dir, written.version)
        try {
          assertSameStats(before, await statsByPath(reopened))
        } finally {
          await reopened.close()
        }
      } finally {
        await table.close()
      }
    })
  }
})
