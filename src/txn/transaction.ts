import { randomUUID } from 'node:crypto'
import { CHANGE_SKETCH_FIELD, changeSketchValue } from '../conflict/change-sketch.js'
import type { ConflictFlags } from '../conflict/flags.js'
import { combineKeptMatchedRows } from '../conflict/kept-matched-rows.js'
import {
  chooseIsolationLevel,
  createReadPredicate,
  createTransactionInfo,
  type IsolationLevel,
  type ReadPredicate,
} from '../conflict/transaction-info.js'
import { resolveDvLocation } from '../dv/index.js'
import type { Engine } from '../engine/engine.js'
import {
  CommitStateUnknownError,
  ConcurrentModificationError,
  InvalidArgumentError,
  UnsupportedError,
} from '../errors/index.js'
import type { Expression } from '../expressions/ast.js'
import { splitPartitionPredicate } from '../expressions/evaluate-stats.js'
import { fileActionKey } from '../log/replay.js'
import type { Action, AddFile, CommitInfo } from '../protocol/actions.js'
import { decodeAddPath } from '../protocol/partition-values.js'
import {
  ROW_TRACKING_FEATURE,
  ROW_TRACKING_PRESERVED_TAG,
  rowIdHighWaterMark,
  rowTrackingState,
} from '../protocol/row-tracking.js'
import { assignRowIds, copyRowTrackingFields } from '../protocol/row-tracking-ids.js'
import { checkWriteSupported } from '../protocol/table-features.js'
import { checkpointInterval } from '../protocol/table-properties.js'
import { columnSpecs } from '../scan/column-specs.js'
import { type ScanOptions, TableScan } from '../scan/table-scan.js'
import { advanceSnapshot, type KnownCommit } from '../snapshot/advance-snapshot.js'
import { loadSnapshot } from '../snapshot/load-snapshot.js'
import type { Snapshot } from '../snapshot/snapshot.js'
import { writeCheckpoint } from '../snapshot/write-checkpoint.js'
import { type CommitUncertainty, runCommitLoop } from './commit-loop.js'
import { type CommitRetryPolicy, DEFAULT_RETRY_POLICY } from './commit-options.js'
import type { CommitResult } from './commit-result.js'
import { IN_COMMIT_TIMESTAMP_FEATURE, planInCommitTimestamps } from './in-commit-timestamps.js'
import { checkNoRowCopying, IN_PLACE_ONLY_FEATURES } from './row-copying.js'
import type {
  OperationBuilder,
  OperationContext,
  PredicateParts,
  PreparedOperation,
  RecordReadOptions,
  StagedOperation,
} from './staged-operation.js'

/** Library name and version written to `commitInfo.engineInfo`. */
export const ENGINE_INFO = 'delta-rlc/0.1.0'

/** Options of `table.begin()`. */
export interface BeginOptions {
  /** The isolation level of the commit; the table's `delta.isolationLevel` when absent. */
  readonly isolationLevel?: 'Serializable' | 'WriteSerializable' | undefined
  readonly signal?: AbortSignal | undefined
}

/** What a transaction needs from its table. */
export interface TransactionContext {
  readonly engine: Engine
  readonly snapshot: Snapshot
  readonly flags: ConflictFlags
  readonly retry?: Partial<CommitRetryPolicy> | undefined
  /** Writes a checkpoint after commits whose version is a multiple of the interval (default true). */
  readonly autoCheckpoint?: boolean | undefined
  /** Whether a conflict's hint names what would have reconciled it (default true). */
  readonly explainConflicts?: boolean | undefined
  /**
   * Told of a commit that landed right after the read snapshot (no other writer's commit came
   * between), with the commit as a read of its file parses it: the table advances its snapshot
   * from it without reading the file back.
   */
  readonly onCommitted?: ((snapshot: Snapshot, commit: KnownCommit) => void) | undefined
}

/**
 * The commit side of a transaction on one read snapshot, which knows no operation: operations
 * built elsewhere are staged into it (nothing is visible), reads are recorded, and `commit()`
 * lands everything as one version, checking every commit made since the read version. Every
 * object a staged operation wrote is deleted by one path here when it is not committed (the
 * operation failed half-way, broke a staging rule, was aborted, or its commit failed).
 *
 * Arguments are trusted: the public `Transaction` (table layer) checks them and binds the
 * operations (append, delete, update, merge, optimize) onto this class.
 *
 * @internal the public class is `Transaction`
 */
