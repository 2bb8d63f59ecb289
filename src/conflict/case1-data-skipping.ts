/**
 * Case 1 (rlc-spec section 4): conflict-time data skipping. Only ever removes a conflict that is
 * proven not to exist; missing stats, filters without a stats form, unanswered row questions and
 * errors all keep the file-level answer.
 *
 * - Tier 1 (stats): a winner add survives when, for some read, the file's min/max/null counts
 *   may satisfy that read's data filters (AND within a read, OR across reads). Never applied under
 *   a whole-table read or without read predicates.
 * - Tier 2 (value-exact): the survivors' actual live rows are asked one existence question, any
 *   row matching any read; "no" drops them all, anything else keeps them all.
 * - 1b (delete/read): a winner re-add of a path it removed with a deletion vector that grew
 *   carries no new row and leaves the added-files check; and a file the transaction read that the
 *   winner removed conflicts only when some row the winner actually removed matches a read.
 */
import { disjunction, type Expression } from '../expressions/ast.js'
import type { AddFile, RemoveFile } from '../protocol/actions.js'
import { preImageOf } from '../protocol/file-action-rewrites.js'
import { excludeNoDataChangeAdds, excludeNoDataChangeRemoves } from './case3-no-data-change.js'
import { dvUniqueId, readDeletionVector } from './deletion-vectors.js'
import { type FetchedFacts, type FetchPlan, FetchPlanBuilder, type RowMatchQuery } from './fetched-facts.js'
import type { ConflictFlags } from './flags.js'
import type { PlanInput } from './phase.js'
import { createReadMatcher, isTrue, type ReadMatcher } from './read-matcher.js'
import type { TransactionInfo } from './transaction-info.js'
import { isolationCandidates, type WinningCommitSummary } from './winning-commit.js'

// === The pair ===

/**
 * Case 1 as a plan/reconcile pair. It rewrites no action, so it is not a phase: its reconcile is
 * the three questions the added-files and removed-vs-read checks ask it, each answered only from
 * facts its plan lists.
 */
export const dataSkippingCase = Object.freeze({
  label: 'conflict-time data skipping (Case 1)',
  plan: planDataSkipping,
  reconcile: Object.freeze({ verifiedReAdds, valueExactRulesOut, removedRowsRuledOut }),
})

/**
 * What Case 1 loads: the pre- and post-image deletion vectors of the winner's re-adds (1b (a)),
 * the value-exact question of each winner add that survives tier 1, and the question of each
 * winner remove of a file the transaction read (1b (b)).
 *
 * @param input - the transaction, the winner and the flags
 * @returns the plan
 */
function planDataSkipping(input: PlanInput): FetchPlan {
  const { txn, winner, flags } = input
  const plan = new FetchPlanBuilder()
  if (deleteReadRefinementEnabled(flags)) {
    for (const [path, post] of winner.dvUpdates) {
      plan.deletionVector(winner.dvUpdatePreImages.get(path)?.deletionVector, path)
      plan.deletionVector(post.deletionVector, path)
    }
  }
  if (!flags.dataSkipping) return plan.build()
  const matcher = createReadMatcher(txn.metadata)
  for (const query of valueExactQueries(input, matcher).values()) plan.rowQuery(query)
  if (deleteReadRefinementApplies(txn, flags)) {
    for (const r of excludeNoDataChangeRemoves(winner.removedFiles, txn, flags).kept) {
      if (!txn.readFiles.has(r.path)) continue
      const verdict = deleteReadVerdict(r, txn, winner, matcher)
      if (verdict.kind === 'query') plan.rowQuery(verdict.query)
    }
  }
  return plan.build()
}

// === Tier 1 ===

/**
 * Whether stats pruning of winner adds applies: the stats flag is on, the transaction did not
 * read the whole table, and it recorded at least one read predicate.
 *
 * @param txn - the losing transaction
 * @param flags - the conflict flags
 * @returns whether tier 1 runs
 */
export function dataSkippingApplies(txn: TransactionInfo, flags: ConflictFlags): boolean {
  return flags.dataSkipping && !txn.readWholeTable && txn.readPredicates.length > 0
}

/**
 * Tier 1: keeps the files whose stats may satisfy some read's data filters.
 *
 * @param files - candidate winner adds
 * @param txn - the losing transaction (its read predicates)
 * @param matcher - stats evaluation for the table
 * @returns the files kept and the files dropped
 */
export function filterFilesByStats(
  files: readonly AddFile[],
  txn: Pick<TransactionInfo, 'readPredicates'>,
  matcher: ReadMatcher,
): { readonly kept: readonly AddFile[]; readonly dropped: readonly AddFile[] } {
  const kept: AddFile[] = []
  const dropped: AddFile[] = []
  for (const f of files) {
    const survives = txn.readPredicates.some((r) => matcher.statsMayMatch(r.dataPredicate, f))
    ;(survives ? kept : dropped).push(f)
  }
  return { kept, dropped }
}

