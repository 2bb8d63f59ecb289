/**
 * Answers a fetch plan's row questions over in-memory files, the way the commit loop answers
 * them with the data plane: rows live under the file's deletion vector (restricted to the rows
 * `onlyRowsDeletedBy` deletes, when set), the predicate evaluated by the real row evaluator, and
 * any evaluation error answered "matches".
 */
import { dvUniqueId } from '../../../src/conflict/deletion-vectors.js'
import type { FetchedFacts, FetchPlan } from '../../../src/conflict/fetched-facts.js'
import { decodeInlineDv } from '../../../src/dv/descriptor.js'
import type { RoaringBitmapArray } from '../../../src/dv/roaring-bitmap-array.js'
import { evaluateRow } from '../../../src/expressions/index.js'
import type { DeletionVectorDescriptor } from '../../../src/protocol/actions.js'

/** Rows of each data file by path, in physical order. */
export type TableRows = ReadonlyMap<string, readonly Readonly<Record<string, unknown>>[]>

function bitmapOf(
  dv: DeletionVectorDescriptor | undefined,
  facts: FetchedFacts,
): RoaringBitmapArray | undefined {
  if (dv === undefined) return undefined
  if (dv.storageType === 'i') return decodeInlineDv(dv)
  return facts.deletionVectors.get(dvUniqueId(dv)!)
}

/**
 * @param plan - the checker's fetch plan
 * @param rows - the table's rows by file path; a file not listed gets no answer
 * @param facts - the loaded deletion vectors
 * @returns the facts with the row answers added
 */
export function answerRowQueries(plan: FetchPlan, rows: TableRows, facts: FetchedFacts): FetchedFacts {
  const answers = new Map(facts.rowMatches)
  for (const q of plan.rowQueries) {
    const data = rows.get(q.file.path)
    if (data === undefined) continue
    const deleted = bitmapOf(q.file.deletionVector, facts)
    const only = q.onlyRowsDeletedBy === undefined ? undefined : bitmapOf(q.onlyRowsDeletedBy, facts)
    let match = false
    try {
      data.forEach((row, i) => {
        if (deleted?.has(i)) return
        if (only !== undefined && !only.has(i)) return
        if (evaluateRow(q.predicate, row) === true) match = true
      })
    } catch {
      match = true
    }
    answers.set(q.key, match)
  }
  return { deletionVectors: facts.deletionVectors, rowMatches: answers }
}

/** Rows `{ id }` for ids in `[from, to)` stepping by `step`. */
export function idRows(from: number, to: number, step = 1): { id: bigint }[] {
  const out: { id: bigint }[] = []
  for (let i = from; i < to; i += step) out.push({ id: BigInt(i) })
  return out
}
