/**
 * Input that is deep or long: nesting is refused with a typed error before any stage can run out
 * of stack, and long AND / OR chains parse into balanced trees that every stage handles.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { InvalidPredicateError } from '../../../src/errors/index.js'
import {
  and,
  col,
  conjuncts,
  disjunction,
  type Expression,
  eq,
  expressionDepth,
  lit,
  MAX_EXPRESSION_DEPTH,
  or,
} from '../../../src/expressions/ast.js'
import { columnsFromTypes } from '../../../src/expressions/columns.js'
import { evaluateRow } from '../../../src/expressions/evaluate-rows.js'
import { mayMatchFile } from '../../../src/expressions/evaluate-stats.js'
import { parsePredicate } from '../../../src/expressions/parse-predicate.js'
import { duckDbColumn, renderDuckDbSql } from '../../../src/expressions/render-duckdb.js'
import { toSql } from '../../../src/expressions/to-sql.js'

const columns = columnsFromTypes({ id: 'long', name: 'string' })

function chain(op: 'OR' | 'AND', n: number, term: (i: number) => string): string {
  const parts: string[] = []
  for (let i = 0; i < n; i++) parts.push(term(i))
  return parts.join(` ${op} `)
}

function rejectsAsTooDeep(text: string, position: number): void {
  assert.throws(
    () => parsePredicate(text),
    (err: unknown) => {
      assert.ok(err instanceof InvalidPredicateError)
      assert.equal(err.code, 'DELTA_INVALID_PREDICATE')
      assert.match(err.message, new RegExp(`more than ${MAX_EXPRESSION_DEPTH} levels deep`))
      assert.equal(err.position, position)
      assert.ok(err.hint !== undefined)
      return true
    },
  )
}

describe('nesting limits of the predicate parser', () => {
  it('refuses 10,000 nested parentheses with DELTA_INVALID_PREDICATE at the first level too deep', () => {
    rejectsAsTooDeep(`${'('.repeat(10_000)}id = 1${')'.repeat(10_000)}`, MAX_EXPRESSION_DEPTH)
  })

  it('refuses 10,000 chained NOTs and 10,000 unary minus signs', () => {
    rejectsAsTooDeep(`${'NOT '.repeat(10_000)}id = 1`, 4 * MAX_EXPRESSION_DEPTH)
    rejectsAsTooDeep(`id = ${'- '.repeat(10_000)}1`, 5 + 2 * MAX_EXPRESSION_DEPTH)
  })

  it('refuses 10,000 nested function calls', () => {
    rejectsAsTooDeep(`${'abs('.repeat(10_000)}id${')'.repeat(10_000)} = 1`, 4 * MAX_EXPRESSION_DEPTH)
  })

  it('accepts a tree exactly as deep as the limit', () => {
    const nots = MAX_EXPRESSION_DEPTH - 2
    const e = parsePredicate(`${'NOT '.repeat(nots)}id = 1`)
    assert.equal(expressionDepth(e), MAX_EXPRESSION_DEPTH)
    assert.deepEqual(parsePredicate(toSql(e)), e)
    rejectsAsTooDeep(`NOT ${'NOT '.repeat(nots)}id = 1`, 0)
  })

  it('refuses a tree whose chains push it past the limit, though no single nesting does', () => {
    // Each level is a parenthesized OR of four terms, the nested one last (two tree levels down
    // in the balanced chain): 200 levels of nesting, 400 of tree.
    let text = 'id = 0'
    for (let i = 1; i <= 200; i++) text = `(id = ${i} OR id = 1 OR id = 2 OR ${text})`
    rejectsAsTooDeep(text, 0)
  })
})

describe('long AND / OR chains', () => {
  it('parses a flat OR of 100,000 terms into a shallow tree that every stage evaluates', () => {
    const text = chain('OR', 100_000, (i) => `id = ${i * 3}`)
    const e = parsePredicate(text)
    assert.equal(e.kind, 'or')
    assert.ok(expressionDepth(e) <= 19, `depth ${expressionDepth(e)}`)
    assert.equal(evaluateRow(e, { id: 299_997n }, { columns }), true)
    assert.equal(evaluateRow(e, { id: 299_998n }, { columns }), false)
    assert.equal(evaluateRow(e, { id: null }, { columns }), null)
    const stats = (min: bigint, max: bigint) => ({
      numRecords: 10n,
      minValues: { id: min },
      maxValues: { id: max },
      nullCount: { id: 0n },
    })
    assert.equal(mayMatchFile(e, stats(299_997n, 299_997n), {}, columns), true)
    assert.equal(mayMatchFile(e, stats(300_000n, 400_000n), {}, columns), false)
    // Printed flat, and read back into the same tree.
    const printed = toSql(e)
    assert.equal(printed, text)
    assert.deepEqual(parsePredicate(printed), e)
  })

  it('points at an error late in a 100,000-term text with a short excerpt, not the whole text', () => {
    const text = `${chain('OR', 100_000, (i) => `id = ${i}`)} OR id =`
    assert.throws(
      () => parsePredicate(text),
      (err: unknown) => {
        assert.ok(err instanceof InvalidPredicateError)
        assert.equal(err.position, text.length)
        assert.equal(err.text, text)
        assert.ok(err.message.length < 300, `${err.message.length} characters`)
        const [, excerpt = '', caret = ''] = err.message.split('\n')
        assert.ok(excerpt.startsWith('  ...') && excerpt.endsWith('OR id ='), excerpt)
        assert.equal(caret.indexOf('^'), excerpt.length)
        return true
      },
    )
  })

  it('parses a flat AND of 100,000 terms the same way', () => {
    const e = parsePredicate(chain('AND', 100_000, (i) => `id <> ${i}`))
    assert.ok(expressionDepth(e) <= 19)
    assert.equal(conjuncts(e).length, 100_000)
    assert.equal(evaluateRow(e, { id: 100_000n }, { columns }), true)
    assert.equal(evaluateRow(e, { id: 99_999n }, { columns }), false)
  })

  it('renders an OR of equalities on one column as one DuckDB IN list', () => {
    const e = parsePredicate(chain('OR', 100_000, (i) => `id = ${i}`))
    const sql = renderDuckDbSql(e, { column: duckDbColumn })
    assert.ok(sql.startsWith('("id" IN ('), sql.slice(0, 80))
    assert.equal(sql.split(' IN (').length, 2)
    assert.equal(sql.split(' OR ').length, 1)
    // Equalities on one column with one literal type fold; the other terms stay as they are.
    const mixed = renderDuckDbSql(parsePredicate("id = 1 OR name = 'a' OR id = 2 OR id > 5"), {
      column: duckDbColumn,
    })
    assert.match(
      mixed,
      /^\(\(\("id" IN \([^()]*\([^()]*\), [^()]*\([^()]*\)\)\) OR \("name" = 'a'\)\) OR \("id" > /,
    )
  })

  it('builds and() / or() of many operands as balanced trees, three operands left-nested', () => {
    const [x, y, z] = [eq(col('id'), lit(1n)), eq(col('id'), lit(2n)), eq(col('id'), lit(3n))]
    assert.deepEqual(or(x, y, z), or(or(x, y), z))
    const terms: Expression[] = []
    for (let i = 0; i < 100_000; i++) terms.push(eq(col('id'), lit(BigInt(i))))
    assert.ok(expressionDepth(disjunction(terms)) <= 19)
    assert.equal(expressionDepth(and(x, y, z, x, y, z, x)), 5)
  })

  it('prints any hand-built chain so that it reads back as the same tree', () => {
    const t = (i: number) => eq(col('id'), lit(BigInt(i)))
    let leftDeep: Expression = t(0)
    for (let i = 1; i < 50; i++) leftDeep = or(leftDeep, t(i))
    let rightDeep: Expression = t(0)
    for (let i = 1; i < 50; i++) rightDeep = and(t(i), rightDeep)
    for (const e of [leftDeep, rightDeep, or(and(t(1), t(2)), or(t(3), t(4)), t(5))]) {
      assert.deepEqual(parsePredicate(toSql(e)), e, toSql(e))
    }
  })
})
