/**
 * Case 5a (design beyond-rlc 7.4): a Z-order OPTIMIZE loses to a DML that deleted rows of some
 * of its sources, through a deletion vector or by removing the source whole. The OPTIMIZE
 * permuted the rows, so no offset describes where they went (no composition tags, S11); it kept
 * its own permutation while writing instead ({@link RelocationCapture}, W4). Each row the
 * winner newly deleted is looked up there by its live rank at read time and deleted in the
 * output it landed in, at the position it landed at; no data is read. The tombstone of a source
 * the winner updated is re-pointed at the winner's post-image; the tombstone of a source the
 * winner removed is dropped (the winner removed it already). The commit stays `dataChange=false`.
 *
 * Successive winners compose: the tombstone then holds the previous winner's post-image, which
 * the next winner's pre-image must equal (S4, S12), while ranks stay those of the read-time
 * deletion vector the capture keeps.
 *
 * All or nothing over the sources the winner touched; refused, with the file-level checks then
 * aborting and the reason recorded, when
 * - the transaction is not a permuting OPTIMIZE that kept its permutation (over the cap, or a
 *   source missing from it);
 * - the winner's pre-image of a source is not the deletion vector the tombstone removes (S4), or
 *   its post-image does not contain it, or the tombstone's does not contain the read-time one;
 * - a deleted row has no place in the permutation, or its output position is already deleted
 *   or named twice (S5);
 * - the winner removed a source without deleting its rows (another relocation).
 */
import type { RoaringBitmapArray } from '../dv/roaring-bitmap-array.js'
import { type Action, type AddFile, isAdd, isRemove, type RemoveFile } from '../protocol/actions.js'
import { tombstoneOf, withNewDeletionVector } from '../protocol/file-action-rewrites.js'
import type { RelocatedSource } from './case5a-capture.js'
import { newDeletionVectorDescriptor, readDeletionVector, sameDeletionVector } from './deletion-vectors.js'
import { type FetchPlan, FetchPlanBuilder } from './fetched-facts.js'
import { indexFileActions } from './file-actions.js'
import {
  changesData,
  deletionVectorsWritable,
  noDeletionVectors,
  type PhaseInput,
  type PhaseOutcome,
  type PlanInput,
  type RowLevelPhase,
  refuseAll,
  refuseRemovedWithoutDeletion,
  unchanged,
} from './phase.js'
import { type NewDeletionVector, reconciliation } from './reconciliation.js'
import { withDeletedRows } from './row-remap.js'
import { withActions, withoutReadFiles } from './transaction-info.js'

/**
 * The sources the remap looks at: updated through a deletion vector or removed whole by the
 * winner, and removed by the transaction.
 */
function touchedSources(input: Pick<PhaseInput, 'txn' | 'winner'>): readonly string[] {
  const own = indexFileActions(input.txn.actions)
  return [...input.winner.dvUpdates.keys(), ...input.winner.wholeRemovals.keys()].filter(
    (p) => own.removes.has(p) || own.ambiguous.has(p),
  )
}

/** Whether the phase can apply: its flag is on and the transaction is a permuting OPTIMIZE. */
function applies(input: PlanInput): boolean {
  return input.flags.optimizeZOrderReconciliation && input.txn.relocation !== undefined
}

/**
 * The deletion vectors Case 5a loads, per touched source: what the tombstone removes, what the
 * winner left, the read-time one (the gaps of the ranks), and the current one of each output the
 * source's rows went to (the seeds of their new deletion vectors).
 *
 * @param input - the transaction, the winner and the flags
 * @returns the plan
 */
function planZOrderForward(input: PlanInput): FetchPlan {
  const plan = new FetchPlanBuilder()
  if (!applies(input)) return plan.build()
  const own = indexFileActions(input.txn.actions)
  const captured = input.txn.relocation?.sources
  for (const path of touchedSources(input)) {
    plan.deletionVector(own.removes.get(path)?.deletionVector, path)
    plan.deletionVector(input.winner.dvUpdates.get(path)?.deletionVector, path)
    const source = captured?.get(path)
    if (source === undefined) continue
    plan.deletionVector(source.readDeletionVector, path)
    for (const out of new Set(source.outputs)) plan.deletionVector(own.adds.get(out)?.deletionVector, out)
  }
  return plan.build()
}

/**
 * Runs Case 5a against one winner.
 *
 * @param input - the transaction, the winner, the flags and the loaded deletion vectors
 * @returns the rewritten transaction and the remapped sources, or the unchanged transaction
 */
