import { checkConflicts } from '../conflict/check-conflicts.js'
import { explainConflict, explanationFlags, withRemedy } from '../conflict/explain-conflict.js'
import { type FetchedFacts, type FetchPlan, NO_FETCHED_FACTS } from '../conflict/fetched-facts.js'
import { anyReconciliationEnabled, type ConflictFlags } from '../conflict/flags.js'
import { planConflictFetches } from '../conflict/plan-fetches.js'
import type { Reconciliation } from '../conflict/reconciliation.js'
import type { TransactionInfo } from '../conflict/transaction-info.js'
import { summarizeWinningCommit, type WinningCommitSummary } from '../conflict/winning-commit.js'
import { initDeletionVectors } from '../dv/index.js'
import type { RoaringBitmapArray } from '../dv/roaring-bitmap-array.js'
import type { ColumnSpec } from '../engine/data-plane.js'
import type { Engine } from '../engine/engine.js'
import {
  CommitStateUnknownError,
  ConcurrentModificationError,
  FileAlreadyExistsError,
  FileNotFoundError,
  isDeltaError,
  MaxCommitRetriesError,
  StorageError,
} from '../errors/index.js'
import { dvUniqueId } from '../log/replay.js'
import { serializeCommit } from '../protocol/action-json.js'
import type { Action, CommitInfo, DeletionVectorDescriptor, Version } from '../protocol/actions.js'
import { commitKey } from '../protocol/log-files.js'
import { tableRootOf } from '../protocol/log-paths.js'
import { decodeAddPath } from '../protocol/partition-values.js'
import { fileRefWithDeletions } from '../scan/data-file-refs.js'
import { loadDeletionVector } from '../scan/load-deletion-vector.js'
import { parseLogBytes, readCommit, readCommitsFrom } from '../snapshot/log-reader.js'
import type { FileMeta } from '../storage/object-store.js'
import { appendAll } from '../util/arrays.js'
import { mapLimit } from '../util/map-limit.js'
import { backoffDelay, type CommitRetryPolicy, lostRaceDelay } from './commit-options.js'
import { loadRowIdLookups } from './conflict-row-id-lookups.js'
import { loadRowReads } from './conflict-row-reads.js'
import { type InCommitTimestampPlan, nextInCommitTimestamp, stampActions } from './in-commit-timestamps.js'
import { checkFilesSurviveVacuum, noteVacuumWinner, noVacuumsSeen } from './vacuum-guard.js'

/** Everything the loop needs to land one transaction. */
export interface CommitLoopRequest {
  readonly engine: Engine
  /** The losing-transaction description the conflict checker works on. */
  readonly txn: TransactionInfo
  /** The commitInfo to write first in the commit (txnId included). */
  readonly commitInfo: CommitInfo
  readonly txnId: string
  readonly flags: ConflictFlags
  /** Name in a conflict's hint what would have reconciled it (an extra check; default true). */
  readonly explain?: boolean | undefined
  readonly retry: CommitRetryPolicy
  /** The read snapshot's columns, for row queries of the conflict checker. */
  readonly columns: readonly ColumnSpec[]
  readonly signal?: AbortSignal | undefined
  /** Random source for backoff jitter (tests pass a seeded one). */
  readonly random?: () => number
  /**
   * Filled in by the loop when a put's outcome becomes unknown, and left so: a caller that then
   * sees the loop fail (an abort included) knows the commit may have landed, and must not delete
   * the files it references.
   */
  readonly uncertainty?: CommitUncertainty | undefined
  /**
   * Present when commits carry In-Commit Timestamps: each attempt stamps one above the previous
   * commit's, and a lost race raises that floor to the winner's.
   */
  readonly inCommitTimestamps?: InCommitTimestampPlan | undefined
  /** Wall clock for In-Commit Timestamps (tests pass a fixed one). */
  readonly now?: () => number
}

/** What the loop achieved. */
export interface CommitLoopResult {
  readonly version: Version
  readonly attempts: number
  readonly reconciliations: readonly Reconciliation[]
  /** The actions finally committed (after reconciliations rewrote them). */
  readonly actions: readonly Action[]
  /**
   * The whole commit (commitInfo first) as a read of its file parses it; absent when the commit
   * was found landed after an ambiguous put.
   */
  readonly committed?: readonly Action[]
  /** The commit file's metadata, when the store reported it from the put. */
  readonly file?: FileMeta | undefined
}

