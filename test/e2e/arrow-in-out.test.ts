/**
 * Arrow in and out: a scan gives an Arrow Table (or streams RecordBatches) typed the way delta-rs
 * types Delta columns, with deletion vectors applied; `append` takes an Arrow Table or an
 * (async) iterable of RecordBatches through the same checks as row objects. Rows made
 * JSON-safe, `Date` values for `date` columns, and the bigint count.
 */
import assert from 'node:assert/strict'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import {
  DateDay,
  Field,
  Int32,
  makeData,
  makeVector,
  RecordBatch,
  Schema,
  Struct,
  Table,
  TimeMillisecond,
  Type,
  tableFromArrays,
  vectorFromArray,
} from 'apache-arrow'
import { InvalidArgumentError } from '../../src/errors/index.js'
import { toJSONRow } from '../../src/scan/json-row.js'
import { DeltaTable } from '../../src/table/delta-table.js'

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'delta-rlc-arrow-'))
  roots.push(d)
  return d
}

const SCHEMA =
  'id long not null, b byte, s short, i int, f float, d double, flag boolean, name string, bin binary, ' +
  'day date, ts timestamp, tsn timestamp_ntz, amount decimal(12,2), big decimal(38,5), ' +
  'st struct<a: int, t: timestamp>, arr array<long>, m map<string, int>'

function row(n: number): Record<string, unknown> {
  return {
    id: BigInt(n),
    b: n % 100,
    s: n * 3,
    i: n * 1000,
    f: 0.5 * n,
    d: n / 3,
    flag: n % 2 === 0,
    name: n % 5 === 0 ? null : `name-${n}-é`,
    bin: new Uint8Array([n & 255, 0, 255]),
    day: `2024-02-${String(1 + (n % 28)).padStart(2, '0')}`,
    ts: `2024-03-01T12:00:00.${String(n).padStart(6, '0')}Z`,
    tsn: `1999-12-31T23:59:59.${String(n).padStart(6, '0')}`,
    amount: `${n}.25`,
    big: n === 3 ? '-123456789012345678901234567890.12345' : `${n}.00001`,
    st: n % 7 === 0 ? null : { a: n, t: '2024-01-01T00:00:00.000001Z' },
    arr: n % 4 === 0 ? [] : [BigInt(n), null, 9_007_199_254_740_993n],
    m: new Map([
      ['k', n],
      ['z', null],
    ]),
  }
}

const sortById = (rows: Record<string, unknown>[]) =>
  [...rows].sort((a, b) => (BigInt(a.id as bigint) < BigInt(b.id as bigint) ? -1 : 1))

