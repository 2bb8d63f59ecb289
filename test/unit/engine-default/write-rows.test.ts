import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { WrittenFile } from '../../../src/engine/data-writer.js'
import { DuckDbDataPlane } from '../../../src/engine-default/duckdb-data-plane.js'
import { DuckDbRuntime } from '../../../src/engine-default/duckdb-runtime.js'
import { InvalidArgumentError } from '../../../src/errors/index.js'
import { decodeAddPath } from '../../../src/protocol/partition-values.js'
import type { StructType } from '../../../src/protocol/schema.js'
import {
  listKeys,
  parquetFields,
  parseStatsText,
  readFileRows,
  schemaOf,
  targetOf,
  type WriterEnv,
  writerEnv,
} from './writer-helpers.js'

// === Every Delta type ===

const ALL_TYPES = schemaOf(
  { name: 'id', type: 'long', nullable: false },
  { name: 'b', type: 'byte' },
  { name: 'sh', type: 'short' },
  { name: 'i', type: 'integer' },
  { name: 'f', type: 'float' },
  { name: 'd', type: 'double' },
  { name: 'dec', type: 'decimal(38,10)' },
  { name: 'dec2', type: 'decimal(5,2)' },
  { name: 's', type: 'string' },
  { name: 'bool', type: 'boolean' },
  { name: 'bin', type: 'binary' },
  { name: 'dt', type: 'date' },
  { name: 'ts', type: 'timestamp' },
  { name: 'ntz', type: 'timestamp_ntz' },
  {
    name: 'st',
    type: {
      type: 'struct',
      fields: [
        { name: 'x', type: 'integer', nullable: true, metadata: {} },
        {
          name: 'inner',
          type: { type: 'struct', fields: [{ name: 'y', type: 'string', nullable: true, metadata: {} }] },
          nullable: true,
          metadata: {},
        },
      ],
    },
  },
  { name: 'arr', type: { type: 'array', elementType: 'integer', containsNull: true } },
  {
    name: 'arrst',
    type: {
      type: 'array',
      elementType: { type: 'struct', fields: [{ name: 'k', type: 'long', nullable: true, metadata: {} }] },
      containsNull: true,
    },
  },
  { name: 'm', type: { type: 'map', keyType: 'string', valueType: 'long', valueContainsNull: true } },
  {
    name: 'marr',
    type: {
      type: 'map',
      keyType: 'integer',
      valueType: { type: 'array', elementType: 'string', containsNull: true },
      valueContainsNull: true,
    },
  },
)

/** Input rows, and the same rows as the read side returns them. */
const ALL_TYPES_ROWS: { input: Record<string, unknown>; expected: Record<string, unknown> }[] = [
  {
    input: {
      id: -(2n ** 63n),
      b: -128,
      sh: -32768,
      i: -(2 ** 31),
      f: -3.4028234663852886e38,
      d: -1.7976931348623157e308,
      dec: '-9999999999999999999999999999.9999999999',
      dec2: '-999.99',
      s: 'ascii',
      bool: false,
      bin: new Uint8Array([0, 255, 1]),
      dt: '0001-01-01',
      ts: '0001-01-01T00:00:00.000000Z',
      ntz: '1969-12-31T23:59:59.999999',
      st: { x: 1, inner: { y: 'deep' } },
      arr: [1, null, 3],
      arrst: [{ k: 5n }, null],
      m: new Map([
        ['a', 1n],
        ['b', null],
      ]),
      marr: new Map([[1, ['x', null]]]),
    },
    expected: {
      st: { x: 1, inner: { y: 'deep' } },
    },
  },
  {
    input: {
      id: 2n ** 63n - 1n,
      b: 127,
      sh: 32767,
      i: 2 ** 31 - 1,
      f: 1.5,
      d: 5e-324,
      dec: '9999999999999999999999999999.9999999999',
      dec2: '1.5',
      s: '\u00e9moji \u{1F600} "quoted" \n newline',
      bool: true,
      bin: new Uint8Array([]),
      dt: '9999-12-31',
      ts: '2024-02-29T23:59:59.123456+02:00',
      ntz: '9999-12-31T23:59:59.999000',
      st: { x: null, inner: null },
      arr: [],
      arrst: [],
      m: new Map(),
      marr: new Map([[2, []]]),
    },
    expected: {
      dec2: '1.50',
      ts: '2024-02-29T21:59:59.123456Z',
      st: { x: null, inner: null },
    },
  },
  {
    input: {
      id: 7,
      b: 0n,
      sh: 0,
      i: 0,
      f: -0.25,
      d: 0.1,
      dec: 12,
      dec2: 3n,
      s: '',
      dt: '2024-01-01',
      ts: new Date(Date.UTC(2020, 0, 1)),
    },
    expected: {
      id: 7n,
      b: 0,
      dec: '12.0000000000',
      dec2: '3.00',
      ts: '2020-01-01T00:00:00.000000Z',
      bool: null,
      bin: null,
      ntz: null,
      st: null,
      arr: null,
      arrst: null,
      m: null,
      marr: null,
    },
  },
  { input: { id: 8n }, expected: {} },
]

