/**
 * ALTER TABLE as metadata commits, with Delta's operation names and parameters: `SET
 * TBLPROPERTIES`, `UNSET TBLPROPERTIES`, `ADD COLUMNS`, `DROP COLUMNS` and `RENAME COLUMN` (with
 * column mapping), `CHANGE COLUMN` (a comment, or NOT NULL), `ADD CONSTRAINT`, `DROP CONSTRAINT`
 * and `UPGRADE PROTOCOL`. Each builds one `metaData` action (and
 * a `protocol` action when the change needs a feature the table lacks) against the read snapshot;
 * the normal commit path checks it against concurrent commits, where any metadata change makes the
 * other side abort (`DELTA_METADATA_CHANGED`), as Delta specifies.
 *
 * What each reads, for the conflict checker, is Delta's: a property or schema change reads nothing
 * (a concurrent append still commits beside it); `ADD CONSTRAINT` and `SET NOT NULL` check every
 * live row, so they read the whole table and abort when a concurrent commit changes data.
 */
import { randomUUID } from 'node:crypto'
import {
  ColumnChangeRefusedError,
  ColumnMappingModeChangeError,
  ColumnMappingRequiredError,
} from '../errors/column-mapping-errors.js'
import {
  ConstraintAlreadyExistsError,
  ConstraintNotFoundError,
  UnknownTablePropertyError,
} from '../errors/constraint-errors.js'
import { InvalidArgumentError, InvalidTableError } from '../errors/index.js'
import { col, columnsOf, isNull } from '../expressions/ast.js'
import { parseExpression } from '../expressions/parse-predicate.js'
import { type Action, createMetadata, type Metadata, type Protocol } from '../protocol/actions.js'
import { tableClustering } from '../protocol/clustering.js'
import {
  assignColumnMapping,
  fieldAtPath,
  isPathUnder,
  MAX_COLUMN_ID_KEY,
  maxColumnIdOf,
  withMaxColumnId,
  withoutFields,
  withRenamedField,
} from '../protocol/column-mapping.js'
import {
  checkMaterializedColumnNames,
  ROW_TRACKING_FEATURE,
  RowTrackingProperty,
  rowTrackingState,
} from '../protocol/row-tracking.js'
import {
  COLUMN_MAPPING_PHYSICAL_NAME_KEY,
  type DataType,
  isStructType,
  parseDdlSchema,
  type StructField,
  type StructType,
  serializeSchema,
} from '../protocol/schema.js'
import {
  checkWriteSupported,
  isFeatureSupported,
  protocolWithRequiredFeatures,
} from '../protocol/table-features.js'
import {
  checkSettableProperty,
  columnMappingModeProperty,
  dataSkippingStatsColumns,
  settablePropertyRefusal,
  type TableConfiguration,
  TableProperty,
} from '../protocol/table-properties.js'
import type { Snapshot } from '../snapshot/snapshot.js'
import { IN_COMMIT_TIMESTAMP_FEATURE } from '../txn/in-commit-timestamps.js'
import { IN_PLACE_ONLY_FEATURES } from '../txn/row-copying.js'
import type { OperationContext, PreparedOperation } from '../txn/staged-operation.js'
import {
  checkConstraintsOf,
  checkRowsAgainst,
  constraintPropertyKey,
  type NotNullConstraint,
  violationOf,
} from './constraints.js'

/** Field metadata key of a generated column's expression. */
const GENERATION_EXPRESSION_KEY = 'delta.generationExpression'

/** The keys that go into the protocol only: Delta keeps none of them in the metadata. */
const PROTOCOL_ONLY_PREFIX = 'delta.feature.'
const PROTOCOL_ONLY_KEYS = new Set(['delta.minReaderVersion', 'delta.minWriterVersion'])

/**
 * `ALTER TABLE ... SET TBLPROPERTIES`: the properties are merged into the table's, and the
 * protocol gains the features they turn on (`delta.enableDeletionVectors=true` adds
 * `deletionVectors`, `delta.feature.<name>=supported` adds `<name>`, ...), in the same commit.
 * Turning row tracking on needs the feature supported and every live file given row ids first
 * (the backfill, see `row-tracking-backfill.ts`); this commit then only sets the property (and
 * the materialized column names).
 *
 * @param ctx - the transaction's context
 * @param properties - the properties to set
 * @throws {UnknownTablePropertyError} for a `delta.` key Delta does not define or sets itself
 * @throws {InvalidArgumentError} for an invalid value
 * @throws {UnsupportedTableFeatureError} when a feature it turns on is one delta-rlc cannot write
 * @throws {ColumnMappingModeChangeError} for a column mapping mode change other than `none` to
 *   `name`
 */
export function buildSetProperties(
  ctx: OperationContext,
  properties: Readonly<Record<string, string>>,
): PreparedOperation {
  const snap = ctx.snapshot
  const { metadata, protocol } = planSetProperties(snap, properties)
  checkRowTrackingTurnedOn(snap, protocol, metadata)
  return metadataOperation(
    snap,
    'SET TBLPROPERTIES',
    { properties: JSON.stringify(properties) },
    metadata,
    protocol,
  )
}

