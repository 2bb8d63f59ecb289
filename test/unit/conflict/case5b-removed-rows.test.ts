/**
 * The record a DML keeps of the rows it takes out (Case 5b): ids sorted and checked, and the
 * bounds of several files' rows combined into one box that excludes OPTIMIZE outputs only when
 * their statistics rule every row out.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  boundsPredicate,
  type ColumnBounds,
  removedRows,
  unionOfBounds,
} from '../../../src/conflict/case5b-removed-rows.js'
import { createReadMatcher } from '../../../src/conflict/read-matcher.js'
import { integralLiteral, stringLiteral } from '../../../src/expressions/ast.js'
import type { Metadata } from '../../../src/protocol/actions.js'

const metadata: Metadata = {
  id: 't',
  format: { provider: 'parquet', options: {} },
  schemaString: JSON.stringify({
    type: 'struct',
    fields: [
      { name: 'x', type: 'integer', nullable: true, metadata: {} },
      { name: 's', type: 'string', nullable: true, metadata: {} },
    ],
  }),
  partitionColumns: [],
  configuration: {},
}

function xRange(low: number, high: number, nulls = false): ColumnBounds {
  return {
    column: 'x',
    range: { low: integralLiteral('integer', low), high: integralLiteral('integer', high) },
    nulls,
  }
}

function output(min: number, max: number, nullCount = 0) {
  return {
    partitionValues: {},
    stats: JSON.stringify({
      numRecords: 10,
      minValues: { x: min },
      maxValues: { x: max },
      nullCount: { x: nullCount },
    }),
  }
}

describe('removedRows', () => {
  it('sorts the ids and refuses a missing or repeated one', () => {
    assert.deepEqual([...removedRows([5n, 1n, 3n], false, [])!.ids], [1n, 3n, 5n])
    assert.equal(removedRows([1n, null], false, []), undefined)
    assert.equal(removedRows([2n, 2n], false, []), undefined)
  })
})

describe('unionOfBounds and boundsPredicate', () => {
  const matcher = createReadMatcher(metadata)
  const admits = (bounds: readonly ColumnBounds[], file: ReturnType<typeof output>) =>
    matcher.statsMayMatch(boundsPredicate(bounds), file)

  it('widens the range over every set and excludes only outputs outside it', () => {
    const union = unionOfBounds([[xRange(10, 12)], [xRange(40, 41)]])
    assert.equal(admits(union, output(0, 9)), false)
    assert.equal(admits(union, output(12, 20)), true)
    assert.equal(admits(union, output(30, 35)), true, 'inside the box, though between the two sets')
    assert.equal(admits(union, output(42, 90)), false)
  })

  it('admits an output with nulls when some removed value is null, and only then', () => {
    const allNull: ColumnBounds = { column: 'x', nulls: true }
    assert.equal(admits([allNull], output(0, 9, 0)), false)
    assert.equal(admits([allNull], output(0, 9, 3)), true)
    const union = unionOfBounds([[allNull], [xRange(5, 6)]])
    assert.deepEqual(
      union.map((b) => [b.column, b.nulls, b.range !== undefined]),
      [['x', true, true]],
    )
    assert.equal(admits(union, output(50, 60, 1)), true)
    assert.equal(admits(union, output(50, 60, 0)), false)
  })

  it('leaves a column unbounded when one set does not bound it', () => {
    const union = unionOfBounds([
      [
        xRange(1, 2),
        { column: 's', range: { low: stringLiteral('a'), high: stringLiteral('b') }, nulls: false },
      ],
      [{ column: 's', range: { low: stringLiteral('c'), high: stringLiteral('d') }, nulls: false }],
    ])
    assert.deepEqual(
      union.map((b) => b.column),
      ['s'],
    )
    assert.equal(admits(union, output(100, 200)), true)
    assert.equal(boundsPredicate([]).kind, 'literal')
  })
})
