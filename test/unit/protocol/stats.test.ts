import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseStats, serializeStats, statValue } from '../../../src/protocol/stats.js'

describe('parseStats', () => {
  it('reads record count, nested bounds, null counts and tightBounds', () => {
    const stats = parseStats(
      '{"numRecords":50,"minValues":{"id":0,"s":{"a":"x"},"t":"2000-01-01T08:00:00.000Z"},"maxValues":{"id":9223372036854775807,"d":1.5},"nullCount":{"id":0,"s":{"a":2}},"tightBounds":false}',
    )
    assert.deepEqual(stats, {
      numRecords: 50n,
      minValues: { id: 0, s: { a: 'x' }, t: '2000-01-01T08:00:00.000Z' },
      maxValues: { id: 9223372036854775807n, d: 1.5 },
      nullCount: { id: 0, s: { a: 2 } },
      tightBounds: false,
    })
    assert.equal(statValue(stats?.nullCount, ['s', 'a']), 2)
    assert.equal(statValue(stats?.minValues, ['s', 'missing']), undefined)
    assert.equal(statValue(stats?.minValues, ['id', 'deeper']), undefined)
  })

  it('keeps a record count above 2^53 exact', () => {
    assert.equal(parseStats('{"numRecords":9007199254740993}')?.numRecords, 9007199254740993n)
  })

  it('reads stats without numRecords as stats without a count', () => {
    assert.deepEqual(parseStats('{"minValues":{"a":1}}'), { minValues: { a: 1 } })
  })

  const unusable = [
    undefined,
    '',
    '{"numRecords":',
    '[1]',
    '{"numRecords":"5"}',
    '{"numRecords":-1}',
    '{"numRecords":1.5}',
    '{"numRecords":1,"minValues":[1]}',
    '{"numRecords":1,"tightBounds":"yes"}',
  ]
  for (const text of unusable) {
    it(`treats ${JSON.stringify(text)} as no usable stats`, () => {
      assert.equal(parseStats(text), undefined)
    })
  }
})

describe('serializeStats', () => {
  it('round-trips, omitting absent parts', () => {
    const text =
      '{"numRecords":3,"minValues":{"a":1},"maxValues":{"a":12345678901234567890},"nullCount":{"a":0}}'
    const stats = parseStats(text)
    assert.ok(stats)
    assert.equal(serializeStats(stats), text)
    assert.equal(serializeStats({ numRecords: 1n, tightBounds: true }), '{"numRecords":1,"tightBounds":true}')
  })
})
