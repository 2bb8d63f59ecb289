import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { columnsFromSchema, columnsFromTypes } from '../../../src/expressions/columns.js'
import {
  type FileStats,
  mayMatchFile,
  splitPartitionPredicate,
} from '../../../src/expressions/evaluate-stats.js'
import { parsePredicate } from '../../../src/expressions/parse-predicate.js'
import { toSql } from '../../../src/expressions/to-sql.js'

const columns = columnsFromTypes(
  {
    id: 'long',
    name: 'string',
    score: 'double',
    f: 'float',
    price: 'decimal(10,2)',
    day: 'date',
    ts: 'timestamp',
    flag: 'boolean',
    'st.a': 'integer',
    part: 'integer',
    region: 'string',
    pts: 'timestamp',
  },
  { partitionColumns: ['part', 'region', 'pts'] },
)

const stats: FileStats = {
  numRecords: 10n,
  minValues: {
    id: 10,
    name: 'bob',
    score: -1.5,
    f: 0.5,
    price: '1.50',
    day: '2024-01-01',
    ts: '2024-01-01T00:00:00.000Z',
    st: { a: 1 },
  },
  maxValues: {
    id: 20,
    name: 'tom',
    score: 2.5,
    f: 3.4,
    price: '99.99',
    day: '2024-01-31',
    ts: '2024-01-01T10:00:00.123Z',
    st: { a: 1 },
  },
  nullCount: { id: 0, name: 2, score: 0, f: 1, price: 0, day: 0, ts: 0, flag: 3, st: { a: 0 } },
}

function mayMatch(text: string, s: FileStats | undefined = stats, pv: Record<string, unknown> = {}): boolean {
  return mayMatchFile(parsePredicate(text), s, pv, columns)
}

describe('mayMatchFile over min/max/nullCount', () => {
  const cases: [string, boolean][] = [
    ['id = 15', true],
    ['id = 9', false],
    ['id = 21', false],
    ['id > 20', false],
    ['id >= 20', true],
    ['id < 10', false],
    ['id <= 10', true],
    ['id <> 15', true],
    ['20 < id', false],
    ['NOT id > 5', false],
    ['NOT id > 15', true],
    ['NOT id <> 15', true],
    ['id IN (1, 2, 30)', false],
    ['id IN (1, 15)', true],
    ['id IN (1, NULL)', false],
    ['id NOT IN (10)', true],
    ['id BETWEEN 21 AND 30', false],
    ['id BETWEEN 15 AND 30', true],
    ['id NOT BETWEEN 0 AND 100', false],
    ['id NOT BETWEEN 15 AND 100', true],
    ['id IS NULL', false],
    ['id IS NOT NULL', true],
    ['name IS NULL', true],
    ['name IS NOT NULL', true],
    ['id <=> NULL', false],
    ['name <=> NULL', true],
    ['id = NULL', false],
    ['id = 9 OR id = 25', false],
    ['id = 9 OR id = 15', true],
    ["id = 9 AND name = 'x'", false],
    ["id = 15 AND name = 'zed'", false],
    ["id = 15 AND name = 'dan'", true],
    ['(id = 15) IS TRUE', true],
    ['(id = 9) IS TRUE', false],
    ['(id = 9) IS NOT TRUE', true],
    ['(id > 5) IS FALSE', false],
    ['id = 15.5', true],
    ['id > 20.5', false],
    ['id = 1e3', false],
    ["id < '10'", false],
    ['score > 2.5', false],
    ['score > 2.4', true],
    ['score = -0.0D', true],
    ['f > 3.4', false],
    ['f > 3.4D', true],
    ['f < 0.5', false],
    ['price > 99.99', false],
    ['price >= 99.99', true],
    ['price < 1.5', false],
    ["day = DATE '2023-12-31'", false],
    ["day > '2024-01-31'", false],
    ["day >= TIMESTAMP '2024-01-31 00:00:00'", true],
    ["day >= TIMESTAMP '2024-01-31 00:00:01'", false],
    ["day > TIMESTAMP '2024-02-01 00:00:00'", false],
    ["ts > TIMESTAMP '2024-01-01 10:00:00.123500'", true],
    ["ts > TIMESTAMP '2024-01-01 10:00:00.124'", false],
    ["ts < TIMESTAMP '2024-01-01 00:00:00'", false],
    ["ts = TIMESTAMP '2024-01-01 02:00:00+02:00'", true],
    ["ts < DATE '2024-01-01'", false],
    ["name LIKE 'c%'", true],
    ["name LIKE 'a%'", false],
    ["name LIKE 'u%'", false],
    ["name LIKE 'to%'", true],
    ["name LIKE 'tz%'", false],
    ["name LIKE 'a_c%'", false],
    ["name LIKE 'b_b'", true],
    ["name LIKE '%b'", true],
    ["name LIKE 'bob'", true],
    ["name LIKE 'al'", false],
    ["name NOT LIKE 'a%'", true],
    ["name LIKE 'a!%' ESCAPE '!'", false],
    ['flag', true],
    ['NOT flag', true],
    ['flag IS NULL', true],
    ['st.a = 1', true],
    ['st.a = 2', false],
    ['st.a <> 1', false],
    ['NOT st.a = 1', false],
    ['st.a <=> 1', true],
    ['st.a IS NULL', false],
    ['ST.A = 2', false],
    ['id + 1 > 100', true],
    ['abs(id) > 100', true],
    ["lower(name) = 'x'", true],
    ['CAST(id AS double) > 100', true],
    ['nope = 1', true],
    ['name = 5', true],
    ["id = 'abc'", true],
    ['name > id', true],
    ['1 = 0', false],
    ['1 = 0 OR id = 15', true],
    ['TRUE', true],
    ['NULL', false],
    ['NOT NULL', false],
    ['1 + 1 = 2', true],
  ]
  for (const [text, expected] of cases) {
    it(`${expected ? 'keeps' : 'skips'} for ${text}`, () => {
      assert.equal(mayMatch(text), expected)
    })
  }
})

