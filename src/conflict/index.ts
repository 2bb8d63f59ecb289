/**
 * Conflict resolution between a losing transaction and the commits that won the race: Delta's
 * file-level checks, and on top of them the row-level reconciliations, each behind its flag.
 *
 * Pure: no I/O, no `node:*` import, no asynchronous code, nothing thrown for a conflict. The
 * commit loop plans what to load (`planConflictFetches`), loads it through the engine, calls
 * `checkConflicts` once per winner in version order, and throws the returned conflict at its
 * boundary. A reconciliation only turns an abort into a commit when the disjointness is proven;
 * on any doubt the file-level answer stands.
 *
 * References: design/rlc-spec.md (rules), design/README.md section 3 (decisions), Delta's
 * `ConflictChecker`.
 */

export {
  type DeleteReadVerdict,
  dataSkippingApplies,
  deleteReadRefinementApplies,
  deleteReadRefinementEnabled,
  deleteReadVerdict,
  filterFilesByStats,
  removedRowsRuledOut,
  valueExactPlan,
  valueExactPredicate,
  valueExactQuery,
  valueExactRulesOut,
  verifiedReAdds,
} from './case1-data-skipping.js'
export { dvUnionCandidates, reconcileDeletionVectorUnion } from './case2-dv-union.js'
export { excludeNoDataChangeAdds, excludeNoDataChangeRemoves } from './case3-no-data-change.js'
export {
  type CompactedSource,
  forwardRemapTouched,
  ownCompactedSources,
  reconcileForwardRemap,
} from './case4a-forward-remap.js'
export {
  asPureCompaction,
  type PureCompaction,
  reconcileReverseRemap,
  reverseRemapTouched,
} from './case4b-reverse-remap.js'
export {
  type ConflictCheckResult,
  checkConflicts,
} from './check-conflicts.js'
export {
  COMPACTED_INTO_TAG,
  COMPACTION_INFO_TAG,
  compositionTags,
  parseOptimizeSourceComposition,
  planCompositionTags,
  REMAPPED_COMPACTION_INFO_TAG,
  remappedCompositionTag,
  type SourceComposition,
  withCompositionTags,
  withRemappedComposition,
} from './composition-tags.js'
export {
  dvUniqueId,
  newDeletionVectorsInUse,
  replaceDeletionVectorDescriptors,
  sameDeletionVector,
} from './deletion-vectors.js'
export {
  type DeletionVectorRequest,
  EMPTY_FETCH_PLAN,
  type FetchedFacts,
  type FetchPlan,
  NO_FETCHED_FACTS,
  type RowMatchPurpose,
  type RowMatchQuery,
} from './fetched-facts.js'
export {
  checkAddedFilesThatShouldHaveBeenRead,
  checkDeletedFilesAgainstDeletedFiles,
  checkDeletedFilesAgainstReadFiles,
  type FileCheckContext,
  type FileCheckResult,
  firstFileMatchingReads,
  isolationCandidates,
} from './file-checks.js'
export {
  anyReconciliationEnabled,
  CONFLICT_FLAG_KEYS,
  type ConflictFlags,
  DEFAULT_CONFLICT_FLAGS,
  DEFAULT_MERGE_SOURCE_KEY_IN_SET_THRESHOLD,
  DEFAULT_VALUE_EXACT_MAX_BYTES,
  parseConflictFlags,
} from './flags.js'
export type { PhaseInput, PhaseOutcome } from './phase.js'
export { planConflictFetches } from './plan-fetches.js'
export { createReadMatcher, type ReadMatcher } from './read-matcher.js'
export type {
  NewDeletionVector,
  Reconciliation,
  ReconciliationKind,
} from './reconciliation.js'
export {
  type CheckOutcome,
  checkAppTransactionIds,
  checkDomainMetadata,
  checkNoMetadataUpdates,
  checkProtocolCompatibility,
} from './table-state-checks.js'
export {
  chooseIsolationLevel,
  createReadPredicate,
  createTransactionInfo,
  type IsolationLevel,
  type ReadPredicate,
  TRUE_PREDICATE,
  type TransactionInfo,
  type TransactionInfoInput,
  withActions,
  withoutReadFiles,
  withProtocol,
} from './transaction-info.js'
export { summarizeWinningCommit, type WinningCommitSummary } from './winning-commit.js'