/**
 * The metadata and protocol a table has once `properties` are set, every key and value checked,
 * and the result checked writable; everything {@link buildSetProperties} refuses but turning row
 * tracking on before its backfill.
 *
 * @param snap - the table's latest snapshot
 * @param properties - the properties to set
 * @throws as {@link buildSetProperties}
 */
export function planSetProperties(
  snap: Snapshot,
  properties: Readonly<Record<string, string>>,
): { metadata: Metadata; protocol: Protocol } {
  checkSettable(snap, properties)
  const config: Record<string, string> = { ...snap.properties }
  const protocolOnly: Record<string, string> = {}
  for (const [k, v] of Object.entries(properties)) {
    if (k.startsWith(PROTOCOL_ONLY_PREFIX) || PROTOCOL_ONLY_KEYS.has(k)) protocolOnly[k] = v
    else config[k] = v
  }
  const protocol = protocolWithRequiredFeatures(snap.protocol, { ...config, ...protocolOnly }, snap.schema)
  if (isFeatureSupported(protocol, ROW_TRACKING_FEATURE)) withMaterializedColumnNames(config)
  let schemaString = snap.metadata.schemaString
  if (columnMappingModeProperty(snap.properties) === 'none' && columnMappingModeProperty(config) !== 'none') {
    // As Delta turns mapping on: existing columns keep their names as physical names, so every
    // file written before reads as it is.
    const mapped = assignColumnMapping(
      snap.schema,
      maxColumnIdOf(snap.properties, snap.schema),
      (f) => f.name,
    )
    schemaString = serializeSchema(mapped.schema)
    config[MAX_COLUMN_ID_KEY] = String(mapped.maxColumnId)
  }
  const metadata = createMetadata({ ...snap.metadata, schemaString, configuration: config })
  checkWriteSupported(protocol, metadata, WRITE_SUPPORT)
  return { metadata, protocol }
}

/**
 * `ALTER TABLE ... UNSET TBLPROPERTIES [IF EXISTS]`.
 *
 * @param ctx - the transaction's context
 * @param keys - the properties to remove
 * @param ifExists - a missing key is skipped rather than refused
 * @throws {InvalidArgumentError} for a key the table lacks (without `ifExists`), a CHECK
 *   constraint (use `dropConstraint`) or a property Delta itself manages
 */
export function buildUnsetProperties(
  ctx: OperationContext,
  keys: readonly string[],
  ifExists: boolean,
): PreparedOperation {
  const snap = ctx.snapshot
  const config: Record<string, string> = { ...snap.properties }
  for (const key of keys) {
    if (key.startsWith('delta.constraints.')) {
      throw new InvalidArgumentError(`Table property ${key} is a CHECK constraint`, {
        argument: key,
        hint: `Drop it with alter.dropConstraint('${key.slice('delta.constraints.'.length)}').`,
      })
    }
    const columnMapping =
      key === TableProperty.columnMappingMode && columnMappingModeProperty(snap.properties) !== 'none'
    if (settablePropertyRefusal(key) === 'reserved' || columnMapping) {
      throw new InvalidArgumentError(`Table property ${key} is managed by Delta and cannot be unset`, {
        argument: key,
      })
    }
    if (config[key] === undefined) {
      if (ifExists) continue
      throw new InvalidArgumentError(`Cannot unset table property ${key}: the table does not have it`, {
        argument: key,
        hint: 'Pass { ifExists: true } to skip properties the table does not have.',
      })
    }
    delete config[key]
  }
  const metadata = createMetadata({ ...snap.metadata, configuration: config })
  checkWriteSupported(snap.protocol, metadata, WRITE_SUPPORT)
  return metadataOperation(
    snap,
    'UNSET TBLPROPERTIES',
    { properties: JSON.stringify(keys), ifExists },
    metadata,
    snap.protocol,
  )
}

/**
 * `ALTER TABLE ... ADD COLUMNS`: new nullable columns at the end of the schema (a struct column
 * may carry nested fields). Existing files hold no value for them: they read as null. Under column
 * mapping each new field gets a new id and a new physical name (`col-<uuid>`), so a column added
 * with the name of a dropped one never reads the dropped one's data.
 *
 * @param ctx - the transaction's context
 * @param columns - DDL text such as `'c int, d string'` (several texts are joined)
 * @throws {InvalidArgumentError} for a column that exists, a NOT NULL column, or bad DDL
 */
export function buildAddColumns(
  ctx: OperationContext,
  columns: string | readonly string[],
): PreparedOperation {
  const snap = ctx.snapshot
  const ddl = typeof columns === 'string' ? columns : columns.join(', ')
  const added = parseDdlSchema(ddl).fields
  const { actions } = addedColumnsActions(snap, added, 'columns')
  const columnsParameter = added.map((f) => ({ column: fieldForLog([], f) }))
  return {
    operation: 'ADD COLUMNS',
    parameters: { columns: JSON.stringify(columnsParameter) },
    actions,
    metrics: {},
    changesData: false,
  }
}

