import { InvalidArgumentError } from '../errors/index.js'
import type { Expression } from '../expressions/ast.js'
import { type AppendOptions, buildAppend } from '../ops/append.js'
import { type BatchAppendOptions, buildBatchAppend, checkBatchAppendOptions } from '../ops/append-batches.js'
import { checkWrittenRows } from '../ops/constraints.js'
import { buildDelete } from '../ops/delete.js'
import { buildMerge } from '../ops/merge.js'
import type { MergeOptions } from '../ops/merge-clauses.js'
import { buildOptimize, type OptimizeOptions } from '../ops/optimize.js'
import { buildOverwrite, type OverwriteOptions, type RowBatches } from '../ops/overwrite.js'
import { buildRestore, type RestoreOptions } from '../ops/restore.js'
import { buildUpdate, type UpdateOptions } from '../ops/update.js'
import type { Action } from '../protocol/actions.js'
import type { ScanOptions, TableScan } from '../scan/table-scan.js'
import type { OperationBuilder, PreparedOperation, StagedOperation } from '../txn/staged-operation.js'
import { TransactionCore } from '../txn/transaction.js'
import {
  checkAppendOptions,
  checkAppId,
  checkMarkerVersion,
  checkMergeOptions,
  checkOptimizeOptions,
  checkOverwriteOptions,
  checkRestoreOptions,
  checkRows,
  checkScanOptions,
  checkStagedActions,
  checkUpdateOptions,
  checkWhere,
  checkWritableDepth,
} from './arguments.js'

/**
 * A two-phase transaction on one read snapshot: operations are staged (nothing is visible),
 * reads are recorded, and `commit()` lands everything as one version, checking every commit
 * made since the read version.
 *
 * ### Examples
 * ```ts
 * const txn = await table.begin()
 * const rows = await txn.scan({ where: 'id < 5' }).toArray()   // a recorded read
 * await txn.append(rows.map((r) => ({ ...r, id: (r.id as bigint) + 100n })))
 * const result = await txn.commit()
 * ```
 */
export class Transaction extends TransactionCore {
  /**
   * Reads live rows of the read snapshot and records the read for conflict checking.
   *
   * @param options - predicate, columns, batch size
   */
  override scan(options: ScanOptions = {}): TableScan {
    this.checkOpen()
    checkScanOptions(options)
    return super.scan(options)
  }

  /**
   * Reads the version recorded for an application id (the idempotent-write marker) and records
   * the read: a concurrent commit that writes a marker for the same id then conflicts.
   *
   * @param appId - the application id
   * @returns its recorded version in the read snapshot, if any
   */
  override readAppTransaction(appId: string): bigint | undefined {
    this.checkOpen()
    checkAppId(appId)
    return super.readAppTransaction(appId)
  }

  /**
   * Stages raw actions, as Delta's "manual update" does: the low-level form for tools and tests
   * that build their own `add` / `remove` / `metaData` / `protocol` / `txn` actions. They are
   * committed as given (after conflict checking); a `commitInfo` among them is ignored, one is
   * always written.
   *
   * @param actions - the actions to commit
   * @param options - the operation name (default `MANUAL UPDATE`) and whether it changes data
   */
  override stageActions(
    actions: readonly Action[],
    options: { operation?: string; changesData?: boolean } = {},
  ): void {
    this.checkOpen()
    checkStagedActions(actions, options)
    super.stageActions(actions, options)
  }

  /**
   * Writes the idempotent-write marker `txn(appId, version)` with this commit. A concurrent
   * commit of the same application id conflicts.
   *
   * @returns the version already recorded for `appId` in the read snapshot, if any; callers
   *   skip the work when it is at least `version`
   */
  override setTransaction(appId: string, version: number | bigint): bigint | undefined {
    this.checkOpen()
    checkAppId(appId)
    checkMarkerVersion(version)
    return super.setTransaction(appId, version)
  }

  /**
   * Stages an operation built against the read snapshot (see `TransactionCore.stage`), and checks
   * the rows it writes against the table's CHECK constraints and column invariants (NOT NULL
   * columns are checked by each writer as it reads its input) before it is staged: a violating row fails the operation, naming the constraint and the row,
   * and the files it wrote are deleted. RESTORE is not checked: it brings back files and metadata
   * that held together at the version it restores, as Delta's RESTORE does.
   *
   * @param build - the operation's builder
   * @returns the staged operation
   * @throws {CheckConstraintViolationError} `DELTA_VIOLATE_CONSTRAINT_WITH_VALUES`
   * @internal used by the operation methods
   */
  override async stage<T extends PreparedOperation>(build: OperationBuilder<T>): Promise<StagedOperation<T>> {
    return super.stage(async (ctx) => {
      const op = await build(ctx)
      if (op.changesData && op.operation !== 'RESTORE') {
        await checkWrittenRows(ctx.engine, ctx.snapshot.metadata, op.actions, ctx.signal)
      }
      return op
    })
  }