function expectedRow(r: (typeof ALL_TYPES_ROWS)[number]): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const f of ALL_TYPES.fields) {
    out[f.name] = f.name in r.expected ? r.expected[f.name] : (r.input[f.name] ?? null)
  }
  return out
}

describe('writeRows', () => {
  let env: WriterEnv
  before(async () => {
    env = await writerEnv()
  })
  after(async () => {
    await env.close()
  })

  it('round-trips every Delta type exactly', async () => {
    const files = await env.writer.writeRows({
      rows: ALL_TYPES_ROWS.map((r) => r.input),
      target: targetOf(ALL_TYPES),
    })
    assert.equal(files.length, 1)
    const file = files[0] as WrittenFile
    assert.equal(file.numRecords, ALL_TYPES_ROWS.length)
    assert.equal((await env.store.head(file.key)).size, file.size)
    const { rows } = await readFileRows(env.store, file.key, ALL_TYPES)
    const byId = (a: Record<string, unknown>, b: Record<string, unknown>) =>
      (a.id as bigint) < (b.id as bigint) ? -1 : 1
    assert.deepStrictEqual(rows.sort(byId), ALL_TYPES_ROWS.map(expectedRow).sort(byId))
  })

  it('computes stats equal to an independent computation over the input rows', async () => {
    const files = await env.writer.writeRows({
      rows: ALL_TYPES_ROWS.map((r) => r.input),
      target: targetOf(ALL_TYPES, { statsColumns: -1 }),
    })
    const expectedRows = ALL_TYPES_ROWS.map(expectedRow)
    assert.deepStrictEqual(
      parseStatsText((files[0] as WrittenFile).stats),
      independentStats(ALL_TYPES, expectedRows),
    )
  })

  it('writes through a store without local paths (memory store)', async () => {
    const mem = await writerEnv('memory')
    try {
      const files = await mem.writer.writeRows({
        rows: [{ id: 1n, s: 'a' }, { id: 2n }],
        target: targetOf(schemaOf({ name: 'id', type: 'long' }, { name: 's', type: 'string' })),
      })
      const { rows } = await readFileRows(
        mem.store,
        (files[0] as WrittenFile).key,
        schemaOf({ name: 'id', type: 'long' }, { name: 's', type: 'string' }),
      )
      assert.deepStrictEqual(rows, [
        { id: 1n, s: 'a' },
        { id: 2n, s: null },
      ])
      assert.deepStrictEqual(await listKeys(mem.store), [(files[0] as WrittenFile).key])
    } finally {
      await mem.close()
    }
  })

  it('returns no file for no rows', async () => {
    assert.deepStrictEqual(await env.writer.writeRows({ rows: [], target: targetOf(ALL_TYPES) }), [])
  })
})

// === Statistics details ===