/**
 * The schema with new nullable columns appended, and the actions that commit it: a `metaData`,
 * and a `protocol` when a new type needs a feature (`timestamp_ntz`). Shared by `ADD COLUMNS`
 * and by an append that evolves the schema (`schemaMode: 'merge'`).
 *
 * @param snap - the read snapshot
 * @param added - the new columns
 * @param argument - the argument an error names
 * @returns the new schema and the actions
 * @throws {InvalidArgumentError} for a column that exists or is NOT NULL
 */
export function addedColumnsActions(
  snap: Snapshot,
  added: readonly StructField[],
  argument: string,
): { schema: StructType; actions: Action[] } {
  const schema = withAddedColumns(snap, added, argument)
  return { schema, actions: schemaChangeActions(snap, schema, snap.partitionColumns) }
}

/**
 * On a table with column mapping, gives the fields of a changed schema that have no mapping an id
 * above the table's highest and a fresh physical name; fields that have one keep it.
 *
 * @param snap - the read snapshot
 * @param schema - the table's new schema
 * @returns the schema, mapped
 */
export function withNewFieldsMapped(snap: Snapshot, schema: StructType): StructType {
  if (columnMappingModeProperty(snap.properties) === 'none') return schema
  return assignColumnMapping(schema, maxColumnIdOf(snap.properties, snap.schema), newPhysicalName).schema
}

/**
 * Refuses a schema with a column named (logically or physically) as a row-tracking materialized
 * column of the table.
 *
 * @throws {InvalidArgumentError} naming `argument`
 */
function checkColumnsFreeOfRowTracking(snap: Snapshot, schema: StructType, argument: string): void {
  try {
    checkMaterializedColumnNames(
      rowTrackingState(snap.protocol, snap.metadata),
      schema.fields.map((f) => ({ name: f.name, physicalName: physicalNameOrName(f) })),
    )
  } catch (err) {
    if (!(err instanceof InvalidTableError)) throw err
    throw new InvalidArgumentError(err.message, { argument, cause: err })
  }
}

/**
 * The actions that give the table `schema` and `partitionColumns`: a `metaData` (with
 * `delta.columnMapping.maxColumnId` raised to the schema's ids), and a `protocol` first when the
 * schema needs a feature the table lacks (`timestamp_ntz`).
 *
 * @param snap - the read snapshot
 * @param schema - the new schema
 * @param partitionColumns - the new partition columns
 * @returns the actions
 * @throws {UnsupportedTableFeatureError} when the result is a table delta-rlc cannot write
 */
export function schemaChangeActions(
  snap: Snapshot,
  schema: StructType,
  partitionColumns: readonly string[],
): Action[] {
  const metadata = createMetadata({
    ...snap.metadata,
    schemaString: serializeSchema(schema),
    partitionColumns,
    configuration: withMaxColumnId(snap.properties, schema),
  })
  return metadataActions(snap, metadata, protocolWithRequiredFeatures(snap.protocol, snap.properties, schema))
}

/**
 * The table schema with `added` appended: each nullable and new (names compare without case).
 * Under column mapping the new fields (nested ones too) get ids above the table's highest and
 * `col-<uuid>` physical names; the caller commits the schema with
 * `delta.columnMapping.maxColumnId` raised (`withMaxColumnId`).
 *
 * @throws {InvalidArgumentError} naming the column
 */
export function withAddedColumns(
  snap: Snapshot,
  added: readonly StructField[],
  argument: string,
): StructType {
  const taken = new Set(snap.schema.fields.map((f) => f.name.toLowerCase()))
  for (const f of added) {
    if (taken.has(f.name.toLowerCase())) {
      throw new InvalidArgumentError(`Column '${f.name}' already exists`, {
        argument,
        hint: `The table has: ${snap.schema.fields.map((x) => x.name).join(', ')}`,
      })
    }
    if (!f.nullable) {
      throw new InvalidArgumentError(
        `Column '${f.name}' cannot be added as NOT NULL: the rows already in the table have no value for it`,
        {
          argument,
          hint: 'Add it nullable, fill it (UPDATE), then alter.setNotNull.',
        },
      )
    }
    taken.add(f.name.toLowerCase())
  }
  let schema: StructType = Object.freeze({
    type: 'struct',
    fields: Object.freeze([...snap.schema.fields, ...withoutMapping(added)]),
  })
  schema = withNewFieldsMapped(snap, schema)
  checkColumnsFreeOfRowTracking(snap, schema, argument)
  return schema
}

/**
 * `ALTER TABLE ... DROP COLUMNS`: metadata only, as Delta does it under column mapping. The
 * fields leave the schema; their data stays in the files written before and is never read again
 * (their ids and physical names are never given again). Top-level columns and nested struct
 * fields (dotted) can be dropped.
 *
 * @param ctx - the transaction's context
 * @param columns - the columns, dotted for nested struct fields
 * @param ifExists - a missing column is skipped rather than refused (no commit when none exists)
 * @throws {ColumnMappingRequiredError} `DELTA_UNSUPPORTED_DROP_COLUMN` without column mapping
 * @throws {ColumnChangeRefusedError} for a partition or clustering column, or one a CHECK
 *   constraint or a generated column uses
 * @throws {InvalidArgumentError} for a missing column, or a drop that leaves no data column (or an
 *   empty struct)
 */