describe('mayMatchFile trusts only what stats guarantee', () => {
  it('keeps every file without stats, except for predicates false on their own', () => {
    for (const text of ['id = 9', 'id IS NULL', "name LIKE 'a%'", 'st.a = 2']) {
      assert.equal(mayMatchFile(parsePredicate(text), undefined, undefined, columns), true, text)
      assert.equal(mayMatch(text, {}), true, text)
    }
    assert.equal(mayMatchFile(parsePredicate('1 = 2'), undefined, undefined, columns), false)
  })

  it('skips an empty file', () => {
    assert.equal(mayMatch('TRUE', { numRecords: 0n }), false)
    assert.equal(mayMatch('id IS NULL', { numRecords: 0 }), false)
  })

  it('uses nullCount only at 0 or numRecords', () => {
    const allNull: FileStats = { numRecords: 4, nullCount: { id: 4 } }
    assert.equal(mayMatch('id IS NULL', allNull), true)
    assert.equal(mayMatch('id IS NOT NULL', allNull), false)
    assert.equal(mayMatch('id = 1', allNull), false)
    assert.equal(mayMatch('NOT id = 1', allNull), false)
    assert.equal(mayMatch('id <=> NULL', allNull), true)
    assert.equal(mayMatch('id IN (1, NULL)', allNull), false)
    // Wide bounds (a DV hid some rows): a partial count says nothing either way.
    const wide: FileStats = {
      numRecords: 4,
      nullCount: { id: 2 },
      minValues: { id: 1 },
      maxValues: { id: 5 },
      tightBounds: false,
    }
    assert.equal(mayMatch('id IS NULL', wide), true)
    assert.equal(mayMatch('id IS NOT NULL', wide), true)
    assert.equal(mayMatch('id > 5', wide), false)
    // Without numRecords the all-null case cannot be recognized.
    assert.equal(mayMatch('id IS NOT NULL', { nullCount: { id: 4 } }), true)
    // Without nullCount, NULLs are possible.
    assert.equal(mayMatch('id IS NULL', { numRecords: 4, minValues: { id: 1 }, maxValues: { id: 2 } }), true)
  })

  it('treats a missing bound as unbounded and corrupt bounds as absent', () => {
    assert.equal(mayMatch('id > 100', { numRecords: 3, minValues: { id: 1 } }), true)
    assert.equal(mayMatch('id < 0', { numRecords: 3, minValues: { id: 1 } }), false)
    assert.equal(mayMatch('id = 3', { numRecords: 3, minValues: { id: 5 }, maxValues: { id: 1 } }), true)
    assert.equal(mayMatch('id = 3', { numRecords: 3, minValues: { id: 'abc' }, maxValues: { id: 1 } }), false)
    assert.equal(mayMatch('id = 3', { numRecords: 3, minValues: { id: 'abc' }, maxValues: { id: 5 } }), true)
    assert.equal(
      mayMatch('id = 3', { numRecords: 3, minValues: { id: [1] }, maxValues: { id: { x: 1 } } }),
      true,
    )
  })

  it('ignores string bounds when strings are compared as numbers or dates', () => {
    // '10' < '9' as strings, but 10 > 9.5 as numbers: string order says nothing about numbers.
    const numericText: FileStats = {
      numRecords: 2,
      nullCount: { name: 0 },
      minValues: { name: '10' },
      maxValues: { name: '9' },
    }
    assert.equal(mayMatch('name > 9.5', numericText), true)
    assert.equal(mayMatch('name = 5', numericText), true)
    assert.equal(mayMatch("name > DATE '2024-01-01'", numericText), true)
    assert.equal(mayMatch("name = '5'", numericText), true)
    assert.equal(mayMatch("name = '99'", numericText), false)
  })

  it('treats a string max that may be truncated as a prefix', () => {
    const long = 'a'.repeat(32)
    const truncated: FileStats = { numRecords: 2, minValues: { name: long }, maxValues: { name: long } }
    assert.equal(mayMatch(`name > '${long}'`, truncated), true)
    assert.equal(mayMatch(`name = '${long}z'`, truncated), true)
    assert.equal(mayMatch(`name <> '${long}'`, truncated), true)
    assert.equal(mayMatch("name >= 'b'", truncated), false)
    assert.equal(mayMatch(`name < '${long}'`, truncated), false)
    const bumped: FileStats = {
      numRecords: 2,
      minValues: { name: 'a' },
      maxValues: { name: `${long}\u{10FFFF}` },
    }
    assert.equal(mayMatch(`name > '${long}zzz'`, bumped), true)
    assert.equal(mayMatch("name >= 'b'", bumped), false)
    const short: FileStats = { numRecords: 2, minValues: { name: 'abcd' }, maxValues: { name: 'abcd' } }
    const pred = parsePredicate("name > 'abcd'")
    assert.equal(mayMatchFile(pred, short, {}, columns), false)
    assert.equal(mayMatchFile(pred, short, {}, columns, { stringPrefixLength: 4 }), true)
  })

  it('widens numbers that a lossy JSON parse may have rounded', () => {
    const lossyLong: FileStats = {
      numRecords: 1,
      minValues: { id: 9007199254740992 },
      maxValues: { id: 9007199254740992 },
    }
    assert.equal(mayMatch('id = 9007199254740993', lossyLong), true)
    assert.equal(mayMatch('id = 9007199254750000', lossyLong), false)
    const exactLong: FileStats = {
      numRecords: 1,
      minValues: { id: 9007199254740992n },
      maxValues: { id: 9007199254740992n },
    }
    assert.equal(mayMatch('id = 9007199254740993', exactLong), false)
    const lossyDecimal: FileStats = {
      numRecords: 1,
      minValues: { price: 99.99 },
      maxValues: { price: 99.99 },
    }
    assert.equal(mayMatch('price > 99.99', lossyDecimal), true)
    assert.equal(mayMatch('price > 99.991', lossyDecimal), false)
    const lossless = { isLosslessNumber: true, value: '99.99' }
    const losslessDecimal: FileStats = {
      numRecords: 1,
      minValues: { price: lossless },
      maxValues: { price: lossless },
    }
    assert.equal(mayMatch('price > 99.99', losslessDecimal), false)
    assert.equal(mayMatch('price <> 99.99', losslessDecimal), false)
  })

  it('widens millisecond timestamps and historical offsets', () => {
    const ms: FileStats = {
      numRecords: 1,
      minValues: { ts: '2024-01-01T00:00:00.000Z' },
      maxValues: { ts: '2024-01-01T00:00:00.000Z' },
    }
    assert.equal(mayMatch("ts = TIMESTAMP '2024-01-01 00:00:00.000999'", ms), true)
    assert.equal(mayMatch("ts = TIMESTAMP '2024-01-01 00:00:00.001'", ms), false)
    assert.equal(mayMatch("ts <> TIMESTAMP '2024-01-01 00:00:00'", ms), true)
    const micros: FileStats = {
      numRecords: 1,
      minValues: { ts: '2024-01-01T00:00:00.000000Z' },
      maxValues: { ts: '2024-01-01T00:00:00.000000Z' },
    }
    assert.equal(mayMatch("ts = TIMESTAMP '2024-01-01 00:00:00.000001'", micros), false)
    // Spark once wrote +00:53 for an offset of +00:53:28 (local mean time).
    const historical: FileStats = {
      numRecords: 1,
      minValues: { ts: '1900-01-01T00:00:00.000+00:53' },
      maxValues: { ts: '1900-01-01T00:00:00.000+00:53' },
    }
    assert.equal(mayMatch("ts = TIMESTAMP '1899-12-31 23:06:32Z'", historical), true)
    assert.equal(mayMatch("ts < TIMESTAMP '1899-12-31 23:05:00Z'", historical), false)
  })

  it('widens float stats of a double column that was widened from float', () => {
    const schema = {
      type: 'struct',
      fields: [
        {
          name: 'x',
          type: 'double',
          nullable: true,
          metadata: { 'delta.typeChanges': [{ fromType: 'float', toType: 'double' }] },
        },
      ],
    }
    const widened = columnsFromSchema(schema)
    const plain = columnsFromTypes({ x: 'double' })
    const s: FileStats = { numRecords: 1, minValues: { x: 3.4 }, maxValues: { x: 3.4 } }
    const pred = parsePredicate('x > 3.4')
    assert.equal(mayMatchFile(pred, s, {}, plain), false)
    assert.equal(mayMatchFile(pred, s, {}, widened), true)
    assert.equal(mayMatchFile(parsePredicate('x < 3.4'), s, {}, widened), false)
    assert.equal(mayMatchFile(parsePredicate('x > 3.41'), s, {}, widened), false)
  })

  it('reads stats by physical name under column mapping', () => {
    const schema = JSON.stringify({
      type: 'struct',
      fields: [
        {
          name: 'id',
          type: 'long',
          nullable: true,
          metadata: { 'delta.columnMapping.physicalName': 'col-1' },
        },
        {
          name: 'p',
          type: 'integer',
          nullable: true,
          metadata: { 'delta.columnMapping.physicalName': 'col-2' },
        },
      ],
    })
    const mapped = columnsFromSchema(schema, { partitionColumns: ['p'] })
    const s: FileStats = {
      numRecords: 1,
      minValues: { 'col-1': 5, id: 100 },
      maxValues: { 'col-1': 5, id: 100 },
    }
    assert.equal(mayMatchFile(parsePredicate('id = 100'), s, { 'col-2': '1' }, mapped), false)
    assert.equal(mayMatchFile(parsePredicate('id = 5'), s, { 'col-2': '1' }, mapped), true)
    assert.equal(mayMatchFile(parsePredicate('p = 2'), s, { 'col-2': '1', p: '2' }, mapped), false)
    const unmapped = columnsFromSchema(schema, { partitionColumns: ['p'], columnMapping: false })
    assert.equal(mayMatchFile(parsePredicate('id = 5'), s, { p: '1' }, unmapped), false)
  })
})

