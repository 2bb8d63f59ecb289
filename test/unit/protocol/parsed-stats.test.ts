/**
 * The typed statistics and partition values of checkpoints (`add.stats_parsed`,
 * `add.partitionValues_parsed`): their struct types per table schema, and exact conversion to
 * and from the JSON forms, whatever text or number form a Parquet decoder hands over.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  addNeedsParsedColumns,
  completeAddFromParsed,
  parsedColumnsLayout,
  parsedFromPartitionValues,
  parsedFromStatsJson,
  partitionValuesFromParsed,
  statsJsonFromParsed,
} from '../../../src/protocol/parsed-stats.js'
import { parseDdlSchema } from '../../../src/protocol/schema.js'
import { parseStats } from '../../../src/protocol/stats.js'

const schema = parseDdlSchema(
  'id long, i int, f float, d double, dec decimal(38,18), s string, dt date, ts timestamp, tsn timestamp_ntz, ' +
    'flag boolean, bin binary, nested struct<a: int, b: struct<c: string, flag: boolean>>, xs array<int>, ' +
    'part string, pday date',
)
const layout = parsedColumnsLayout(schema, ['part', 'pday'], 'none')

function typeText(t: unknown): string {
  if (typeof t === 'string') return t
  const s = t as { type: string; fields?: { name: string; type: unknown }[] }
  return `struct<${(s.fields ?? []).map((f) => `${f.name}: ${typeText(f.type)}`).join(', ')}>`
}

describe('parsed-column types', () => {
  it('type min/max like the data columns, null counts as longs, partitions apart', () => {
    assert.equal(
      typeText(layout.statsType),
      'struct<numRecords: long, ' +
        'minValues: struct<id: long, i: integer, f: float, d: double, dec: decimal(38,18), s: string, dt: date, ts: timestamp, tsn: timestamp_ntz, nested: struct<a: integer, b: struct<c: string>>>, ' +
        'maxValues: struct<id: long, i: integer, f: float, d: double, dec: decimal(38,18), s: string, dt: date, ts: timestamp, tsn: timestamp_ntz, nested: struct<a: integer, b: struct<c: string>>>, ' +
        'nullCount: struct<id: long, i: long, f: long, d: long, dec: long, s: long, dt: long, ts: long, tsn: long, flag: long, bin: long, nested: struct<a: long, b: struct<c: long, flag: long>>, xs: long>, ' +
        'tightBounds: boolean>',
    )
    assert.equal(typeText(layout.partitionValuesType), 'struct<part: string, pday: date>')
    assert.equal(parsedColumnsLayout(schema, [], 'none').partitionValuesType, undefined)
  })

  it('use physical names under column mapping', () => {
    const mapped = parseDdlSchema('a long, p string')
    const withNames = {
      type: 'struct' as const,
      fields: mapped.fields.map((f, i) => ({
        ...f,
        metadata: { 'delta.columnMapping.physicalName': `col-${i}`, 'delta.columnMapping.id': i + 1 },
      })),
    }
    const l = parsedColumnsLayout(withNames, ['p'], 'name')
    assert.match(typeText(l.statsType), /minValues: struct<col-0: long>/)
    assert.equal(typeText(l.partitionValuesType), 'struct<col-1: string>')
  })
})

describe('stats JSON to stats_parsed and back', () => {
  const json =
    '{"numRecords":3,"minValues":{"id":-9007199254740993,"i":-5,"f":1.100000023841858,"d":0.30000000000000004,' +
    '"dec":-12345678901234567890.123456789012345678,"s":"a\\"b","dt":"2024-02-29","ts":"2024-01-01T10:00:00.123Z",' +
    '"tsn":"2024-01-01T10:00:00.123","nested":{"a":1,"b":{"c":"x"}}},' +
    '"maxValues":{"id":9007199254740993,"i":5,"f":2.5,"d":1e300,"dec":12345678901234567890.123456789012345678,' +
    '"s":"zz\\u007f","dt":"9999-12-31","ts":"2024-01-02T00:00:00.000Z","tsn":"2024-01-02T00:00:00.000",' +
    '"nested":{"a":2,"b":{"c":"y"}}},' +
    '"nullCount":{"id":0,"i":1,"f":0,"d":0,"dec":0,"s":0,"dt":0,"ts":0,"tsn":0,"flag":3,"bin":0,"nested":{"a":0,"b":{"c":0,"flag":1}},"xs":2},' +
    '"tightBounds":false}'

  it('keep every value exactly through the struct, as a decoder returns it in text', () => {
    const parsed = parsedFromStatsJson(json, layout.statsType)
    assert.ok(parsed)
    // What the Parquet writer is handed: integers exact, decimals as text with the scale.
    const min = parsed.minValues as Record<string, unknown>
    assert.equal(min.id, -9007199254740993n)
    assert.equal(min.dec, '-12345678901234567890.123456789012345678')
    assert.equal(min.ts, '2024-01-01T10:00:00.123000Z')
    assert.equal(min.tsn, '2024-01-01 10:00:00.123000')
    // What DuckDB gives back once every leaf is cast to text.
    const asText = (v: unknown): unknown =>
      v !== null && typeof v === 'object'
        ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, asText(x)]))
        : String(v)
    const decoded = asText(parsed) as Record<string, Record<string, unknown>>
    ;(decoded.minValues as Record<string, unknown>).f = '1.1'
    ;(decoded.minValues as Record<string, unknown>).ts = '2024-01-01 10:00:00.123+00'
    ;(decoded.minValues as Record<string, unknown>).tsn = '2024-01-01 10:00:00.123'
    const back = statsJsonFromParsed(decoded, layout.statsType)
    assert.deepEqual(parseStats(back), parseStats(json))
    assert.match(back ?? '', /"dec":-12345678901234567890\.123456789012345678/)
  })

  it('accept numbers, bigints and booleans as other decoders give them', () => {
    const back = statsJsonFromParsed(
      {
        numRecords: 2n,
        minValues: { id: 1, i: 2, dt: '2024-01-01', ts: '2024-01-01T00:00:00.000001Z', dec: 1.5 },
        maxValues: { id: 10n, ts: '2024-01-01 00:00:00.000001', dec: '2.50' },
        nullCount: { id: 0n, nested: { a: 1 } },
        tightBounds: true,
      },
      layout.statsType,
    )
    assert.equal(
      back,
      '{"numRecords":2,"minValues":{"id":1,"i":2,"dec":1.500000000000000000,"dt":"2024-01-01","ts":"2024-01-01T00:00:00.000Z"},' +
        '"maxValues":{"id":10,"dec":2.500000000000000000,"ts":"2024-01-01T00:00:00.001Z"},' +
        '"nullCount":{"id":0,"nested":{"a":1}},"tightBounds":true}',
    )
  })

  it('drop values that do not fit their column, keep the rest', () => {
    const back = statsJsonFromParsed(
      {
        numRecords: '4',
        minValues: { id: 'abc', i: '99999999999', d: 'nan', f: 'inf', dt: '2024-02-30', s: '' },
        maxValues: { d: '-inf', dec: '1.0000000000000000001', ts: 'yesterday', tsn: '0000-12-31 23:59:59' },
        nullCount: { id: '-1', i: '2' },
        tightBounds: 'maybe',
      },
      layout.statsType,
    )
    assert.equal(back, '{"numRecords":4,"minValues":{"s":""},"nullCount":{"i":2}}')
  })

  it('give no statistics for an absent struct or a bad record count', () => {
    assert.equal(statsJsonFromParsed(null, layout.statsType), undefined)
    assert.equal(statsJsonFromParsed({}, layout.statsType), undefined)
    assert.equal(statsJsonFromParsed({ numRecords: '-1', tightBounds: 'true' }, layout.statsType), undefined)
    assert.equal(parsedFromStatsJson('{not json', layout.statsType), undefined)
    assert.equal(parsedFromStatsJson('{"numRecords":-3}', layout.statsType), undefined)
  })

  it('leave out JSON statistics of columns the table no longer has', () => {
    const parsed = parsedFromStatsJson(
      '{"numRecords":1,"minValues":{"gone":1,"id":3},"nullCount":{"gone":0}}',
      layout.statsType,
    )
    assert.deepEqual(parsed, { numRecords: 1n, minValues: { id: 3n } })
  })
})

describe('partition values to partitionValues_parsed and back', () => {
  it('round-trip typed values, nulls included', () => {
    const parsed = parsedFromPartitionValues({ part: 'a=b', pday: null }, layout.partitionValuesType!)
    assert.deepEqual(parsed, { part: 'a=b', pday: null })
    assert.deepEqual(partitionValuesFromParsed(parsed, layout.partitionValuesType!), {
      part: 'a=b',
      pday: null,
    })
    assert.deepEqual(partitionValuesFromParsed({ pday: '2024-05-06' }, layout.partitionValuesType!), {
      part: null,
      pday: '2024-05-06',
    })
  })

  it('refuse to guess a value it cannot restore exactly', () => {
    const s = parseDdlSchema('x long, b binary')
    const l = parsedColumnsLayout(s, ['b'], 'none')
    assert.equal(partitionValuesFromParsed({ b: 'abc' }, l.partitionValuesType!), undefined)
    assert.equal(
      partitionValuesFromParsed({ part: 1, pday: 'not a date' }, layout.partitionValuesType!),
      undefined,
    )
  })
})

describe('completing a checkpoint add from its parsed columns', () => {
  it('fills missing JSON forms and never overrides present ones', () => {
    const add = {
      path: 'f.parquet',
      stats_parsed: { numRecords: '7', nullCount: { id: '0' } },
      partitionValues_parsed: { part: 'p', pday: '2024-01-01' },
    }
    assert.equal(addNeedsParsedColumns(add), true)
    const done = completeAddFromParsed(add, layout)
    assert.equal(done.stats, '{"numRecords":7,"nullCount":{"id":0}}')
    assert.deepEqual(done.partitionValues, { part: 'p', pday: '2024-01-01' })
    const withJson = { ...add, stats: '{"numRecords":1}', partitionValues: { part: 'q', pday: null } }
    assert.equal(addNeedsParsedColumns(withJson), false)
    assert.deepEqual(completeAddFromParsed(withJson, layout).stats, '{"numRecords":1}')
  })
})