export function buildDropColumns(
  ctx: OperationContext,
  columns: readonly string[],
  ifExists: boolean,
): PreparedOperation {
  const snap = ctx.snapshot
  if (columnMappingModeProperty(snap.properties) === 'none') throw new ColumnMappingRequiredError('drop')
  const paths: (readonly string[])[] = []
  for (const column of columns) {
    const at = fieldAtPath(snap.schema, column.split('.'))
    if (at === undefined) {
      if (ifExists) continue
      throw unknownColumn(snap.schema, column, 'columns')
    }
    if (!paths.some((p) => isPathUnder(at.path, p))) paths.push(at.path)
  }
  const names = paths.map((p) => p.join('.'))
  if (paths.length === 0) {
    return {
      operation: 'DROP COLUMNS',
      parameters: { columns: '[]' },
      actions: [],
      metrics: {},
      changesData: false,
    }
  }
  for (const path of paths) {
    const name = path.join('.')
    if (path.length === 1 && snap.partitionColumns.some((p) => p.toLowerCase() === name.toLowerCase())) {
      throw new ColumnChangeRefusedError('DELTA_UNSUPPORTED_DROP_PARTITION_COLUMN', name)
    }
    const clustering = tableClustering(snap.protocol, snap.metadata, snap.state.domainMetadata, snap.schema)
    const clusteredBy =
      clustering !== undefined && Array.isArray(clustering.columns) ? clustering.columns : []
    if (clusteredBy.some((c) => isPathUnder([c], path))) {
      throw new ColumnChangeRefusedError('DELTA_UNSUPPORTED_DROP_CLUSTERING_COLUMN', name)
    }
    checkNoDependentConstraint(snap.properties, path)
    checkNoDependentGeneratedColumn(snap.schema, path)
  }
  const schema = withoutFields(snap.schema, paths)
  checkNotEmptied(schema, snap.partitionColumns)
  const config = rewriteStatsColumns(snap.properties, (c) =>
    paths.some((p) => isPathUnder(c, p)) ? undefined : c,
  )
  const metadata = createMetadata({
    ...snap.metadata,
    schemaString: serializeSchema(schema),
    configuration: config,
  })
  return metadataOperation(snap, 'DROP COLUMNS', { columns: JSON.stringify(names) }, metadata, snap.protocol)
}

/**
 * `ALTER TABLE ... RENAME COLUMN`: metadata only, as Delta does it under column mapping. The field
 * keeps its id and physical name, so every file, stat and partition value written before reads
 * under the new name. A partition column is renamed in the partitioning too.
 *
 * @param ctx - the transaction's context
 * @param from - the column, dotted for a nested struct field
 * @param to - its new name (one name, without dots: it stays at the same level)
 * @throws {ColumnMappingRequiredError} `DELTA_UNSUPPORTED_RENAME_COLUMN` without column mapping
 * @throws {ColumnChangeRefusedError} `DELTA_CONSTRAINT_DEPENDENT_COLUMN_CHANGE` when a CHECK
 *   constraint uses the column, `DELTA_GENERATED_COLUMNS_DEPENDENT_COLUMN_CHANGE` when a generated
 *   column is computed from it
 * @throws {InvalidArgumentError} for a missing column, or a new name that is taken or invalid
 */
export function buildRenameColumn(ctx: OperationContext, from: string, to: string): PreparedOperation {
  const snap = ctx.snapshot
  if (columnMappingModeProperty(snap.properties) === 'none') throw new ColumnMappingRequiredError('rename')
  const at = fieldAtPath(snap.schema, from.split('.'))
  if (at === undefined) throw unknownColumn(snap.schema, from, 'from')
  if (to.includes('.') || to.trim() === '') {
    throw new InvalidArgumentError(`Invalid new column name '${to}'`, {
      argument: 'to',
      hint: 'A column is renamed at its own level: give one name, without dots.',
    })
  }
  const parent = at.path.slice(0, -1)
  const siblings =
    parent.length === 0 ? snap.schema : (fieldAtPath(snap.schema, parent)?.field.type as StructType)
  const clash = siblings.fields.find((f) => f.name.toLowerCase() === to.toLowerCase() && f !== at.field)
  if (clash !== undefined) {
    throw new InvalidArgumentError(`Cannot rename '${from}' to '${to}': a column '${clash.name}' exists`, {
      argument: 'to',
    })
  }
  checkNoDependentConstraint(snap.properties, at.path)
  checkNoDependentGeneratedColumn(snap.schema, at.path)
  const schema = withRenamedField(snap.schema, at.path, to)
  const renamed = [...parent, to]
  const partitionColumns =
    parent.length === 0
      ? snap.partitionColumns.map((p) => (p.toLowerCase() === at.field.name.toLowerCase() ? to : p))
      : snap.partitionColumns
  const config = rewriteStatsColumns(snap.properties, (c) =>
    isPathUnder(c, at.path) ? [...renamed, ...c.slice(at.path.length)] : c,
  )
  checkColumnsFreeOfRowTracking(snap, schema, 'to')
  const metadata = createMetadata({
    ...snap.metadata,
    schemaString: serializeSchema(schema),
    partitionColumns,
    configuration: config,
  })
  return metadataOperation(
    snap,
    'RENAME COLUMN',
    { oldColumnPath: at.path.join('.'), newColumnPath: renamed.join('.') },
    metadata,
    snap.protocol,
  )
}

