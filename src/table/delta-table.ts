import type { ArrowInput } from '../arrow/arrow-to-rows.js'
import { type ConflictFlags, parseConflictFlags } from '../conflict/flags.js'
import type { Engine } from '../engine/engine.js'
import { createDefaultEngine, type DefaultEngineOptions } from '../engine-default/default-engine.js'
import {
  ConcurrentModificationError,
  InvalidArgumentError,
  isDeltaError,
  redactLocation,
  TableClosedError,
} from '../errors/index.js'
import type { Expression } from '../expressions/ast.js'
import { type AppendOptions, checkWriteMode } from '../ops/append.js'
import { buildBatchAppend } from '../ops/append-batches.js'
import { buildFsckRepair, checkLiveFiles, type FsckOptions, type FsckResult } from '../ops/fsck.js'
import { buildMerge } from '../ops/merge.js'
import type { MergeOptions } from '../ops/merge-clauses.js'
import { buildOptimize, commitOptimize, type OptimizeOptions } from '../ops/optimize.js'
import { buildOverwrite } from '../ops/overwrite.js'
import { buildRestore, type RestoreOptions } from '../ops/restore.js'
import { evolveSchemaForInput } from '../ops/schema-merge.js'
import { buildUpdate, type UpdateOptions } from '../ops/update.js'
import { type VacuumOptions, type VacuumResult, vacuumTable } from '../ops/vacuum.js'
import type { CommitInfo, Version } from '../protocol/actions.js'
import { commitFileName, LOG_DIR } from '../protocol/log-files.js'
import { type ScanOptions, TableScan } from '../scan/table-scan.js'
import { advanceSnapshot, type KnownCommit } from '../snapshot/advance-snapshot.js'
import { historyTimeline } from '../snapshot/commit-timestamps.js'
import { type LoadSnapshotOptions, loadSnapshot } from '../snapshot/load-snapshot.js'
import { cleanUpExpiredLogs, type LogCleanupResult } from '../snapshot/log-cleanup.js'
import { listLogFrom, readCommit } from '../snapshot/log-reader.js'
import type { Snapshot } from '../snapshot/snapshot.js'
import { type CheckpointResult, writeCheckpoint } from '../snapshot/write-checkpoint.js'
import { type OpenStoreOptions, openStore } from '../storage/index.js'
import type { ObjectStore } from '../storage/object-store.js'
import type { CommitRetryPolicy } from '../txn/commit-options.js'
import type { CommitResult } from '../txn/commit-result.js'
import type { BeginOptions } from '../txn/transaction.js'
import { appendAll } from '../util/arrays.js'
import { mapLimit } from '../util/map-limit.js'
import { type AppendFileOptions, stageInputFiles } from './append-file.js'
import {
  checkAppendFileOptions,
  checkAppendOptions,
  checkBeginOptions,
  checkCheckpointOptions,
  checkCleanupMetadataOptions,
  checkCreateOptions,
  checkDeleteOptions,
  checkFsckOptions,
  checkHistoryOptions,
  checkInputPaths,
  checkLocation,
  checkMergeOptions,
  checkOpenOptions,
  checkOptimizeOptions,
  checkRestoreOptions,
  checkRows,
  checkScanOptions,
  checkSnapshotOptions,
  checkUpdateOptions,
  checkVacuumOptions,
  checkWhere,
  checkWritableDepth,
} from './arguments.js'
import { type CreateOptions, createTable } from './create-table.js'
import { withDatesAsDays } from './input-rows.js'
import { TableAlter } from './table-alter.js'
import { type ChangesOptions, TableChanges } from './table-changes.js'
import { Transaction } from './transaction.js'

/** Options of {@link DeltaTable.open}. */
export interface OpenOptions {
  /** A ready store for the table root, instead of resolving `location`. */
  readonly storage?: ObjectStore
  /** A custom engine (its `storage` is the table root); overrides `storage`. */
  readonly engine?: Engine
  /**
   * Backend options for `az://` and `s3://` locations (credentials, endpoint, retries); the
   * usual environment variables apply when they are absent.
   */
  readonly storageOptions?: OpenStoreOptions
  /** Options of the default engine: scratch and staging-cache directories, cache bound, threads. */
  readonly engineOptions?: DefaultEngineOptions
  /**
   * Row-level reconciliation flags (all off by default): an object of flag names (with or
   * without the `spark.databricks.delta.` prefix) to booleans, or `'all'`.
   */
  readonly conflicts?: 'all' | 'none' | Readonly<Record<string, boolean | string | number>>
  /** Commit retry policy. */
  readonly retry?: Partial<CommitRetryPolicy>
  /** Write a checkpoint every `delta.checkpointInterval` commits (default true). */
  readonly autoCheckpoint?: boolean
  /**
   * Name, in a conflict's hint, the flag or table property that would have reconciled it
   * (default true). Finding it reruns the conflict check with the flags that are off turned on,
   * loading what those cases read, so an abort costs more than the bare file-level check; pass
   * false to abort exactly as file-level Delta does (benchmarks of the open-source rules do).
   */
  readonly explainConflicts?: boolean
}

