/**
 * Protocol versions and table features (protocol.md sections 4 and 12): what delta-rlc can read
 * and write, the checks that refuse everything else, and the minimal protocol for a new table.
 *
 * A feature is *supported* by a table when its protocol lists it (or, below reader 3 / writer 7,
 * when the legacy version implies it), and *active* when its metadata requirement also holds.
 * Writers refuse unknown features and known ones they cannot honor while active; a feature that
 * is merely listed (Spark lists `appendOnly` and `invariants` on nearly every table) does not
 * block writes.
 */
import {
  InvalidArgumentError,
  InvalidTableError,
  UnsupportedProtocolVersionError,
  UnsupportedTableFeatureError,
} from '../errors/index.js'
import { createProtocol, type Metadata, type Protocol } from './actions.js'
import { type ColumnMappingMode, forEachField, parseSchema, type StructType } from './schema.js'
import {
  appendOnly,
  booleanProperty,
  changeDataFeedEnabled,
  checkpointPolicy,
  columnMappingModeProperty,
  deletionVectorsEnabled,
  inCommitTimestampsEnabled,
  rowTrackingEnabled,
  type TableConfiguration,
  TableProperty,
} from './table-properties.js'

/** Highest reader protocol version delta-rlc implements. */
export const MAX_READER_VERSION = 3
/** Highest writer protocol version delta-rlc implements. */
export const MAX_WRITER_VERSION = 7

/** Whether a feature concerns readers and writers, or writers only. */
export type FeatureKind = 'reader-writer' | 'writer'

/** What is known about one table feature. */
export interface TableFeatureInfo {
  readonly name: string
  readonly kind: FeatureKind
  /** Legacy reader version that implies it (reader-writer features below reader 3). */
  readonly legacyReaderVersion?: number
  /** Legacy writer version that implies it; absent when only writer 7 can list it. */
  readonly legacyWriterVersion?: number
  /** Features it requires in the same protocol. */
  readonly requires?: readonly string[]
}

function feature(
  name: string,
  kind: FeatureKind,
  legacy: { reader?: number; writer?: number } = {},
  requires?: readonly string[],
): TableFeatureInfo {
  const info: Record<string, unknown> = { name, kind }
  if (legacy.reader !== undefined) info.legacyReaderVersion = legacy.reader
  if (legacy.writer !== undefined) info.legacyWriterVersion = legacy.writer
  if (requires !== undefined) info.requires = Object.freeze([...requires])
  return Object.freeze(info) as unknown as TableFeatureInfo
}

/** The features of the Delta protocol this module knows about, by name. */
export const KNOWN_TABLE_FEATURES: ReadonlyMap<string, TableFeatureInfo> = new Map(
  [
    feature('appendOnly', 'writer', { writer: 2 }),
    feature('invariants', 'writer', { writer: 2 }),
    feature('checkConstraints', 'writer', { writer: 3 }),
    feature('changeDataFeed', 'writer', { writer: 4 }),
    feature('generatedColumns', 'writer', { writer: 4 }),
    feature('columnMapping', 'reader-writer', { reader: 2, writer: 5 }),
    feature('identityColumns', 'writer', { writer: 6 }),
    feature('deletionVectors', 'reader-writer'),
    feature('timestampNtz', 'reader-writer'),
    feature('v2Checkpoint', 'reader-writer'),
    feature('vacuumProtocolCheck', 'reader-writer'),
    feature('typeWidening', 'reader-writer'),
    feature('typeWidening-preview', 'reader-writer'),
    feature('variantType', 'reader-writer'),
    feature('variantType-preview', 'reader-writer'),
    feature('domainMetadata', 'writer'),
    feature('rowTracking', 'writer', {}, ['domainMetadata']),
    feature('inCommitTimestamp', 'writer'),
    feature('clustering', 'writer', {}, ['domainMetadata']),
    feature('icebergCompatV1', 'writer', {}, ['columnMapping']),
    feature('icebergCompatV2', 'writer', {}, ['columnMapping']),
    feature('allowColumnDefaults', 'writer'),
    feature('checkpointProtection', 'writer'),
    feature('catalogManaged', 'reader-writer', {}, ['inCommitTimestamp']),
  ].map((f) => [f.name, f]),
)