/**
 * Commits a transaction with optimistic concurrency: put-if-absent of the next log version; on
 * losing the race, every winning commit since the read version is checked in order (and
 * reconciled at row level where the flags allow and it is proven), then the put is retried
 * after the last winner at once, but for a few milliseconds of jitter (the check itself spaced
 * the attempts; a longer wait only lets others take the version). Storage failures are retried
 * with bounded exponential backoff and jitter.
 *
 * After a winner that is a VACUUM START, every later attempt first checks that the files the
 * commit adds survive that VACUUM (`checkFilesSurviveVacuum`): a commit never references a file
 * a concurrent VACUUM deleted.
 *
 * A put whose outcome is unknown (an ambiguous storage error) is resolved from the log: the
 * commit carries a unique txnId, and a version holding it is this transaction's own, so the
 * same work is never committed twice.
 *
 * @throws {ConcurrentModificationError} when a winner genuinely conflicts
 * @throws {ConcurrentVacuumError} when a concurrent VACUUM deleted a file the commit adds
 * @throws {MaxCommitRetriesError} after `retry.maxAttempts` puts
 * @throws {CommitStateUnknownError} when storage keeps failing ambiguously and the log cannot
 *   tell whether the commit landed
 */
export async function runCommitLoop(req: CommitLoopRequest): Promise<CommitLoopResult> {
  const uncertainty: CommitUncertainty = req.uncertainty ?? {}
  try {
    return await commitLoop(req, uncertainty)
  } catch (err) {
    // After a put whose outcome is unknown, a failure to settle it must not look like a plain
    // error: a caller who simply retried could commit the same work twice. A genuine conflict is
    // still reported as such: the scan of winners always covers the uncertain version, so had
    // that put landed, it would have been found there.
    const settledByConflict = err instanceof ConcurrentModificationError
    const aborted = err instanceof Error && err.name === 'AbortError'
    if (
      uncertainty.version !== undefined &&
      !settledByConflict &&
      !aborted &&
      !(err instanceof CommitStateUnknownError)
    ) {
      throw new CommitStateUnknownError(uncertainty.version, req.txnId, { cause: err })
    }
    throw err
  }
}

/** The version of the last put whose outcome was unknown, once there was one. */
export interface CommitUncertainty {
  version?: Version
}

