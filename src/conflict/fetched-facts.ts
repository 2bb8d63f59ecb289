/**
 * The hand-off between the pure checker and the commit loop ("plan, then fetch"): the requests
 * `planConflictFetches` makes, and the answers the loop passes back to `checkConflicts`.
 */
import type { RoaringBitmapArray } from '../dv/roaring-bitmap-array.js'
import type { Expression } from '../expressions/index.js'
import type { AddFile, DeletionVectorDescriptor } from '../protocol/actions.js'
import { dvUniqueId, needsFetch } from './deletion-vectors.js'

/** A deletion vector the loop must load (read its DV file, decode the bitmap). */
export interface DeletionVectorRequest {
  /** The key to store the bitmap under in {@link FetchedFacts.deletionVectors}: the DV's unique id. */
  readonly key: string
  /** The descriptor to load (never inline: inline ones are decoded by the checker itself). */
  readonly descriptor: DeletionVectorDescriptor
  /** The data file the deletion vector belongs to, for messages. */
  readonly dataFilePath: string
}

/** Why a row query is asked. */
export type RowMatchPurpose = 'case1-value-exact' | 'case1b-delete-read'

/**
 * An existence question over actual rows: does any row of `file` that is live under
 * `file.deletionVector` (and, when `onlyRowsDeletedBy` is set, is deleted by that deletion
 * vector) satisfy `predicate`? The predicate references the table's data columns by name, under
 * the read-time schema.
 *
 * The loop answers `true` when some row matches, `false` when none does, and `true` (or leaves
 * the answer out) on any error, such as a column the file does not have: an unanswered query
 * counts as a match.
 */
export interface RowMatchQuery {
  /** The key to store the answer under in {@link FetchedFacts.rowMatches}. */
  readonly key: string
  readonly purpose: RowMatchPurpose
  /** The data file, with the deletion vector whose live rows are searched. */
  readonly file: AddFile
  /** Restricts the search to rows this deletion vector deletes (the rows a winner removed). */
  readonly onlyRowsDeletedBy?: DeletionVectorDescriptor
  readonly predicate: Expression
}

/**
 * A read of some live rows of one file (Case 6): the rows of `file` live under its deletion
 * vector that satisfy `predicate`, each with the values of `columns` and an id. With `ids:
 * 'stable'` the id is the row's stable row id and `version` its row commit version (the
 * materialized columns named by `rowTracking` where present and not null, else `baseRowId` plus
 * the physical position and `defaultRowCommitVersion`); with `ids: 'position'` the id is the
 * row's physical position and `version` is null.
 *
 * The loop leaves the answer out on any error, or when more than `maxRows` rows match.
 */
export interface RowReadRequest {
  /** The key to store the answer under in {@link FetchedFacts.rowReads}. */
  readonly key: string
  /** The data file, with the deletion vector whose live rows are read. */
  readonly file: AddFile
  readonly predicate: Expression
  /** Table (logical) column names whose values each row carries, in order. */
  readonly columns: readonly string[]
  readonly ids: 'stable' | 'position'
  /** Physical names of the materialized row-tracking columns, for `ids: 'stable'`. */
  readonly rowTracking?: {
    readonly materializedRowIdColumn?: string | undefined
    readonly materializedRowCommitVersionColumn?: string | undefined
  }
  readonly maxRows: number
  /**
   * Only the rows live under `file.deletionVector` that this deletion vector deletes: the rows a
   * deletion-vector update took out, without reading the rows it kept. The answer is left out
   * when this vector does not hold every position of the file's own (rows came back), or the
   * file's statistics do not give its row count.
   */
  readonly onlyDeletedBy?: DeletionVectorDescriptor | undefined
  /**
   * The reads of one plan stop after this many milliseconds (the largest value among them
   * counts); the answers not in by then are left out. Absent or 0: no bound.
   */
  readonly maxMillis?: number
}

/**
 * The most rows a file may have for a {@link RowReadRequest.onlyDeletedBy} read, which hides the
 * rows it does not return by listing their positions.
 */
export const ONLY_DELETED_BY_MAX_ROWS = 5_000_000

/** One row a {@link RowReadRequest} returned. */
export interface ReadRow {
  readonly id: bigint
  readonly version: bigint | null
  /** The values of the request's columns, in order, as the data plane returns them. */
  readonly values: readonly unknown[]
}

/**
 * A search for stable row ids in the materialized row-id column of some files (Case 5b): every
 * row of each file is looked at (deletion vectors are not applied), and only that column is read.
 */
export interface RowIdLookup {
  /** The key to store the answer under in {@link FetchedFacts.rowIdLookups}. */
  readonly key: string
  /** The files to search. */
  readonly files: readonly AddFile[]
  /** The physical name of the materialized row-id column. */
  readonly rowIdColumn: string
  /** The ids sought, ascending and distinct. */
  readonly ids: BigInt64Array
  /** The loop stops the search after this many milliseconds and answers `timed-out`. */
  readonly maxMillis: number
}

/** The answer to a {@link RowIdLookup}. */
export type RowIdLookupAnswer =
  | {
      readonly kind: 'found'
      /** By file path: ascending positions holding a sought id, and the id at each. */
      readonly files: ReadonlyMap<
        string,
        { readonly positions: readonly number[]; readonly ids: readonly bigint[] }
      >
      /** Rows with no materialized id (null, or the file lacks the column). */
      readonly nullRows: number
    }
  | { readonly kind: 'timed-out'; readonly maxMillis: number }

