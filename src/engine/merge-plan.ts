/**
 * The join at the heart of MERGE: source rows against the live rows of target files, the
 * clauses applied in order, and what that means for each target row.
 *
 * Expressions reference columns qualified by side: `['target', <table column>, ...]` or
 * `['source', <source column>, ...]`, with the names spelled exactly as in
 * {@link MergeRequest.targetColumns} and {@link MergeRequest.sourceColumns}.
 */
import type { Expression } from '../expressions/ast.js'
import type { DataType } from '../protocol/schema.js'
import type { ColumnSpec, DataFileRef, FileMatches, RowTrackingColumns } from './data-plane.js'
import type { WriteTarget, WrittenFile } from './data-writer.js'

/** One column of the source rows. */
export interface MergeSourceColumn {
  /** The name under which the source rows carry it (exact spelling). */
  readonly name: string
  /** Its type; row values are checked and converted as for `DataWriter.writeRows`. */
  readonly type: DataType
}

/** `WHEN [NOT MATCHED BY SOURCE] MATCHED [AND cond] THEN UPDATE SET ...`. */
export interface MergeUpdateClause {
  readonly kind: 'update'
  /** The clause applies when this is TRUE (NULL does not apply); always when absent. */
  readonly condition?: Expression | undefined
  /** New values by target column name (exact spelling); other columns keep their value. */
  readonly set: Readonly<Record<string, Expression>>
}

/** `WHEN [NOT MATCHED BY SOURCE] MATCHED [AND cond] THEN DELETE`. */
export interface MergeDeleteClause {
  readonly kind: 'delete'
  readonly condition?: Expression | undefined
}

/** A clause acting on existing target rows. */
export type MergeTargetClause = MergeUpdateClause | MergeDeleteClause

/** `WHEN NOT MATCHED [AND cond] THEN INSERT ...`: expressions over source columns only. */
export interface MergeInsertClause {
  readonly condition?: Expression | undefined
  /** Values by target column name; a column not named is NULL. */
  readonly values: Readonly<Record<string, Expression>>
}

/** What to merge. */
export interface MergeRequest {
  /** The candidate target files: every target row that may match `on` lives in one of them. */
  readonly files: readonly DataFileRef[]
  /** Every column of the table, in table order. */
  readonly targetColumns: readonly ColumnSpec[]
  readonly sourceColumns: readonly MergeSourceColumn[]
  /** Source rows keyed by source column name; a missing key is NULL. */
  readonly sourceRows: readonly Readonly<Record<string, unknown>>[]
  /** The join condition; a pair matches when it is TRUE. */
  readonly on: Expression
  /** Clauses for matched pairs, in order: the first that applies acts. */
  readonly whenMatched: readonly MergeTargetClause[]
  /** Clauses for source rows that match no target row, in order. */
  readonly whenNotMatched: readonly MergeInsertClause[]
  /** Clauses for target rows no source row matches, in order (conditions over the target only). */
  readonly whenNotMatchedBySource: readonly MergeTargetClause[]
  /**
   * Whether a target row may be matched by several source rows with an applicable clause (true
   * only when the single matched clause is an unconditional DELETE, as in Delta).
   */
  readonly allowMultipleMatches: boolean
  /**
   * Row tracking of the target (a table with it enabled): the target rows are read with their
   * stable row ids (as a row-tracking scan reads them, so every file must carry `baseRowId` and
   * `defaultRowCommitVersion`) and the result carries `rowIds`.
   */
  readonly rowTracking?: RowTrackingColumns | undefined
  /**
   * Report, for each file some clause takes rows out of, the target rows that were matched and
   * left in place ({@link MergeResult.keptMatched}); conflict checking needs them for a MERGE that
   * inserts (a concurrent deletion of such a row would have let a source row be inserted).
   */
  readonly reportKeptMatched?: boolean | undefined
  /**
   * Report, per file, which of the leaving target rows an update clause acted on
   * ({@link MergeResult.updatedPositions}); the others were deleted. The change data feed needs
   * the split.
   */
  readonly reportUpdated?: boolean | undefined
  /**
   * Lets the executor write the new rows itself, from where it computed them, instead of
   * returning them: it then returns {@link MergeResult.written} and no `rows`. An executor may
   * still return `rows` (for column types or an engine it cannot write them for); the caller
   * handles both.
   */
  readonly write?: MergeWrite | undefined
  readonly signal?: AbortSignal | undefined
}