async function commitLoop(req: CommitLoopRequest, uncertainty: CommitUncertainty): Promise<CommitLoopResult> {
  const { engine, flags, signal } = req
  const random = req.random ?? Math.random
  // The row-level phases decode deletion vectors; the codec needs its one-time set-up first.
  if (anyReconciliationEnabled(flags)) await initDeletionVectors()
  let txn = req.txn
  let attemptVersion = txn.readVersion + 1n
  const reconciliations: Reconciliation[] = []
  let attempts = 0
  let storageFailures = 0
  const ictPlan = req.inCommitTimestamps
  let ictFloor = ictPlan?.previous ?? 0n
  const dvCache: DvCache = new Map()
  // What each attempt wrote, by version: an ambiguous put found landed later returns its own.
  const written = new Map<Version, readonly Action[]>()
  // A VACUUM that committed its START after the read version may have deleted staged files.
  const vacuums = noVacuumsSeen()
  for (;;) {
    signal?.throwIfAborted()
    if (attempts >= req.retry.maxAttempts) throw new MaxCommitRetriesError(attempts)
    attempts++
    let commitInfo: CommitInfo = { ...req.commitInfo }
    let actions: readonly Action[] = txn.actions
    if (ictPlan !== undefined) {
      const ict = nextInCommitTimestamp(ictFloor, (req.now ?? Date.now)())
      commitInfo = { ...commitInfo, timestamp: ict, inCommitTimestamp: ict }
      actions = stampActions(actions, ictPlan, attemptVersion, ict)
    }
    await checkFilesSurviveVacuum(engine, actions, vacuums, signal)
    written.set(attemptVersion, actions)
    // The commit at attemptVersion when an ambiguous put's check already read it.
    let readAhead: Action[] | undefined
    // With In-Commit Timestamps the commitInfo must be the first line; it always is.
    const body = serializeCommit([{ commitInfo }, ...actions])
    const bytes = new TextEncoder().encode(body)
    try {
      const key = commitKey(attemptVersion)
      const meta = await engine.storage.put(key, bytes, { ifNotExists: true, signal })
      // What a read of the file gives, for the caller to advance its snapshot without reading it.
      const committed = parseLogBytes(bytes, key, attemptVersion)
      const file = meta !== undefined && meta.key === key ? meta : undefined
      return { version: attemptVersion, attempts, reconciliations, actions, committed, file }
    } catch (err) {
      if (err instanceof StorageError && !(err instanceof FileAlreadyExistsError)) {
        storageFailures++
        if (storageFailures > req.retry.maxStorageRetries) {
          throw err.ambiguous ? new CommitStateUnknownError(attemptVersion, req.txnId, { cause: err }) : err
        }
        if (err.ambiguous) {
          uncertainty.version = attemptVersion
          let landed: Action[] | undefined
          try {
            landed = await readCommitIfPresent(engine, attemptVersion, signal)
          } catch (readErr) {
            if (!(readErr instanceof StorageError)) throw readErr
            // Cannot look now: put again. If the first put landed, this one finds the version
            // taken and the scan of winners recognises our txnId.
            await sleep(backoffDelay(req.retry, attempts, random()), signal)
            continue
          }
          if (landed === undefined) {
            await sleep(backoffDelay(req.retry, attempts, random()), signal)
            continue
          }
          if (ownsCommit(landed, req.txnId))
            return { version: attemptVersion, attempts, reconciliations, actions }
          readAhead = landed
          // Someone else's commit is there: fall through to conflict resolution.
        } else if (err.retryable) {
          await sleep(backoffDelay(req.retry, attempts, random()), signal)
          continue
        } else {
          throw err
        }
      } else if (!(err instanceof FileAlreadyExistsError)) {
        throw err
      }
    }

    // Lost the race for attemptVersion: check every winner in order, each read once (several
    // at a time).
    const lost = attemptVersion
    const winners = await readCommitsFrom(engine, readAhead === undefined ? lost : lost + 1n, signal)
    if (readAhead !== undefined) winners.unshift({ version: lost, actions: readAhead })
    for (const { version: v, actions } of winners) {
      if (ownsCommit(actions, req.txnId)) {
        // An earlier ambiguous put of ours landed after all.
        return { version: v, attempts, reconciliations, actions: written.get(v) ?? txn.actions }
      }
      if (ictPlan !== undefined) {
        const winnerTime = await commitTime(engine, v, actions, signal)
        if (winnerTime > ictFloor) ictFloor = winnerTime
      }
      noteVacuumWinner(vacuums, v, actions)
      const winner = summarizeWinningCommit(v, actions, {
        tableRoot: tableRootOf(engine.storage),
      })
      const plan = planConflictFetches(txn, winner, flags)
      const fetched = await fetchFacts(engine, req.columns, plan, dvCache, signal)
      const result = checkConflicts(txn, winner, flags, fetched)
      if (result.kind === 'conflict') {
        if (req.explain === false) throw result.error
        throw await explained(result.error, {
          engine,
          columns: req.columns,
          txn,
          winner,
          flags,
          dvCache,
          signal,
        })
      }
      txn = result.txn
      appendAll(reconciliations, result.reconciliations)
      attemptVersion = v + 1n
    }
    await sleep(lostRaceDelay(req.retry, random()), signal)
  }
}

// === Explaining a conflict ===

/**
 * The conflict with what would have reconciled it in its hint: the checker is run again with
 * the flags that are off turned on, on the facts their plans ask for (loaded like any other).
 * Explaining is best effort: a failure to load or check leaves the conflict as it was.
 */
async function explained(
  error: ConcurrentModificationError,
  at: {
    readonly engine: Engine
    readonly columns: readonly ColumnSpec[]
    readonly txn: TransactionInfo
    readonly winner: WinningCommitSummary
    readonly flags: ConflictFlags
    readonly dvCache: DvCache
    readonly signal: AbortSignal | undefined
  },
): Promise<ConcurrentModificationError> {
  try {
    const hypothetical = explanationFlags(at.flags)
    let fetched = NO_FETCHED_FACTS
    if (hypothetical !== undefined) {
      await initDeletionVectors()
      const plan = planConflictFetches(at.txn, at.winner, hypothetical)
      fetched = await fetchFacts(at.engine, at.columns, plan, at.dvCache, at.signal)
    }
    const remedy = explainConflict(at.txn, at.winner, at.flags, fetched)
    return remedy === undefined ? error : withRemedy(error, remedy)
  } catch (err) {
    if (err instanceof Error && err.name === 'AbortError') throw err
    return error
  }
}

// === Log access ===

function ownsCommit(actions: readonly Action[], txnId: string): boolean {
  return actions.some((a) => 'commitInfo' in a && a.commitInfo.txnId === txnId)
}

/** The commit at `version`, read through the log reader; `undefined` when it is not there. */
function readCommitIfPresent(
  engine: Engine,
  version: Version,
  signal?: AbortSignal,
): Promise<Action[] | undefined> {
  return readCommit(engine, version, signal)
}