/**
 * `ALTER TABLE ... CHANGE COLUMN c COMMENT '...'`: the column's `comment` metadata.
 *
 * @param ctx - the transaction's context
 * @param column - the column, dotted for a nested struct field
 * @param comment - the new comment
 * @throws {InvalidArgumentError} when the column does not exist
 */
export function buildSetColumnComment(
  ctx: OperationContext,
  column: string,
  comment: string,
): PreparedOperation {
  const snap = ctx.snapshot
  const { schema, field } = changeField(snap.schema, column, (f) =>
    Object.freeze({ ...f, metadata: Object.freeze({ ...f.metadata, comment }) }),
  )
  const metadata = createMetadata({ ...snap.metadata, schemaString: serializeSchema(schema) })
  return metadataOperation(
    snap,
    'CHANGE COLUMN',
    { column: JSON.stringify(fieldForLog(parentOf(column), field)) },
    metadata,
    snap.protocol,
  )
}

/**
 * `ALTER TABLE ... ALTER COLUMN c SET NOT NULL`: every live row is checked first (a full scan in
 * DuckDB), so the change reads the whole table. A column that is NOT NULL already is left as is
 * (no commit).
 *
 * @param ctx - the transaction's context
 * @param column - the column, dotted for a nested struct field
 * @throws {InvalidArgumentError} when the column does not exist
 * @throws {NewConstraintViolationError} `DELTA_NEW_NOT_NULL_VIOLATION`, naming one row that holds null
 */
export async function buildSetNotNull(ctx: OperationContext, column: string): Promise<PreparedOperation> {
  const snap = ctx.snapshot
  const { schema, field, before } = changeField(snap.schema, column, (f) =>
    Object.freeze({ ...f, nullable: false }),
  )
  const parameters = { column: JSON.stringify(fieldForLog(parentOf(column), field)) }
  if (!before.nullable)
    return { operation: 'CHANGE COLUMN', parameters, actions: [], metrics: {}, changesData: false }
  ctx.recordWholeTableRead()
  const path = column.split('.')
  const parent = path.slice(0, -1)
  const real = resolvedPath(snap.schema, path)
  const here = isNull(col(real))
  const constraint: NotNullConstraint = {
    kind: 'not-null',
    path: real,
    violation:
      parent.length === 0 ? here : { kind: 'and', left: isNull(col(real.slice(0, -1)), true), right: here },
  }
  await checkRowsAgainst(
    { engine: ctx.engine, metadata: snap.metadata, signal: ctx.signal },
    snap.activeFiles(),
    [constraint],
    'new',
  )
  const metadata = createMetadata({ ...snap.metadata, schemaString: serializeSchema(schema) })
  return metadataOperation(snap, 'CHANGE COLUMN', parameters, metadata, snap.protocol)
}

/**
 * `ALTER TABLE ... ADD CONSTRAINT name CHECK (expr)`: every live row is checked first (a full scan
 * in DuckDB, reading the whole table), then `delta.constraints.<name>` is set and the protocol
 * gains `checkConstraints` (writer version 3, or the feature at writer 7).
 *
 * @param ctx - the transaction's context
 * @param name - the constraint's name (kept lower-cased, as Delta keeps it)
 * @param expression - the CHECK expression, in the predicate syntax of `where`
 * @throws {ConstraintAlreadyExistsError} when a constraint of that name exists
 * @throws {InvalidPredicateError | InvalidArgumentError} for an expression that does not parse or
 *   names a missing column
 * @throws {NewConstraintViolationError} `DELTA_NEW_CHECK_CONSTRAINT_VIOLATION`, naming one row
 */
export async function buildAddConstraint(
  ctx: OperationContext,
  name: string,
  expression: string,
): Promise<PreparedOperation> {
  const snap = ctx.snapshot
  checkConstraintName(name)
  const key = constraintPropertyKey(name)
  const existing = snap.properties[key]
  if (existing !== undefined) throw new ConstraintAlreadyExistsError(name, existing)
  const violation = violationOf(expression, snap.schema, 'expression')
  ctx.recordWholeTableRead()
  await checkRowsAgainst(
    { engine: ctx.engine, metadata: snap.metadata, signal: ctx.signal },
    snap.activeFiles(),
    [{ kind: 'check', name: name.toLowerCase(), text: expression, violation }],
    'new',
  )
  const config = { ...snap.properties, [key]: expression }
  const metadata = createMetadata({ ...snap.metadata, configuration: config })
  const protocol = protocolWithRequiredFeatures(snap.protocol, config, snap.schema)
  return metadataOperation(snap, 'ADD CONSTRAINT', { name, expr: expression }, metadata, protocol)
}

/**
 * `ALTER TABLE ... DROP CONSTRAINT [IF EXISTS] name`. A missing constraint with `ifExists` is no
 * change (no commit).
 *
 * @param ctx - the transaction's context
 * @param name - the constraint's name (any case)
 * @param ifExists - whether a missing constraint is a no-op rather than an error
 * @throws {ConstraintNotFoundError} when the table has no such constraint and `ifExists` is false
 */
