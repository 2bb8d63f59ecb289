/**
 * The rendered SQL is executed by a real DuckDB over a small in-memory table and must give, row
 * by row, the same three-valued result as `evaluateRow` in JS.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api'
import fc from 'fast-check'
import {
  binaryLiteral,
  cast,
  col,
  dateLiteral,
  decimalLiteral,
  type Expression,
  floatingLiteral,
  integralLiteral,
  lit,
  timestampLiteral,
  timestampNtzLiteral,
} from '../../../src/expressions/ast.js'
import { columnsFromTypes } from '../../../src/expressions/columns.js'
import { evaluateRow } from '../../../src/expressions/evaluate-rows.js'
import { parsePredicate } from '../../../src/expressions/parse-predicate.js'
import {
  duckDbColumn,
  duckDbType,
  quoteDuckDbIdentifier,
  renderDuckDbSql,
} from '../../../src/expressions/render-duckdb.js'
import { TABLE_TYPES, type TableRow, tablePredicate } from './arbitraries.js'

interface Row extends TableRow {
  readonly id: number
  readonly bin: Uint8Array | null
}

const NULL_ROW = {
  p: null,
  i: null,
  d: null,
  f: null,
  dec: null,
  s: null,
  dt: null,
  ts: null,
  ntz: null,
  b: null,
  st: null,
  bin: null,
}

const ROWS: Row[] = [
  {
    id: 1,
    p: 1,
    i: 1n,
    d: 1.5,
    f: Math.fround(0.1),
    dec: '12.34',
    s: 'apple',
    dt: 19723,
    ts: 1704103200123456n,
    ntz: 1704103200000000n,
    b: true,
    st: { x: 1 },
    bin: new Uint8Array([10]),
  },
  {
    id: 2,
    p: 0,
    i: -5n,
    d: -0,
    f: Math.fround(3.4),
    dec: '-1.50',
    s: "it's",
    dt: 10956,
    ts: 946684799999999n,
    ntz: 0n,
    b: false,
    st: { x: null },
    bin: new Uint8Array([255, 0]),
  },
  { id: 3, ...NULL_ROW },
  {
    id: 4,
    p: 5,
    i: 9007199254740993n,
    d: Number.NaN,
    f: -1,
    dec: '0.00',
    s: 'a%b_c',
    dt: 11016,
    ts: 951782400000000n,
    ntz: 500n,
    b: null,
    st: null,
    bin: new Uint8Array([]),
  },
  {
    id: 5,
    p: 1,
    i: 0n,
    d: 1e300,
    f: 16777216,
    dec: '9999.99',
    s: '\u00c0\u00c9',
    dt: 0,
    ts: -1n,
    ntz: 86400000000n,
    b: true,
    st: { x: 2 },
    bin: new Uint8Array([10, 0]),
  },
  {
    id: 6,
    p: 2,
    i: -9223372036854775808n,
    d: Number.POSITIVE_INFINITY,
    f: 0,
    dec: '0.10',
    s: '\u{10FFFF}',
    dt: -1,
    ts: 0n,
    ntz: 1000n,
    b: false,
    st: { x: 0 },
    bin: new Uint8Array([65]),
  },
]

const columns = columnsFromTypes({ ...TABLE_TYPES, bin: 'binary' })

/** SQL for a row value built with DuckDB's own functions, independent of the renderer. */
function valueSql(row: Row, name: keyof Row): string {
  const v = row[name]
  if (v === null) return 'NULL'
  const hex = (bytes: Uint8Array): string =>
    Array.from(bytes, (x) => x.toString(16).padStart(2, '0')).join('')
  switch (name) {
    case 'id':
    case 'p':
      return String(v)
    case 'i':
      return `CAST(${v} AS BIGINT)`
    case 'd':
    case 'f': {
      const n = v as number
      const text = Number.isNaN(n) ? 'NaN' : Object.is(n, -0) ? '-0.0' : String(n)
      return `'${text}'::${name === 'd' ? 'DOUBLE' : 'FLOAT'}`
    }
    case 'dec':
      return `'${v}'::DECIMAL(6,2)`
    case 's':
      return `'${(v as string).replaceAll("'", "''")}'`
    case 'dt':
      return `(DATE '1970-01-01' + ${v})`
    case 'ts':
      return `make_timestamp(${v}::BIGINT)::TIMESTAMPTZ`
    case 'ntz':
      return `make_timestamp(${v}::BIGINT)`
    case 'b':
      return String(v)
    case 'st':
      return `{'x': ${(v as { x: number | null }).x ?? 'NULL'}}::STRUCT(x INTEGER)`
    case 'bin':
      return `from_hex('${hex(v as Uint8Array)}')`
  }
}

