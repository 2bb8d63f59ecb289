/**
 * Case 4b (rlc-spec section 9, design decision 1): a DML that deleted rows through deletion
 * vectors loses to a compaction OPTIMIZE that rewrote the files it touched. The DML's new
 * deletions are remapped onto the winner's outputs, through the winner's composition tags; its
 * own `remove`/`add` of each compacted source is dropped, and each affected output is removed
 * and re-added with a deletion vector.
 *
 * The winner must be a pure compaction: every `remove` carries a usable composition tag, every
 * output is referenced by some source, and nothing it writes changes data. Refused, with the
 * file-level checks then aborting, when
 * - the transaction touched a compacted source other than by a deletion-vector update or a
 *   whole removal (`dataChange=true`, no re-add): remapping only the others would resurrect rows
 *   of that one (guard "H1"); a whole removal deletes the source's remaining rows in the output;
 * - the deletion vector the compaction's tombstone removes is not the one the transaction read
 *   (design decision 10), or the transaction's own deletion vector does not contain it; after a
 *   forward remap that tombstone holds a winner's deletion vector, and the rows are ranked
 *   against the read-time one named by `remappedCompactionInfo`;
 * - a newly deleted row was already gone from the output, or falls outside the source's run.
 * Compacted sources the transaction touched but deleted nothing new from are dropped as a no-op
 * (design decision 6).
 */
import type { RoaringBitmapArray } from '../dv/roaring-bitmap-array.js'
import { type Action, type AddFile, isAdd, isRemove, type RemoveFile } from '../protocol/actions.js'
import {
  parseOptimizeSourceComposition,
  permutesRows,
  type SourceComposition,
} from '../protocol/composition-tags.js'
import { tombstoneOf, withNewDeletionVector } from '../protocol/file-action-rewrites.js'
import { appendAll } from '../util/arrays.js'
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
  unchanged,
} from './phase.js'
import { type NewDeletionVector, reconciliation } from './reconciliation.js'
import { remapToOutput, remapWholeSource, runFitsOutput, withDeletedRows } from './row-remap.js'
import { withActions, withoutReadFiles } from './transaction-info.js'
import type { WinningCommitSummary } from './winning-commit.js'

/** A winner read as a pure compaction: each removed source's run in its output. */
interface PureCompaction {
  readonly runs: ReadonlyMap<string, { readonly composition: SourceComposition; readonly output: AddFile }>
  readonly sources: ReadonlyMap<string, RemoveFile>
  readonly outputs: ReadonlyMap<string, AddFile>
}

/**
 * Reads a winner as a pure compaction (rlc-spec 9.1).
 *
 * @param winner - the winning commit
 * @returns the compaction, or a reason why the winner is not one
 */
function asPureCompaction(winner: WinningCommitSummary): PureCompaction | string {
  if (winner.removedFiles.length === 0 || winner.addedFiles.length === 0)
    return 'the winner is not a compaction'
  const outputs = new Map<string, AddFile>()
  for (const f of winner.addedFiles) {
    if (outputs.has(f.path) || f.dataChange) return 'the winner writes more than relocated rows'
    outputs.set(f.path, f)
  }
  const outputPaths = new Set(outputs.keys())
  const sources = new Map<string, RemoveFile>()
  const runs = new Map<string, { composition: SourceComposition; output: AddFile }>()
  const referenced = new Set<string>()
  for (const r of winner.removedFiles) {
    if (sources.has(r.path) || r.dataChange) return 'the winner writes more than relocated rows'
    const composition = parseOptimizeSourceComposition(r, outputPaths)
    if (composition === undefined) return 'the compaction recorded no usable composition for a source'
    sources.set(r.path, r)
    runs.set(r.path, { composition, output: outputs.get(composition.outputPath)! })
    referenced.add(composition.outputPath)
  }
  if (referenced.size !== outputs.size) return 'the winner adds files no source was compacted into'
  // S11: offsets on a permuting rewrite, whoever wrote them, never say where its rows went.
  if (permutesRows(winner.commitInfo)) {
    return 'the winner permuted rows (Z-order or clustering), so its composition offsets do not locate them'
  }
  return { runs, sources, outputs }
}