describe('Arrow out', () => {
  it('toArrow gives the live rows typed as delta-rs types them, exact to the microsecond', async () => {
    const dir = join(await tempDir(), 't')
    const table = await DeltaTable.create(dir, {
      schema: SCHEMA,
      properties: { 'delta.enableDeletionVectors': 'true' },
    })
    try {
      await table.append(Array.from({ length: 40 }, (_, n) => row(n)))
      await table.delete('id >= 30')
      const arrow = await table.scan().toArrow()
      assert.ok(arrow instanceof Table)
      assert.equal(arrow.numRows, 30)
      const types = Object.fromEntries(arrow.schema.fields.map((f) => [f.name, String(f.type)]))
      assert.deepEqual(types, {
        id: 'Int64',
        b: 'Int8',
        s: 'Int16',
        i: 'Int32',
        f: 'Float32',
        d: 'Float64',
        flag: 'Bool',
        name: 'Utf8',
        bin: 'Binary',
        day: 'Date32<DAY>',
        ts: 'Timestamp<MICROSECOND, UTC>',
        tsn: 'Timestamp<MICROSECOND>',
        amount: 'Decimal[12e+2]',
        big: 'Decimal[38e+5]',
        st: 'Struct<{a:Int32, t:Timestamp<MICROSECOND, UTC>}>',
        arr: 'List<Int64>',
        m: 'Map<{key:Utf8, value:Int32}>',
      })
      assert.equal(arrow.schema.fields.find((f) => f.name === 'id')?.nullable, false)
      assert.equal(arrow.schema.fields.find((f) => f.name === 'name')?.nullable, true)
      const arr = arrow.schema.fields.find((f) => f.name === 'arr')
      assert.ok(arr !== undefined)
      assert.equal((arr.type.children[0] as Field).name, 'element')
      const ids = [...(arrow.getChild('id') as ReturnType<Table['getChild']> & object)]
        .map(Number)
        .sort((a, b) => a - b)
      assert.deepEqual(
        ids,
        Array.from({ length: 30 }, (_, n) => n),
      )
      // Microseconds are in the buffer exactly (the getter's milliseconds are a float).
      const at = ids.indexOf(7)
      const position = [...(arrow.getChild('id') as Iterable<bigint>)].indexOf(7n)
      assert.ok(at >= 0 && position >= 0)
      const tsData = arrow.getChild('ts')?.data
      assert.ok(tsData !== undefined)
      let micros: bigint | undefined
      let seen = 0
      for (const chunk of tsData) {
        if (position < seen + chunk.length) micros = (chunk.values as BigInt64Array)[position - seen]
        seen += chunk.length
      }
      assert.equal(micros, BigInt(Date.parse('2024-03-01T12:00:00Z')) * 1000n + 7n)
      assert.equal(arrow.getChild('name')?.get(position), 'name-7-é')
      assert.equal(arrow.getChild('day')?.get(position), Date.parse('2024-02-08T00:00:00Z'))
      const empty = await table.scan({ where: 'id > 1000', columns: ['id', 'name'] }).toArrow()
      assert.equal(empty.numRows, 0)
      assert.deepEqual(
        empty.schema.fields.map((f) => f.name),
        ['id', 'name'],
      )
    } finally {
      await table.close()
    }
  })

  it('batches({ format: "arrow" }) streams RecordBatches of one schema; a round trip through append keeps every value', async () => {
    const root = await tempDir()
    const source = await DeltaTable.create(join(root, 'a'), { schema: SCHEMA })
    const target = await DeltaTable.create(join(root, 'b'), { schema: SCHEMA })
    try {
      await source.append(Array.from({ length: 5000 }, (_, n) => row(n)))
      const batches: RecordBatch[] = []
      for await (const batch of source.scan({ batchSize: 1000 }).batches({ format: 'arrow' })) {
        assert.ok(batch instanceof RecordBatch)
        batches.push(batch)
      }
      assert.ok(batches.length > 1, `${batches.length} batches`)
      assert.equal(
        batches.reduce((n, b) => n + b.numRows, 0),
        5000,
      )
      assert.ok(batches.every((b) => b.schema.fields.length === 17))
      // An async iterable of batches goes in as one commit of few files.
      async function* stream(): AsyncGenerator<RecordBatch> {
        yield* batches
      }
      const result = await target.append(stream())
      assert.equal(result.version, 1n)
      assert.equal((await readdir(join(root, 'b'))).filter((f) => f.endsWith('.parquet')).length, 1)
      assert.deepEqual(sortById(await target.scan().toArray()), sortById(await source.scan().toArray()))
      // And an Arrow Table, with columns in another order and a subset of them.
      const table = await source.scan({ columns: ['name', 'id'], where: 'id < 10' }).toArrow()
      await target.append(table)
      assert.equal(await target.scan().count(), 5010)
      const rowsOut = await source.scan({ batchSize: 100 }).batches()
      let n = 0
      for await (const b of rowsOut) n += b.length
      assert.equal(n, 5000)
    } finally {
      await source.close()
      await target.close()
    }
  })
})

