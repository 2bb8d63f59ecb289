import { randomUUID } from 'node:crypto'
import type { ConflictFlags } from '../conflict/flags.js'
import { createTransactionInfo } from '../conflict/transaction-info.js'
import type { Engine } from '../engine/engine.js'
import { ConcurrentModificationError } from '../errors/index.js'
import type { CommitInfo, Version } from '../protocol/actions.js'
import { columnSpecs } from '../scan/column-specs.js'
import { loadSnapshot } from '../snapshot/load-snapshot.js'
import type { Snapshot } from '../snapshot/snapshot.js'
import { runCommitLoop } from './commit-loop.js'
import { type CommitRetryPolicy, DEFAULT_RETRY_POLICY } from './commit-options.js'
import { planInCommitTimestamps } from './in-commit-timestamps.js'
import { ENGINE_INFO } from './transaction.js'

/** What a commit of only a commitInfo records. */
export interface LogOnlyCommit {
  readonly operation: string
  readonly parameters: Readonly<Record<string, unknown>>
  /** Metrics as Delta writes them (strings). */
  readonly metrics: Readonly<Record<string, string>>
}

/**
 * Commits a version that holds a commitInfo and nothing else, as Delta's VACUUM START / END
 * do: it changes no file, no metadata and no data. The loop moves it past concurrent commits;
 * a winner that changed the metadata or protocol (which the loop treats as a conflict) makes it
 * start again on the latest snapshot, since there is nothing to rebase.
 *
 * @param engine - the table's engine
 * @param read - the snapshot it is committed on (its version is the read version)
 * @param commit - operation, parameters and metrics
 * @param options - conflict flags, retry policy, signal
 * @returns the version it landed at
 */
export async function commitLogOnly(
  engine: Engine,
  read: Snapshot,
  commit: LogOnlyCommit,
  options: {
    readonly flags: ConflictFlags
    readonly retry?: Partial<CommitRetryPolicy> | undefined
    readonly signal?: AbortSignal | undefined
  },
): Promise<Version> {
  let snap = read
  for (let attempt = 1; ; attempt++) {
    try {
      return await commitOnce(engine, snap, commit, options)
    } catch (err) {
      if (!(err instanceof ConcurrentModificationError) || attempt >= LOG_ONLY_ATTEMPTS) throw err
      snap = await loadSnapshot(engine, snap.location, { signal: options.signal })
    }
  }
}

/** Fresh starts after a metadata or protocol change won the race. */
const LOG_ONLY_ATTEMPTS = 5

async function commitOnce(
  engine: Engine,
  snap: Snapshot,
  commit: LogOnlyCommit,
  options: Parameters<typeof commitLogOnly>[3],
): Promise<Version> {
  const txnId = randomUUID()
  const info = createTransactionInfo({
    readVersion: snap.version,
    operation: commit.operation,
    isolationLevel: 'SnapshotIsolation',
    actions: [],
    metadata: snap.metadata,
    protocol: snap.protocol,
  })
  const commitInfo: CommitInfo = {
    timestamp: BigInt(Date.now()),
    operation: commit.operation,
    operationParameters: Object.fromEntries(
      Object.entries(commit.parameters).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
    ),
    readVersion: snap.version,
    isolationLevel: 'SnapshotIsolation',
    isBlindAppend: true,
    operationMetrics: { ...commit.metrics },
    engineInfo: ENGINE_INFO,
    txnId,
  }
  const result = await runCommitLoop({
    engine,
    txn: info,
    commitInfo,
    txnId,
    flags: options.flags,
    explain: false,
    retry: { ...DEFAULT_RETRY_POLICY, ...options.retry },
    columns: columnSpecs(snap, undefined),
    signal: options.signal,
    inCommitTimestamps: planInCommitTimestamps(snap, []),
  })
  return result.version
}
