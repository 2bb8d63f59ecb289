/**
 * Validation of what callers pass to the public entry points (`DeltaTable`, `Transaction`, scan
 * and snapshot options). Each check runs before any I/O and throws `InvalidArgumentError` naming
 * the argument and what was expected, instead of letting a wrong type surface as a `TypeError`
 * deep inside. Only types and shapes are checked here; the operations check meanings (unknown
 * columns, retention bounds, ...) themselves.
 *
 * An option key an entry point does not know is refused too, naming the nearest known key: a
 * misspelt or unsupported option (`append(rows, { mode: 'overwrite' })`) would otherwise be
 * ignored and the call would do something else than asked. The known keys of each entry point
 * are a table typed against its options interface, so a new option cannot be forgotten here.
 */

import type { DefaultEngineOptions } from '../engine-default/default-engine.js'
import {
  checkKnownKeys,
  fail,
  isPlainObject,
  optBoolean,
  optionsObject,
  optNumber,
  optObject,
  optOneOf,
  optSignal,
  optString,
  optStringArray,
} from '../errors/argument-checks.js'
import { InvalidArgumentError } from '../errors/index.js'
import type { Expression } from '../expressions/ast.js'
import { checkExpression } from '../expressions/check-expression.js'
import { refuseBlankPredicate } from '../expressions/parse-where.js'
import type { AppendOptions } from '../ops/append.js'
import type { FsckOptions } from '../ops/fsck.js'
import type {
  MergeDeleteAction,
  MergeInsertAction,
  MergeOptions,
  MergeUpdateAction,
} from '../ops/merge-clauses.js'
import type { OptimizeOptions } from '../ops/optimize.js'
import type { OverwriteOptions } from '../ops/overwrite.js'
import type { RestoreOptions } from '../ops/restore.js'
import type { UpdateOptions } from '../ops/update.js'
import type { VacuumOptions } from '../ops/vacuum.js'
import { MAX_TYPE_DEPTH, type StructType, typeDepth } from '../protocol/schema.js'
import type { ScanOptions } from '../scan/table-scan.js'
import type { LoadSnapshotOptions } from '../snapshot/load-snapshot.js'
import type { OpenStoreOptions } from '../storage/index.js'
import type { CommitRetryPolicy } from '../txn/commit-options.js'
import type { BeginOptions } from '../txn/transaction.js'
import type { AppendFileOptions } from './append-file.js'
import type { CreateOptions } from './create-table.js'
import type {
  CheckpointOptions,
  CleanupMetadataOptions,
  HistoryOptions,
  OpenOptions,
  StopOptions,
} from './delta-table.js'

// === Option keys ===

const OPEN_KEYS = {
  storage: true,
  engine: true,
  storageOptions: true,
  engineOptions: true,
  conflicts: true,
  retry: true,
  autoCheckpoint: true,
  explainConflicts: true,
} as const satisfies Record<keyof OpenOptions, true>
const RETRY_KEYS = {
  maxAttempts: true,
  maxStorageRetries: true,
  baseDelayMs: true,
  maxDelayMs: true,
} as const satisfies Record<keyof CommitRetryPolicy, true>
const ENGINE_OPTION_KEYS = {
  scratchDir: true,
  threads: true,
  memoryLimit: true,
  cacheDir: true,
  cacheMaxBytes: true,
} as const satisfies Record<keyof DefaultEngineOptions, true>
const STORAGE_OPTION_KEYS = { azure: true, s3: true, gcs: true } as const satisfies Record<
  keyof OpenStoreOptions,
  true
