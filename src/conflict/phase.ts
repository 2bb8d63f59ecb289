/**
 * The shape shared by the row-level reconciliation phases that run before the file-level checks
 * (Cases 2, 4a, 4b): each reads the transaction and the winner, and either rewrites the
 * transaction and names the paths it resolved, or changes nothing and says why.
 */
import type { Protocol } from '../protocol/actions.js'
import { canWriteDeletionVectors } from '../protocol/table-features.js'
import type { FetchedFacts } from './fetched-facts.js'
import type { ConflictFlags } from './flags.js'
import type { NewDeletionVector, Reconciliation } from './reconciliation.js'
import type { TransactionInfo } from './transaction-info.js'
import type { WinningCommitSummary } from './winning-commit.js'

/** What a phase reads. */
export interface PhaseInput {
  readonly txn: TransactionInfo
  readonly winner: WinningCommitSummary
  readonly flags: ConflictFlags
  readonly fetched: FetchedFacts
}

/** What a phase produces. */
export interface PhaseOutcome {
  /** The transaction, rewritten when the phase reconciled something. */
  readonly txn: TransactionInfo
  /** Paths the file-level checks must skip for this winner. */
  readonly resolvedPaths: readonly string[]
  readonly reconciliation: Reconciliation | undefined
  readonly newDeletionVectors: readonly NewDeletionVector[]
  /** Paths the phase looked at and refused to reconcile, with the reason. */
  readonly refusals: ReadonlyMap<string, string>
}

/**
 * The outcome of a phase that changed nothing.
 *
 * @param txn - the unchanged transaction
 * @param refusals - why paths were not reconciled, if the phase got that far
 * @returns the outcome
 */
export function unchanged(
  txn: TransactionInfo,
  refusals: ReadonlyMap<string, string> = new Map(),
): PhaseOutcome {
  return Object.freeze({
    txn,
    resolvedPaths: Object.freeze([]),
    reconciliation: undefined,
    newDeletionVectors: Object.freeze([]),
    refusals,
  })
}

/**
 * Whether the transaction may write deletion vectors (the gate of Cases 2, 4a and 4b): the
 * protocol supports `deletionVectors` and `delta.enableDeletionVectors` is true. An invalid
 * property value counts as "no".
 *
 * @param txn - the transaction, with any winner protocol already adopted
 * @returns whether deletion vectors are writable
 */
export function deletionVectorsWritable(txn: {
  readonly protocol: Protocol
  readonly metadata: TransactionInfo['metadata']
}): boolean {
  try {
    return canWriteDeletionVectors(txn.protocol, txn.metadata)
  } catch {
    return false
  }
}

/**
 * Runs a phase so that any unexpected failure leaves the transaction untouched: a bug may cost a
 * spurious abort, never a wrong commit.
 *
 * @param txn - the transaction before the phase
 * @param label - names the phase in the refusal reason
 * @param run - the phase
 * @returns the phase's outcome, or "unchanged" when it failed
 */
export function failSafe(txn: TransactionInfo, label: string, run: () => PhaseOutcome): PhaseOutcome {
  try {
    return run()
  } catch (err) {
    const reason = `${label} failed (${err instanceof Error ? err.message : String(err)})`
    return unchanged(txn, new Map([['*', reason]]))
  }
}
