/**
 * The conflict checker: one losing transaction against one winning commit, in Delta's order
 * (rlc-spec 2.2 and 3.1): Delta's file-level checks, and on top of them the row-level
 * reconciliations, each behind its flag. Conflicts are returned as values; the commit loop
 * throws them at its boundary. A reconciliation only turns an abort into a commit when the
 * disjointness is proven; on any doubt the file-level answer stands.
 *
 * The module is pure: no I/O, no `node:*` import, no asynchronous code. The commit loop plans
 * what to load (`planConflictFetches`), loads it through the engine, and checks the winners one
 * at a time in version order, passing the transaction returned for winner v as the input for
 * winner v+1; the set of paths reconciled at row level lives only for one winner, and the read
 * files carried to winner v+1 are every file the original read depends on as winner v left them
 * (`carried-read-files.ts`), whatever a phase pruned for its own winner.
 *
 * References: design/rlc-spec.md (rules), design/README.md section 3 (decisions), Delta's
 * `ConflictChecker`.
 */
import { deletionVectorsReady } from '../dv/initialization.js'
import { type ConcurrentModificationError, InternalError } from '../errors/index.js'
import { highWaterMarkOf, rebaseRowIds } from '../protocol/row-tracking-ids.js'
import { appendAll } from '../util/arrays.js'
import { readFilesAfterWinner } from './carried-read-files.js'
import { dvUnionPhase } from './case2-dv-union.js'
import { forwardRemapPhase } from './case4a-forward-remap.js'
import { reverseRemapPhase } from './case4b-reverse-remap.js'
import { zOrderForwardPhase } from './case5a-zorder-forward.js'
import { zOrderReversePhase, zOrderReverseSpeaksFor } from './case5b-zorder-reverse.js'
import { mergeRowsPhase } from './case6-merge-rows.js'
import type { FetchedFacts } from './fetched-facts.js'
import {
  checkAddedFilesThatShouldHaveBeenRead,
  checkDeletedFilesAgainstDeletedFiles,
  checkDeletedFilesAgainstReadFiles,
  type FileCheckContext,
} from './file-checks.js'
import type { ConflictFlags } from './flags.js'
import { failSafe, type PhaseInput, type RowLevelPhase } from './phase.js'
import { createReadMatcher } from './read-matcher.js'
import type { NewDeletionVector, Reconciliation } from './reconciliation.js'
import {
  type CheckOutcome,
  checkAppTransactionIds,
  checkDomainMetadata,
  checkNoMetadataUpdates,
  checkProtocolCompatibility,
} from './table-state-checks.js'
import { type TransactionInfo, withReadFiles, withRowIdsRebased } from './transaction-info.js'
import type { WinningCommitSummary } from './winning-commit.js'

/** The checker's answer for one winner. */
export type ConflictCheckResult =
  | {
      readonly kind: 'ok'
      /** The transaction to commit or to check against the next winner: rewritten actions, pruned reads. */
      readonly txn: TransactionInfo
      /** The reconciliations that averted a file-level conflict with this winner. */
      readonly reconciliations: readonly Reconciliation[]
      /** Deletion vectors created for the rewritten actions (see {@link NewDeletionVector}). */
      readonly newDeletionVectors: readonly NewDeletionVector[]
    }
  | {
      readonly kind: 'conflict'
      readonly error: ConcurrentModificationError
    }

/**
 * The row-level phases run between the table-state checks and the file checks, in order; the
 * fetch plan is the composition of their plans (and Case 1's).
 */
export const ROW_LEVEL_PHASES: readonly RowLevelPhase[] = Object.freeze([
  dvUnionPhase,
  forwardRemapPhase,
  reverseRemapPhase,
  zOrderForwardPhase,
  zOrderReversePhase,
  mergeRowsPhase,
])

/**
 * Checks a losing transaction against one winning commit, reconciling at row level where the
 * flags allow and it is proven safe.
 *
 * Order: protocol, metadata, domain metadata, application ids, the row-id re-base (a transaction
 * that assigns row ids moves its fresh ids above the winner's mark and its commit version past
 * the winner's, as Delta's `reassignOverlappingRowIds` does), the row-level phases, then the
 * added-files, removed-vs-read and removed-vs-removed checks. With every flag off and no fetched
 * facts this is Delta's file-level checker. The re-base runs before the phases: they may re-add a
 * winner's output, whose ids are the winner's and must not be re-based (design beyond-rlc 2.3).
 *
 * @param txn - the losing transaction (as returned for the previous winner, if any)
 * @param winner - the winning commit
 * @param flags - which reconciliations run
 * @param fetched - the facts the loop loaded for `planConflictFetches(txn, winner, flags)`
 * @returns `ok` with the transaction to carry on with, or `conflict` with the error to throw
 * @throws {InternalError} when a reconciliation that reads deletion vectors is enabled before
 *   `initDeletionVectors()` resolved (it would otherwise refuse every time, silently)
 * @throws {RowIdAssignmentWithoutStatsError} when a fresh `add` to re-base has no `numRecords`
 * @throws {InvalidTableError} `malformed-action` when the winner's row-tracking domain is
 *   malformed, or the re-based ids would pass 2^63-1
 */