>
const CREATE_KEYS = {
  schema: true,
  partitionBy: true,
  clusterBy: true,
  properties: true,
  ifExists: true,
  name: true,
  description: true,
} as const satisfies Record<keyof CreateOptions, true>
const SNAPSHOT_KEYS = {
  version: true,
  timestamp: true,
  signal: true,
} as const satisfies Record<keyof LoadSnapshotOptions, true>
const SCAN_KEYS = {
  where: true,
  columns: true,
  batchSize: true,
  jsonSafe: true,
  withRowTracking: true,
  signal: true,
} as const satisfies Record<keyof ScanOptions, true>
const BEGIN_KEYS = { isolationLevel: true, signal: true } as const satisfies Record<keyof BeginOptions, true>
const STOP_KEYS = { signal: true } as const satisfies Record<keyof StopOptions, true>
const HISTORY_KEYS = { limit: true, signal: true } as const satisfies Record<keyof HistoryOptions, true>
const CHECKPOINT_KEYS = { version: true } as const satisfies Record<keyof CheckpointOptions, true>
const APPEND_KEYS = {
  targetFileSize: true,
  mode: true,
  replaceWhere: true,
  partitionOverwriteMode: true,
  schemaMode: true,
  partitionBy: true,
} as const satisfies Record<keyof AppendOptions, true>
const UPDATE_KEYS = { where: true, set: true } as const satisfies Record<keyof UpdateOptions, true>
const MERGE_KEYS = {
  on: true,
  whenMatched: true,
  whenNotMatched: true,
  whenNotMatchedBySource: true,
  sourceSchema: true,
  schemaEvolution: true,
} as const satisfies Record<keyof MergeOptions, true>
const MATCHED_CLAUSE_KEYS = { if: true, update: true, delete: true } as const satisfies Record<
  keyof MergeUpdateAction | keyof MergeDeleteAction,
  true
>
const INSERT_CLAUSE_KEYS = { if: true, insert: true } as const satisfies Record<keyof MergeInsertAction, true>
const OPTIMIZE_KEYS = {
  targetFileSize: true,
  minFileSize: true,
  maxDeletedRowsRatio: true,
  zOrderBy: true,
  where: true,
} as const satisfies Record<keyof OptimizeOptions, true>
const VACUUM_KEYS = {
  retentionHours: true,
  dryRun: true,
  enforceRetentionDuration: true,
  logging: true,
  signal: true,
} as const satisfies Record<keyof VacuumOptions, true>
const CLEANUP_METADATA_KEYS = { dryRun: true, signal: true } as const satisfies Record<
  keyof CleanupMetadataOptions,
  true
>
const FSCK_KEYS = { repair: true, signal: true } as const satisfies Record<keyof FsckOptions, true>
const STAGE_ACTIONS_KEYS = { operation: true, changesData: true } as const
const OVERWRITE_KEYS = {
  targetFileSize: true,
  replaceWhere: true,
  partitionOverwriteMode: true,
} as const satisfies Record<keyof OverwriteOptions, true>
const RESTORE_KEYS = { version: true, timestamp: true, signal: true } as const satisfies Record<
  keyof RestoreOptions,
  true
>
const APPEND_FILE_KEYS = {
  format: true,
  columns: true,
  ignoreExtraColumns: true,
  batchRows: true,
  targetFileSize: true,
  mode: true,
  replaceWhere: true,
  partitionOverwriteMode: true,
  schemaMode: true,
  partitionBy: true,
  signal: true,
} as const satisfies Record<keyof AppendFileOptions, true>

// === Predicates and expressions ===

/**
 * A predicate argument: absent, SQL text, or an expression tree. Blank text is refused: it is
 * almost always a caller's bug, and "every row" is the argument left out, or `'true'`.
 *
 * @param value - what was passed
 * @param argument - its name, e.g. `where`
 * @returns the value, typed
 * @throws {InvalidArgumentError} for blank text, another type, or a malformed tree
 * @throws {InvalidPredicateError} for a tree deeper than the expression depth limit
 */
export function checkWhere(value: unknown, argument: string): string | Expression | undefined {
  if (value === undefined) return value
  if (typeof value === 'string') {
    refuseBlankPredicate(value, argument)
    return value
  }
  return checkExpression(value, argument)
}

function requireExpressionText(value: unknown, argument: string): void {
  if (typeof value !== 'string') checkExpression(value, argument)
}

// === Table-level options ===

/**
 * The location of a table: a non-empty string.
 *
 * @throws {InvalidArgumentError} otherwise
 */
export function checkLocation(location: unknown): asserts location is string {
  if (typeof location !== 'string' || location === '') {
    fail('location', 'a non-empty string (a path or a store URL)', location)
  }
}

/**
 * Options of `DeltaTable.open` (and the open options of `create`).
 *
 * @throws {InvalidArgumentError} naming the option
 */
