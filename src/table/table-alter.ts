import { InvalidArgumentError } from '../errors/index.js'
import {
  buildAddColumns,
  buildAddConstraint,
  buildDropColumns,
  buildDropConstraint,
  buildProtocolUpgrade,
  buildRenameColumn,
  buildSetColumnComment,
  buildSetNotNull,
  buildSetProperties,
  buildUnsetProperties,
  planSetProperties,
} from '../ops/alter.js'
import {
  buildRowTrackingBackfill,
  DEFAULT_BACKFILL_FILES_PER_COMMIT,
  filesToBackfill,
} from '../ops/row-tracking-backfill.js'
import { buildChangeColumnType } from '../ops/type-widening-alter.js'
import { ROW_TRACKING_FEATURE, RowTrackingProperty, rowTrackingState } from '../protocol/row-tracking.js'
import { booleanProperty } from '../protocol/table-properties.js'
import type { Snapshot } from '../snapshot/snapshot.js'
import type { CommitResult } from '../txn/commit-result.js'
import type { Transaction } from './transaction.js'

/** How {@link TableAlter} commits: through its table. */
export interface AlterRunner {
  /**
   * Begins a transaction on the latest version, stages into it under `signal`, and commits it;
   * with `fileLevel` the commit is checked with every reconciliation flag off.
   */
  commit(
    signal: AbortSignal | undefined,
    stage: (txn: Transaction) => Promise<unknown>,
    options?: { readonly fileLevel?: boolean },
  ): Promise<CommitResult>
  /** The latest snapshot. */
  latest(signal: AbortSignal | undefined): Promise<Snapshot>
}

/** Options of {@link TableAlter.setProperties}. */
export interface SetPropertiesOptions {
  /**
   * Enabling row tracking backfills the files written before in commits of at most this many
   * files each (default 10,000).
   */
  readonly backfillFilesPerCommit?: number | undefined
  /** Stops the change before its (next) commit. */
  readonly signal?: AbortSignal | undefined
}

/** Options of the ALTER calls that take only a stop signal. */
export interface AlterOptions {
  /** Stops the change before its commit. */
  readonly signal?: AbortSignal | undefined
}

/** How many times a backfill batch is tried again after a concurrent commit removed its files. */
const BACKFILL_ATTEMPTS = 5

/**
 * ALTER TABLE on a {@link DeltaTable} (`table.alter`): each call is one metadata commit through
 * the normal commit path, with Delta's operation name, and a concurrent writer that loses to it
 * aborts with `DELTA_METADATA_CHANGED`, as Delta specifies.
 *
 * ### Examples
 * ```ts
 * await table.alter.setProperties({ 'delta.appendOnly': 'true', owner: 'data-eng' })
 * await table.alter.addColumns('country string, score double')
 * await table.alter.addConstraint('positive_amount', 'amount > 0')
 * await table.alter.setNotNull('country')
 * await table.alter.setProperties({ 'delta.columnMapping.mode': 'name' })
 * await table.alter.renameColumn('score', 'rating')
 * await table.alter.dropColumns(['country'])
 * ```
 */
export class TableAlter {
  readonly #runner: AlterRunner

  /** @internal created by `DeltaTable.alter` */
  constructor(runner: AlterRunner) {
    this.#runner = runner
  }