describe('writeRows statistics', () => {
  let env: WriterEnv
  before(async () => {
    env = await writerEnv()
  })
  after(async () => {
    await env.close()
  })

  it('cuts long strings to 32 characters and keeps the max an upper bound', async () => {
    const long = `${'a'.repeat(31)}bc${'z'.repeat(10)}`
    const schema = schemaOf({ name: 's', type: 'string' })
    const [file] = await env.writer.writeRows({
      rows: [{ s: long }, { s: `${'\u00e9'.repeat(32)}\u00e9\u00e9\u00e9` }, { s: 'a' }],
      target: targetOf(schema),
    })
    assert.deepStrictEqual(parseStatsText((file as WrittenFile).stats), {
      numRecords: '#3',
      minValues: { s: 'a' },
      maxValues: { s: `${'\u00e9'.repeat(32)}\u{10FFFF}` },
      nullCount: { s: '#0' },
      tightBounds: true,
    })
    const [file2] = await env.writer.writeRows({ rows: [{ s: long }], target: targetOf(schema) })
    assert.deepStrictEqual(parseStatsText((file2 as WrittenFile).stats), {
      numRecords: '#1',
      minValues: { s: `${'a'.repeat(31)}b` },
      maxValues: { s: `${'a'.repeat(31)}b\u007F` },
      nullCount: { s: '#0' },
      tightBounds: true,
    })
  })

  it('rounds timestamp bounds outward to milliseconds', async () => {
    const schema = schemaOf({ name: 'ts', type: 'timestamp' }, { name: 'ntz', type: 'timestamp_ntz' })
    const [file] = await env.writer.writeRows({
      rows: [
        { ts: '2024-01-01T00:00:00.000999Z', ntz: '2024-01-01T00:00:00.000001' },
        { ts: '2024-01-01T00:00:00.001001Z', ntz: '2024-01-01T00:00:00.002000' },
      ],
      target: targetOf(schema),
    })
    assert.deepStrictEqual(parseStatsText((file as WrittenFile).stats), {
      numRecords: '#2',
      minValues: { ts: '2024-01-01T00:00:00.000Z', ntz: '2024-01-01T00:00:00.000' },
      maxValues: { ts: '2024-01-01T00:00:00.002Z', ntz: '2024-01-01T00:00:00.002' },
      nullCount: { ts: '#0', ntz: '#0' },
      tightBounds: true,
    })
  })

  it('leaves out bounds JSON cannot hold (NaN, infinities)', async () => {
    const schema = schemaOf({ name: 'd', type: 'double' }, { name: 'f', type: 'float' })
    const [file] = await env.writer.writeRows({
      rows: [
        { d: 1, f: Number.NEGATIVE_INFINITY },
        { d: Number.NaN, f: 2 },
      ],
      target: targetOf(schema),
    })
    assert.deepStrictEqual(parseStatsText((file as WrittenFile).stats), {
      numRecords: '#2',
      minValues: { d: '#1' },
      maxValues: { f: '#2' },
      nullCount: { d: '#0', f: '#0' },
      tightBounds: true,
    })
  })

  const nested = schemaOf(
    { name: 'a', type: 'long' },
    {
      name: 's',
      type: {
        type: 'struct',
        fields: [
          { name: 'b', type: 'string', nullable: true, metadata: {} },
          { name: 'c', type: 'boolean', nullable: true, metadata: {} },
        ],
      },
    },
    { name: 'm', type: { type: 'map', keyType: 'string', valueType: 'string', valueContainsNull: true } },
    { name: 'e', type: 'integer' },
    { name: 'p', type: 'integer' },
  )
  const nestedRows = [
    { a: 1n, s: { b: 'x', c: true }, m: { k: 'v' }, e: 5, p: 1 },
    { a: 2n, s: null, m: null, e: null, p: 1 },
  ]
  const statsCases: [string, Partial<Parameters<typeof targetOf>[1]>, unknown][] = [
    [
      'statsColumns counts nested leaves one by one and skips partition columns',
      { statsColumns: 2, partitionColumns: ['p'] },
      {
        numRecords: '#2',
        minValues: { a: '#1', s: { b: 'x' } },
        maxValues: { a: '#2', s: { b: 'x' } },
        nullCount: { a: '#0', s: { b: '#1' } },
        tightBounds: true,
      },
    ],
    [
      'maps count as one leaf with a null count only',
      { statsColumns: 4, partitionColumns: ['p'] },
      {
        numRecords: '#2',
        minValues: { a: '#1', s: { b: 'x' } },
        maxValues: { a: '#2', s: { b: 'x' } },
        nullCount: { a: '#0', s: { b: '#1', c: '#1' }, m: '#1' },
        tightBounds: true,
      },
    ],
    [
      'statsColumnPaths selects named columns and whole structs',
      { statsColumnPaths: [['S'], ['e']], partitionColumns: ['p'] },
      {
        numRecords: '#2',
        minValues: { s: { b: 'x' }, e: '#5' },
        maxValues: { s: { b: 'x' }, e: '#5' },
        nullCount: { s: { b: '#1', c: '#1' }, e: '#1' },
        tightBounds: true,
      },
    ],
    [
      'zero stats columns leave only the row count',
      { statsColumns: 0, partitionColumns: ['p'] },
      { numRecords: '#2', tightBounds: true },
    ],
  ]
  for (const [name, extra, expected] of statsCases) {
    it(name, async () => {
      const [file] = await env.writer.writeRows({ rows: nestedRows, target: targetOf(nested, extra) })
      assert.deepStrictEqual(parseStatsText((file as WrittenFile).stats), expected)
    })
  }
})

