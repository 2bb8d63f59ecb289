/**
 * What the checker reports about the row-level reconciliations it applied, and the deletion
 * vectors it created while doing so.
 */
import type { RoaringBitmapArray } from '../dv/roaring-bitmap-array.js'
import type { DeletionVectorDescriptor, Version } from '../protocol/actions.js'

/** Which reconciliation turned a file-level conflict into a commit. */
export type ReconciliationKind =
  | 'case1-data-skipping'
  | 'case1b-delete-read'
  | 'case2-dv-union'
  | 'case3-no-data-change'
  | 'case4a-forward-remap'
  | 'case4b-reverse-remap'
  | 'case5a-zorder-forward'
  | 'case5b-zorder-reverse'
  | 'case6-merge-rows'

/** One reconciliation applied against one winning commit. */
export interface Reconciliation {
  readonly kind: ReconciliationKind
  readonly winnerVersion: Version
  readonly winnerOperation: string | undefined
  /** The files involved and, where rows were moved or merged, how many. */
  readonly detail: ReconciliationDetail
}

/** What a reconciliation involved. */
export interface ReconciliationDetail {
  readonly files?: readonly string[]
  /** Rows moved, merged or checked. */
  readonly rows?: number
  /** Case 6 decided from the winner's change sketch in `commitInfo`, reading no rows. */
  readonly changeSketch?: true
}

/**
 * A deletion vector a reconciliation created. The rewritten actions carry it as an inline
 * descriptor (`storageType 'i'`), which is valid in the log as is. The commit loop may instead
 * write `bitmap` to a DV file and swap the descriptor with `replaceDeletionVectorDescriptors`; a
 * DV file written for a commit that finally aborts, or whose descriptor a later reconcile
 * replaced, must then be deleted by the loop (design decision 7).
 */
export interface NewDeletionVector {
  /** The data file the deletion vector belongs to (the `add.path`). */
  readonly dataFilePath: string
  /** The inline descriptor placed in the rewritten `add`. */
  readonly descriptor: DeletionVectorDescriptor
  /** The deleted row positions. */
  readonly bitmap: RoaringBitmapArray
  /** The reconciliation that created it. */
  readonly createdBy: ReconciliationKind
}

/**
 * Builds a frozen reconciliation record.
 *
 * @param kind - which reconciliation
 * @param winner - the winning commit's version and operation
 * @param detail - files and rows involved
 * @returns the record
 */
export function reconciliation(
  kind: ReconciliationKind,
  winner: { readonly version: Version; readonly operation: string | undefined },
  detail: ReconciliationDetail,
): Reconciliation {
  const d: { -readonly [K in keyof ReconciliationDetail]: ReconciliationDetail[K] } = {}
  if (detail.files !== undefined) d.files = Object.freeze([...detail.files])
  if (detail.rows !== undefined) d.rows = detail.rows
  if (detail.changeSketch === true) d.changeSketch = true
  return Object.freeze({
    kind,
    winnerVersion: winner.version,
    winnerOperation: winner.operation,
    detail: Object.freeze(d),
  })
}
