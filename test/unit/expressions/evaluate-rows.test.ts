import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { InvalidPredicateError, UnsupportedError } from '../../../src/errors/index.js'
import { columnsFromTypes } from '../../../src/expressions/columns.js'
import { evaluateRow } from '../../../src/expressions/evaluate-rows.js'
import { parsePredicate } from '../../../src/expressions/parse-predicate.js'

const row = {
  i: 5n,
  n: 2.5,
  s: "it's",
  z: null,
  b: true,
  nested: { x: 1n, y: null },
  empty: null,
}

describe('evaluateRow three-valued logic', () => {
  const cases: [string, boolean | null][] = [
    ['i = 5', true],
    ['i <> 5', false],
    ['z = 1', null],
    ['NOT z = 1', null],
    ['z = 1 AND FALSE', false],
    ['z = 1 AND TRUE', null],
    ['z = 1 OR TRUE', true],
    ['z = 1 OR FALSE', null],
    ['z <=> NULL', true],
    ['i <=> NULL', false],
    ['i <=> 5', true],
    ['z IS NULL', true],
    ['z IS NOT NULL', false],
    ['(z = 1) IS NULL', true],
    ['(z = 1) IS NOT TRUE', true],
    ['(z = 1) IS FALSE', false],
    ['b IS TRUE', true],
    ['b IS NOT FALSE', true],
    ['i IN (1, 5)', true],
    ['i IN (1, NULL)', null],
    ['i IN (5, NULL)', true],
    ['i NOT IN (1, NULL)', null],
    ['i NOT IN (1, 2)', true],
    ['z IN (1)', null],
    ['i BETWEEN 5 AND 6', true],
    ['i BETWEEN NULL AND 4', false],
    ['i BETWEEN NULL AND 6', null],
    ['i NOT BETWEEN 6 AND 7', true],
    ["s LIKE 'it%'", true],
    ["s LIKE '_t''s'", true],
    ["s NOT LIKE '%x%'", true],
    ["z LIKE '%'", null],
    ['s LIKE z', null],
    ['nested.x = 1', true],
    ['nested.y IS NULL', true],
    ['empty.x IS NULL', true],
    ['nested IS NOT NULL', true],
    ['NESTED.X = 1', true],
    ['coalesce(z, i) = 5', true],
    ['coalesce(z, z) IS NULL', true],
  ]
  for (const [text, expected] of cases) {
    it(`${text} is ${expected}`, () => {
      assert.equal(evaluateRow(parsePredicate(text), row), expected)
    })
  }
})

