/**
 * Case 5b (design beyond-rlc 7.5): a DML on a table with row tracking enabled loses to an
 * OPTIMIZE that relocated the files it took rows out of, in any order (Z-order, clustering, or a
 * bin-pack without Case 4 tags). The DML kept the stable ids of those rows as it scanned them
 * ({@link RemovedRowIds}); they are found again in the winner's outputs by reading only the
 * outputs' materialized row-id column, and masked there with a deletion vector. The DML's own
 * `remove`/`add` of each relocated file is dropped; its new files (updated images) stay.
 *
 * Refused, with the file-level checks then aborting, unless every rule of design 7.7 holds:
 * - P1/S1: deletion vectors writable, row tracking enabled with a materialized row-id column
 *   named, on the table the DML read (a winner that changes the metadata aborts earlier), and
 *   no identity column (edge 12);
 * - S2: the winner is a pure relocation: every file action `dataChange=false`, no path both
 *   removed and added (a backfill re-adds paths), no metadata, protocol, `cdc` or `txn`, and no
 *   domain other than `delta.rowTracking` and `delta.clustering`;
 * - S3: its outputs hold exactly the live rows of its sources (`numRecords` less the deletion
 *   vector's cardinality, on both sides: an OPTIMIZE that itself reconciled through Case 5a
 *   commits outputs that already mask the rows an earlier DML deleted, edge 11);
 * - S6: it declares `delta.rowTracking.preserved=true`;
 * - S4/S12: it removed each relocated file under the deletion vector the DML's `remove` names
 *   (the DML's read, or the post-image a Case 2 union left there);
 * - the DML took rows out of each relocated file by a deletion vector or by removing it whole,
 *   and kept their ids (all live rows for a whole removal);
 * - S8: the budgets of design 7.6 (sought ids, candidate outputs, id-column bytes, time), each a
 *   numeric conflicts option (`optimize.zorder.conflictReconciliation.reverse.max*`); a refusal
 *   past one starts with {@link CASE5B_BUDGET_EXCEEDED} and names the option;
 * - S5: every sought id is found exactly once among the candidate outputs, at a position the
 *   output's current deletion vector does not already delete (a row another transaction deleted
 *   first: never deleted twice), and no candidate has a row without a materialized id;
 * - id conservation: the DML's images carrying a preserved id are no more than the ids taken out.
 * Candidate outputs are the winner's outputs whose statistics admit the bounds of the rows sought
 * from at least one relocated file: pruning only excludes, and an id then not found aborts. A
 * masked output's new deletion vector is its current one with the found positions added.
 *
 * A DML that only read relocated files (it took no rows out of them) needs no lookup: the
 * relocation changed no logical content, so once the same rules hold for the winner the
 * relocated files are resolved and the DML commits as it is. An append-only transaction is left
 * to Case 3.
 */
import { RoaringBitmapArray } from '../dv/roaring-bitmap-array.js'
import { type Action, type AddFile, isAdd, isRemove, type RemoveFile } from '../protocol/actions.js'
import { parseOptimizeSourceComposition, permutesRows } from '../protocol/composition-tags.js'
import { tombstoneOf, withNewDeletionVector } from '../protocol/file-action-rewrites.js'
import {
  ROW_TRACKING_DOMAIN,
  ROW_TRACKING_PRESERVED_TAG,
  rowTrackingState,
} from '../protocol/row-tracking.js'
import { parseStats } from '../protocol/stats.js'
import { isFeatureActive } from '../protocol/table-features.js'
import { boundsPredicate, type RemovedRows, unionOfBounds } from './case5b-removed-rows.js'
import { newDeletionVectorDescriptor, readDeletionVector, sameDeletionVector } from './deletion-vectors.js'
import { type FetchPlan, FetchPlanBuilder, type RowIdLookup } from './fetched-facts.js'
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
import { createReadMatcher } from './read-matcher.js'
import { type NewDeletionVector, reconciliation } from './reconciliation.js'
import { withDeletedRows } from './row-remap.js'
import { type TransactionInfo, withActions, withoutReadFiles, withRemovedRowIds } from './transaction-info.js'
import type { WinningCommitSummary } from './winning-commit.js'

/** The prefix of every refusal past a budget, which the abort's message carries. */
export const CASE5B_BUDGET_EXCEEDED = 'Case 5b budget exceeded'

