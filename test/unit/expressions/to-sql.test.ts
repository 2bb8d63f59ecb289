import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import {
  and,
  arithmetic,
  col,
  eq,
  floatingLiteral,
  integralLiteral,
  isIn,
  lit,
  negate,
  not,
  or,
} from '../../../src/expressions/ast.js'
import { parseExpression, parsePredicate } from '../../../src/expressions/parse-predicate.js'
import { quoteIdentifier, toSql } from '../../../src/expressions/to-sql.js'
import { anyExpression, tablePredicate } from './arbitraries.js'

describe('toSql', () => {
  it('round-trips every generated tree through the parser', () => {
    fc.assert(
      fc.property(anyExpression, (e) => {
        assert.deepStrictEqual(parseExpression(toSql(e)), e)
      }),
      { numRuns: 1500 },
    )
  })

  it('renders predicates that parsePredicate accepts', () => {
    fc.assert(
      fc.property(tablePredicate, (e) => {
        assert.deepStrictEqual(parsePredicate(toSql(e)), e)
      }),
      { numRuns: 300 },
    )
  })

  const cases: [string, ReturnType<typeof parseExpression>, string][] = [
    ['adds parentheses only where needed', or(and(col('a'), col('b')), col('c')), 'a AND b OR c'],
    ['keeps a right-nested AND', and(col('a'), and(col('b'), col('c'))), 'a AND (b AND c)'],
    ['keeps OR under AND', and(or(col('a'), col('b')), col('c')), '(a OR b) AND c'],
    ['parenthesizes a negated number', negate(lit(5n)), '-(5)'],
    ['writes a negative number as a literal', arithmetic('-', col('a'), lit(-5n)), 'a - -5'],
    [
      'keeps a right-nested subtraction',
      arithmetic('-', col('a'), arithmetic('-', col('b'), col('c'))),
      'a - (b - c)',
    ],
    [
      'quotes keywords and odd names',
      eq(col(['select me', 'and']), col(['date'])),
      '`select me`.`and` = `date`',
    ],
    [
      'suffixes typed integers',
      isIn(col('a'), [integralLiteral('long', 1n), integralLiteral('byte', -1n)]),
      'a IN (1L, -1Y)',
    ],
    ['keeps the sign of negative zero', floatingLiteral('double', -0), '-0.0D'],
    ['renders exponent doubles as is', floatingLiteral('double', 1e21), '1e+21'],
    ['renders NOT over a comparison', not(eq(col('a'), lit("it's"))), "NOT a = 'it''s'"],
  ]
  for (const [name, expr, text] of cases) {
    it(name, () => {
      assert.equal(toSql(expr), text)
      assert.deepStrictEqual(parseExpression(text), expr)
    })
  }

  it('leaves plain identifiers unquoted', () => {
    assert.equal(quoteIdentifier('order_id'), 'order_id')
    assert.equal(quoteIdentifier('NULL'), '`NULL`')
    assert.equal(quoteIdentifier('a`b'), '`a``b`')
    assert.equal(quoteIdentifier('2x'), '`2x`')
  })
})