// === Partitions ===

describe('writeRows partitioning', () => {
  let env: WriterEnv
  before(async () => {
    env = await writerEnv()
  })
  after(async () => {
    await env.close()
  })

  const schema = schemaOf(
    { name: 'id', type: 'long' },
    { name: 'p', type: 'string' },
    { name: 'n', type: 'integer' },
    { name: 'ts', type: 'timestamp' },
  )
  const cases: [string, unknown, string | null, string][] = [
    ['a plain value', 'plain', 'plain', 'p=plain'],
    ['a slash', 'a/b', 'a/b', 'p=a%2Fb'],
    ['an equals sign', 'x=y', 'x=y', 'p=x%3Dy'],
    ['a percent sign', '50%', '50%', 'p=50%25'],
    ['spaces', 'with space', 'with space', 'p=with space'],
    ['a colon and non-ASCII text', '\u00e9:1', '\u00e9:1', 'p=\u00e9%3A1'],
    ['null', null, null, 'p=__HIVE_DEFAULT_PARTITION__'],
    ['an empty string (null in the log)', '', null, 'p=__HIVE_DEFAULT_PARTITION__'],
  ]

  it('puts each partition in its Hive directory with log-serialized values', async () => {
    const rows = cases.flatMap(([, p], k) => [
      { id: BigInt(2 * k), p, n: k % 2, ts: '2024-01-02T03:04:05.123456Z' },
      { id: BigInt(2 * k + 1), p, n: k % 2, ts: '2024-01-02T03:04:05.123456Z' },
    ])
    const files = await env.writer.writeRows({
      rows,
      target: targetOf(schema, { partitionColumns: ['p', 'n', 'ts'] }),
    })
    assert.equal(files.length, cases.length)
    for (const [k, [name, , value, dir]] of cases.entries()) {
      const hits = files.filter((f) => f.partitionValues.p === value && f.partitionValues.n === String(k % 2))
      assert.equal(hits.length, 1, name)
      const file = hits[0] as WrittenFile
      assert.deepStrictEqual(file.partitionValues, {
        p: value,
        n: String(k % 2),
        ts: '2024-01-02T03:04:05.123456Z',
      })
      const prefix = `${dir}/n=${k % 2}/ts=2024-01-02T03%3A04%3A05.123456Z/`
      assert.ok(file.key.startsWith(prefix), `${name}: ${file.key}`)
      assert.match(file.key.slice(prefix.length), /^part-\d{5}-[0-9a-f-]{36}\.c000\.snappy\.parquet$/)
      assert.deepStrictEqual(decodeAddPath(file.path), { kind: 'relative', key: file.key })
      const { rows: back, columns } = await readFileRows(env.store, file.key, schema, {
        partitionColumns: ['p', 'n', 'ts'],
      })
      assert.deepStrictEqual(columns, ['id'], name)
      assert.deepStrictEqual(
        back.map((r) => r.id),
        [BigInt(2 * k), BigInt(2 * k + 1)],
        name,
      )
    }
  })

  it('files read back through the DuckDB data plane with their partition values', async () => {
    const full = schemaOf(
      { name: 'id', type: 'long' },
      { name: 'v', type: 'decimal(10,3)' },
      { name: 'ts', type: 'timestamp' },
      { name: 'dt', type: 'date' },
      { name: 'flag', type: 'boolean' },
      { name: 'amount', type: 'decimal(10,2)' },
    )
    const rows = [
      { id: 1n, v: '1.5', ts: '2024-01-02T03:04:05.123456Z', dt: '2024-01-02', flag: true, amount: '-1.5' },
      { id: 2n, v: null, ts: null, dt: null, flag: null, amount: null },
      { id: 3n, v: '2', ts: '1969-07-20T20:17:40.000001Z', dt: '1969-07-20', flag: false, amount: '0' },
    ]
    const target = targetOf(full, { partitionColumns: ['ts', 'dt', 'flag', 'amount'] })
    const files = await env.writer.writeRows({ rows, target })
    assert.equal(files.length, 3)
    const duck = new DuckDbRuntime({ threads: 1 })
    try {
      const plane = new DuckDbDataPlane(env.store, duck, `${env.dir}/scan`)
      const out: Record<string, unknown>[] = []
      for await (const batch of plane.scan({
        files: files.map((f) => ({ key: f.key, partitionValues: f.partitionValues })),
        columns: full.fields.map((f) => ({
          name: f.name,
          type: f.type,
          physicalName: f.name,
          isPartition: target.partitionColumns.includes(f.name),
        })),
      })) {
        out.push(...batch)
      }
      out.sort((a, b) => Number(a.id) - Number(b.id))
      assert.deepStrictEqual(out, [
        {
          id: 1n,
          v: '1.500',
          ts: '2024-01-02T03:04:05.123456Z',
          dt: '2024-01-02',
          flag: true,
          amount: '-1.50',
        },
        { id: 2n, v: null, ts: null, dt: null, flag: null, amount: null },
        {
          id: 3n,
          v: '2.000',
          ts: '1969-07-20T20:17:40.000001Z',
          dt: '1969-07-20',
          flag: false,
          amount: '0.00',
        },
      ])
    } finally {
      await duck.close()
    }
  })
})