/** Domains a pure relocation may write (the id high-water mark, the clustering columns). */
const RELOCATION_DOMAINS: ReadonlySet<string> = new Set([ROW_TRACKING_DOMAIN, 'delta.clustering'])

/** A DML that only read relocated files: nothing to look up, the relocated files to resolve. */
interface ReadOnlySetup {
  readonly readOnly: true
  /** The relocated files the transaction read. */
  readonly read: readonly string[]
  readonly sources: ReadonlyMap<string, RemoveFile>
  readonly outputs: ReadonlyMap<string, AddFile>
}

/** What a reverse lookup needs, derived the same way by the plan and by the reconcile. */
interface Setup {
  readonly readOnly?: false
  /** The relocated files the transaction took rows out of. */
  readonly touched: readonly string[]
  readonly sources: ReadonlyMap<string, RemoveFile>
  readonly outputs: ReadonlyMap<string, AddFile>
  /** The rows sought in each touched file. */
  readonly sought: ReadonlyMap<string, RemovedRows>
  readonly candidates: readonly AddFile[]
  /** Every sought id, ascending and distinct. */
  readonly ids: BigInt64Array
  readonly lookup: RowIdLookup
}

/**
 * Everything Case 5b checks before it reads a row, as a setup or as the reason it refuses.
 * `undefined` when the phase does not apply at all (flag off, no data changed, no relocated
 * file touched or, for a transaction that is not append-only, read).
 */
function setUp(input: PlanInput): Setup | ReadOnlySetup | { refused: string; path: string } | undefined {
  const { txn, winner, flags } = input
  if (!flags.optimizeZOrderReverseReconciliation || !changesData(txn)) return undefined
  const own = indexFileActions(txn.actions)
  const touched = [...winner.removedPaths].filter((p) => own.touched.has(p))
  const read = touched.length > 0 || txn.isAppendOnly ? [] : readRelocated(input)
  if (touched.length === 0 && read.length === 0) return undefined
  const first = touched[0] ?? read[0]!
  const refuse = (refused: string, path = first) => ({ refused, path })

  const state = rowTrackingState(txn.protocol, txn.metadata)
  const column = state.materializedRowIdColumn
  if (!state.enabled || state.suspended || column === undefined) {
    return refuse('row tracking is not enabled on the table with a materialized row-id column')
  }
  // Edge 12: identity values are assigned through metadata, which concurrent writers must not share.
  if (isFeatureActive(txn.protocol, txn.metadata, 'identityColumns')) {
    return refuse('the table has identity columns')
  }
  const relocation = asPureRelocation(winner)
  if (typeof relocation === 'string') return refuse(relocation)
  if (touched.length === 0) {
    return { readOnly: true, read, sources: relocation.sources, outputs: relocation.outputs }
  }
  const removed = txn.removedRowIds
  if (removed === undefined) return refuse('this transaction kept no row ids of the rows it takes out')

  const sought = new Map<string, RemovedRows>()
  let total = 0
  for (const path of touched) {
    const rows = removed.files.get(path)
    const ownAdd = own.adds.get(path)
    const ownRemove = own.removes.get(path)
    if (rows === undefined || ownRemove === undefined || !ownRemove.dataChange) {
      return refuse('this transaction took rows out of a relocated file without keeping their ids', path)
    }
    const whole = ownAdd === undefined
    if (whole ? !rows.whole : ownAdd.deletionVector === undefined) {
      return refuse(
        'this transaction changed a relocated file other than through a deletion vector or a whole removal',
        path,
      )
    }
    if (!sameDeletionVector(relocation.sources.get(path)!.deletionVector, ownRemove.deletionVector)) {
      return refuse('the OPTIMIZE read another deletion vector of the file than this transaction', path)
    }
    sought.set(path, rows)
    total += rows.ids.length
  }
  const over = (n: number, bound: number) => bound > 0 && n > bound
  if (over(total, flags.zOrderReverseMaxRowIds)) {
    return refuse(
      `${CASE5B_BUDGET_EXCEEDED}: ${total} row ids sought, more than ${flags.zOrderReverseMaxRowIds} (maxRowIds)`,
    )
  }

  // One box for all the files (the union of their rows' bounds): a predicate per file would be
  // tighter but cost a stats evaluation per file and output.
  const bounds = boundsPredicate(unionOfBounds([...sought.values()].map((r) => r.bounds)))
  const matcher = createReadMatcher(txn.metadata)
  const candidates = [...relocation.outputs.values()].filter((o) => matcher.statsMayMatch(bounds, o))
  if (over(candidates.length, flags.zOrderReverseMaxCandidateFiles)) {
    return refuse(
      `${CASE5B_BUDGET_EXCEEDED}: ${candidates.length} OPTIMIZE outputs may hold the rows, more than ${flags.zOrderReverseMaxCandidateFiles} (maxCandidateFiles)`,
    )
  }
  let bytes = 0
  for (const o of candidates) bytes += 8 * Number(parseStats(o.stats)?.numRecords ?? 0n)
  if (over(bytes, flags.zOrderReverseMaxIdColumnBytes)) {
    return refuse(
      `${CASE5B_BUDGET_EXCEEDED}: the row-id column of those outputs holds ${bytes} bytes, more than ${flags.zOrderReverseMaxIdColumnBytes} (maxIdColumnBytes)`,
    )
  }
  const ids = unionOfIds([...sought.values()].map((r) => r.ids))
  if (ids.length !== total) return refuse('the same row id is taken out of two relocated files')
  const lookup: RowIdLookup = Object.freeze({
    key: `case5b:${winner.version}`,
    files: Object.freeze(candidates),
    rowIdColumn: column,
    ids,
    maxMillis: flags.zOrderReverseMaxMillis,
  })
  return {
    touched,
    sources: relocation.sources,
    outputs: relocation.outputs,
    sought,
    candidates,
    ids,
    lookup,
  }
}

