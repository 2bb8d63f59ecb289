/**
 * Typed access to the table properties (`metaData.configuration`) the engine acts on, with
 * Delta's defaults. Values are validated when read: a property with a value Delta would refuse
 * gives an `InvalidArgumentError` naming the property.
 */
import { InvalidArgumentError } from '../errors/index.js'
import type { ColumnMappingMode } from './schema.js'

/** Table properties as stored in the log. */
export type TableConfiguration = Readonly<Record<string, string>>

/** Checkpoint format policy (`delta.checkpointPolicy`). */
export type CheckpointPolicy = 'classic' | 'v2'

/** Default `delta.checkpointInterval`. */
export const DEFAULT_CHECKPOINT_INTERVAL = 10
/** Default `delta.logRetentionDuration`: 30 days, in milliseconds. */
export const DEFAULT_LOG_RETENTION_MS = 30 * 24 * 3600 * 1000
/** Default `delta.deletedFileRetentionDuration`: 1 week, in milliseconds. */
export const DEFAULT_DELETED_FILE_RETENTION_MS = 7 * 24 * 3600 * 1000
/** Default `delta.dataSkippingNumIndexedCols`. */
export const DEFAULT_DATA_SKIPPING_NUM_INDEXED_COLS = 32
/** Default `delta.targetFileSize`: 128 MiB, as Delta's. */
export const DEFAULT_TARGET_FILE_SIZE = 128 * 1024 * 1024

/** Names of the properties read here. */
export const TableProperty = Object.freeze({
  enableDeletionVectors: 'delta.enableDeletionVectors',
  appendOnly: 'delta.appendOnly',
  checkpointInterval: 'delta.checkpointInterval',
  logRetentionDuration: 'delta.logRetentionDuration',
  deletedFileRetentionDuration: 'delta.deletedFileRetentionDuration',
  columnMappingMode: 'delta.columnMapping.mode',
  checkpointPolicy: 'delta.checkpointPolicy',
  enableInCommitTimestamps: 'delta.enableInCommitTimestamps',
  inCommitTimestampEnablementVersion: 'delta.inCommitTimestampEnablementVersion',
  inCommitTimestampEnablementTimestamp: 'delta.inCommitTimestampEnablementTimestamp',
  dataSkippingNumIndexedCols: 'delta.dataSkippingNumIndexedCols',
  dataSkippingStatsColumns: 'delta.dataSkippingStatsColumns',
  enableChangeDataFeed: 'delta.enableChangeDataFeed',
  enableRowTracking: 'delta.enableRowTracking',
  enableTypeWidening: 'delta.enableTypeWidening',
  randomizeFilePrefixes: 'delta.randomizeFilePrefixes',
  randomPrefixLength: 'delta.randomPrefixLength',
  checkpointWriteStatsAsJson: 'delta.checkpoint.writeStatsAsJson',
  checkpointWriteStatsAsStruct: 'delta.checkpoint.writeStatsAsStruct',
  targetFileSize: 'delta.targetFileSize',
} as const)

function invalid(key: string, value: string, expected: string): never {
  throw new InvalidArgumentError(`Invalid value '${value}' for table property ${key}: expected ${expected}`, {
    argument: key,
    hint: `Set ${key} to a valid value (ALTER the table properties), or remove it to use the default.`,
  })
}

/**
 * Reads a boolean property (`true`/`false`, any case).
 *
 * @param config - the table configuration
 * @param key - the property name
 * @param fallback - the value when the property is absent
 * @returns the boolean
 * @throws {InvalidArgumentError} when the value is not a boolean
 */
export function booleanProperty(config: TableConfiguration, key: string, fallback = false): boolean {
  const v = config[key]
  if (v === undefined) return fallback
  const lower = v.trim().toLowerCase()
  if (lower === 'true') return true
  if (lower === 'false') return false
  return invalid(key, v, "'true' or 'false'")
}