export function checkConflicts(
  txn: TransactionInfo,
  winner: WinningCommitSummary,
  flags: ConflictFlags,
  fetched: FetchedFacts,
): ConflictCheckResult {
  if (needsBitmaps(flags) && !deletionVectorsReady()) {
    throw new InternalError(
      'checkConflicts ran with reconciliations enabled before initDeletionVectors() resolved',
    )
  }
  let current = txn
  for (const check of [
    checkProtocolCompatibility,
    checkNoMetadataUpdates,
    checkDomainMetadata,
    checkAppTransactionIds,
  ]) {
    const outcome: CheckOutcome = check(current, winner)
    if (outcome.kind === 'conflict') return outcome
    current = outcome.txn
  }
  current = rebaseOverWinner(current, winner)

  const resolved = new Set<string>()
  let refusals = new Map<string, string>()
  const reconciliations: Reconciliation[] = []
  const newDeletionVectors: NewDeletionVector[] = []
  // Against a relocation Case 4b cannot read, Case 5b's refusal is the one that explains the
  // abort, whatever an earlier phase said about the same files.
  const speaker = zOrderReverseSpeaksFor({ txn: current, winner, flags }) ? zOrderReversePhase : undefined
  for (const phase of ROW_LEVEL_PHASES) {
    const input: PhaseInput = { txn: current, winner, flags, fetched }
    const outcome = failSafe(current, phase.label, () => phase.reconcile(input))
    current = outcome.txn
    for (const p of outcome.resolvedPaths) resolved.add(p)
    if (phase === speaker && outcome.refusals.size > 0) {
      // First in the map too: a file no phase named gets the first reason.
      const earlier = refusals
      refusals = new Map(outcome.refusals)
      for (const [p, reason] of earlier) if (!refusals.has(p)) refusals.set(p, reason)
    } else for (const [p, reason] of outcome.refusals) if (!refusals.has(p)) refusals.set(p, reason)
    if (outcome.reconciliation !== undefined) reconciliations.push(outcome.reconciliation)
    appendAll(newDeletionVectors, outcome.newDeletionVectors)
  }

  const ctx: FileCheckContext = {
    txn: current,
    winner,
    flags,
    fetched,
    matcher: createReadMatcher(txn.metadata),
    resolved,
    refusals,
  }
  for (const check of [
    checkAddedFilesThatShouldHaveBeenRead,
    checkDeletedFilesAgainstReadFiles,
    checkDeletedFilesAgainstDeletedFiles,
  ]) {
    const result = check(ctx)
    if (result.error !== undefined) return { kind: 'conflict', error: result.error }
    appendAll(reconciliations, result.reconciliations)
  }
  return {
    kind: 'ok',
    // The phases narrowed the read files for this winner's checks only; the next winner is
    // checked against every file the original read depends on, as this winner left them.
    txn: withReadFiles(current, readFilesAfterWinner(txn, winner)),
    reconciliations: Object.freeze(reconciliations),
    newDeletionVectors: Object.freeze(newDeletionVectors),
  }
}

/**
 * Re-bases the fresh row ids of a transaction that assigns them over one winner: ids above the
 * winner's mark, `defaultRowCommitVersion` past the winner's version (the version the next
 * attempt takes), and the `delta.rowTracking` domain action recording the new mark.
 */
function rebaseOverWinner(txn: TransactionInfo, winner: WinningCommitSummary): TransactionInfo {
  if (txn.rowTracking === undefined) return txn
  const rebased = rebaseRowIds(txn.actions, {
    readHighWaterMark: txn.rowTracking.readHighWaterMark,
    winnerHighWaterMark: highWaterMarkOf(winner.domainMetadata),
    winnerVersion: winner.version,
  })
  return withRowIdsRebased(txn, rebased.actions, rebased.readHighWaterMark)
}

/** Whether some enabled reconciliation reads deletion-vector bitmaps (Cases 2, 4a, 4b, 5a, 1b). */
function needsBitmaps(flags: ConflictFlags): boolean {
  return (
    flags.rowLevelConcurrency ||
    flags.optimizeReconciliation ||
    flags.optimizeReverseReconciliation ||
    flags.optimizeZOrderReconciliation ||
    flags.optimizeZOrderReverseReconciliation ||
    (flags.dataSkipping && flags.dataSkippingValueExact)
  )
}