describe('Arrow in', () => {
  it('tableFromArrays input is checked like rows: a value out of range or a null in a not-null column commits nothing', async () => {
    const dir = join(await tempDir(), 't')
    const table = await DeltaTable.create(dir, { schema: 'id long not null, v int, d date, ts timestamp' })
    try {
      const good = tableFromArrays({
        id: new BigInt64Array([1n, 2n]),
        v: new Int32Array([10, 20]),
      })
      await table.append(good)
      await assert.rejects(
        () => table.append(tableFromArrays({ id: new BigInt64Array([3n]), v: new Float64Array([1e12]) })),
        (err: unknown) => err instanceof InvalidArgumentError && /column 'v'/.test(err.message),
      )
      await assert.rejects(
        () => table.append(tableFromArrays({ v: new Int32Array([5]) })),
        (err: unknown) => err instanceof InvalidArgumentError && /id/.test(err.message),
      )
      await assert.rejects(
        () => table.append(tableFromArrays({ id: new BigInt64Array([4n]), extra: new Int32Array([1]) })),
        (err: unknown) => err instanceof InvalidArgumentError && /unknown column 'extra'/.test(err.message),
      )
      const time = makeVector(makeData({ type: new TimeMillisecond(), length: 1, data: new Int32Array([5]) }))
      await assert.rejects(
        () => table.append(new Table({ id: vectorFromArray([5n]), tod: time })),
        (err: unknown) => err instanceof InvalidArgumentError && /'tod' has type Time/.test(err.message),
      )
      await assert.rejects(
        // biome-ignore lint/suspicious/noExplicitAny: a wrong element type on purpose
        () => table.append([good.batches[0], { not: 'a batch' }] as any),
        (err: unknown) => err instanceof InvalidArgumentError,
      )
      // Date32 days, and JS Dates (a Timestamp without a zone to Arrow) as UTC instants.
      const dates = new Table({
        id: vectorFromArray([7n]),
        d: makeVector(makeData({ type: new DateDay(), length: 1, data: new Int32Array([19_782]) })),
        ts: vectorFromArray([new Date('2024-02-29T10:11:12.345Z')]),
      })
      assert.equal(dates.schema.fields[2]?.type.typeId, Type.Timestamp)
      await table.append(dates)
      const rows = await table.scan().toArray()
      assert.deepEqual(sortById(rows), [
        { id: 1n, v: 10, d: null, ts: null },
        { id: 2n, v: 20, d: null, ts: null },
        { id: 7n, v: null, d: '2024-02-29', ts: '2024-02-29T10:11:12.345000Z' },
      ])
      assert.equal((await table.history()).length, 3)
    } finally {
      await table.close()
    }
  })

  it('a struct column of a RecordBatch writes into a struct column', async () => {
    const dir = join(await tempDir(), 't')
    const table = await DeltaTable.create(dir, { schema: 'id long not null, st struct<a: int>' })
    try {
      const st = makeData({
        type: new Struct([new Field('a', new Int32(), true)]),
        length: 2,
        nullCount: 0,
        children: [makeData({ type: new Int32(), length: 2, data: new Int32Array([4, 5]) })],
      })
      const id = makeData({ type: vectorFromArray([1n]).type, length: 2, data: new BigInt64Array([1n, 2n]) })
      const schema = new Schema([new Field('id', id.type, false), new Field('st', st.type, true)])
      const batch = new RecordBatch(
        schema,
        makeData({ type: new Struct(schema.fields), length: 2, nullCount: 0, children: [id, st] }),
      )
      await table.append([batch])
      assert.deepEqual(sortById(await table.scan().toArray()), [
        { id: 1n, st: { a: 4 } },
        { id: 2n, st: { a: 5 } },
      ])
    } finally {
      await table.close()
    }
  })

  it('an iterable of many small RecordBatches is one write: files are cut by the target size across batches', async () => {
    const dir = join(await tempDir(), 't')
    const table = await DeltaTable.create(dir, { schema: 'id long not null, v double' })
    try {
      const n = 250_000
      const per = 5_000
      async function* batches() {
        for (let start = 0; start < n; start += per) {
          const ids = BigInt64Array.from({ length: per }, (_, i) => BigInt(start + i))
          const vs = Float64Array.from({ length: per }, (_, i) => (start + i) / 7)
          yield* tableFromArrays({ id: ids, v: vs }).batches
        }
      }
      const result = await table.append(batches())
      // Fifty batches, one file: the default target (128 MiB) holds them all.
      assert.equal(result.metrics.numFiles, 1)
      assert.equal(result.metrics.numOutputRows, n)
      const small = await table.append(batches(), { targetFileSize: 512 * 1024 })
      const smallFiles = small.metrics.numFiles ?? 0
      assert.ok(
        smallFiles > 1 && smallFiles < n / per,
        `a small target cuts files across batches, not per batch: ${smallFiles} files`,
      )
      let count = 0
      let sum = 0n
      for await (const batch of table.scan({ columns: ['id'] }).batches()) {
        count += batch.length
        for (const r of batch) sum += r.id as bigint
      }
      assert.equal(count, 2 * n)
      assert.equal(sum, BigInt(n) * BigInt(n - 1))
      // An empty table still commits, as an empty array of rows does.
      const empty = await table.append(tableFromArrays({ id: new BigInt64Array(0), v: new Float64Array(0) }))
      assert.equal(empty.metrics.numFiles, 0)
    } finally {
      await table.close()
    }
  })
})