/**
 * Reads an integer property.
 *
 * @param config - the table configuration
 * @param key - the property name
 * @param fallback - the value when the property is absent
 * @param min - the smallest accepted value
 * @returns the integer
 * @throws {InvalidArgumentError} when the value is not an integer at least `min`
 */
export function integerProperty(
  config: TableConfiguration,
  key: string,
  fallback: number,
  min: number,
): number {
  const v = config[key]
  if (v === undefined) return fallback
  const t = v.trim()
  const n = /^[-+]?\d+$/.test(t) ? Number(t) : Number.NaN
  if (!Number.isSafeInteger(n) || n < min) return invalid(key, v, `an integer >= ${min}`)
  return n
}

const INTERVAL_UNITS_MS: Readonly<Record<string, number>> = {
  week: 7 * 24 * 3600 * 1000,
  day: 24 * 3600 * 1000,
  hour: 3600 * 1000,
  minute: 60 * 1000,
  second: 1000,
  millisecond: 1,
  microsecond: 0.001,
}

const UNIT_ALIASES: Readonly<Record<string, string>> = {
  weeks: 'week',
  days: 'day',
  hours: 'hour',
  minutes: 'minute',
  mins: 'minute',
  min: 'minute',
  seconds: 'second',
  secs: 'second',
  sec: 'second',
  milliseconds: 'millisecond',
  ms: 'millisecond',
  microseconds: 'microsecond',
  us: 'microsecond',
}

/**
 * Parses a Spark calendar interval as Delta uses it for retention properties, e.g.
 * `interval 7 days`, `interval 1 week`, `30 days`, `interval 2 hours 30 minutes`. Months and
 * years are refused, as Delta refuses them (their length varies).
 *
 * @param text - the interval text
 * @returns the duration in milliseconds (microseconds are truncated)
 * @throws {InvalidArgumentError} when the text is not such an interval
 */
export function parseInterval(text: string): number {
  const fail = (why: string): never => {
    throw new InvalidArgumentError(`Invalid interval '${text}': ${why}`, {
      argument: 'interval',
      hint: "Write an interval such as 'interval 7 days' or 'interval 12 hours'.",
    })
  }
  const words = text.trim().toLowerCase().split(/\s+/)
  if (words[0] === 'interval') words.shift()
  if (words.length === 0 || words[0] === '') return fail('it is empty')
  if (words.length % 2 !== 0) return fail("expected pairs of '<number> <unit>'")
  let ms = 0
  for (let i = 0; i < words.length; i += 2) {
    const amount = words[i] as string
    const rawUnit = words[i + 1] as string
    if (!/^[-+]?\d+(\.\d+)?$/.test(amount)) return fail(`'${amount}' is not a number`)
    if (/^(month|months|year|years)$/.test(rawUnit)) {
      return fail('months and years are not allowed (their length varies); use days or weeks')
    }
    const unit = UNIT_ALIASES[rawUnit] ?? rawUnit
    const factor = INTERVAL_UNITS_MS[unit]
    if (factor === undefined) return fail(`unknown unit '${rawUnit}'`)
    ms += Number(amount) * factor
  }
  if (ms < 0) return fail('it is negative')
  return Math.floor(ms)
}

function intervalProperty(config: TableConfiguration, key: string, fallback: number): number {
  const v = config[key]
  if (v === undefined) return fallback
  try {
    return parseInterval(v)
  } catch {
    return invalid(key, v, "an interval such as 'interval 7 days'")
  }
}

/**
 * `delta.enableDeletionVectors`: whether writers may create deletion vectors (readers apply
 * DVs regardless).
 *
 * @param config - the table configuration
 * @returns the flag, false by default
 * @throws {InvalidArgumentError} when the value is not a boolean
 */
export function deletionVectorsEnabled(config: TableConfiguration): boolean {
  return booleanProperty(config, TableProperty.enableDeletionVectors)
}

/**
 * `delta.appendOnly`.
 *
 * @param config - the table configuration
 * @returns the flag, false by default
 * @throws {InvalidArgumentError} when the value is not a boolean
 */
export function appendOnly(config: TableConfiguration): boolean {
  return booleanProperty(config, TableProperty.appendOnly)
}

