/**
 * The statistics of written files come from what DuckDB's COPY returned (checked against the
 * footer) instead of a query reading the rows back. On random tables and rows (every width of
 * integer, decimals up to precision 38, dates and timestamps from year 0001 to 9999, strings
 * long, multi-byte, empty and made of U+10FFFF, floats with NaN, -0 and infinities, nested
 * structs, lists, all-null columns, partitioned or not, column mapping with awkward physical
 * names), every file a write or a compaction produces must carry exactly the `add.stats` text the
 * aggregate query (`fileStatsQuery`, the former path) computes from the same file.
 *
 * Seed: `STATS_SEED=<n>` replays a run (fast-check prints the seed and path of a failure).
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api'
import fc from 'fast-check'
import type { WriteTarget, WrittenFile } from '../../src/engine/data-writer.js'
import { fileStatsQuery } from '../../src/engine-default/file-stats.js'
import { planWriteLayout } from '../../src/engine-default/write-layout.js'
import {
  formatDate,
  formatTimestamp,
  MAX_TIMESTAMP_MICROS,
  MIN_TIMESTAMP_MICROS,
} from '../../src/expressions/temporal.js'
import { daysFromCivil } from '../../src/protocol/civil-dates.js'
import type { StructType } from '../../src/protocol/schema.js'
import {
  type FieldSpec,
  schemaOf,
  targetOf,
  type WriterEnv,
  writerEnv,
} from '../unit/engine-default/writer-helpers.js'

const SEED = process.env.STATS_SEED === undefined ? 20261202 : Number(process.env.STATS_SEED)

// === Random values per type ===

const MIN_DAY = daysFromCivil(1, 1, 1)
const MAX_DAY = daysFromCivil(9999, 12, 31)

/** Code points a string may hold: ASCII, Latin-1, other BMP, astral, and the highest one. */
const codePoint = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0x20, max: 0x7e }) },
  { weight: 1, arbitrary: fc.constantFrom(0x7f, 0xff, 0x10ffff, 0) },
  { weight: 2, arbitrary: fc.integer({ min: 0x80, max: 0xd7ff }) },
  { weight: 1, arbitrary: fc.integer({ min: 0xe000, max: 0xffff }) },
  { weight: 1, arbitrary: fc.integer({ min: 0x10000, max: 0x10ffff }) },
)

const stringValue = fc
  .oneof(
    { weight: 5, arbitrary: fc.array(codePoint, { maxLength: 40 }) },
    // Past Delta's 32-code-point prefix and past DuckDB's 256-byte cut of footer bounds.
    { weight: 2, arbitrary: fc.array(codePoint, { minLength: 30, maxLength: 400 }) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom(0x61, 0xff, 0x10ffff, 0x7e), fc.integer({ min: 1, max: 300 }))
        .map(([cp, n]) => Array.from({ length: n }, () => cp)),
    },
  )
  .map((cps) => String.fromCodePoint(...cps))

function decimalValue(precision: number, scale: number): fc.Arbitrary<string> {
  const digits = fc.oneof(
    fc.array(fc.integer({ min: 0, max: 9 }), { minLength: precision, maxLength: precision }),
    fc.constant(Array.from({ length: precision }, () => 9)),
  )
  return fc.tuple(fc.boolean(), digits).map(([negative, ds]) => {
    const text = ds.join('')
    const whole = text.slice(0, precision - scale).replace(/^0+(?=\d)/, '') || '0'
    const fraction = text.slice(precision - scale)
    return `${negative ? '-' : ''}${whole}${fraction === '' ? '' : `.${fraction}`}`
  })
}

const timestampMicros = fc.oneof(
  fc.bigInt({ min: MIN_TIMESTAMP_MICROS, max: MAX_TIMESTAMP_MICROS }),
  fc.constantFrom(MIN_TIMESTAMP_MICROS, MAX_TIMESTAMP_MICROS, 0n, -1n, 999n, 1000n, 1001n),
  fc.bigInt({ min: -(10n ** 12n), max: 10n ** 12n }),
)