  /**
   * Stages an append of `rows` (see `DeltaTable.append`).
   *
   * @returns the staged operation's metrics
   */
  async append(
    rows: readonly Readonly<Record<string, unknown>>[],
    options: AppendOptions = {},
  ): Promise<Readonly<Record<string, number>>> {
    checkRows(rows, 'rows')
    checkAppendOptions(options)
    checkWritableDepth(this.snapshot.schema)
    return (await this.stage((ctx) => buildAppend(ctx, rows, options))).metrics
  }

  /**
   * Stages an append of rows that arrive in batches, such as an input file read piece by piece:
   * one write of all of them, so the new files are cut by the target size across batches and
   * only one batch of rows is held at a time. A bad row fails the whole append, named by its
   * index in the input, and nothing is staged.
   *
   * @param batches - an async iterable of arrays of plain objects keyed by column name
   * @param options - `targetFileSize`
   * @returns the staged operation's metrics
   */
  async appendBatches(
    batches: AsyncIterable<readonly Readonly<Record<string, unknown>>[]>,
    options: BatchAppendOptions = {},
  ): Promise<Readonly<Record<string, number>>> {
    checkBatches(batches)
    checkBatchAppendOptions(options)
    return (await this.stage((ctx) => buildBatchAppend(ctx, batches, options))).metrics
  }

  /**
   * Stages a DELETE of the rows matching `where` (see `DeltaTable.delete`).
   *
   * @returns the staged operation's metrics
   */
  async delete(where?: string | Expression): Promise<Readonly<Record<string, number>>> {
    checkWhere(where, 'where')
    return (await this.stage((ctx) => buildDelete(ctx, where))).metrics
  }

  /**
   * Stages an UPDATE of the rows matching `where` (see `DeltaTable.update`).
   *
   * @param options - `where` and `set`
   * @returns the staged operation's metrics
   */
  async update(options: UpdateOptions): Promise<Readonly<Record<string, number>>> {
    checkUpdateOptions(options)
    return (await this.stage((ctx) => buildUpdate(ctx, options))).metrics
  }

  /**
   * Stages a MERGE of `sourceRows` into the table (see `DeltaTable.merge`).
   *
   * @param sourceRows - plain objects keyed by source column name
   * @param options - `on` and the clauses
   * @returns the staged operation's metrics
   */
  async merge(
    sourceRows: readonly Readonly<Record<string, unknown>>[],
    options: MergeOptions,
  ): Promise<Readonly<Record<string, number>>> {
    checkRows(sourceRows, 'sourceRows')
    checkMergeOptions(options)
    return (await this.stage((ctx) => buildMerge(ctx, sourceRows, options))).metrics
  }

  /**
   * Stages an OPTIMIZE (see `DeltaTable.optimize`). Its own retry belongs to the one-call
   * `DeltaTable.optimize`; here a conflict is thrown by `commit()`.
   *
   * @param options - sizes, Z-order columns, partition predicate
   * @returns the staged operation's metrics
   */
  async optimize(options: OptimizeOptions = {}): Promise<Readonly<Record<string, number>>> {
    checkOptimizeOptions(options)
    return (await this.stage((ctx) => buildOptimize(ctx, options))).metrics
  }

  /**
   * Stages an overwrite whose rows come in batches (one batch in memory at a time), as one
   * operation: what it replaces may depend on every batch (dynamic partition overwrite). The
   * one-batch form is `append(rows, { mode: 'overwrite', ... })`.
   *
   * @param batches - arrays of row objects, from an iterable or an async iterable
   * @param options - `replaceWhere`, `partitionOverwriteMode`, `targetFileSize`
   * @returns the staged operation's metrics
   * @throws {ReplaceWhereMismatchError} naming a new row `replaceWhere` does not select
   */
  async overwrite(
    batches: RowBatches,
    options: OverwriteOptions = {},
  ): Promise<Readonly<Record<string, number>>> {
    checkOverwriteOptions(options)
    return (await this.stage((ctx) => buildOverwrite(ctx, batches, options))).metrics
  }

  /**
   * Stages a RESTORE of the table to an earlier version (see `DeltaTable.restore`).
   *
   * @param options - `version` or `timestamp`
   * @returns the staged operation's metrics
   */
  async restore(options: Omit<RestoreOptions, 'signal'>): Promise<Readonly<Record<string, number>>> {
    checkRestoreOptions(options)
    return (await this.stage((ctx) => buildRestore(ctx, options))).metrics
  }
}

function checkBatches(value: unknown): void {
  const iterable =
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function'
  if (!iterable) {
    throw new InvalidArgumentError('batches must be an async iterable of arrays of row objects', {
      argument: 'batches',
    })
  }
}