/** Reader features delta-rlc can read. */
export const READABLE_READER_FEATURES: ReadonlySet<string> = new Set([
  'deletionVectors',
  'columnMapping',
  'timestampNtz',
  'typeWidening',
  'typeWidening-preview',
  'v2Checkpoint',
  'vacuumProtocolCheck',
])

/**
 * Writer features delta-rlc honors whenever they are listed. `appendOnly` is honored by
 * refusing non-append operations (see {@link isAppendOnly}); `v2Checkpoint` allows JSON commits,
 * and a checkpoint writer must write V2 content or skip checkpoints (see
 * {@link requiresV2Checkpoints}); the type-widening features only constrain schema changes, which
 * delta-rlc does not make. `invariants` and `checkConstraints` are honored by every write that
 * goes through a transaction: the rows it writes are checked against the table's invariants and
 * CHECK constraints before its commit (`ops/constraints.ts`). `generatedColumns` and
 * `identityColumns` are honored by every write of rows: generated values are computed and checked
 * (`ops/generated-columns.ts`), identity values assigned above the high-water mark, which the
 * commit moves (`ops/identity-columns.ts`). `changeDataFeed` is honored by every DML, which writes
 * the rows it changes to change data files (`ops/change-data.ts`).
 */
export const WRITABLE_WRITER_FEATURES: ReadonlySet<string> = new Set([
  'appendOnly',
  'invariants',
  'checkConstraints',
  'deletionVectors',
  'timestampNtz',
  'v2Checkpoint',
  'vacuumProtocolCheck',
  'typeWidening',
  'typeWidening-preview',
  'domainMetadata',
  'columnMapping',
  'changeDataFeed',
  'generatedColumns',
  'identityColumns',
])

/**
 * Writer features delta-rlc tolerates only while inactive: it writes to such a table as long as
 * the feature's metadata requirement is not met, and refuses otherwise.
 */
export const WRITABLE_WHEN_INACTIVE_FEATURES: ReadonlySet<string> = new Set([
  'inCommitTimestamp',
  'allowColumnDefaults',
  'rowTracking',
])

const LEGACY_WRITER_FEATURES: readonly (readonly [number, string])[] = [
  [2, 'appendOnly'],
  [2, 'invariants'],
  [3, 'checkConstraints'],
  [4, 'changeDataFeed'],
  [4, 'generatedColumns'],
  [5, 'columnMapping'],
  [6, 'identityColumns'],
]

// === Support ===

/**
 * The reader features a table requires: its `readerFeatures` at reader 3, else the features the
 * legacy reader version implies.
 *
 * @param protocol - the table protocol
 * @returns the feature names
 */
export function readerFeaturesOf(protocol: Protocol): readonly string[] {
  if (protocol.minReaderVersion >= 3) return protocol.readerFeatures ?? []
  return protocol.minReaderVersion >= 2 ? ['columnMapping'] : []
}

/**
 * The writer features a table requires: its `writerFeatures` at writer 7, else the features the
 * legacy writer version implies.
 *
 * @param protocol - the table protocol
 * @returns the feature names
 */
export function writerFeaturesOf(protocol: Protocol): readonly string[] {
  if (protocol.minWriterVersion >= 7) return protocol.writerFeatures ?? []
  return LEGACY_WRITER_FEATURES.filter(([v]) => protocol.minWriterVersion >= v).map(([, name]) => name)
}

/**
 * Whether a table's protocol supports (lists or implies) a feature.
 *
 * @param protocol - the table protocol
 * @param name - a feature name
 * @returns whether readers or writers of the table must honor it
 */
export function isFeatureSupported(protocol: Protocol, name: string): boolean {
  return readerFeaturesOf(protocol).includes(name) || writerFeaturesOf(protocol).includes(name)
}

function checkVersionsWellFormed(protocol: Protocol): void {
  if (protocol.minReaderVersion < 1 || protocol.minWriterVersion < 1) {
    throw new InvalidTableError(
      'malformed-action',
      `Invalid protocol: versions must be at least 1, got reader ${protocol.minReaderVersion} / writer ${protocol.minWriterVersion}`,
    )
  }
}

/**
 * Checks that delta-rlc can read a table with this protocol.
 *
 * @param protocol - the table protocol
 * @throws {UnsupportedProtocolVersionError} when the reader version is above 3
 * @throws {UnsupportedTableFeatureError} when a reader feature is not readable
 * @throws {InvalidTableError} when the versions are below 1
 */