  /**
   * Sets table properties (`SET TBLPROPERTIES`): `delta.*` properties Delta defines, checked, and
   * any user property. A property that turns a feature on upgrades the protocol in the same
   * commit (`delta.enableDeletionVectors=true` adds `deletionVectors`; `delta.feature.<name>` =
   * `supported` adds the feature only). `delta.enableRowTracking=true` on a table that does not
   * enable it yet does what Delta does: a commit that makes the table support `rowTracking`
   * (`UPGRADE PROTOCOL`), then `ROW TRACKING BACKFILL` commits that give every file written before
   * a `baseRowId` and `defaultRowCommitVersion` (moving the high-water mark), then the property.
   * `delta.columnMapping.mode=name` turns column mapping on (the protocol gains `columnMapping`):
   * every existing field gets an id, and its own name as physical name, so no data is rewritten.
   *
   * @param properties - the properties to set, values as strings
   * @param options - `backfillFilesPerCommit`, `signal`
   * @returns the `SET TBLPROPERTIES` commit
   * @throws {UnknownTablePropertyError} `DELTA_UNKNOWN_CONFIGURATION` for a `delta.` key Delta does
   *   not define, or one Delta sets itself (`delta.constraints.*`: use {@link addConstraint})
   * @throws {InvalidArgumentError} for an invalid value
   * @throws {UnsupportedTableFeatureError} when a feature it turns on is one delta-rlc cannot write
   * @throws {ColumnMappingModeChangeError} `DELTA_UNSUPPORTED_COLUMN_MAPPING_MODE_CHANGE` for a
   *   column mapping mode change other than `none` to `name`
   */
  async setProperties(
    properties: Readonly<Record<string, string>>,
    options: SetPropertiesOptions = {},
  ): Promise<CommitResult> {
    checkProperties(properties)
    const { signal } = checkOptions(options, ['backfillFilesPerCommit', 'signal'], 'setProperties')
    const perCommit = options.backfillFilesPerCommit ?? DEFAULT_BACKFILL_FILES_PER_COMMIT
    if (!Number.isSafeInteger(perCommit) || perCommit < 1) {
      throw new InvalidArgumentError('options.backfillFilesPerCommit must be a positive integer', {
        argument: 'options.backfillFilesPerCommit',
      })
    }
    const enabling = properties[RowTrackingProperty.enable]
    if (enabling !== undefined && booleanProperty(properties, RowTrackingProperty.enable)) {
      const snap = await this.#runner.latest(signal)
      if (!rowTrackingState(snap.protocol, snap.metadata).enabled) {
        // Every other property is checked before the first of the commits that follow.
        planSetProperties(snap, withoutKey(properties, RowTrackingProperty.enable))
        await this.#runner.commit(signal, (txn) =>
          txn.stage(async (ctx) => buildProtocolUpgrade(ctx, [ROW_TRACKING_FEATURE])),
        )
        await this.#backfill(signal, perCommit)
      }
    }
    return this.#runner.commit(signal, (txn) => txn.stage(async (ctx) => buildSetProperties(ctx, properties)))
  }

  /**
   * Removes table properties (`UNSET TBLPROPERTIES`).
   *
   * @param keys - the property names
   * @param options - `ifExists`: skip keys the table lacks instead of refusing; `signal`
   * @returns the commit
   * @throws {InvalidArgumentError} for a key the table lacks (without `ifExists`), a CHECK
   *   constraint (use {@link dropConstraint}), or a property Delta manages itself
   */
  async unsetProperties(
    keys: readonly string[],
    options: { readonly ifExists?: boolean | undefined } & AlterOptions = {},
  ): Promise<CommitResult> {
    if (!Array.isArray(keys) || keys.length === 0 || keys.some((k) => typeof k !== 'string' || k === '')) {
      throw new InvalidArgumentError('keys must be a non-empty array of property names', { argument: 'keys' })
    }
    const { signal } = checkOptions(options, ['ifExists', 'signal'], 'unsetProperties')
    return this.#runner.commit(signal, (txn) =>
      txn.stage(async (ctx) => buildUnsetProperties(ctx, keys, options.ifExists === true)),
    )
  }

  /**
   * Adds nullable columns at the end of the schema (`ADD COLUMNS`); rows written before read them
   * as null. Under column mapping each gets a new id and physical name, also when it takes the
   * name of a dropped column (whose data it never reads).
   *
   * @param columns - DDL text such as `'country string, score double'`, or several such texts
   * @param options - `signal`
   * @returns the commit
   * @throws {InvalidArgumentError} for an existing column, a NOT NULL column or bad DDL
   */
  async addColumns(columns: string | readonly string[], options: AlterOptions = {}): Promise<CommitResult> {
    const texts = typeof columns === 'string' ? [columns] : columns
    if (
      !Array.isArray(texts) ||
      texts.length === 0 ||
      texts.some((t) => typeof t !== 'string' || t.trim() === '')
    ) {
      throw new InvalidArgumentError("columns must be DDL text such as 'c int, d string'", {
        argument: 'columns',
      })
    }
    const { signal } = checkOptions(options, ['signal'], 'addColumns')
    return this.#runner.commit(signal, (txn) => txn.stage(async (ctx) => buildAddColumns(ctx, texts)))
  }

  /**
   * Drops columns (`DROP COLUMNS`), on a table with column mapping: a metadata-only commit. The
   * data stays in the files written before and is never read again; a column added later under
   * the same name is a new column (new id and physical name) and reads null there.
   *
   * @param columns - the columns, dotted for nested struct fields
   * @param options - `ifExists`: missing columns are skipped (no commit when none exists); `signal`
   * @returns the commit
   * @throws {ColumnMappingRequiredError} `DELTA_UNSUPPORTED_DROP_COLUMN` on a table without column
   *   mapping (set `delta.columnMapping.mode` to `name` first)
   * @throws {ColumnChangeRefusedError} `DELTA_UNSUPPORTED_DROP_PARTITION_COLUMN`,
   *   `DELTA_UNSUPPORTED_DROP_CLUSTERING_COLUMN` or `DELTA_CONSTRAINT_DEPENDENT_COLUMN_CHANGE`
   * @throws {InvalidArgumentError} for a missing column, or a drop that leaves no data column
   */
  async dropColumns(
    columns: readonly string[],
    options: { readonly ifExists?: boolean | undefined } & AlterOptions = {},
  ): Promise<CommitResult> {
    if (!Array.isArray(columns) || columns.length === 0) {
      throw new InvalidArgumentError('columns must be a non-empty array of column names', {
        argument: 'columns',
      })
    }
    for (const c of columns) checkText(c, 'columns')
    const { signal } = checkOptions(options, ['ifExists', 'signal'], 'dropColumns')
    return this.#runner.commit(signal, (txn) =>
      txn.stage(async (ctx) => buildDropColumns(ctx, columns, options.ifExists === true)),
    )
  }

  /**
   * Renames a column (`RENAME COLUMN`), on a table with column mapping: a metadata-only commit;
   * the column keeps its id and physical name, so the files written before read under the new
   * name. A partition column is renamed in the partitioning too.
   *
   * @param from - the column, dotted for a nested struct field
   * @param to - the new name, at the same level (no dots)
   * @param options - `signal`
   * @returns the commit
   * @throws {ColumnMappingRequiredError} `DELTA_UNSUPPORTED_RENAME_COLUMN` on a table without
   *   column mapping (set `delta.columnMapping.mode` to `name` first)
   * @throws {ColumnChangeRefusedError} `DELTA_CONSTRAINT_DEPENDENT_COLUMN_CHANGE`
   * @throws {InvalidArgumentError} for a missing column, or a new name that is taken or invalid
   */
  async renameColumn(from: string, to: string, options: AlterOptions = {}): Promise<CommitResult> {
    checkText(from, 'from')
    checkText(to, 'to')
    const { signal } = checkOptions(options, ['signal'], 'renameColumn')
    return this.#runner.commit(signal, (txn) => txn.stage(async (ctx) => buildRenameColumn(ctx, from, to)))
  }

  /**
   * Sets a column's comment (`CHANGE COLUMN ... COMMENT`).
   *
   * @param column - the column, dotted for a nested struct field
   * @param comment - the comment
   * @param options - `signal`
   * @returns the commit
   * @throws {InvalidArgumentError} when the column does not exist
   */
  async setColumnComment(column: string, comment: string, options: AlterOptions = {}): Promise<CommitResult> {
    checkText(column, 'column')
    if (typeof comment !== 'string') {
      throw new InvalidArgumentError('comment must be a string', { argument: 'comment' })
    }
    const { signal } = checkOptions(options, ['signal'], 'setColumnComment')
    return this.#runner.commit(signal, (txn) =>
      txn.stage(async (ctx) => buildSetColumnComment(ctx, column, comment)),
    )
  }

  /**
   * Widens a column's type (`CHANGE COLUMN`, as `ALTER COLUMN ... TYPE`) on a table with
   * `delta.enableTypeWidening=true`, to a type the protocol allows (see `type-widening-alter.ts`);
   * the change is recorded in the column's `delta.typeChanges` and no data file is rewritten.
   *
   * @param column - the column, dotted for a nested struct field
   * @param type - the new type, e.g. `'long'` or `'decimal(12,2)'`
   * @param options - `signal`
   * @returns the commit (`committed: false` when the column has the type already)
   * @throws {InvalidArgumentError} for an unknown column, a change the protocol does not allow, or
   *   a table without type widening enabled
   */
  async changeColumnType(column: string, type: string, options: AlterOptions = {}): Promise<CommitResult> {
    checkText(column, 'column')
    checkText(type, 'type')
    const { signal } = checkOptions(options, ['signal'], 'changeColumnType')
    return this.#runner.commit(signal, (txn) =>
      txn.stage(async (ctx) => buildChangeColumnType(ctx, column, type)),
    )
  }

  /**
   * Declares a column NOT NULL (`CHANGE COLUMN`, as `ALTER COLUMN ... SET NOT NULL`): every live
   * row is checked first, and every later write is refused a null there. Reads the whole table:
   * a concurrent commit that changes data makes it abort. A column NOT NULL already is left as is.
   *
   * @param column - the column, dotted for a nested struct field
   * @param options - `signal`
   * @returns the commit (`committed: false` when nothing changed)
   * @throws {NewConstraintViolationError} `DELTA_NEW_NOT_NULL_VIOLATION` naming one row with null
   */
  async setNotNull(column: string, options: AlterOptions = {}): Promise<CommitResult> {
    checkText(column, 'column')
    const { signal } = checkOptions(options, ['signal'], 'setNotNull')
    return this.#runner.commit(signal, (txn) => txn.stage(async (ctx) => buildSetNotNull(ctx, column)))
  }

  /**
   * Adds a CHECK constraint (`ADD CONSTRAINT`): every live row is checked first (reading the whole
   * table), then `delta.constraints.<name>` is set and the protocol gains `checkConstraints`.
   * Every later write (append, overwrite, update, merge) is refused a row the expression is false
   * or NULL for.
   *
   * @param name - letters, digits and underscores (stored lower-cased, as Delta stores it)
   * @param expression - a predicate in the syntax of `where`, e.g. `'amount > 0'`
   * @param options - `signal`
   * @returns the commit
   * @throws {ConstraintAlreadyExistsError} `DELTA_CONSTRAINT_ALREADY_EXISTS`
   * @throws {NewConstraintViolationError} `DELTA_NEW_CHECK_CONSTRAINT_VIOLATION` naming one row
   * @throws {InvalidPredicateError | InvalidArgumentError} for a bad expression
   */
  async addConstraint(name: string, expression: string, options: AlterOptions = {}): Promise<CommitResult> {
    checkText(name, 'name')
    checkText(expression, 'expression')
    const { signal } = checkOptions(options, ['signal'], 'addConstraint')
    return this.#runner.commit(signal, (txn) =>
      txn.stage(async (ctx) => buildAddConstraint(ctx, name, expression)),
    )
  }

  /**
   * Drops a CHECK constraint (`DROP CONSTRAINT`).
   *
   * @param name - the constraint's name (any case)
   * @param options - `ifExists`: a missing constraint is no change (no commit); `signal`
   * @returns the commit (`committed: false` when nothing changed)
   * @throws {ConstraintNotFoundError} `DELTA_CONSTRAINT_DOES_NOT_EXIST` without `ifExists`
   */
  async dropConstraint(
    name: string,
    options: { readonly ifExists?: boolean | undefined } & AlterOptions = {},
  ): Promise<CommitResult> {
    checkText(name, 'name')
    const { signal } = checkOptions(options, ['ifExists', 'signal'], 'dropConstraint')
    return this.#runner.commit(signal, (txn) =>
      txn.stage(async (ctx) => buildDropConstraint(ctx, name, options.ifExists === true)),
    )
  }

  /**
   * Backfills row ids until no live file lacks them: batches of `perCommit` files, each one
   * commit checked with every reconciliation flag off; a batch that loses to a commit removing
   * its files is tried again on the new version.
   */
  async #backfill(signal: AbortSignal | undefined, perCommit: number): Promise<void> {
    let batchId = 0
    let failures = 0
    let left = Number.POSITIVE_INFINITY
    for (;;) {
      const snap = await this.#runner.latest(signal)
      const missing = filesToBackfill(snap).length
      if (missing === 0) return
      // A committed batch that gave no file an id (writers told not to assign ids) would repeat.
      if (failures === 0 && missing >= left) {
        throw new InvalidArgumentError(
          `The row-tracking backfill left ${missing} files without row ids: the table does not let writers assign them`,
          {
            argument: RowTrackingProperty.enable,
            hint: `Check ${RowTrackingProperty.suspended}: row ids cannot be backfilled while it is true.`,
          },
        )
      }
      left = missing
      try {
        await this.#runner.commit(
          signal,
          (txn) => txn.stage(async (ctx) => buildRowTrackingBackfill(ctx, batchId, perCommit)),
          { fileLevel: true },
        )
        batchId++
        failures = 0
      } catch (err) {
        const concurrent = (err as { code?: unknown })?.code
        const retry =
          typeof concurrent === 'string' &&
          concurrent.startsWith('DELTA_CONCURRENT') &&
          ++failures < BACKFILL_ATTEMPTS
        if (!retry) throw err
      }
    }
  }
}