export function checkOpenOptions(value: unknown, at = 'options', call = 'DeltaTable.open'): void {
  const o = optionsObject(value, at)
  checkKnownKeys(o, at, OPEN_KEYS, call)
  optObject(o, 'storage', at)
  optObject(o, 'engine', at)
  optObject(o, 'storageOptions', at)
  optObject(o, 'engineOptions', at)
  if (isPlainObject(o.engineOptions))
    checkKnownKeys(o.engineOptions, `${at}.engineOptions`, ENGINE_OPTION_KEYS, `${call} engineOptions`)
  if (isPlainObject(o.storageOptions))
    checkKnownKeys(o.storageOptions, `${at}.storageOptions`, STORAGE_OPTION_KEYS, `${call} storageOptions`)
  optBoolean(o, 'autoCheckpoint', at)
  optBoolean(o, 'explainConflicts', at)
  const conflicts = o.conflicts
  if (conflicts !== undefined && conflicts !== 'all' && conflicts !== 'none' && !isPlainObject(conflicts)) {
    fail(`${at}.conflicts`, "'all', 'none' or an object of flags", conflicts)
  }
  optObject(o, 'retry', at)
  if (o.retry !== undefined) {
    const retry = o.retry as Readonly<Record<string, unknown>>
    const r = `${at}.retry`
    checkKnownKeys(retry, r, RETRY_KEYS, `${call} retry`)
    optNumber(retry, 'maxAttempts', r, { min: 1, integer: true })
    optNumber(retry, 'maxStorageRetries', r, { min: 0, integer: true })
    optNumber(retry, 'baseDelayMs', r, { min: 0 })
    optNumber(retry, 'maxDelayMs', r, { min: 0 })
  }
}

/**
 * Options of `DeltaTable.create`.
 *
 * @throws {InvalidArgumentError} naming the option
 */
export function checkCreateOptions(value: unknown): void {
  if (!isPlainObject(value)) {
    fail('options', "an object with at least a schema, e.g. { schema: 'id long not null' }", value)
  }
  const at = 'options'
  checkKnownKeys(value, at, CREATE_KEYS, 'DeltaTable.create')
  if (typeof value.schema !== 'string' && !isPlainObject(value.schema)) {
    fail(`${at}.schema`, 'DDL text or a schema object', value.schema)
  }
  optStringArray(value, 'partitionBy', at)
  optStringArray(value, 'clusterBy', at)
  optObject(value, 'properties', at)
  const properties = (value.properties ?? {}) as Readonly<Record<string, unknown>>
  for (const [k, v] of Object.entries(properties)) {
    if (typeof v !== 'string') fail(`${at}.properties['${k}']`, 'a string', v)
  }
  optOneOf(value, 'ifExists', at, ['error', 'ignore'])
  optString(value, 'name', at)
  optString(value, 'description', at)
}

/**
 * Time-travel options (`snapshot`, `scan`): `version`, `timestamp`, `signal`.
 *
 * @throws {InvalidArgumentError} naming the option
 */
export function checkSnapshotOptions(value: unknown, at = 'options'): void {
  const o = optionsObject(value, at)
  checkKnownKeys(o, at, SNAPSHOT_KEYS, 'snapshot')
  checkSnapshotFields(o, at)
}

function checkSnapshotFields(o: Readonly<Record<string, unknown>>, at: string): void {
  const v = o.version
  if (v !== undefined && typeof v !== 'bigint' && typeof v !== 'number') {
    fail(`${at}.version`, 'a version number (bigint or integer)', v)
  }
  const t = o.timestamp
  if (t !== undefined && !(t instanceof Date) && typeof t !== 'number' && typeof t !== 'string') {
    fail(`${at}.timestamp`, 'a Date, milliseconds since the epoch, or ISO text', t)
  }
  optSignal(o, at)
}

/**
 * Options of `begin`: `isolationLevel`, `signal`.
 *
 * @throws {InvalidArgumentError} naming the option
 */
export function checkBeginOptions(value: unknown): void {
  const o = optionsObject(value, 'options')
  checkKnownKeys(o, 'options', BEGIN_KEYS, 'begin')
  optOneOf(o, 'isolationLevel', 'options', ['Serializable', 'WriteSerializable'])
  optSignal(o, 'options')
}