/** Finite values only, or with NaN, -0 and infinities often (a column is one or the other). */
function floating(single: boolean, special: boolean): fc.Arbitrary<number> {
  const finite = single
    ? fc.float({ noNaN: true, noDefaultInfinity: true })
    : fc.double({ noNaN: true, noDefaultInfinity: true })
  if (!special) return finite
  return fc.oneof(
    finite,
    fc.constantFrom(Number.NaN, -0, 0, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 5e-324),
  )
}

interface Column {
  readonly spec: FieldSpec
  readonly value: fc.Arbitrary<unknown>
}

function primitive(type: string, special = false): fc.Arbitrary<unknown> {
  switch (type) {
    case 'long':
      return fc.oneof(
        fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
        fc.constantFrom(-(2n ** 63n), 2n ** 63n - 1n),
      )
    case 'integer':
      return fc.integer()
    case 'short':
      return fc.integer({ min: -32768, max: 32767 })
    case 'byte':
      return fc.integer({ min: -128, max: 127 })
    case 'float':
      return floating(true, special).map((d) => Math.fround(d))
    case 'double':
      return floating(false, special)
    case 'string':
      return stringValue
    case 'boolean':
      return fc.boolean()
    case 'binary':
      return fc.uint8Array({ maxLength: 8 })
    case 'date':
      return fc.integer({ min: MIN_DAY, max: MAX_DAY }).map(formatDate)
    case 'timestamp':
      return timestampMicros.map((m) => `${formatTimestamp(m)}Z`)
    case 'timestamp_ntz':
      return timestampMicros.map(formatTimestamp)
    default: {
      const m = /^decimal\((\d+),(\d+)\)$/.exec(type)
      if (m === null) throw new Error(`no generator for ${type}`)
      return decimalValue(Number(m[1]), Number(m[2]))
    }
  }
}

const primitiveType = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      'long',
      'integer',
      'short',
      'byte',
      'float',
      'double',
      'string',
      'string',
      'boolean',
      'binary',
      'date',
      'timestamp',
      'timestamp_ntz',
    ),
  },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 1, max: 38 })
      .chain((p) => fc.integer({ min: 0, max: p }).map((s) => `decimal(${p},${s})`)),
  },
)

/** A value or null; an all-null column gets only nulls. */
function nullable(value: fc.Arbitrary<unknown>, allNull: boolean): fc.Arbitrary<unknown> {
  return allNull ? fc.constant(null) : fc.option(value, { freq: 6, nil: null })
}

/** A column: primitive, a struct of two primitives and an inner struct, or a list. */
const column: fc.Arbitrary<Omit<Column, 'spec'> & { type: unknown }> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .tuple(primitiveType, fc.boolean())
      .map(([t, special]) => ({ type: t, value: primitive(t, special) })),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(primitiveType, primitiveType, fc.boolean()).map(([a, b, inner]) => ({
      type: {
        type: 'struct',
        fields: [
          { name: 'a', type: a, nullable: true, metadata: {} },
          inner
            ? {
                name: 'inner',
                type: { type: 'struct', fields: [{ name: 'b', type: b, nullable: true, metadata: {} }] },
                nullable: true,
                metadata: {},
              }
            : { name: 'b', type: b, nullable: true, metadata: {} },
        ],
      },
      value: fc
        .tuple(fc.option(primitive(a), { nil: null }), fc.option(primitive(b), { nil: null }))
        .map(([x, y]) => (inner ? { a: x, inner: y === null ? null : { b: y } } : { a: x, b: y })),
    })),
  },
  {
    weight: 1,
    arbitrary: fc.constant({
      type: { type: 'array', elementType: 'integer', containsNull: true },
      value: fc.array(fc.option(fc.integer(), { nil: null }), { maxLength: 3 }),
    }),
  },
)

/** Physical names under column mapping, some awkward for DuckDB's keys and the footer's paths. */
const PHYSICAL = ['col-a', 'we"ird', 'dot.ted', 'com, ma', 'UPPER', 'col-b', 'col-c', 'col-d']

interface Case {
  readonly schema: StructType
  readonly target: WriteTarget
  readonly batches: readonly Record<string, unknown>[][]
}

