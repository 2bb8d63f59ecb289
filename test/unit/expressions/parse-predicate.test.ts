import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { InvalidArgumentError, InvalidPredicateError } from '../../../src/errors/index.js'
import {
  and,
  arithmetic,
  between,
  binaryLiteral,
  call,
  cast,
  col,
  columnsOf,
  compare,
  conjuncts,
  dateLiteral,
  decimalLiteral,
  type Expression,
  eq,
  floatingLiteral,
  gt,
  integralLiteral,
  isBoolean,
  isIn,
  isNotNull,
  isNull,
  like,
  lit,
  lt,
  negate,
  not,
  nullSafeEq,
  or,
  timestampLiteral,
  timestampNtzLiteral,
} from '../../../src/expressions/ast.js'
import { parseExpression, parsePredicate } from '../../../src/expressions/parse-predicate.js'

const a = col('a')
const b = col('b')
const c = col('c')

describe('parsePredicate precedence', () => {
  const cases: [string, Expression][] = [
    ['a = 1 OR b = 2 AND c = 3', or(eq(a, lit(1n)), and(eq(b, lit(2n)), eq(c, lit(3n))))],
    ['(a = 1 OR b = 2) AND c = 3', and(or(eq(a, lit(1n)), eq(b, lit(2n))), eq(c, lit(3n)))],
    ['NOT a = 1 AND b', and(not(eq(a, lit(1n))), b)],
    ['NOT (a AND b)', not(and(a, b))],
    ['NOT NOT a', not(not(a))],
    ['a OR b OR c', or(or(a, b), c)],
    ['a AND b AND c', and(and(a, b), c)],
    ['a + 1 * 2 > 3', gt(arithmetic('+', a, arithmetic('*', lit(1n), lit(2n))), lit(3n))],
    ['(a + 1) * 2 > 3', gt(arithmetic('*', arithmetic('+', a, lit(1n)), lit(2n)), lit(3n))],
    ['a - b - c = 0', eq(arithmetic('-', arithmetic('-', a, b), c), lit(0n))],
    ['a / b % c = 0', eq(arithmetic('%', arithmetic('/', a, b), c), lit(0n))],
    ['-a * 2 < 0', lt(arithmetic('*', negate(a), lit(2n)), lit(0n))],
    ['a BETWEEN 1 AND 2 AND b', and(between(a, lit(1n), lit(2n)), b)],
    ['a NOT BETWEEN b + 1 AND c', between(a, arithmetic('+', b, lit(1n)), c, true)],
    ['a IN (1, b OR c)', isIn(a, [lit(1n), or(b, c)])],
    ['a NOT IN (1)', isIn(a, [lit(1n)], true)],
    ['a IS NULL OR b IS NOT NULL', or(isNull(a), isNotNull(b))],
    ['a IS TRUE AND b IS NOT FALSE', and(isBoolean(a, true), isBoolean(b, false, true))],
    ["a LIKE 'x%' AND b NOT LIKE c", and(like(a, lit('x%')), like(b, c, { negated: true }))],
    ["a LIKE 'x!%' ESCAPE '!'", like(a, lit('x!%'), { escape: '!' })],
    ['a <=> NULL', nullSafeEq(a, lit(null))],
    ['a IS NOT DISTINCT FROM b', nullSafeEq(a, b)],
    ['a IS DISTINCT FROM b', not(nullSafeEq(a, b))],
    ['a != b', compare('<>', a, b)],
    ['a == b', eq(a, b)],
    ['(a = b) = c', eq(eq(a, b), c)],
    ['lower(a) = upper(b)', eq(call('lower', a), call('upper', b))],
    ['coalesce(a, b, 1) > LENGTH(c)', gt(call('coalesce', a, b, lit(1n)), call('length', c))],
    ['abs(-a) >= 2', compare('>=', call('abs', negate(a)), lit(2n))],
    ['CAST(a AS BIGINT) = CAST(b AS decimal(10, 2))', eq(cast(a, 'long'), cast(b, 'decimal(10,2)'))],
    ['cast(a as varchar) = b', eq(cast(a, 'string'), b)],
    ['a', a],
    ['TRUE', lit(true)],
    ['NULL', lit(null)],
  ]
  for (const [text, expected] of cases) {
    it(`parses ${text}`, () => {
      assert.deepEqual(parsePredicate(text), expected)
    })
  }

  it('treats keywords case-insensitively', () => {
    assert.deepEqual(
      parsePredicate('a is not null and b not in (1) or not c'),
      or(and(isNotNull(a), isIn(b, [lit(1n)], true)), not(c)),
    )
  })
})