/**
 * Options of `history`: `limit`, `signal`.
 *
 * @throws {InvalidArgumentError} naming the option
 */
export function checkHistoryOptions(value: unknown): void {
  const o = optionsObject(value, 'options')
  checkKnownKeys(o, 'options', HISTORY_KEYS, 'history')
  optNumber(o, 'limit', 'options', { min: 0, integer: true })
  optSignal(o, 'options')
}

/**
 * Options of `checkpoint`: `version`.
 *
 * @throws {InvalidArgumentError} naming the option
 */
export function checkCheckpointOptions(value: unknown): void {
  const o = optionsObject(value, 'options')
  if (o.timestamp !== undefined) {
    fail('options.timestamp', 'absent: a checkpoint is written for a version', o.timestamp)
  }
  checkKnownKeys(o, 'options', CHECKPOINT_KEYS, 'checkpoint')
  checkSnapshotFields(o, 'options')
}

// === Reads ===

/**
 * Scan options: `where`, `columns`, `batchSize`, `signal`, and with `timeTravel` (a table's scan,
 * not a transaction's, which reads its own snapshot) `version` and `timestamp`.
 *
 * @throws {InvalidArgumentError} naming the option
 */
export function checkScanOptions(value: unknown, timeTravel = false): void {
  const o = optionsObject(value, 'options')
  checkKnownKeys(o, 'options', timeTravel ? [SCAN_KEYS, SNAPSHOT_KEYS] : SCAN_KEYS, 'scan')
  if (timeTravel) checkSnapshotFields(o, 'options')
  checkWhere(o.where, 'options.where')
  optStringArray(o, 'columns', 'options')
  optNumber(o, 'batchSize', 'options', { min: 1, integer: true })
  optBoolean(o, 'jsonSafe', 'options')
  optBoolean(o, 'withRowTracking', 'options')
  optSignal(o, 'options')
}

// === Writes ===

/**
 * Rows to append or merge: an array of plain objects.
 *
 * @throws {InvalidArgumentError} naming the first bad row
 */
export function checkRows(value: unknown, argument: string): void {
  if (!Array.isArray(value)) fail(argument, 'an array of row objects', value)
  for (let i = 0; i < value.length; i++) {
    const row: unknown = value[i]
    if (!isPlainObject(row)) fail(`${argument}[${i}]`, 'a row object (column name to value)', row)
    for (const column in row) {
      const v = (row as Record<string, unknown>)[column]
      if (v !== null && typeof v === 'object') checkValueDepth(v, argument, i, column)
    }
  }
}

/**
 * Refuses a value nested deeper than {@link MAX_TYPE_DEPTH} levels of arrays, maps and objects
 * (a value of a `struct`, `array` or `map` column). Iterative, and it stops at the limit, so a
 * hostile value costs no more than a legal one.
 */
function checkValueDepth(value: object, argument: string, row: number, column: string): void {
  const stack: { v: unknown; d: number }[] = [{ v: value, d: 0 }]
  while (stack.length > 0) {
    const { v, d } = stack.pop() as { v: unknown; d: number }
    if (v === null || typeof v !== 'object' || v instanceof Uint8Array || v instanceof Date) continue
    const depth = d + 1
    if (depth > MAX_TYPE_DEPTH) {
      throw new InvalidArgumentError(
        `Row ${row}, column '${column}': the value nests arrays, maps or objects more than ${MAX_TYPE_DEPTH} levels deep`,
        {
          argument,
          hint: `Values and types nest at most ${MAX_TYPE_DEPTH} levels (struct, array and map each count one): flatten the value, or store the deep part as JSON text.`,
        },
      )
    }
    const children = Array.isArray(v) ? v : v instanceof Map ? [...v.keys(), ...v.values()] : Object.values(v)
    for (const c of children) if (c !== null && typeof c === 'object') stack.push({ v: c, d: depth })
  }
}

/**
 * Refuses to write into a table whose schema nests deeper than {@link MAX_TYPE_DEPTH} (written by
 * another engine: delta-rlc creates none).
 *
 * @param schema - the table's schema
 * @throws {InvalidArgumentError} naming the limit
 */