describe('evaluateRow comparisons and arithmetic', () => {
  const cases: [string, Record<string, unknown>, boolean | null][] = [
    ['x = 9007199254740993', { x: 9007199254740993n }, true],
    ['x = 9007199254740992', { x: 9007199254740993n }, false],
    ['x = 9007199254740993.0', { x: 9007199254740993n }, true],
    ['x = 9.007199254740993e15', { x: 9007199254740993n }, true],
    ['x = 0.1', { x: 0.1 }, true],
    ['x = 1.50', { x: 1.5 }, true],
    ['x > 1.499999999999999999', { x: 1.5 }, false],
    ['x > 1.499999999999999999', { x: '1.5' }, true],
    ['x > 1.499999999999999999', { x: 15n }, true],
    ['x = 3', { x: 3n }, true],
    ['x = 3.0', { x: 3n }, true],
    ['x < 3.01', { x: 3n }, true],
    ["x > CAST('NaN' AS double)", { x: 1e308 }, false],
    ["x = CAST('NaN' AS double)", { x: Number.NaN }, true],
    ['x = -0.0D', { x: 0 }, true],
    ['x = 3.4', { x: Math.fround(3.4) }, false],
    ['x = 3.4F', { x: Math.fround(3.4) }, true],
    ["x = '5'", { x: 5n }, true],
    ["x < 'b'", { x: 'a' }, true],
    ["x > '\u{FFFF}'", { x: '\u{10000}' }, true],
    ["x > '\u{E000}'", { x: '\u{10000}' }, true],
    ["x = DATE '2024-01-01'", { x: '2024-01-01' }, true],
    ["x < TIMESTAMP '2024-01-01 00:00:00.000001'", { x: '2024-01-01' }, true],
    ["x = TIMESTAMP '2024-01-01 10:00:00'", { x: new Date('2024-01-01T10:00:00Z') }, true],
    ["x = X'0aff'", { x: new Uint8Array([10, 255]) }, true],
    ["x < X'0aff'", { x: new Uint8Array([10]) }, true],
    ['x + 1 = 6', { x: 5n }, true],
    ['x - 0.5 = 4.5', { x: 5n }, true],
    ['x * 1.5 = 7.50', { x: 5n }, true],
    ['x / 2 = 2.5', { x: 5n }, true],
    ['x / 0 > 1e308', { x: 5n }, true],
    ['x % 3 = 2', { x: 5n }, true],
    ['x % 3 = -2', { x: -5n }, true],
    ['x % 0 IS NULL', { x: 5n }, true],
    ['x % 0 IS NULL', { x: 5.5 }, false],
    ['-x = -5', { x: 5n }, true],
    ['abs(x) = 5', { x: -5n }, true],
    ['x + 1 IS NULL', { x: null }, true],
    ["lower(x) = 'abc'", { x: 'AbC' }, true],
    ["upper(x) = '\u00c0\u00c9'", { x: '\u00e0\u00e9' }, true],
    ['length(x) = 2', { x: 'e\u0301' }, true],
    ['length(x) = 1', { x: '\u{1F642}' }, true],
    ['CAST(x AS integer) = 2', { x: 2.5 }, true],
    ['CAST(x AS integer) = 4', { x: 3.5 }, true],
    ['CAST(x AS integer) = 3', { x: 2.5 }, false],
    ['CAST(x AS decimal(3,1)) = 1.3', { x: '1.25' }, true],
    ["CAST(x AS string) = '12'", { x: 12n }, true],
    ["CAST(x AS date) = DATE '2024-01-01'", { x: new Date('2024-01-01T23:59:59Z') }, true],
  ]
  for (const [text, r, expected] of cases) {
    it(`${text} over ${String(Object.values(r)[0])} is ${expected}`, () => {
      assert.equal(evaluateRow(parsePredicate(text), r), expected)
    })
  }

  it('reads raw values as the declared column types', () => {
    const columns = columnsFromTypes({ d: 'date', t: 'timestamp', m: 'decimal(10,2)', f: 'float', l: 'long' })
    const r = { d: 19723, t: 1704103200000001n, m: '12.30', f: 3.4, l: 7 }
    assert.equal(evaluateRow(parsePredicate("d = DATE '2024-01-01'"), r, { columns }), true)
    assert.equal(evaluateRow(parsePredicate("t > TIMESTAMP '2024-01-01 10:00:00'"), r, { columns }), true)
    assert.equal(evaluateRow(parsePredicate('m = 12.3'), r, { columns }), true)
    assert.equal(evaluateRow(parsePredicate('f = 3.4'), r, { columns }), true)
    assert.equal(evaluateRow(parsePredicate('l = 7L'), r, { columns }), true)
  })

  it('takes year, month, day and hour of dates and timestamps in UTC, before 1970 too', () => {
    const columns = columnsFromTypes({ d: 'date', t: 'timestamp', n: 'timestamp_ntz', s: 'string' })
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ d: 19723 }, 'year(d) = 2024 AND month(d) = 1 AND day(d) = 1 AND hour(d) = 0'],
      [{ d: -1 }, 'year(d) = 1969 AND month(d) = 12 AND day(d) = 31'],
      [{ t: -1n }, 'year(t) = 1969 AND month(t) = 12 AND day(t) = 31 AND hour(t) = 23'],
      [{ t: 1704103200000001n }, 'year(t) = 2024 AND day(t) = 1 AND hour(t) = 10'],
      [{ n: 86_399_999_999n }, 'year(n) = 1970 AND hour(n) = 23'],
    ]
    for (const [r, text] of cases) assert.equal(evaluateRow(parsePredicate(text), r, { columns }), true, text)
    assert.equal(evaluateRow(parsePredicate('year(d) = 1'), { d: null }, { columns }), null)
    assert.throws(
      () => evaluateRow(parsePredicate('year(s) = 1'), { s: 'x' }, { columns }),
      InvalidPredicateError,
    )
  })

  it('reports a value that does not fit its declared type', () => {
    const columns = columnsFromTypes({ d: 'date' })
    assert.throws(() => evaluateRow(parsePredicate("d = DATE '2024-01-01'"), { d: 'soon' }, { columns }), {
      name: 'InvalidPredicateError',
      message: /not a valid date/,
    })
  })
})

describe('evaluateRow errors', () => {
  const cases: [
    string,
    Record<string, unknown>,
    RegExp,
    typeof InvalidPredicateError | typeof UnsupportedError,
  ][] = [
    ['missing = 1', {}, /Unknown column missing/, InvalidPredicateError],
    ['x = 1', { x: 'abc' }, /Cannot convert string 'abc'/, InvalidPredicateError],
    ["x = X'00'", { x: 1n }, /Cannot compare integer with binary/, InvalidPredicateError],
    ['x', { x: 1n }, /Expected a condition/, InvalidPredicateError],
    ["x LIKE 'a'", { x: 1n }, /LIKE needs strings/, InvalidPredicateError],
    ["x + 'a' = 1", { x: 1n }, /Arithmetic/, UnsupportedError],
    ["CAST(x AS string) = '1.5'", { x: 1.5 }, /differs between engines/, InvalidPredicateError],
    ['x = 1', { x: { a: 1 } }, /Cannot compare struct with integer/, InvalidPredicateError],
    ["x LIKE 'a\\' ESCAPE '\\'", { x: 'a' }, /ends with the escape character/, InvalidPredicateError],
  ]
  for (const [text, r, message, errorClass] of cases) {
    it(`rejects ${text}`, () => {
      assert.throws(
        () => evaluateRow(parsePredicate(text), r),
        (err: unknown) => {
          assert.ok(err instanceof errorClass, String(err))
          assert.match((err as Error).message, message)
          return true
        },
      )
    })
  }

  it('names the predicate in value errors', () => {
    assert.throws(
      () => evaluateRow(parsePredicate('x = 1'), { x: 'abc' }),
      (err: unknown) => {
        assert.ok(err instanceof InvalidPredicateError)
        assert.equal(err.text, 'x = 1')
        return true
      },
    )
  })
})