describe('parseExpression literals', () => {
  const cases: [string, Expression][] = [
    ['NULL', lit(null)],
    ['true', lit(true)],
    ['FALSE', lit(false)],
    ['0', integralLiteral('integer', 0n)],
    ['2147483647', integralLiteral('integer', 2147483647n)],
    ['-2147483648', integralLiteral('integer', -2147483648n)],
    ['2147483648', integralLiteral('long', 2147483648n)],
    ['-9223372036854775808', integralLiteral('long', -9223372036854775808n)],
    ['9223372036854775808', decimalLiteral('9223372036854775808')],
    ['5L', integralLiteral('long', 5n)],
    ['-7Y', integralLiteral('byte', -7n)],
    ['300S', integralLiteral('short', 300n)],
    ['1.5', decimalLiteral('1.5')],
    ['1.50', decimalLiteral('1.50')],
    ['-0.05', decimalLiteral('-0.05')],
    ['.5', decimalLiteral('0.5')],
    ['5.', decimalLiteral('5')],
    ['1.5BD', decimalLiteral('1.5')],
    ['12BD', decimalLiteral('12')],
    ['1.5e2BD', decimalLiteral('150')],
    ['1e3', floatingLiteral('double', 1000)],
    ['1.5E-3', floatingLiteral('double', 0.0015)],
    ['2.5D', floatingLiteral('double', 2.5)],
    ['-0.0D', floatingLiteral('double', -0)],
    ['3.4F', floatingLiteral('float', 3.4)],
    ["'it''s'", lit("it's")],
    ["'back\\slash'", lit('back\\slash')],
    ["''", lit('')],
    ["'\u00e9\u{1F642}'", lit('\u00e9\u{1F642}')],
    ["X'0a0B'", binaryLiteral('0a0b')],
    ["x''", binaryLiteral('')],
    ["DATE '2024-02-29'", dateLiteral('2024-02-29')],
    ["date '1970-01-01'", dateLiteral(0)],
    ["TIMESTAMP '2024-01-01 10:00:00'", timestampLiteral(1704103200000000n)],
    ["TIMESTAMP '2024-01-01T10:00:00.123456Z'", timestampLiteral(1704103200123456n)],
    ["TIMESTAMP '2024-01-01 12:00:00+02:00'", timestampLiteral(1704103200000000n)],
    ["TIMESTAMP '2024-01-01'", timestampLiteral(1704067200000000n)],
    ["TIMESTAMP_NTZ '1970-01-01 00:00:00.000001'", timestampNtzLiteral(1n)],
  ]
  for (const [text, expected] of cases) {
    it(`reads ${text}`, () => {
      assert.deepEqual(parseExpression(text), expected)
    })
  }

  it('keeps the exact text, precision and scale of decimals', () => {
    assert.deepEqual(parseExpression('-001.500'), {
      kind: 'literal',
      type: 'decimal',
      value: '-1.500',
      precision: 4,
      scale: 3,
    })
    assert.deepEqual(parseExpression('0.05'), {
      kind: 'literal',
      type: 'decimal',
      value: '0.05',
      precision: 2,
      scale: 2,
    })
  })

  it('returns frozen nodes', () => {
    const e = parsePredicate('a IN (1, 2)')
    assert.ok(Object.isFrozen(e))
    assert.ok(e.kind === 'in' && Object.isFrozen(e.list))
  })
})

describe('parsePredicate identifiers', () => {
  const cases: [string, Expression][] = [
    ['`weird name` = 1', eq(col(['weird name']), lit(1n))],
    ['"double ""quoted""" = 1', eq(col(['double "quoted"']), lit(1n))],
    ['`back``tick` = 1', eq(col(['back`tick']), lit(1n))],
    ['`a.b` = 1', eq(col(['a.b']), lit(1n))],
    ['a.b.c = 1', eq(col(['a', 'b', 'c']), lit(1n))],
    ['a.`b c`."d" = 1', eq(col(['a', 'b c', 'd']), lit(1n))],
    ['`and` = `NULL`', eq(col(['and']), col(['NULL']))],
    ['date = 1', eq(col('date'), lit(1n))],
    ['timestamp IS NULL', isNull(col('timestamp'))],
    ['MixedCase = 1', eq(col('MixedCase'), lit(1n))],
  ]
  for (const [text, expected] of cases) {
    it(`reads ${text}`, () => {
      assert.deepEqual(parsePredicate(text), expected)
    })
  }
})