export function checkWritableDepth(schema: StructType): void {
  for (const f of schema.fields) {
    if (typeDepth(f.type) > MAX_TYPE_DEPTH) {
      throw new InvalidArgumentError(
        `Column '${f.name}' nests struct, array and map types more than ${MAX_TYPE_DEPTH} levels deep: delta-rlc does not write to it`,
        {
          argument: 'schema',
          hint: `Types nest at most ${MAX_TYPE_DEPTH} levels (struct, array and map each count one); write to this table with the engine that created it.`,
        },
      )
    }
  }
}

/**
 * Options of `append`: `targetFileSize`.
 *
 * @throws {InvalidArgumentError} naming the option
 */
export function checkAppendOptions(value: unknown): void {
  const o = optionsObject(value, 'options')
  checkKnownKeys(o, 'options', APPEND_KEYS, 'append')
  optNumber(o, 'targetFileSize', 'options', { min: 0, above: true })
  checkWriteModeFields(o)
  optOneOf(o, 'schemaMode', 'options', ['merge', 'overwrite'])
  optStringArray(o, 'partitionBy', 'options')
}

/**
 * Options of `Transaction.overwrite`: `targetFileSize`, `replaceWhere`, `partitionOverwriteMode`.
 *
 * @throws {InvalidArgumentError} naming the option
 */
export function checkOverwriteOptions(value: unknown): void {
  const o = optionsObject(value, 'options')
  checkKnownKeys(o, 'options', OVERWRITE_KEYS, 'overwrite')
  optNumber(o, 'targetFileSize', 'options', { min: 0, above: true })
  checkWriteModeFields({ ...o, mode: 'overwrite' })
}

/**
 * Options of `restore`: exactly one of `version` (a non-negative integer) and `timestamp`, and
 * `signal`.
 *
 * @throws {InvalidArgumentError} naming the option
 */
export function checkRestoreOptions(value: unknown): void {
  const o = optionsObject(value, 'options')
  checkKnownKeys(o, 'options', RESTORE_KEYS, 'restore')
  checkSnapshotFields(o, 'options')
  if ((o.version === undefined) === (o.timestamp === undefined)) {
    throw new InvalidArgumentError('restore needs exactly one of options.version and options.timestamp', {
      argument: 'options.version',
      hint: "Pass { version: 3 } or { timestamp: '2026-12-01T00:00:00Z' }.",
    })
  }
  const v = o.version
  if (v !== undefined && (typeof v === 'number' ? !Number.isSafeInteger(v) || v < 0 : (v as bigint) < 0n)) {
    fail('options.version', 'a non-negative integer version', v)
  }
}

/**
 * The overwrite options of `append` and `appendFile`: `mode`, `replaceWhere` (a predicate) and
 * `partitionOverwriteMode`, the last two with `mode: 'overwrite'` only and not together.
 *
 * @throws {InvalidArgumentError} naming the option
 */
function checkWriteModeFields(o: Readonly<Record<string, unknown>>): void {
  optOneOf(o, 'mode', 'options', ['append', 'overwrite'])
  optOneOf(o, 'partitionOverwriteMode', 'options', ['static', 'dynamic'])
  checkWhere(o.replaceWhere, 'options.replaceWhere')
  for (const key of ['replaceWhere', 'partitionOverwriteMode']) {
    if (o[key] !== undefined && o.mode !== 'overwrite') {
      throw new InvalidArgumentError(`options.${key} applies to an overwrite only`, {
        argument: `options.${key}`,
        hint: `Pass mode: 'overwrite' with ${key}, or leave ${key} out to append.`,
      })
    }
  }
  if (o.replaceWhere !== undefined && o.partitionOverwriteMode === 'dynamic') {
    throw new InvalidArgumentError(
      "options.replaceWhere cannot be combined with partitionOverwriteMode: 'dynamic'",
      {
        argument: 'options.replaceWhere',
        hint: 'Pass replaceWhere alone (it replaces the rows it selects) or dynamic partition overwrite alone (it replaces the partitions the new rows touch).',
      },
    )
  }
}

/**
 * The input files of `appendFile`: a non-empty list of non-empty paths.
 *
 * @throws {InvalidArgumentError} naming the bad path
 */
