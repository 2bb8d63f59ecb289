/**
 * The target rows a MERGE with a WHEN NOT MATCHED [BY TARGET] INSERT clause matched and left in
 * place, in the files it takes rows out of through a deletion vector.
 *
 * Such a row decided the MERGE's outcome without being changed: its existence is what kept the
 * MERGE from inserting the source rows that matched it (a conditional WHEN MATCHED clause that did
 * not fire, or no WHEN MATCHED clause at all). Case 2 proves a same-file union safe by showing
 * that the rows the winner newly deleted are not rows the loser changed; for these rows that is
 * not enough, since serially ("winner; loser") the MERGE would have found the row gone and
 * inserted its source row. Case 2 therefore counts them as the loser's rows in its overlap test.
 *
 * Why only these rows (reasoned per clause kind):
 * - WHEN MATCHED rows the MERGE changed are in its own deletion vector: Case 2's overlap test
 *   covers them already.
 * - A matched row left in place by a MERGE without an insert clause decides nothing a winner's
 *   deletion could change: with the row gone its source rows match nothing, and nothing is done
 *   for an unmatched source row.
 * - WHEN NOT MATCHED BY SOURCE: a target row that no source row matched and that a conditional
 *   clause left in place decides nothing either. Its fate depends only on itself (the clause
 *   conditions read the target only), and it takes no part in any source row's match, so a winner
 *   deleting it leaves every other outcome of the MERGE as it was: the union is the serial result.
 *   A row such a clause changed is in the MERGE's deletion vector, as above.
 *
 * The other reconciliations need nothing more:
 * - Case 1b (removed-vs-read) counts a winner's removed rows against the MERGE's recorded read:
 *   the target-only part of ON and the source keys, or TRUE. Every matched row satisfies ON, so a
 *   matched row the winner removed counts as a conflict there. Case 2 was the exception only
 *   because a reconciled path leaves the read files, and with them that check.
 * - Case 6 tests a winner's changed rows against the MERGE's keys, but leaves a file both sides
 *   took rows out of to Case 2.
 * - Cases 4b and 5b reconcile with a winner that relocates rows (a compaction or a Z-order)
 *   without changing any row's existence or values: every row the MERGE matched is still there,
 *   so its outcome stands. They move its deletions to the winner's outputs, whose positions this
 *   record does not know; Case 2 against a later winner then refuses such a file.
 *
 * The module is pure.
 */

/**
 * By the path of each data file the MERGE takes rows out of (as its actions name it), the
 * physical positions of the target rows it matched and left in place: ascending, distinct, and
 * possibly empty. A path missing from the map is a file whose matched rows are unknown (a
 * reconciliation moved the MERGE's deletions to another file).
 */
export interface KeptMatchedRows {
  readonly files: ReadonlyMap<string, Float64Array>
}

/**
 * Builds the record of one MERGE.
 *
 * @param files - per data file path the MERGE takes rows out of, the positions of the target rows
 *   it matched and left in place (any order)
 * @returns the record, or undefined when no such row exists (the MERGE behaves as an UPDATE or
 *   DELETE for Case 2)
 */
export function keptMatchedRows(
  files: Iterable<readonly [path: string, positions: ArrayLike<number>]>,
): KeptMatchedRows | undefined {
  const out = new Map<string, Float64Array>()
  let any = false
  for (const [path, positions] of files) {
    const sorted = Float64Array.from(positions).sort()
    if (sorted.length > 0) any = true
    out.set(path, sorted)
  }
  return any ? Object.freeze({ files: out }) : undefined
}

/**
 * The record of a transaction that staged several operations: every operation's files. A path
 * two operations recorded keeps the positions of both.
 *
 * @param records - the operations' records (undefined for an operation without one)
 * @returns the combined record, or undefined when no operation has one
 */
export function combineKeptMatchedRows(
  records: Iterable<KeptMatchedRows | undefined>,
): KeptMatchedRows | undefined {
  const all: KeptMatchedRows[] = []
  for (const r of records) if (r !== undefined) all.push(r)
  if (all.length <= 1) return all[0]
  const merged = new Map<string, number[]>()
  for (const r of all) {
    for (const [path, positions] of r.files) {
      const into = merged.get(path) ?? []
      for (const p of positions) into.push(p)
      merged.set(path, into)
    }
  }
  return keptMatchedRows([...merged].map(([path, ps]) => [path, [...new Set(ps)]] as const))
}

/** What a deletion-vector test needs of a bitmap. */
interface Positions {
  has(position: number): boolean
}

/**
 * How many of the rows a transaction matched and left in `path` another commit newly deleted.
 *
 * @param record - the transaction's record
 * @param path - the data file
 * @param theirs - the other commit's deletion vector of the file (cumulative)
 * @param base - the deletion vector the transaction read (cumulative)
 * @returns the count, or undefined when the record does not know the file
 */
export function keptMatchedRowsDeleted(
  record: KeptMatchedRows,
  path: string,
  theirs: Positions,
  base: Positions,
): number | undefined {
  const positions = record.files.get(path)
  if (positions === undefined) return undefined
  let n = 0
  for (const p of positions) if (theirs.has(p) && !base.has(p)) n++
  return n
}
