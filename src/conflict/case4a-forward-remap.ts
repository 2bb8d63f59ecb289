/**
 * Case 4a (rlc-spec section 8): a compaction OPTIMIZE loses to a DML that deleted rows of some
 * of its sources through deletion vectors. The winner's new deletions on each such source are
 * remapped onto the OPTIMIZE output, through the composition tags on the OPTIMIZE's own source
 * tombstones, and the tombstones are re-pointed at the winner's post-images. A source the winner
 * removed whole (every live row deleted or rewritten elsewhere, `dataChange=true`, not re-added)
 * has all its remaining rows deleted in the output; its tombstone stays as it is.
 *
 * Successive winners on the same source compose (N-way): a re-pointed tombstone keeps the
 * source's run and the deletion vector the compaction read in `remappedCompactionInfo`, so the
 * next winner's pre-image is checked against the re-pointed tombstone while the rows are still
 * ranked against the read-time gaps. (This replaces design decision 4, which aborted the second
 * winner by rule: under continuous DML an OPTIMIZE could then never commit.)
 *
 * The decision is all or nothing over the shared sources. Refused, with the file-level checks then
 * aborting, when
 * - a source the winner updated carries no usable composition tag (ZORDER, repartition, missing
 *   stats); a source the winner removed without deleting its rows (a `dataChange=false` removal
 *   by another compaction, or a re-add) is left to the file-level checks, with that reason
 *   recorded;
 * - the winner's pre-image of the source is not the deletion vector the tombstone removes (the
 *   one the compaction read, or the previous winner's after a re-point), or its post-image does
 *   not contain it (design decision 10);
 * - the tombstone's deletion vector does not contain the one the compaction read;
 * - a row falls outside the source's run, or a run overflows its output.
 * Shared sources with no new deletion reconcile as a no-op: only the tombstones are re-pointed
 * (design decision 6).
 */
import { type Action, type AddFile, isAdd, isRemove, type RemoveFile } from '../protocol/actions.js'
import {
  parseOptimizeSourceComposition,
  type SourceComposition,
  withRemappedComposition,
} from '../protocol/composition-tags.js'
import { tombstoneOf, withNewDeletionVector } from '../protocol/file-action-rewrites.js'
import { appendAll } from '../util/arrays.js'
import { newDeletionVectorDescriptor, readDeletionVector, sameDeletionVector } from './deletion-vectors.js'
import { type FetchPlan, FetchPlanBuilder } from './fetched-facts.js'
import { type FileActionIndex, indexFileActions } from './file-actions.js'
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
import { remapToOutput, remapWholeSource, runFitsOutput, withDeletedRows } from './row-remap.js'
import { withActions, withoutReadFiles } from './transaction-info.js'

/** A compacted source of the losing OPTIMIZE and where its rows went. */
interface CompactedSource {
  readonly composition: SourceComposition
  readonly output: AddFile
}

/**
 * The sources of the transaction's own compaction that carry a usable composition tag.
 *
 * @param own - the transaction's file actions by path
 * @returns source path to its composition and output
 */
function ownCompactedSources(own: FileActionIndex): ReadonlyMap<string, CompactedSource> {
  const outputs = new Set(own.adds.keys())
  const out = new Map<string, CompactedSource>()
  for (const [path, remove] of own.removes) {
    const composition = parseOptimizeSourceComposition(remove, outputs)
    if (composition !== undefined)
      out.set(path, { composition, output: own.adds.get(composition.outputPath)! })
  }
  return out
}

/**
 * The sources a forward remap would look at: updated through a deletion vector or removed whole
 * by the winner, and removed by the transaction.
 *
 * @param input - the transaction and the winner
 * @returns the source paths
 */
function forwardRemapTouched(input: Pick<PhaseInput, 'txn' | 'winner'>): readonly string[] {
  const own = indexFileActions(input.txn.actions)
  return [...input.winner.dvUpdates.keys(), ...input.winner.wholeRemovals.keys()].filter(
    (p) => own.removes.has(p) || own.ambiguous.has(p),
  )
}

/**
 * The deletion vectors Case 4a loads, for each touched source: what the compaction's tombstone
 * removes, what the winner left, what the compaction read (the gaps of the run), and the output's
 * current one (the seed of its new deletion vector).
 *
 * @param input - the transaction, the winner and the flags
 * @returns the plan
 */
function planForwardRemap(input: PlanInput): FetchPlan {
  const plan = new FetchPlanBuilder()
  if (!input.flags.optimizeReconciliation || leftToCase5a(input)) return plan.build()
  const own = indexFileActions(input.txn.actions)
  const sources = ownCompactedSources(own)
  for (const path of forwardRemapTouched(input)) {
    plan.deletionVector(own.removes.get(path)?.deletionVector, path)
    plan.deletionVector(input.winner.dvUpdates.get(path)?.deletionVector, path)
    const source = sources.get(path)
    if (source !== undefined) {
      plan.deletionVector(source.composition.readDeletionVector, path)
      plan.deletionVector(source.output.deletionVector, source.output.path)
    }
  }
  return plan.build()
}

/**
 * A permuting OPTIMIZE (Z-order) has no contiguous runs to remap (S11): with Case 5a on, it is
 * Case 5a's to reconcile or to refuse with its own reason.
 */
function leftToCase5a(input: PlanInput): boolean {
  return input.txn.relocation !== undefined && input.flags.optimizeZOrderReconciliation
}

/**
 * Runs Case 4a against one winner.
 *
 * @param input - the transaction, the winner, the flags and the loaded deletion vectors
 * @returns the rewritten transaction and the remapped sources, or the unchanged transaction
 */
