import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { InvalidArgumentError, InvalidTableError } from '../../../src/errors/index.js'
import { parseCommitFile } from '../../../src/protocol/action-json.js'
import {
  decimalParts,
  fieldById,
  fieldByName,
  forEachField,
  parseDdlSchema,
  parseSchema,
  physicalName,
  type StructType,
  serializeSchema,
  toStructType,
} from '../../../src/protocol/schema.js'
import { GOLDEN_SKIP, goldenTables, logFileNames, readLogFile } from './golden-logs.js'

describe('parseSchema / serializeSchema', () => {
  it('parses nested structs, arrays, maps, decimals and field metadata', () => {
    const text =
      '{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{"delta.columnMapping.id":1,"delta.identity.highWaterMark":12345678901234567890}},{"name":"d","type":"decimal(10,2)","nullable":true,"metadata":{}},{"name":"s","type":{"type":"struct","fields":[{"name":"a","type":"integer","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}},{"name":"xs","type":{"type":"array","elementType":"timestamp_ntz","containsNull":true},"nullable":true,"metadata":{}},{"name":"m","type":{"type":"map","keyType":"string","valueType":{"type":"array","elementType":"binary","containsNull":false},"valueContainsNull":true},"nullable":true,"metadata":{"comment":"x"}}]}'
    const schema = parseSchema(text)
    assert.equal(schema.fields.length, 5)
    assert.deepEqual(schema.fields[0]?.metadata, {
      'delta.columnMapping.id': 1,
      'delta.identity.highWaterMark': 12345678901234567890n,
    })
    assert.deepEqual(decimalParts(schema.fields[1]?.type ?? 'long'), { precision: 10, scale: 2 })
    assert.equal(serializeSchema(schema), text)
    assert.ok(Object.isFrozen(schema.fields[2]?.type))
  })

  const bad: [string, string][] = [
    ['not JSON', '{"type":'],
    ['not a struct', '{"type":"array","elementType":"long","containsNull":true}'],
    [
      'unknown type',
      '{"type":"struct","fields":[{"name":"x","type":"interval","nullable":true,"metadata":{}}]}',
    ],
    [
      'decimal precision above 38',
      '{"type":"struct","fields":[{"name":"x","type":"decimal(39,2)","nullable":true,"metadata":{}}]}',
    ],
    ['field without name', '{"type":"struct","fields":[{"type":"long","nullable":true,"metadata":{}}]}'],
    [
      'array without containsNull',
      '{"type":"struct","fields":[{"name":"x","type":{"type":"array","elementType":"long"},"nullable":true,"metadata":{}}]}',
    ],
  ]
  for (const [name, text] of bad) {
    it(`refuses a schema with ${name} as a malformed table`, () => {
      assert.throws(
        () => parseSchema(text, { path: '_delta_log/0.json', version: 0n }),
        (e: unknown) =>
          e instanceof InvalidTableError && e.reason === 'malformed-action' && e.message.includes('0.json'),
      )
    })
  }

  it('validates caller schema objects with InvalidArgumentError, including case-insensitive duplicates', () => {
    const ok = toStructType({
      type: 'struct',
      fields: [{ name: 'a', type: 'long', nullable: true, metadata: {} }],
    })
    assert.equal(ok.fields[0]?.name, 'a')
    assert.throws(
      () =>
        toStructType({
          type: 'struct',
          fields: [
            { name: 'Id', type: 'long' },
            { name: 'id', type: 'long' },
          ],
        }),
      (e: unknown) => e instanceof InvalidArgumentError && /differ only by case/.test(e.message),
    )
    assert.throws(() => toStructType('long'), InvalidArgumentError)
  })
})