export function checkInputPaths(value: unknown): void {
  if (!Array.isArray(value) || value.length === 0)
    fail('paths', 'a file path or a non-empty array of them', value)
  for (let i = 0; i < value.length; i++) {
    if (typeof value[i] !== 'string' || value[i] === '') fail(`paths[${i}]`, 'a file path', value[i])
  }
}

/**
 * Options of `appendFile`.
 *
 * @throws {InvalidArgumentError} naming the option
 */
export function checkAppendFileOptions(value: unknown): void {
  const o = optionsObject(value, 'options')
  checkKnownKeys(o, 'options', APPEND_FILE_KEYS, 'appendFile')
  optOneOf(o, 'format', 'options', ['csv', 'json', 'jsonl', 'ndjson', 'parquet'])
  optStringArray(o, 'columns', 'options')
  optBoolean(o, 'ignoreExtraColumns', 'options')
  optNumber(o, 'batchRows', 'options', { min: 1, integer: true })
  optNumber(o, 'targetFileSize', 'options', { min: 0, above: true })
  checkWriteModeFields(o)
  optOneOf(o, 'schemaMode', 'options', ['merge', 'overwrite'])
  optStringArray(o, 'partitionBy', 'options')
  optSignal(o, 'options')
}

function checkAssignments(value: unknown, at: string): void {
  if (!isPlainObject(value)) fail(at, 'an object of column name to SQL expression', value)
  for (const [k, v] of Object.entries(value)) {
    if (v !== undefined) requireExpressionText(v, `${at}['${k}']`)
  }
}

/**
 * Options of `update`: `where` and `set`, and with `stop` (the one-call form) `signal`.
 *
 * @throws {InvalidArgumentError} naming the option
 */
export function checkUpdateOptions(value: unknown, stop = false): void {
  if (!isPlainObject(value))
    fail('options', "an object such as { set: { col: 'expr' }, where: '...' }", value)
  checkKnownKeys(value, 'options', stop ? [UPDATE_KEYS, STOP_KEYS] : UPDATE_KEYS, 'update')
  checkWhere(value.where, 'options.where')
  checkAssignments(value.set, 'options.set')
}

function checkClauses(value: unknown, at: string, actions: readonly string[]): void {
  if (value === undefined) return
  if (!Array.isArray(value)) fail(at, 'an array of clauses', value)
  for (let i = 0; i < value.length; i++) {
    const c: unknown = value[i]
    const ci = `${at}[${i}]`
    if (!isPlainObject(c)) fail(ci, `a clause object with ${actions.map((a) => `'${a}'`).join(' or ')}`, c)
    checkKnownKeys(
      c,
      ci,
      actions.includes('insert') ? INSERT_CLAUSE_KEYS : MATCHED_CLAUSE_KEYS,
      'a MERGE clause',
    )
    checkWhere(c.if, `${ci}.if`)
    if (c.update !== undefined && c.update !== '*') checkAssignments(c.update, `${ci}.update`)
    if (c.insert !== undefined && c.insert !== '*') checkAssignments(c.insert, `${ci}.insert`)
    if (c.delete !== undefined && c.delete !== true) fail(`${ci}.delete`, 'true', c.delete)
  }
}

/**
 * Options of `merge`: `on`, the clause lists and `sourceSchema`, and with `stop` (the one-call
 * form) `signal`.
 *
 * @throws {InvalidArgumentError} naming the option
 */
export function checkMergeOptions(value: unknown, stop = false): void {
  if (!isPlainObject(value)) fail('options', "an object with at least on: 'target.id = source.id'", value)
  checkKnownKeys(value, 'options', stop ? [MERGE_KEYS, STOP_KEYS] : MERGE_KEYS, 'merge')
  if (value.on === undefined) fail('options.on', 'the join condition', value.on)
  requireExpressionText(value.on, 'options.on')
  checkClauses(value.whenMatched, 'options.whenMatched', ['update', 'delete'])
  checkClauses(value.whenNotMatched, 'options.whenNotMatched', ['insert'])
  checkClauses(value.whenNotMatchedBySource, 'options.whenNotMatchedBySource', ['update', 'delete'])
  const schema = value.sourceSchema
  if (schema !== undefined && typeof schema !== 'string' && !isPlainObject(schema)) {
    fail('options.sourceSchema', 'DDL text or a schema object', schema)
  }
  optBoolean(value, 'schemaEvolution', 'options')
}