// === Column mapping ===

describe('writeRows under column mapping', () => {
  let env: WriterEnv
  before(async () => {
    env = await writerEnv()
  })
  after(async () => {
    await env.close()
  })

  const mapped = schemaOf(
    {
      name: 'id',
      type: 'long',
      metadata: { 'delta.columnMapping.id': 1, 'delta.columnMapping.physicalName': 'col-id' },
    },
    {
      name: 's',
      type: {
        type: 'struct',
        fields: [
          {
            name: 'a',
            type: 'string',
            nullable: true,
            metadata: { 'delta.columnMapping.id': 3, 'delta.columnMapping.physicalName': 'col-a' },
          },
        ],
      },
      metadata: { 'delta.columnMapping.id': 2, 'delta.columnMapping.physicalName': 'col-s' },
    },
    {
      name: 'part',
      type: 'integer',
      metadata: { 'delta.columnMapping.id': 4, 'delta.columnMapping.physicalName': 'col-p' },
    },
  )

  for (const mode of ['name', 'id'] as const) {
    it(`mode ${mode}: physical names and field ids in files, stats and partition values`, async () => {
      const files = await env.writer.writeRows({
        rows: [
          { id: 1n, s: { a: 'x' }, part: 7 },
          { id: 2n, s: { a: 'y' }, part: 7 },
        ],
        target: targetOf(mapped, { columnMappingMode: mode, partitionColumns: ['part'] }),
      })
      assert.equal(files.length, 1)
      const file = files[0] as WrittenFile
      assert.ok(file.key.startsWith('col-p=7/'))
      assert.deepStrictEqual(file.partitionValues, { 'col-p': '7' })
      assert.deepStrictEqual(await parquetFields(env.store, file.key), [
        { name: 'col-id', fieldId: 1 },
        { name: 'col-s', fieldId: 2 },
        { name: 'col-a', fieldId: 3 },
      ])
      assert.deepStrictEqual(parseStatsText(file.stats), {
        numRecords: '#2',
        minValues: { 'col-id': '#1', 'col-s': { 'col-a': 'x' } },
        maxValues: { 'col-id': '#2', 'col-s': { 'col-a': 'y' } },
        nullCount: { 'col-id': '#0', 'col-s': { 'col-a': '#0' } },
        tightBounds: true,
      })
      const { rows } = await readFileRows(env.store, file.key, mapped, { partitionColumns: ['part'], mode })
      assert.deepStrictEqual(rows, [
        { id: 1n, s: { a: 'x' } },
        { id: 2n, s: { a: 'y' } },
      ])
    })
  }

  it('refuses a mapped schema without physical names', async () => {
    await assert.rejects(
      env.writer.writeRows({
        rows: [{ id: 1n }],
        target: targetOf(schemaOf({ name: 'id', type: 'long' }), { columnMappingMode: 'name' }),
      }),
      (err: unknown) => err instanceof InvalidArgumentError && /physicalName/.test(err.message),
    )
  })
})

