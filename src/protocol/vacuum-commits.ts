/**
 * The `VACUUM START` / `VACUUM END` commits Delta writes around a VACUUM when vacuum logging is
 * on (`spark.databricks.delta.vacuum.logging.enabled`), and the minimum age below which VACUUM
 * never deletes an untracked file. Pure: building and recognising the commitInfo only.
 */
import type { Action, CommitInfo, Version } from './actions.js'

/** Delta's operation name of the commit a VACUUM writes before it deletes anything. */
export const VACUUM_START_OPERATION = 'VACUUM START'
/** Delta's operation name of the commit a VACUUM writes after its deletes (or their failure). */
export const VACUUM_END_OPERATION = 'VACUUM END'

/**
 * VACUUM never deletes an untracked file (one no add or tombstone of the log names) written less
 * than this long ago, whatever the retention. Such a file is almost always the staged output of a
 * commit still in flight: a writer between its Parquet write and its log put. One hour is longer
 * than any staging plus commit retries of this library by orders of magnitude, and short enough
 * that the files of failed writes are still cleaned up the same day. Files removed by a commit
 * (tracked tombstones) are not held back: a retention of 0 still deletes them at once.
 */
export const MIN_UNTRACKED_FILE_AGE_MS = 3_600_000

/** The engineInfo prefix of this library's commits, whose VACUUM honours the minimum age. */
const OWN_ENGINE_PREFIX = 'delta-rlc/'

/**
 * The commitInfo fields of a `VACUUM START`, as Delta writes them: parameters
 * `retentionCheckEnabled`, `defaultRetentionMillis` and, when a retention was given,
 * `specifiedRetentionMillis`; metrics `numFilesToDelete` and `sizeOfDataToDelete`.
 *
 * @param p - what the VACUUM decided
 * @returns operation, parameters and metrics (strings, as Delta writes metrics)
 */
export function vacuumStartInfo(p: {
  readonly retentionCheckEnabled: boolean
  readonly specifiedRetentionMillis: number | undefined
  readonly defaultRetentionMillis: number
  readonly numFilesToDelete: number
  readonly sizeOfDataToDelete: number
}): { operation: string; parameters: Record<string, unknown>; metrics: Record<string, string> } {
  return {
    operation: VACUUM_START_OPERATION,
    parameters: {
      retentionCheckEnabled: p.retentionCheckEnabled,
      defaultRetentionMillis: p.defaultRetentionMillis,
      ...(p.specifiedRetentionMillis === undefined
        ? {}
        : { specifiedRetentionMillis: p.specifiedRetentionMillis }),
    },
    metrics: {
      numFilesToDelete: String(p.numFilesToDelete),
      sizeOfDataToDelete: String(p.sizeOfDataToDelete),
    },
  }
}

/**
 * The commitInfo fields of a `VACUUM END`, as Delta writes them: parameter `status`
 * (`COMPLETED` or `FAILED`) and, when it completed, metrics `numDeletedFiles` and
 * `numVacuumedDirectories`.
 *
 * @param p - the outcome; counts absent when the deletes failed
 * @returns operation, parameters and metrics
 */
export function vacuumEndInfo(
  p: { readonly numDeletedFiles: number; readonly numVacuumedDirectories: number } | undefined,
): { operation: string; parameters: Record<string, unknown>; metrics: Record<string, string> } {
  return {
    operation: VACUUM_END_OPERATION,
    parameters: { status: p === undefined ? 'FAILED' : 'COMPLETED' },
    metrics:
      p === undefined
        ? {}
        : {
            numDeletedFiles: String(p.numDeletedFiles),
            numVacuumedDirectories: String(p.numVacuumedDirectories),
          },
  }
}

/** A `VACUUM START` found in the log. */
export interface VacuumStartMark {
  readonly kind: 'start'
  readonly version: Version
  /** Its commit time (ms since the epoch); the VACUUM listed the table before it. */
  readonly timestamp: number
  /**
   * Untracked files written at least this long before `timestamp` may be deleted by it: the
   * retention it ran with, and this library's minimum age when it wrote the commit.
   */
  readonly protectedAgeMs: number
}

/**
 * Whether a commit is a `VACUUM START` or `VACUUM END`, and what a concurrent writer needs from
 * a start.
 *
 * @param version - the commit's version
 * @param actions - its actions
 * @returns the mark, or undefined for any other commit
 */
export function vacuumMarkOf(
  version: Version,
  actions: readonly Action[],
): VacuumStartMark | { readonly kind: 'end'; readonly version: Version } | undefined {
  let info: CommitInfo | undefined
  for (const a of actions) if ('commitInfo' in a) info = a.commitInfo
  if (info === undefined) return undefined
  if (info.operation === VACUUM_END_OPERATION) return { kind: 'end', version }
  if (info.operation !== VACUUM_START_OPERATION) return undefined
  const params = info.operationParameters ?? {}
  const retention =
    millisParam(params.specifiedRetentionMillis) ?? millisParam(params.defaultRetentionMillis) ?? 0
  const own = typeof info.engineInfo === 'string' && info.engineInfo.startsWith(OWN_ENGINE_PREFIX)
  const time = info.inCommitTimestamp ?? info.timestamp
  return {
    kind: 'start',
    version,
    // Without a time, the start is taken as now: every staged file is then older than it.
    timestamp: time === undefined ? Number.MAX_SAFE_INTEGER : Number(time),
    protectedAgeMs: own ? Math.max(retention, MIN_UNTRACKED_FILE_AGE_MS) : retention,
  }
}

/** Spark writes parameters as strings; a number is accepted too. */
function millisParam(v: unknown): number | undefined {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : Number.NaN
  return Number.isFinite(n) && n >= 0 ? n : undefined
}
