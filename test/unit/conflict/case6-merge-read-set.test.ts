import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  encodeKeyTuple,
  isEligibleKeyType,
  MergeKeySetBuilder,
} from '../../../src/conflict/case6-merge-read-set.js'
import { toSql } from '../../../src/expressions/to-sql.js'
import { captureMergeReadSet } from '../../../src/ops/merge-source-keys.js'

describe('Case 6 key encoding', () => {
  it('keeps long keys around 2^53 apart, whether given as bigint or decimal text', () => {
    const cols = [{ name: 'id', type: 'long' }] as const
    const a = encodeKeyTuple([2n ** 53n], cols)
    const b = encodeKeyTuple([2n ** 53n + 1n], cols)
    assert.notEqual(a, b)
    assert.equal(encodeKeyTuple(['9007199254740993'], cols), b)
  })

  it('refuses a JS number that is not a safe integer for a long key', () => {
    assert.equal(encodeKeyTuple([2 ** 53 + 2], [{ name: 'id', type: 'long' }]), undefined)
  })

  it('encodes decimals at the column scale: 1.5 and 1.50 are one key, 1.555 is no value of decimal(10,2)', () => {
    const cols = [{ name: 'd', type: 'decimal(10,2)' }] as const
    assert.equal(encodeKeyTuple(['1.5'], cols), encodeKeyTuple(['1.50'], cols))
    assert.notEqual(encodeKeyTuple(['1.5'], cols), encodeKeyTuple(['1.05'], cols))
    assert.equal(encodeKeyTuple(['1.555'], cols), undefined)
  })

  it('reads dates and timestamps as the data plane returns them and as a source gives them', () => {
    assert.equal(
      encodeKeyTuple(['2024-02-29'], [{ name: 'd', type: 'date' }]),
      encodeKeyTuple([new Date(Date.UTC(2024, 1, 29))], [{ name: 'd', type: 'date' }]),
    )
    const ts = [{ name: 't', type: 'timestamp' }] as const
    assert.equal(
      encodeKeyTuple(['2024-02-29T10:00:00.000001Z'], ts),
      encodeKeyTuple([1_709_200_800_000_001n], ts),
    )
  })

  it('length-prefixes tuples so that column boundaries cannot shift', () => {
    const cols = [
      { name: 'a', type: 'string' },
      { name: 'b', type: 'string' },
    ] as const
    assert.notEqual(encodeKeyTuple(['ab', 'c'], cols), encodeKeyTuple(['a', 'bc'], cols))
  })

  it('a NULL in any key column gives no key', () => {
    const cols = [
      { name: 'a', type: 'long' },
      { name: 'b', type: 'string' },
    ] as const
    assert.equal(encodeKeyTuple([1n, null], cols), null)
  })

  it('floating-point keys are not eligible', () => {
    assert.equal(isEligibleKeyType('double'), false)
    assert.equal(isEligibleKeyType('float'), false)
    assert.equal(isEligibleKeyType('decimal(12,2)'), true)
    assert.equal(encodeKeyTuple([1.5], [{ name: 'x', type: 'double' }]), undefined)
  })
})

describe('Case 6 key set', () => {
  it('is exact up to the cap', () => {
    const b = new MergeKeySetBuilder(10, 3)
    for (const k of ['1:a', '1:b', '1:a']) b.add(k)
    const set = b.build()
    assert.equal(set.size, 2)
    assert.equal(set.approximate, false)
    assert.equal(set.probe('1:a'), 'present')
    assert.equal(set.probe('1:c'), 'absent')
  })

  it('past the cap a Bloom filter answers maybe for every added key and rarely for others', () => {
    const n = 20_000
    const b = new MergeKeySetBuilder(100, n)
    for (let i = 0; i < n; i++) b.add(`k${i}`)
    const set = b.build()
    assert.equal(set.approximate, true)
    for (let i = 0; i < n; i++) assert.equal(set.probe(`k${i}`), 'maybe')
    let falsePositives = 0
    for (let i = n; i < 2 * n; i++) if (set.probe(`k${i}`) !== 'absent') falsePositives++
    assert.ok(falsePositives < n * 0.05, `${falsePositives} false positives of ${n}`)
  })
})

describe('Case 6 read set of a MERGE', () => {
  const plan = {
    keys: [{ target: 'id', targetType: 'long', source: 'id' }],
    sourceColumns: [{ name: 'id', type: 'long' }],
    targetOnly: undefined,
    whenNotMatchedBySource: [],
  } as const
  const options = { maxExact: 1_000_000, inSetThreshold: 100_000 }
  const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ id: BigInt(10 + 2 * i) }))

  it('pushes a few keys to the row reads as their IN-set', () => {
    const read = captureMergeReadSet(plan, rows(3), options)!
    assert.equal(toSql(read.keyFilter), 'id IN (10L, 12L, 14L)')
    assert.equal(toSql(read.rowFilter!), 'id IN (10L, 12L, 14L)')
  })

  it('widens many keys to their range for the row reads, keeping the IN-set for the statistics', () => {
    const read = captureMergeReadSet(plan, rows(1000), options)!
    assert.match(toSql(read.keyFilter), /^id IN \(10L, 12L, /)
    assert.equal(toSql(read.rowFilter!), 'id BETWEEN 10L AND 2008L')
    assert.equal(read.keys.probe(encodeKeyTuple([2008n], [{ name: 'id', type: 'long' }])!), 'present')
    assert.equal(read.keys.probe(encodeKeyTuple([2007n], [{ name: 'id', type: 'long' }])!), 'absent')
  })
})