/**
 * The compacted sources a reverse remap would look at: removed by the winner and touched (added
 * or removed) by the transaction.
 *
 * @param input - the transaction and the winner
 * @returns the source paths
 */
function reverseRemapTouched(input: Pick<PhaseInput, 'txn' | 'winner'>): readonly string[] {
  const own = indexFileActions(input.txn.actions)
  return [...input.winner.removedPaths].filter((p) => own.touched.has(p))
}

/**
 * The deletion vectors Case 4b loads when it touches a compacted source: for each such source,
 * what the compaction's tombstone removes and what it read (the gaps of the run), what the
 * transaction read and what it writes; and every output's current one (the seeds of their new
 * deletion vectors).
 *
 * @param input - the transaction, the winner and the flags
 * @returns the plan
 */
function planReverseRemap(input: PlanInput): FetchPlan {
  const plan = new FetchPlanBuilder()
  if (!input.flags.optimizeReverseReconciliation) return plan.build()
  const touched = reverseRemapTouched(input)
  if (touched.length === 0) return plan.build()
  const { winner } = input
  const outputs = new Set(winner.addedFiles.map((f) => f.path))
  for (const r of winner.removedFiles) {
    if (!touched.includes(r.path)) continue
    plan.deletionVector(r.deletionVector, r.path)
    plan.deletionVector(parseOptimizeSourceComposition(r, outputs)?.readDeletionVector, r.path)
  }
  const own = indexFileActions(input.txn.actions)
  for (const path of touched) {
    plan.deletionVector(own.removes.get(path)?.deletionVector, path)
    plan.deletionVector(own.adds.get(path)?.deletionVector, path)
  }
  for (const f of winner.addedFiles) plan.deletionVector(f.deletionVector, f.path)
  return plan.build()
}

/**
 * Runs Case 4b against one winner.
 *
 * @param input - the transaction, the winner, the flags and the loaded deletion vectors
 * @returns the rewritten transaction and the resolved paths, or the unchanged transaction
 */