const COLUMN_ORDER: (keyof Row)[] = [
  'id',
  'p',
  'i',
  'd',
  'f',
  'dec',
  's',
  'dt',
  'ts',
  'ntz',
  'b',
  'st',
  'bin',
]

let instance: DuckDBInstance
let con: DuckDBConnection

before(async () => {
  instance = await DuckDBInstance.create(':memory:', {
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
  })
  con = await instance.connect()
  await con.run("SET TimeZone = 'UTC'")
  await con.run(
    'CREATE TABLE t (id INTEGER, p INTEGER, i BIGINT, d DOUBLE, f FLOAT, dec DECIMAL(6,2), s VARCHAR, ' +
      'dt DATE, ts TIMESTAMPTZ, ntz TIMESTAMP, b BOOLEAN, st STRUCT(x INTEGER), bin BLOB)',
  )
  const values = ROWS.map((r) => `(${COLUMN_ORDER.map((c) => valueSql(r, c)).join(', ')})`)
  await con.run(`INSERT INTO t VALUES ${values.join(', ')}`)
})

after(() => {
  con?.closeSync()
  instance?.closeSync()
})

async function duckResults(expr: Expression): Promise<(boolean | null)[]> {
  const sql = renderDuckDbSql(expr, { column: duckDbColumn })
  const reader = await con.runAndReadAll(`SELECT (${sql}) AS r FROM t ORDER BY id`)
  return reader.getRowObjectsJS().map((r) => r.r as boolean | null)
}

function jsResults(expr: Expression): (boolean | null)[] {
  return ROWS.map(({ id: _, ...row }) => evaluateRow(expr, row, { columns }))
}

