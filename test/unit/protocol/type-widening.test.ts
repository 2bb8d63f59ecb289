import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { DataType, StructField } from '../../../src/protocol/schema.js'
import {
  isAutomaticTypeChange,
  isSupportedTypeChange,
  widerTypeForValue,
  withTypeChange,
} from '../../../src/protocol/type-widening.js'

describe('type widening', () => {
  it("allows exactly the protocol's type changes, and the automatic ones less integer to decimal and to double", () => {
    // [from, to, supported (ALTER), automatic (schema evolution)]
    const cases: [DataType, DataType, boolean, boolean][] = [
      ['byte', 'short', true, true],
      ['byte', 'long', true, true],
      ['short', 'integer', true, true],
      ['integer', 'long', true, true],
      ['long', 'integer', false, false],
      ['integer', 'integer', false, false],
      ['float', 'double', true, true],
      ['double', 'float', false, false],
      ['integer', 'double', true, false],
      ['byte', 'double', true, false],
      ['long', 'double', false, false],
      ['date', 'timestamp_ntz', true, true],
      ['date', 'timestamp', false, false],
      ['decimal(10,2)', 'decimal(12,4)', true, true],
      ['decimal(10,2)', 'decimal(20,2)', true, true],
      ['decimal(10,1)', 'decimal(11,3)', false, false],
      ['decimal(10,2)', 'decimal(10,1)', false, false],
      ['integer', 'decimal(10,0)', true, false],
      ['integer', 'decimal(11,1)', true, false],
      ['integer', 'decimal(10,1)', false, false],
      ['long', 'decimal(20,0)', true, false],
      ['long', 'decimal(19,0)', false, false],
      ['string', 'binary', false, false],
      [{ type: 'struct', fields: [] }, 'long', false, false],
    ]
    for (const [from, to, supported, automatic] of cases) {
      const name = `${JSON.stringify(from)} -> ${to}`
      assert.equal(isSupportedTypeChange(from, to), supported, name)
      assert.equal(isAutomaticTypeChange(from, to), automatic, name)
    }
  })

  it('asks for the narrowest wider type that holds a value, never a fraction type for an integer column', () => {
    const cases: [Parameters<typeof widerTypeForValue>[0], unknown, string | undefined][] = [
      ['byte', 127, undefined],
      ['byte', 128, 'short'],
      ['byte', -40000, 'integer'],
      ['integer', 2147483647n, undefined],
      ['integer', 2147483648n, 'long'],
      ['integer', 2 ** 40, 'long'],
      ['long', 2n ** 70n, undefined],
      ['integer', 2.5, undefined],
      ['integer', '5', undefined],
      ['float', 0.5, undefined],
      ['float', 0.1, 'double'],
      ['float', Number.NaN, undefined],
      ['double', 0.1, undefined],
    ]
    for (const [type, value, wider] of cases) {
      assert.equal(widerTypeForValue(type, value), wider, `${type} ${String(value)}`)
    }
  })

  it('records each change after the earlier ones in delta.typeChanges', () => {
    const field: StructField = {
      name: 'e',
      type: 'short',
      nullable: true,
      metadata: { comment: 'c' },
    }
    const twice = withTypeChange(withTypeChange(field, 'integer'), 'long')
    assert.deepEqual(twice, {
      name: 'e',
      type: 'long',
      nullable: true,
      metadata: {
        comment: 'c',
        'delta.typeChanges': [
          { fromType: 'short', toType: 'integer' },
          { fromType: 'integer', toType: 'long' },
        ],
      },
    })
  })
})
