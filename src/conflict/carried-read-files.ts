/**
 * The files a losing transaction read, carried from one winner to the next.
 *
 * Once a winner is reconciled, the transaction is checked against the next winner as if it had
 * read the table the winner left: every row its read depended on must still sit in a file of its
 * read set, or a later winner that deletes that row would go unchecked (the removed-vs-read check
 * and Case 1b only look at read files, and Case 1b drops a deletion-vector re-add from the
 * added-files check on the ground that its removal is checked there). A reconciliation proves
 * disjointness for its own winner only; it never narrows what the next winner is checked against.
 *
 * So, for each file the transaction read that the winner took out:
 * - the winner re-added the path (a deletion-vector update): the path stays read, as re-added;
 * - the winner removed it whole (a copy-on-write rewrite, a compaction): the rows it kept now
 *   live in some of the winner's new files, which cannot be told apart without reading them, so
 *   every file the winner added that the transaction's reads may select becomes read.
 *
 * A transaction that changes no data (a compaction) depends only on the rows of the files it
 * rewrites, which its own removes keep in the removed-vs-removed check: it takes on no new file.
 */
import type { AddFile } from '../protocol/actions.js'
import { changesData } from './phase.js'
import { createReadMatcher } from './read-matcher.js'
import type { TransactionInfo } from './transaction-info.js'
import type { WinningCommitSummary } from './winning-commit.js'

/**
 * The read files of `txn` as of the table the winner left.
 *
 * @param txn - the transaction as it entered the check against `winner` (its read files before
 *   any reconciliation against this winner)
 * @param winner - the winner the transaction was reconciled with
 * @returns the read files to check the next winner against
 */
export function readFilesAfterWinner(
  txn: TransactionInfo,
  winner: WinningCommitSummary,
): ReadonlyMap<string, AddFile> {
  const out = new Map<string, AddFile>()
  let replaced = false
  for (const [path, file] of txn.readFiles) {
    if (!winner.removedPaths.has(path)) {
      out.set(path, file)
      continue
    }
    const readded = winner.addedFilesByPath.get(path)
    if (readded !== undefined) out.set(path, readded)
    else replaced = true
  }
  if (!replaced || !changesData(txn)) return out
  const matcher = createReadMatcher(txn.metadata)
  const selectsAll = txn.readWholeTable || !matcher.partitioned || txn.readPredicates.length === 0
  for (const add of winner.addedFiles) {
    if (out.has(add.path)) continue
    if (selectsAll || txn.readPredicates.some((r) => matcher.partitionMayMatch(r, add)))
      out.set(add.path, add)
  }
  return out
}
