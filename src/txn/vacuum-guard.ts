import { resolveDvLocation } from '../dv/index.js'
import type { Engine } from '../engine/engine.js'
import { ConcurrentVacuumError, FileNotFoundError } from '../errors/index.js'
import type { Action, Version } from '../protocol/actions.js'
import { decodeAddPath } from '../protocol/partition-values.js'
import { VACUUM_START_OPERATION, type VacuumStartMark, vacuumMarkOf } from '../protocol/vacuum-commits.js'
import { mapLimit } from '../util/map-limit.js'

/**
 * The VACUUMs a commit attempt has seen among the winners since its read version: each START,
 * and whether its END has been seen after it.
 */
export interface VacuumsSeen {
  readonly starts: VacuumStartMark[]
  /** START versions whose END (a later END commit) has been seen. */
  readonly ended: Set<Version>
}

/** A fresh, empty record. */
export function noVacuumsSeen(): VacuumsSeen {
  return { starts: [], ended: new Set() }
}

/**
 * Notes a winning commit if it is a VACUUM START or END. An END closes every START before it
 * (Delta does not tie an END to its START; with concurrent VACUUMs this is the cautious reading
 * only in that the existence check still runs).
 *
 * @param seen - the record, updated in place
 * @param version - the winner's version
 * @param actions - its actions
 */
export function noteVacuumWinner(seen: VacuumsSeen, version: Version, actions: readonly Action[]): void {
  const mark = vacuumMarkOf(version, actions)
  if (mark === undefined) return
  if (mark.kind === 'start') seen.starts.push(mark)
  else for (const s of seen.starts) if (s.version < version) seen.ended.add(s.version)
}

/** How many heads run at once. */
const HEAD_CONCURRENCY = 8

/**
 * Before a commit attempt that follows a VACUUM START newer than its read version: checks that
 * every file the commit adds (data, change data and deletion-vector files under the table root)
 * still exists, and, while a START has no END yet, that none is old enough for that VACUUM to
 * have chosen it (written more than its protected age before the START). VACUUM lists the table
 * before it commits its START, so a file younger than that cannot be on its list.
 *
 * @param engine - the table's engine
 * @param actions - the actions about to be committed
 * @param seen - the VACUUMs seen since the read version
 * @param signal - stops the checks
 * @throws {ConcurrentVacuumError} when a file is gone or at risk; the transaction is not committed
 */
export async function checkFilesSurviveVacuum(
  engine: Engine,
  actions: readonly Action[],
  seen: VacuumsSeen,
  signal?: AbortSignal,
): Promise<void> {
  if (seen.starts.length === 0) return
  const keys = addedKeys(actions)
  const running = seen.starts.filter((s) => !seen.ended.has(s.version))
  const last = seen.starts[seen.starts.length - 1] as VacuumStartMark
  const verdicts = await mapLimit(keys, HEAD_CONCURRENCY, async (key) => {
    try {
      const meta = await engine.storage.head(key, { signal })
      const risky = running.find((s) => meta.lastModified < s.timestamp - s.protectedAgeMs)
      return risky === undefined ? undefined : { key, missing: false, start: risky }
    } catch (err) {
      if (err instanceof FileNotFoundError) return { key, missing: true, start: last }
      throw err
    }
  })
  const bad = verdicts.find((v) => v !== undefined)
  if (bad === undefined) return
  throw new ConcurrentVacuumError({
    winnerVersion: bad.start.version,
    winnerOperation: VACUUM_START_OPERATION,
    file: bad.key,
    check: 'checkFilesSurviveVacuum',
    missing: bad.missing,
  })
}

/** Store keys of the files a commit's adds and cdc actions name under the table root. */
function addedKeys(actions: readonly Action[]): string[] {
  const keys = new Set<string>()
  const relative = (path: string): void => {
    try {
      const d = decodeAddPath(path)
      if (d.kind === 'relative') keys.add(d.key)
    } catch {
      // An unreadable path was refused when it was staged; nothing to check here.
    }
  }
  for (const a of actions) {
    if ('cdc' in a) relative(a.cdc.path)
    if (!('add' in a)) continue
    relative(a.add.path)
    const dv = a.add.deletionVector
    if (dv === undefined || dv.storageType === 'i') continue
    try {
      const loc = resolveDvLocation(dv)
      if (loc.kind === 'relative') keys.add(loc.path)
    } catch {
      // As above: a malformed descriptor never reaches a commit.
    }
  }
  return [...keys]
}