describe('parse errors point at the offending token', () => {
  const cases: [string, RegExp, number][] = [
    ['a = 1 AND', /Expected an expression after AND/, 9],
    ['a = 1 OR ) ', /Expected an expression after OR/, 9],
    ["a = 'abc", /Unterminated string literal/, 4],
    ['`abc = 1', /Unterminated quoted identifier/, 0],
    ['foo(a) = 1', /Unknown function foo/, 0],
    ['lower(a, b) = 1', /Function lower takes 1 argument/, 0],
    ['a = = 1', /Expected an expression after =/, 4],
    ['a = 1 = 2', /cannot be chained/, 6],
    ['a IS NULL IS NULL', /cannot be chained/, 10],
    ['a + 1', /Expected a condition.*arithmetic/, 0],
    ['a AND b + 1', /Expected a condition.*arithmetic/, 6],
    ["a AND 'x'", /Expected a condition.*string literal/, 6],
    ['(a = 1', /Expected \) to close the parenthesis opened at position 0/, 6],
    ['a = 1)', /Unexpected '\)' after the end of the expression/, 5],
    ['a IN ()', /Expected a value in the IN list/, 6],
    ['a IN 1', /Expected \( after IN/, 5],
    ['a BETWEEN 1 OR 2', /Expected AND between the bounds of BETWEEN/, 12],
    ['a NOT b', /Expected IN, BETWEEN or LIKE after NOT/, 6],
    ['a IS 5', /Expected NULL, TRUE, FALSE or DISTINCT FROM after IS/, 5],
    ["a LIKE 'x' ESCAPE 'ab'", /one-character string after ESCAPE/, 18],
    ["DATE '2024-02-30' = a", /Invalid DATE literal '2024-02-30'/, 5],
    ["TIMESTAMP_NTZ '2024-01-01 00:00:00Z' = a", /Invalid TIMESTAMP_NTZ literal/, 14],
    ['a = 128Y', /Invalid literal 128Y/, 4],
    ['a = 1.5L', /Invalid long literal 1.5L/, 4],
    ['a = 1e999', /Invalid literal 1e999/, 4],
    ['a = 12abc', /Invalid number literal/, 4],
    ["a = X'abc'", /Invalid binary literal/, 4],
    ['a = 123456789012345678901234567890123456789', /needs 39 digits/, 4],
    ['a # 1', /Unexpected character '#'/, 2],
    ['CAST(a AS wat) = 1', /Unknown type wat in CAST/, 10],
    ['CAST(a, int) = 1', /Expected AS in CAST/, 6],
    ['a.1 = 2', /Expected a field name after \./, 2],
    ['AND = 1', /Unexpected keyword AND/, 0],
  ]
  for (const text of ['', '   ', '\t\n']) {
    it(`refuses the blank predicate ${JSON.stringify(text)} as an argument error, not a parse error`, () => {
      assert.throws(() => parsePredicate(text), {
        code: 'DELTA_INVALID_ARGUMENT',
        message: /The predicate is (empty|blank)/,
      })
    })
  }
  for (const [text, message, position] of cases) {
    it(`rejects ${JSON.stringify(text)} at ${position}`, () => {
      assert.throws(
        () => parsePredicate(text),
        (err: unknown) => {
          assert.ok(err instanceof InvalidPredicateError, String(err))
          assert.match(err.message, message)
          assert.equal(err.position, position)
          assert.equal(err.text, text)
          assert.equal(err.code, 'DELTA_INVALID_PREDICATE')
          return true
        },
      )
    })
  }
})

describe('constructors', () => {
  it('build the same trees as the parser', () => {
    assert.deepEqual(
      parsePredicate('a.b > 1 AND c IN (1, 2L)'),
      and(gt(col('a.b'), lit(1n)), isIn(c, [lit(1n), integralLiteral('long', 2n)])),
    )
  })

  it('type bigint literals by magnitude', () => {
    assert.equal((lit(5n) as { type: string }).type, 'integer')
    assert.equal((lit(5_000_000_000n) as { type: string }).type, 'long')
    assert.throws(() => lit(2n ** 63n), InvalidArgumentError)
  })

  it('reject invalid arguments with typed errors', () => {
    assert.throws(() => lit(Number.NaN), InvalidArgumentError)
    assert.throws(() => col(''), InvalidArgumentError)
    assert.throws(() => col('a..b'), InvalidArgumentError)
    assert.throws(() => isIn(a, []), InvalidArgumentError)
    assert.throws(() => like(a, lit('x'), { escape: 'ab' }), InvalidArgumentError)
    assert.throws(() => call('nope', a), InvalidArgumentError)
    assert.throws(() => call('lower'), InvalidArgumentError)
    assert.throws(() => cast(a, 'wat'), InvalidArgumentError)
    assert.throws(() => dateLiteral('2023-02-29'), InvalidArgumentError)
    assert.throws(() => timestampLiteral('10000-01-01 00:00:00'), InvalidArgumentError)
    assert.throws(() => integralLiteral('short', 40000n), InvalidArgumentError)
    assert.throws(() => decimalLiteral('1.2.3'), InvalidArgumentError)
  })

  it('give identities for empty AND and OR', () => {
    assert.deepEqual(and(), lit(true))
    assert.deepEqual(or(), lit(false))
    assert.equal(and(a), a)
  })
})

describe('columnsOf and conjuncts', () => {
  it('lists each referenced path once, in order of appearance', () => {
    const e = parsePredicate('b = 1 AND (a.x > b OR lower(c) IN (a.x, `d.e`)) AND 1 = 1')
    assert.deepEqual(columnsOf(e), [['b'], ['a', 'x'], ['c'], ['d.e']])
  })

  it('flattens top-level ANDs only', () => {
    const e = parsePredicate('a AND (b AND c) AND (a OR b)')
    assert.deepEqual(conjuncts(e), [a, b, c, or(a, b)])
  })
})