describe('mayMatchFile over partition values', () => {
  const cases: [string, Record<string, unknown>, boolean][] = [
    ['part = 1', { part: '1' }, true],
    ['part = 2', { part: '1' }, false],
    ['part IS NULL', { part: '1' }, false],
    ['part + 1 = 2', { part: '1' }, true],
    ['part + 1 = 3', { part: '1' }, false],
    ['part % 2 = 0 OR id = 9', { part: '1' }, false],
    ['NOT part = 2', { part: '2' }, false],
    ['part = 1', { part: 1 }, true],
    ['part = 2', { part: 1n }, false],
    ['part IS NULL', { part: null }, true],
    ['part IS NULL', { part: '' }, true],
    ['part = 1', { part: null }, false],
    ['NOT part = 1', { part: null }, false],
    ['part <=> NULL', { part: null }, true],
    ['part = 1', {}, true],
    ['PART = 2', { part: '1' }, false],
    ["lower(region) = 'eu'", { region: 'EU' }, true],
    ["region = 'us'", { region: 'EU' }, false],
    ["region LIKE 'E%' AND part = 1", { region: 'EU', part: '1' }, true],
    ["region LIKE 'U%'", { region: 'EU' }, false],
    ["pts = TIMESTAMP '2024-01-01 10:00:00'", { pts: '2024-01-01 10:00:00' }, true],
    ["pts = TIMESTAMP '2024-01-01 20:00:00'", { pts: '2024-01-01 10:00:00' }, true],
    ["pts = TIMESTAMP '2024-01-03 10:00:00'", { pts: '2024-01-01 10:00:00' }, false],
    ["pts = TIMESTAMP '2024-01-01 20:00:00'", { pts: '2024-01-01T10:00:00.000000Z' }, false],
    ["pts = TIMESTAMP '2024-01-01 10:00:00'", { pts: '2024-01-01T10:00:00.000000Z' }, true],
    ["pts = TIMESTAMP '2024-01-01 10:00:00'", { pts: 1704103200000000n }, true],
    ["region LIKE 'E\\' ESCAPE '\\'", { region: 'EU' }, true],
    ['part = 1 AND id = 9', { part: '1' }, false],
  ]
  for (const [text, pv, expected] of cases) {
    it(`${expected ? 'keeps' : 'skips'} ${JSON.stringify(pv, (_, v) => (typeof v === 'bigint' ? `${v}n` : v))} for ${text}`, () => {
      assert.equal(mayMatch(text, stats, pv), expected)
    })
  }
})

