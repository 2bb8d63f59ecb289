/** Indexes of a transaction's file actions by path, for the reconciliations. */

import { type Action, type AddFile, isAdd, isRemove, type RemoveFile } from '../protocol/actions.js'

/** A transaction's file actions indexed by path. */
export interface FileActionIndex {
  /** Paths with exactly one `add`. */
  readonly adds: ReadonlyMap<string, AddFile>
  /** Paths with exactly one `remove`. */
  readonly removes: ReadonlyMap<string, RemoveFile>
  /** Paths with more than one `add` or more than one `remove`: never reconciled. */
  readonly ambiguous: ReadonlySet<string>
  /** Every path with an `add` or a `remove`. */
  readonly touched: ReadonlySet<string>
}

/**
 * Indexes file actions by path.
 *
 * @param actions - a transaction's actions
 * @returns the index
 */
export function indexFileActions(actions: readonly Action[]): FileActionIndex {
  const adds = new Map<string, AddFile>()
  const removes = new Map<string, RemoveFile>()
  const ambiguous = new Set<string>()
  const touched = new Set<string>()
  for (const a of actions) {
    if (isAdd(a)) {
      if (adds.has(a.add.path)) ambiguous.add(a.add.path)
      adds.set(a.add.path, a.add)
      touched.add(a.add.path)
    } else if (isRemove(a)) {
      if (removes.has(a.remove.path)) ambiguous.add(a.remove.path)
      removes.set(a.remove.path, a.remove)
      touched.add(a.remove.path)
    }
  }
  for (const p of ambiguous) {
    adds.delete(p)
    removes.delete(p)
  }
  return { adds, removes, ambiguous, touched }
}
