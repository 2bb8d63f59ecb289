/**
 * The checks of a winner's non-file actions, in Delta's order: protocol, metadata, domain
 * metadata, application transaction ids (rlc-spec 2.2 steps 2 to 5).
 */
import {
  type ConcurrentModificationError,
  ConcurrentTransactionError,
  type ConflictContext,
  MetadataChangedError,
  ProtocolChangedError,
} from '../errors/index.js'
import { isDomainMetadata, isProtocol, type Metadata } from '../protocol/actions.js'
import { movedHighWaterMarks } from '../protocol/computed-columns.js'
import { stringifyJson } from '../protocol/json-text.js'
import { parseSchema } from '../protocol/schema.js'
import {
  checkReadSupported,
  isFeatureActive,
  readerFeaturesOf,
  writerFeaturesOf,
} from '../protocol/table-features.js'
import { type TransactionInfo, withProtocol } from './transaction-info.js'
import type { WinningCommitSummary } from './winning-commit.js'

/** A check's answer: the (possibly updated) transaction, or the conflict. */
export type CheckOutcome =
  | { readonly kind: 'ok'; readonly txn: TransactionInfo }
  | { readonly kind: 'conflict'; readonly error: ConcurrentModificationError }

const ROW_TRACKING_DOMAIN = 'delta.rowTracking'

/**
 * Protocol compatibility. A winner's protocol conflicts when the transaction also changes the
 * protocol, when it drops a feature or lowers a version, when this library cannot read it, or
 * when it adds a feature that is active under the transaction's metadata (the transaction's
 * actions were prepared without honoring it). Otherwise it is adopted.
 *
 * @param txn - the losing transaction
 * @param winner - the winning commit
 * @returns the transaction with the winner's protocol adopted, or a ProtocolChangedError
 */
export function checkProtocolCompatibility(txn: TransactionInfo, winner: WinningCommitSummary): CheckOutcome {
  const next = winner.protocol
  if (next === undefined) return { kind: 'ok', txn }
  const conflict: CheckOutcome = {
    kind: 'conflict',
    error: new ProtocolChangedError(context(winner, 'checkProtocolCompatibility')),
  }
  if (txn.actions.some(isProtocol)) return conflict
  const read = txn.protocol
  if (next.minReaderVersion < read.minReaderVersion || next.minWriterVersion < read.minWriterVersion) {
    return conflict
  }
  const dropped = missing(readerFeaturesOf(read), readerFeaturesOf(next)).concat(
    missing(writerFeaturesOf(read), writerFeaturesOf(next)),
  )
  if (dropped.length > 0) return conflict
  try {
    checkReadSupported(next)
    const added = missing(writerFeaturesOf(next), writerFeaturesOf(read)).concat(
      missing(readerFeaturesOf(next), readerFeaturesOf(read)),
    )
    if (added.some((f) => isFeatureActive(next, txn.metadata, f))) return conflict
  } catch {
    // A protocol this library cannot read or evaluate is a changed protocol for this transaction.
    return conflict
  }
  return { kind: 'ok', txn: withProtocol(txn, next) }
}

/**
 * Metadata. Any winner `metaData` conflicts, except one identical to the metadata the transaction
 * read when the transaction itself changes none.
 *
 * @param txn - the losing transaction
 * @param winner - the winning commit
 * @returns ok, or a MetadataChangedError
 */
export function checkNoMetadataUpdates(txn: TransactionInfo, winner: WinningCommitSummary): CheckOutcome {
  if (winner.metadataUpdates.length === 0) return { kind: 'ok', txn }
  const identity = !txn.metadataChanged && winner.metadataUpdates.every((m) => sameMetadata(m, txn.metadata))
  if (identity) return { kind: 'ok', txn }
  const reconcileRefused = identityMarksMoved(txn.metadata, winner.metadataUpdates)
  return {
    kind: 'conflict',
    error: new MetadataChangedError(context(winner, 'checkNoMetadataUpdates', { reconcileRefused })),
  }
}

/**
 * Why a metadata change that only moves identity high-water marks cannot be reconciled: the
 * winner generated identity values, and metadata changes never reconcile.
 */
function identityMarksMoved(read: Metadata, updates: readonly Metadata[]): string | undefined {
  const last = updates[updates.length - 1]
  if (last?.schemaString === undefined || read.schemaString === undefined) return undefined
  try {
    const moved = movedHighWaterMarks(parseSchema(read.schemaString), parseSchema(last.schemaString))
    if (moved.length === 0) return undefined
    return `the winner inserted into identity column${moved.length === 1 ? '' : 's'} ${moved.join(', ')} and moved the high-water mark, which lives in the table metadata: concurrent writers to an identity table do not reconcile`
  } catch {
    return undefined
  }
}

/**
 * Domain metadata. A winner `domainMetadata` conflicts when the transaction writes or read the
 * same domain; the row-tracking domain is re-derived at commit and never conflicts.
 *
 * @param txn - the losing transaction
 * @param winner - the winning commit
 * @returns ok, or a ConcurrentTransactionError
 */
export function checkDomainMetadata(txn: TransactionInfo, winner: WinningCommitSummary): CheckOutcome {
  if (winner.domainMetadata.length === 0) return { kind: 'ok', txn }
  const own = new Set<string>(txn.readDomains)
  for (const a of txn.actions) if (isDomainMetadata(a)) own.add(a.domainMetadata.domain)
  for (const d of winner.domainMetadata) {
    if (d.domain === ROW_TRACKING_DOMAIN || !own.has(d.domain)) continue
    return {
      kind: 'conflict',
      error: new ConcurrentTransactionError(context(winner, 'checkDomainMetadata')),
    }
  }
  return { kind: 'ok', txn }
}

/**
 * Application transaction ids. A winner `txn` action for an application id the transaction read
 * conflicts.
 *
 * @param txn - the losing transaction
 * @param winner - the winning commit
 * @returns ok, or a ConcurrentTransactionError
 */
export function checkAppTransactionIds(txn: TransactionInfo, winner: WinningCommitSummary): CheckOutcome {
  for (const t of winner.appLevelTransactions) {
    if (!txn.readAppIds.has(t.appId)) continue
    return {
      kind: 'conflict',
      error: new ConcurrentTransactionError(context(winner, 'checkAppTransactionIds')),
    }
  }
  return { kind: 'ok', txn }
}

/**
 * The context of a conflict error raised against a winner.
 *
 * @param winner - the winning commit
 * @param check - the check that failed
 * @param extra - the file and the refusal reason, when known
 * @returns the context
 */
export function context(
  winner: WinningCommitSummary,
  check: string,
  extra: { readonly file?: string; readonly reconcileRefused?: string | undefined } = {},
): ConflictContext {
  return {
    winnerVersion: winner.version,
    winnerOperation: winner.operation,
    file: extra.file,
    check,
    reconcileRefused: extra.reconcileRefused,
  }
}

// === Internals ===

function missing(from: readonly string[], inside: readonly string[]): string[] {
  const set = new Set(inside)
  return from.filter((f) => !set.has(f))
}

function sameMetadata(a: Metadata, b: Metadata): boolean {
  try {
    return stringifyJson(canonical(a)) === stringifyJson(canonical(b))
  } catch {
    return false
  }
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical)
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const k of Object.keys(value).sort()) out[k] = canonical((value as Record<string, unknown>)[k])
    return out
  }
  return value
}