export function buildDropConstraint(
  ctx: OperationContext,
  name: string,
  ifExists: boolean,
): PreparedOperation {
  const snap = ctx.snapshot
  const key = constraintPropertyKey(name)
  const existing = snap.properties[key]
  if (existing === undefined) {
    if (!ifExists) throw new ConstraintNotFoundError(name, [...checkConstraintsOf(snap.properties).keys()])
    return {
      operation: 'DROP CONSTRAINT',
      parameters: { name, existed: 'false' },
      actions: [],
      metrics: {},
      changesData: false,
    }
  }
  const config: Record<string, string> = { ...snap.properties }
  delete config[key]
  const metadata = createMetadata({ ...snap.metadata, configuration: config })
  return metadataOperation(
    snap,
    'DROP CONSTRAINT',
    { name, expr: existing, existed: 'true' },
    metadata,
    snap.protocol,
  )
}

/**
 * `UPGRADE PROTOCOL`: a commit of the protocol alone, with `features` added (and those they
 * require), as Delta commits the support of row tracking before backfilling it.
 *
 * @param ctx - the transaction's context
 * @param features - the features to support
 * @returns the operation; no action when the table supports them already
 */
export function buildProtocolUpgrade(ctx: OperationContext, features: readonly string[]): PreparedOperation {
  const snap = ctx.snapshot
  const asked = Object.fromEntries(features.map((f) => [`${PROTOCOL_ONLY_PREFIX}${f}`, 'supported']))
  const protocol = protocolWithRequiredFeatures(snap.protocol, { ...snap.properties, ...asked }, snap.schema)
  checkWriteSupported(protocol, snap.metadata, WRITE_SUPPORT)
  const actions: Action[] = protocol === snap.protocol ? [] : [{ protocol }]
  return {
    operation: 'UPGRADE PROTOCOL',
    parameters: {
      newProtocol: JSON.stringify({
        minReaderVersion: protocol.minReaderVersion,
        minWriterVersion: protocol.minWriterVersion,
        readerFeatures: protocol.readerFeatures,
        writerFeatures: protocol.writerFeatures,
      }),
    },
    actions,
    metrics: {},
    changesData: false,
  }
}

// === Internals ===

/** The features every transaction honors beyond the always-writable ones. */
const WRITE_SUPPORT = {
  extraWriterFeatures: [IN_COMMIT_TIMESTAMP_FEATURE, ROW_TRACKING_FEATURE, ...IN_PLACE_ONLY_FEATURES],
}

function metadataOperation(
  snap: Snapshot,
  operation: string,
  parameters: Readonly<Record<string, unknown>>,
  metadata: Metadata,
  protocol: Protocol,
): PreparedOperation {
  return {
    operation,
    parameters,
    actions: metadataActions(snap, metadata, protocol),
    metrics: {},
    changesData: false,
  }
}

/**
 * The actions that commit `metadata` (and `protocol`, first, when it differs from the table's),
 * once a transaction may write the result.
 *
 * @throws {UnsupportedTableFeatureError} when the result is a table delta-rlc cannot write
 */
function metadataActions(snap: Snapshot, metadata: Metadata, protocol: Protocol): Action[] {
  checkWriteSupported(protocol, metadata, WRITE_SUPPORT)
  const actions: Action[] = []
  if (protocol !== snap.protocol) actions.push({ protocol })
  actions.push({ metaData: metadata })
  return actions
}

function checkSettable(snap: Snapshot, properties: Readonly<Record<string, string>>): void {
  for (const [key, value] of Object.entries(properties)) {
    const refusal = checkSettableProperty(key, value)
    if (refusal === 'unknown') {
      throw new UnknownTablePropertyError(
        key,
        'Delta defines no such property; check the spelling, or use a name outside the delta. namespace for a user property.',
      )
    }
    if (refusal === 'reserved') {
      throw new UnknownTablePropertyError(
        key,
        key.startsWith('delta.constraints.')
          ? `Add CHECK constraints with alter.addConstraint('${key.slice('delta.constraints.'.length)}', expr).`
          : 'Delta sets this property itself; it is not set by hand.',
      )
    }
    if (key === TableProperty.columnMappingMode) {
      const from = columnMappingModeProperty(snap.properties)
      const to = columnMappingModeProperty({ [key]: value })
      if (to !== from && !(from === 'none' && to === 'name')) throw new ColumnMappingModeChangeError(from, to)
    }
  }
}

/**
 * The rule of turning row tracking on: the table must already support the feature and every
 * live file must have row ids, or some rows would have none (the backfill does both first).
 *
 * @throws {InvalidArgumentError} when a live file has no `baseRowId`
 */