/**
 * Options of `optimize`, and with `stop` (the one-call form) `signal`.
 *
 * @throws {InvalidArgumentError} naming the option
 */
export function checkOptimizeOptions(value: unknown, stop = false): void {
  const o = optionsObject(value, 'options')
  checkKnownKeys(o, 'options', stop ? [OPTIMIZE_KEYS, STOP_KEYS] : OPTIMIZE_KEYS, 'optimize')
  optNumber(o, 'targetFileSize', 'options', { min: 0, above: true })
  optNumber(o, 'minFileSize', 'options', { min: 0 })
  optNumber(o, 'maxDeletedRowsRatio', 'options', { min: 0, max: 1 })
  optStringArray(o, 'zOrderBy', 'options')
  checkWhere(o.where, 'options.where')
}

/**
 * Options of `vacuum`.
 *
 * @throws {InvalidArgumentError} naming the option
 */
export function checkVacuumOptions(value: unknown): void {
  const o = optionsObject(value, 'options')
  checkKnownKeys(o, 'options', VACUUM_KEYS, 'vacuum')
  optNumber(o, 'retentionHours', 'options', { min: 0 })
  optBoolean(o, 'dryRun', 'options')
  optBoolean(o, 'enforceRetentionDuration', 'options')
  optBoolean(o, 'logging', 'options')
  optSignal(o, 'options')
}

/**
 * Options of `cleanupMetadata`: `dryRun`, `signal`.
 *
 * @throws {InvalidArgumentError} naming the option
 */
export function checkCleanupMetadataOptions(value: unknown): void {
  const o = optionsObject(value, 'options')
  checkKnownKeys(o, 'options', CLEANUP_METADATA_KEYS, 'cleanupMetadata')
  optBoolean(o, 'dryRun', 'options')
  optSignal(o, 'options')
}

/**
 * Options of `fsck`: `repair`, `signal`.
 *
 * @throws {InvalidArgumentError} naming the option
 */
export function checkFsckOptions(value: unknown): void {
  const o = optionsObject(value, 'options')
  checkKnownKeys(o, 'options', FSCK_KEYS, 'fsck')
  optBoolean(o, 'repair', 'options')
  optSignal(o, 'options')
}

/**
 * Options of `delete`: `signal`.
 *
 * @throws {InvalidArgumentError} naming the option
 */
export function checkDeleteOptions(value: unknown): void {
  const o = optionsObject(value, 'options')
  checkKnownKeys(o, 'options', STOP_KEYS, 'delete')
  optSignal(o, 'options')
}

// === Transactions ===

/**
 * An application id of an idempotent-write marker: a non-empty string.
 *
 * @throws {InvalidArgumentError} otherwise
 */
export function checkAppId(value: unknown): void {
  if (typeof value !== 'string' || value === '') fail('appId', 'a non-empty string', value)
}

/**
 * A marker version: a bigint or a safe integer, at least 0.
 *
 * @throws {InvalidArgumentError} otherwise
 */
export function checkMarkerVersion(value: unknown): void {
  const ok =
    (typeof value === 'bigint' && value >= 0n) ||
    (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0)
  if (!ok) fail('version', 'a bigint or an integer of at least 0', value)
}

/**
 * Raw actions to stage: an array of action objects, and options with `operation` and
 * `changesData`.
 *
 * @throws {InvalidArgumentError} naming the argument
 */
export function checkStagedActions(actions: unknown, options: unknown): void {
  if (!Array.isArray(actions)) fail('actions', 'an array of actions', actions)
  for (let i = 0; i < actions.length; i++) {
    if (!isPlainObject(actions[i]))
      fail(`actions[${i}]`, 'an action object such as { add: {...} }', actions[i])
  }
  const o = optionsObject(options, 'options')
  checkKnownKeys(o, 'options', STAGE_ACTIONS_KEYS, 'stageActions')
  optString(o, 'operation', 'options')
  optBoolean(o, 'changesData', 'options')
}