function reconcileReverseRemap(input: PhaseInput): PhaseOutcome {
  const { txn, winner, fetched } = input
  if (!input.flags.optimizeReverseReconciliation) return unchanged(txn)
  // A transaction that changes no data (a compaction itself) deleted no rows to remap; Case 4a
  // is the phase that speaks for it.
  if (!changesData(txn)) return unchanged(txn)
  const touched = reverseRemapTouched(input)
  if (touched.length === 0) return unchanged(txn)
  if (!deletionVectorsWritable(txn)) return unchanged(txn, noDeletionVectors(touched))

  const refusals = new Map<string, string>()
  const refuse = (path: string, reason: string): PhaseOutcome => {
    refusals.set(path, reason)
    return unchanged(txn, refusals)
  }
  const compaction = asPureCompaction(winner)
  if (typeof compaction === 'string') return refuse(touched[0]!, compaction)
  const own = indexFileActions(txn.actions)

  const rowsByOutput = new Map<string, number[]>()
  let remappedRows = 0
  for (const src of touched) {
    const ownAdd = own.adds.get(src)
    const ownRemove = own.removes.get(src)
    // Removed whole: every row the transaction saw live in the source leaves the table.
    const whole = ownAdd === undefined && ownRemove?.dataChange === true
    if ((!whole && ownAdd?.deletionVector === undefined) || ownRemove === undefined) {
      return refuse(
        src,
        'this transaction changed a compacted source other than through a deletion vector or a whole removal',
      )
    }
    const compacted = compaction.sources.get(src)!
    const { composition, output } = compaction.runs.get(src)!
    if (!sameDeletionVector(compacted.deletionVector, ownRemove.deletionVector)) {
      return refuse(src, 'the compaction read another deletion vector of the source than this transaction')
    }
    // `dropped`: the rows the output does not hold live (the tombstone's DV, which a forward remap
    // may have grown past the read-time DV). `gaps`: the rows the compaction did not write.
    const dropped = readDeletionVector(compacted.deletionVector, fetched)
    const gaps = readDeletionVector(composition.readDeletionVector, fetched)
    const read = readDeletionVector(ownRemove.deletionVector, fetched)
    if (dropped === undefined || gaps === undefined || read === undefined) {
      return refuse(src, 'a deletion vector of the source was not loaded')
    }
    if (!gaps.isSubsetOf(dropped)) {
      return refuse(src, "the compaction's tombstone does not contain the deletion vector it read")
    }
    if (!runFitsOutput(composition, output)) return refuse(src, "the source's run overflows its output")
    let rows: number[] | undefined
    if (whole) {
      rows = remapWholeSource(dropped, gaps, composition)
      if (rows === undefined) return refuse(src, "the source's run disagrees with its physical row count")
    } else {
      const mine = readDeletionVector(ownAdd!.deletionVector, fetched)
      if (mine === undefined) return refuse(src, 'a deletion vector of the source was not loaded')
      if (!read.isSubsetOf(mine))
        return refuse(src, "this transaction's deletion vector does not contain its read-time one")
      rows = remapFresh(mine, read, dropped, gaps, composition)
      if (rows === undefined)
        return refuse(src, 'a deleted row is not a live row of the source in the output')
    }
    const acc = rowsByOutput.get(output.path) ?? []
    appendAll(acc, rows)
    rowsByOutput.set(output.path, acc)
    remappedRows += rows.length
  }

  const deletionTimestamp = own.removes.get(touched[0]!)!.deletionTimestamp
  const appended: Action[] = []
  const created: NewDeletionVector[] = []
  for (const [path, rows] of rowsByOutput) {
    if (rows.length === 0) continue
    const output = compaction.outputs.get(path)!
    const seed = readDeletionVector(output.deletionVector, fetched)
    if (seed === undefined) return refuse(path, "the output's deletion vector was not loaded")
    const merged = withDeletedRows(seed, rows)
    const descriptor = newDeletionVectorDescriptor(merged)
    appended.push(Object.freeze({ remove: tombstoneOf(output, deletionTimestamp, true) }))
    appended.push(Object.freeze({ add: withNewDeletionVector(output, descriptor, true) }))
    created.push(
      Object.freeze({ dataFilePath: path, descriptor, bitmap: merged, createdBy: 'case4b-reverse-remap' }),
    )
  }
  const remapped = new Set(touched)
  const kept = txn.actions.filter(
    (a) => !((isAdd(a) && remapped.has(a.add.path)) || (isRemove(a) && remapped.has(a.remove.path))),
  )
  const compacted = [...compaction.sources.keys()]
  const rewritten = withoutReadFiles(withActions(txn, [...kept, ...appended]), compacted)
  return Object.freeze({
    txn: rewritten,
    // A pure compaction relocates rows: the transaction's reads and writes do not depend on it.
    resolvedPaths: Object.freeze([...compacted, ...compaction.outputs.keys()]),
    reconciliation: reconciliation('case4b-reverse-remap', winner, { files: touched, rows: remappedRows }),
    newDeletionVectors: Object.freeze(created),
    refusals,
  })
}

/** Case 4b: the deletion vectors it loads, and the remap it commits. */
export const reverseRemapPhase: RowLevelPhase = Object.freeze({
  label: 'the reverse compaction remap (Case 4b)',
  plan: planReverseRemap,
  reconcile: reconcileReverseRemap,
})

/** Maps the transaction's new deletions of one source onto the output, or undefined. */
function remapFresh(
  mine: RoaringBitmapArray,
  read: RoaringBitmapArray,
  dropped: RoaringBitmapArray,
  gaps: RoaringBitmapArray,
  run: SourceComposition,
): number[] | undefined {
  const fresh = mine.difference(read)
  try {
    // A row the output no longer holds live cannot be deleted again in it.
    if (fresh.intersects(dropped)) return undefined
    return remapToOutput(fresh, gaps, run)
  } finally {
    fresh.dispose()
  }
}