const testCase: fc.Arbitrary<Case> = fc
  .record({
    columns: fc.array(fc.tuple(column, fc.boolean(), fc.nat(20)), { minLength: 1, maxLength: 6 }),
    partitioned: fc.boolean(),
    mapped: fc.boolean(),
    rows: fc.integer({ min: 1, max: 40 }),
    writes: fc.integer({ min: 1, max: 2 }),
  })
  .chain(({ columns, partitioned, mapped, rows, writes }) => {
    const fields: FieldSpec[] = columns.map(([c], i) => ({
      name: `c${i}`,
      type: c.type,
      metadata: mapped
        ? {
            'delta.columnMapping.id': i + 1,
            'delta.columnMapping.physicalName': PHYSICAL[i % PHYSICAL.length] as string,
          }
        : {},
    }))
    // A nested field keeps its logical name as its physical one; the writer needs one under
    // mapping, so every nested field gets a mapped name too.
    let nextId = fields.length + 1
    const withNested = mapped
      ? fields.map((f) => ({ ...f, type: mapNested(f.type, () => nextId++) }))
      : fields
    if (partitioned) {
      withNested.push({
        name: 'part',
        type: 'integer',
        metadata: mapped
          ? { 'delta.columnMapping.id': nextId++, 'delta.columnMapping.physicalName': 'col-part' }
          : {},
      })
    }
    const schema = schemaOf(...withNested)
    const row = fc.record(
      Object.fromEntries([
        ...columns.map(([c, allNull], i) => [`c${i}`, nullable(c.value, allNull)]),
        ...(partitioned ? [['part', fc.option(fc.integer({ min: 0, max: 2 }), { nil: null, freq: 4 })]] : []),
      ]),
    ) as fc.Arbitrary<Record<string, unknown>>
    return fc
      .array(fc.array(row, { minLength: 1, maxLength: rows }), { minLength: writes, maxLength: writes })
      .map(
        (batches): Case => ({
          schema,
          target: targetOf(schema, {
            partitionColumns: partitioned ? ['part'] : [],
            columnMappingMode: mapped ? 'name' : 'none',
            // A few of the columns only, sometimes, as delta.dataSkippingNumIndexedCols does.
            ...(columns.length > 3 && columns[0]?.[2] === 0 ? { statsColumns: 2 } : {}),
          }),
          batches,
        }),
      )
  })

function mapNested(type: unknown, id: () => number): unknown {
  if (typeof type !== 'object' || type === null || (type as { type: string }).type !== 'struct') return type
  const struct = type as { fields: { name: string; type: unknown; metadata: Record<string, unknown> }[] }
  return {
    ...struct,
    fields: struct.fields.map((f) => {
      const n = id()
      return {
        ...f,
        type: mapNested(f.type, id),
        metadata: { 'delta.columnMapping.id': n, 'delta.columnMapping.physicalName': `n-${n}"x` },
      }
    }),
  }
}

// === The former path: one aggregate query over the stored file ===

let aggregateDb: DuckDBInstance
let aggregateCon: DuckDBConnection
let scratch: string

async function aggregateStats(env: WriterEnv, target: WriteTarget, file: WrittenFile): Promise<string> {
  const path = join(scratch, `${file.key.replaceAll('/', '_')}.parquet`)
  await writeFile(path, await env.store.read(file.key))
  try {
    const query = fileStatsQuery(planWriteLayout(target).statsLeaves)
    const result = await aggregateCon.runAndReadAll(
      `SELECT ${query.selectList} FROM read_parquet('${path.replaceAll("'", "''")}')`,
    )
    const [values] = result.getRows()
    assert.ok(values !== undefined)
    return query.toStats(values).json
  } finally {
    await rm(path, { force: true })
  }
}

async function assertSameStats(
  env: WriterEnv,
  target: WriteTarget,
  files: readonly WrittenFile[],
  what: string,
): Promise<void> {
  for (const file of files) {
    const expected = await aggregateStats(env, target, file)
    assert.equal(file.stats, expected, `${what}: stats of ${file.key}`)
  }
}