describe('renderDuckDbSql agrees with evaluateRow', () => {
  const predicates = [
    'i = 1',
    'i > 0',
    'i <> 1',
    'i <=> NULL',
    'NOT i <=> 1',
    'i IN (1, 2)',
    'i IN (1, NULL)',
    'i NOT IN (1, NULL)',
    'i NOT IN (2, 3)',
    'i BETWEEN -5 AND 1',
    'i NOT BETWEEN 0 AND 2',
    'i BETWEEN NULL AND 1',
    'i = 9007199254740993',
    'i = 9007199254740992',
    'i = 9.007199254740993e15',
    'i = -9223372036854775808',
    'i < 1.5',
    'd > 1',
    'd = -0.0D',
    'd = 0',
    "d = CAST('NaN' AS double)",
    'd > 1e308',
    'd < 2.5',
    'f = 3.4',
    'f = 3.4D',
    'f = 0.1',
    'f < 1',
    'f = 16777217',
    'f > i',
    'dec = 12.34',
    'dec = 12.340',
    'dec > 12.3',
    'dec < 0',
    'dec = 0',
    'dec * 2 = 24.68',
    'dec + i > 10',
    'dec / 2 > 6',
    'dec % 1 = 0.34',
    'dec = f',
    "s = 'it''s'",
    "s LIKE 'a%'",
    "s LIKE '_pple'",
    "s NOT LIKE '%p%'",
    "s LIKE 'a\\%b\\_c' ESCAPE '\\'",
    "s LIKE 'a!%b%' ESCAPE '!'",
    "s LIKE 'a%b_c'",
    "s LIKE '_'",
    "lower(s) = '\u00e0\u00e9'",
    "upper(s) = 'APPLE'",
    'length(s) = 2',
    "s > 'Z'",
    "s < 'b'",
    "s > '\u{FFFF}'",
    "s IN ('apple', NULL)",
    "coalesce(s, 'none') = 'none'",
    "dt = DATE '2024-01-01'",
    "dt > '2000-01-01'",
    "dt < TIMESTAMP '1999-12-31 00:00:01'",
    "dt BETWEEN DATE '1999-01-01' AND DATE '2000-12-31'",
    "ts > TIMESTAMP '2024-01-01 10:00:00.123455'",
    "ts = TIMESTAMP '2024-01-01 12:00:00.123456+02:00'",
    "ts < DATE '2000-01-01'",
    "ts <= TIMESTAMP '1969-12-31 23:59:59.999999'",
    "ntz = TIMESTAMP_NTZ '2024-01-01 10:00:00'",
    "ntz > TIMESTAMP_NTZ '1970-01-01 00:00:00.0005'",
    'b',
    'NOT b',
    'b IS TRUE',
    'b IS NOT FALSE',
    'b IS NULL',
    'b = TRUE',
    'b AND i > 0',
    'b OR i > 0',
    "bin = X'0a'",
    "bin > X'0a'",
    "bin < X'ff'",
    "bin = X''",
    'st.x = 1',
    'st.x IS NULL',
    'st IS NULL',
    'p % 4 = 1',
    'p / 4 > 0.2',
    '-p < 0',
    'abs(p) = 5',
    'abs(dec) = 1.5',
    'p + i = 2',
    'p * 2 >= 2',
    'p % 0 IS NULL',
    'p / 0 > 0',
    'd % 0 IS NULL',
    "CAST(p AS string) = '1'",
    'CAST(f AS integer) = 3',
    'CAST(dec AS integer) = -2',
    'CAST(dec AS integer) = 12',
    'CAST(dec AS decimal(6,1)) = 12.3',
    "CAST(ts AS date) = DATE '2024-01-01'",
    'CAST(dt AS timestamp) < ts',
    'year(dt) = 2024',
    'month(dt) > 6',
    'day(dt) = 31',
    'hour(dt) = 0',
    'year(ts) < 2000',
    'month(ts) = 12',
    'day(ts) >= 31',
    'hour(ts) = 23',
    'hour(ts) = 10',
    'year(ntz) = 1970',
    'hour(ntz) = 0',
    'year(ts) = year(dt)',
    'i = 1 OR s IS NULL',
    "NOT (i > 0 AND s LIKE 'a%')",
    'NULL IN (1, NULL)',
    // Chains folded into IN / NOT IN lists, NULLs and mixed literal types included.
    'i = 1 OR i = -5 OR i = 7',
    'i = 1 OR 2 = i OR i = NULL OR i = 9',
    'i <> 1 AND i <> 3 AND i <> NULL',
    'i <> 1 AND -5 <> i AND i <> 3',
    'i = 1 OR i = 2.5 OR d = 1.5 OR d = -0.0D OR d = 7',
    "s = 'apple' OR s = 'x' OR i = 1 OR s = NULL",
    'NOT (i = 1 OR i = -5 OR i = 3)',
    "(i = 1 OR i = 2) AND (s = 'apple' OR s = 'b' OR s IS NULL)",
  ]
  for (const text of predicates) {
    it(text, async () => {
      const expr = parsePredicate(text)
      assert.deepEqual(await duckResults(expr), jsResults(expr))
    })
  }

  it('agrees on generated predicates', async () => {
    const cases = fc.sample(tablePredicate, { numRuns: 250, seed: 20240601 })
    let compared = 0
    for (const expr of cases) {
      let expected: (boolean | null)[]
      try {
        expected = jsResults(expr)
      } catch {
        continue
      }
      let actual: (boolean | null)[]
      try {
        actual = await duckResults(expr)
      } catch (err) {
        // DuckDB raises overflow errors where exact JS arithmetic does not (documented).
        if (/Overflow|out of range/i.test(String(err))) continue
        throw err
      }
      assert.deepEqual(actual, expected, renderDuckDbSql(expr, { column: duckDbColumn }))
      compared++
    }
    assert.ok(compared > 150, `only ${compared} generated predicates could be compared`)
  })
})

