/**
 * Row tracking as the table states it (PROTOCOL.md "Row Tracking"): whether the table supports,
 * enables or suspends it, where the materialized row-id and row-commit-version columns are, and
 * the row-id high-water mark kept in the `delta.rowTracking` domain.
 *
 * Every row has a stable id: the materialized column's value when the file has the column and the
 * value is not null, else its file's `baseRowId` plus its physical position in the file (rows a
 * deletion vector hides count). Its commit version is found the same way, with
 * `defaultRowCommitVersion`. Ids and versions are `bigint`: the protocol types them as longs, the
 * mark can be any long, and `baseRowId + position` must stay exact past 2^53 (a `number` would
 * silently merge neighbouring ids there). The write-side rules that use this state are in
 * `row-tracking-ids.ts`.
 */
import {
  InvalidTableError,
  RowTrackingNotEnabledError,
  UnsupportedTableFeatureError,
} from '../errors/index.js'
import { createDomainMetadata, type DomainMetadata, type Metadata, type Protocol } from './actions.js'
import { isJsonNumberText, parseJsonText } from './json-text.js'
import { isRawObject } from './raw-fields.js'
import { isFeatureSupported } from './table-features.js'
import { booleanProperty } from './table-properties.js'

/** The writer feature that makes writers assign row ids. */
export const ROW_TRACKING_FEATURE = 'rowTracking'

/** The metadata domain holding the row-id high-water mark. */
export const ROW_TRACKING_DOMAIN = 'delta.rowTracking'

/** The commitInfo tag saying whether a commit preserved every stable row id it copied. */
export const ROW_TRACKING_PRESERVED_TAG = 'delta.rowTracking.preserved'

/** Table properties of row tracking. */
export const RowTrackingProperty = Object.freeze({
  /** Row ids are present for every row and writers preserve them. */
  enable: 'delta.enableRowTracking',
  /** Writers do not assign row ids (while the feature is being dropped). */
  suspended: 'delta.rowTrackingSuspended',
  /** Physical name of the hidden Parquet column holding materialized stable row ids. */
  materializedRowIdColumnName: 'delta.rowTracking.materializedRowIdColumnName',
  /** Physical name of the hidden Parquet column holding materialized row commit versions. */
  materializedRowCommitVersionColumnName: 'delta.rowTracking.materializedRowCommitVersionColumnName',
})

/** The largest value of a Delta long: no row id, mark or version may exceed it. */
export const MAX_LONG = 2n ** 63n - 1n

/** What a table's protocol and metadata say about row tracking. */
export interface RowTrackingState {
  /** The protocol lists the `rowTracking` writer feature. */
  readonly supported: boolean
  /** Supported and `delta.enableRowTracking=true`: every row's id can be relied upon. */
  readonly enabled: boolean
  /** `delta.rowTrackingSuspended=true`: writers must not assign ids. */
  readonly suspended: boolean
  /** Supported and not suspended: every new `add` must get a `baseRowId` and `defaultRowCommitVersion`. */
  readonly assignsIds: boolean
  /** Physical name of the materialized row-id column, when the configuration names one. */
  readonly materializedRowIdColumn: string | undefined
  /** Physical name of the materialized row-commit-version column, when the configuration names one. */
  readonly materializedRowCommitVersionColumn: string | undefined
}

/**
 * Reads the row-tracking state of a table.
 *
 * A property without the feature enables nothing (the protocol defines enablement as both), so a
 * table that sets `delta.enableRowTracking=true` without listing `rowTracking` is not enabled.
 *
 * @param protocol - the table protocol
 * @param metadata - the table metadata
 * @returns the state
 * @throws {InvalidTableError} `malformed-action` when the feature is listed without
 *   `domainMetadata` (which it requires), when tracking is both enabled and suspended, or when the
 *   two materialized column names are equal
 * @throws {InvalidArgumentError} when `delta.enableRowTracking` or `delta.rowTrackingSuspended` is
 *   not a boolean
 */
export function rowTrackingState(protocol: Protocol, metadata: Metadata): RowTrackingState {
  const config = metadata.configuration
  const supported = isFeatureSupported(protocol, ROW_TRACKING_FEATURE)
  const enabledProperty = booleanProperty(config, RowTrackingProperty.enable)
  const suspended = booleanProperty(config, RowTrackingProperty.suspended)
  if (supported && !isFeatureSupported(protocol, 'domainMetadata')) {
    throw new InvalidTableError(
      'malformed-action',
      'The table lists the rowTracking writer feature without domainMetadata, which row tracking requires',
    )
  }
  const enabled = supported && enabledProperty
  if (enabled && suspended) {
    throw new InvalidTableError(
      'malformed-action',
      `The table sets both ${RowTrackingProperty.enable}=true and ${RowTrackingProperty.suspended}=true: row ids cannot be relied upon while writers are told not to assign them`,
    )
  }
  const rowIdColumn = nonEmpty(config[RowTrackingProperty.materializedRowIdColumnName])
  const versionColumn = nonEmpty(config[RowTrackingProperty.materializedRowCommitVersionColumnName])
  if (rowIdColumn !== undefined && rowIdColumn.toLowerCase() === versionColumn?.toLowerCase()) {
    throw new InvalidTableError(
      'malformed-action',
      `The materialized row-id and row-commit-version columns have the same name '${rowIdColumn}'`,
    )
  }
  return Object.freeze({
    supported,
    enabled,
    suspended,
    assignsIds: supported && !suspended,
    materializedRowIdColumn: rowIdColumn,
    materializedRowCommitVersionColumn: versionColumn,
  })
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v === '' ? undefined : v
}