export function checkReadSupported(protocol: Protocol): void {
  checkVersionsWellFormed(protocol)
  if (protocol.minReaderVersion > MAX_READER_VERSION) {
    throw new UnsupportedProtocolVersionError('reader', protocol.minReaderVersion, MAX_READER_VERSION)
  }
  const unknown = readerFeaturesOf(protocol).filter((f) => !READABLE_READER_FEATURES.has(f))
  if (unknown.length > 0) throw new UnsupportedTableFeatureError('reader', unknown)
}

/** Options of {@link checkWriteSupported}. */
export interface WriteSupportOptions {
  /**
   * Features the caller implements in full beyond {@link WRITABLE_WRITER_FEATURES} (for example
   * `inCommitTimestamp` once commits carry In-Commit Timestamps); they are then allowed while
   * active.
   */
  readonly extraWriterFeatures?: Iterable<string>
}

/**
 * Checks that delta-rlc can write to a table with this protocol and metadata: every reader
 * feature is readable, the writer version is at most 7, and every writer feature is either
 * honored or inactive.
 *
 * @param protocol - the table protocol
 * @param metadata - the table metadata (properties and schema decide which features are active)
 * @param options - features the caller additionally implements
 * @throws {UnsupportedProtocolVersionError} when a version is above what delta-rlc implements
 * @throws {UnsupportedTableFeatureError} naming the features that block writing
 * @throws {InvalidTableError} when the schema cannot be parsed or the versions are below 1
 */
export function checkWriteSupported(
  protocol: Protocol,
  metadata: Metadata,
  options: WriteSupportOptions = {},
): void {
  checkReadSupported(protocol)
  if (protocol.minWriterVersion > MAX_WRITER_VERSION) {
    throw new UnsupportedProtocolVersionError('writer', protocol.minWriterVersion, MAX_WRITER_VERSION)
  }
  const extra = new Set(options.extraWriterFeatures ?? [])
  const blocking = writerFeaturesOf(protocol).filter((f) => {
    if (WRITABLE_WRITER_FEATURES.has(f) || extra.has(f)) return false
    if (WRITABLE_WHEN_INACTIVE_FEATURES.has(f)) return isFeatureActive(protocol, metadata, f)
    return true
  })
  if (blocking.length > 0) throw new UnsupportedTableFeatureError('writer', blocking)
}

// === Activity ===

function schemaOf(metadata: Metadata): StructType | undefined {
  return metadata.schemaString === undefined ? undefined : parseSchema(metadata.schemaString)
}

function anyField(
  metadata: Metadata,
  pred: (metadataKeys: readonly string[], type: unknown) => boolean,
): boolean {
  const schema = schemaOf(metadata)
  if (schema === undefined) return false
  let found = false
  forEachField(schema, (f) => {
    if (!found && pred(Object.keys(f.metadata), f.type)) found = true
  })
  return found
}

function hasType(metadata: Metadata, name: string): boolean {
  return anyField(metadata, (_, t) => typeContains(t, name))
}

function typeContains(t: unknown, name: string): boolean {
  if (typeof t === 'string') return t === name
  if (typeof t !== 'object' || t === null) return false
  const o = t as { type?: unknown; elementType?: unknown; keyType?: unknown; valueType?: unknown }
  if (o.type === 'array') return typeContains(o.elementType, name)
  if (o.type === 'map') return typeContains(o.keyType, name) || typeContains(o.valueType, name)
  return false
}

/**
 * Whether a feature is active: supported by the protocol and with its metadata requirement met
 * (e.g. `appendOnly` with `delta.appendOnly=true`, `invariants` with a column carrying
 * `delta.invariants`). Features with no metadata requirement are active whenever supported.
 *
 * @param protocol - the table protocol
 * @param metadata - the table metadata
 * @param name - a feature name
 * @returns whether the table uses the feature
 * @throws {InvalidTableError} when the schema must be inspected and cannot be parsed
 * @throws {InvalidArgumentError} when a property the feature depends on has an invalid value
 */