/**
 * The stop signal of a data-changing call ({@link DeltaTable.delete}, `update`, `merge`,
 * `optimize`).
 */
export interface StopOptions {
  /**
   * Stops the operation before its commit: the running step ends at its next check (or its
   * DuckDB query where the engine interrupts one), every file the operation wrote is deleted,
   * and the call rejects with the signal's reason. Once the commit has started it runs to its
   * end, so its outcome is never left half-known; a signal aborted then changes nothing.
   */
  readonly signal?: AbortSignal | undefined
}

/** Options of {@link DeltaTable.history}. */
export interface HistoryOptions {
  /** At most this many entries, newest first. */
  readonly limit?: number | undefined
  readonly signal?: AbortSignal | undefined
}

/** Options of {@link DeltaTable.checkpoint}. */
export interface CheckpointOptions {
  /** The version to checkpoint (default the latest). */
  readonly version?: Version | undefined
}

/** Options of {@link DeltaTable.cleanupMetadata}. */
export interface CleanupMetadataOptions {
  /** List what would be deleted, delete nothing. */
  readonly dryRun?: boolean | undefined
  /** Stops the cleanup between two deletes; what was deleted stays deleted. */
  readonly signal?: AbortSignal | undefined
}

/** One entry of {@link DeltaTable.history}. */
export interface HistoryEntry {
  readonly version: Version
  /**
   * Commit time, ms since the epoch: the In-Commit Timestamp from the version the table enabled
   * them at, else the commit file's time made strictly increasing. Time travel by timestamp uses
   * the same times, so `snapshot({ timestamp })` with it selects this version.
   */
  readonly timestamp: number
  readonly operation: string | undefined
  readonly commitInfo: CommitInfo | undefined
}

/**
 * A Delta table at a location: the entry point for reading, writing and maintenance.
 *
 * ### Examples
 * ```ts
 * import { DeltaTable } from 'delta-rlc'
 * const table = await DeltaTable.open('./my-table')
 * const snap = await table.snapshot()
 * console.log(snap.version, (await snap.files()).length)
 * await table.close()
 * ```
 */
export class DeltaTable {
  /**
   * The location the table was opened at, as it may be shown or stored: an `https://` location's
   * query (a SAS token) reads `?***` and a URL password `***` (see {@link redactLocation}). The
   * store keeps the real one.
   */
  readonly location: string
  /** The engine doing the I/O. */
  readonly engine: Engine
  /** The reconciliation flags in force for this handle's commits. */
  readonly conflicts: ConflictFlags
  readonly #ownsEngine: boolean
  readonly #options: OpenOptions
  /**
   * The newest snapshot seen, advanced by {@link DeltaTable.begin}. Snapshots are immutable, so
   * concurrent transactions share it safely; a stale one only costs reading the newer commits.
   */
  #latest: Snapshot | undefined
  /**
   * A commit of this handle's that landed right after {@link DeltaTable.#latest}, with its
   * content: the next advance takes it as read.
   */
  #own: KnownCommit | undefined
  /** Set by {@link DeltaTable.close}: every method refuses from then on. */
  #closed = false

  private constructor(location: string, engine: Engine, ownsEngine: boolean, options: OpenOptions) {
    this.location = redactLocation(location)
    this.engine = engine
    this.#ownsEngine = ownsEngine
    this.#options = options
    this.conflicts = parseConflictFlags(options.conflicts === 'none' ? {} : (options.conflicts ?? {}))
  }

  /**
   * Creates a table (version 0: protocol and metadata) and opens it.
   *
   * @param location - where the table goes
   * @param options - schema, partitioning, properties, and what to do if a table exists
   * @param openOptions - as for {@link DeltaTable.open}
   * @returns the open table
   * @throws {TableAlreadyExistsError} when a table exists there and `ifExists` is `'error'`
   */
  static async create(
    location: string,
    options: CreateOptions,
    openOptions: OpenOptions = {},
  ): Promise<DeltaTable> {
    checkLocation(location)
    checkCreateOptions(options)
    checkOpenOptions(openOptions, 'openOptions', 'DeltaTable.create')
    const table = DeltaTable.#at(location, openOptions)
    try {
      await createTable(table.engine, location, options)
      table.#latest = await table.snapshot()
    } catch (err) {
      await table.close()
      throw err
    }
    return table
  }