describe('splitPartitionPredicate', () => {
  const cases: [string, string | undefined, string | undefined][] = [
    [
      "part = 1 AND id > 5 AND (region = 'x' OR part = 2) AND 1 = 1",
      "part = 1 AND (region = 'x' OR part = 2) AND 1 = 1",
      'id > 5',
    ],
    ['part = 1 OR id = 5', undefined, 'part = 1 OR id = 5'],
    ['PART = 1 AND Region IS NULL', 'PART = 1 AND Region IS NULL', undefined],
    ['id = 1 AND (part = 1 AND name = part)', 'part = 1', 'id = 1 AND name = part'],
    ['lower(region) = part', 'lower(region) = part', undefined],
  ]
  for (const [text, partition, data] of cases) {
    it(`splits ${text}`, () => {
      const split = splitPartitionPredicate(parsePredicate(text), ['part', 'region'])
      assert.equal(split.partition === undefined ? undefined : toSql(split.partition), partition)
      assert.equal(split.data === undefined ? undefined : toSql(split.data), data)
    })
  }
})

// === Spark-written fixtures ===

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')
const goldenDir = resolve(repoRoot, '../shared/fixtures/delta-golden')
const skipFixtures = existsSync(goldenDir)
  ? false
  : 'shared golden fixtures not found at ../shared/fixtures/delta-golden'