// === Validation ===

describe('writeRows validation', () => {
  let env: WriterEnv
  before(async () => {
    env = await writerEnv()
  })
  after(async () => {
    await env.close()
  })

  const schema = schemaOf(
    { name: 'id', type: 'long', nullable: false },
    { name: 'i', type: 'integer' },
    { name: 's', type: 'string' },
    { name: 'flag', type: 'boolean' },
    { name: 'dec', type: 'decimal(5,2)' },
    { name: 'dt', type: 'date' },
    { name: 'ntz', type: 'timestamp_ntz' },
    { name: 'bin', type: 'binary' },
    {
      name: 'st',
      type: { type: 'struct', fields: [{ name: 'req', type: 'integer', nullable: false, metadata: {} }] },
    },
    { name: 'arr', type: { type: 'array', elementType: 'integer', containsNull: false } },
    { name: 'm', type: { type: 'map', keyType: 'string', valueType: 'long', valueContainsNull: false } },
    { name: 'p', type: 'string', nullable: false },
  )
  const cases: [string, Record<string, unknown>, string][] = [
    ['an unknown column', { Id: 1n }, "unknown column 'Id'"],
    ['a string for a long', { id: '1' }, "column 'id'"],
    ['a fraction for an integer', { i: 1.5 }, "column 'i'"],
    ['an integer out of range', { i: 2 ** 31 }, "column 'i'"],
    ['a long out of range', { id: 2n ** 63n }, "column 'id'"],
    ['an unsafe number for a long', { id: 2 ** 60 }, "column 'id'"],
    ['a number for a string', { s: 5 }, "column 's'"],
    ['a string for a boolean', { flag: 'true' }, "column 'flag'"],
    ['a decimal with too many fraction digits', { dec: '1.234' }, "column 'dec'"],
    ['a decimal with too many integer digits', { dec: '1234.5' }, "column 'dec'"],
    ['an invalid date', { dt: '2024-02-30' }, "column 'dt'"],
    ['a timestamp_ntz with a zone', { ntz: '2024-01-01T00:00:00Z' }, "column 'ntz'"],
    ['a number for binary', { bin: 5 }, "column 'bin'"],
    ['an array for a struct', { st: [1] }, "column 'st'"],
    ['an unknown struct field', { st: { req: 1, other: 2 } }, "unknown column 'st.other'"],
    ['a null in a non-nullable struct field', { st: { req: null } }, "column 'st.req'"],
    ['a null array element where none is allowed', { arr: [1, null] }, "column 'arr[1]'"],
    ['a null map value where none is allowed', { m: new Map([['k', null]]) }, 'column \'m["k"]\''],
    ['a null in a non-nullable column', { id: null }, "column 'id'"],
    ['a null in a non-nullable partition column', { p: null }, "column 'p'"],
  ]
  for (const [name, patch, fragment] of cases) {
    it(`rejects ${name}, naming the row, and writes nothing`, async () => {
      const rows = [
        { id: 1n, p: 'a' },
        { id: 2n, p: 'b', ...patch },
      ]
      await assert.rejects(
        env.writer.writeRows({ rows, target: targetOf(schema, { partitionColumns: ['p'] }) }),
        (err: unknown) => {
          assert.ok(err instanceof InvalidArgumentError, String(err))
          assert.match(err.message, /^Row 1\b/)
          assert.ok(err.message.includes(fragment), err.message)
          return true
        },
      )
      assert.deepStrictEqual(await listKeys(env.store), [])
    })
  }

  it('rejects a row that is not an object', async () => {
    await assert.rejects(
      env.writer.writeRows({
        rows: [{ id: 1n, p: 'a' }, [1] as never],
        target: targetOf(schema, { partitionColumns: ['p'] }),
      }),
      /Row 1 is not a plain object/,
    )
  })
})

// === Size ===

