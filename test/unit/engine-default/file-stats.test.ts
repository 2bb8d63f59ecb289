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

/** The bounds as they were computed over `Array.from` of the whole value: the semantics kept. */
function referenceMin(s: string, n: number): string {
  const cps = Array.from(s)
  return cps.length <= n ? s : cps.slice(0, n).join('')
}

function referenceMax(s: string, n: number): string | undefined {
  const cps = Array.from(s)
  if (cps.length <= n) return s
  for (let len = n; len <= 2 * n; len++) {
    if (len >= cps.length) return s
    const next = (cps[len] as string).codePointAt(0) as number
    if (next === 0x10ffff) continue
    return cps.slice(0, len).join('') + String.fromCodePoint(next < 0x7f ? 0x7f : 0x10ffff)
  }
  return undefined
}

describe('string bounds walk only the prefix', () => {
  // Units that make the cases that matter likely: ASCII below and at DEL, a BMP letter, both
  // halves of a surrogate pair (so pairs, and lone surrogates, appear), and U+10FFFF.
  const unit = fc.constantFrom('a', 'z', DEL, '\u00e9', '\ud83d', '\ude00', MAX, '\uffff')
  const text = fc.array(unit, { maxLength: 60 }).map((units) => units.join(''))

  it('give exactly the bounds of the whole-value computation, surrogates included', () => {
    fc.assert(
      fc.property(
        fc.oneof(text, fc.string({ unit: 'binary', maxLength: 60 })),
        fc.integer({ min: 1, max: 24 }),
        (s, n) => {
          assert.equal(truncateMinString(s, n), referenceMin(s, n))
          assert.equal(truncateMaxString(s, n), referenceMax(s, n))
        },
      ),
      { numRuns: 5000 },
    )
  })

  it('a pair at the cut is kept whole, a lone surrogate counts as one code point', () => {
    assert.equal(truncateMinString('ab\u{1F600}c', 3), 'ab\u{1F600}')
    assert.equal(truncateMinString('ab\ud83dc', 3), 'ab\ud83d')
    assert.equal(truncateMaxString('ab\ude00cd', 3), `ab\ude00${DEL}`)
  })

  it('a 64 MiB value is bounded in microseconds, not by its length', () => {
    const big = 'x'.repeat(64 * 2 ** 20)
    // Flattened first: V8 builds repeat() as a tree that the first read of a unit flattens.
    assert.equal(big.charCodeAt(big.length - 1), 0x78)
    const started = performance.now()
    assert.equal(truncateMinString(big), 'x'.repeat(32))
    assert.equal(truncateMaxString(big), `${'x'.repeat(32)}${DEL}`)
    assert.ok(performance.now() - started < 50, `${performance.now() - started} ms`)
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