export function isFeatureActive(protocol: Protocol, metadata: Metadata, name: string): boolean {
  if (!isFeatureSupported(protocol, name)) return false
  const config = metadata.configuration
  switch (name) {
    case 'appendOnly':
      return appendOnly(config)
    case 'invariants':
      return anyField(metadata, (keys) => keys.includes('delta.invariants'))
    case 'checkConstraints':
      return Object.keys(config).some((k) => k.startsWith('delta.constraints.'))
    case 'changeDataFeed':
      return changeDataFeedEnabled(config)
    case 'generatedColumns':
      return anyField(metadata, (keys) => keys.includes('delta.generationExpression'))
    case 'identityColumns':
      return anyField(metadata, (keys) => keys.some((k) => k.startsWith('delta.identity.')))
    case 'columnMapping':
      return columnMappingModeProperty(config) !== 'none'
    case 'deletionVectors':
      return deletionVectorsEnabled(config)
    case 'timestampNtz':
      return hasType(metadata, 'timestamp_ntz')
    case 'v2Checkpoint':
      return checkpointPolicy(config) === 'v2'
    case 'inCommitTimestamp':
      return inCommitTimestampsEnabled(config)
    case 'rowTracking':
      // Supported already obliges writers to assign row ids, unless tracking is suspended.
      return !booleanProperty(config, 'delta.rowTrackingSuspended')
    case 'allowColumnDefaults':
      return anyField(metadata, (keys) => keys.includes('CURRENT_DEFAULT'))
    case 'typeWidening':
    case 'typeWidening-preview':
      return booleanProperty(config, TableProperty.enableTypeWidening)
    case 'variantType':
    case 'variantType-preview':
      return hasType(metadata, 'variant')
    default:
      return true
  }
}

/**
 * The column mapping mode the table honors: the property, but only when the protocol supports
 * `columnMapping`.
 *
 * @param protocol - the table protocol
 * @param metadata - the table metadata
 * @returns `none`, `id` or `name`
 * @throws {InvalidArgumentError} when the property has an invalid value
 */
export function columnMappingMode(protocol: Protocol, metadata: Metadata): ColumnMappingMode {
  if (!isFeatureSupported(protocol, 'columnMapping')) return 'none'
  return columnMappingModeProperty(metadata.configuration)
}

/**
 * Whether writers may create deletion vectors: the protocol supports `deletionVectors` and
 * `delta.enableDeletionVectors` is true. Readers apply DVs regardless.
 *
 * @param protocol - the table protocol
 * @param metadata - the table metadata
 * @returns whether DML may write DVs
 * @throws {InvalidArgumentError} when the property has an invalid value
 */
export function canWriteDeletionVectors(protocol: Protocol, metadata: Metadata): boolean {
  return isFeatureActive(protocol, metadata, 'deletionVectors')
}

/**
 * Whether the table is append-only: only appends and `dataChange=false` rearrangements may be
 * committed.
 *
 * @param protocol - the table protocol
 * @param metadata - the table metadata
 * @returns whether removes with `dataChange=true` and DV deletes must be refused
 * @throws {InvalidArgumentError} when the property has an invalid value
 */
export function isAppendOnly(protocol: Protocol, metadata: Metadata): boolean {
  return isFeatureActive(protocol, metadata, 'appendOnly')
}

/**
 * Whether checkpoints of this table must follow the V2 spec (`checkpointMetadata` present;
 * never multi-part).
 *
 * @param protocol - the table protocol
 * @param metadata - the table metadata
 * @returns whether `v2Checkpoint` is active
 * @throws {InvalidArgumentError} when the property has an invalid value
 */
export function requiresV2Checkpoints(protocol: Protocol, metadata: Metadata): boolean {
  return isFeatureActive(protocol, metadata, 'v2Checkpoint')
}

// === New tables ===

const FEATURE_PROPERTY_PREFIX = 'delta.feature.'

function versionProperty(properties: TableConfiguration, key: string, max: number): number | undefined {
  const v = properties[key]
  if (v === undefined) return undefined
  const n = /^\d+$/.test(v.trim()) ? Number(v.trim()) : Number.NaN
  if (!Number.isSafeInteger(n) || n < 1 || n > max) {
    throw new InvalidArgumentError(
      `Invalid value '${v}' for table property ${key}: expected an integer in 1..${max}`,
      {
        argument: key,
      },
    )
  }
  return n
}

/**
 * Whether a column, or a field nested in struct columns, is declared NOT NULL. Delta Spark's
 * invariants are these fields (it does not look inside arrays and maps), so a table with one needs
 * the `invariants` writer feature under a table-features protocol.
 */