/**
 * A winner's commit time, which the next In-Commit Timestamp must exceed: its own In-Commit
 * Timestamp, or its file's modification time when it has none (a commit before they were on).
 */
async function commitTime(
  engine: Engine,
  version: Version,
  actions: readonly Action[],
  signal?: AbortSignal,
): Promise<bigint> {
  for (const a of actions) {
    if ('commitInfo' in a && a.commitInfo.inCommitTimestamp !== undefined)
      return a.commitInfo.inCommitTimestamp
  }
  try {
    return BigInt(Math.floor((await engine.storage.head(commitKey(version), { signal })).lastModified))
  } catch (err) {
    // Gone already (log cleanup): the wall clock of the next attempt is past it anyway.
    if (err instanceof FileNotFoundError) return 0n
    throw err
  }
}

// === Facts for the conflict checker ===

/** How many facts (deletion vectors, row queries) are loaded at once. */
const FETCH_CONCURRENCY = 8

/** Deletion vectors loaded during one commit, by unique id: a descriptor names fixed bytes. */
type DvCache = Map<string, Promise<RoaringBitmapArray>>

function loadDv(
  engine: Engine,
  cache: DvCache,
  descriptor: DeletionVectorDescriptor,
  signal: AbortSignal | undefined,
): Promise<RoaringBitmapArray> {
  const id = dvUniqueId(descriptor)
  let loading = cache.get(id)
  if (loading === undefined) {
    loading = loadDeletionVector(engine, descriptor, signal)
    // A failed load is not kept: the next winner that needs it tries again.
    loading.catch(() => cache.delete(id))
    cache.set(id, loading)
  }
  return loading
}

/**
 * Loads what the checker asked for, several facts at once. A fact that cannot be loaded is left
 * out, which makes the reconciliation that needed it refuse: the file-level answer stands.
 */
async function fetchFacts(
  engine: Engine,
  columns: readonly ColumnSpec[],
  plan: FetchPlan,
  cache: DvCache,
  signal?: AbortSignal,
): Promise<FetchedFacts> {
  const deletionVectors = new Map<string, RoaringBitmapArray>()
  const rowMatches = new Map<string, boolean>()
  const dvs = await mapLimit(plan.deletionVectors, FETCH_CONCURRENCY, async (req) => {
    try {
      return await loadDv(engine, cache, req.descriptor, signal)
    } catch (err) {
      if (!isDeltaError(err)) throw err
      return undefined
    }
  })
  plan.deletionVectors.forEach((req, i) => {
    const dv = dvs[i]
    if (dv !== undefined) deletionVectors.set(req.key, dv)
  })
  const matches = await mapLimit(plan.rowQueries, FETCH_CONCURRENCY, async (q) => {
    try {
      const decoded = decodeAddPath(q.file.path)
      if (decoded.kind !== 'relative') return undefined
      const live = q.file.deletionVector
        ? await loadDv(engine, cache, q.file.deletionVector, signal)
        : undefined
      const [found] = await engine.data.matchPositions({
        files: [fileRefWithDeletions({ key: decoded.key, partitionValues: q.file.partitionValues }, live)],
        predicate: q.predicate,
        predicateColumns: columns,
        signal,
      })
      let any = (found?.positions.length ?? 0) > 0
      if (any && q.onlyRowsDeletedBy) {
        const removed = await loadDv(engine, cache, q.onlyRowsDeletedBy, signal)
        any = (found?.positions ?? []).some((p) => removed.has(p))
      }
      return any
    } catch (err) {
      if (!isDeltaError(err)) throw err
      return undefined
    }
  })
  plan.rowQueries.forEach((q, i) => {
    const any = matches[i]
    if (any !== undefined) rowMatches.set(q.key, any)
  })
  const rowIdLookups =
    plan.rowIdLookups === undefined || plan.rowIdLookups.length === 0
      ? {}
      : { rowIdLookups: await loadRowIdLookups(engine, plan.rowIdLookups, signal) }
  if (plan.rowReads === undefined || plan.rowReads.length === 0)
    return { deletionVectors, rowMatches, ...rowIdLookups }
  const rowReads = await loadRowReads(
    engine,
    columns,
    plan.rowReads,
    (dv) => loadDv(engine, cache, dv, signal),
    signal,
  )
  return { deletionVectors, rowMatches, rowReads, ...rowIdLookups }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0) return Promise.resolve()
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(t)
      reject(signal?.reason)
    }
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