describe('renderDuckDbSql literals', () => {
  const cases: [string, Expression, string, string][] = [
    ['integer', lit(5n), '5', 'INTEGER'],
    ['long min', integralLiteral('long', -9223372036854775808n), '-9223372036854775808', 'BIGINT'],
    ['byte min', integralLiteral('byte', -128n), '-128', 'TINYINT'],
    ['short', integralLiteral('short', 300n), '300', 'SMALLINT'],
    ['decimal', decimalLiteral('-1.50'), '-1.50', 'DECIMAL(3,2)'],
    ['small decimal', decimalLiteral('0.05'), '.05', 'DECIMAL(2,2)'],
    ['38-digit decimal', decimalLiteral('1'.repeat(38)), '1'.repeat(38), 'DECIMAL(38,0)'],
    ['double', floatingLiteral('double', 0.30000000000000004), '0.30000000000000004', 'DOUBLE'],
    ['negative zero', floatingLiteral('double', -0), '-0.0', 'DOUBLE'],
    ['tiny double', floatingLiteral('double', 5e-324), '5e-324', 'DOUBLE'],
    ['float', floatingLiteral('float', 3.4), '3.4', 'FLOAT'],
    ['string', lit("it's \\ \u00e9 \u{1F642}"), "it's \\ \u00e9 \u{1F642}", 'VARCHAR'],
    ['binary', binaryLiteral('0a0b'), '\\x0A\\x0B', 'BLOB'],
    ['date', dateLiteral('0001-01-01'), '0001-01-01', 'DATE'],
    [
      'timestamp',
      timestampLiteral('2024-01-01 10:00:00.123456Z'),
      '2024-01-01 10:00:00.123456+00',
      'TIMESTAMP WITH TIME ZONE',
    ],
    ['timestamp_ntz', timestampNtzLiteral('2024-01-01 10:00:00.5'), '2024-01-01 10:00:00.5', 'TIMESTAMP'],
    ['boolean', lit(true), 'true', 'BOOLEAN'],
    ['cast', cast(col('x'), 'decimal(10,2)'), '1.00', 'DECIMAL(10,2)'],
  ]
  for (const [name, expr, text, type] of cases) {
    it(`renders a ${name} that DuckDB reads back exactly`, async () => {
      const sql = renderDuckDbSql(expr, { column: () => '1' })
      const reader = await con.runAndReadAll(`SELECT CAST(${sql} AS VARCHAR) AS v, typeof(${sql}) AS t`)
      assert.deepEqual(reader.getRowObjectsJS(), [{ v: text, t: type }])
    })
  }

  it('renders NULL as an untyped NULL', async () => {
    const reader = await con.runAndReadAll(
      `SELECT ${renderDuckDbSql(lit(null), { column: () => '' })} IS NULL AS v`,
    )
    assert.deepEqual(reader.getRowObjectsJS(), [{ v: true }])
  })

  it('maps every Delta type to a DuckDB type', () => {
    assert.equal(duckDbType('timestamp'), 'TIMESTAMPTZ')
    assert.equal(duckDbType('timestamp_ntz'), 'TIMESTAMP')
    assert.equal(duckDbType('decimal(38,18)'), 'DECIMAL(38,18)')
    assert.equal(duckDbType('byte'), 'TINYINT')
  })
})

describe('renderDuckDbSql identifiers', () => {
  it('quotes odd column names and uses the column callback', async () => {
    await con.run('CREATE TABLE q ("we""ird" INTEGER, "select" VARCHAR, "a b" STRUCT("c.d" INTEGER))')
    await con.run(`INSERT INTO q VALUES (1, 'x', {'c.d': 3}), (2, 'y', NULL)`)
    const expr = parsePredicate("`we\"ird` = 1 AND `select` = 'x' AND `a b`.`c.d` = 3")
    const sql = renderDuckDbSql(expr, { column: duckDbColumn })
    const reader = await con.runAndReadAll(`SELECT "we""ird" AS id FROM q WHERE ${sql}`)
    assert.deepEqual(reader.getRowObjectsJS(), [{ id: 1 }])
    assert.equal(quoteDuckDbIdentifier('a"b'), '"a""b"')
    const mapped = renderDuckDbSql(parsePredicate('logical = 1'), { column: (p) => `"phys_${p.join('_')}"` })
    assert.equal(mapped, '("phys_logical" = CAST(1 AS INTEGER))')
  })
})
