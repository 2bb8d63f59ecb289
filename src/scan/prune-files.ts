import { InvalidArgumentError } from '../errors/index.js'
import type { Expression } from '../expressions/ast.js'
import { columnsOf } from '../expressions/ast.js'
import { type ColumnResolver, columnsFromSchema } from '../expressions/columns.js'
import { mayMatchFile } from '../expressions/evaluate-stats.js'
import type { AddFile } from '../protocol/actions.js'
import { parseStats } from '../protocol/stats.js'
import { columnMappingModeProperty } from '../protocol/table-properties.js'
import type { Snapshot } from '../snapshot/snapshot.js'

/** The files a predicate may need, and how many were proven irrelevant. */
export interface PruneResult {
  /** Files that may hold matching rows. */
  readonly files: readonly AddFile[]
  /** Files skipped. */
  readonly skipped: number
}

/**
 * The column resolver of a snapshot: types, physical names, partition membership.
 *
 * @param snap - the snapshot
 */
export function snapshotColumns(snap: Snapshot): ColumnResolver {
  return columnsFromSchema(snap.schema, {
    partitionColumns: snap.partitionColumns,
    columnMapping: columnMappingModeProperty(snap.properties) !== 'none',
  })
}

/**
 * Checks that every column a predicate names exists in the snapshot's schema.
 *
 * @throws {InvalidArgumentError} naming the unknown column and the known ones
 */
export function checkPredicateColumns(
  snap: Snapshot,
  predicate: Expression,
  columns = snapshotColumns(snap),
): void {
  for (const path of columnsOf(predicate)) {
    if (columns.resolve(path) === undefined) {
      throw new InvalidArgumentError(`Unknown column '${path.join('.')}' in predicate`, {
        argument: 'where',
        hint: `The table has: ${snap.schema.fields.map((f) => f.name).join(', ')}`,
      })
    }
  }
}

/**
 * Keeps the files whose partition values and statistics do not rule out a match. A file is
 * dropped only when that is proven; files without stats are always kept.
 *
 * @param snap - the snapshot the files belong to
 * @param files - candidate files
 * @param predicate - the predicate, or undefined to keep everything
 * @returns the kept files and the number skipped
 */
export function pruneFiles(
  snap: Snapshot,
  files: readonly AddFile[],
  predicate: Expression | undefined,
): PruneResult {
  if (!predicate) return { files, skipped: 0 }
  const columns = snapshotColumns(snap)
  checkPredicateColumns(snap, predicate, columns)
  const kept = files.filter((f) => mayMatchFile(predicate, parseStats(f.stats), f.partitionValues, columns))
  return { files: kept, skipped: files.length - kept.length }
}