function reconcileZOrderForward(input: PhaseInput): PhaseOutcome {
  const { txn, winner, fetched } = input
  if (!applies(input)) return unchanged(txn)
  const own = indexFileActions(txn.actions)
  const refusals = new Map<string, string>()
  refuseRemovedWithoutDeletion(winner, own, refusals)
  const touched = touchedSources(input)
  if (touched.length === 0) return unchanged(txn, refusals)
  if (!deletionVectorsWritable(txn)) return unchanged(txn, noDeletionVectors(touched))

  const refuse = refuseAll(txn, touched, refusals)
  if (changesData(txn)) return refuse(touched[0]!, 'this transaction is not a relocation (it changes data)')
  const captured = txn.relocation?.sources
  if (captured === undefined) {
    return refuse(
      touched[0]!,
      `the Z-order OPTIMIZE kept no permutation (${txn.relocation?.notKept ?? 'not captured'})`,
    )
  }

  const rowsByOutput = new Map<string, number[]>()
  let remappedRows = 0
  for (const src of touched) {
    const source = captured.get(src)
    const ownRemove = own.removes.get(src)
    if (source === undefined || ownRemove === undefined) {
      return refuse(src, 'the Z-order OPTIMIZE kept no permutation for this source')
    }
    const whole = winner.wholeRemovals.get(src)
    const preImage = whole ?? winner.dvUpdatePreImages.get(src)!
    // S4: positions are only comparable against the same base.
    if (!sameDeletionVector(preImage.deletionVector, ownRemove.deletionVector)) {
      return refuse(
        src,
        "the winner's pre-image of the source is not the deletion vector the OPTIMIZE's tombstone removes (a different base)",
      )
    }
    const removed = readDeletionVector(ownRemove.deletionVector, fetched)
    const gaps = readDeletionVector(source.readDeletionVector, fetched)
    if (removed === undefined || gaps === undefined) {
      return refuse(src, 'a deletion vector of the source was not loaded')
    }
    if (!gaps.isSubsetOf(removed)) {
      return refuse(src, "the tombstone's deletion vector does not contain the one the OPTIMIZE read")
    }
    let deleted: Iterable<number>
    let fresh: RoaringBitmapArray | undefined
    if (whole !== undefined) {
      deleted = remainingRows(removed, gaps, source)
    } else {
      const theirs = readDeletionVector(winner.dvUpdates.get(src)!.deletionVector, fetched)
      if (theirs === undefined) return refuse(src, 'a deletion vector of the source was not loaded')
      if (!removed.isSubsetOf(theirs)) {
        return refuse(
          src,
          "the winner's deletion vector does not contain the read-time one (rows were restored)",
        )
      }
      // Iterated, never expanded: a position with no place ends the walk at once.
      fresh = theirs.difference(removed)
      deleted = fresh
    }
    try {
      for (const p of deleted) {
        const place = placeOf(p, gaps, source)
        if (place === undefined) return refuse(src, 'a deleted row has no place in the permutation')
        const acc = rowsByOutput.get(place.output)
        if (acc === undefined) rowsByOutput.set(place.output, [place.row])
        else acc.push(place.row)
        remappedRows++
      }
    } finally {
      fresh?.dispose()
    }
  }

  const newOutputs = new Map<string, AddFile>()
  const created: NewDeletionVector[] = []
  for (const [path, rows] of rowsByOutput) {
    const output = own.adds.get(path)
    if (output === undefined)
      return refuse(path, 'a permutation names an output the transaction does not add')
    const seed = readDeletionVector(output.deletionVector, fetched)
    if (seed === undefined) return refuse(path, "the output's deletion vector was not loaded")
    // S5: a relocated row is in exactly one place; one named twice, or already deleted, means
    // the permutation is not what was written.
    const distinct = new Set(rows)
    if (distinct.size !== rows.length || rows.some((q) => seed.has(q))) {
      return refuse(path, 'a remapped row of the output is already deleted or named twice')
    }
    const merged = withDeletedRows(seed, rows)
    const descriptor = newDeletionVectorDescriptor(merged)
    newOutputs.set(path, withNewDeletionVector(output, descriptor, output.dataChange))
    created.push(
      Object.freeze({ dataFilePath: path, descriptor, bitmap: merged, createdBy: 'case5a-zorder-forward' }),
    )
  }
  const newTombstones = new Map<string, RemoveFile | null>()
  for (const src of touched) {
    const post = winner.dvUpdates.get(src)
    // A source the winner removed is already gone: the OPTIMIZE no longer removes it.
    newTombstones.set(
      src,
      post === undefined ? null : tombstoneOf(post, own.removes.get(src)!.deletionTimestamp, false),
    )
  }
  const actions: Action[] = []
  for (const a of txn.actions) {
    if (isAdd(a)) {
      const next = newOutputs.get(a.add.path)
      actions.push(next === undefined ? a : Object.freeze({ add: next }))
    } else if (isRemove(a) && newTombstones.has(a.remove.path)) {
      const next = newTombstones.get(a.remove.path)
      if (next !== null && next !== undefined) actions.push(Object.freeze({ remove: next }))
    } else actions.push(a)
  }
  const rewritten = withoutReadFiles(withActions(txn, actions), touched)
  return Object.freeze({
    txn: rewritten,
    resolvedPaths: Object.freeze([...touched]),
    reconciliation: reconciliation('case5a-zorder-forward', winner, { files: touched, rows: remappedRows }),
    newDeletionVectors: Object.freeze(created),
    refusals,
  })
}

/** Every physical row of a source live when read and not yet removed by the tombstone. */
function* remainingRows(
  removed: RoaringBitmapArray,
  gaps: RoaringBitmapArray,
  source: RelocatedSource,
): Generator<number> {
  const physical = source.outputIndex.length + gaps.cardinality
  for (let p = 0; p < physical; p++) if (!removed.has(p)) yield p
}

/** Where physical row `p` of a source landed, or undefined when it was not relocated. */
function placeOf(
  p: number,
  gaps: RoaringBitmapArray,
  source: RelocatedSource,
): { readonly output: string; readonly row: number } | undefined {
  if (gaps.has(p)) return undefined
  const rank = p - gaps.rank(p)
  if (rank < 0 || rank >= source.outputIndex.length) return undefined
  const output = source.outputs[source.outputIndex[rank] as number]
  if (output === undefined) return undefined
  return { output, row: source.outputRow[rank] as number }
}

/** Case 5a: the deletion vectors it loads, and the remap it commits. */
export const zOrderForwardPhase: RowLevelPhase = Object.freeze({
  label: 'the forward Z-order remap (Case 5a)',
  plan: planZOrderForward,
  reconcile: reconcileZOrderForward,
})