/** A winner read as a pure relocation: its sources and outputs, or why it is not one. */
function asPureRelocation(
  winner: WinningCommitSummary,
): { sources: Map<string, RemoveFile>; outputs: Map<string, AddFile> } | string {
  if (winner.removedFiles.length === 0 || winner.addedFiles.length === 0)
    return 'the winner relocated no rows'
  const tags = winner.commitInfo?.tags
  const preserved =
    tags !== null && typeof tags === 'object'
      ? (tags as Record<string, unknown>)[ROW_TRACKING_PRESERVED_TAG]
      : undefined
  if (preserved !== 'true') {
    return `the winner does not declare ${ROW_TRACKING_PRESERVED_TAG}=true`
  }
  if (
    winner.protocol !== undefined ||
    winner.metadataUpdates.length > 0 ||
    winner.appLevelTransactions.length > 0 ||
    winner.actions.some((a) => 'cdc' in a) ||
    winner.domainMetadata.some((d) => !RELOCATION_DOMAINS.has(d.domain))
  ) {
    return 'the winner writes more than relocated rows'
  }
  const sources = new Map<string, RemoveFile>()
  let sourceRows = 0n
  for (const r of winner.removedFiles) {
    if (sources.has(r.path) || r.dataChange) return 'the winner writes more than relocated rows'
    const n = parseStats(r.stats)?.numRecords
    if (n === undefined) return 'a file the winner relocated has no row count'
    sourceRows += n - (r.deletionVector?.cardinality ?? 0n)
    sources.set(r.path, r)
  }
  const outputs = new Map<string, AddFile>()
  let outputRows = 0n
  for (const f of winner.addedFiles) {
    if (outputs.has(f.path) || sources.has(f.path) || f.dataChange)
      return 'the winner writes more than relocated rows'
    const n = parseStats(f.stats)?.numRecords
    if (n === undefined) return 'an output of the winner has no row count'
    // Edge 11: an OPTIMIZE that reconciled through Case 5a masks in its outputs the rows a DML
    // deleted meanwhile; they are not live, as they are not in the sources' live counts either.
    outputRows += n - (f.deletionVector?.cardinality ?? 0n)
    outputs.set(f.path, f)
  }
  if (sourceRows !== outputRows) {
    return 'the live rows of the winner outputs are not exactly the live rows it relocated'
  }
  return { sources, outputs }
}

/**
 * The lookup Case 5b asks the loop for: the candidate outputs' id column, searched for every id
 * the transaction took out of a relocated file. Nothing when the phase refuses before reading.
 *
 * @param input - the transaction, the winner and the flags
 * @returns the plan
 */
