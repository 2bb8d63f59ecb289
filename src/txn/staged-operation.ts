import type { RelocationCapture } from '../conflict/case5a-capture.js'
import type { RemovedRowIds } from '../conflict/case5b-removed-rows.js'
import type { MergeReadSet } from '../conflict/case6-merge-read-set.js'
import type { ChangeSketch } from '../conflict/change-sketch.js'
import type { ConflictFlags } from '../conflict/flags.js'
import type { KeptMatchedRows } from '../conflict/kept-matched-rows.js'
import type { Engine } from '../engine/engine.js'
import type { Expression } from '../expressions/ast.js'
import type { Action, AddFile } from '../protocol/actions.js'
import type { Snapshot } from '../snapshot/snapshot.js'

/**
 * What an operation builder gets from its transaction: the read snapshot, the engine, the means
 * to record what it read (conflict checking depends on it), and the means to hand over what it
 * wrote (the transaction deletes it unless a commit takes it).
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
   * Records a read: the predicate and the files it scanned. A read with no predicate is a full
   * scan (`TRUE`).
   *
   * @returns the predicate split into its partition and data parts, as recorded
   */
  recordRead(
    files: readonly AddFile[],
    predicate: Expression | undefined,
    options?: RecordReadOptions,
  ): PredicateParts
  /** Records that the whole table was read (Delta's "taint"). */
  recordWholeTableRead(): void
  /**
   * Hands the store keys of objects just written (data and DV files) to the transaction, as soon
   * as each write returns. From then on they are the transaction's: it deletes them when the
   * operation fails half-way, when the transaction aborts or does not commit, and when the
   * committed actions no longer refer to them. An operation never deletes them itself.
   */
  wrote(keys: Iterable<string>): void
}

/** A predicate split into the conjuncts over partition columns and the rest. */
export interface PredicateParts {
  /** Conjuncts over partition columns only, or undefined when there are none. */
  readonly partition: Expression | undefined
  /** The remaining conjuncts (they need the data), or undefined when there are none. */
  readonly data: Expression | undefined
}

/** Options of {@link OperationContext.recordRead}. */
export interface RecordReadOptions {
  /**
   * A row-exact predicate for the value-exact conflict tier when `predicate` is only a cheaper
   * pre-filter (MERGE source keys).
   */
  readonly exactPredicate?: Expression | undefined
  /** A MERGE's row-level read set (Case 6), recorded with the predicate. */
  readonly mergeRead?: MergeReadSet | undefined
  /** Record the predicate but not the files (a partition-of-new-files read). */
  readonly predicateOnly?: boolean
}

/** What an operation builder returns: the actions to commit and how to describe them. */
export interface PreparedOperation {
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
   * Every row the operation copied to a new file carries its stable row id and row commit
   * version in the table's materialized row-tracking columns (a compaction that preserves them).
   * Without it, work that copies rows is refused on a table with row tracking enabled.
   */
  readonly preservesRowIds?: boolean | undefined
  /** A permuting OPTIMIZE's own permutation (Z-order), which Case 5a remaps through. */
  readonly relocation?: RelocationCapture | undefined
  /**
   * On a table with row tracking enabled, what a DML kept of the rows it takes out (their stable
   * ids and value bounds), for reconciling it with a relocating OPTIMIZE that wins (Case 5b).
   */
  readonly removedRowIds?: RemovedRowIds | undefined
  /**
   * For a MERGE with an insert clause, the target rows it matched and left in place in the files
   * it takes rows out of (Case 2 counts them as its own).
   */
  readonly keptMatchedRows?: KeptMatchedRows | undefined
  /**
   * Key tuples holding the key of every row the operation changes (a MERGE that can vouch for
   * them), written to `commitInfo` for Case 6 losers to decide without reading data.
   */
  readonly changeSketch?: ChangeSketch | undefined
}

/**
 * An operation as its transaction staged it: what the builder returned, with the store keys of
 * every object the builder handed over through {@link OperationContext.wrote}. Staging it again in
 * a later transaction (OPTIMIZE's retry) hands those keys to that transaction.
 */
export type StagedOperation<T extends PreparedOperation = PreparedOperation> = T & {
  readonly writtenKeys: readonly string[]
}

/** Builds an operation against a transaction's read snapshot. */
export type OperationBuilder<T extends PreparedOperation = PreparedOperation> = (
  ctx: OperationContext,
) => Promise<T>
