import { randomUUID } from 'node:crypto'
import { buildDvFile, createFileDescriptor, initDeletionVectors } from '../dv/index.js'
import type { RoaringBitmapArray } from '../dv/roaring-bitmap-array.js'
import type { WriteTarget, WrittenFile } from '../engine/data-writer.js'
import type { Engine } from '../engine/engine.js'
import type { AddFile, DeletionVectorDescriptor } from '../protocol/actions.js'
import { columnMappingModeProperty, dataSkippingNumIndexedCols } from '../protocol/table-properties.js'
import type { Snapshot } from '../snapshot/snapshot.js'

/**
 * Where and how new data files of a snapshot's table are written.
 *
 * @param snap - the read snapshot
 * @param targetFileSize - bytes per file, when the operation has a preference
 */
export function writeTargetOf(snap: Snapshot, targetFileSize?: number): WriteTarget {
  return Object.freeze({
    schema: snap.schema,
    partitionColumns: snap.partitionColumns,
    columnMappingMode: columnMappingModeProperty(snap.properties),
    targetFileSize,
    statsColumns: dataSkippingNumIndexedCols(snap.properties),
  })
}

/**
 * The AddFile of a newly written data file.
 *
 * @param file - what the writer produced
 * @param nowMs - modification time
 * @param dataChange - false for rearrangements (compaction)
 */
export function addFileOf(file: WrittenFile, nowMs: number, dataChange: boolean): AddFile {
  return Object.freeze({
    path: file.path,
    partitionValues: file.partitionValues,
    size: BigInt(file.size),
    modificationTime: BigInt(nowMs),
    dataChange,
    stats: file.stats,
  })
}

/**
 * Writes deletion vectors to one new DV file beside the table (`deletion_vector_<uuid>.bin`)
 * and returns their descriptors, in input order.
 *
 * @param engine - the table's engine
 * @param bitmaps - the deleted positions of each data file
 * @returns the descriptors (storage type `u`) and the DV file's key, so a failed commit can delete it
 */
export async function writeDeletionVectors(
  engine: Engine,
  bitmaps: readonly RoaringBitmapArray[],
  signal?: AbortSignal,
): Promise<{ descriptors: DeletionVectorDescriptor[]; key: string | undefined }> {
  if (bitmaps.length === 0) return { descriptors: [], key: undefined }
  await initDeletionVectors()
  const file = buildDvFile(bitmaps)
  const uuid = randomUUID()
  const key = `deletion_vector_${uuid}.bin`
  await engine.storage.put(key, file.bytes, { ifNotExists: true, signal })
  const descriptors = file.entries.map((e) =>
    createFileDescriptor({ uuid, offset: e.offset, sizeInBytes: e.sizeInBytes, cardinality: e.cardinality }),
  )
  return { descriptors, key }
}
