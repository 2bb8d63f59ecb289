/**
 * Case 2 (rlc-spec section 5): both transactions deleted rows of the same file through deletion
 * vectors. When the rows they newly deleted are disjoint, the loser commits the union of both
 * deletion vectors and re-points its tombstone at the winner's post-image.
 *
 * Per path P updated by both sides (winner `remove(P, pre)` + `add(P, Wd)`, loser
 * `remove(P, B)` + `add(P, C)`), P is reconciled only when
 * - the winner's pre-image is exactly the loser's read-time DV (`pre` and `B` are the same
 *   deletion vector) and the winner's post-image contains it (`B` within `Wd`): a winner that
 *   restored rows is never silently undone (design decision 10);
 * - the loser's own post-image contains its read-time DV (`B` within `C`);
 * - no row was newly deleted by both: `(Wd and C) minus B` is empty;
 * - for a MERGE with an insert clause, the winner newly deleted none of the target rows the MERGE
 *   matched in P and left in place (`kept-matched-rows.ts`): such a row's existence kept the MERGE
 *   from inserting its source row, so the MERGE read it as surely as the rows it changed. A MERGE
 *   whose matched rows of P are unknown (its deletions were moved to P by a relocation) is not
 *   reconciled.
 * Every other row of P the loser read and left alone is safe to lose: a DELETE's or UPDATE's
 * matching rows are the rows it changes, a target row no MERGE source row matched decides only its
 * own fate (also under a NOT MATCHED BY SOURCE clause, whose conditions read the target only), and
 * a winner's update images live in other files, which stay candidates of the added-files check.
 * Each path is decided on its own; a refused path stays in the file-level checks, which abort.
 * Successive winners compose: after winner k the loser's tombstone carries winner k's DV, which
 * is the pre-image winner k+1 must show.
 */
import type { RoaringBitmapArray } from '../dv/roaring-bitmap-array.js'
import {
  type Action,
  type AddFile,
  type DeletionVectorDescriptor,
  isAdd,
  isRemove,
  type RemoveFile,
} from '../protocol/actions.js'
import { tombstoneOf, withNewDeletionVector } from '../protocol/file-action-rewrites.js'
import { newDeletionVectorDescriptor, readDeletionVector, sameDeletionVector } from './deletion-vectors.js'
import { type FetchPlan, FetchPlanBuilder } from './fetched-facts.js'
import { type FileActionIndex, indexFileActions } from './file-actions.js'
import { keptMatchedRowsDeleted } from './kept-matched-rows.js'
import {
  deletionVectorsWritable,
  noDeletionVectors,
  type PhaseInput,
  type PhaseOutcome,
  type PlanInput,
  type RowLevelPhase,
  unchanged,
} from './phase.js'
import { type NewDeletionVector, reconciliation } from './reconciliation.js'
import { withActions, withoutReadFiles } from './transaction-info.js'

/**
 * The paths Case 2 would look at: updated through a deletion vector by both the winner and the
 * loser, each with exactly one `remove` and one `add` of the path.
 *
 * @param input - the transaction and the winner
 * @returns the candidate paths, in the winner's order
 */
function dvUnionCandidates(input: Pick<PhaseInput, 'txn' | 'winner'>): readonly string[] {
  const own = indexFileActions(input.txn.actions)
  const out: string[] = []
  for (const path of input.winner.dvUpdates.keys()) {
    const add = own.adds.get(path)
    if (add?.deletionVector !== undefined && own.removes.has(path)) out.push(path)
  }
  return out
}

/**
 * The deletion vectors Case 2 loads: for each candidate path, the three it compares.
 *
 * @param input - the transaction, the winner and the flags
 * @returns the plan
 */
function planDeletionVectorUnion(input: PlanInput): FetchPlan {
  const plan = new FetchPlanBuilder()
  if (!input.flags.rowLevelConcurrency) return plan.build()
  const own = indexFileActions(input.txn.actions)
  for (const path of dvUnionCandidates(input)) {
    for (const dv of comparedDeletionVectors(own, input.winner, path)) plan.deletionVector(dv, path)
  }
  return plan.build()
}

/**
 * Runs Case 2 against one winner.
 *
 * @param input - the transaction, the winner, the flags and the loaded deletion vectors
 * @returns the rewritten transaction and the reconciled paths, or the unchanged transaction
 */
