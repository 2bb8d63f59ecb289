import type { Reconciliation } from '../conflict/reconciliation.js'
import type { Version } from '../protocol/actions.js'

/** What a committed transaction reports. */
export interface CommitResult {
  /** The version the commit landed as (the read version when there was nothing to commit). */
  readonly version: Version
  /** The operation (`commitInfo.operation`). */
  readonly operation: string
  /** Put attempts, 1 when nobody else committed in between; 0 when nothing was committed. */
  readonly attempts: number
  /** Row-level reconciliations that turned file-level conflicts into this commit. */
  readonly reconciliations: readonly Reconciliation[]
  /** Operation metrics (rows and files added, removed, updated, ...). */
  readonly metrics: Readonly<Record<string, number>>
  /** The transaction id written in `commitInfo.txnId`. */
  readonly txnId: string
  /** False when the transaction had nothing to commit and no version was written. */
  readonly committed: boolean
}
