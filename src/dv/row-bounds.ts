/**
 * A deletion vector may only name rows its data file has. A DV with a valid checksum that deletes
 * positions at or past the file's `numRecords` is not a harmless oddity: the row count from the
 * log (`numRecords - cardinality`) and the rows a scan returns then disagree, and the count can
 * even go negative. Such a DV is refused wherever the file is read.
 */
import { InvalidDeletionVectorError } from '../errors/index.js'
import { type DvDescriptorLike, resolveDvLocation } from './descriptor.js'
import type { RoaringBitmapArray } from './roaring-bitmap-array.js'

const HINT =
  'The deletion vector names rows its data file does not have, so the log and the data disagree on which rows are live. ' +
  'Restore the table to a version before the commit that wrote it, or remove the file with the tool that wrote it.'

/**
 * Refuses a descriptor whose cardinality exceeds the data file's row count. Needs no I/O: both
 * numbers are in the log.
 *
 * @param descriptor - the file's `deletionVector`
 * @param numRecords - the file's `stats.numRecords`; nothing is checked when unknown
 * @param dataFile - the data file's path as in the log, named in the error
 * @throws {InvalidDeletionVectorError} when `cardinality > numRecords`
 */
export function checkDvCardinalityFitsFile(
  descriptor: DvDescriptorLike,
  numRecords: bigint | undefined,
  dataFile: string,
): void {
  if (numRecords === undefined) return
  const cardinality = BigInt(descriptor.cardinality)
  if (cardinality <= numRecords) return
  throw new InvalidDeletionVectorError(
    `The deletion vector of data file ${dataFile} deletes ${cardinality} rows, but the file has ${numRecords} rows`,
    { path: dvName(descriptor), hint: HINT },
  )
}

/**
 * Refuses a loaded deletion vector that deletes a position at or past the data file's row count.
 *
 * @param bitmap - the decoded DV
 * @param descriptor - its descriptor (for the DV's name in the error)
 * @param numRecords - the file's `stats.numRecords`; nothing is checked when unknown
 * @param dataFile - the data file's path as in the log, named in the error
 * @throws {InvalidDeletionVectorError} when the largest position is `>= numRecords`
 */
export function checkDvPositionsFitFile(
  bitmap: RoaringBitmapArray,
  descriptor: DvDescriptorLike,
  numRecords: bigint | undefined,
  dataFile: string,
): void {
  if (numRecords === undefined) return
  const last = bitmap.lastBigInt()
  if (last === undefined || last < numRecords) return
  throw new InvalidDeletionVectorError(
    `The deletion vector of data file ${dataFile} deletes row position ${last}, but the file has ${numRecords} rows (positions 0 to ${numRecords - 1n})`,
    { path: dvName(descriptor), hint: HINT },
  )
}

/** The DV's file (or `inline`) for messages; the raw id when it does not even resolve. */
function dvName(descriptor: DvDescriptorLike): string {
  try {
    const loc = resolveDvLocation(descriptor)
    return loc.kind === 'inline' ? 'inline' : loc.kind === 'relative' ? loc.path : loc.uri
  } catch {
    return descriptor.pathOrInlineDv
  }
}