interface LogAdd {
  readonly path: string
  readonly stats: string
  readonly partitionValues: Record<string, string | null>
}

function readLog(
  table: string,
  versions: number,
): { adds: LogAdd[]; schemaString: string; partitionColumns: string[] } {
  const adds: LogAdd[] = []
  let schemaString = ''
  let partitionColumns: string[] = []
  for (let v = 0; v < versions; v++) {
    const file = join(goldenDir, table, '_delta_log', `${String(v).padStart(20, '0')}.json`)
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (line.trim() === '') continue
      const action = JSON.parse(line)
      if (action.add) adds.push(action.add)
      if (action.metaData) {
        schemaString = action.metaData.schemaString
        partitionColumns = action.metaData.partitionColumns
      }
    }
  }
  return { adds, schemaString, partitionColumns }
}

describe('Spark-written data-skipping fixtures', { skip: skipFixtures }, () => {
  it('keeps and skips the single file of data-skipping-basic-stats-all-types as ScanSuite does', () => {
    const { adds, schemaString } = readLog('data-skipping-basic-stats-all-types', 1)
    assert.equal(adds.length, 1)
    const add = adds[0] as LogAdd
    const fileStats = JSON.parse(add.stats) as FileStats
    const table = columnsFromSchema(schemaString)
    // In-table value V, a smaller S and a bigger B per column (expected.json notes).
    const values: Record<string, [string, string, string]> = {
      as_int: ['0', '-1', '1'],
      as_long: ['0', '-1', '1'],
      as_byte: ['0', '-1', '1'],
      as_short: ['0', '-1', '1'],
      as_float: ['0.0', '-1.0', '1.0'],
      as_double: ['0.0', '-1.0', '1.0'],
      as_string: ["'0'", "'!'", "'1'"],
      as_date: ["DATE '2000-01-01'", "DATE '1999-01-01'", "DATE '2000-01-02'"],
      as_big_decimal: ['0', '-1', '1'],
      as_timestamp: [
        "TIMESTAMP '2000-01-01 08:00:00Z'",
        "TIMESTAMP '1999-12-31 08:00:00Z'",
        "TIMESTAMP '2000-01-02 08:00:00Z'",
      ],
    }
    for (const [column, [v, s, b]] of Object.entries(values)) {
      const keep = [`= ${v}`, `> ${s}`, `>= ${v}`, `< ${b}`, `<= ${v}`]
      const skip = [`= ${s}`, `> ${v}`, `>= ${b}`, `< ${v}`, `<= ${s}`]
      if (column === 'as_timestamp') {
        // Stats hold milliseconds: the true max may be up to 999 microseconds above V.
        skip.splice(skip.indexOf(`> ${v}`), 1)
        keep.push(`> ${v}`)
      }
      for (const op of keep) {
        assert.equal(
          mayMatchFile(parsePredicate(`${column} ${op}`), fileStats, add.partitionValues, table),
          true,
          `${column} ${op}`,
        )
      }
      for (const op of skip) {
        assert.equal(
          mayMatchFile(parsePredicate(`${column} ${op}`), fileStats, add.partitionValues, table),
          false,
          `${column} ${op}`,
        )
      }
    }
  })

  it('keeps each file of type-widening for its own row values, read in the widened types', () => {
    const { adds, schemaString } = readLog('type-widening', 3)
    assert.equal(adds.length, 2)
    const table = columnsFromSchema(schemaString)
    // expectedRows of the fixture: the first file holds row 1 (written before widening).
    const rows: Record<string, string>[] = [
      {
        byte_long: '1L',
        int_long: '2L',
        float_double: '3.4000000953674316D',
        byte_double: '5D',
        decimal_decimal_same_scale: '123.45',
        decimal_decimal_greater_scale: '67.89000',
        long_decimal: '4.0',
        date_timestamp_ntz: "TIMESTAMP_NTZ '2024-09-09 00:00:00'",
      },
      {
        byte_long: '9223372036854775807L',
        int_long: '9223372036854775807L',
        float_double: '1.234567890123D',
        byte_double: '1.234567890123D',
        decimal_decimal_same_scale: '12345678901234.56',
        decimal_decimal_greater_scale: '12345678901.23456',
        long_decimal: '123456789012345678.9',
        date_timestamp_ntz: "TIMESTAMP_NTZ '2024-09-09 12:34:56.123456'",
      },
    ]
    adds.forEach((add, i) => {
      const fileStats = JSON.parse(add.stats) as FileStats
      for (const [column, value] of Object.entries(rows[i] as Record<string, string>)) {
        for (const op of ['=', '>=', '<=']) {
          const text = `${column} ${op} ${value}`
          assert.equal(mayMatchFile(parsePredicate(text), fileStats, add.partitionValues, table), true, text)
        }
      }
    })
    const old = adds[0] as LogAdd
    assert.equal(mayMatchFile(parsePredicate('float_double > 3.4'), JSON.parse(old.stats), {}, table), true)
    assert.equal(mayMatchFile(parsePredicate('float_double > 3.5'), JSON.parse(old.stats), {}, table), false)
  })

  it('keeps exactly the (1, 1) file of data-skipping-partition-and-data-column for part > 0 AND id > 0', () => {
    const { adds, schemaString, partitionColumns } = readLog('data-skipping-partition-and-data-column', 4)
    assert.equal(adds.length, 4)
    const table = columnsFromSchema(schemaString, { partitionColumns })
    const predicate = parsePredicate('part > 0 AND id > 0')
    const kept = adds.filter((a) => mayMatchFile(predicate, JSON.parse(a.stats), a.partitionValues, table))
    assert.equal(kept.length, 1)
    const keptStats = JSON.parse((kept[0] as LogAdd).stats)
    assert.deepEqual([keptStats.minValues.part, keptStats.minValues.id], [1, 1])
  })
})