export class TransactionCore {
  readonly #ctx: TransactionContext
  readonly #isolation: BeginOptions['isolationLevel']
  readonly #signal: AbortSignal | undefined
  readonly #reads: ReadPredicate[] = []
  readonly #readFiles = new Map<string, AddFile>()
  readonly #readAppIds = new Set<string>()
  #readWholeTable = false
  readonly #staged: StagedOperation[] = []
  readonly #txnActions: Action[] = []
  #state: 'open' | 'committing' | 'done' = 'open'
  /** Store keys of every object the staged operations wrote, until they are settled. */
  readonly #written = new Set<string>()
  /** Set by the commit loop once a put's outcome was unknown. */
  readonly #uncertainty: CommitUncertainty = {}
  /** Whether the commit landed, or may have: its files are then the table's, never undone. */
  #filesSettled = false
  #keepOnConflict = false

  /** @internal created by `DeltaTable.begin` */
  constructor(ctx: TransactionContext, options: BeginOptions = {}) {
    // Row tracking and clustering are honored per operation: the commit assigns and copies row
    // ids for every one, and work that copies rows to new files is refused where it would have
    // to preserve their ids or cluster them (row-copying.ts).
    checkWriteSupported(ctx.snapshot.protocol, ctx.snapshot.metadata, {
      extraWriterFeatures: [IN_COMMIT_TIMESTAMP_FEATURE, ROW_TRACKING_FEATURE, ...IN_PLACE_ONLY_FEATURES],
    })
    this.#ctx = ctx
    this.#isolation = options.isolationLevel
    this.#signal = options.signal
  }

  /** The version this transaction read. */
  get readVersion(): bigint {
    return this.#ctx.snapshot.version
  }

  /** The read snapshot. */
  get snapshot(): Snapshot {
    return this.#ctx.snapshot
  }

  /**
   * Reads live rows of the read snapshot and records the read for conflict checking.
   *
   * @param options - predicate, columns, batch size
   */
  scan(options: ScanOptions = {}): TableScan {
    this.checkOpen()
    return new TableScan(this.#ctx.engine, this.#ctx.snapshot, options, (files, predicate) =>
      this.#recordRead(files, predicate),
    )
  }

  /** Records a read of the whole table (Delta's "taint"): any concurrent change conflicts. */
  readWholeTable(): void {
    this.checkOpen()
    this.#readWholeTable = true
  }

  /**
   * Reads the version recorded for an application id (the idempotent-write marker) and records
   * the read: a concurrent commit that writes a marker for the same id then conflicts.
   *
   * @param appId - the application id
   * @returns its recorded version in the read snapshot, if any
   */
  readAppTransaction(appId: string): bigint | undefined {
    this.checkOpen()
    this.#readAppIds.add(appId)
    return this.#ctx.snapshot.setTransactions().get(appId)?.version
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
  stageActions(
    actions: readonly Action[],
    options: { operation?: string; changesData?: boolean } = {},
  ): void {
    this.checkOpen()
    const kept = actions.filter((a) => !('commitInfo' in a))
    checkNoRowCopying(this.#ctx.snapshot, options.operation ?? 'MANUAL UPDATE', kept)
    this.#staged.push({
      operation: options.operation ?? 'MANUAL UPDATE',
      parameters: {},
      actions: kept,
      metrics: {},
      changesData: options.changesData ?? true,
      writtenKeys: [],
    })
  }

  /**
   * Writes the idempotent-write marker `txn(appId, version)` with this commit. A concurrent
   * commit of the same application id conflicts.
   *
   * @returns the version already recorded for `appId` in the read snapshot, if any; callers
   *   skip the work when it is at least `version`
   * @throws {InvalidArgumentError} when this transaction already sets a version for `appId`
   */
  setTransaction(appId: string, version: number | bigint): bigint | undefined {
    this.checkOpen()
    const v = BigInt(version)
    if (this.#txnActions.some((a) => 'txn' in a && a.txn.appId === appId)) {
      throw new InvalidArgumentError(
        `This transaction already sets a version for application id '${appId}'`,
        {
          argument: 'appId',
          hint: 'A commit may hold at most one txn action per application id; set it once.',
        },
      )
    }
    this.#readAppIds.add(appId)
    this.#txnActions.push({ txn: { appId, version: v, lastUpdated: BigInt(Date.now()) } })
    return this.#ctx.snapshot.setTransactions().get(appId)?.version
  }

