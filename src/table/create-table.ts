import { randomUUID } from 'node:crypto'
import type { Engine } from '../engine/engine.js'
import {
  FileAlreadyExistsError,
  InvalidArgumentError,
  InvalidTableError,
  TableAlreadyExistsError,
} from '../errors/index.js'
import { newPhysicalName, withMaterializedColumnNames } from '../ops/alter.js'
import { checkComputedColumnsAtCreation } from '../ops/computed-columns.js'
import { serializeCommit } from '../protocol/action-json.js'
import type { Action, Metadata, Protocol } from '../protocol/actions.js'
import { CLUSTERING_FEATURE, checkClusterBy, clusteringDomain } from '../protocol/clustering.js'
import { assignColumnMapping, MAX_COLUMN_ID_KEY } from '../protocol/column-mapping.js'
import { commitKey } from '../protocol/log-files.js'
import {
  checkMaterializedColumnNames,
  ROW_TRACKING_FEATURE,
  RowTrackingProperty,
  rowTrackingState,
} from '../protocol/row-tracking.js'
import {
  fieldByName,
  parseDdlSchema,
  physicalName,
  type StructType,
  serializeSchema,
  toStructType,
} from '../protocol/schema.js'
import {
  checkWriteSupported,
  isFeatureActive,
  isFeatureSupported,
  protocolForProperties,
} from '../protocol/table-features.js'
import {
  columnMappingModeProperty,
  dataSkippingNumIndexedCols,
  parseTableProperties,
  TableProperty,
} from '../protocol/table-properties.js'
import { listLogFrom } from '../snapshot/log-reader.js'
import { IN_COMMIT_TIMESTAMP_FEATURE } from '../txn/in-commit-timestamps.js'
import { ENGINE_INFO } from '../txn/transaction.js'

/** Options of `DeltaTable.create`. */
export interface CreateOptions {
  /** `'id long not null, name string, ...'` (Spark DDL) or a Delta schema object. */
  readonly schema: string | StructType | Readonly<Record<string, unknown>>
  /** Partition columns, in order. */
  readonly partitionBy?: readonly string[]
  /**
   * Clustering columns, in order (liquid clustering): the table gets the `clustering` writer
   * feature and the `delta.clustering` domain, and OPTIMIZE clusters its files by these columns.
   * Not with `partitionBy`.
   */
  readonly clusterBy?: readonly string[]
  /**
   * Table properties (`delta.appendOnly`, `delta.checkpointInterval`, ...). Deletion vectors are
   * on unless `delta.enableDeletionVectors` is `'false'`.
   */
  readonly properties?: Readonly<Record<string, string>>
  /** What to do when a table exists already (default `'error'`). */
  readonly ifExists?: 'error' | 'ignore'
  /** Table name written to the metadata. */
  readonly name?: string
  readonly description?: string
}

/**
 * Writes version 0 of a new table: protocol and metadata, with put-if-absent so that of two
 * concurrent creators exactly one wins.
 *
 * @returns false when the table existed and `ifExists` is `'ignore'`
 * @throws {TableAlreadyExistsError} when the table exists and `ifExists` is `'error'`
 * @throws {InvalidArgumentError} on a bad schema, partitioning, clustering or property
 * @throws {UnsupportedError} for features delta-rlc cannot write (column mapping, ...)
 */