/** What the loop must load before calling `checkConflicts`. Empty when all flags are off. */
export interface FetchPlan {
  readonly deletionVectors: readonly DeletionVectorRequest[]
  readonly rowQueries: readonly RowMatchQuery[]
  /** Row reads (Case 6); absent when none. */
  readonly rowReads?: readonly RowReadRequest[]
  /** Row-id lookups (Case 5b); absent when none. */
  readonly rowIdLookups?: readonly RowIdLookup[]
}

/**
 * The loop's answers. Anything missing makes the reconciliation that needed it refuse, which
 * leaves the file-level answer (an abort) in place.
 */
export interface FetchedFacts {
  /** Loaded bitmaps by {@link DeletionVectorRequest.key}. */
  readonly deletionVectors: ReadonlyMap<string, RoaringBitmapArray>
  /** Row-query answers by {@link RowMatchQuery.key}; true means some row matches. */
  readonly rowMatches: ReadonlyMap<string, boolean>
  /** Row-read answers by {@link RowReadRequest.key}; absent when none was asked. */
  readonly rowReads?: ReadonlyMap<string, readonly ReadRow[]>
  /** Row-id lookup answers by {@link RowIdLookup.key}; absent when none was asked. */
  readonly rowIdLookups?: ReadonlyMap<string, RowIdLookupAnswer>
}

/** No facts: what the baseline checker needs. */
export const NO_FETCHED_FACTS: FetchedFacts = Object.freeze({
  deletionVectors: new Map<string, RoaringBitmapArray>(),
  rowMatches: new Map<string, boolean>(),
})

/** The empty plan. */
export const EMPTY_FETCH_PLAN: FetchPlan = Object.freeze({
  deletionVectors: Object.freeze([]),
  rowQueries: Object.freeze([]),
})

/**
 * Collects a fetch plan: each file-backed deletion vector once (by unique id, the first data file
 * that asks names it), empty and inline ones never (the checker decodes those itself); row
 * questions in the order asked.
 */
export class FetchPlanBuilder {
  readonly #deletionVectors = new Map<string, DeletionVectorRequest>()
  readonly #rowQueries: RowMatchQuery[] = []
  readonly #rowReads = new Map<string, RowReadRequest>()
  readonly #rowIdLookups = new Map<string, RowIdLookup>()

  /**
   * Asks for a deletion vector, if it must be loaded.
   *
   * @param dv - the descriptor, or undefined for none
   * @param dataFilePath - the data file it belongs to
   * @returns this builder
   */
  deletionVector(dv: DeletionVectorDescriptor | undefined, dataFilePath: string): this {
    if (!needsFetch(dv)) return this
    const key = dvUniqueId(dv)!
    if (!this.#deletionVectors.has(key))
      this.#deletionVectors.set(key, Object.freeze({ key, descriptor: dv, dataFilePath }))
    return this
  }

  /**
   * Asks a row question.
   *
   * @param query - the question
   * @returns this builder
   */
  rowQuery(query: RowMatchQuery): this {
    this.#rowQueries.push(query)
    return this
  }

  /**
   * Asks for a row read (once per key).
   *
   * @param request - the read
   * @returns this builder
   */
  rowRead(request: RowReadRequest): this {
    if (!this.#rowReads.has(request.key)) this.#rowReads.set(request.key, request)
    return this
  }

  /**
   * Asks for a row-id lookup (once per key).
   *
   * @param lookup - the lookup
   * @returns this builder
   */
  rowIdLookup(lookup: RowIdLookup): this {
    if (!this.#rowIdLookups.has(lookup.key)) this.#rowIdLookups.set(lookup.key, lookup)
    return this
  }

  /**
   * Asks everything another plan asks.
   *
   * @param plan - a plan, typically one case's
   * @returns this builder
   */
  include(plan: FetchPlan): this {
    for (const d of plan.deletionVectors) {
      if (!this.#deletionVectors.has(d.key)) this.#deletionVectors.set(d.key, d)
    }
    for (const q of plan.rowQueries) this.#rowQueries.push(q)
    for (const r of plan.rowReads ?? []) this.rowRead(r)
    for (const l of plan.rowIdLookups ?? []) this.rowIdLookup(l)
    return this
  }

  /** @returns the plan, frozen; {@link EMPTY_FETCH_PLAN} when nothing was asked */
  build(): FetchPlan {
    if (
      this.#deletionVectors.size === 0 &&
      this.#rowQueries.length === 0 &&
      this.#rowReads.size === 0 &&
      this.#rowIdLookups.size === 0
    )
      return EMPTY_FETCH_PLAN
    return Object.freeze({
      deletionVectors: Object.freeze([...this.#deletionVectors.values()]),
      rowQueries: Object.freeze([...this.#rowQueries]),
      ...(this.#rowReads.size === 0 ? {} : { rowReads: Object.freeze([...this.#rowReads.values()]) }),
      ...(this.#rowIdLookups.size === 0
        ? {}
        : { rowIdLookups: Object.freeze([...this.#rowIdLookups.values()]) }),
    })
  }
}
