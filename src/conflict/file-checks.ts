/**
 * The file-level checks (rlc-spec 2.2 steps 10 to 12, with the hooks of section 3.1): winner
 * adds the transaction should have read, winner removes of files it read, winner removes of files
 * it removes too. Each consults the set of paths reconciled at row level for this winner.
 */
import {
  ConcurrentAppendError,
  ConcurrentDeleteDeleteError,
  ConcurrentDeleteReadError,
  type ConcurrentModificationError,
} from '../errors/index.js'
import { type AddFile, isRemove } from '../protocol/actions.js'
import {
  dataSkippingApplies,
  deleteReadRefinementApplies,
  deleteReadRefinementEnabled,
  filterFilesByStats,
  removedRowsRuledOut,
  valueExactRulesOut,
  verifiedReAdds,
} from './case1-data-skipping.js'
import { excludeNoDataChangeAdds, excludeNoDataChangeRemoves } from './case3-no-data-change.js'
import type { FetchedFacts } from './fetched-facts.js'
import type { ConflictFlags } from './flags.js'
import type { ReadMatcher } from './read-matcher.js'
import { type Reconciliation, type ReconciliationKind, reconciliation } from './reconciliation.js'
import { context } from './table-state-checks.js'
import type { TransactionInfo } from './transaction-info.js'
import { isolationCandidates, type WinningCommitSummary } from './winning-commit.js'

/** What the file-level checks read. */
export interface FileCheckContext {
  readonly txn: TransactionInfo
  readonly winner: WinningCommitSummary
  readonly flags: ConflictFlags
  readonly fetched: FetchedFacts
  readonly matcher: ReadMatcher
  /** Paths reconciled at row level against this winner. */
  readonly resolved: ReadonlySet<string>
  /** Why a reconciliation refused a path, to explain the conflict it leaves. */
  readonly refusals: ReadonlyMap<string, string>
}

/** A file-level check's answer: the conflict, if any, and the aborts reconciliations averted. */
export interface FileCheckResult {
  readonly error: ConcurrentModificationError | undefined
  readonly reconciliations: readonly Reconciliation[]
}

/**
 * The added-files check: does the winner add a file whose rows the transaction should have read?
 *
 * Candidates follow the isolation level (none under SnapshotIsolation; only non-blind-append adds
 * under WriteSerializable without a metadata change; every add otherwise). Case 3 then drops
 * `dataChange = false` adds, the row-level reconciliations drop the paths they resolved, and 1b
 * drops deletion-vector re-adds proven to carry no new row. A blind-append transaction never
 * conflicts here. Case 1 prunes the rest by stats, then by actual rows. Under a whole-table read
 * or on an unpartitioned table any remaining candidate conflicts; otherwise a candidate conflicts
 * when some read's partition predicate may match its partition values.
 *
 * @param ctx - the transaction, the winner and the per-winner state
 * @returns a ConcurrentAppendError naming the first conflicting file, or none
 */
export function checkAddedFilesThatShouldHaveBeenRead(ctx: FileCheckContext): FileCheckResult {
  const { txn, winner, flags } = ctx
  const reconciled: Reconciliation[] = []
  const byIsolation = isolationCandidates(txn, winner)
  const case3 = excludeNoDataChangeAdds(byIsolation, flags)
  let candidates = case3.kept.filter((f) => !ctx.resolved.has(f.path))
  let reAdded: readonly AddFile[] = []
  if (deleteReadRefinementEnabled(flags) && candidates.length > 0) {
    const verified = verifiedReAdds(winner, ctx.fetched)
    reAdded = candidates.filter((f) => verified.has(f.path))
    candidates = candidates.filter((f) => !verified.has(f.path))
  }
  if (txn.isBlindAppend) return { error: undefined, reconciliations: reconciled }

  let survivors: readonly AddFile[] = candidates
  let skipped: readonly AddFile[] = []
  if (dataSkippingApplies(txn, flags)) {
    const tier1 = filterFilesByStats(candidates, txn, ctx.matcher)
    survivors = tier1.kept
    skipped = tier1.dropped
    if (valueExactRulesOut(survivors, { txn, winner, flags }, ctx.matcher, ctx.fetched)) {
      skipped = [...skipped, ...survivors]
      survivors = []
    }
  }

  const match = firstFileMatchingReads(survivors, ctx)
  if (match !== undefined) {
    const error = new ConcurrentAppendError(
      context(winner, 'checkAddedFilesThatShouldHaveBeenRead', {
        file: match.path,
        reconcileRefused: refusalFor(ctx, match.path),
      }),
    )
    return { error, reconciliations: reconciled }
  }
  const averted: readonly [ReconciliationKind, readonly AddFile[]][] = [
    ['case1-data-skipping', skipped],
    ['case1b-delete-read', reAdded],
    ['case3-no-data-change', case3.excluded.filter((f) => !ctx.resolved.has(f.path))],
  ]
  for (const [kind, files] of averted) {
    if (firstFileMatchingReads(files, ctx) !== undefined) {
      reconciled.push(reconciliation(kind, winner, { files: files.map((f) => f.path) }))
    }
  }
  return { error: undefined, reconciliations: reconciled }
}

