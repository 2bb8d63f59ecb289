import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { InvalidArgumentError, InvalidTableError } from '../../../src/errors/index.js'
import { parseCommitFile } from '../../../src/protocol/action-json.js'
import {
  decodeAddPath,
  encodeAddPath,
  escapePartitionPathName,
  HIVE_DEFAULT_PARTITION,
  type PartitionValue,
  parsePartitionValue,
  partitionDirectory,
  partitionPathSegment,
  serializePartitionValue,
  unescapePartitionPathName,
} from '../../../src/protocol/partition-values.js'
import { type PrimitiveType, parseSchema } from '../../../src/protocol/schema.js'
import { GOLDEN_SKIP, readLogFile } from './golden-logs.js'

describe('parsePartitionValue', () => {
  const cases: [PrimitiveType, string, PartitionValue][] = [
    ['string', 'a b', 'a b'],
    ['string', 'null', 'null'],
    ['long', '9223372036854775807', 9223372036854775807n],
    ['long', '-9007199254740993', -9007199254740993n],
    ['integer', '-2147483648', -2147483648],
    ['short', '32767', 32767],
    ['byte', '-128', -128],
    ['double', '0.0', 0],
    ['double', '1.5E10', 1.5e10],
    ['float', 'NaN', Number.NaN],
    ['double', '-Infinity', Number.NEGATIVE_INFINITY],
    ['boolean', 'true', true],
    ['boolean', 'FALSE', false],
    ['date', '2021-09-08', '2021-09-08'],
    ['date', '2024-02-29', '2024-02-29'],
    ['decimal(1,0)', '0', '0'],
    ['decimal(10,2)', '1.5', '1.50'],
    ['decimal(10,2)', '-0.05', '-0.05'],
    ['decimal(5,0)', '1E+2', '100'],
    ['decimal(38,18)', '12345678901234567890.123456789012345678', '12345678901234567890.123456789012345678'],
    ['timestamp', '2021-09-08 11:11:11', 1631099471000000n],
    ['timestamp', '1970-01-01T00:00:00.123456Z', 123456n],
    ['timestamp', '1970-01-01 00:00:00.1234567', 123456n],
    ['timestamp', '1970-01-01T01:00:00+01:00', 0n],
    ['timestamp', '1969-12-31 23:59:59.999999', -1n],
    ['timestamp_ntz', '2024-09-09 12:34:56.123456', 1725885296123456n],
    ['timestamp', '0001-01-01 00:00:00', -62135596800000000n],
  ]
  for (const [type, raw, expected] of cases) {
    it(`reads ${type} '${raw}'`, () => {
      assert.deepEqual(parsePartitionValue(raw, type), expected)
    })
  }

  it('reads binary as the UTF-8 bytes of the string', () => {
    assert.deepEqual(parsePartitionValue('\u0001\u0002A', 'binary'), new Uint8Array([1, 2, 65]))
    // A backslash is a byte like any other: `a\x41` is five bytes, not `aA`.
    assert.deepEqual(parsePartitionValue('a\\x41', 'binary'), new Uint8Array([0x61, 0x5c, 0x78, 0x34, 0x31]))
    assert.deepEqual(parsePartitionValue('é', 'binary'), new Uint8Array([0xc3, 0xa9]))
  })

  it('reads null and the empty string as null for every type', () => {
    for (const type of [
      'string',
      'long',
      'date',
      'timestamp',
      'decimal(3,1)',
      'boolean',
    ] as PrimitiveType[]) {
      assert.equal(parsePartitionValue(null, type), null)
      assert.equal(parsePartitionValue('', type), null)
    }
  })

  const bad: [PrimitiveType, string][] = [
    ['long', '1.5'],
    ['long', '9223372036854775808'],
    ['integer', '2147483648'],
    ['byte', '128'],
    ['boolean', 'yes'],
    ['date', '2021-02-29'],
    ['date', '2021-13-01'],
    ['timestamp', '2021-09-08 25:00:00'],
    ['timestamp_ntz', '2021-09-08T00:00:00Z'],
    ['decimal(4,2)', '123.45'],
    ['decimal(4,2)', '1.234'],
    ['double', '1,5'],
  ]
  for (const [type, raw] of bad) {
    it(`refuses ${type} '${raw}' as a malformed action naming the column`, () => {
      assert.throws(
        () => parsePartitionValue(raw, type, 'col'),
        (e: unknown) =>
          e instanceof InvalidTableError && e.reason === 'malformed-action' && e.message.includes("'col'"),
      )
    })
  }

  it('refuses non-partitionable types as a caller error', () => {
    assert.throws(() => parsePartitionValue('x', 'variant'), InvalidArgumentError)
  })
})