/**
 * Checks that a table's row ids can be read: row tracking is enabled. A table that merely
 * supports it may hold files without `baseRowId` and ids that changed when rows were copied.
 *
 * @param state - the table's row-tracking state
 * @throws {RowTrackingNotEnabledError} when the table does not enable row tracking
 */
export function checkRowIdsReadable(state: RowTrackingState): void {
  if (!state.supported) throw new RowTrackingNotEnabledError('not-supported')
  if (!state.enabled) throw new RowTrackingNotEnabledError('not-enabled')
}

/**
 * Checks that the materialized columns are no data column: the protocol forbids a materialized
 * name equal to any logical or physical column name, and a reader that took a data column for
 * the row-id column would return its values as ids. Names compare case-insensitively, as Parquet
 * columns are looked up.
 *
 * @param state - the table's row-tracking state
 * @param columns - the table's top-level columns: logical and physical names
 * @throws {InvalidTableError} `malformed-action` naming the clash
 */
export function checkMaterializedColumnNames(
  state: RowTrackingState,
  columns: Iterable<{ readonly name: string; readonly physicalName: string }>,
): void {
  const materialized = [state.materializedRowIdColumn, state.materializedRowCommitVersionColumn].filter(
    (n): n is string => n !== undefined,
  )
  if (materialized.length === 0) return
  const taken = new Map<string, string>()
  for (const c of columns) {
    taken.set(c.name.toLowerCase(), c.name)
    taken.set(c.physicalName.toLowerCase(), c.name)
  }
  for (const m of materialized) {
    const column = taken.get(m.toLowerCase())
    if (column !== undefined) {
      throw new InvalidTableError(
        'malformed-action',
        `The materialized row-tracking column '${m}' has the name of the data column '${column}'`,
      )
    }
  }
}

/**
 * The refusal of an operation that would copy rows of a table with row tracking enabled to new
 * files: it would have to write their stable ids and commit versions to the materialized columns
 * (PROTOCOL.md "Row Tracking", preservation), and without that every copied row would silently
 * take a new id.
 *
 * @param operation - the operation, e.g. `UPDATE`
 * @returns the error to throw
 */
export function rowCopyingUnsupported(operation: string): UnsupportedTableFeatureError {
  return new UnsupportedTableFeatureError('writer', [ROW_TRACKING_FEATURE], {
    reason: `${operation} copies rows to new files, and preserving their row ids on rewrite (the materialized row-id and row-commit-version columns) is not implemented yet`,
    hint: 'Appends, DELETE, UPDATE, MERGE and OPTIMIZE (bin-packing and Z-order) keep every row id and are supported on this table; run the rewriting operation with an engine that preserves row ids.',
  })
}

// === The high-water mark ===

/**
 * The row-id high-water mark of a table: the highest fresh row id assigned so far, inclusive.
 *
 * @param domains - the snapshot's live domains by name
 * @returns the mark, or `undefined` when no id was ever assigned
 * @throws {InvalidTableError} `malformed-action` when the domain's configuration is malformed
 */
export function rowIdHighWaterMark(domains: ReadonlyMap<string, DomainMetadata>): bigint | undefined {
  const dm = domains.get(ROW_TRACKING_DOMAIN)
  return dm === undefined ? undefined : parseRowIdHighWaterMark(dm)
}

/**
 * Parses the configuration of a `delta.rowTracking` domain: `{"rowIdHighWaterMark": N}`, N a long
 * (read exactly: it may exceed 2^53). -1 is accepted as "nothing assigned", the value writers
 * start from.
 *
 * @param dm - a `delta.rowTracking` domain action
 * @returns the mark
 * @throws {InvalidTableError} `malformed-action` when the configuration is not such an object
 */
export function parseRowIdHighWaterMark(dm: DomainMetadata): bigint {
  const fail = (problem: string): never => {
    throw new InvalidTableError(
      'malformed-action',
      `Invalid ${ROW_TRACKING_DOMAIN} domain metadata: ${problem} (configuration ${JSON.stringify(dm.configuration.slice(0, 200))})`,
    )
  }
  let raw: unknown
  try {
    raw = parseJsonText(dm.configuration)
  } catch {
    return fail('the configuration is not JSON')
  }
  if (!isRawObject(raw)) return fail('the configuration is not a JSON object')
  const v = raw.rowIdHighWaterMark
  const text =
    typeof v === 'number'
      ? Number.isSafeInteger(v)
        ? String(v)
        : ''
      : isJsonNumberText(v)
        ? v.value
        : undefined
  if (text === undefined || !/^-?\d+$/.test(text)) return fail('rowIdHighWaterMark is not an integer')
  const mark = BigInt(text)
  if (mark < -1n || mark > MAX_LONG) return fail(`rowIdHighWaterMark ${mark} is outside -1..2^63-1`)
  return mark
}

/**
 * The `delta.rowTracking` domain action that records a mark.
 *
 * @param mark - the new high-water mark
 * @returns a frozen domain metadata payload
 */
export function rowTrackingDomain(mark: bigint): DomainMetadata {
  return createDomainMetadata({
    domain: ROW_TRACKING_DOMAIN,
    configuration: `{"rowIdHighWaterMark":${mark}}`,
    removed: false,
  })
}