/**
 * The removed-vs-read check: did the winner remove a file the transaction read, or remove
 * anything while the transaction read the whole table? Resolved paths are skipped; Case 3 drops
 * `dataChange = false` removes for an append-only transaction; 1b ignores removed files whose
 * actually removed rows provably match no read (never under a whole-table read).
 *
 * @param ctx - the transaction, the winner and the per-winner state
 * @returns a ConcurrentDeleteReadError naming the file, or none
 */
export function checkDeletedFilesAgainstReadFiles(ctx: FileCheckContext): FileCheckResult {
  const { txn, winner, flags } = ctx
  const reconciled: Reconciliation[] = []
  const removes = winner.removedFiles.filter((r) => !ctx.resolved.has(r.path))
  const case3 = excludeNoDataChangeRemoves(removes, txn, flags)
  let overlap = case3.kept.filter((r) => txn.readFiles.has(r.path))
  if (
    overlap.length > 0 &&
    deleteReadRefinementApplies(txn, flags) &&
    removedRowsRuledOut(overlap, txn, winner, ctx.matcher, ctx.fetched)
  ) {
    reconciled.push(reconciliation('case1b-delete-read', winner, { files: overlap.map((r) => r.path) }))
    overlap = []
  }
  const conflictOn = (file: string | undefined): FileCheckResult => ({
    error: new ConcurrentDeleteReadError(
      context(winner, 'checkDeletedFilesAgainstReadFiles', { file, reconcileRefused: refusalFor(ctx, file) }),
    ),
    reconciliations: reconciled,
  })
  if (overlap.length > 0) return conflictOn(overlap[0]!.path)
  if (txn.readWholeTable && case3.kept.length > 0) return conflictOn(case3.kept[0]!.path)
  const averted = case3.excluded.filter((r) => txn.readWholeTable || txn.readFiles.has(r.path))
  if (averted.length > 0) {
    reconciled.push(reconciliation('case3-no-data-change', winner, { files: averted.map((r) => r.path) }))
  }
  return { error: undefined, reconciliations: reconciled }
}

/**
 * The removed-vs-removed check: did the winner remove a path the transaction removes too?
 * Resolved paths are skipped.
 *
 * @param ctx - the transaction, the winner and the per-winner state
 * @returns a ConcurrentDeleteDeleteError naming the file, or none
 */
export function checkDeletedFilesAgainstDeletedFiles(ctx: FileCheckContext): FileCheckResult {
  const { txn, winner } = ctx
  const own = new Set<string>()
  for (const a of txn.actions) if (isRemove(a)) own.add(a.remove.path)
  for (const r of winner.removedFiles) {
    if (ctx.resolved.has(r.path) || !own.has(r.path)) continue
    return {
      error: new ConcurrentDeleteDeleteError(
        context(winner, 'checkDeletedFilesAgainstDeletedFiles', {
          file: r.path,
          reconcileRefused: refusalFor(ctx, r.path),
        }),
      ),
      reconciliations: [],
    }
  }
  return { error: undefined, reconciliations: [] }
}

// === Internals ===

/**
 * Why a reconciliation did not resolve the conflict on `file`: the refusal recorded for that
 * path, else the first refusal recorded against this winner (a phase that refused as a whole
 * leaves the conflict on whichever file the checks reach first).
 */
function refusalFor(ctx: FileCheckContext, file: string | undefined): string | undefined {
  if (file !== undefined) {
    const own = ctx.refusals.get(file)
    if (own !== undefined) return own
  }
  return ctx.refusals.values().next().value
}

/**
 * The first file among `files` that some read of the transaction may have selected.
 *
 * @param files - candidate files
 * @param ctx - the transaction and its matcher
 * @returns the file, or undefined
 */
export function firstFileMatchingReads(
  files: readonly AddFile[],
  ctx: Pick<FileCheckContext, 'txn' | 'matcher'>,
): AddFile | undefined {
  if (files.length === 0) return undefined
  if (ctx.txn.readWholeTable || !ctx.matcher.partitioned) return files[0]
  for (const read of ctx.txn.readPredicates) {
    const hit = files.find((f) => ctx.matcher.partitionMayMatch(read, f))
    if (hit !== undefined) return hit
  }
  return undefined
}