/**
 * `delta.checkpointInterval`: commits between checkpoints.
 *
 * @param config - the table configuration
 * @returns the interval, 10 by default
 * @throws {InvalidArgumentError} when the value is not a positive integer
 */
export function checkpointInterval(config: TableConfiguration): number {
  return integerProperty(config, TableProperty.checkpointInterval, DEFAULT_CHECKPOINT_INTERVAL, 1)
}

/**
 * `delta.logRetentionDuration`: how long log entries are kept.
 *
 * @param config - the table configuration
 * @returns milliseconds, 30 days by default
 * @throws {InvalidArgumentError} when the value is not an interval
 */
export function logRetentionMillis(config: TableConfiguration): number {
  return intervalProperty(config, TableProperty.logRetentionDuration, DEFAULT_LOG_RETENTION_MS)
}

/**
 * `delta.deletedFileRetentionDuration`: how long removed files (tombstones) are kept before
 * VACUUM may delete them.
 *
 * @param config - the table configuration
 * @returns milliseconds, 7 days by default
 * @throws {InvalidArgumentError} when the value is not an interval
 */
export function deletedFileRetentionMillis(config: TableConfiguration): number {
  return intervalProperty(
    config,
    TableProperty.deletedFileRetentionDuration,
    DEFAULT_DELETED_FILE_RETENTION_MS,
  )
}

/**
 * `delta.columnMapping.mode` as written (whether the protocol honors it is decided by
 * `columnMappingMode` in `table-features.ts`).
 *
 * @param config - the table configuration
 * @returns `none`, `id` or `name`; `none` by default
 * @throws {InvalidArgumentError} for any other value
 */
export function columnMappingModeProperty(config: TableConfiguration): ColumnMappingMode {
  const v = config[TableProperty.columnMappingMode]
  if (v === undefined) return 'none'
  const lower = v.trim().toLowerCase()
  if (lower === 'none' || lower === 'id' || lower === 'name') return lower
  return invalid(TableProperty.columnMappingMode, v, "'none', 'id' or 'name'")
}

/**
 * `delta.checkpointPolicy`.
 *
 * @param config - the table configuration
 * @returns `classic` or `v2`; `classic` by default
 * @throws {InvalidArgumentError} for any other value
 */
export function checkpointPolicy(config: TableConfiguration): CheckpointPolicy {
  const v = config[TableProperty.checkpointPolicy]
  if (v === undefined) return 'classic'
  const lower = v.trim().toLowerCase()
  if (lower === 'classic' || lower === 'v2') return lower
  return invalid(TableProperty.checkpointPolicy, v, "'classic' or 'v2'")
}

/**
 * `delta.enableInCommitTimestamps`.
 *
 * @param config - the table configuration
 * @returns the flag, false by default
 * @throws {InvalidArgumentError} when the value is not a boolean
 */
export function inCommitTimestampsEnabled(config: TableConfiguration): boolean {
  return booleanProperty(config, TableProperty.enableInCommitTimestamps)
}

/**
 * Where In-Commit Timestamps start, when they were enabled on a table with history
 * (`delta.inCommitTimestampEnablementVersion` / `...Timestamp`).
 *
 * @param config - the table configuration
 * @returns the first version and its timestamp (ms), or `undefined` when not recorded
 * @throws {InvalidArgumentError} when only one of the two is set or a value is not an integer
 */
export function inCommitTimestampEnablement(
  config: TableConfiguration,
): { readonly version: bigint; readonly timestamp: bigint } | undefined {
  const v = config[TableProperty.inCommitTimestampEnablementVersion]
  const t = config[TableProperty.inCommitTimestampEnablementTimestamp]
  if (v === undefined && t === undefined) return undefined
  if (v === undefined || t === undefined) {
    const missing =
      v === undefined
        ? TableProperty.inCommitTimestampEnablementVersion
        : TableProperty.inCommitTimestampEnablementTimestamp
    return invalid(missing, '', 'a value, since the other In-Commit Timestamp enablement property is set')
  }
  if (!/^\d+$/.test(v.trim()))
    return invalid(TableProperty.inCommitTimestampEnablementVersion, v, 'a version number')
  if (!/^-?\d+$/.test(t.trim()))
    return invalid(TableProperty.inCommitTimestampEnablementTimestamp, t, 'milliseconds')
  return Object.freeze({ version: BigInt(v.trim()), timestamp: BigInt(t.trim()) })
}

