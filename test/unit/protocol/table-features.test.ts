import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  InvalidArgumentError,
  InvalidTableError,
  UnsupportedProtocolVersionError,
  UnsupportedTableFeatureError,
} from '../../../src/errors/index.js'
import { parseCommitFile } from '../../../src/protocol/action-json.js'
import {
  createMetadata,
  createProtocol,
  type Metadata,
  type Protocol,
} from '../../../src/protocol/actions.js'
import { parseDdlSchema, serializeSchema } from '../../../src/protocol/schema.js'
import {
  canWriteDeletionVectors,
  checkReadSupported,
  checkWriteSupported,
  columnMappingMode,
  isAppendOnly,
  isFeatureActive,
  isFeatureSupported,
  protocolForProperties,
  readerFeaturesOf,
  requiresV2Checkpoints,
  writerFeaturesOf,
} from '../../../src/protocol/table-features.js'
import { GOLDEN_SKIP, goldenTables, logFileNames, readLogFile } from './golden-logs.js'

function proto(r: number, w: number, readerFeatures?: string[], writerFeatures?: string[]): Protocol {
  return createProtocol({ minReaderVersion: r, minWriterVersion: w, readerFeatures, writerFeatures })
}

function meta(configuration: Record<string, string> = {}, ddlOrSchema = 'id long'): Metadata {
  const schemaString = ddlOrSchema.startsWith('{')
    ? ddlOrSchema
    : serializeSchema(parseDdlSchema(ddlOrSchema))
  return createMetadata({
    id: 'x',
    format: { provider: 'parquet', options: {} },
    schemaString,
    partitionColumns: [],
    configuration,
  })
}

function schemaWithFieldMetadata(metadata: Record<string, unknown>): string {
  return JSON.stringify({ type: 'struct', fields: [{ name: 'a', type: 'long', nullable: true, metadata }] })
}

describe('legacy protocol versions', () => {
  it('imply features by version', () => {
    assert.deepEqual(readerFeaturesOf(proto(1, 2)), [])
    assert.deepEqual(readerFeaturesOf(proto(2, 5)), ['columnMapping'])
    assert.deepEqual(writerFeaturesOf(proto(1, 2)), ['appendOnly', 'invariants'])
    assert.deepEqual(writerFeaturesOf(proto(2, 6)), [
      'appendOnly',
      'invariants',
      'checkConstraints',
      'changeDataFeed',
      'generatedColumns',
      'columnMapping',
      'identityColumns',
    ])
    assert.ok(isFeatureSupported(proto(2, 5), 'columnMapping'))
    assert.ok(!isFeatureSupported(proto(1, 4), 'columnMapping'))
  })

  it('list features explicitly at reader 3 / writer 7', () => {
    const p = proto(3, 7, ['deletionVectors'], ['deletionVectors', 'appendOnly'])
    assert.deepEqual(readerFeaturesOf(p), ['deletionVectors'])
    assert.ok(isFeatureSupported(p, 'appendOnly'))
    assert.ok(!isFeatureSupported(p, 'invariants'))
  })
})

describe('checkReadSupported', () => {
  const readable: Protocol[] = [
    proto(1, 1),
    proto(1, 2),
    proto(2, 5),
    proto(
      3,
      7,
      ['deletionVectors', 'columnMapping', 'timestampNtz', 'v2Checkpoint'],
      ['deletionVectors', 'identityColumns'],
    ),
    proto(3, 7, ['typeWidening-preview', 'vacuumProtocolCheck'], []),
    proto(3, 7),
    proto(1, 7, undefined, ['someUnknownWriterFeature']),
  ]
  for (const p of readable) {
    it(`accepts ${JSON.stringify(p)}`, () => {
      checkReadSupported(p)
    })
  }

  it('refuses reader version 99 with UnsupportedProtocolVersionError', () => {
    assert.throws(
      () => checkReadSupported(proto(99, 7)),
      (e: unknown) =>
        e instanceof UnsupportedProtocolVersionError &&
        e.side === 'reader' &&
        e.requiredVersion === 99 &&
        e.supportedVersion === 3,
    )
  })

  it('refuses unknown and unimplemented reader features, naming them', () => {
    assert.throws(
      () => checkReadSupported(proto(3, 7, ['deletionVectors', 'blahabl', 'variantType'], [])),
      (e: unknown) =>
        e instanceof UnsupportedTableFeatureError &&
        e.side === 'reader' &&
        e.features.join() === 'blahabl,variantType',
    )
  })

  it('refuses versions below 1 as a malformed table', () => {
    assert.throws(() => checkReadSupported(proto(0, 2)), InvalidTableError)
  })
})