function reconcileForwardRemap(input: PhaseInput): PhaseOutcome {
  const { txn, winner, fetched } = input
  if (!input.flags.optimizeReconciliation || leftToCase5a(input)) return unchanged(txn)
  const own = indexFileActions(txn.actions)
  const compaction = !changesData(txn)
  const refusals = new Map<string, string>()
  if (compaction) refuseRemovedWithoutDeletion(winner, own, refusals)
  const touched = forwardRemapTouched(input)
  if (touched.length === 0) return unchanged(txn, refusals)
  if (!deletionVectorsWritable(txn)) return unchanged(txn, noDeletionVectors(touched))

  // The decision is all or nothing: every source it leaves to the file-level checks carries the
  // reason, whichever of them the checks report first.
  const refuse = refuseAll(txn, touched, refusals)
  if (!compaction) return refuse(touched[0]!, 'this transaction is not a compaction (it changes data)')
  const sources = ownCompactedSources(own)
  for (const src of touched) {
    if (!sources.has(src)) return refuse(src, 'the compaction recorded no usable composition for this source')
  }

  const rowsByOutput = new Map<string, number[]>()
  let remappedRows = 0
  for (const src of touched) {
    const ownRemove = own.removes.get(src)!
    const { composition, output } = sources.get(src)!
    const whole = winner.wholeRemovals.get(src)
    const preImage = whole ?? winner.dvUpdatePreImages.get(src)!
    if (!sameDeletionVector(preImage.deletionVector, ownRemove.deletionVector)) {
      return refuse(
        src,
        "the winner's pre-image of the source is not the deletion vector the compaction's tombstone removes",
      )
    }
    // `removed` is what the tombstone removes: the read-time DV, or the previous winner's after a
    // re-point. `gaps` is the read-time DV, the rows the compaction did not write.
    const removed = readDeletionVector(ownRemove.deletionVector, fetched)
    const gaps = readDeletionVector(composition.readDeletionVector, fetched)
    if (removed === undefined || gaps === undefined)
      return refuse(src, 'a deletion vector of the source was not loaded')
    if (!gaps.isSubsetOf(removed)) {
      return refuse(src, "the tombstone's deletion vector does not contain the one the compaction read")
    }
    if (!runFitsOutput(composition, output)) return refuse(src, "the source's run overflows its output")
    let rows: number[] | undefined
    if (whole !== undefined) {
      // Every row still live in the source left the table with the winner.
      rows = remapWholeSource(removed, gaps, composition)
      if (rows === undefined) return refuse(src, "the source's run disagrees with its physical row count")
    } else {
      const theirs = readDeletionVector(winner.dvUpdates.get(src)!.deletionVector, fetched)
      if (theirs === undefined) return refuse(src, 'a deletion vector of the source was not loaded')
      if (!removed.isSubsetOf(theirs)) {
        return refuse(
          src,
          "the winner's deletion vector does not contain the read-time one (rows were restored)",
        )
      }
      const fresh = theirs.difference(removed)
      rows = remapToOutput(fresh, gaps, composition)
      fresh.dispose()
      if (rows === undefined) return refuse(src, "a deleted row falls outside the source's run in the output")
    }
    const acc = rowsByOutput.get(output.path) ?? []
    appendAll(acc, rows)
    rowsByOutput.set(output.path, acc)
    remappedRows += rows.length
  }

  const newOutputs = new Map<string, AddFile>()
  const created: NewDeletionVector[] = []
  for (const [path, rows] of rowsByOutput) {
    if (rows.length === 0) continue
    const output = own.adds.get(path)!
    const seed = readDeletionVector(output.deletionVector, fetched)
    if (seed === undefined) return refuse(path, "the output's deletion vector was not loaded")
    const merged = withDeletedRows(seed, rows)
    const descriptor = newDeletionVectorDescriptor(merged)
    newOutputs.set(path, withNewDeletionVector(output, descriptor, output.dataChange))
    created.push(
      Object.freeze({ dataFilePath: path, descriptor, bitmap: merged, createdBy: 'case4a-forward-remap' }),
    )
  }
  const newTombstones = new Map<string, RemoveFile>()
  for (const src of touched) {
    // A source the winner removed whole keeps its tombstone: it removes what the winner removed.
    const post = winner.dvUpdates.get(src)
    if (post === undefined) continue
    // The tombstone must remove the live (path, DV) the winner left. Its DV is then no longer the
    // read-time one, so the run moves to the tag that names the read-time DV.
    const tombstone = tombstoneOf(post, own.removes.get(src)!.deletionTimestamp, false)
    newTombstones.set(src, withRemappedComposition(tombstone, sources.get(src)!.composition))
  }
  const actions = txn.actions.map((a): Action => {
    if (isAdd(a)) {
      const next = newOutputs.get(a.add.path)
      return next === undefined ? a : Object.freeze({ add: next })
    }
    if (isRemove(a)) {
      const next = newTombstones.get(a.remove.path)
      return next === undefined ? a : Object.freeze({ remove: next })
    }
    return a
  })
  const rewritten = withoutReadFiles(withActions(txn, actions), touched)
  return Object.freeze({
    txn: rewritten,
    resolvedPaths: Object.freeze([...touched]),
    reconciliation: reconciliation('case4a-forward-remap', winner, { files: touched, rows: remappedRows }),
    newDeletionVectors: Object.freeze(created),
    refusals,
  })
}

/** Case 4a: the deletion vectors it loads, and the remap it commits. */
export const forwardRemapPhase: RowLevelPhase = Object.freeze({
  label: 'the forward compaction remap (Case 4a)',
  plan: planForwardRemap,
  reconcile: reconcileForwardRemap,
})
