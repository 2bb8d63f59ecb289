/**
 * File actions derived from other file actions, as the protocol shapes them: the tombstone of an
 * `add`, the pre-image of a tombstone, an `add` with a new deletion vector, and the "without tight
 * bounds" stats rewrite. Operations, reconciliations and VACUUM all build their actions with these.
 */

import {
  type AddFile,
  createAddFile,
  createRemoveFile,
  type DeletionVectorDescriptor,
  type RemoveFile,
} from './actions.js'
import { parseJsonText, stringifyJson } from './json-text.js'

/**
 * The tombstone of an `add` (rlc-spec 1.1): path, partition values, size, tags, deletion vector,
 * row-tracking fields and stats copied; `extendedFileMetadata` set.
 *
 * @param add - the logical file leaving the table
 * @param deletionTimestamp - when it left, or undefined to leave it unset
 * @param dataChange - whether the removal changes data
 * @returns the `remove` payload
 */
export function tombstoneOf(
  add: AddFile,
  deletionTimestamp: bigint | undefined,
  dataChange: boolean,
): RemoveFile {
  return createRemoveFile({
    path: add.path,
    deletionTimestamp,
    dataChange,
    extendedFileMetadata: true,
    partitionValues: add.partitionValues,
    size: add.size,
    stats: add.stats,
    tags: add.tags,
    deletionVector: add.deletionVector,
    baseRowId: add.baseRowId,
    defaultRowCommitVersion: add.defaultRowCommitVersion,
  })
}

/**
 * A tombstone seen as the file it removed, with the deletion vector it had (the pre-image).
 *
 * @param remove - the tombstone
 * @returns an `add` payload with the tombstone's path, partition values, size, stats, tags and DV
 */
export function preImageOf(remove: RemoveFile): AddFile {
  return createAddFile({
    path: remove.path,
    partitionValues: remove.partitionValues ?? {},
    size: remove.size ?? 0n,
    modificationTime: 0n,
    dataChange: remove.dataChange,
    stats: remove.stats,
    tags: remove.tags,
    deletionVector: remove.deletionVector,
    baseRowId: remove.baseRowId,
    defaultRowCommitVersion: remove.defaultRowCommitVersion,
  })
}

/**
 * An `add` with another deletion vector and `dataChange`, its stats marked as not tight (the
 * min/max no longer need to be attained by a live row).
 *
 * @param add - the file
 * @param dv - its new deletion vector
 * @param dataChange - the new `dataChange`
 * @returns the rewritten `add`
 */
export function withNewDeletionVector(
  add: AddFile,
  dv: DeletionVectorDescriptor,
  dataChange: boolean,
): AddFile {
  return createAddFile({ ...add, deletionVector: dv, dataChange, stats: statsWithoutTightBounds(add.stats) })
}

/**
 * Stats JSON with `tightBounds` set to false (rlc-spec 1.2). Numbers keep their exact text;
 * absent, unparsable or already-loose stats are returned unchanged.
 *
 * @param stats - the stats JSON text, or undefined
 * @returns the rewritten text
 */
function statsWithoutTightBounds(stats: string | undefined): string | undefined {
  if (stats === undefined || stats === '') return stats
  let parsed: unknown
  try {
    parsed = parseJsonText(stats)
  } catch {
    return stats
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return stats
  const obj = parsed as Record<string, unknown>
  if (obj.tightBounds === false) return stats
  return stringifyJson({ ...obj, tightBounds: false })
}
