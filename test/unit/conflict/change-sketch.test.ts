import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  CHANGE_SKETCH_FIELD,
  CHANGE_SKETCH_FORMAT,
  changeSketchValue,
  MAX_SKETCH_KEYS,
  readChangeSketch,
  sameKeyColumns,
} from '../../../src/conflict/change-sketch.js'

const COLUMNS = [
  { name: 'a', type: 'long' },
  { name: 'b', type: 'string' },
] as const

const valid = (): Record<string, unknown> => ({
  format: CHANGE_SKETCH_FORMAT,
  columns: COLUMNS.map((c) => ({ ...c })),
  keys: ['1:11:x'],
})

describe('change sketch', () => {
  it('reads back what it writes, through JSON', () => {
    const written = changeSketchValue({ columns: COLUMNS, keys: ['1:11:x', '1:21:y'] })
    const read = readChangeSketch(
      JSON.parse(JSON.stringify({ operation: 'MERGE', [CHANGE_SKETCH_FIELD]: written })),
    )
    assert.deepEqual(read, { columns: COLUMNS, keys: ['1:11:x', '1:21:y'] })
  })

  // Every malformed form is ignored (the rows are read instead), never trusted and never thrown.
  const malformed: readonly [string, unknown][] = [
    ['absent', undefined],
    ['null', null],
    ['a string', 'keys'],
    ['an array', [valid()]],
    ['another format', { ...valid(), format: 'delta-rlc.merge-keys/2' }],
    ['no format', { columns: valid().columns, keys: [] }],
    ['no columns', { ...valid(), columns: [] }],
    ['columns not an array', { ...valid(), columns: { name: 'a', type: 'long' } }],
    ['a column without a type', { ...valid(), columns: [{ name: 'a' }] }],
    ['a column with an empty name', { ...valid(), columns: [{ name: '', type: 'long' }] }],
    ['a column that is null', { ...valid(), columns: [null] }],
    ['keys not an array', { ...valid(), keys: '1:11:x' }],
    ['a key that is a number', { ...valid(), keys: ['1:11:x', 7] }],
    [
      'more keys than the cap',
      { ...valid(), keys: Array.from({ length: MAX_SKETCH_KEYS + 1 }, (_, i) => `${i}`) },
    ],
  ]
  for (const [name, value] of malformed) {
    it(`ignores a sketch that is ${name}`, () => {
      assert.equal(readChangeSketch({ operation: 'MERGE', [CHANGE_SKETCH_FIELD]: value }), undefined)
    })
  }

  it('ignores a commit without commitInfo, and a sketch on a commit that is not a MERGE', () => {
    assert.equal(readChangeSketch(undefined), undefined)
    const sketch = changeSketchValue({ columns: COLUMNS, keys: [] })
    assert.notEqual(readChangeSketch({ operation: 'MERGE', [CHANGE_SKETCH_FIELD]: sketch }), undefined)
    assert.equal(readChangeSketch({ operation: 'DELETE', [CHANGE_SKETCH_FIELD]: sketch }), undefined)
    assert.equal(readChangeSketch({ [CHANGE_SKETCH_FIELD]: sketch }), undefined)
  })

  it('compares key columns by position, name and type', () => {
    assert.equal(sameKeyColumns(COLUMNS, [...COLUMNS]), true)
    assert.equal(sameKeyColumns(COLUMNS, [COLUMNS[1], COLUMNS[0]]), false)
    assert.equal(sameKeyColumns(COLUMNS, [COLUMNS[0]]), false)
    assert.equal(sameKeyColumns(COLUMNS, [COLUMNS[0], { name: 'b', type: 'binary' }]), false)
  })
})