  /**
   * Opens an existing table.
   *
   * @param location - a local path, `file://` URL, or a store URL the storage layer supports
   * @param options - a ready store or engine
   * @returns the table
   * @throws {TableNotFoundError} when no Delta log is there
   * @throws {UnsupportedProtocolVersionError | UnsupportedTableFeatureError} when the table cannot be read
   */
  static async open(location: string, options: OpenOptions = {}): Promise<DeltaTable> {
    checkLocation(location)
    checkOpenOptions(options)
    const table = DeltaTable.#at(location, options)
    try {
      table.#latest = await table.snapshot()
    } catch (err) {
      await table.close()
      throw err
    }
    return table
  }

  static #at(location: string, options: OpenOptions): DeltaTable {
    if (typeof location !== 'string' || location === '') {
      throw new InvalidArgumentError('The table location must be a non-empty string', {
        argument: 'location',
      })
    }
    if (options.engine) return new DeltaTable(location, options.engine, false, options)
    const storage = options.storage ?? openStore(location, options.storageOptions)
    return new DeltaTable(location, createDefaultEngine(storage, options.engineOptions), true, options)
  }

  /**
   * The table state at the latest version, or at a version or timestamp (time travel).
   *
   * @throws {VersionNotFoundError} when that version or timestamp is not in the log
   */
  async snapshot(options: LoadSnapshotOptions = {}): Promise<Snapshot> {
    this.#checkOpen('snapshot')
    checkSnapshotOptions(options)
    return loadSnapshot(this.engine, this.location, options)
  }

  /**
   * Starts a transaction on the latest snapshot: stage operations and reads, then `commit()`.
   *
   * The table keeps the newest snapshot it has seen and advances it, reading only the commits
   * made since (by any writer), so beginning costs in the new commits, not in the log's length.
   *
   * @throws {UnsupportedTableFeatureError} when the table needs a writer feature delta-rlc lacks
   */
  async begin(options: BeginOptions = {}): Promise<Transaction> {
    this.#checkOpen('begin')
    checkBeginOptions(options)
    return this.#begin(options, this.conflicts)
  }

  /** {@link DeltaTable.begin} with the given reconciliation flags. */
  async #begin(options: BeginOptions, flags: ConflictFlags): Promise<Transaction> {
    const snapshot = await this.#latestSnapshot(options.signal)
    return new Transaction(
      {
        engine: this.engine,
        snapshot,
        flags,
        retry: this.#options.retry,
        autoCheckpoint: this.#options.autoCheckpoint,
        explainConflicts: this.#options.explainConflicts,
        onCommitted: (read, commit) => {
          // Only useful while the kept snapshot is still the one the commit followed.
          if (this.#latest === read) this.#own = commit
        },
      },
      options,
    )
  }

  /**
   * Appends rows (a blind append) as one commit.
   *
   * The rows are plain objects, or Arrow: a `Table`, a `RecordBatch`, or an (async) iterable of
   * `RecordBatch`. Arrow values become the row values of their types (Int64 -> bigint,
   * Timestamp -> ISO text, Decimal -> decimal text, ...) and go through the same checks as row
   * objects. A `Date` is taken for a `timestamp` column (its instant) and for a `date` column
   * (its UTC day).
   *
   * With `mode: 'overwrite'` the rows replace the table's as one commit (operation `WRITE`,
   * `mode: Overwrite`): every live file is removed; with `replaceWhere` only the rows matching the
   * predicate are (and a new row it does not select is refused); with
   * `partitionOverwriteMode: 'dynamic'` only the partitions the new rows land in are emptied.
   *
   * With `schemaMode: 'merge'` (Spark's `mergeSchema`) columns of the rows that the table lacks
   * are added to its schema, nullable, in the same commit (a `metaData` action); their types are
   * read off the values (bigint or whole number: long, fraction: double, string, boolean, Date:
   * timestamp, Uint8Array: binary; Arrow input declares them), and table columns a row lacks are
   * null. On a table with `delta.enableTypeWidening=true` a column whose values need a wider type
   * (a whole number beyond an `integer`, a number a `float` cannot hold; for Arrow, a wider declared
   * type) is widened as Delta's schema evolution does, the change recorded in the field's
   * `delta.typeChanges`. Otherwise a value that does not fit an existing column's type is refused.
   * With `mode: 'overwrite'` and `schemaMode: 'overwrite'` (Spark's `overwriteSchema`) the table's
   * schema becomes the columns of the rows, partitioned by `partitionBy` (default: as before).
   *
   * @param rows - plain objects keyed by column name, or Arrow input
   * @param options - `targetFileSize`, `mode`, `replaceWhere`, `partitionOverwriteMode`,
   *   `schemaMode`, `partitionBy`
   * @throws {InvalidArgumentError} for rows that do not fit the schema; nothing is written
   * @throws {ReplaceWhereMismatchError} naming a new row `replaceWhere` does not select; nothing
   *   is committed
   */
  async append(
    rows: readonly Readonly<Record<string, unknown>>[] | ArrowInput,
    options: AppendOptions = {},
  ): Promise<CommitResult> {
    this.#checkOpen('append')
    // Arrow is loaded only for input that may be Arrow: importing it costs every process about
    // 0.2 s at start.
    const convert = mayBeArrowInput(rows) ? await import('../arrow/arrow-to-rows.js') : undefined
    const arrow = convert?.isArrowInput(rows) === true
    if (!arrow) checkRows(rows, 'rows')
    checkAppendOptions(options)
    return this.#stageAndCommit(undefined, async (txn) => {
      if (!arrow) {
        // checkRows proved it an array of row objects.
        await txn.append(
          withDatesAsDays(rows as readonly Readonly<Record<string, unknown>>[], txn.snapshot.schema),
          options,
        )
        return
      }
      checkWriteMode(options)
      checkWritableDepth(txn.snapshot.schema)
      const { recordBatchesOf, recordBatchToRows } = convert as NonNullable<typeof convert>
      // The first batch is read ahead: its Arrow schema declares the types a schema mode evolves
      // the table schema to.
      const source = recordBatchesOf(rows as ArrowInput, 'rows')[Symbol.asyncIterator]()
      const first = await source.next()
      const { deltaFieldsOfArrow } = await import('../arrow/arrow-delta-types.js')
      const evolution =
        options.schemaMode === undefined || first.done === true
          ? undefined
          : evolveSchemaForInput(
              txn.snapshot,
              deltaFieldsOfArrow(first.value.schema),
              options.schemaMode,
              options.partitionBy,
            )
      const schema = evolution?.schema ?? txn.snapshot.schema
      // Record batches are gathered into row arrays of a bounded size and handed to one write, so
      // the new files are cut by the target size across batches, as an input file's are.
      let pending: Readonly<Record<string, unknown>>[] = []
      const gathered = async function* () {
        for (let next = first; next.done !== true; next = await source.next()) {
          appendAll(pending, recordBatchToRows(next.value))
          if (pending.length >= ARROW_APPEND_ROWS) {
            yield withDatesAsDays(pending, schema)
            pending = []
          }
        }
        if (pending.length > 0) yield withDatesAsDays(pending, schema)
      }
      const targetFileSize = options.targetFileSize
      if (options.mode === 'overwrite') {
        // One operation takes every batch: what it replaces may depend on all of them (dynamic).
        const { replaceWhere, partitionOverwriteMode } = options
        const overwrite = { targetFileSize, replaceWhere, partitionOverwriteMode }
        await txn.stage((ctx) => buildOverwrite(ctx, gathered(), overwrite, evolution))
        return
      }
      await txn.stage((ctx) => buildBatchAppend(ctx, gathered(), { targetFileSize }, evolution))
    })
  }

  /**
   * Appends the rows of CSV, JSON lines or Parquet files as one commit, as the `append` command
   * does: the files are read in batches, each value is converted to its column's type, and all
   * batches land in one commit or none.
   *
   * ### Examples
   * ```ts
   * await table.appendFile('./events.csv')
   * await table.appendFile(['a.jsonl', 'b.jsonl'], { format: 'json', ignoreExtraColumns: true })
   * ```
   *
   * @param paths - a local file, or several of one format
   * @param options - format (default from the extension), columns, batch size, file size, signal
   * @returns the commit
   * @throws {FileNotFoundError} when a file does not exist
   * @throws {InvalidArgumentError} naming the file, line or row, and column of a value that
   *   does not fit the schema; nothing is committed and the files staged are deleted
   */
  async appendFile(
    paths: string | readonly string[],
    options: AppendFileOptions = {},
  ): Promise<CommitResult> {
    this.#checkOpen('appendFile')
    const list = typeof paths === 'string' ? [paths] : paths
    checkInputPaths(list)
    checkAppendFileOptions(options)
    const signal = options.signal
    return this.#stageAndCommit(signal, async (txn) => {
      checkWritableDepth(txn.snapshot.schema)
      await stageInputFiles(txn, list, options, signal)
    })
  }

  /**
   * Deletes the rows matching a predicate (every row when it is absent) as one commit.
   *
   * @param where - SQL predicate, e.g. `"id = 5 AND part = 'a'"`, or a parsed expression
   * @param options - `signal` stops the DELETE before its commit (see {@link StopOptions})
   * @throws {InvalidArgumentError} when `where` is neither text nor an expression
   * @throws {InvalidPredicateError} when it does not parse
   */
  async delete(where?: string | Expression, options: StopOptions = {}): Promise<CommitResult> {
    this.#checkOpen('delete')
    checkWhere(where, 'where')
    checkDeleteOptions(options)
    const signal = stopSignalOf(options, 'options')
    return this.#stageAndCommit(signal, async (txn) => {
      await txn.delete(where)
    })
  }

  /**
   * Updates the rows matching `where` (every row when absent) as one commit.
   *
   * @param options - `where` predicate, `set` (column name to SQL expression), and a `signal`
   *   that stops the UPDATE before its commit (see {@link StopOptions})
   * @returns the commit
   * @throws {InvalidArgumentError} for a bad `set`; nothing is written
   * @throws {ConcurrentModificationError} when a concurrent commit conflicts; the files this
   *   UPDATE wrote are deleted again
   */
  async update(options: UpdateOptions & StopOptions): Promise<CommitResult> {
    this.#checkOpen('update')
    checkUpdateOptions(options, true)
    const signal = stopSignalOf(options, 'options')
    return this.#stageAndCommit(signal, async (txn) => {
      await txn.stage((ctx) => buildUpdate(ctx, options))
    })
  }

  /**
   * Merges source rows into the table as one commit (see `buildMerge` for the semantics).
   *
   * @param sourceRows - plain objects keyed by source column name
   * @param options - `on`, the `whenMatched`, `whenNotMatched`, `whenNotMatchedBySource` clauses,
   *   and a `signal` that stops the MERGE before its commit (see {@link StopOptions})
   * @returns the commit
   * @throws {InvalidArgumentError} for bad clauses or several source rows matching one target
   *   row; nothing is written
   * @throws {ConcurrentModificationError} when a concurrent commit conflicts; the files this
   *   MERGE wrote are deleted again
   */
  async merge(
    sourceRows: readonly Readonly<Record<string, unknown>>[],
    options: MergeOptions & StopOptions,
  ): Promise<CommitResult> {
    this.#checkOpen('merge')
    checkRows(sourceRows, 'sourceRows')
    checkMergeOptions(options, true)
    const signal = stopSignalOf(options, 'options')
    return this.#stageAndCommit(signal, async (txn) => {
      await txn.stage((ctx) => buildMerge(ctx, sourceRows, options))
    })
  }

  /**
   * Compacts small files (or Z-orders with `zOrderBy`) as one commit with `dataChange = false`.
   *
   * When the commit meets a conflict, OPTIMIZE retries on the latest snapshot with the same
   * output files, but only while every source file (path and deletion vector) is still live and
   * the schema and partitioning are unchanged (rlc-spec 2.4); otherwise the conflict is thrown
   * and the outputs are deleted again.
   *
   * @param options - sizes, Z-order columns, partition predicate, and a `signal` that stops the
   *   rewriting before the first commit attempt (see {@link StopOptions}; retries run to their end)
   * @returns the commit (`committed: false` when there was nothing to compact)
   * @throws {ConcurrentModificationError} when a conflict cannot be retried
   */
  async optimize(options: OptimizeOptions & StopOptions = {}): Promise<CommitResult> {
    this.#checkOpen('optimize')
    checkOptimizeOptions(options, true)
    const signal = stopSignalOf(options, 'options')
    const { txn, staged } = await this.#stageUnder(signal, (t) =>
      t.stage((ctx) => buildOptimize(ctx, options)),
    )
    return commitOptimize(txn, staged, () => this.begin())
  }

  /**
   * ALTER TABLE: table properties (with the protocol upgrades they imply, and the row-tracking
   * backfill), new columns, column comments, NOT NULL, and CHECK constraints, each one metadata
   * commit with Delta's operation name (see {@link TableAlter}).
   *
   * ### Examples
   * ```ts
   * await table.alter.setProperties({ 'delta.enableRowTracking': 'true' })
   * await table.alter.addConstraint('positive_amount', 'amount > 0')
   * ```
   */
  get alter(): TableAlter {
    return new TableAlter({
      commit: (signal, stage, options) =>
        this.#stageAndCommit(signal, stage, options?.fileLevel === true ? FILE_LEVEL_FLAGS : this.conflicts),
      latest: (signal) => this.#latestSnapshot(signal),
    })
  }

  /**
   * Brings the table back to an earlier version as one commit (operation `RESTORE`, as Delta's
   * `RESTORE TABLE ... TO VERSION AS OF`): the files live now but not then are removed, the files
   * live then but not now are added back (with their deletion vectors, statistics and row ids),
   * the earlier metadata is set back, and the protocol is kept (never downgraded). History keeps
   * every version; time travel to the versions in between still works.
   *
   * Every data and deletion-vector file to bring back is checked to exist before anything is
   * committed. RESTORE reads the whole table: a concurrent commit that changes data makes it fail
   * with a `ConcurrentModificationError` (nothing is committed; run it again).
   *
   * ### Examples
   * ```ts
   * await table.restore({ version: 3 })
   * await table.restore({ timestamp: '2026-12-01T00:00:00Z' })
   * ```
   *
   * @param options - `version` or `timestamp` (exactly one), `signal`
   * @returns the commit, with Delta's metrics (`numRestoredFiles`, `restoredFilesSize`,
   *   `numRemovedFiles`, `removedFilesSize`, `numOfFilesAfterRestore`, `tableSizeAfterRestore`)
   * @throws {InvalidArgumentError} when the version is not older than the latest
   * @throws {VersionNotFoundError} when the log cannot rebuild that version or timestamp
   * @throws {RestoreFilesMissingError} when a file to bring back is gone (VACUUM removed it)
   * @throws {ConcurrentModificationError} when a concurrent commit changed the table
   */
  async restore(options: RestoreOptions): Promise<CommitResult> {
    this.#checkOpen('restore')
    checkRestoreOptions(options)
    const { signal, ...selector } = options
    return this.#stageAndCommit(signal, async (txn) => {
      await txn.stage((ctx) => buildRestore(ctx, selector))
    })
  }

  /**
   * Deletes files no version inside the retention window needs (see `vacuumTable`), between
   * Delta's `VACUUM START` and `VACUUM END` commits (unless `logging: false`). An untracked file
   * younger than one hour is never deleted, whatever the retention.
   *
   * @param options - `retentionHours` (default the table's `delta.deletedFileRetentionDuration`),
   *   `dryRun`, `enforceRetentionDuration`, `logging`
   * @returns the files deleted (or to delete, in a dry run)
   * @throws {InvalidArgumentError} for a retention below the table's unless
   *   `enforceRetentionDuration: false`
   */
  async vacuum(options: VacuumOptions = {}): Promise<VacuumResult> {
    this.#checkOpen('vacuum')
    checkVacuumOptions(options)
    const snap = await this.snapshot({ signal: options.signal })
    return vacuumTable(this.engine, snap, options, Date.now(), {
      flags: this.conflicts,
      retry: this.#options.retry,
    })
  }

  /**
   * The latest snapshot: the kept one advanced by the commits made since it (a fresh load when
   * there is none yet, or when the advance fails, so a damaged log reports as a load would).
   */
  async #latestSnapshot(signal: AbortSignal | undefined): Promise<Snapshot> {
    this.#checkOpen('alter')
    const kept = this.#latest
    let snap: Snapshot
    if (kept === undefined) {
      snap = await loadSnapshot(this.engine, this.location, { signal })
    } else {
      const own = this.#own?.version === kept.version + 1n ? this.#own : undefined
      try {
        snap = await advanceSnapshot(this.engine, kept, { signal, known: own })
      } catch (err) {
        signal?.throwIfAborted()
        if (!isDeltaError(err)) throw err
        snap = await loadSnapshot(this.engine, this.location, { signal })
      }
    }
    // Another begin() may have advanced further meanwhile: keep (and use) the newer one.
    const now = this.#latest
    if (now !== undefined && now.version > snap.version) return now
    this.#latest = snap
    if (this.#own !== undefined && this.#own.version <= snap.version) this.#own = undefined
    return snap
  }

  /** Stages under `signal` (see {@link DeltaTable.#stageUnder}), then commits whatever it does. */
  async #stageAndCommit(
    signal: AbortSignal | undefined,
    stage: (txn: Transaction) => Promise<unknown>,
    flags: ConflictFlags = this.conflicts,
  ): Promise<CommitResult> {
    return (await this.#stageUnder(signal, stage, flags)).txn.commit()
  }

  /**
   * Begins a transaction and stages into it while `signal` may stop the work. The transaction
   * gets a signal of its own that follows `signal` only until staging ends: the commit must not
   * be cut off half-way. A stop, or any failure, aborts the transaction, which deletes every file
   * its staged operations wrote (and the files an operation that failed half-way had written).
   *
   * @returns the transaction, ready to commit, and what `stage` returned
   * @throws the signal's reason when it stopped the staging
   */
  async #stageUnder<T>(
    signal: AbortSignal | undefined,
    stage: (txn: Transaction) => Promise<T>,
    flags: ConflictFlags = this.conflicts,
  ): Promise<{ txn: Transaction; staged: T }> {
    if (signal === undefined) {
      const txn = await this.#begin({}, flags)
      try {
        return { txn, staged: await stage(txn) }
      } catch (err) {
        await txn.abort()
        throw err
      }
    }
    signal.throwIfAborted()
    const staging = new AbortController()
    const stop = (): void => staging.abort(signal.reason)
    signal.addEventListener('abort', stop, { once: true })
    try {
      const txn = await this.#begin({ signal: staging.signal }, flags)
      try {
        const staged = await stage(txn)
        staging.signal.throwIfAborted()
        return { txn, staged }
      } catch (err) {
        await txn.abort()
        // The step that noticed the stop may have wrapped or replaced it; the reason is the answer.
        if (staging.signal.aborted) throw staging.signal.reason
        throw err
      }
    } catch (err) {
      if (staging.signal.aborted) throw staging.signal.reason
      throw err
    } finally {
      signal.removeEventListener('abort', stop)
    }
  }

  /**
   * Reads live rows: partition pruning, statistics skipping and deletion vectors applied.
   * Nothing is read until the scan is iterated, counted or turned into an array.
   *
   * @param options - `where` predicate, `columns`, and `version` / `timestamp` for time travel
   * @returns the scan
   */
  scan(options: ScanOptions & LoadSnapshotOptions = {}): TableScan {
    this.#checkOpen('scan')
    checkScanOptions(options, true)
    const { version, timestamp, ...rest } = options
    return new TableScan(
      this.engine,
      () => this.snapshot({ version, timestamp, signal: options.signal }),
      rest,
    )
  }

  /**
   * The change data feed of a range of versions (see {@link TableChanges}): every row inserted,
   * deleted or updated (before and after images), with `_change_type`, `_commit_version` and
   * `_commit_timestamp`. Nothing is read until it is iterated.
   *
   * ### Examples
   * ```ts
   * for await (const batch of table.changes({ startingVersion: 1 })) {
   *   for (const row of batch) console.log(row._change_type, row._commit_version, row.id)
   * }
   * ```
   *
   * @param options - `startingVersion` or `startingTimestamp`, and optionally `endingVersion` or
   *   `endingTimestamp` (inclusive; default the latest version)
   * @returns the changes
   * @throws {InvalidArgumentError} for a missing start or a malformed bound (at once)
   * @throws {MissingChangeDataError} when change data was not recorded for a version of the range
   * @throws {ChangeDataRangeError} when the range is empty or beyond the latest version
   * @throws {ChangeDataFileNotFoundError} when a file it needs was vacuumed
   */
  changes(options: ChangesOptions): TableChanges {
    this.#checkOpen('changes')
    return new TableChanges(
      this.engine,
      (version) =>
        this.snapshot(
          version === undefined ? { signal: options?.signal } : { version, signal: options?.signal },
        ),
      options,
    )
  }

  /**
   * The commit history, newest first: every commit time travel can reach (from the earliest
   * version the log can still rebuild), each with the timestamp that selects it in
   * `snapshot({ timestamp })`.
   *
   * @param options - `limit`: at most this many entries
   */
  async history(options: HistoryOptions = {}): Promise<HistoryEntry[]> {
    this.#checkOpen('history')
    checkHistoryOptions(options)
    const signal = options.signal
    // The latest version's metadata says whether, and from which version, commits carry
    // In-Commit Timestamps; the listing after it may only show newer commits, never lose any.
    const latest = await this.snapshot({ signal })
    // History covers every commit time travel can reach: the one place that lists the whole log.
    const listing = await listLogFrom(this.engine, undefined, signal)
    const timeline = historyTimeline(listing, latest)
    const newestFirst = [...timeline.commits].reverse()
    const wanted =
      options.limit === undefined ? newestFirst : newestFirst.slice(0, Math.max(0, options.limit))
    return mapLimit(wanted, 16, async (c) => {
      let info: CommitInfo | undefined
      // A commit removed since the listing (log cleanup) is reported without its commitInfo.
      for (const a of (await readCommit(this.engine, c.version, signal)) ?? [])
        if ('commitInfo' in a) info = a.commitInfo
      return Object.freeze({
        version: c.version,
        timestamp: timeline.timestampOf(c, info),
        operation: info?.operation,
        commitInfo: info,
      })
    })
  }

  /**
   * Writes a checkpoint of the latest version (or of `version`).
   *
   * @returns what was written
   */
  async checkpoint(options: CheckpointOptions = {}): Promise<CheckpointResult> {
    this.#checkOpen('checkpoint')
    checkCheckpointOptions(options)
    const snap = await this.snapshot(options.version === undefined ? {} : { version: options.version })
    return writeCheckpoint(this.engine, snap)
  }

  /**
   * Deletes expired log files now, as the cleanup after each checkpoint does (delta-rs's
   * `cleanup_metadata`): the commits, checkpoints and checksum files of versions below the
   * newest checkpoint whose commit is older than `delta.logRetentionDuration` (30 days by
   * default), when they are themselves older than that. Time travel to every version inside the
   * retention window keeps working; older versions then fail with `VersionNotFoundError`. Runs
   * whatever `delta.enableExpiredLogCleanup` says (that property governs the automatic cleanup).
   * Writes no commit.
   *
   * @param options - `dryRun`, `signal`
   * @returns what was (or would be) deleted, and the deletes that failed (those files stay)
   * @throws {InvalidArgumentError} when `delta.logRetentionDuration` is not an interval
   */
  async cleanupMetadata(options: CleanupMetadataOptions = {}): Promise<LogCleanupResult> {
    this.#checkOpen('cleanupMetadata')
    checkCleanupMetadataOptions(options)
    const snap = await this.snapshot({ signal: options.signal })
    return cleanUpExpiredLogs(this.engine, snap, { dryRun: options.dryRun, signal: options.signal })
  }

  /**
   * Checks that the data file and deletion-vector file of every live file exist, and with
   * `repair` removes the live files whose objects are gone, as Databricks' `FSCK REPAIR TABLE`:
   * one commit of `remove` actions (operation `FSCK`, `dataChange = true`) through the normal
   * commit path. The files it removes are recorded as read: when a concurrent commit removes or
   * rewrites one of them first, FSCK checks again on the new version (three attempts in all)
   * rather than fail. Concurrent appends do not conflict with it.
   *
   * @param options - `repair`, `signal`
   * @returns the files checked, those missing, and the repair commit
   * @throws {ConcurrentModificationError} when every attempt met a conflict
   * @throws {StorageError} when an existence check fails for another reason than a missing object
   */
  async fsck(options: FsckOptions = {}): Promise<FsckResult> {
    this.#checkOpen('fsck')
    checkFsckOptions(options)
    const { signal } = options
    if (options.repair !== true) {
      const snap = await this.snapshot({ signal })
      const check = await checkLiveFiles(this.engine, snap.activeFiles(), signal)
      return Object.freeze({ ...check, version: snap.version, repair: false })
    }
    for (let attempt = 1; ; attempt++) {
      const { txn, staged } = await this.#stageUnder(signal, (t) => t.stage((ctx) => buildFsckRepair(ctx)))
      const { check } = staged
      try {
        const commit = await txn.commit()
        return Object.freeze({
          ...check,
          version: txn.snapshot.version,
          repair: true,
          ...(commit.committed ? { commit } : {}),
        })
      } catch (err) {
        // The files changed under it: check again on the version that changed them.
        if (!(err instanceof ConcurrentModificationError) || attempt >= FSCK_ATTEMPTS) throw err
      }
    }
  }

  /**
   * Closes the table. Every method called afterwards, and every scan, change feed or alter of it
   * used afterwards, fails with `TableClosedError`. When the table created its engine, the
   * engine's resources are released too, including those of scans still open (iterated part-way
   * and never finished): their streams end, and iterating them further fails with
   * `TableClosedError`. Idempotent.
   */
  async close(): Promise<void> {
    this.#closed = true
    if (this.#ownsEngine) await this.engine.close()
  }

  /** @throws {TableClosedError} once {@link DeltaTable.close} has run */
  #checkOpen(method: string): void {
    if (this.#closed) {
      throw new TableClosedError(`Cannot call ${method}() on the table at ${this.location}: it was closed`)
    }
  }
}