describe('written file statistics (property)', () => {
  let env: WriterEnv

  before(async () => {
    env = await writerEnv()
    scratch = await mkdtemp(join(tmpdir(), 'delta-rlc-stats-prop-'))
    aggregateDb = await DuckDBInstance.create(':memory:', { threads: '1' })
    aggregateCon = await aggregateDb.connect()
    await aggregateCon.run(`SET TimeZone = 'UTC'`)
  })

  after(async () => {
    aggregateCon.closeSync()
    aggregateDb.closeSync()
    await env.close()
    await rm(scratch, { recursive: true, force: true })
  })

  it('a write and a compaction of random rows record the stats the aggregate computes from each file', async () => {
    let tables = 0
    await fc.assert(
      fc.asyncProperty(testCase, fc.infiniteStream(fc.boolean()), async (c, deleteBits) => {
        const target = { ...c.target, pathPrefix: `t${tables++}/` }
        const written: WrittenFile[] = []
        for (const rows of c.batches) {
          const files = await env.writer.writeRows({ target, rows })
          await assertSameStats(env, target, files, 'write')
          for (const f of files) written.push(f)
        }
        // Compaction of each partition's files, some rows deleted: the output is new data.
        const bins = new Map<string, WrittenFile[]>()
        for (const f of written) {
          const k = JSON.stringify(f.partitionValues)
          bins.set(k, [...(bins.get(k) ?? []), f])
        }
        const bits = deleteBits[Symbol.iterator]()
        const outputs = await env.writer.compact({
          target,
          bins: [...bins.values()].map((files) =>
            files.map((f) => ({
              key: f.key,
              partitionValues: f.partitionValues,
              deletedRows: Array.from({ length: f.numRecords }, (_, i) => i).filter(
                () => bits.next().value === true,
              ),
            })),
          ),
        })
        await assertSameStats(
          env,
          target,
          outputs.flatMap((o) => (o.file === null ? [] : [o.file])),
          'compaction',
        )
      }),
      { seed: SEED, numRuns: 40, endOnFailure: true },
    )
  })

  it('a file of several row groups with NaN and long strings in the first one records the aggregate stats', async () => {
    const schema = schemaOf(
      { name: 'id', type: 'long' },
      { name: 'd', type: 'double' },
      { name: 'f', type: 'float' },
      { name: 's', type: 'string' },
      { name: 't', type: 'string' },
      { name: 'u', type: 'string' },
    )
    const target = { ...targetOf(schema), pathPrefix: 'row-groups/' }
    const n = 150_000
    const rows = Array.from({ length: n }, (_, i) => ({
      id: BigInt(i),
      d: i === 10 ? Number.NaN : i,
      f: i === 20 ? Number.NaN : i / 2,
      // One value past DuckDB's 256-byte cut in the first row group, the largest in the file.
      s: i === 30 ? 'z'.repeat(300) : `s${i}`,
      t: i === 40 ? '\u{10FFFF}'.repeat(80) : `t${i % 1000}`,
      // DuckDB cuts this maximum to 255 bytes and rounds it up to 'c' in the footer.
      u: i === 50 ? `b${'\u00e9'.repeat(128)}` : `a${i}`,
    }))
    const files = await env.writer.writeRows({ target, rows })
    assert.equal(files.length, 1)
    const file = files[0] as WrittenFile
    const path = join(scratch, 'row-groups.parquet')
    await writeFile(path, await env.store.read(file.key))
    const groups = await aggregateCon.runAndReadAll(
      `SELECT count(DISTINCT row_group_id) FROM parquet_metadata('${path}')`,
    )
    assert.ok(Number(groups.getRows()[0]?.[0]) > 1, 'the file has several row groups')
    await assertSameStats(env, target, files, 'row groups')
    const stats = JSON.parse(files[0]?.stats ?? '{}')
    // Today's bounds, spelled out: NaN leaves no maximum, the long string's is cut with a tie-breaker.
    assert.equal(stats.numRecords, n)
    assert.equal(stats.maxValues.d, undefined)
    assert.equal(stats.minValues.d, 0)
    assert.equal(stats.maxValues.s, `${'z'.repeat(32)}\u007f`)
    assert.equal(stats.minValues.s, 's0')
    assert.equal(stats.maxValues.u, `b${'\u00e9'.repeat(31)}\u{10FFFF}`)
  })
})