describe('checkWriteSupported', () => {
  it('accepts tables whose listed features are honored or inactive', () => {
    checkWriteSupported(proto(1, 2), meta())
    checkWriteSupported(proto(1, 2), meta({ 'delta.appendOnly': 'true' }))
    checkWriteSupported(
      proto(3, 7, ['deletionVectors'], ['deletionVectors', 'appendOnly', 'invariants']),
      meta(),
    )
    checkWriteSupported(proto(2, 6), meta({ 'delta.columnMapping.mode': 'none' }))
    checkWriteSupported(proto(1, 7, undefined, ['domainMetadata', 'inCommitTimestamp']), meta())
  })

  it('accepts active generated and identity columns, which every write of rows honors', () => {
    checkWriteSupported(
      proto(1, 4),
      meta({}, schemaWithFieldMetadata({ 'delta.generationExpression': 'a + 1' })),
    )
    checkWriteSupported(proto(1, 6), meta({}, schemaWithFieldMetadata({ 'delta.identity.start': 1 })))
    checkWriteSupported(
      proto(1, 7, undefined, ['generatedColumns', 'identityColumns']),
      meta({}, schemaWithFieldMetadata({ 'delta.identity.start': 1, 'delta.identity.step': 1 })),
    )
  })

  it('accepts active invariants and CHECK constraints, which every transaction enforces', () => {
    checkWriteSupported(
      proto(1, 2),
      meta({}, schemaWithFieldMetadata({ 'delta.invariants': '{"expression":{"expression":"a > 0"}}' })),
    )
    checkWriteSupported(proto(1, 3), meta({ 'delta.constraints.positive': 'a > 0' }))
  })

  it('accepts active column mapping, which every writer honors with physical names and field ids', () => {
    checkWriteSupported(proto(2, 5), meta({ 'delta.columnMapping.mode': 'name' }))
    checkWriteSupported(
      proto(3, 7, ['columnMapping'], ['columnMapping']),
      meta({ 'delta.columnMapping.mode': 'id' }),
    )
  })

  it('accepts change data feed on, which every DML honors by writing change data files', () => {
    checkWriteSupported(proto(1, 4), meta({ 'delta.enableChangeDataFeed': 'true' }))
    checkWriteSupported(
      proto(1, 7, undefined, ['changeDataFeed']),
      meta({ 'delta.enableChangeDataFeed': 'true' }),
    )
  })

  it('refuses writer version 8', () => {
    assert.throws(
      () => checkWriteSupported(proto(1, 8), meta()),
      (e: unknown) => e instanceof UnsupportedProtocolVersionError && e.side === 'writer',
    )
  })

  it('refuses a table it cannot read', () => {
    assert.throws(
      () => checkWriteSupported(proto(3, 7, ['variantType'], ['variantType']), meta()),
      UnsupportedTableFeatureError,
    )
  })

  const blocked: [string, Protocol, Metadata, string[]][] = [
    ['an unknown writer feature', proto(1, 7, undefined, ['appendOnly', 'blahabl']), meta(), ['blahabl']],
    [
      'in-commit timestamps on',
      proto(1, 7, undefined, ['inCommitTimestamp']),
      meta({ 'delta.enableInCommitTimestamps': 'true' }),
      ['inCommitTimestamp'],
    ],
    [
      'row tracking listed',
      proto(1, 7, undefined, ['domainMetadata', 'rowTracking']),
      meta(),
      ['rowTracking'],
    ],
    ['clustering listed', proto(1, 7, undefined, ['domainMetadata', 'clustering']), meta(), ['clustering']],
  ]
  for (const [name, p, m, features] of blocked) {
    it(`refuses ${name}`, () => {
      assert.throws(
        () => checkWriteSupported(p, m),
        (e: unknown) =>
          e instanceof UnsupportedTableFeatureError &&
          e.side === 'writer' &&
          e.features.join() === features.join(),
      )
    })
  }

  it('allows a feature the caller implements while it is active', () => {
    const p = proto(1, 7, undefined, ['inCommitTimestamp'])
    checkWriteSupported(p, meta({ 'delta.enableInCommitTimestamps': 'true' }), {
      extraWriterFeatures: ['inCommitTimestamp'],
    })
  })
})

describe('feature activity helpers', () => {
  const dv = proto(3, 7, ['deletionVectors'], ['deletionVectors'])

  it('write DVs only when supported and enabled', () => {
    assert.ok(canWriteDeletionVectors(dv, meta({ 'delta.enableDeletionVectors': 'true' })))
    assert.ok(!canWriteDeletionVectors(dv, meta()))
    assert.ok(!canWriteDeletionVectors(proto(1, 2), meta({ 'delta.enableDeletionVectors': 'true' })))
  })

  it('honor column mapping only when the protocol supports it', () => {
    assert.equal(columnMappingMode(proto(2, 5), meta({ 'delta.columnMapping.mode': 'name' })), 'name')
    assert.equal(columnMappingMode(proto(1, 2), meta({ 'delta.columnMapping.mode': 'name' })), 'none')
  })

  it('treat appendOnly as active only with the property set', () => {
    assert.ok(isAppendOnly(proto(1, 2), meta({ 'delta.appendOnly': 'true' })))
    assert.ok(!isAppendOnly(proto(1, 2), meta()))
    assert.ok(!isAppendOnly(proto(1, 1), meta({ 'delta.appendOnly': 'true' })))
  })

  it('detect timestamp_ntz columns nested in arrays and V2 checkpoint policy', () => {
    const p = proto(3, 7, ['timestampNtz', 'v2Checkpoint'], ['timestampNtz', 'v2Checkpoint'])
    assert.ok(isFeatureActive(p, meta({}, 'xs array<timestamp_ntz>'), 'timestampNtz'))
    assert.ok(!isFeatureActive(p, meta({}, 'x timestamp'), 'timestampNtz'))
    assert.ok(requiresV2Checkpoints(p, meta({ 'delta.checkpointPolicy': 'v2' })))
    assert.ok(!requiresV2Checkpoints(p, meta()))
  })
})