function hasNotNullColumn(struct: StructType): boolean {
  return struct.fields.some(
    (f) =>
      !f.nullable ||
      (typeof f.type !== 'string' && f.type.type === 'struct' && hasNotNullColumn(f.type as StructType)),
  )
}

function requiredFeatures(properties: TableConfiguration, schema: StructType | undefined): Set<string> {
  const req = new Set<string>()
  if (deletionVectorsEnabled(properties)) req.add('deletionVectors')
  if (columnMappingModeProperty(properties) !== 'none') req.add('columnMapping')
  if (checkpointPolicy(properties) === 'v2') req.add('v2Checkpoint')
  if (booleanProperty(properties, TableProperty.enableTypeWidening)) req.add('typeWidening')
  if (inCommitTimestampsEnabled(properties)) req.add('inCommitTimestamp')
  if (rowTrackingEnabled(properties)) req.add('rowTracking')
  if (changeDataFeedEnabled(properties)) req.add('changeDataFeed')
  if (appendOnly(properties)) req.add('appendOnly')
  if (Object.keys(properties).some((k) => k.startsWith('delta.constraints.'))) req.add('checkConstraints')
  for (const [key, value] of Object.entries(properties)) {
    if (!key.startsWith(FEATURE_PROPERTY_PREFIX)) continue
    const name = key.slice(FEATURE_PROPERTY_PREFIX.length)
    const v = value.trim().toLowerCase()
    if (v !== 'supported' && v !== 'enabled') {
      throw new InvalidArgumentError(
        `Invalid value '${value}' for table property ${key}: expected 'supported'`,
        {
          argument: key,
        },
      )
    }
    if (!KNOWN_TABLE_FEATURES.has(name)) {
      throw new InvalidArgumentError(`Unknown table feature '${name}' in table property ${key}`, {
        argument: key,
      })
    }
    req.add(name)
  }
  // A NOT NULL column is an invariant to Delta Spark, which refuses a table-features protocol that
  // does not list `invariants` beside one (DELTA_FEATURES_PROTOCOL_METADATA_MISMATCH).
  if (schema !== undefined && hasNotNullColumn(schema)) req.add('invariants')
  if (schema !== undefined) {
    forEachField(schema, (f) => {
      const keys = Object.keys(f.metadata)
      if (keys.includes('delta.invariants')) req.add('invariants')
      if (keys.includes('delta.generationExpression')) req.add('generatedColumns')
      if (keys.some((k) => k.startsWith('delta.identity.'))) req.add('identityColumns')
      if (keys.includes('CURRENT_DEFAULT')) req.add('allowColumnDefaults')
      if (typeContains(f.type, 'timestamp_ntz')) req.add('timestampNtz')
      if (typeContains(f.type, 'variant')) req.add('variantType')
    })
  }
  // Close over dependencies (rowTracking needs domainMetadata, ...).
  let grew = true
  while (grew) {
    grew = false
    for (const name of [...req]) {
      for (const dep of KNOWN_TABLE_FEATURES.get(name)?.requires ?? []) {
        if (!req.has(dep)) {
          req.add(dep)
          grew = true
        }
      }
    }
  }
  return req
}

/**
 * The minimal protocol a new table with these properties and this schema needs. Without any
 * feature that is 1/2 (Spark's default). Features that legacy versions can express give a legacy
 * protocol (e.g. column mapping gives 2/5); any other feature gives writer 7 with explicit
 * `writerFeatures`, and reader 3 with `readerFeatures` when a reader-writer feature needs it
 * (e.g. deletion vectors give 3/7 with `deletionVectors` in both lists).
 * `delta.feature.<name>=supported` adds a feature explicitly; `delta.minReaderVersion` and
 * `delta.minWriterVersion` raise the versions.
 *
 * @param properties - the new table's properties
 * @param schema - the new table's schema (timestamp_ntz columns, invariants, ... need features)
 * @returns a frozen protocol
 * @throws {InvalidArgumentError} for an unknown feature name or an invalid property value
 */