describe('writeRows size', () => {
  it('writes a million rows, split near the target file size', async () => {
    const env = await writerEnv()
    try {
      const n = 1_000_000
      const rows = Array.from({ length: n }, (_, i) => ({ id: BigInt(i), name: `name-${i}`, v: i / 2 }))
      const schema = schemaOf(
        { name: 'id', type: 'long' },
        { name: 'name', type: 'string' },
        { name: 'v', type: 'double' },
      )
      const files = await env.writer.writeRows({
        rows,
        target: targetOf(schema, { targetFileSize: 2 * 1024 * 1024 }),
      })
      assert.ok(files.length > 1, `expected several files, got ${files.length}`)
      assert.equal(
        files.reduce((s, f) => s + f.numRecords, 0),
        n,
      )
      const stats = files.map(
        (f) => parseStatsText(f.stats) as { minValues: { id: string }; maxValues: { id: string } },
      )
      assert.equal(Math.min(...stats.map((s) => Number(s.minValues.id.slice(1)))), 0)
      assert.equal(Math.max(...stats.map((s) => Number(s.maxValues.id.slice(1)))), n - 1)
      assert.deepStrictEqual((await listKeys(env.store)).length, files.length)
    } finally {
      await env.close()
    }
  })
})

// === Independent statistics ===

/** Min, max and null count per leaf, computed from rows in the read-side representation. */
function independentStats(schema: StructType, rows: Record<string, unknown>[]): unknown {
  const minValues: Record<string, unknown> = {}
  const maxValues: Record<string, unknown> = {}
  const nullCount: Record<string, unknown> = {}
  const set = (tree: Record<string, unknown>, path: string[], v: unknown) => {
    let node = tree
    for (const p of path.slice(0, -1)) {
      if (node[p] === undefined) node[p] = {}
      node = node[p] as Record<string, unknown>
    }
    node[path[path.length - 1] as string] = v
  }
  const walk = (
    fields: StructType['fields'],
    path: string[],
    get: (r: Record<string, unknown>) => unknown,
  ) => {
    for (const f of fields) {
      const p = [...path, f.name]
      const getF = (r: Record<string, unknown>) => {
        const parent = get(r) as Record<string, unknown> | null
        return parent === null || parent === undefined ? null : (parent[f.name] ?? null)
      }
      if (typeof f.type === 'object' && f.type.type === 'struct') {
        walk(f.type.fields, p, getF)
        continue
      }
      const values = rows.map(getF)
      set(nullCount, p, `#${values.filter((v) => v === null).length}`)
      const present = values.filter((v) => v !== null)
      if (typeof f.type !== 'string' || f.type === 'boolean' || f.type === 'binary' || present.length === 0)
        continue
      const type = f.type
      const key = (v: unknown): number | bigint | string => {
        if (type === 'long') return v as bigint
        if (type.startsWith('decimal')) {
          const [w, frac = ''] = (v as string).split('.')
          return BigInt(`${w}${frac}`)
        }
        if (type === 'timestamp' || type === 'timestamp_ntz') {
          const s = v as string
          return BigInt(Date.parse(`${s.slice(0, 23)}Z`)) * 1000n + BigInt(s.slice(23, 26))
        }
        if (type === 'string')
          return Buffer.from(v as string)
            .toString('hex')
            .padEnd(400, '0')
        return v as number | string
      }
      const sorted = [...present].sort((a, b) => {
        const x = key(a)
        const y = key(b)
        return x < y ? -1 : x > y ? 1 : 0
      })
      const show = (v: unknown, isMax: boolean): unknown => {
        if (type === 'timestamp' || type === 'timestamp_ntz') {
          const micros = key(v) as bigint
          let ms = micros / 1000n - (micros % 1000n < 0n ? 1n : 0n)
          if (isMax && micros % 1000n !== 0n) ms += 1n
          const iso = new Date(Number(ms)).toISOString()
          return type === 'timestamp' ? iso : iso.slice(0, -1)
        }
        if (type === 'string' || type === 'date') return v
        return `#${String(v)}`
      }
      set(minValues, p, show(sorted[0], false))
      set(maxValues, p, show(sorted[sorted.length - 1], true))
    }
  }
  walk(schema.fields, [], (r) => r)
  return { numRecords: `#${rows.length}`, minValues, maxValues, nullCount, tightBounds: true }
}