/**
 * `delta.dataSkippingNumIndexedCols`: how many leading leaf columns get statistics; -1 means all.
 *
 * @param config - the table configuration
 * @returns the count, 32 by default
 * @throws {InvalidArgumentError} when the value is not an integer >= -1
 */
export function dataSkippingNumIndexedCols(config: TableConfiguration): number {
  return integerProperty(
    config,
    TableProperty.dataSkippingNumIndexedCols,
    DEFAULT_DATA_SKIPPING_NUM_INDEXED_COLS,
    -1,
  )
}

/**
 * `delta.dataSkippingStatsColumns`: explicit list of columns that get statistics.
 *
 * @param config - the table configuration
 * @returns the column names (dotted for nested ones), or `undefined` when not set
 */
export function dataSkippingStatsColumns(config: TableConfiguration): readonly string[] | undefined {
  const v = config[TableProperty.dataSkippingStatsColumns]
  if (v === undefined || v.trim() === '') return undefined
  return Object.freeze(
    v
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== ''),
  )
}

/**
 * `delta.enableChangeDataFeed`.
 *
 * @param config - the table configuration
 * @returns the flag, false by default
 * @throws {InvalidArgumentError} when the value is not a boolean
 */
export function changeDataFeedEnabled(config: TableConfiguration): boolean {
  return booleanProperty(config, TableProperty.enableChangeDataFeed)
}

/**
 * `delta.enableRowTracking`.
 *
 * @param config - the table configuration
 * @returns the flag, false by default
 * @throws {InvalidArgumentError} when the value is not a boolean
 */
export function rowTrackingEnabled(config: TableConfiguration): boolean {
  return booleanProperty(config, TableProperty.enableRowTracking)
}

/**
 * The random directory prefix length for new files, or 0 when prefixes are off
 * (`delta.randomizeFilePrefixes`, `delta.randomPrefixLength`, default 2).
 *
 * @param config - the table configuration
 * @returns the prefix length to use
 * @throws {InvalidArgumentError} when a value is malformed
 */
export function randomPrefixLength(config: TableConfiguration): number {
  if (!booleanProperty(config, TableProperty.randomizeFilePrefixes)) return 0
  return integerProperty(config, TableProperty.randomPrefixLength, 2, 1)
}

/**
 * `delta.checkpoint.writeStatsAsJson`: whether checkpoints carry `add.stats` (JSON text).
 *
 * @param config - the table configuration
 * @returns the flag, true by default
 * @throws {InvalidArgumentError} when the value is not a boolean
 */
export function checkpointWriteStatsAsJson(config: TableConfiguration): boolean {
  return booleanProperty(config, TableProperty.checkpointWriteStatsAsJson, true)
}

/**
 * `delta.checkpoint.writeStatsAsStruct`: whether checkpoints carry `add.stats_parsed` (and
 * `add.partitionValues_parsed` on a partitioned table).
 *
 * @param config - the table configuration
 * @returns the flag, false by default
 * @throws {InvalidArgumentError} when the value is not a boolean
 */
export function checkpointWriteStatsAsStruct(config: TableConfiguration): boolean {
  return booleanProperty(config, TableProperty.checkpointWriteStatsAsStruct)
}

const BYTE_UNITS: Readonly<Record<string, number>> = {
  b: 1,
  k: 1024,
  kb: 1024,
  m: 1024 ** 2,
  mb: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1024 ** 3,
  t: 1024 ** 4,
  tb: 1024 ** 4,
}