function planZOrderReverse(input: PlanInput): FetchPlan {
  const plan = new FetchPlanBuilder()
  const setup = setUp(input)
  if (setup === undefined || 'refused' in setup || setup.readOnly === true) return plan.build()
  plan.rowIdLookup(setup.lookup)
  // The seeds of the new deletion vectors, and the rows a hit must not already be deleted at.
  for (const o of setup.candidates) plan.deletionVector(o.deletionVector, o.path)
  return plan.build()
}

/**
 * Runs Case 5b against one winner.
 *
 * @param input - the transaction, the winner, the flags and the loaded facts
 * @returns the rewritten transaction and the resolved paths, or the unchanged transaction
 */
function reconcileZOrderReverse(input: PhaseInput): PhaseOutcome {
  const { txn, winner, fetched } = input
  const setup = setUp(input)
  if (setup === undefined) return unchanged(txn)
  if ('refused' in setup) return unchanged(txn, new Map([[setup.path, setup.refused]]))
  if (setup.readOnly === true) {
    const sources = [...setup.sources.keys()]
    return Object.freeze({
      txn: withoutReadFiles(txn, sources),
      resolvedPaths: Object.freeze([...sources, ...setup.outputs.keys()]),
      reconciliation: reconciliation('case5b-zorder-reverse', winner, { files: setup.read, rows: 0 }),
      newDeletionVectors: Object.freeze([]),
      refusals: new Map<string, string>(),
    })
  }
  const { touched, ids } = setup
  const refuse = (reason: string, path = touched[0]!): PhaseOutcome =>
    unchanged(txn, new Map([[path, reason]]))
  if (!deletionVectorsWritable(txn)) return unchanged(txn, noDeletionVectors(touched))

  const removed = txn.removedRowIds!
  let takenOut = 0
  for (const r of removed.files.values()) takenOut += r.ids.length
  if (removed.preservedImageRows > takenOut) {
    return refuse("this transaction's new files carry more preserved row ids than the rows it took out")
  }

  const answer = fetched.rowIdLookups?.get(setup.lookup.key)
  if (answer === undefined) return refuse("the OPTIMIZE outputs' row ids were not read")
  if (answer.kind === 'timed-out') {
    return refuse(
      `${CASE5B_BUDGET_EXCEEDED}: finding the row ids took more than ${answer.maxMillis} ms (maxMillis)`,
    )
  }
  if (answer.nullRows > 0) {
    return refuse(`${answer.nullRows} rows of the OPTIMIZE outputs have no materialized row id`)
  }
  // Every sought id exactly once (S5): the answer holds only sought ids, so as many distinct hits
  // as ids sought is a one-to-one match.
  const rowsByOutput = new Map<string, number[]>()
  const found = new BigInt64Array(ids.length)
  let hits = 0
  for (const o of setup.candidates) {
    const inFile = answer.files.get(o.path)
    if (inFile === undefined || inFile.positions.length === 0) continue
    if (hits + inFile.ids.length > ids.length)
      return refuse('a row id was found more than once in the OPTIMIZE outputs')
    for (const id of inFile.ids) found[hits++] = id
    rowsByOutput.set(o.path, [...inFile.positions])
  }
  if (hits !== ids.length) {
    return refuse(
      `${ids.length - hits} of the ${ids.length} row ids sought are not in the OPTIMIZE outputs that may hold them`,
    )
  }
  found.sort()
  for (let i = 0; i < hits; i++) {
    if (found[i] !== ids[i]) return refuse('a row id was found more than once in the OPTIMIZE outputs')
  }

  const own = indexFileActions(txn.actions)
  const deletionTimestamp = own.removes.get(touched[0]!)!.deletionTimestamp
  const appended: Action[] = []
  const created: NewDeletionVector[] = []
  const masked = new Map<string, RemovedRows>()
  for (const [path, rows] of rowsByOutput) {
    const output = setup.outputs.get(path)!
    const seed = readDeletionVector(output.deletionVector, fetched)
    if (seed === undefined) return refuse("an OPTIMIZE output's deletion vector was not loaded", path)
    // S5: a row the output already masks was deleted by a transaction that committed first (the
    // OPTIMIZE remapped that deletion through Case 5a); deleting it again is a same-row conflict.
    if (rows.some((q) => seed.has(q))) {
      return refuse(
        'a row this transaction takes out is already deleted in the OPTIMIZE output (a concurrent transaction deleted it first)',
        path,
      )
    }
    const bitmap = seed.isEmpty ? RoaringBitmapArray.fromSorted(rows) : withDeletedRows(seed, rows)
    const descriptor = newDeletionVectorDescriptor(bitmap)
    appended.push(Object.freeze({ remove: tombstoneOf(output, deletionTimestamp, true) }))
    appended.push(Object.freeze({ add: withNewDeletionVector(output, descriptor, true) }))
    created.push(
      Object.freeze({ dataFilePath: path, descriptor, bitmap, createdBy: 'case5b-zorder-reverse' as const }),
    )
    masked.set(path, Object.freeze({ ids: sortedIds(answer.files.get(path)!.ids), whole: false, bounds: [] }))
  }
  const relocated = new Set(touched)
  const kept = txn.actions.filter(
    (a) => !((isAdd(a) && relocated.has(a.add.path)) || (isRemove(a) && relocated.has(a.remove.path))),
  )
  const sources = [...setup.sources.keys()]
  let rewritten: TransactionInfo = withoutReadFiles(withActions(txn, [...kept, ...appended]), sources)
  // The rows now leave through the outputs' deletion vectors: a later relocation of an output is
  // looked up by the ids masked in it (S12).
  const files = new Map(removed.files)
  for (const p of touched) files.delete(p)
  for (const [p, rows] of masked) files.set(p, rows)
  rewritten = withRemovedRowIds(
    rewritten,
    Object.freeze({ files, preservedImageRows: removed.preservedImageRows }),
  )
  return Object.freeze({
    txn: rewritten,
    // A relocation changes no logical content: the transaction's reads and writes do not depend on it.
    resolvedPaths: Object.freeze([...sources, ...setup.outputs.keys()]),
    reconciliation: reconciliation('case5b-zorder-reverse', winner, { files: touched, rows: ids.length }),
    newDeletionVectors: Object.freeze(created),
    refusals: new Map<string, string>(),
  })
}