/** The `signal` of a {@link StopOptions}, checked. */
function stopSignalOf(options: unknown, at: string): AbortSignal | undefined {
  if (options === null || typeof options !== 'object') {
    throw new InvalidArgumentError(`${at} must be an object`, { argument: at })
  }
  const signal = (options as { signal?: unknown }).signal
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new InvalidArgumentError(`${at}.signal must be an AbortSignal`, { argument: `${at}.signal` })
  }
  return signal
}

/** Every reconciliation flag off: commits checked exactly as file-level Delta checks them. */
const FILE_LEVEL_FLAGS: ConflictFlags = parseConflictFlags({})

/** How many times {@link DeltaTable.fsck} checks and commits before a conflict is thrown. */
const FSCK_ATTEMPTS = 3

/** Rows of Arrow input staged at once by {@link DeltaTable.append}. */
const ARROW_APPEND_ROWS = 100_000

/** The key of a commit file, for callers that address the log directly. */
export function commitKey(version: Version): string {
  return `${LOG_DIR}${commitFileName(version)}`
}

/**
 * Whether `rows` may be Arrow input (anything but an array of plain objects), so that Arrow is
 * loaded to tell; an array of plain row objects never is.
 */
function mayBeArrowInput(rows: unknown): boolean {
  if (!Array.isArray(rows)) return rows !== null && typeof rows === 'object'
  const first: unknown = rows[0]
  if (first === null || typeof first !== 'object') return false
  const proto = Object.getPrototypeOf(first)
  return proto !== Object.prototype && proto !== null
}