// === Tier 2 ===

/**
 * The row-level question of the value-exact tier: OR over reads of each read's exact data
 * predicate (its data filters, or the exact form a MERGE source-key read recorded).
 *
 * @param txn - the losing transaction
 * @returns the predicate, or undefined when some read has no data filter (every row matches it)
 */
function valueExactPredicate(txn: Pick<TransactionInfo, 'readPredicates'>): Expression | undefined {
  const parts = txn.readPredicates.map((r) => r.exactDataPredicate ?? r.dataPredicate)
  if (parts.length === 0 || parts.some(isTrue)) return undefined
  return disjunction(parts)
}

/**
 * Whether tier 2 runs on a set of survivors, and with which predicate.
 *
 * @param survivors - winner adds that survived tier 1
 * @param txn - the losing transaction
 * @param flags - the conflict flags
 * @returns the predicate to ask, or undefined when the tier does not run (flag off, no survivors,
 *   a read without data filter, or survivors larger than the byte bound)
 */
function valueExactPlan(
  survivors: readonly AddFile[],
  txn: TransactionInfo,
  flags: ConflictFlags,
): Expression | undefined {
  if (!flags.dataSkippingValueExact || !dataSkippingApplies(txn, flags) || survivors.length === 0)
    return undefined
  if (flags.valueExactMaxBytes > 0) {
    const bytes = survivors.reduce((n, f) => n + f.size, 0n)
    if (bytes > BigInt(flags.valueExactMaxBytes)) return undefined
  }
  return valueExactPredicate(txn)
}

/**
 * The value-exact questions, by key: one per winner add that survives tier 1 among the
 * candidates of the added-files check, when tier 2 runs on them. The winner's deletion-vector
 * re-adds are left out: they leave the check through 1b (a), which tier 2 implies, or else keep
 * conflicting unasked.
 *
 * Reads only what no phase rewrites (the reads, the isolation level, `isBlindAppend`, the
 * metadata), so the plan's answer holds for the transaction the file checks see.
 *
 * @param input - the transaction, the winner and the flags
 * @param matcher - stats evaluation for the table
 * @returns the questions by {@link RowMatchQuery.key}
 */
function valueExactQueries(input: PlanInput, matcher: ReadMatcher): ReadonlyMap<string, RowMatchQuery> {
  const { txn, winner, flags } = input
  const queries = new Map<string, RowMatchQuery>()
  if (!flags.dataSkippingValueExact || txn.isBlindAppend || !dataSkippingApplies(txn, flags)) return queries
  const candidates = excludeNoDataChangeAdds(isolationCandidates(txn, winner), flags).kept.filter(
    (f) => !winner.dvUpdates.has(f.path),
  )
  const survivors = filterFilesByStats(candidates, txn, matcher).kept
  const predicate = valueExactPlan(survivors, txn, flags)
  if (predicate === undefined) return queries
  for (const file of survivors) {
    const key = valueExactKey(file)
    queries.set(key, Object.freeze({ key, purpose: 'case1-value-exact', file, predicate }))
  }
  return queries
}

/**
 * Tier 2: whether the loop proved that no live row of any survivor matches any read. Only the
 * questions {@link valueExactQueries} asked are looked up; a survivor without one keeps the
 * file-level answer.
 *
 * @param survivors - winner adds that survived tier 1
 * @param input - the transaction, the winner and the flags
 * @param matcher - stats evaluation for the table
 * @param fetched - the loop's answers
 * @returns true only when every survivor was asked and answered "no row matches"
 */
export function valueExactRulesOut(
  survivors: readonly AddFile[],
  input: PlanInput,
  matcher: ReadMatcher,
  fetched: FetchedFacts,
): boolean {
  if (survivors.length === 0) return false
  const asked = valueExactQueries(input, matcher)
  return survivors.every((f) => {
    const key = valueExactKey(f)
    return asked.has(key) && fetched.rowMatches.get(key) === false
  })
}

function valueExactKey(file: AddFile): string {
  return queryKey('case1-value-exact', file.path, file)
}

// === 1b ===

/**
 * Whether the delete/read refinement applies: both the stats and the value-exact flags are on.
 *
 * @param flags - the conflict flags
 * @returns whether 1b runs
 */
export function deleteReadRefinementEnabled(flags: ConflictFlags): boolean {
  return flags.dataSkipping && flags.dataSkippingValueExact
}