export function protocolForProperties(properties: TableConfiguration, schema?: StructType): Protocol {
  const req = requiredFeatures(properties, schema)
  const askedReader = versionProperty(properties, 'delta.minReaderVersion', MAX_READER_VERSION) ?? 1
  const askedWriter = versionProperty(properties, 'delta.minWriterVersion', MAX_WRITER_VERSION) ?? 2
  const infos = [...KNOWN_TABLE_FEATURES.values()].filter((f) => req.has(f.name))
  const legacyOk =
    askedWriter < 7 && askedReader < 3 && infos.every((f) => f.legacyWriterVersion !== undefined)
  if (legacyOk) {
    let reader = askedReader
    let writer = askedWriter
    for (const f of infos) {
      reader = Math.max(reader, f.legacyReaderVersion ?? 1)
      writer = Math.max(writer, f.legacyWriterVersion ?? 1)
    }
    return createProtocol({ minReaderVersion: reader, minWriterVersion: writer })
  }
  const readerWriter = infos.filter((f) => f.kind === 'reader-writer')
  const needsReader3 = askedReader >= 3 || readerWriter.some((f) => f.legacyReaderVersion === undefined)
  const writerFeatures = infos.map((f) => f.name)
  if (needsReader3) {
    return createProtocol({
      minReaderVersion: 3,
      minWriterVersion: 7,
      readerFeatures: readerWriter.map((f) => f.name),
      writerFeatures,
    })
  }
  const reader = Math.max(askedReader, req.has('columnMapping') ? 2 : 1)
  return createProtocol({ minReaderVersion: reader, minWriterVersion: 7, writerFeatures })
}

// === Existing tables ===

/**
 * The protocol a table needs once its properties and schema are these: its protocol with every
 * feature they require added (and the features those require), as Delta upgrades a table when a
 * property turns a feature on (`ALTER TABLE ... SET TBLPROPERTIES`). Nothing is ever removed and
 * no version lowered. A legacy protocol stays legacy while every feature has a legacy version;
 * otherwise it becomes writer 7 listing every feature it supported (the ones its versions implied
 * included), and reader 3 when a reader-writer feature needs it.
 *
 * @param current - the table's protocol
 * @param properties - the table's properties after the change
 * @param schema - the table's schema after the change
 * @returns `current` itself when it already has every feature, else the upgraded protocol
 * @throws {InvalidArgumentError} for an unknown feature name or an invalid property value
 */
export function protocolWithRequiredFeatures(
  current: Protocol,
  properties: TableConfiguration,
  schema?: StructType,
): Protocol {
  const req = requiredFeatures(properties, schema)
  const askedReader = versionProperty(properties, 'delta.minReaderVersion', MAX_READER_VERSION) ?? 1
  const askedWriter = versionProperty(properties, 'delta.minWriterVersion', MAX_WRITER_VERSION) ?? 1
  const readerHad = readerFeaturesOf(current)
  const writerHad = writerFeaturesOf(current)
  const had = new Set([...readerHad, ...writerHad])
  const added = [...req].filter((f) => !had.has(f))
  if (
    added.length === 0 &&
    askedReader <= current.minReaderVersion &&
    askedWriter <= current.minWriterVersion
  ) {
    return current
  }
  const all = [...new Set([...writerHad, ...readerHad, ...added])]
  const infoOf = (name: string) => KNOWN_TABLE_FEATURES.get(name)
  const legacyOk =
    current.minWriterVersion < 7 &&
    current.minReaderVersion < 3 &&
    askedWriter < 7 &&
    askedReader < 3 &&
    added.every((f) => infoOf(f)?.legacyWriterVersion !== undefined)
  if (legacyOk) {
    let reader = Math.max(current.minReaderVersion, askedReader)
    let writer = Math.max(current.minWriterVersion, askedWriter)
    for (const f of added) {
      reader = Math.max(reader, infoOf(f)?.legacyReaderVersion ?? 1)
      writer = Math.max(writer, infoOf(f)?.legacyWriterVersion ?? 1)
    }
    return createProtocol({ minReaderVersion: reader, minWriterVersion: writer })
  }
  const readerWriter = all.filter((f) => infoOf(f)?.kind === 'reader-writer' || readerHad.includes(f))
  const needsReader3 =
    current.minReaderVersion >= 3 ||
    askedReader >= 3 ||
    readerWriter.some((f) => infoOf(f)?.legacyReaderVersion === undefined)
  if (needsReader3) {
    return createProtocol({
      minReaderVersion: 3,
      minWriterVersion: 7,
      readerFeatures: readerWriter,
      writerFeatures: all,
    })
  }
  const reader = Math.max(current.minReaderVersion, askedReader, all.includes('columnMapping') ? 2 : 1)
  return createProtocol({ minReaderVersion: reader, minWriterVersion: 7, writerFeatures: all })
}