describe('rows for JSON, dates and counts', () => {
  it('toJSONRow and jsonSafe make rows JSON.stringify can write, without losing digits', async () => {
    const dir = join(await tempDir(), 't')
    const table = await DeltaTable.create(dir, { schema: SCHEMA })
    try {
      await table.append([row(3)])
      const [raw] = await table.scan().toArray()
      assert.throws(() => JSON.stringify(raw), TypeError)
      const json = JSON.parse(JSON.stringify(toJSONRow(raw as Record<string, unknown>)))
      assert.deepEqual(json, {
        id: 3,
        b: 3,
        s: 9,
        i: 3000,
        f: 1.5,
        d: 1,
        flag: false,
        name: 'name-3-é',
        bin: Buffer.from([3, 0, 255]).toString('base64'),
        day: '2024-02-04',
        ts: '2024-03-01T12:00:00.000003Z',
        tsn: '1999-12-31T23:59:59.000003',
        amount: '3.25',
        big: '-123456789012345678901234567890.12345',
        st: { a: 3, t: '2024-01-01T00:00:00.000001Z' },
        arr: [3, null, '9007199254740993'],
        m: { k: 3, z: null },
      })
      assert.deepEqual(await table.scan({ jsonSafe: true }).toArray(), [json])
      assert.deepEqual(toJSONRow({ nan: Number.NaN, inf: -Infinity, at: new Date(0) }), {
        nan: 'NaN',
        inf: '-Infinity',
        at: '1970-01-01T00:00:00.000Z',
      })
    } finally {
      await table.close()
    }
  })

  it('a Date is taken for a date column (its UTC day), nested too; countBigInt counts as count does', async () => {
    const dir = join(await tempDir(), 't')
    const table = await DeltaTable.create(dir, {
      schema: 'id long not null, d date, ds array<date>, st struct<d: date>, ts timestamp',
    })
    try {
      const at = new Date('2024-02-29T23:30:00Z')
      await table.append([
        { id: 1n, d: at, ds: [at, null], st: { d: at }, ts: at },
        { id: 2n, d: '2024-03-01', ds: null, st: null, ts: null },
      ])
      assert.deepEqual(sortById(await table.scan().toArray()), [
        {
          id: 1n,
          d: '2024-02-29',
          ds: ['2024-02-29', null],
          st: { d: '2024-02-29' },
          ts: '2024-02-29T23:30:00.000000Z',
        },
        { id: 2n, d: '2024-03-01', ds: null, st: null, ts: null },
      ])
      await assert.rejects(
        () => table.append([{ id: 3n, d: new Date(Number.NaN) }]),
        (err: unknown) => err instanceof InvalidArgumentError && /column 'd'/.test(err.message),
      )
      assert.equal(await table.scan().countBigInt(), 2n)
      assert.equal(await table.scan().count(), 2)
    } finally {
      await table.close()
    }
  })
})