/**
 * `delta.targetFileSize`: the size new data files aim at. Spark's byte strings are accepted, as
 * Delta accepts them: a whole number of bytes, or one with a binary unit (`b`, `k`/`kb`, `m`/`mb`,
 * `g`/`gb`, `t`/`tb`, any case), e.g. `134217728`, `100mb`, `1g`.
 *
 * @param config - the table configuration
 * @returns the size in bytes, 128 MiB by default
 * @throws {InvalidArgumentError} when the value is not a positive byte size
 */
export function targetFileSize(config: TableConfiguration): number {
  const key = TableProperty.targetFileSize
  const v = config[key]
  if (v === undefined) return DEFAULT_TARGET_FILE_SIZE
  const m = /^(\d+)\s*([a-z]*)$/.exec(v.trim().toLowerCase())
  const factor = m === null ? undefined : m[2] === '' ? 1 : BYTE_UNITS[m[2] as string]
  const n = m === null || factor === undefined ? Number.NaN : Number(m[1]) * factor
  if (!Number.isSafeInteger(n) || n <= 0)
    return invalid(key, v, "a positive size in bytes such as '134217728' or '128mb'")
  return n
}

/** Every property read here, resolved with defaults. */
export interface TableProperties {
  readonly enableDeletionVectors: boolean
  readonly appendOnly: boolean
  readonly checkpointInterval: number
  readonly logRetentionMillis: number
  readonly deletedFileRetentionMillis: number
  readonly columnMappingMode: ColumnMappingMode
  readonly checkpointPolicy: CheckpointPolicy
  readonly enableInCommitTimestamps: boolean
  readonly dataSkippingNumIndexedCols: number
  readonly dataSkippingStatsColumns: readonly string[] | undefined
  readonly enableChangeDataFeed: boolean
  readonly enableRowTracking: boolean
  readonly checkpointWriteStatsAsJson: boolean
  readonly checkpointWriteStatsAsStruct: boolean
  readonly targetFileSize: number
}

/**
 * Resolves and validates every property read here at once.
 *
 * @param config - the table configuration
 * @returns the typed properties
 * @throws {InvalidArgumentError} naming the first property with an invalid value
 */
export function parseTableProperties(config: TableConfiguration): TableProperties {
  return Object.freeze({
    enableDeletionVectors: deletionVectorsEnabled(config),
    appendOnly: appendOnly(config),
    checkpointInterval: checkpointInterval(config),
    logRetentionMillis: logRetentionMillis(config),
    deletedFileRetentionMillis: deletedFileRetentionMillis(config),
    columnMappingMode: columnMappingModeProperty(config),
    checkpointPolicy: checkpointPolicy(config),
    enableInCommitTimestamps: inCommitTimestampsEnabled(config),
    dataSkippingNumIndexedCols: dataSkippingNumIndexedCols(config),
    dataSkippingStatsColumns: dataSkippingStatsColumns(config),
    enableChangeDataFeed: changeDataFeedEnabled(config),
    enableRowTracking: rowTrackingEnabled(config),
    checkpointWriteStatsAsJson: checkpointWriteStatsAsJson(config),
    checkpointWriteStatsAsStruct: checkpointWriteStatsAsStruct(config),
    targetFileSize: targetFileSize(config),
  })
}

// === Setting properties ===

/** How a settable `delta.` property's value is checked. */
type PropertyKind = 'boolean' | 'interval' | 'count' | 'checked' | 'text'

/**
 * The `delta.` properties a table may be given by `alter.setProperties` (and by `create`), with
 * how their values are checked: the properties Delta defines that a writer sets on purpose.
 * Properties Delta sets by itself (the materialized row-tracking column names, the In-Commit
 * Timestamp enablement, `delta.constraints.*`, which `addConstraint` writes) are not here.
 */
