/**
 * What the commit loop must load before checking a winner ("plan, then fetch"): the composition
 * of the plans of the cases that read facts. Each case keeps its plan next to its reconcile, in
 * its own file; Case 3 reads no fact. A plan over-approximates: it asks for every deletion vector
 * and every row answer its reconcile might need against this winner, so that the checker never
 * has to come back for more. Anything the loop fails to load simply makes that reconciliation
 * refuse.
 */
import { dataSkippingCase } from './case1-data-skipping.js'
import { ROW_LEVEL_PHASES } from './check-conflicts.js'
import { type FetchPlan, FetchPlanBuilder } from './fetched-facts.js'
import type { ConflictFlags } from './flags.js'
import type { PlanInput } from './phase.js'
import type { TransactionInfo } from './transaction-info.js'
import type { WinningCommitSummary } from './winning-commit.js'

/** Every case that reads facts, in the order their requests are listed. */
const PLANNED_CASES: readonly { readonly plan: (input: PlanInput) => FetchPlan }[] = Object.freeze([
  ...ROW_LEVEL_PHASES,
  dataSkippingCase,
])

/**
 * Plans the loads for checking `txn` against `winner`. Empty when every flag is off, or when no
 * reconciliation can apply to this pair.
 *
 * @param txn - the losing transaction, as it will be passed to `checkConflicts`
 * @param winner - the winning commit
 * @param flags - the conflict flags
 * @returns the deletion vectors to load (by descriptor) and the row questions to answer
 */
export function planConflictFetches(
  txn: TransactionInfo,
  winner: WinningCommitSummary,
  flags: ConflictFlags,
): FetchPlan {
  const input: PlanInput = { txn, winner, flags }
  const plan = new FetchPlanBuilder()
  for (const c of PLANNED_CASES) plan.include(c.plan(input))
  return plan.build()
}