function checkRowTrackingTurnedOn(snap: Snapshot, protocol: Protocol, metadata: Metadata): void {
  const before = rowTrackingState(snap.protocol, snap.metadata)
  const after = rowTrackingState(protocol, metadata)
  if (!after.enabled || before.enabled) return
  if (!before.supported) {
    throw new InvalidArgumentError(
      `${RowTrackingProperty.enable}=true needs the rowTracking feature supported and backfilled first`,
      {
        argument: RowTrackingProperty.enable,
        hint: 'table.alter.setProperties does both; a transaction cannot.',
      },
    )
  }
  const missing = snap
    .activeFiles()
    .find((f) => f.baseRowId === undefined || f.defaultRowCommitVersion === undefined)
  if (missing !== undefined) {
    throw new InvalidArgumentError(
      `Cannot enable row tracking: the live file ${missing.path} has no row ids (it was not backfilled)`,
      {
        argument: RowTrackingProperty.enable,
        hint: 'Run table.alter.setProperties again: it backfills the files first.',
      },
    )
  }
}

/** A new field's physical name, as Delta names them (`col-<uuid>`). */
export function newPhysicalName(): string {
  return `col-${randomUUID()}`
}

function physicalNameOrName(f: StructField): string {
  const phys = f.metadata[COLUMN_MAPPING_PHYSICAL_NAME_KEY]
  return typeof phys === 'string' && phys !== '' ? phys : f.name
}

/** Fields as given, without column mapping metadata: the table gives new fields theirs. */
function withoutMapping(fields: readonly StructField[]): StructField[] {
  const strip = (t: DataType): DataType => {
    if (typeof t === 'string') return t
    switch (t.type) {
      case 'struct':
        return Object.freeze({ type: 'struct', fields: Object.freeze(withoutMapping(t.fields)) })
      case 'array':
        return Object.freeze({ ...t, elementType: strip(t.elementType) })
      case 'map':
        return Object.freeze({ ...t, keyType: strip(t.keyType), valueType: strip(t.valueType) })
    }
  }
  return fields.map((f) => {
    const metadata = { ...f.metadata }
    delete metadata['delta.columnMapping.id']
    delete metadata[COLUMN_MAPPING_PHYSICAL_NAME_KEY]
    return Object.freeze({ ...f, type: strip(f.type), metadata: Object.freeze(metadata) })
  })
}

function unknownColumn(schema: StructType, column: string, argument: string): InvalidArgumentError {
  return new InvalidArgumentError(`Unknown column '${column}'`, {
    argument,
    hint: `The table has: ${schema.fields.map((x) => x.name).join(', ')}`,
  })
}

/**
 * Refuses a change of the field at `path` when a CHECK constraint uses it (or a field under it, or
 * the struct it is in), as Delta does.
 *
 * @throws {ColumnChangeRefusedError} `DELTA_CONSTRAINT_DEPENDENT_COLUMN_CHANGE`
 */
function checkNoDependentConstraint(config: TableConfiguration, path: readonly string[]): void {
  const dependents: string[] = []
  for (const [name, text] of checkConstraintsOf(config)) {
    let used: readonly (readonly string[])[]
    try {
      used = columnsOf(parseExpression(text))
    } catch {
      // A constraint this library cannot parse may use the column: refuse rather than guess.
      dependents.push(`${name} (${text})`)
      continue
    }
    if (used.some((c) => isPathUnder(c, path) || isPathUnder(path, c))) dependents.push(`${name} (${text})`)
  }
  if (dependents.length > 0) {
    throw new ColumnChangeRefusedError('DELTA_CONSTRAINT_DEPENDENT_COLUMN_CHANGE', path.join('.'), dependents)
  }
}

/**
 * Refuses a change of the field at `path` when another field's generation expression uses it, as
 * Delta does; the generated field itself may change.
 *
 * @throws {ColumnChangeRefusedError} `DELTA_GENERATED_COLUMNS_DEPENDENT_COLUMN_CHANGE`
 */
function checkNoDependentGeneratedColumn(schema: StructType, path: readonly string[]): void {
  const dependents: string[] = []
  const visit = (fields: readonly StructField[], prefix: readonly string[]): void => {
    for (const f of fields) {
      const here = [...prefix, f.name]
      const text = f.metadata[GENERATION_EXPRESSION_KEY]
      if (typeof text === 'string' && !isPathUnder(here, path)) {
        let used: readonly (readonly string[])[] | undefined
        try {
          used = columnsOf(parseExpression(text))
        } catch {
          used = undefined
        }
        // An expression this library cannot parse may use the column: refuse rather than guess.
        if (used === undefined || used.some((c) => isPathUnder(c, path) || isPathUnder(path, c))) {
          dependents.push(`${here.join('.')} (${text})`)
        }
      }
      if (isStructType(f.type)) visit(f.type.fields, here)
    }
  }
  visit(schema.fields, [])
  if (dependents.length > 0) {
    throw new ColumnChangeRefusedError(
      'DELTA_GENERATED_COLUMNS_DEPENDENT_COLUMN_CHANGE',
      path.join('.'),
      dependents,
    )
  }
}

/**
 * Refuses a schema a drop left without a data column, or with an empty struct.
 *
 * @throws {InvalidArgumentError}
 */