const SETTABLE_PROPERTIES: ReadonlyMap<string, PropertyKind> = new Map<string, PropertyKind>([
  [TableProperty.appendOnly, 'boolean'],
  [TableProperty.enableDeletionVectors, 'boolean'],
  [TableProperty.enableChangeDataFeed, 'boolean'],
  [TableProperty.enableRowTracking, 'boolean'],
  [TableProperty.enableTypeWidening, 'boolean'],
  [TableProperty.enableInCommitTimestamps, 'boolean'],
  [TableProperty.randomizeFilePrefixes, 'boolean'],
  [TableProperty.checkpointWriteStatsAsJson, 'boolean'],
  [TableProperty.checkpointWriteStatsAsStruct, 'boolean'],
  ['delta.enableExpiredLogCleanup', 'boolean'],
  ['delta.autoOptimize.optimizeWrite', 'boolean'],
  ['delta.autoOptimize.autoCompact', 'boolean'],
  ['delta.tuneFileSizesForRewrites', 'boolean'],
  ['delta.compatibility.symlinkFormatManifest.enabled', 'boolean'],
  ['delta.enableFullRetentionRollback', 'boolean'],
  [TableProperty.logRetentionDuration, 'interval'],
  [TableProperty.deletedFileRetentionDuration, 'interval'],
  ['delta.setTransactionRetentionDuration', 'interval'],
  ['delta.checkpointRetentionDuration', 'interval'],
  [TableProperty.checkpointInterval, 'checked'],
  [TableProperty.dataSkippingNumIndexedCols, 'checked'],
  [TableProperty.dataSkippingStatsColumns, 'text'],
  [TableProperty.columnMappingMode, 'checked'],
  [TableProperty.checkpointPolicy, 'checked'],
  [TableProperty.randomPrefixLength, 'count'],
  [TableProperty.targetFileSize, 'checked'],
  ['delta.isolationLevel', 'checked'],
  ['delta.minReaderVersion', 'count'],
  ['delta.minWriterVersion', 'count'],
])

/**
 * Checks one property a caller sets: a `delta.` key must be one Delta defines and a writer may set
 * (`delta.feature.<name>` included), with a valid value; any other key (a user property) is taken
 * as it is.
 *
 * @param key - the property name
 * @param value - its new value
 * @returns the key's kind of refusal, or `undefined` when the key is accepted (its value checked)
 * @throws {InvalidArgumentError} when the value is not valid for the property
 */
export function checkSettableProperty(key: string, value: string): 'unknown' | 'reserved' | undefined {
  const refusal = settablePropertyRefusal(key)
  const kind = SETTABLE_PROPERTIES.get(key)
  if (refusal !== undefined || kind === undefined) return refusal
  const config = { [key]: value }
  switch (kind) {
    case 'boolean':
      booleanProperty(config, key)
      break
    case 'interval':
      intervalProperty(config, key, 0)
      break
    case 'count':
      integerProperty(config, key, 0, 1)
      break
    case 'checked':
      if (key === 'delta.isolationLevel') {
        if (value !== 'Serializable' && value !== 'WriteSerializable') {
          invalid(key, value, "'Serializable' or 'WriteSerializable'")
        }
      } else {
        parseTableProperties(config)
      }
      break
    case 'text':
      break
  }
  return undefined
}

/**
 * Why a property key cannot be set by hand, if it cannot: `'unknown'` for a `delta.` key Delta
 * does not define, `'reserved'` for one Delta sets itself (CHECK constraints, row-tracking column
 * names, In-Commit Timestamp enablement, column mapping internals). Values are not looked at.
 *
 * @param key - the property name
 * @returns the refusal, or `undefined` when the key may be set
 */
export function settablePropertyRefusal(key: string): 'unknown' | 'reserved' | undefined {
  if (!key.startsWith('delta.') || key.startsWith('delta.feature.')) return undefined
  if (key.startsWith('delta.constraints.')) return 'reserved'
  if (SETTABLE_PROPERTIES.has(key)) return undefined
  const reserved =
    key.startsWith('delta.rowTracking.') ||
    key === 'delta.rowTrackingSuspended' ||
    key === TableProperty.inCommitTimestampEnablementVersion ||
    key === TableProperty.inCommitTimestampEnablementTimestamp ||
    key.startsWith('delta.columnMapping.')
  return reserved ? 'reserved' : 'unknown'
}
