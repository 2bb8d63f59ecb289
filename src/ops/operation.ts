import type { ConflictFlags } from '../conflict/flags.js'
import type { Engine } from '../engine/engine.js'
import type { Expression } from '../expressions/ast.js'
import type { Action, AddFile } from '../protocol/actions.js'
import type { Snapshot } from '../snapshot/snapshot.js'

/**
 * What an operation builder gets from its transaction: the read snapshot, the engine, and the
 * means to record what it read (conflict checking depends on it).
 */
export interface OperationContext {
  readonly engine: Engine
  /** The transaction's read snapshot. */
  readonly snapshot: Snapshot
  readonly flags: ConflictFlags
  readonly signal?: AbortSignal | undefined
  /** The clock (ms since the epoch) for modification and deletion timestamps. */
  now(): number
  /**
   * Records a read: the predicate (split into partition and data parts by the transaction) and
   * the files it scanned. A read with no predicate is a full scan (`TRUE`).
   */
  recordRead(files: readonly AddFile[], predicate: Expression | undefined, options?: RecordReadOptions): void
  /** Records that the whole table was read (Delta's "taint"). */
  recordWholeTableRead(): void
}

/** Options of {@link OperationContext.recordRead}. */
export interface RecordReadOptions {
  /**
   * A row-exact predicate for the value-exact conflict tier when `predicate` is only a cheaper
   * pre-filter (MERGE source keys).
   */
  readonly exactPredicate?: Expression | undefined
  /** Record the predicate but not the files (a partition-of-new-files read). */
  readonly predicateOnly?: boolean
}

/** What an operation builder returns: the actions to commit and how to describe them. */
export interface StagedOperation {
  /** `commitInfo.operation`, e.g. `WRITE`, `DELETE`, `OPTIMIZE`. */
  readonly operation: string
  /** `commitInfo.operationParameters`. */
  readonly parameters: Readonly<Record<string, unknown>>
  readonly actions: readonly Action[]
  /** `commitInfo.operationMetrics` and `CommitResult.metrics`. */
  readonly metrics: Readonly<Record<string, number>>
  /** False for rearrangements that change no data (OPTIMIZE). */
  readonly changesData: boolean
  /**
   * Store keys of the objects the operation wrote (data and DV files). The transaction deletes
   * them when it does not commit, and deletes those the committed actions no longer reference
   * when it does (a reconcile may replace a staged DV by an inline one).
   */
  readonly writtenKeys?: readonly string[] | undefined
}