function withoutKey(o: Readonly<Record<string, string>>, key: string): Record<string, string> {
  const out = { ...o }
  delete out[key]
  return out
}

function checkProperties(value: unknown): asserts value is Readonly<Record<string, string>> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidArgumentError('properties must be an object of property names to string values', {
      argument: 'properties',
    })
  }
  const entries = Object.entries(value)
  if (entries.length === 0) {
    throw new InvalidArgumentError('properties must name at least one property', { argument: 'properties' })
  }
  for (const [k, v] of entries) {
    if (typeof v !== 'string') {
      throw new InvalidArgumentError(`The value of property ${k} must be a string`, {
        argument: `properties.${k}`,
        hint: `Write it as text, e.g. { '${k}': '${String(v)}' }.`,
      })
    }
  }
}

function checkText(value: unknown, argument: string): void {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new InvalidArgumentError(`${argument} must be a non-empty string`, { argument })
  }
}

function checkOptions(
  options: unknown,
  known: readonly string[],
  call: string,
): { signal: AbortSignal | undefined } {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new InvalidArgumentError('options must be an object', { argument: 'options' })
  }
  for (const [key, value] of Object.entries(options)) {
    if (!known.includes(key)) {
      throw new InvalidArgumentError(`Unknown option '${key}' of alter.${call}`, {
        argument: `options.${key}`,
        hint: `alter.${call} takes { ${known.join(', ')} }.`,
      })
    }
    if (key === 'ifExists' && value !== undefined && typeof value !== 'boolean') {
      throw new InvalidArgumentError('options.ifExists must be a boolean', { argument: 'options.ifExists' })
    }
  }
  const signal = (options as { signal?: unknown }).signal
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new InvalidArgumentError('options.signal must be an AbortSignal', { argument: 'options.signal' })
  }
  return { signal }
}
