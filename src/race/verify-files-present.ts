/**
 * Checks that every file a snapshot references exists: each data file and each deletion-vector
 * file (inline DVs have none). A VACUUM that deleted a file a concurrent writer then committed
 * would leave the table naming a file that is gone; this is the check that catches it.
 */
import { type DeltaTable, FileNotFoundError, isDeltaError, type Snapshot } from '../index.js'
import { decodeAddPath, loadDeletionVector } from '../subpaths/testing.js'
import { mapLimit } from '../util/map-limit.js'

/** How many files are checked at once. */
const CONCURRENCY = 8

/**
 * The files of a snapshot that are missing, data files by path and DV files as
 * `<path> (deletion vector)`, sorted.
 *
 * @param table - the table (its engine does the reads)
 * @param snapshot - the version to check
 * @returns the missing files; empty when every one exists
 */
export async function missingFiles(table: DeltaTable, snapshot: Snapshot): Promise<string[]> {
  const found = await mapLimit(snapshot.activeFiles(), CONCURRENCY, async (f) => {
    const out: string[] = []
    const decoded = decodeAddPath(f.path)
    if (decoded.kind === 'relative') {
      try {
        await table.engine.storage.head(decoded.key)
      } catch (err) {
        if (!(err instanceof FileNotFoundError)) throw err
        out.push(f.path)
      }
    }
    if (f.deletionVector !== undefined && f.deletionVector.storageType !== 'i') {
      try {
        await loadDeletionVector(table.engine, f.deletionVector)
      } catch (err) {
        const gone =
          isDeltaError(err, 'DELTA_INVALID_DELETION_VECTOR') && err.cause instanceof FileNotFoundError
        if (!gone) throw err
        out.push(`${f.path} (deletion vector)`)
      }
    }
    return out
  })
  return found.flat().sort()
}