function reconcileDeletionVectorUnion(input: PhaseInput): PhaseOutcome {
  const { txn, winner } = input
  if (!input.flags.rowLevelConcurrency) return unchanged(txn)
  const candidates = dvUnionCandidates(input)
  if (candidates.length === 0) return unchanged(txn)
  if (!deletionVectorsWritable(txn)) return unchanged(txn, noDeletionVectors(candidates))

  const own = indexFileActions(txn.actions)
  const refusals = new Map<string, string>()
  const replacements = new Map<string, { add: AddFile; remove: RemoveFile }>()
  const created: NewDeletionVector[] = []
  let rows = 0
  for (const path of candidates) {
    try {
      const merged = mergeOnePath(input, own, path)
      if (typeof merged === 'string') {
        refusals.set(path, merged)
        continue
      }
      replacements.set(path, { add: merged.add, remove: merged.remove })
      created.push(merged.created)
      rows += merged.loserRows
    } catch (err) {
      // One file's failure (a corrupt bitmap) must not stop the others from reconciling.
      refusals.set(
        path,
        `the deletion vectors could not be merged (${err instanceof Error ? err.message : String(err)})`,
      )
    }
  }
  if (replacements.size === 0) return unchanged(txn, refusals)

  const actions = txn.actions.map((a): Action => {
    if (isAdd(a)) {
      const r = replacements.get(a.add.path)
      return r === undefined ? a : Object.freeze({ add: r.add })
    }
    if (isRemove(a)) {
      const r = replacements.get(a.remove.path)
      return r === undefined ? a : Object.freeze({ remove: r.remove })
    }
    return a
  })
  const paths = [...replacements.keys()]
  return Object.freeze({
    txn: withoutReadFiles(withActions(txn, actions), paths),
    resolvedPaths: Object.freeze(paths),
    reconciliation: reconciliation('case2-dv-union', winner, { files: paths, rows }),
    newDeletionVectors: Object.freeze(created),
    refusals,
  })
}

/** Case 2: the deletion vectors it loads, and the union it commits. */
export const dvUnionPhase: RowLevelPhase = Object.freeze({
  label: 'the deletion-vector union (Case 2)',
  plan: planDeletionVectorUnion,
  reconcile: reconcileDeletionVectorUnion,
})

// === Internals ===

/**
 * The deletion vectors Case 2 compares for one path, in the order the plan asks for them: the
 * one the transaction read (its tombstone's), the one it writes, and the one the winner left.
 */
function comparedDeletionVectors(
  own: FileActionIndex,
  winner: PhaseInput['winner'],
  path: string,
): readonly [
  base: DeletionVectorDescriptor | undefined,
  ours: DeletionVectorDescriptor | undefined,
  theirs: DeletionVectorDescriptor | undefined,
] {
  return [
    own.removes.get(path)?.deletionVector,
    own.adds.get(path)?.deletionVector,
    winner.dvUpdates.get(path)?.deletionVector,
  ]
}

interface Merged {
  readonly add: AddFile
  readonly remove: RemoveFile
  readonly created: NewDeletionVector
  /** Rows the loser newly deleted, carried into the union. */
  readonly loserRows: number
}

/** Merges one path, or says why it cannot be. */
function mergeOnePath(input: PhaseInput, own: FileActionIndex, path: string): Merged | string {
  const { winner, fetched } = input
  const ownAdd = own.adds.get(path)!
  const ownRemove = own.removes.get(path)!
  const winnerAdd = winner.dvUpdates.get(path)!
  const winnerPre = winner.dvUpdatePreImages.get(path)!
  if (!sameDeletionVector(winnerPre.deletionVector, ownRemove.deletionVector)) {
    return "the winner's pre-image of the file is not the deletion vector this transaction read"
  }
  const [base, ours, theirs] = comparedDeletionVectors(own, winner, path).map((dv) =>
    readDeletionVector(dv, fetched),
  )
  if (base === undefined || theirs === undefined || ours === undefined) {
    return 'a deletion vector needed to compare the deleted rows was not loaded'
  }
  if (!base.isSubsetOf(theirs)) {
    return "the winner's deletion vector does not contain the read-time one (rows were restored)"
  }
  if (!base.isSubsetOf(ours)) {
    return "this transaction's deletion vector does not contain its read-time one"
  }
  const overlap = countOverlap(theirs, ours, base)
  if (overlap > 0) return `both transactions deleted the same ${overlap} row(s)`
  const kept = input.txn.keptMatchedRows
  if (kept !== undefined) {
    const lost = keptMatchedRowsDeleted(kept, path, theirs, base)
    if (lost === undefined) {
      return 'this MERGE inserts for unmatched source rows, and the target rows it matched in this file are not known (its deletions were moved here)'
    }
    if (lost > 0) {
      return `the winner deleted ${lost} target row(s) this MERGE matched and left in place; without them it would have inserted their source rows`
    }
  }
  const union = theirs.union(ours)
  const descriptor = newDeletionVectorDescriptor(union)
  return {
    add: withNewDeletionVector(ownAdd, descriptor, true),
    remove: tombstoneOf(winnerAdd, ownRemove.deletionTimestamp, true),
    created: Object.freeze({ dataFilePath: path, descriptor, bitmap: union, createdBy: 'case2-dv-union' }),
    loserRows: ours.cardinality - base.cardinality,
  }
}

function countOverlap(a: RoaringBitmapArray, b: RoaringBitmapArray, base: RoaringBitmapArray): number {
  if (!a.intersects(b)) return 0
  const both = a.intersection(b)
  const fresh = both.difference(base)
  const n = fresh.cardinality
  both.dispose()
  fresh.dispose()
  return n
}
