/**
 * Case 3 (rlc-spec section 6, design decision 3): files a winner committed with
 * `dataChange = false` (OPTIMIZE outputs and tombstones) only relocate rows that already existed.
 *
 * - Added-files check: `dataChange = false` adds are dropped for every loser. Such a file holds
 *   no row the loser's snapshot lacked.
 * - Removed-vs-read check (both the read-file rule and the whole-table rule): `dataChange = false`
 *   removes are dropped, but only for an append-only loser (no `remove`, no `add` with a deletion
 *   vector). A DML loser read the file in order to rewrite it, so a relocation still conflicts.
 *
 * Both rest on the commit-wide invariant that all file actions of one commit share one
 * `dataChange` value, so either the whole winner relocated rows or it changed data.
 */
import type { AddFile, RemoveFile } from '../protocol/actions.js'
import type { ConflictFlags } from './flags.js'
import type { TransactionInfo } from './transaction-info.js'

/** Files split by a Case 3 filter. */
export interface NoDataChangeSplit<T> {
  /** The files the check keeps. */
  readonly kept: readonly T[]
  /** The `dataChange = false` files the filter dropped. */
  readonly excluded: readonly T[]
}

/**
 * The Case 3 filter of the added-files check.
 *
 * @param candidates - the winner adds the isolation level makes candidates
 * @param flags - the conflict flags
 * @returns the candidates kept and the ones excluded
 */
export function excludeNoDataChangeAdds(
  candidates: readonly AddFile[],
  flags: ConflictFlags,
): NoDataChangeSplit<AddFile> {
  if (!flags.excludeNoDataChangeFiles) return { kept: candidates, excluded: [] }
  return split(candidates)
}

/**
 * The Case 3 filter of the removed-vs-read check.
 *
 * @param removes - the winner removes the check considers
 * @param txn - the losing transaction (the filter applies only when it is append-only)
 * @param flags - the conflict flags
 * @returns the removes kept and the ones excluded
 */
export function excludeNoDataChangeRemoves(
  removes: readonly RemoveFile[],
  txn: TransactionInfo,
  flags: ConflictFlags,
): NoDataChangeSplit<RemoveFile> {
  if (!flags.excludeNoDataChangeFiles || !txn.isAppendOnly) return { kept: removes, excluded: [] }
  return split(removes)
}

function split<T extends { readonly dataChange: boolean }>(files: readonly T[]): NoDataChangeSplit<T> {
  const kept: T[] = []
  const excluded: T[] = []
  for (const f of files) (f.dataChange ? kept : excluded).push(f)
  return { kept, excluded }
}