export async function createTable(
  engine: Engine,
  location: string,
  options: CreateOptions,
): Promise<boolean> {
  if (options === null || typeof options !== 'object' || options.schema === undefined) {
    throw new InvalidArgumentError('DeltaTable.create needs a schema', {
      argument: 'schema',
      hint: "Pass { schema: 'id long not null, name string' }.",
    })
  }
  const schema =
    typeof options.schema === 'string' ? parseDdlSchema(options.schema) : toStructType(options.schema)
  const partitionBy = [...(options.partitionBy ?? [])]
  for (const p of partitionBy) {
    const f = fieldByName(schema, p)
    if (!f) {
      throw new InvalidArgumentError(`Partition column '${p}' is not in the schema`, {
        argument: 'partitionBy',
      })
    }
    if (typeof f.type !== 'string') {
      throw new InvalidArgumentError(`Partition column '${p}' must have a primitive type`, {
        argument: 'partitionBy',
      })
    }
  }
  if (new Set(partitionBy).size !== partitionBy.length) {
    throw new InvalidArgumentError('Partition columns must be distinct', { argument: 'partitionBy' })
  }
  if (partitionBy.length > 0 && partitionBy.length === schema.fields.length) {
    throw new InvalidArgumentError('A table needs at least one column that is not a partition column', {
      argument: 'partitionBy',
    })
  }
  checkComputedColumnsAtCreation(schema, partitionBy)
  const properties = withDefaultProperties(options.properties ?? {})
  parseTableProperties(properties)
  const mapped = withColumnMapping(schema, properties)
  for (const key of [
    TableProperty.inCommitTimestampEnablementVersion,
    TableProperty.inCommitTimestampEnablementTimestamp,
  ]) {
    if (properties[key] !== undefined) {
      throw new InvalidArgumentError(`Table property ${key} is not set at creation`, {
        argument: key,
        hint: 'In-Commit Timestamps enabled at creation cover every version; delta.enableInCommitTimestamps=true is all it takes.',
      })
    }
  }
  const clusterBy =
    options.clusterBy === undefined
      ? undefined
      : checkClusterBy(schema, partitionBy, options.clusterBy, dataSkippingNumIndexedCols(properties))
  const clusteringProperty = `delta.feature.${CLUSTERING_FEATURE}`
  if (clusterBy === undefined && properties[clusteringProperty] !== undefined) {
    throw new InvalidArgumentError(`Table property ${clusteringProperty} is not set by hand`, {
      argument: clusteringProperty,
      hint: "A clustered table needs its clustering columns: pass { clusterBy: ['col'] } instead.",
    })
  }
  // The feature goes into the protocol only: Delta keeps no delta.feature.* key in the metadata.
  const protocol = protocolForProperties(
    clusterBy === undefined ? properties : { ...properties, [clusteringProperty]: 'supported' },
    schema,
  )
  if (isFeatureSupported(protocol, ROW_TRACKING_FEATURE)) withMaterializedColumnNames(properties)
  const metadata: Metadata = {
    id: randomUUID(),
    ...(options.name === undefined ? {} : { name: options.name }),
    ...(options.description === undefined ? {} : { description: options.description }),
    format: { provider: 'parquet', options: {} },
    schemaString: serializeSchema(mapped),
    partitionColumns: partitionBy,
    configuration: properties,
    createdTime: BigInt(Date.now()),
  }
  checkRowTrackingAtCreation(protocol, metadata, schema)
  checkWriteSupported(protocol, metadata, {
    extraWriterFeatures: [IN_COMMIT_TIMESTAMP_FEATURE, ROW_TRACKING_FEATURE, CLUSTERING_FEATURE],
  })
  // Enabled at creation, In-Commit Timestamps cover every version: no enablement properties.
  const now = BigInt(Date.now())
  const ict = isFeatureActive(protocol, metadata, IN_COMMIT_TIMESTAMP_FEATURE) ? now : undefined
  const actions: Action[] = [
    {
      commitInfo: {
        timestamp: now,
        ...(ict === undefined ? {} : { inCommitTimestamp: ict }),
        operation: 'CREATE TABLE',
        operationParameters: {
          partitionBy: JSON.stringify(partitionBy),
          ...(clusterBy === undefined ? {} : { clusterBy: JSON.stringify(clusterBy) }),
          properties: JSON.stringify(properties),
        },
        isolationLevel: 'Serializable',
        isBlindAppend: true,
        engineInfo: ENGINE_INFO,
        txnId: randomUUID(),
      },
    },
    { protocol },
    { metaData: metadata },
    // The domain names clustering columns by physical name (the logical one without mapping).
    ...(clusterBy === undefined
      ? []
      : [
          { domainMetadata: clusteringDomain(clusterBy.map((c) => [physicalNameIn(mapped, c, properties)])) },
        ]),
  ]
  const exists = await hasLog(engine)
  if (exists) return refuseOrIgnore(location, options)
  try {
    await engine.storage.put(commitKey(0n), new TextEncoder().encode(serializeCommit(actions)), {
      ifNotExists: true,
    })
  } catch (err) {
    if (err instanceof FileAlreadyExistsError) return refuseOrIgnore(location, options)
    throw err
  }
  return true
}

/**
 * The properties a new table gets: the caller's, and deletion vectors on unless the caller set
 * `delta.enableDeletionVectors` (to `'false'` to opt out). Row-level concurrency needs them, and
 * DELETE, UPDATE and MERGE then mark rows instead of rewriting files; Databricks enables them on
 * new tables the same way. Such a table has protocol 3/7 with the `deletionVectors` feature.
 */
function withDefaultProperties(given: Readonly<Record<string, string>>): Record<string, string> {
  const properties = { ...given }
  if (properties[TableProperty.enableDeletionVectors] === undefined) {
    properties[TableProperty.enableDeletionVectors] = 'true'
  }
  return properties
}

/**
 * Row-tracking properties a new table cannot have: enabled and suspended at once, or a
 * materialized column named like a data column.
 *
 * @throws {InvalidArgumentError} naming the property
 */
function checkRowTrackingAtCreation(protocol: Protocol, metadata: Metadata, schema: StructType): void {
  try {
    const state = rowTrackingState(protocol, metadata)
    checkMaterializedColumnNames(
      state,
      schema.fields.map((f) => ({ name: f.name, physicalName: f.name })),
    )
  } catch (err) {
    if (!(err instanceof InvalidTableError)) throw err
    throw new InvalidArgumentError(`Invalid row-tracking properties: ${err.message}`, {
      argument: RowTrackingProperty.enable,
      hint: `Leave ${RowTrackingProperty.suspended} unset and name the materialized columns apart from every data column (or leave them unset: they are generated).`,
      cause: err,
    })
  }
}

/**
 * The schema a new table is created with: under column mapping (`delta.columnMapping.mode` `name`
 * or `id`) every field, nested ones included, gets an id and a `col-<uuid>` physical name, and
 * `properties` gets `delta.columnMapping.maxColumnId`, as Delta creates a mapped table. Fields
 * that carry an id and physical name already keep them.
 */
function withColumnMapping(schema: StructType, properties: Record<string, string>): StructType {
  if (columnMappingModeProperty(properties) === 'none') return schema
  const mapped = assignColumnMapping(schema, 0, newPhysicalName)
  properties[MAX_COLUMN_ID_KEY] = String(mapped.maxColumnId)
  return mapped.schema
}

function physicalNameIn(schema: StructType, column: string, properties: Record<string, string>): string {
  const f = fieldByName(schema, column)
  return f === undefined ? column : physicalName(f, columnMappingModeProperty(properties))
}

function refuseOrIgnore(location: string, options: CreateOptions): false {
  if (options.ifExists === 'ignore') return false
  throw new TableAlreadyExistsError(location)
}

async function hasLog(engine: Engine): Promise<boolean> {
  for (const f of await listLogFrom(engine, undefined)) {
    if (/^_delta_log\/\d{20}\.(json|checkpoint\.)/.test(f.key)) return true
  }
  return false
}
