/**
 * Explains a read of an older version that failed because a file is gone: names the VACUUM
 * that ran after that version and the oldest version whose files are all still there.
 */

import { resolveDvLocation } from '../dv/index.js'
import type { Engine } from '../engine/engine.js'
import { FileNotFoundError, InvalidDeletionVectorError } from '../errors/index.js'
import type { AddFile, Version } from '../protocol/actions.js'
import { decodeAddPath } from '../protocol/partition-values.js'
import { VACUUM_START_OPERATION } from '../protocol/vacuum-commits.js'
import { advanceSnapshot } from '../snapshot/advance-snapshot.js'
import { readCommitsFrom } from '../snapshot/log-reader.js'
import type { Snapshot } from '../snapshot/snapshot.js'
import { mapLimit } from '../util/map-limit.js'

/** Versions after the one read that are tried for being fully readable. */
const MAX_VERSIONS_TRIED = 200

/**
 * The missing file behind a failed read, if that is what failed: a data file, or the file of a
 * deletion vector.
 *
 * @param err - what the read threw
 * @returns the missing file's path, or undefined for any other failure
 */
export function missingFileOf(err: unknown): string | undefined {
  if (err instanceof FileNotFoundError) return err.path
  if (err instanceof InvalidDeletionVectorError && err.cause instanceof FileNotFoundError)
    return err.cause.path
  return undefined
}

/**
 * A `FileNotFoundError` for a file of `snap` that is gone, with a hint naming the VACUUM that
 * ran after `snap` (its START version) and the oldest later version whose data and DV files all
 * exist. Best effort: when the log cannot tell, the hint says what it can.
 *
 * @param engine - the table's engine
 * @param snap - the version that was read
 * @param path - the missing file
 * @param cause - the original failure
 * @returns the error to throw
 */
export async function vacuumedFileError(
  engine: Engine,
  snap: Snapshot,
  path: string,
  cause: unknown,
): Promise<FileNotFoundError> {
  let vacuum: Version | undefined
  let readable: Version | undefined
  let latest = snap.version
  try {
    const later = await readCommitsFrom(engine, snap.version + 1n)
    for (const c of later) {
      const op = c.actions.find((a) => 'commitInfo' in a)
      if (
        vacuum === undefined &&
        op !== undefined &&
        'commitInfo' in op &&
        op.commitInfo.operation === VACUUM_START_OPERATION
      )
        vacuum = c.version
    }
    latest = later.at(-1)?.version ?? snap.version
    const present = new Map<string, Promise<boolean>>()
    let s = snap
    for (let v = snap.version + 1n; v <= latest && v <= snap.version + BigInt(MAX_VERSIONS_TRIED); v++) {
      s = await advanceSnapshot(engine, s, { toVersion: v })
      if (await allPresent(engine, s.activeFiles(), present)) {
        readable = v
        break
      }
    }
  } catch {
    // The explanation is best effort; the missing file is the answer either way.
  }
  if (latest === snap.version) {
    return new FileNotFoundError(path, {
      cause,
      hint: 'The latest version names a file that is gone (deleted outside the table, or restored from a partial backup): `delta-rlc fsck` lists such files, `fsck --repair` removes them from the table.',
    })
  }
  const by =
    vacuum === undefined
      ? 'A VACUUM (or a manual delete) removed it after this version.'
      : `The VACUUM that started at version ${vacuum} deleted it: this version's files were past the retention.`
  const then =
    readable === undefined
      ? ' No later version checked has all its files; read the latest version.'
      : ` The oldest fully readable version after it is ${readable}.`
  return new FileNotFoundError(path, {
    cause,
    hint: `${by}${then} VACUUM keeps the files of versions inside delta.deletedFileRetentionDuration (default 7 days); a shorter retention breaks time travel further back.`,
  })
}

async function allPresent(
  engine: Engine,
  files: readonly AddFile[],
  present: Map<string, Promise<boolean>>,
): Promise<boolean> {
  const exists = (key: string): Promise<boolean> => {
    let known = present.get(key)
    if (known === undefined) {
      known = engine.storage.head(key).then(
        () => true,
        (err: unknown) => {
          if (err instanceof FileNotFoundError) return false
          throw err
        },
      )
      present.set(key, known)
    }
    return known
  }
  const keys: string[] = []
  for (const f of files) {
    const d = decodeAddPath(f.path)
    if (d.kind === 'relative') keys.push(d.key)
    if (f.deletionVector !== undefined && f.deletionVector.storageType !== 'i') {
      const loc = resolveDvLocation(f.deletionVector)
      if (loc.kind === 'relative') keys.push(loc.path)
    }
  }
  const found = await mapLimit(keys, 8, exists)
  return found.every((x) => x)
}
