import type { RoaringBitmapArray } from '../dv/index.js'
import type { DataFileRef } from '../engine/data-plane.js'
import type { Engine } from '../engine/engine.js'
import { InvalidArgumentError } from '../errors/index.js'
import type { AddFile } from '../protocol/actions.js'
import { decodeAddPath } from '../protocol/partition-values.js'
import { mapLimit } from '../util/map-limit.js'
import { loadFileDeletionVector } from './load-deletion-vector.js'

/** How many deletion vectors a scan loads at once (each may be a round trip to the store). */
export const DV_READ_CONCURRENCY = 16

/**
 * Resolves files to what the data plane needs: store keys and deleted positions.
 *
 * @throws {InvalidTableError} on a path escaping the table root
 * @throws {InvalidDeletionVectorError} on a malformed DV
 */
export async function dataFileRefs(
  engine: Engine,
  files: readonly AddFile[],
  signal?: AbortSignal,
): Promise<DataFileRef[]> {
  return mapLimit(files, DV_READ_CONCURRENCY, async (f) => {
    const key = storeKey(f.path)
    const deleted = await loadFileDeletionVector(engine, f, signal)
    // The row-tracking fields travel only where the log has them; the data plane reads them only
    // for a row-tracking scan.
    const tracking =
      f.baseRowId === undefined && f.defaultRowCommitVersion === undefined
        ? {}
        : { baseRowId: f.baseRowId, defaultRowCommitVersion: f.defaultRowCommitVersion }
    return fileRefWithDeletions({ key, partitionValues: f.partitionValues, ...tracking }, deleted)
  })
}

/**
 * A data file reference whose deleted rows are a set: the data plane reads `deletedRowSet`
 * without expanding it, while `deletedRows` stays for data planes that only know the list and
 * is expanded from the set on its first read only. A deletion vector may hold a billion positions
 * in a few hundred KB of runs, which as an array is gigabytes.
 *
 * @param fields - the reference without its deleted rows
 * @param deleted - the deleted positions, none when undefined or empty; the reference holds it
 *   (it is freed with the reference, or by its owner)
 * @returns the frozen reference
 */
export function fileRefWithDeletions(
  fields: Omit<DataFileRef, 'deletedRows' | 'deletedRowSet'>,
  deleted: RoaringBitmapArray | undefined,
): DataFileRef {
  const ref: Record<string, unknown> = { ...fields }
  if (deleted === undefined || deleted.isEmpty) return Object.freeze(ref) as unknown as DataFileRef
  let expanded: ArrayLike<number> | undefined
  ref.deletedRowSet = deleted
  Object.defineProperty(ref, 'deletedRows', {
    enumerable: true,
    get: (): ArrayLike<number> => {
      expanded ??= deleted.lastBigInt()! < 2n ** 32n ? deleted.toSortedUint32Array() : deleted.toArray()
      return expanded
    },
  })
  return Object.freeze(ref) as unknown as DataFileRef
}

function storeKey(path: string): string {
  const decoded = decodeAddPath(path)
  if (decoded.kind === 'relative') return decoded.key
  throw new InvalidArgumentError(
    `Data file ${path} is an absolute URI; delta-rlc reads data files inside the table root`,
    {
      argument: 'path',
    },
  )
}
