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
    const deletedRows = deleted?.toArray()
    deleted?.dispose()
    const ref: DataFileRef = { key, deletedRows, partitionValues: f.partitionValues }
    // The row-tracking fields travel only where the log has them; the data plane reads them only
    // for a row-tracking scan.
    if (f.baseRowId === undefined && f.defaultRowCommitVersion === undefined) return Object.freeze(ref)
    return Object.freeze({
      ...ref,
      baseRowId: f.baseRowId,
      defaultRowCommitVersion: f.defaultRowCommitVersion,
    })
  })
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