/**
 * 1b (a): the winner's deletion-vector re-adds that provably carry no new row: the path's
 * pre-image deletion vector is contained in the post-image's. A re-add that undeleted rows is not
 * listed.
 *
 * @param winner - the winning commit
 * @param fetched - the loaded deletion vectors
 * @returns the paths of such re-adds
 */
export function verifiedReAdds(winner: WinningCommitSummary, fetched: FetchedFacts): ReadonlySet<string> {
  const out = new Set<string>()
  for (const [path, post] of winner.dvUpdates) {
    const pre = readDeletionVector(winner.dvUpdatePreImages.get(path)!.deletionVector, fetched)
    const after = readDeletionVector(post.deletionVector, fetched)
    if (pre !== undefined && after !== undefined && pre.isSubsetOf(after)) out.add(path)
  }
  return out
}

/** What 1b (b) concludes, or needs to ask, about one winner remove of a file the loser read. */
export type DeleteReadVerdict =
  | { readonly kind: 'no-match' }
  | { readonly kind: 'conflict'; readonly reason: string }
  | { readonly kind: 'query'; readonly query: RowMatchQuery }

/**
 * 1b (b) for one removed file: the rows the winner removed are the pre-image's live rows that its
 * re-add (if any) no longer has. Decided without the data plane when no read can select the file
 * or the stats rule every read out; conflict when a read has no data filter, when partition
 * values are missing on a partitioned table, or when the winner's re-add is ambiguous.
 *
 * @param removed - the winner's remove
 * @param txn - the losing transaction
 * @param winner - the winning commit
 * @param matcher - partition and stats evaluation for the table
 * @returns the verdict
 */
export function deleteReadVerdict(
  removed: RemoveFile,
  txn: TransactionInfo,
  winner: WinningCommitSummary,
  matcher: ReadMatcher,
): DeleteReadVerdict {
  if (matcher.partitioned && removed.partitionValues === undefined) {
    return { kind: 'conflict', reason: 'the removed file has no partition values' }
  }
  const pre = preImageOf(removed)
  const reads = txn.readPredicates.filter((r) => matcher.partitionMayMatch(r, pre))
  if (reads.length === 0) return { kind: 'no-match' }
  const predicates = reads.map((r) => r.exactDataPredicate ?? r.dataPredicate)
  if (predicates.some(isTrue)) return { kind: 'conflict', reason: 'a read has no data filter' }
  if (reads.every((r) => !matcher.statsMayMatch(r.dataPredicate, pre))) return { kind: 'no-match' }
  const reAdds = winner.addedFiles.filter((f) => f.path === removed.path)
  if (reAdds.length > 1) return { kind: 'conflict', reason: 'the winner re-added the file more than once' }
  const post = reAdds[0]
  if (post !== undefined && post.deletionVector === undefined) {
    return { kind: 'conflict', reason: 'the winner re-added the file without a deletion vector' }
  }
  const query: RowMatchQuery = Object.freeze({
    key: queryKey('case1b-delete-read', removed.path, pre),
    purpose: 'case1b-delete-read',
    file: pre,
    ...(post?.deletionVector !== undefined ? { onlyRowsDeletedBy: post.deletionVector } : {}),
    predicate: disjunction(predicates),
  })
  return { kind: 'query', query }
}

/**
 * 1b (b): whether every overlapping remove is proven to have removed no row the reads select.
 *
 * @param overlap - winner removes of files the transaction read
 * @param txn - the losing transaction
 * @param winner - the winning commit
 * @param matcher - partition and stats evaluation
 * @param fetched - the loop's answers
 * @returns true when the overlap can be ignored
 */
export function removedRowsRuledOut(
  overlap: readonly RemoveFile[],
  txn: TransactionInfo,
  winner: WinningCommitSummary,
  matcher: ReadMatcher,
  fetched: FetchedFacts,
): boolean {
  return overlap.every((r) => {
    const verdict = deleteReadVerdict(r, txn, winner, matcher)
    if (verdict.kind === 'no-match') return true
    if (verdict.kind === 'conflict') return false
    return fetched.rowMatches.get(verdict.query.key) === false
  })
}

/**
 * Whether 1b (b) applies to a transaction: the flags are on, it did not read the whole table,
 * and it recorded read predicates.
 *
 * @param txn - the losing transaction
 * @param flags - the conflict flags
 * @returns whether the removed-vs-read refinement runs
 */
export function deleteReadRefinementApplies(txn: TransactionInfo, flags: ConflictFlags): boolean {
  return deleteReadRefinementEnabled(flags) && !txn.readWholeTable && txn.readPredicates.length > 0
}

function queryKey(purpose: string, path: string, file: AddFile): string {
  const dv = dvUniqueId(file.deletionVector)
  return dv === undefined ? `${purpose}:${path}` : `${purpose}:${path}#${dv}`
}