describe('protocolForProperties', () => {
  const cases: [string, Record<string, string>, string, Protocol][] = [
    ['no feature', {}, 'id long', proto(1, 2)],
    ['append-only', { 'delta.appendOnly': 'true' }, 'id long', proto(1, 2)],
    ['change data feed', { 'delta.enableChangeDataFeed': 'true' }, 'id long', proto(1, 4)],
    ['column mapping', { 'delta.columnMapping.mode': 'name' }, 'id long', proto(2, 5)],
    [
      'deletion vectors',
      { 'delta.enableDeletionVectors': 'true' },
      'id long',
      proto(3, 7, ['deletionVectors'], ['deletionVectors']),
    ],
    [
      'DVs on an append-only table',
      { 'delta.enableDeletionVectors': 'true', 'delta.appendOnly': 'true' },
      'id long',
      proto(3, 7, ['deletionVectors'], ['appendOnly', 'deletionVectors']),
    ],
    [
      'a timestamp_ntz column',
      {},
      'id long, t timestamp_ntz',
      proto(3, 7, ['timestampNtz'], ['timestampNtz']),
    ],
    [
      'in-commit timestamps',
      { 'delta.enableInCommitTimestamps': 'true' },
      'id long',
      proto(1, 7, undefined, ['inCommitTimestamp']),
    ],
    [
      'row tracking with its dependency',
      { 'delta.enableRowTracking': 'true' },
      'id long',
      proto(1, 7, undefined, ['domainMetadata', 'rowTracking']),
    ],
    [
      'column mapping with an explicit writer feature',
      { 'delta.columnMapping.mode': 'id', 'delta.feature.domainMetadata': 'supported' },
      'id long',
      proto(2, 7, undefined, ['columnMapping', 'domainMetadata']),
    ],
    [
      'V2 checkpoints',
      { 'delta.checkpointPolicy': 'v2' },
      'id long',
      proto(3, 7, ['v2Checkpoint'], ['v2Checkpoint']),
    ],
    ['a NOT NULL column on a legacy protocol', {}, 'id long not null', proto(1, 2)],
    [
      'a NOT NULL column beside deletion vectors (Delta Spark reads it as an invariant)',
      { 'delta.enableDeletionVectors': 'true' },
      'id long not null',
      proto(3, 7, ['deletionVectors'], ['invariants', 'deletionVectors']),
    ],
    [
      'a NOT NULL field nested in a struct beside a timestamp_ntz column',
      {},
      's struct<a: int not null>, t timestamp_ntz',
      proto(3, 7, ['timestampNtz'], ['invariants', 'timestampNtz']),
    ],
    [
      'a NOT NULL field inside an array element (not an invariant to Delta Spark)',
      {},
      'a array<struct<x: int not null>>, t timestamp_ntz',
      proto(3, 7, ['timestampNtz'], ['timestampNtz']),
    ],
    [
      'explicit versions',
      { 'delta.minReaderVersion': '3', 'delta.minWriterVersion': '7' },
      'id long',
      proto(3, 7, [], []),
    ],
  ]
  for (const [name, props, ddl, expected] of cases) {
    it(`gives the minimal protocol for ${name}`, () => {
      const p = protocolForProperties(props, parseDdlSchema(ddl))
      assert.deepEqual(p, expected)
      checkReadSupported(p)
    })
  }

  it('refuses unknown feature names and bad values', () => {
    assert.throws(() => protocolForProperties({ 'delta.feature.nope': 'supported' }), InvalidArgumentError)
    assert.throws(() => protocolForProperties({ 'delta.feature.appendOnly': 'maybe' }), InvalidArgumentError)
    assert.throws(() => protocolForProperties({ 'delta.minWriterVersion': '9' }), InvalidArgumentError)
  })
})

describe('golden table protocols', { skip: GOLDEN_SKIP }, () => {
  it('are readable except the one with reader version 99', () => {
    const refused: string[] = []
    for (const table of goldenTables()) {
      for (const name of logFileNames(table).filter((f) => /^\d{20}\.json$/.test(f))) {
        for (const a of parseCommitFile(readLogFile(table, name))) {
          if (!('protocol' in a)) continue
          try {
            checkReadSupported(a.protocol)
          } catch (e) {
            assert.ok(e instanceof UnsupportedProtocolVersionError)
            refused.push(table)
          }
        }
      }
    }
    assert.deepEqual(refused, ['deltalog-invalid-protocol-version'])
  })
})
