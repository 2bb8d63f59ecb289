/**
 * The shape shared by the row-level reconciliation phases that run before the file-level checks
 * (Cases 2, 4a, 4b): each reads the transaction and the winner, and either rewrites the
 * transaction and names the paths it resolved, or changes nothing and says why. Each phase is a
 * {@link RowLevelPhase}: its fetch plan sits next to its reconcile, in the case's own file.
 */
import {
  type Action,
  type DeletionVectorDescriptor,
  isAdd,
  isRemove,
  type Protocol,
} from '../protocol/actions.js'
import { canWriteDeletionVectors } from '../protocol/table-features.js'
import { dvUniqueId } from './deletion-vectors.js'
import type { FetchedFacts, FetchPlan } from './fetched-facts.js'
import type { FileActionIndex } from './file-actions.js'
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

/** What a plan reads: no facts, since it says which facts to load. */
export type PlanInput = Omit<PhaseInput, 'fetched'>

/**
 * One row-level case as a pair: the facts it needs, and the reconciliation that reads them.
 *
 * The contract, checked by the conflict unit tests: on any input, `reconcile` reads no deletion
 * vector and asks no row question that `plan` did not list for that input. The commit loop plans
 * on the transaction as it enters the checker; a later phase reconciles the transaction an
 * earlier phase rewrote, whose new deletion vectors are inline or the winner's (already planned).
 * A fact the loop failed to load makes `reconcile` refuse, never guess.
 */
export interface RowLevelPhase {
  /** Names the phase in refusal reasons. */
  readonly label: string
  /**
   * @param input - the transaction, the winner and the flags
   * @returns what to load; empty when the phase's flag is off or nothing can apply
   */
  readonly plan: (input: PlanInput) => FetchPlan
  /**
   * @param input - the transaction, the winner, the flags and the loaded facts
   * @returns the rewritten transaction and the resolved paths, or the unchanged transaction
   */
  readonly reconcile: (input: PhaseInput) => PhaseOutcome
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
 * The refusals of a phase whose candidates need deletion vectors the table cannot write.
 *
 * @param paths - the paths the phase would have reconciled
 * @returns the reason for each
 */
export function noDeletionVectors(paths: readonly string[]): ReadonlyMap<string, string> {
  const reason =
    'the table has no deletion vectors (delta.enableDeletionVectors is not true, or the protocol lacks the feature)'
  return new Map(paths.map((p) => [p, reason]))
}

/**
 * Whether some file action of the transaction changes data: a DML does, a compaction or a
 * relocation (every `add` and `remove` with `dataChange` false) does not.
 *
 * @param txn - the transaction
 * @returns true when an `add` or a `remove` has `dataChange` true
 */
export function changesData(txn: TransactionInfo): boolean {
  return txn.actions.some((a) => (isAdd(a) && a.add.dataChange) || (isRemove(a) && a.remove.dataChange))
}

/**
 * The refusal of an all-or-nothing phase: the path that failed gets the reason, and every other
 * candidate the same reason naming that path, so whichever of them the file-level checks report
 * first says why.
 *
 * @param txn - the transaction, returned unchanged
 * @param candidates - the paths the phase would have reconciled
 * @param refusals - the phase's refusals so far; the reasons are added to it
 * @returns a function refusing the whole phase because of one path
 */
export function refuseAll(
  txn: TransactionInfo,
  candidates: readonly string[],
  refusals: Map<string, string>,
): (path: string, reason: string) => PhaseOutcome {
  return (path, reason) => {
    refusals.set(path, reason)
    for (const other of candidates) {
      if (!refusals.has(other)) refusals.set(other, `${reason} (source ${path})`)
    }
    return unchanged(txn, refusals)
  }
}

/**
 * Records, for a losing compaction or relocation, each of its sources the winner removed without
 * deleting rows (relocated or re-added them): such a source stays in the file-level checks and
 * aborts, and the error should say why the forward remap left it there.
 *
 * @param winner - the winning commit
 * @param own - the loser's file actions
 * @param refusals - where the reasons go
 */
export function refuseRemovedWithoutDeletion(
  winner: WinningCommitSummary,
  own: FileActionIndex,
  refusals: Map<string, string>,
): void {
  for (const p of winner.removedPaths) {
    if (own.removes.has(p) && !winner.dvUpdates.has(p) && !winner.wholeRemovals.has(p)) {
      refusals.set(
        p,
        'the winner removed the source without deleting its rows (it relocated or re-added them), so there is nothing to remap',
      )
    }
  }
}

/**
 * Runs a phase so that any unexpected failure leaves the transaction untouched: a bug may cost a
 * spurious abort, never a wrong commit. A rewrite is also re-validated (rlc-spec 2.2): no file
 * action twice, no logical file both added and removed, and one `dataChange` value across all
 * `add` and `remove` actions; a rewrite that fails is dropped.
 *
 * @param txn - the transaction before the phase
 * @param label - names the phase in the refusal reason
 * @param run - the phase
 * @returns the phase's outcome, or "unchanged" when it failed
 */
export function failSafe(txn: TransactionInfo, label: string, run: () => PhaseOutcome): PhaseOutcome {
  let outcome: PhaseOutcome
  try {
    outcome = run()
  } catch (err) {
    const reason = `${label} failed (${err instanceof Error ? err.message : String(err)})`
    return unchanged(txn, new Map([['*', reason]]))
  }
  if (outcome.txn === txn) return outcome
  const invalid = invalidRewrite(outcome.txn.actions)
  if (invalid === undefined) return outcome
  return unchanged(txn, new Map([['*', `${label} produced actions that ${invalid}`]]))
}

/**
 * Why an action list breaks the commit invariants, if it does.
 *
 * @param actions - a transaction's actions
 * @returns the broken invariant, or undefined when the list is valid
 */
export function invalidRewrite(actions: readonly Action[]): string | undefined {
  const added = new Set<string>()
  const removed = new Set<string>()
  let dataChange: boolean | undefined
  for (const a of actions) {
    let file: {
      readonly path: string
      readonly dataChange: boolean
      readonly deletionVector?: DeletionVectorDescriptor
    }
    let seen: Set<string>
    if (isAdd(a)) {
      file = a.add
      seen = added
    } else if (isRemove(a)) {
      file = a.remove
      seen = removed
    } else continue
    const key = `${file.path}\u0000${dvUniqueId(file.deletionVector) ?? ''}`
    if (seen.has(key)) return `list ${file.path} twice`
    seen.add(key)
    if (dataChange !== undefined && dataChange !== file.dataChange) return 'mix dataChange values'
    dataChange = file.dataChange
  }
  for (const key of added) {
    if (removed.has(key)) return `add and remove the same file ${key.split('\u0000')[0]}`
  }
  return undefined
}
