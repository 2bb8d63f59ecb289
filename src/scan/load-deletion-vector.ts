import {
  checkDvCardinalityFitsFile,
  checkDvPositionsFitFile,
  decodeInlineDv,
  dvByteRange,
  initDeletionVectors,
  parseDvRange,
  resolveDvLocation,
} from '../dv/index.js'
import type { RoaringBitmapArray } from '../dv/roaring-bitmap-array.js'
import type { Engine } from '../engine/engine.js'
import { FileNotFoundError, InvalidDeletionVectorError, UnsupportedError } from '../errors/index.js'
import type { AddFile, DeletionVectorDescriptor } from '../protocol/actions.js'
import { canonicalLogPath, tableRootOf } from '../protocol/log-paths.js'
import { decodeAddPath } from '../protocol/partition-values.js'
import { parseStats } from '../protocol/stats.js'

/**
 * Reads the deletion vector a descriptor points at: inline, a `u` file beside the table, or a
 * `p` absolute path inside the table root. Only the DV's own bytes are read (a range), then
 * size, checksum and cardinality are verified.
 *
 * @param engine - the table's engine
 * @param dv - the descriptor from an `add` or `remove`
 * @param signal - cancellation
 * @returns the set of deleted row positions
 * @throws {InvalidDeletionVectorError} when the DV is malformed or its file is missing
 * @throws {UnsupportedError} for an absolute DV path outside the table root
 */
export async function loadDeletionVector(
  engine: Engine,
  dv: DeletionVectorDescriptor,
  signal?: AbortSignal,
): Promise<RoaringBitmapArray> {
  await initDeletionVectors()
  const loc = resolveDvLocation(dv)
  if (loc.kind === 'inline') return decodeInlineDv(dv)
  const key = loc.kind === 'relative' ? loc.path : keyForAbsolute(engine, loc.uri)
  const range = dvByteRange(loc.offset, dv.sizeInBytes, key)
  let bytes: Uint8Array
  try {
    bytes = await engine.storage.read(key, range, { signal })
  } catch (err) {
    if (err instanceof FileNotFoundError) {
      throw new InvalidDeletionVectorError('The deletion vector file does not exist', {
        path: key,
        cause: err,
      })
    }
    throw err
  }
  return parseDvRange(bytes, dv.sizeInBytes, dv.cardinality, key)
}

/**
 * Reads the deletion vector of a data file and checks it against the file: the DV may not delete
 * more rows than the file has, nor any position at or past its `stats.numRecords` (both are
 * checked only when the stats carry `numRecords`). The cardinality is checked before any I/O.
 *
 * @param engine - the table's engine
 * @param file - the file's path (named in errors), deletion vector and stats
 * @param signal - cancellation
 * @returns the deleted row positions, or undefined when the file has no DV
 * @throws {InvalidDeletionVectorError} when the DV is malformed, missing, or names rows past the
 *   end of the file
 * @throws {UnsupportedError} for an absolute DV path outside the table root
 */
export async function loadFileDeletionVector(
  engine: Engine,
  file: Pick<AddFile, 'path' | 'deletionVector' | 'stats'>,
  signal?: AbortSignal,
): Promise<RoaringBitmapArray | undefined> {
  const dv = file.deletionVector
  if (dv === undefined) return undefined
  const numRecords = parseStats(file.stats)?.numRecords
  checkDvCardinalityFitsFile(dv, numRecords, file.path)
  const bitmap = await loadDeletionVector(engine, dv, signal)
  try {
    checkDvPositionsFitFile(bitmap, dv, numRecords, file.path)
  } catch (err) {
    bitmap.dispose()
    throw err
  }
  return bitmap
}

/** Maps an absolute DV URI to a key of the table's store, when it lies inside the table root. */
function keyForAbsolute(engine: Engine, uri: string): string {
  const root = tableRootOf(engine.storage)
  const canonical = canonicalLogPath(uri, root)
  const decoded = decodeAddPath(canonical)
  if (decoded.kind === 'relative') return decoded.key
  throw new UnsupportedError(
    `The deletion vector at ${uri} lies outside the table root; delta-rlc reads absolute DV paths only inside the table`,
  )
}
