/**
 * What would have reconciled a conflict: a conflicts flag that is off, or deletion vectors on a
 * table without them. The checker is pure, so the question "would this reconcile with flag X
 * on" is answered by checking the same transaction against the same winner again, with X on and
 * the facts X's plan asks for. A flag is named only when that check passes; deletion vectors are
 * named only when both transactions changed the same file's rows (the shape every row-level case
 * needs) and the table cannot write them. Nothing is named otherwise: the hint never guesses.
 */
import type { ConcurrentModificationError, ConflictContext } from '../errors/index.js'
import { isRemove } from '../protocol/actions.js'
import { TableProperty } from '../protocol/table-properties.js'
import { checkConflicts } from './check-conflicts.js'
import type { FetchedFacts } from './fetched-facts.js'
import { type BooleanFlag, type ConflictFlags, conflictFlagKey, flagsOff, withFlagsOn } from './flags.js'
import { deletionVectorsWritable } from './phase.js'
import type { ReconciliationKind } from './reconciliation.js'
import type { TransactionInfo } from './transaction-info.js'
import type { WinningCommitSummary } from './winning-commit.js'

/**
 * The value-exact tier's byte bound while explaining a conflict: the explanation must stay cheap
 * next to the abort it explains. Past it the tier does not run, so it is not named.
 */
export const EXPLAIN_VALUE_EXACT_MAX_BYTES = 64 * 1024 * 1024

/** The switches whose reconciliation is recorded under each kind. */
const FLAGS_OF_KIND: Readonly<Record<ReconciliationKind, readonly BooleanFlag[]>> = Object.freeze({
  'case1-data-skipping': ['dataSkipping'],
  'case1b-delete-read': ['dataSkipping', 'dataSkippingValueExact'],
  'case2-dv-union': ['rowLevelConcurrency'],
  'case3-no-data-change': ['excludeNoDataChangeFiles'],
  'case4a-forward-remap': ['optimizeReconciliation'],
  'case4b-reverse-remap': ['optimizeReverseReconciliation'],
  'case5a-zorder-forward': ['optimizeZOrderReconciliation'],
  'case5b-zorder-reverse': ['optimizeZOrderReverseReconciliation'],
  'case6-merge-rows': ['mergeRowLevelConflicts'],
})

/**
 * The flags to plan and fetch with before {@link explainConflict}: every switch on, the
 * value-exact tier bounded by {@link EXPLAIN_VALUE_EXACT_MAX_BYTES}.
 *
 * @param flags - the transaction's flags
 * @returns the flags, or undefined when every switch is already on (no flag can be named, and
 *   the deletion-vector question needs no fact)
 */
export function explanationFlags(flags: ConflictFlags): ConflictFlags | undefined {
  const off = flagsOff(flags)
  if (off.length === 0) return undefined
  const bound =
    flags.valueExactMaxBytes === 0
      ? EXPLAIN_VALUE_EXACT_MAX_BYTES
      : Math.min(flags.valueExactMaxBytes, EXPLAIN_VALUE_EXACT_MAX_BYTES)
  return Object.freeze({ ...withFlagsOn(flags, off), valueExactMaxBytes: bound })
}

/**
 * Says what would have reconciled a conflict of `txn` with `winner`.
 *
 * Flags first: the transaction is checked again with every switch on; when that passes, the
 * switches of the reconciliations it applied that are off are named, once the check with only
 * those turned on passes too. Then deletion vectors: when both transactions removed a common
 * file, at least one of them to change its rows, and the table cannot write deletion vectors.
 *
 * @param txn - the losing transaction, as it entered the checker for this winner
 * @param winner - the winning commit
 * @param flags - the transaction's flags
 * @param fetched - the facts loaded for `planConflictFetches(txn, winner, explanationFlags(flags))`
 *   (none needed when that is undefined)
 * @returns a sentence for the hint, or undefined when nothing known would have reconciled it
 */
export function explainConflict(
  txn: TransactionInfo,
  winner: WinningCommitSummary,
  flags: ConflictFlags,
  fetched: FetchedFacts,
): string | undefined {
  const named = flagsThatReconcile(txn, winner, flags, fetched)
  if (named !== undefined) {
    const keys = named.map((f) => `\`${conflictFlagKey(f)}\``)
    return `It would reconcile with ${keys.join(' and ')} (the conflicts option).`
  }
  return deletionVectorsNeeded(txn, winner, flags)
}

/**
 * The same conflict error, with what would have reconciled it in its hint.
 *
 * @param error - a conflict error
 * @param remedy - the sentence {@link explainConflict} returned
 * @returns a new error of the same class and code
 */
export function withRemedy<E extends ConcurrentModificationError>(error: E, remedy: string): E {
  const Class = error.constructor as new (ctx: ConflictContext) => E
  const out = new Class({ ...error.context, remedy })
  if (error.stack !== undefined) out.stack = error.stack
  return out
}

// === Internals ===

function flagsThatReconcile(
  txn: TransactionInfo,
  winner: WinningCommitSummary,
  flags: ConflictFlags,
  fetched: FetchedFacts,
): readonly BooleanFlag[] | undefined {
  const all = explanationFlags(flags)
  if (all === undefined) return undefined
  const outcome = checkConflicts(txn, winner, all, fetched)
  if (outcome.kind !== 'ok') return undefined
  const used = new Set<BooleanFlag>()
  for (const r of outcome.reconciliations) for (const f of FLAGS_OF_KIND[r.kind]) if (!flags[f]) used.add(f)
  // Case 1's stats tier and its value-exact tier record the same kind: try the smaller set first.
  const candidates: BooleanFlag[][] = [[...used]]
  if (used.has('dataSkipping') && !used.has('dataSkippingValueExact') && !flags.dataSkippingValueExact) {
    candidates.push([...used, 'dataSkippingValueExact'])
  }
  const bounded = { valueExactMaxBytes: all.valueExactMaxBytes }
  for (const fields of candidates) {
    if (fields.length === 0) continue
    const trial = Object.freeze({ ...withFlagsOn(flags, fields), ...bounded })
    if (checkConflicts(txn, winner, trial, fetched).kind === 'ok') return fields
  }
  return undefined
}

function deletionVectorsNeeded(
  txn: TransactionInfo,
  winner: WinningCommitSummary,
  flags: ConflictFlags,
): string | undefined {
  if (deletionVectorsWritable(txn)) return undefined
  const own = new Map<string, boolean>()
  for (const a of txn.actions) if (isRemove(a)) own.set(a.remove.path, a.remove.dataChange)
  let field: BooleanFlag | undefined
  for (const r of winner.removedFiles) {
    const ours = own.get(r.path)
    if (ours === undefined || (!ours && !r.dataChange)) continue
    // Which case would speak for this pair once the rows changed through deletion vectors.
    field =
      ours && r.dataChange
        ? 'rowLevelConcurrency'
        : ours
          ? 'optimizeReverseReconciliation'
          : 'optimizeReconciliation'
    break
  }
  if (field === undefined) return undefined
  const property = `\`${TableProperty.enableDeletionVectors}=true\``
  const flag = flags[field] ? '' : ` and \`${conflictFlagKey(field)}\` (the conflicts option)`
  return (
    `Both transactions changed rows of the same file, which this table records by rewriting it; ` +
    `a row-level reconciliation needs deletion vectors: ${property}${flag}; ` +
    `it then reconciles when the two changed different rows.`
  )
}
