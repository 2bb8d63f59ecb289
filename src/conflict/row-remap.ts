/**
 * The arithmetic shared by the compaction remaps (Cases 4a and 4b): a source's rows that were
 * live at compaction time sit contiguously in the output from the source's start offset, so a
 * physical row `i` of the source sits at `start + (i - |gaps below i|)`, where the gaps are the
 * rows the compaction's read-time deletion vector already excluded.
 */
import { RoaringBitmapArray } from '../dv/roaring-bitmap-array.js'
import type { AddFile } from '../protocol/actions.js'
import type { SourceComposition } from '../protocol/composition-tags.js'
import { parseStats } from '../protocol/stats.js'

/**
 * Maps newly deleted source rows to output rows.
 *
 * @param deleted - physical source rows to map, none of them in `gaps`
 * @param gaps - the source rows the compaction did not write (its read-time deletion vector)
 * @param run - where the source's live rows sit in the output
 * @returns the output rows in ascending order, or undefined when a row falls outside the run
 */
export function remapToOutput(
  deleted: RoaringBitmapArray,
  gaps: RoaringBitmapArray,
  run: SourceComposition,
): number[] | undefined {
  const out: number[] = []
  for (const i of deleted) {
    if (gaps.has(i)) return undefined
    const liveRank = i - gaps.rank(i)
    if (liveRank < 0 || liveRank >= run.liveCount) return undefined
    out.push(run.outputStart + liveRank)
  }
  return out
}

/**
 * The output rows of the rows of a source still live under `removed` (all of them leave when
 * the source is removed whole).
 *
 * @param removed - the source rows already gone (a superset of `gaps`)
 * @param gaps - the source rows the compaction did not write
 * @param run - where the source's live rows sit in the output
 * @returns the output rows in ascending order, or undefined when the run's length disagrees
 */
export function remapWholeSource(
  removed: RoaringBitmapArray,
  gaps: RoaringBitmapArray,
  run: SourceComposition,
): number[] | undefined {
  const out: number[] = []
  let rank = 0
  for (let i = 0; i < run.physicalRecords; i++) {
    if (gaps.has(i)) continue
    if (!removed.has(i)) out.push(run.outputStart + rank)
    rank++
  }
  return rank === run.liveCount ? out : undefined
}

/**
 * Whether a source's run fits in its output: `start + liveCount` must not exceed the output's
 * physical row count. An output without a row count cannot be checked and passes; the per-row
 * bound of {@link remapToOutput} still applies.
 *
 * @param run - the source's run
 * @param output - the output file
 * @returns false when the run provably overflows the output
 */
export function runFitsOutput(run: SourceComposition, output: AddFile): boolean {
  const physical = parseStats(output.stats)?.numRecords
  return physical === undefined || BigInt(run.outputStart + run.liveCount) <= physical
}

/**
 * Adds output rows to an output's current deletion vector.
 *
 * @param seed - the output's current deletion vector
 * @param rows - output rows to add, in any order
 * @returns the union
 */
export function withDeletedRows(seed: RoaringBitmapArray, rows: readonly number[]): RoaringBitmapArray {
  if (rows.length === 0) return seed
  const extra = RoaringBitmapArray.fromPositions(rows)
  const out = seed.union(extra)
  extra.dispose()
  return out
}