/** How a merge executor writes the new rows when it writes them itself. */
export interface MergeWrite {
  /**
   * The layout of the new files, as for `DataWriter.writeRows` (the schema matches
   * {@link MergeRequest.targetColumns}). Values are checked as that call checks them: a null in a
   * non-nullable column fails the call with an `InvalidArgumentError` and nothing written.
   */
  readonly target: WriteTarget
  /**
   * Write the updated images and the inserted rows to separate files (the change data feed reads
   * each kind whole); otherwise they may share files.
   */
  readonly separate: boolean
}

/** The files a merge executor wrote for the new rows. */
export interface MergeWritten {
  /** With {@link MergeWrite.separate}: the files holding the updated images; else empty. */
  readonly images: readonly WrittenFile[]
  /** The files holding the inserted rows (without `separate`, the updated images too). */
  readonly inserts: readonly WrittenFile[]
}

/** A target row that several source rows would act on. */
export interface MergeMultipleMatch {
  /** The target file's store key. */
  readonly key: string
  /** The target row's physical position in that file. */
  readonly position: number
  /** Indexes (into `sourceRows`) of some of the source rows matching it, ascending. */
  readonly sourceRows: readonly number[]
}

/** The outcome of a merge join; nothing is written. */
export interface MergeResult {
  /**
   * Per request file, in request order: positions of the target rows an update or delete
   * clause acted on (they leave the file) and the file's live row count.
   */
  readonly files: readonly FileMatches[]
  /**
   * New target rows, keyed by target column name in the `DataPlane` row representation: the
   * updated images (by file, then position) followed by the inserted rows (in source order).
   * Empty when the executor wrote them ({@link written}).
   */
  readonly rows: readonly Readonly<Record<string, unknown>>[]
  /**
   * Set when the executor wrote the new rows itself (see {@link MergeRequest.write}), in the same
   * order as `rows` would hold them; with `rowTracking`, every updated image carries the stable
   * row id of the target row it replaces and every inserted row takes a fresh one.
   */
  readonly written?: MergeWritten | undefined
  /**
   * With `rowTracking` in the request and the rows returned: one entry per row of `rows`, the stable row id of the
   * target row an updated image replaces, or null for an inserted row (it gets a fresh id).
   */
  readonly rowIds?: readonly (bigint | null)[] | undefined
  readonly numSourceRows: number
  readonly numTargetRowsMatchedUpdated: number
  readonly numTargetRowsMatchedDeleted: number
  readonly numTargetRowsNotMatchedBySourceUpdated: number
  readonly numTargetRowsNotMatchedBySourceDeleted: number
  readonly numTargetRowsInserted: number
  /**
   * With `reportKeptMatched` in the request: per request file, in request order, the positions
   * (ascending) of the target rows some source row matched but no clause acted on, listed only for
   * files with a position in `files` (empty for the others).
   */
  readonly keptMatched?: readonly (readonly number[])[] | undefined
  /**
   * With `reportUpdated` in the request: per request file, in request order, the positions
   * (ascending) of its rows in `files` that an update clause replaced; the rest of them were
   * deleted.
   */
  readonly updatedPositions?: readonly (readonly number[])[] | undefined
  /**
   * Set when a target row is matched by more than one source row with an applicable matched
   * clause and that is not allowed; `files` and `rows` are then empty.
   */
  readonly multipleMatch?: MergeMultipleMatch | undefined
}

/** Runs merge joins. */
export interface MergeExecutor {
  /**
   * Joins and classifies; writes nothing.
   *
   * @param request - target files, source rows and clauses
   * @returns the rows leaving each file, the new rows, and counts
   * @throws {InvalidArgumentError} when a source value does not fit its column, an expression
   *   references an unknown column, or a value cannot be converted to its target column's type
   * @throws {FileNotFoundError} when a target file is missing
   * @throws {StorageError} when the data plane fails
   */
  execute(request: MergeRequest): Promise<MergeResult>
}