function checkNotEmptied(schema: StructType, partitionColumns: readonly string[]): void {
  const partition = new Set(partitionColumns.map((p) => p.toLowerCase()))
  if (schema.fields.every((f) => partition.has(f.name.toLowerCase()))) {
    throw new InvalidArgumentError('Cannot drop every data column of the table', {
      argument: 'columns',
      hint: 'A table keeps at least one column that is not a partition column.',
    })
  }
  const emptyStruct = (t: DataType, at: string): void => {
    if (!isStructType(t)) return
    if (t.fields.length === 0) {
      throw new InvalidArgumentError(`Cannot drop every field of struct '${at}'`, {
        argument: 'columns',
        hint: 'Drop the struct column itself instead.',
      })
    }
    for (const f of t.fields) emptyStruct(f.type, `${at}.${f.name}`)
  }
  for (const f of schema.fields) emptyStruct(f.type, f.name)
}

/**
 * `delta.dataSkippingStatsColumns` with each listed column passed through `change` (undefined
 * removes it), as Delta keeps the list in step with a drop or rename. The same properties when
 * the table has no such list.
 */
function rewriteStatsColumns(
  config: TableConfiguration,
  change: (path: readonly string[]) => readonly string[] | undefined,
): TableConfiguration {
  const listed = dataSkippingStatsColumns(config)
  if (listed === undefined) return config
  const kept = listed
    .map((c) => change(c.split('.').map((s) => s.replace(/^`(.*)`$/, '$1'))))
    .filter((p): p is readonly string[] => p !== undefined)
    .map((p) =>
      p.map((s) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(s) ? s : `\`${s.replaceAll('`', '``')}\``)).join('.'),
    )
  const out: Record<string, string> = { ...config }
  if (kept.length === 0) delete out[TableProperty.dataSkippingStatsColumns]
  else out[TableProperty.dataSkippingStatsColumns] = kept.join(',')
  return out
}

/**
 * Names the hidden columns that will hold materialized row ids and row commit versions, as Delta
 * does once per table that supports row tracking (`_row-id-col-<uuid>`,
 * `_row-commit-version-col-<uuid>`): names no data column can take. Names already set are kept.
 *
 * @param config - the table properties, changed in place
 */
export function withMaterializedColumnNames(config: Record<string, string>): void {
  const { materializedRowIdColumnName: rowId, materializedRowCommitVersionColumnName: version } =
    RowTrackingProperty
  config[rowId] ??= `_row-id-col-${randomUUID()}`
  config[version] ??= `_row-commit-version-col-${randomUUID()}`
}

function checkConstraintName(name: string): void {
  if (typeof name !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
    throw new InvalidArgumentError(`Invalid constraint name '${String(name)}'`, {
      argument: 'name',
      hint: 'A constraint name is letters, digits and underscores, starting with a letter or underscore.',
    })
  }
}

/** The top-level or nested field at a dotted path, changed by `change`, in a new schema. */
function changeField(
  schema: StructType,
  column: string,
  change: (f: StructField) => StructField,
): { schema: StructType; field: StructField; before: StructField } {
  if (typeof column !== 'string' || column === '') {
    throw new InvalidArgumentError('column must be a column name', { argument: 'column' })
  }
  const path = column.split('.')
  let found: { field: StructField; before: StructField } | undefined
  const rewrite = (type: StructType, at: number): StructType => {
    const name = (path[at] as string).toLowerCase()
    const i = type.fields.findIndex((f) => f.name.toLowerCase() === name)
    const f = type.fields[i]
    if (f === undefined) {
      throw new InvalidArgumentError(`Unknown column '${column}'`, {
        argument: 'column',
        hint: `The ${at === 0 ? 'table' : `struct ${path.slice(0, at).join('.')}`} has: ${type.fields.map((x) => x.name).join(', ')}`,
      })
    }
    let next: StructField
    if (at === path.length - 1) {
      next = change(f)
      found = { field: next, before: f }
    } else {
      if (!isStructType(f.type as DataType)) {
        throw new InvalidArgumentError(`Column '${path.slice(0, at + 1).join('.')}' is not a struct`, {
          argument: 'column',
        })
      }
      next = Object.freeze({ ...f, type: rewrite(f.type as StructType, at + 1) })
    }
    const fields = [...type.fields]
    fields[i] = next
    return Object.freeze({ type: 'struct', fields: Object.freeze(fields) })
  }
  const out = rewrite(schema, 0)
  if (found === undefined)
    throw new InvalidArgumentError(`Unknown column '${column}'`, { argument: 'column' })
  return { schema: out, ...found }
}

/** The schema's own spelling of a dotted path (names compare without case). */
function resolvedPath(schema: StructType, path: readonly string[]): string[] {
  const out: string[] = []
  let type: StructType | undefined = schema
  for (const p of path) {
    const f: StructField | undefined = type?.fields.find((x) => x.name.toLowerCase() === p.toLowerCase())
    out.push(f?.name ?? p)
    type = f !== undefined && isStructType(f.type) ? f.type : undefined
  }
  return out
}

function parentOf(column: string): string[] {
  return column.split('.').slice(0, -1)
}

/** A field as Delta's history records it: name (dotted), type, nullable, metadata. */
function fieldForLog(parent: readonly string[], f: StructField): Record<string, unknown> {
  return {
    name: [...parent, f.name].join('.'),
    type: typeof f.type === 'string' ? f.type : f.type.type,
    nullable: f.nullable,
    metadata: f.metadata,
  }
}