describe('serializePartitionValue', () => {
  const roundTrips: [PrimitiveType, PartitionValue, string][] = [
    ['string', 'x', 'x'],
    ['long', 2n ** 62n, '4611686018427387904'],
    ['integer', -5, '-5'],
    ['double', 1, '1.0'],
    ['double', 0.1, '0.1'],
    ['float', Number.POSITIVE_INFINITY, 'Infinity'],
    ['boolean', false, 'false'],
    ['date', '1999-12-31', '1999-12-31'],
    ['decimal(10,3)', '1.5', '1.500'],
    ['timestamp', 1631099471000001n, '2021-09-08T11:11:11.000001Z'],
    ['timestamp', -1n, '1969-12-31T23:59:59.999999Z'],
    ['timestamp_ntz', 1725885296000000n, '2024-09-09 12:34:56'],
    ['timestamp_ntz', 1725885296123456n, '2024-09-09 12:34:56.123456'],
    ['binary', new Uint8Array([104, 105]), 'hi'],
  ]
  for (const [type, value, text] of roundTrips) {
    it(`writes ${type} ${String(value)} as '${text}' and reads it back`, () => {
      assert.equal(serializePartitionValue(value, type), text)
      const back = parsePartitionValue(text, type)
      if (type === 'decimal(10,3)') assert.equal(back, '1.500')
      else assert.deepEqual(back, value)
    })
  }

  it('writes null as null and accepts a number for a long', () => {
    assert.equal(serializePartitionValue(null, 'long'), null)
    assert.equal(serializePartitionValue(7, 'long'), '7')
  })

  const bad: [PrimitiveType, PartitionValue][] = [
    ['integer', 2 ** 31],
    ['long', 1.5],
    ['string', 5],
    ['date', '2021-02-30'],
    ['timestamp', 5],
    ['decimal(3,0)', '1000'],
    ['binary', new Uint8Array([0xff])],
  ]
  for (const [type, value] of bad) {
    it(`refuses ${String(value)} for ${type} with InvalidArgumentError`, () => {
      assert.throws(() => serializePartitionValue(value, type, 'c'), InvalidArgumentError)
    })
  }
})

describe('Hive-style partition directories', () => {
  it('escapes the characters Spark escapes and leaves the others', () => {
    assert.equal(escapePartitionPathName('2021-09-08 11:11:11'), '2021-09-08 11%3A11%3A11')
    assert.equal(escapePartitionPathName('a/b=c%d#e?f'), 'a%2Fb%3Dc%25d%23e%3Ff')
    assert.equal(escapePartitionPathName('\u0001{x}[^]'), '%01%7Bx}%5B%5E%5D')
    assert.equal(escapePartitionPathName('h\u00e9llo'), 'h\u00e9llo')
  })

  it('unescapes back to the original', () => {
    for (const s of ['2021-09-08 11:11:11', 'a/b=c%d#e?f', '\u0001{x}[^]', '%zz']) {
      assert.equal(unescapePartitionPathName(escapePartitionPathName(s)), s)
    }
  })

  it('uses __HIVE_DEFAULT_PARTITION__ for null and empty values', () => {
    assert.equal(partitionPathSegment('p', null), `p=${HIVE_DEFAULT_PARTITION}`)
    assert.equal(partitionPathSegment('p', ''), `p=${HIVE_DEFAULT_PARTITION}`)
    assert.equal(partitionDirectory(['a', 'b'], { a: '1', b: null }), `a=1/b=${HIVE_DEFAULT_PARTITION}/`)
    assert.equal(partitionDirectory([], {}), '')
  })
})