  /**
   * Stages an operation built against the read snapshot. Operations that rewrite files can
   * only be staged once per transaction; appends may be added to anything. The objects the
   * builder hands over through `ctx.wrote` are deleted again when it fails or breaks that rule.
   *
   * @param build - the operation's builder
   * @returns the staged operation, with the keys of the objects it wrote
   * @internal used by the operation methods
   */
  async stage<T extends PreparedOperation>(build: OperationBuilder<T>): Promise<StagedOperation<T>> {
    this.checkOpen()
    if (this.#staged.some((s) => s.actions.some((a) => 'remove' in a))) {
      throw new UnsupportedError(
        'This transaction already rewrites files; stage one DELETE, UPDATE, MERGE or OPTIMIZE per transaction',
      )
    }
    const written = new Set<string>()
    let op: T
    try {
      op = await build(this.#operationContext(written))
    } catch (err) {
      await deleteQuietly(this.#ctx.engine, written)
      throw err
    }
    if (this.#staged.length > 0 && op.actions.some((a) => 'remove' in a)) {
      await deleteQuietly(this.#ctx.engine, written)
      throw new UnsupportedError(
        'Stage a file-rewriting operation before any other operation of the transaction',
      )
    }
    try {
      checkNoRowCopying(this.#ctx.snapshot, op.operation, op.actions, { preservesRowIds: op.preservesRowIds })
    } catch (err) {
      await deleteQuietly(this.#ctx.engine, written)
      throw err
    }
    for (const key of written) this.#written.add(key)
    const staged: StagedOperation<T> = { ...op, writtenKeys: Object.freeze([...written]) }
    this.#staged.push(staged)
    return staged
  }

  /**
   * Abandons the transaction: nothing is committed, and every file its staged operations wrote
   * is deleted. After a commit that landed, or whose outcome is unknown, it does nothing: those
   * files belong to the table. Idempotent; the transaction cannot be used afterwards.
   *
   * @throws {InvalidArgumentError} while `commit()` is running (abort it through the `signal` of
   *   `begin()` instead)
   */
  async abort(): Promise<void> {
    if (this.#state === 'committing') {
      throw new InvalidArgumentError('This transaction is committing and cannot be aborted now', {
        argument: 'transaction',
        hint: 'Pass a signal to table.begin({ signal }) and abort that to stop a commit.',
      })
    }
    this.#state = 'done'
    if (!this.#filesSettled) await this.#deleteWritten(new Set())
  }

  /**
   * Leaves the written files in place when `commit()` meets a conflict, for a caller that stages
   * the same operation in a new transaction (OPTIMIZE's retry); it calls `abort()` when it gives up.
   *
   * @internal
   */
  keepWrittenFilesOnConflict(): void {
    this.#keepOnConflict = true
  }

  /**
   * Commits everything staged as one new version.
   *
   * @returns the version, attempts, reconciliations and metrics
   * @throws {ConcurrentModificationError} when a concurrent commit conflicts and no row-level
   *   reconciliation is proven
   * @throws {MaxCommitRetriesError} when other writers keep winning
   */
  async commit(): Promise<CommitResult> {
    this.checkOpen()
    this.#state = 'committing'
    try {
      return await this.#commit()
    } catch (err) {
      // A commit that may have landed keeps its files: deleting them could break the table.
      const mayHaveLanded =
        err instanceof CommitStateUnknownError ||
        (this.#uncertainty.version !== undefined && !(err instanceof ConcurrentModificationError))
      if (mayHaveLanded) this.#filesSettled = true
      else if (!(this.#keepOnConflict && err instanceof ConcurrentModificationError)) {
        await this.#deleteWritten(new Set())
      }
      throw err
    } finally {
      this.#state = 'done'
    }
  }

  async #commit(): Promise<CommitResult> {
    const snap = this.#ctx.snapshot
    const txnId = randomUUID()
    const fileActions = this.#staged.flatMap((s) => s.actions)
    checkCommitShape([...fileActions, ...this.#txnActions])
    const rowIds = withRowTracking(snap, [...fileActions, ...this.#txnActions])
    const actions = rowIds.actions
    const last = this.#staged.at(-1)
    const operation = last?.operation ?? (this.#txnActions.length > 0 ? 'SET TRANSACTION' : 'WRITE')
    const metrics = mergeMetrics(this.#staged.map((s) => s.metrics))
    if (actions.length === 0) {
      await this.#deleteWritten(new Set())
      return Object.freeze({
        version: snap.version,
        operation,
        attempts: 0,
        reconciliations: [],
        metrics,
        txnId,
        committed: false,
      })
    }
    const configuration =
      this.#isolation === undefined
        ? snap.properties
        : { ...snap.properties, 'delta.isolationLevel': this.#isolation }
    const isolationLevel: IsolationLevel = chooseIsolationLevel({
      actions,
      configuration,
      operation,
      operationChangesData: this.#staged.some((s) => s.changesData),
    })
    const info = createTransactionInfo({
      readVersion: snap.version,
      operation,
      isolationLevel,
      readPredicates: this.#reads,
      readFiles: this.#readFiles.values(),
      readWholeTable: this.#readWholeTable,
      readAppIds: this.#readAppIds,
      actions,
      metadata: snap.metadata,
      protocol: snap.protocol,
      rowTracking: rowIds.read,
      relocation: this.#staged.find((s) => s.relocation !== undefined)?.relocation,
      removedRowIds: this.#staged.find((s) => s.removedRowIds !== undefined)?.removedRowIds,
      keptMatchedRows: combineKeptMatchedRows(this.#staged.map((s) => s.keptMatchedRows)),
    })
    const commitInfo: CommitInfo = {
      timestamp: BigInt(Date.now()),
      operation,
      operationParameters: stringifyParameters(last?.parameters ?? {}),
      readVersion: snap.version,
      isolationLevel,
      isBlindAppend: info.isBlindAppend,
      operationMetrics: Object.fromEntries(Object.entries(metrics).map(([k, v]) => [k, String(v)])),
      engineInfo: ENGINE_INFO,
      txnId,
      // Row tracking enabled: staged work either copied no row to a new file or wrote the
      // copied rows' ids to the materialized columns (row-copying.ts refuses anything else), so
      // every stable id is preserved, as the protocol asks the tag to say.
      ...(rowIds.enabled ? { tags: { [ROW_TRACKING_PRESERVED_TAG]: 'true' } } : {}),
      // A sketch speaks for the whole commit: it goes in only when its operation is all there is.
      ...(this.#staged.length === 1 && last?.changeSketch !== undefined
        ? { [CHANGE_SKETCH_FIELD]: changeSketchValue(last.changeSketch) }
        : {}),
    }
    const result = await runCommitLoop({
      engine: this.#ctx.engine,
      txn: info,
      commitInfo,
      txnId,
      flags: this.#ctx.flags,
      explain: this.#ctx.explainConflicts !== false,
      retry: { ...DEFAULT_RETRY_POLICY, ...this.#ctx.retry },
      columns: columnSpecs(snap, undefined),
      signal: this.#signal,
      uncertainty: this.#uncertainty,
      inCommitTimestamps: planInCommitTimestamps(snap, actions),
    })
    this.#filesSettled = true
    // A reconcile may have replaced a staged DV file by an inline DV: nothing refers to it now.
    if (this.#written.size > 0) {
      const referenced = referencedKeys(result.actions)
      if (referenced !== undefined) await this.#deleteWritten(referenced)
    }
    // Right after the read snapshot: the commit's own content is all that is new.
    const own: KnownCommit | undefined =
      result.committed !== undefined && result.version === snap.version + 1n
        ? { version: result.version, actions: result.committed, file: result.file }
        : undefined
    if (own !== undefined) this.#ctx.onCommitted?.(snap, own)
    if (this.#ctx.autoCheckpoint !== false) await this.#maybeCheckpoint(result.version, own)
    return Object.freeze({
      version: result.version,
      operation,
      attempts: result.attempts,
      reconciliations: Object.freeze([...result.reconciliations]),
      metrics,
      txnId,
      committed: true,
    })
  }

  async #maybeCheckpoint(version: bigint, own: KnownCommit | undefined): Promise<void> {
    const interval = BigInt(checkpointInterval(this.#ctx.snapshot.properties))
    if (version === 0n || version % interval !== 0n) return
    try {
      // The read snapshot advanced by the commits since it (the winners and this one): no reload
      // of the whole table. A checkpoint of it equals one of a fresh load (planCheckpointActions
      // drops expired tombstones and marks every file dataChange: false either way).
      let snap = await advanceSnapshot(this.#ctx.engine, this.#ctx.snapshot, {
        toVersion: version,
        known: own,
      })
      if (snap.version !== version) {
        snap = await loadSnapshot(this.#ctx.engine, this.#ctx.snapshot.location, { version })
      }
      await writeCheckpoint(this.#ctx.engine, snap)
    } catch {
      // A checkpoint is an optimization: the commit has landed, and readers replay the JSON
      // commits until a later checkpoint succeeds.
    }
  }

  /** Deletes the written objects not in `keep`, ignoring failures (VACUUM takes what is left). */
  async #deleteWritten(keep: ReadonlySet<string>): Promise<void> {
    const doomed = [...this.#written].filter((key) => !keep.has(key))
    this.#written.clear()
    await deleteQuietly(this.#ctx.engine, doomed)
  }

  /** The context of one operation's build; the keys it hands over go to `written`. */
  #operationContext(written: Set<string>): OperationContext {
    return {
      engine: this.#ctx.engine,
      snapshot: this.#ctx.snapshot,
      flags: this.#ctx.flags,
      signal: this.#signal,
      now: () => Date.now(),
      recordRead: (files, predicate, options) => this.#recordRead(files, predicate, options),
      recordWholeTableRead: () => {
        this.#readWholeTable = true
      },
      wrote: (keys) => {
        for (const key of keys) written.add(key)
      },
    }
  }

  #recordRead(
    files: readonly AddFile[],
    predicate: Expression | undefined,
    options: RecordReadOptions = {},
  ): PredicateParts {
    const parts: PredicateParts = predicate
      ? splitPartitionPredicate(predicate, this.#ctx.snapshot.partitionColumns)
      : { partition: undefined, data: undefined }
    this.#reads.push(
      createReadPredicate({
        partitionPredicate: parts.partition,
        dataPredicate: parts.data,
        exactDataPredicate: options.exactPredicate,
        mergeRead: options.mergeRead,
        shouldRewriteFilter: !options.predicateOnly,
      }),
    )
    if (!options.predicateOnly) for (const f of files) this.#readFiles.set(f.path, f)
    return parts
  }

  /**
   * @throws {InvalidArgumentError} when the transaction is committing or finished
   */
  protected checkOpen(): void {
    if (this.#state !== 'open') {
      throw new InvalidArgumentError(
        `This transaction is ${this.#state === 'done' ? 'finished' : 'committing'}`,
        {
          argument: 'transaction',
          hint: 'Begin a new transaction with table.begin().',
        },
      )
    }
  }
}

/**
 * The row-tracking fields of a commit on a table that assigns row ids (PROTOCOL.md "Row
 * Tracking"): removes and recommitted adds copy `baseRowId` and `defaultRowCommitVersion` from the
 * read snapshot's `add` of the same path, new adds take fresh ids above the read mark and the
 * version the first attempt takes (the conflict checker re-bases both when a winner takes that
 * version), and the `delta.rowTracking` domain records the new mark. Other tables' commits are
 * returned unchanged.
 *
 * @returns the actions, the read mark for the conflict checker (absent when no ids are assigned),
 *   and whether row tracking is enabled
 * @throws {RowIdAssignmentWithoutStatsError} for a new `add` without a `numRecords` statistic
 * @throws {InvalidTableError} when the table's row-tracking state or mark is malformed
 */
function withRowTracking(
  snap: Snapshot,
  actions: readonly Action[],
): {
  actions: readonly Action[]
  read: { readHighWaterMark: bigint | undefined } | undefined
  enabled: boolean
} {
  const state = rowTrackingState(snap.protocol, snap.metadata)
  if (!state.assignsIds) return { actions, read: undefined, enabled: false }
  const readHighWaterMark = rowIdHighWaterMark(snap.state.domainMetadata)
  const assigned = assignRowIds(copyRowTrackingFields(actions, liveAddsOf(snap, actions)), {
    state,
    highWaterMark: readHighWaterMark,
    commitVersion: snap.version + 1n,
  })
  return { actions: assigned.actions, read: { readHighWaterMark }, enabled: state.enabled }
}

/**
 * The live `add` of each path the actions touch, by path. The snapshot keys its live files by
 * path and deletion vector, and a `remove` carries the deletion vector of the file it removes, so
 * the touched files are found by key, in the time of the commit's actions rather than of the
 * table's files. An `add` of a live path comes with the `remove` of that file (the protocol allows
 * one live file per path), or replaces a file without a deletion vector, whose key is its path; a
 * new file's path is live nowhere. A `remove` no key finds (a tombstone of an older deletion vector)
 * falls back to one pass over the live files.
 */
function liveAddsOf(snap: Snapshot, actions: readonly Action[]): Map<string, AddFile> {
  const active = snap.state.activeFiles
  const found = new Map<string, AddFile>()
  const unfound = new Set<string>()
  const lookUp = (path: string, key: string): boolean => {
    const f = active.get(key)
    if (f === undefined || f.path !== path) return false
    found.set(path, f)
    return true
  }
  for (const a of actions) {
    if (!('remove' in a) || found.has(a.remove.path)) continue
    if (!lookUp(a.remove.path, fileActionKey(a.remove.path, a.remove.deletionVector)))
      unfound.add(a.remove.path)
  }
  for (const a of actions) if ('add' in a && !found.has(a.add.path)) lookUp(a.add.path, a.add.path)
  for (const p of found.keys()) unfound.delete(p)
  if (unfound.size > 0) {
    for (const f of active.values()) if (unfound.has(f.path)) found.set(f.path, f)
  }
  return found
}

/**
 * The per-commit rules of the protocol that staged actions could break: at most one metaData,
 * one protocol, and one txn per application id.
 *
 * @throws {InvalidArgumentError} naming the rule
 */
function checkCommitShape(actions: readonly Action[]): void {
  let metadata = 0
  let protocol = 0
  const appIds = new Set<string>()
  for (const a of actions) {
    if ('metaData' in a) metadata++
    else if ('protocol' in a) protocol++
    else if ('txn' in a) {
      if (appIds.has(a.txn.appId)) {
        throw new InvalidArgumentError(
          `A commit may hold one txn action per application id; '${a.txn.appId}' has several`,
          {
            argument: 'actions',
          },
        )
      }
      appIds.add(a.txn.appId)
    }
  }
  if (metadata > 1 || protocol > 1) {
    throw new InvalidArgumentError('A commit may hold at most one metaData and one protocol action', {
      argument: 'actions',
    })
  }
}

/**
 * The store keys of the data and DV files the `add` actions of a commit refer to, and of its
 * change data files, or undefined when a path cannot be resolved (then nothing may be deleted:
 * the commit has landed).
 */
function referencedKeys(actions: readonly Action[]): Set<string> | undefined {
  const keys = new Set<string>()
  try {
    for (const a of actions) {
      if ('cdc' in a) {
        const path = decodeAddPath(a.cdc.path)
        if (path.kind === 'relative') keys.add(path.key)
        continue
      }
      if (!('add' in a)) continue
      const path = decodeAddPath(a.add.path)
      if (path.kind === 'relative') keys.add(path.key)
      const dv = a.add.deletionVector
      if (dv?.storageType === 'u') {
        const loc = resolveDvLocation(dv)
        if (loc.kind === 'relative') keys.add(loc.path)
      }
    }
  } catch {
    return undefined
  }
  return keys
}

/**
 * Deletes objects, ignoring failures: the objects of an operation that is not committed, where
 * the error that got here matters more and a leftover is an orphan VACUUM removes.
 */
async function deleteQuietly(engine: Engine, keys: Iterable<string>): Promise<void> {
  for (const key of keys) {
    try {
      await engine.storage.delete(key)
    } catch {
      // Best effort: see above.
    }
  }
}

function mergeMetrics(all: readonly Readonly<Record<string, number>>[]): Readonly<Record<string, number>> {
  const out: Record<string, number> = {}
  for (const m of all) for (const [k, v] of Object.entries(m)) out[k] = (out[k] ?? 0) + v
  return Object.freeze(out)
}

/** Spark writes operation parameters as strings (JSON text for non-strings). */
function stringifyParameters(params: Readonly<Record<string, unknown>>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue
    out[k] =
      typeof v === 'string' ? v : JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x))
  }
  return out
}
