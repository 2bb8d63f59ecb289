/**
 * The change sketch a MERGE writes into its `commitInfo` (design beyond-rlc 8.4; the format is in
 * `conflict/change-sketch.ts`): its source key tuples, when they provably hold the key of every
 * row the MERGE changes.
 *
 * Why the source keys suffice, under the conditions checked here: a target row the MERGE updates
 * or deletes was matched, so its key equals a source row's key (the equi-join); its updated
 * image keeps that key (no update clause assigns a key column anything but the key itself); an
 * inserted row takes its key from its source row's key columns (every insert clause assigns each
 * key column exactly the source key column). A NOT MATCHED BY SOURCE clause changes rows whose
 * keys are in no source row, and a copy-on-write rewrite copies rows whose keys are not either
 * (and a reader without row tracking counts copies as changes): both leave the MERGE without a
 * sketch. A row with a NULL key is left out, as it is of every read set.
 */
import type { MergeReadSet } from '../conflict/case6-merge-read-set.js'
import { type ChangeSketch, MAX_SKETCH_KEYS, physicalKeyColumns } from '../conflict/change-sketch.js'
import type { Expression } from '../expressions/ast.js'
import type { Metadata, Protocol } from '../protocol/actions.js'
import type { EquiKey, MergePlan } from './merge-clauses.js'

/**
 * The sketch of a MERGE, or undefined when it cannot vouch for every changed row.
 *
 * @param plan - the MERGE as executed (computed columns applied)
 * @param read - the read set it recorded (its source key tuples), if any
 * @param facts - the rows it copied into new files, and the table's protocol and metadata
 * @returns the sketch, or undefined
 */
export function mergeChangeSketch(
  plan: Pick<MergePlan, 'keys' | 'whenMatched' | 'whenNotMatched' | 'whenNotMatchedBySource'>,
  read: MergeReadSet | undefined,
  facts: { readonly copiedRows: number; readonly protocol: Protocol; readonly metadata: Metadata },
): ChangeSketch | undefined {
  if (read === undefined || read.wholeTable || plan.whenNotMatchedBySource.length > 0) return undefined
  if (facts.copiedRows > 0) return undefined
  const keys = read.keys.exactTuples()
  if (keys === undefined || keys.length > MAX_SKETCH_KEYS) return undefined
  for (const clause of plan.whenMatched) {
    if (clause.kind !== 'update') continue
    for (const k of plan.keys) {
      const value = clause.set[k.target]
      if (value !== undefined && !isKeyItself(value, k)) return undefined
    }
  }
  for (const clause of plan.whenNotMatched) {
    for (const k of plan.keys) {
      const value = clause.values[k.target]
      if (value === undefined || !isSourceColumn(value, k.source)) return undefined
    }
  }
  const columns = physicalKeyColumns(read.keyColumns, facts.protocol, facts.metadata)
  if (columns === undefined) return undefined
  return Object.freeze({ columns, keys: Object.freeze(keys) })
}

/** `target.<key>` or `source.<its join column>`: equal on a matched row. */
function isKeyItself(e: Expression, k: EquiKey): boolean {
  return isSourceColumn(e, k.source) || isColumn(e, 'target', k.target)
}

function isSourceColumn(e: Expression, name: string): boolean {
  return isColumn(e, 'source', name)
}

function isColumn(e: Expression, side: string, name: string): boolean {
  return e.kind === 'column' && e.path.length === 2 && e.path[0] === side && e.path[1] === name
}
