/**
 * Writing In-Commit Timestamps (protocol.md section 11): with the `inCommitTimestamp` feature
 * active, every commit's first action is a commitInfo carrying `inCommitTimestamp`, strictly
 * greater than the previous commit's; the commit that turns them on for a table with history
 * records where they start in the table properties.
 */
import type { Action, Metadata, Protocol, Version } from '../protocol/actions.js'
import { isFeatureActive } from '../protocol/table-features.js'
import { TableProperty } from '../protocol/table-properties.js'

/** The writer feature commits honor by stamping In-Commit Timestamps. */
export const IN_COMMIT_TIMESTAMP_FEATURE = 'inCommitTimestamp'

/** How the commits of one transaction are stamped. */
export interface InCommitTimestampPlan {
  /**
   * The time the first attempt must exceed: the read version's In-Commit Timestamp, or its commit
   * file's modification time when this commit turns them on.
   */
  readonly previous: bigint
  /** Whether this commit turns In-Commit Timestamps on: it records the enablement properties. */
  readonly enables: boolean
  /**
   * Enablement properties the read version has and this commit's metaData dropped: carried
   * over, or the time travel rules of the older commits would be lost.
   */
  readonly carried: Readonly<Record<string, string>>
}

/**
 * Whether a commit must carry an In-Commit Timestamp, decided by the protocol and metadata the
 * table has once the commit lands (its own protocol or metaData action, else the read
 * version's).
 *
 * @param read - the read version: protocol, metadata and commit time (ms)
 * @param actions - the commit's actions
 * @returns the plan, or `undefined` when the commit carries no In-Commit Timestamp
 * @throws {InvalidArgumentError} when a property In-Commit Timestamps depend on is invalid
 */
export function planInCommitTimestamps(
  read: { readonly protocol: Protocol; readonly metadata: Metadata; readonly timestamp: number },
  actions: readonly Action[],
): InCommitTimestampPlan | undefined {
  let protocol = read.protocol
  let metadata: Metadata | undefined
  for (const a of actions) {
    if ('protocol' in a) protocol = a.protocol
    else if ('metaData' in a) metadata = a.metaData
  }
  if (!isFeatureActive(protocol, metadata ?? read.metadata, IN_COMMIT_TIMESTAMP_FEATURE)) return undefined
  const enables = !isFeatureActive(read.protocol, read.metadata, IN_COMMIT_TIMESTAMP_FEATURE)
  const carried: Record<string, string> = {}
  if (!enables && metadata !== undefined) {
    for (const key of ENABLEMENT_KEYS) {
      const before = read.metadata.configuration[key]
      if (before !== undefined && metadata.configuration[key] === undefined) carried[key] = before
    }
  }
  return Object.freeze({ previous: BigInt(read.timestamp), enables, carried: Object.freeze(carried) })
}

const ENABLEMENT_KEYS = [
  TableProperty.inCommitTimestampEnablementVersion,
  TableProperty.inCommitTimestampEnablementTimestamp,
] as const

/**
 * The In-Commit Timestamp of an attempt: the wall clock, or one millisecond after the previous
 * commit's when the clock is behind it.
 *
 * @param previous - the previous commit's timestamp (ms)
 * @param now - the attempt's wall-clock time (ms)
 * @returns the timestamp (ms)
 */
export function nextInCommitTimestamp(previous: bigint, now: number = Date.now()): bigint {
  const wall = BigInt(Math.floor(now))
  return wall > previous ? wall : previous + 1n
}

/**
 * The actions of one attempt at `version` with timestamp `ict`: the metaData action gets the
 * enablement properties when the commit turns In-Commit Timestamps on (version and timestamp of
 * this very attempt, so a retry at a later version rewrites them), or the carried-over ones.
 *
 * @param actions - the commit's actions (without commitInfo)
 * @param plan - the transaction's plan
 * @param version - the version this attempt writes
 * @param ict - this attempt's In-Commit Timestamp
 * @returns the actions to write
 */
export function stampActions(
  actions: readonly Action[],
  plan: InCommitTimestampPlan,
  version: Version,
  ict: bigint,
): readonly Action[] {
  const extra: Record<string, string> = plan.enables
    ? {
        [TableProperty.inCommitTimestampEnablementVersion]: version.toString(),
        [TableProperty.inCommitTimestampEnablementTimestamp]: ict.toString(),
      }
    : plan.carried
  if (Object.keys(extra).length === 0) return actions
  return actions.map((a) =>
    'metaData' in a
      ? { metaData: { ...a.metaData, configuration: { ...a.metaData.configuration, ...extra } } }
      : a,
  )
}