describe('add paths', () => {
  it('decodes a log path exactly once', () => {
    assert.deepEqual(decodeAddPath('as_timestamp=2021-09-08%2011%253A11%253A11/part-0.parquet'), {
      kind: 'relative',
      key: 'as_timestamp=2021-09-08 11%3A11%3A11/part-0.parquet',
    })
  })

  it('encodes a key so that decoding gives it back, as Spark writes it', () => {
    const key = 'as_timestamp=2021-09-08 11%3A11%3A11/part-0 \u00e9.parquet'
    const encoded = encodeAddPath(key)
    assert.equal(encoded, 'as_timestamp=2021-09-08%2011%253A11%253A11/part-0%20%C3%A9.parquet')
    assert.deepEqual(decodeAddPath(encoded), { kind: 'relative', key })
  })

  const escapes = [
    '../outside.parquet',
    'a/../../b.parquet',
    './a.parquet',
    'a//b.parquet',
    'a/%2E%2E/%2E%2E/b',
    'a%5Cb',
    '%00',
  ]
  for (const p of escapes) {
    it(`refuses '${p}' as an invalid path`, () => {
      assert.throws(
        () => decodeAddPath(p),
        (e: unknown) => e instanceof InvalidTableError && e.reason === 'invalid-path' && e.path === p,
      )
    })
  }

  it('refuses malformed percent-encoding, also in absolute URIs', () => {
    assert.throws(() => decodeAddPath('a%zz.parquet'), InvalidTableError)
    assert.throws(() => decodeAddPath('file:/tmp/folder&with%special char/x'), InvalidTableError)
  })

  it('returns absolute URIs and paths as absolute', () => {
    assert.deepEqual(decodeAddPath('s3://bucket/t/part-0.parquet'), {
      kind: 'absolute',
      uri: 's3://bucket/t/part-0.parquet',
    })
    assert.deepEqual(decodeAddPath('/data/t/part-0.parquet'), {
      kind: 'absolute',
      uri: '/data/t/part-0.parquet',
    })
  })

  it('relativizes an absolute path under the table root, whatever the file URI form', () => {
    for (const p of ['file:/data/t/p%3D1/f.parquet', 'file:///data/t/p%3D1/f.parquet']) {
      assert.deepEqual(decodeAddPath(p, { tableRoot: 'file:///data/t' }), {
        kind: 'relative',
        key: 'p=1/f.parquet',
      })
    }
    assert.equal(decodeAddPath('file:/data/other/f.parquet', { tableRoot: 'file:/data/t/' }).kind, 'absolute')
  })
})

describe('golden partition values', { skip: GOLDEN_SKIP }, () => {
  it('types every partition value of data-reader-partition-values and re-serializes to an equal value', () => {
    const actions = parseCommitFile(readLogFile('data-reader-partition-values', '00000000000000000000.json'))
    const meta = actions.find((a) => 'metaData' in a)
    assert.ok(meta && 'metaData' in meta && meta.metaData.schemaString)
    const schema = parseSchema(meta.metaData.schemaString)
    const typeOf = new Map(schema.fields.map((f) => [f.name, f.type as PrimitiveType]))
    const adds = actions.flatMap((a) => ('add' in a ? [a.add] : []))
    assert.equal(adds.length, 3)
    const zero = adds.find((a) => a.partitionValues.as_int === '0')
    assert.ok(zero)
    for (const add of adds) {
      assert.equal(decodeAddPath(add.path).kind, 'relative')
      for (const [col, raw] of Object.entries(add.partitionValues)) {
        const type = typeOf.get(col) as PrimitiveType
        const v = parsePartitionValue(raw, type, col)
        assert.deepEqual(parsePartitionValue(serializePartitionValue(v, type, col), type, col), v, col)
      }
    }
    const typed = Object.fromEntries(
      Object.entries(zero.partitionValues).map(([c, raw]) => [
        c,
        parsePartitionValue(raw, typeOf.get(c) as PrimitiveType),
      ]),
    )
    assert.deepEqual(typed, {
      as_big_decimal: '0',
      as_int: 0,
      as_byte: 0,
      as_long: 0n,
      as_date: '2021-09-08',
      as_string: '0',
      as_timestamp: 1631099471000000n,
      as_float: 0,
      as_short: 0,
      as_boolean: true,
      as_string_lit_null: 'null',
      as_double: 0,
    })
    const key = (decodeAddPath(zero.path) as { key: string }).key
    assert.ok(key.includes('as_timestamp=2021-09-08 11%3A11%3A11/'), key)
  })
})