describe('parseDdlSchema', () => {
  it('parses the documented example with aliases, nesting and NOT NULL', () => {
    const schema = parseDdlSchema(
      'id long not null, name string, value double, part int, d decimal(10,2), s struct<a: int, b: string>, xs array<long>, m map<string,int>',
    )
    const expected: StructType = {
      type: 'struct',
      fields: [
        { name: 'id', type: 'long', nullable: false, metadata: {} },
        { name: 'name', type: 'string', nullable: true, metadata: {} },
        { name: 'value', type: 'double', nullable: true, metadata: {} },
        { name: 'part', type: 'integer', nullable: true, metadata: {} },
        { name: 'd', type: 'decimal(10,2)', nullable: true, metadata: {} },
        {
          name: 's',
          type: {
            type: 'struct',
            fields: [
              { name: 'a', type: 'integer', nullable: true, metadata: {} },
              { name: 'b', type: 'string', nullable: true, metadata: {} },
            ],
          },
          nullable: true,
          metadata: {},
        },
        {
          name: 'xs',
          type: { type: 'array', elementType: 'long', containsNull: true },
          nullable: true,
          metadata: {},
        },
        {
          name: 'm',
          type: { type: 'map', keyType: 'string', valueType: 'integer', valueContainsNull: true },
          nullable: true,
          metadata: {},
        },
      ],
    }
    assert.deepEqual(schema, expected)
  })

  const aliases: [string, string][] = [
    ['bigint', 'long'],
    ['INT', 'integer'],
    ['Integer', 'integer'],
    ['smallint', 'short'],
    ['tinyint', 'byte'],
    ['real', 'float'],
    ['bool', 'boolean'],
    ['varchar(20)', 'string'],
    ['decimal', 'decimal(10,0)'],
    ['numeric(5)', 'decimal(5,0)'],
    ['dec(38, 38)', 'decimal(38,38)'],
    ['timestamp_ltz', 'timestamp'],
    ['TIMESTAMP_NTZ', 'timestamp_ntz'],
    ['date', 'date'],
    ['binary', 'binary'],
  ]
  for (const [ddl, type] of aliases) {
    it(`maps ${ddl} to ${type}`, () => {
      assert.equal(parseDdlSchema(`c ${ddl}`).fields[0]?.type, type)
    })
  }

  it('accepts backquoted names, COMMENT and nested fields without a colon', () => {
    const s = parseDdlSchema(
      "`my col` string NOT NULL COMMENT 'the \\'name\\'', `a``b` struct<x int not null>",
    )
    assert.equal(s.fields[0]?.name, 'my col')
    assert.equal(s.fields[0]?.nullable, false)
    assert.equal(s.fields[0]?.metadata.comment, "the 'name'")
    assert.equal(s.fields[1]?.name, 'a`b')
    const inner = s.fields[1]?.type as StructType
    assert.equal(inner.fields[0]?.nullable, false)
  })

  const errors: [string, string, RegExp][] = [
    ['unknown type', 'id long, x foo', /position 11: unknown type 'foo'/],
    ['missing type', 'id', /expected a type/],
    ['trailing comma', 'id long,', /expected a column name/],
    ['unclosed struct', 's struct<a int', /expected ',' or '>'/],
    ['bad decimal', 'd decimal(40,2)', /precision 40/],
    ['scale above precision', 'd decimal(4,5)', /scale 5/],
    ['NOT without NULL', 'id long not', /'NULL' after 'NOT'/],
    ['duplicate names ignoring case', 'id long, ID int', /differ only by case/],
    ['stray character', 'id long; x int', /unexpected character ';'/],
    ['empty schema', '  ', /empty/],
    ['map with one type', 'm map<string>', /expected ','/],
  ]
  for (const [name, ddl, message] of errors) {
    it(`refuses ${name} with InvalidArgumentError pointing at it`, () => {
      assert.throws(
        () => parseDdlSchema(ddl),
        (e: unknown) =>
          e instanceof InvalidArgumentError && e.argument === 'schema' && message.test(e.message),
      )
    })
  }

  it('round-trips through the JSON form', () => {
    const s = parseDdlSchema('a long, b struct<c: array<map<string, decimal(3,1)>>>')
    assert.deepEqual(parseSchema(serializeSchema(s)), s)
  })
})

describe('column mapping helpers', () => {
  const schema = parseSchema(
    JSON.stringify({
      type: 'struct',
      fields: [
        {
          name: 'a',
          type: 'long',
          nullable: true,
          metadata: { 'delta.columnMapping.id': 1, 'delta.columnMapping.physicalName': 'col-1' },
        },
        {
          name: 's',
          type: {
            type: 'struct',
            fields: [
              {
                name: 'b',
                type: 'string',
                nullable: true,
                metadata: { 'delta.columnMapping.id': 3, 'delta.columnMapping.physicalName': 'col-3' },
              },
            ],
          },
          nullable: true,
          metadata: { 'delta.columnMapping.id': 2, 'delta.columnMapping.physicalName': 'col-2' },
        },
        { name: 'plain', type: 'long', nullable: true, metadata: {} },
      ],
    }),
  )

  it('physicalName gives the logical name without mapping and the physical one with it', () => {
    const a = schema.fields[0]
    assert.ok(a)
    assert.equal(physicalName(a, 'none'), 'a')
    assert.equal(physicalName(a, 'name'), 'col-1')
    assert.equal(physicalName(a, 'id'), 'col-1')
  })

  it('physicalName refuses a mapped table field without a physical name', () => {
    const plain = schema.fields[2]
    assert.ok(plain)
    assert.throws(() => physicalName(plain, 'name'), InvalidTableError)
  })

  it('fieldById finds nested fields and misses unknown ids', () => {
    assert.equal(fieldById(schema, 3)?.name, 'b')
    assert.equal(fieldById(schema, 2)?.name, 's')
    assert.equal(fieldById(schema, 99), undefined)
  })

  it('fieldByName ignores case, forEachField visits nested fields with their paths', () => {
    assert.equal(fieldByName(schema, 'PLAIN')?.name, 'plain')
    const paths: string[] = []
    forEachField(schema, (_f, p) => paths.push(p.join('.')))
    assert.deepEqual(paths, ['a', 's', 's.b', 'plain'])
  })
})

describe('golden table schemas', { skip: GOLDEN_SKIP }, () => {
  it('parse and re-serialize to the same text', () => {
    let n = 0
    for (const table of goldenTables()) {
      for (const name of logFileNames(table).filter((f) => /^\d{20}\.json$/.test(f))) {
        for (const a of parseCommitFile(readLogFile(table, name))) {
          if (!('metaData' in a) || a.metaData.schemaString === undefined) continue
          const schema = parseSchema(a.metaData.schemaString)
          assert.equal(serializeSchema(schema), a.metaData.schemaString, `${table}/${name}`)
          n++
        }
      }
    }
    assert.ok(n > 20, `checked ${n} schemas`)
  })
})
