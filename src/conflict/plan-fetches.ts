/**
 * What the commit loop must load before checking a winner ("plan, then fetch"). The plan
 * over-approximates: it asks for every deletion vector and every row answer a reconciliation
 * might need against this winner, so that the checker never has to come back for more. Anything
 * the loop fails to load simply makes that reconciliation refuse.
 */
import type { DeletionVectorDescriptor } from '../protocol/actions.js'
import {
  dataSkippingApplies,
  deleteReadRefinementApplies,
  deleteReadRefinementEnabled,
  deleteReadVerdict,
  filterFilesByStats,
  valueExactPlan,
  valueExactQuery,
} from './case1-data-skipping.js'
import { dvUnionCandidates } from './case2-dv-union.js'
import { excludeNoDataChangeAdds, excludeNoDataChangeRemoves } from './case3-no-data-change.js'
import { forwardRemapTouched, ownCompactedSources } from './case4a-forward-remap.js'
import { reverseRemapTouched } from './case4b-reverse-remap.js'
import { parseOptimizeSourceComposition } from './composition-tags.js'
import { dvUniqueId, needsFetch } from './deletion-vectors.js'
import {
  type DeletionVectorRequest,
  EMPTY_FETCH_PLAN,
  type FetchPlan,
  type RowMatchQuery,
} from './fetched-facts.js'
import { indexFileActions } from './file-actions.js'
import { isolationCandidates } from './file-checks.js'
import type { ConflictFlags } from './flags.js'
import { createReadMatcher } from './read-matcher.js'
import type { TransactionInfo } from './transaction-info.js'
import type { WinningCommitSummary } from './winning-commit.js'

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
  const dvs = new Map<string, DeletionVectorRequest>()
  const want = (dv: DeletionVectorDescriptor | undefined, dataFilePath: string): void => {
    if (!needsFetch(dv)) return
    const key = dvUniqueId(dv)!
    if (!dvs.has(key)) dvs.set(key, Object.freeze({ key, descriptor: dv, dataFilePath }))
  }
  const rowQueries: RowMatchQuery[] = []
  const own = indexFileActions(txn.actions)

  if (flags.rowLevelConcurrency) {
    for (const path of dvUnionCandidates({ txn, winner })) {
      want(own.removes.get(path)?.deletionVector, path)
      want(own.adds.get(path)?.deletionVector, path)
      want(winner.dvUpdates.get(path)?.deletionVector, path)
    }
  }

  if (flags.optimizeReconciliation) {
    const sources = ownCompactedSources(own)
    for (const path of forwardRemapTouched({ txn, winner })) {
      want(own.removes.get(path)?.deletionVector, path)
      want(winner.dvUpdates.get(path)?.deletionVector, path)
      const source = sources.get(path)
      if (source !== undefined) {
        want(source.composition.readDeletionVector, path)
        want(source.output.deletionVector, source.output.path)
      }
    }
  }

  if (flags.optimizeReverseReconciliation) {
    const touched = reverseRemapTouched({ txn, winner })
    if (touched.length > 0) {
      const outputs = new Set(winner.addedFiles.map((f) => f.path))
      for (const r of winner.removedFiles) {
        if (!touched.includes(r.path)) continue
        want(r.deletionVector, r.path)
        want(parseOptimizeSourceComposition(r, outputs)?.readDeletionVector, r.path)
      }
      for (const path of touched) {
        want(own.removes.get(path)?.deletionVector, path)
        want(own.adds.get(path)?.deletionVector, path)
      }
      for (const f of winner.addedFiles) want(f.deletionVector, f.path)
    }
  }

  if (deleteReadRefinementEnabled(flags)) {
    // 1b (a) checks that each re-add's deletion vector grew.
    for (const [path, post] of winner.dvUpdates) {
      want(winner.dvUpdatePreImages.get(path)?.deletionVector, path)
      want(post.deletionVector, path)
    }
  }

  const matcher = flags.dataSkipping ? createReadMatcher(txn.metadata) : undefined
  if (matcher !== undefined && !txn.isBlindAppend && dataSkippingApplies(txn, flags)) {
    // Deletion-vector re-adds leave the check through 1b (a), which the value-exact tier implies.
    const candidates = excludeNoDataChangeAdds(isolationCandidates(txn, winner), flags).kept.filter(
      (f) => !winner.dvUpdates.has(f.path),
    )
    const survivors = filterFilesByStats(candidates, txn, matcher).kept
    const predicate = valueExactPlan(survivors, txn, flags)
    if (predicate !== undefined) for (const f of survivors) rowQueries.push(valueExactQuery(f, predicate))
  }
  if (matcher !== undefined && deleteReadRefinementApplies(txn, flags)) {
    for (const r of excludeNoDataChangeRemoves(winner.removedFiles, txn, flags).kept) {
      if (!txn.readFiles.has(r.path)) continue
      const verdict = deleteReadVerdict(r, txn, winner, matcher)
      if (verdict.kind === 'query') rowQueries.push(verdict.query)
    }
  }

  if (dvs.size === 0 && rowQueries.length === 0) return EMPTY_FETCH_PLAN
  return Object.freeze({
    deletionVectors: Object.freeze([...dvs.values()]),
    rowQueries: Object.freeze(rowQueries),
  })
}
