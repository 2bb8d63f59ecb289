import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import {
  formatStatsTimestamp,
  truncateMaxString,
  truncateMinString,
} from '../../../src/engine-default/file-stats.js'

const MAX = '\u{10FFFF}'
const DEL = '\u007F'

function utf8Compare(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'))
}

describe('string bounds', () => {
  const maxCases: [string, string, string | undefined][] = [
    ['shorter than the prefix stays', 'abcd', 'abcd'],
    ['exactly the prefix stays', 'abcdef', 'abcdef'],
    ['an ASCII character after the prefix becomes DEL', 'abcdefg', `abcdef${DEL}`],
    ['DEL itself after the prefix is beaten only by U+10FFFF', `abcdef${DEL}`, `abcdef${MAX}`],
    ['a non-ASCII character after the prefix becomes U+10FFFF', 'abcdef\u00e9', `abcdef${MAX}`],
    ['U+10FFFF after the prefix extends it', `abcdef${MAX}x`, `abcdef${MAX}${DEL}`],
    ['a value ending in U+10FFFF within the extension stays', `abcdef${MAX}`, `abcdef${MAX}`],
    [
      'code points, not UTF-16 units, are counted',
      '\u{1F600}\u{1F600}\u{1F600}\u{1F600}\u{1F600}\u{1F600}\u{1F600}',
      `\u{1F600}\u{1F600}\u{1F600}\u{1F600}\u{1F600}\u{1F600}${MAX}`,
    ],
    [
      'an extension up to twice the prefix is allowed',
      `aaaaaa${MAX.repeat(6)}b`,
      `aaaaaa${MAX.repeat(6)}${DEL}`,
    ],
    ['no bound when U+10FFFF runs past twice the prefix', `aaaaaa${MAX.repeat(7)}b`, undefined],
  ]
  for (const [name, input, expected] of maxCases) {
    it(`max: ${name}`, () => {
      assert.equal(truncateMaxString(input, 6), expected)
    })
  }

  const minCases: [string, string, string][] = [
    ['shorter than the prefix stays', 'abc', 'abc'],
    ['longer is cut to the prefix', 'abcdefgh', 'abcdef'],
    [
      'surrogate pairs are never split',
      '\u{1F600}\u{1F600}\u{1F600}\u{1F600}\u{1F600}\u{1F600}\u{1F600}',
      '\u{1F600}\u{1F600}\u{1F600}\u{1F600}\u{1F600}\u{1F600}',
    ],
  ]
  for (const [name, input, expected] of minCases) {
    it(`min: ${name}`, () => {
      assert.equal(truncateMinString(input, 6), expected)
    })
  }

  it('bounds stay bounds in UTF-8 byte order for any string', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 80 }), fc.integer({ min: 1, max: 40 }), (s, n) => {
        const lo = truncateMinString(s, n)
        const hi = truncateMaxString(s, n)
        assert.ok(utf8Compare(lo, s) <= 0, 'min bound above the value')
        assert.ok(Array.from(lo).length <= n || lo === s)
        if (hi !== undefined) {
          assert.ok(utf8Compare(hi, s) >= 0, 'max bound below the value')
          assert.ok(Array.from(hi).length <= 2 * n + 1 || hi === s)
        }
      }),
      { numRuns: 2000 },
    )
  })
})

describe('timestamp bounds', () => {
  const cases: [string, bigint, boolean, boolean, string | undefined][] = [
    ['a minimum drops the microseconds', 1704067200123456n, false, true, '2024-01-01T00:00:00.123Z'],
    [
      'a maximum rounds up to the next millisecond',
      1704067200123456n,
      true,
      true,
      '2024-01-01T00:00:00.124Z',
    ],
    ['a whole millisecond is kept as is', 1704067200123000n, true, true, '2024-01-01T00:00:00.123Z'],
    ['before the epoch a minimum rounds down', -1n, false, true, '1969-12-31T23:59:59.999Z'],
    ['before the epoch a maximum rounds up', -1n, true, true, '1970-01-01T00:00:00.000Z'],
    ['timestamp_ntz has no zone suffix', 86_400_000_001n, true, false, '1970-01-02T00:00:00.001'],
    ['a maximum that would leave year 9999 is dropped', 253402300799999999n, true, true, undefined],
    ['the first instant of year 0001 is kept', -62135596800000000n, false, true, '0001-01-01T00:00:00.000Z'],
  ]
  for (const [name, micros, up, zone, expected] of cases) {
    it(name, () => {
      assert.equal(formatStatsTimestamp(micros, up, zone), expected)
    })
  }

  it('agrees with Date for every instant of years 1970..9999', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 253402300799998999n }), fc.boolean(), (micros, up) => {
        const floor = micros / 1000n
        const ms = up && micros % 1000n !== 0n ? floor + 1n : floor
        assert.equal(formatStatsTimestamp(micros, up, true), new Date(Number(ms)).toISOString())
      }),
      { numRuns: 2000 },
    )
  })
})