/**
 * Whether Case 5b is the phase that speaks for this pair: its flag is on, the transaction changes
 * data, and the winner relocated rows without recording where each source's rows went as offsets
 * (it permuted them, or wrote no composition): Case 4b cannot apply, so Case 5b's reason is the
 * one an abort should carry.
 *
 * @param input - the transaction, the winner and the flags
 * @returns true when a refusal of Case 5b explains the conflict best
 */
export function zOrderReverseSpeaksFor(input: PlanInput): boolean {
  const { txn, winner, flags } = input
  if (!flags.optimizeZOrderReverseReconciliation || !changesData(txn)) return false
  if (winner.removedFiles.length === 0 || winner.addedFiles.length === 0) return false
  if ([...winner.addedFiles, ...winner.removedFiles].some((f) => f.dataChange)) return false
  if (permutesRows(winner.commitInfo)) return true
  const outputs = new Set(winner.addedFiles.map((f) => f.path))
  return winner.removedFiles.every((r) => parseOptimizeSourceComposition(r, outputs) === undefined)
}

/** The files the winner removed that the transaction read (all of them under a whole-table read). */
function readRelocated(input: PlanInput): string[] {
  const { txn, winner } = input
  return [...winner.removedPaths].filter((p) => txn.readWholeTable || txn.readFiles.has(p))
}

/** Case 5b: the row-id lookup it loads, and the masking it commits. */
export const zOrderReversePhase: RowLevelPhase = Object.freeze({
  label: 'the reverse relocation remap by row id (Case 5b)',
  plan: planZOrderReverse,
  reconcile: reconcileZOrderReverse,
})

/** The ascending union of ascending id arrays (duplicates kept once). */
function unionOfIds(parts: readonly BigInt64Array[]): BigInt64Array {
  let n = 0
  for (const p of parts) n += p.length
  const all = new BigInt64Array(n)
  let k = 0
  for (const p of parts) {
    all.set(p, k)
    k += p.length
  }
  all.sort()
  let w = 0
  for (let i = 0; i < all.length; i++) if (i === 0 || all[i] !== all[w - 1]) all[w++] = all[i]!
  return all.slice(0, w)
}

function sortedIds(ids: readonly bigint[]): BigInt64Array {
  const out = BigInt64Array.from(ids)
  out.sort()
  return out
}
