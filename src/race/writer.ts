/**
 * One writer of a race, running in its own OS process: it loops over its planned operations,
 * one transaction each, until the deadline or its operation budget, and logs every attempt.
 *
 * Every data-changing transaction carries the idempotency marker `txn(<run>-w<writer>, <seq>)`
 * (OPTIMIZE, which changes no data, carries none and is recognised by its txnId). A writer that
 * starts again after being killed resumes at the operation it was running, and the marker in
 * its new read snapshot tells whether that operation landed before the kill, so no operation is
 * ever applied twice. Storage failures are logged as aborts; an operation whose outcome a storage
 * failure left unknown is tried again under the same marker.
 */
import { existsSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import {
  type CommitResult,
  ConcurrentModificationError,
  DeltaTable,
  isDeltaError,
  type ObjectStore,
  openStore,
  StorageError,
} from '../index.js'
import { createDelayStore, createFaultyStore, type FaultPlan } from '../subpaths/testing.js'
import { type AttemptEvent, EventSink, type KillMoment, readEvents, writerEventsPath } from './events.js'
import { createKillSwitchStore, type KillSwitchStore } from './kill-switch-store.js'
import type { RaceConfig, WriterSpec } from './options.js'
import { appIdOf, type PlannedOp, planOperation } from './plan.js'
import { seededRandom } from './random.js'
import { type RaceTransaction, stageOperation } from './stage-op.js'

/** What a writer process is told by the harness. */
/**
 * The environment variable that hands a writer process its table location: the task on its
 * command line (visible to every local user in `ps`) carries the location redacted, since an
 * `https://` location may hold a SAS token.
 */
export const RACE_LOCATION_ENV = 'DELTA_RLC_RACE_LOCATION'

export interface WriterTask {
  readonly config: RaceConfig
  readonly writer: WriterSpec
  /** The writer's own event file. */
  readonly eventsPath: string
  /** 0 for the first start, then one more per restart. */
  readonly incarnation: number
  /**
   * No operation starts after this time (ms since the epoch); 0 when the writer must wait for
   * the harness's start signal, which carries the deadline.
   */
  readonly deadline: number
}

/** How a writer waits for the start signal of a race. */
export type AwaitStart = () => Promise<number>

/** How a `vacuum` writer runs VACUUM: at retention 0, the most aggressive setting there is. */
const RACE_VACUUM = Object.freeze({ retentionHours: 0, enforceRetentionDuration: false })

/** Tries of one operation when storage failures keep its outcome unknown or prevent it. */
const MAX_TRIES_PER_OP = 3

const KILL_MOMENTS: readonly KillMoment[] = ['before-data', 'after-data', 'before-log-put', 'after-log-put']

/**
 * Runs a writer's loop to its end. Returns normally when the deadline or the operation budget
 * is reached; a kill fault ends the process instead.
 *
 * @param task - what to run
 * @param awaitStart - resolves to the deadline once every writer is ready (first start only)
 * @returns the next sequence number the writer would have run
 */
export async function runWriter(task: WriterTask, awaitStart?: AwaitStart): Promise<number> {
  const { config, writer } = task
  const resume = existsSync(task.eventsPath) ? await resumePoint(task.eventsPath) : { seq: 0, tries: 0 }
  const sink = new EventSink(task.eventsPath)
  const killSwitch = createKillSwitchStore(
    createFaultyStore(storeOf(config), faultPlanOf(config, writer.index, task.incarnation)),
  )
  const appId = appIdOf(config.runId, writer.index)
  let table: DeltaTable | undefined
  let seq = resume.seq
  let tries = resume.tries
  let conflictRetries = 0
  try {
    table = await openWithRetries(config, killSwitch)
    const deadline = task.deadline === 0 && awaitStart !== undefined ? await awaitStart() : task.deadline
    while (Date.now() < deadline && (await budgetLeft(config, writer, seq))) {
      const op = planOperation(config, writer, seq)
      const outcome = await runAttempt({ task, table, killSwitch, appId, op, tryNo: tries, sink })
      const again =
        (outcome === 'retry' && tries + 1 < MAX_TRIES_PER_OP) ||
        (outcome === 'conflict' && conflictRetries < (config.conflictRetries ?? 0))
      if (again) {
        tries++
        if (outcome === 'conflict') conflictRetries++
        // A short pause lets a transient storage failure, or the winner's next commit, pass.
        await sleep(5 + seededRandom(config.seed, writer.index, seq, tries, 3).int(20))
      } else {
        seq++
        tries = 0
        conflictRetries = 0
      }
    }
    sink.write({ type: 'writer-done', t: Date.now(), writer: writer.index, nextSeq: seq })
    return seq
  } finally {
    sink.close()
    await table?.close()
  }
}

/**
 * Whether the writer's operation budget lets it run another operation. A maintenance writer
 * (`vacuum`) is the exception: VACUUMs are quick, so with a plain budget they would all run before
 * the other writers removed any file, and the race would never see a VACUUM delete a file among
 * them. Past its budget it keeps going, at a short pause, while any other writer is still at work
 * (a writer is done once its events file holds `writer-done`).
 */
async function budgetLeft(config: RaceConfig, writer: WriterSpec, seq: number): Promise<boolean> {
  if (config.opsPerWriter === 0 || seq < config.opsPerWriter) return true
  if (writer.kind !== 'vacuum') return false
  for (const other of config.writers) {
    if (other.index === writer.index || other.kind === 'vacuum') continue
    const path = writerEventsPath(config, other.index)
    const done = existsSync(path) && (await readEvents(path)).some((e) => e.type === 'writer-done')
    if (!done) {
      await sleep(50)
      return true
    }
  }
  return false
}

// === One attempt ===

interface AttemptContext {
  readonly task: WriterTask
  readonly table: DeltaTable
  readonly killSwitch: KillSwitchStore
  readonly appId: string
  readonly op: PlannedOp
  readonly tryNo: number
  readonly sink: EventSink
}

/**
 * `retry` when a storage failure left the operation to be tried again under the same marker;
 * `conflict` when a concurrent commit aborted it (final unless the race retries conflicts).
 */
async function runAttempt(a: AttemptContext): Promise<'done' | 'retry' | 'conflict'> {
  const { task, op, sink } = a
  const w = task.writer.index
  const kill = killMomentOf(task, op.seq, a.tryNo)
  sink.write({ type: 'op-start', t: Date.now(), writer: w, seq: op.seq, kind: op.kind, try: a.tryNo })
  const startedAt = Date.now()
  let readVersion: number | undefined
  let commitStartedAt: number | undefined
  const base = {
    type: 'attempt' as const,
    writer: w,
    seq: op.seq,
    try: a.tryNo,
    kind: op.kind,
    params: paramsOf(op),
    startedAt,
  }
  const die = (moment: KillMoment): never => {
    sink.write({ type: 'kill', t: Date.now(), writer: w, seq: op.seq, try: a.tryNo, moment })
    return killSelf()
  }
  try {
    if (op.kind === 'vacuum') {
      // VACUUM commits no data and carries no marker; its START and END are log-only commits.
      const r = await a.table.vacuum(RACE_VACUUM)
      sink.write({
        ...base,
        t: Date.now(),
        readVersion: Number(r.version),
        outcome: 'no-op',
        txnId: r.txnId,
        attempts: 0,
        reconciliations: [],
        endedAt: Date.now(),
      })
      return 'done'
    }
    const txn: RaceTransaction = await a.table.begin({ isolationLevel: task.config.isolation })
    readVersion = Number(txn.readVersion)
    // OPTIMIZE moves no logical row, so running it twice is harmless and it carries no marker,
    // as in Delta, where maintenance commits never do.
    const recorded =
      op.kind === 'optimize' || op.kind === 'zorder' ? undefined : txn.setTransaction(a.appId, op.seq)
    if (recorded !== undefined && recorded >= BigInt(op.seq)) {
      sink.write({
        ...base,
        t: Date.now(),
        readVersion,
        outcome: 'already-committed',
        attempts: 0,
        reconciliations: [],
        endedAt: Date.now(),
      })
      return 'done'
    }
    if (kill === 'before-data') die(kill)
    await stageOperation(txn, op)
    if (kill === 'after-data') die(kill)
    if (kill === 'before-log-put' || kill === 'after-log-put') a.killSwitch.arm(kill, () => die(kill))
    commitStartedAt = Date.now()
    const result: CommitResult = await txn.commit()
    a.killSwitch.disarm()
    const event: AttemptEvent = {
      ...base,
      t: Date.now(),
      readVersion,
      outcome: result.committed ? 'committed' : 'no-op',
      version: result.committed ? Number(result.version) : undefined,
      txnId: result.txnId,
      attempts: result.attempts,
      reconciliations: result.reconciliations.map((r) => ({
        kind: r.kind,
        winnerVersion: Number(r.winnerVersion),
        winnerOperation: r.winnerOperation,
      })),
      commitStartedAt,
      endedAt: Date.now(),
    }
    sink.write(event)
    return 'done'
  } catch (err) {
    a.killSwitch.disarm()
    const endedAt = Date.now()
    const conflict = err instanceof ConcurrentModificationError ? err : undefined
    const ambiguous = isAmbiguous(err)
    sink.write({
      ...base,
      t: endedAt,
      readVersion,
      outcome: 'aborted',
      code: isDeltaError(err) ? err.code : err instanceof Error ? err.name : 'UNKNOWN',
      message: err instanceof Error ? err.message : String(err),
      winnerVersion: conflict ? Number(conflict.winnerVersion) : undefined,
      winnerOperation: conflict?.winnerOperation,
      check: conflict?.check,
      reconcileRefused: conflict?.reconcileRefused,
      ambiguous,
      attempts: 0,
      reconciliations: [],
      commitStartedAt,
      endedAt,
    })
    // A storage failure is transient: the same operation is tried again, and its marker tells
    // whether an earlier try landed. A conflict is final for this operation unless the race
    // retries conflicts, as an application that must get its write done does.
    if (isDeltaError(err, 'DELTA_STORAGE_ERROR', 'DELTA_COMMIT_STATE_UNKNOWN', 'DELTA_FILE_NOT_FOUND'))
      return 'retry'
    return conflict !== undefined ? 'conflict' : 'done'
  }
}

function isAmbiguous(err: unknown): boolean {
  if (isDeltaError(err, 'DELTA_COMMIT_STATE_UNKNOWN')) return true
  return err instanceof StorageError && err.ambiguous
}

function paramsOf(op: PlannedOp): Record<string, unknown> {
  switch (op.kind) {
    case 'append':
      return { firstKey: op.keys[0], count: op.keys.length, tag: op.tag }
    case 'delete':
      return { keys: op.keys }
    case 'update':
    case 'merge':
      return { keys: op.keys, delta: op.delta, tag: op.tag }
    case 'merge-insert':
      return { keys: op.keys, delta: op.delta, tag: op.tag, bySourceTag: op.bySourceTag }
    case 'optimize':
      return {}
    case 'vacuum':
      return { ...RACE_VACUUM }
    case 'zorder':
      return { zOrderBy: op.zOrderBy }
  }
}

// === Faults ===

/**
 * The kill moment drawn for one try of one operation, if any. The draw depends on the try, so a
 * restarted writer does not die again at the same point of the same operation by construction.
 */
function killMomentOf(task: WriterTask, seq: number, tryNo: number): KillMoment | undefined {
  const rate = task.config.faults.kill
  if (rate <= 0) return undefined
  const rnd = seededRandom(task.config.seed, task.writer.index, seq, tryNo, task.incarnation, 2)
  if (rnd.next() >= rate) return undefined
  return KILL_MOMENTS[rnd.int(KILL_MOMENTS.length)]
}

/** The writer's store: the table's, behind the race's added request latency when it has one. */
function storeOf(config: RaceConfig): ObjectStore {
  const store = openStore(config.location)
  const latencyMs = config.storeLatencyMs ?? 0
  return latencyMs > 0 ? createDelayStore(store, { latencyMs }) : store
}

function faultPlanOf(config: RaceConfig, writer: number, incarnation: number): FaultPlan {
  const { put, read, ambiguous } = config.faults
  return {
    seed: (config.seed * 7919 + writer * 104729 + incarnation * 15485863) % 2 ** 31,
    faults: [
      ...(ambiguous > 0 ? [{ methods: 'put' as const, rate: ambiguous, effect: 'ambiguous' as const }] : []),
      ...(put > 0 ? [{ methods: 'put' as const, rate: put }] : []),
      ...(read > 0 ? [{ methods: 'read' as const, rate: read }] : []),
    ],
  }
}

function killSelf(): never {
  process.kill(process.pid, 'SIGKILL')
  // SIGKILL is delivered asynchronously; block until it lands rather than run on.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10_000)
  process.exit(137)
}

// === Start and resume ===

async function openWithRetries(config: RaceConfig, store: KillSwitchStore): Promise<DeltaTable> {
  for (let i = 0; ; i++) {
    try {
      return await DeltaTable.open(config.location, {
        storage: store,
        conflicts: config.conflicts,
        // The race measures the open-source rules as they are: an abort costs no explanation.
        explainConflicts: false,
        ...(config.commitRetry === undefined ? {} : { retry: config.commitRetry }),
      })
    } catch (err) {
      // Injected read faults can hit the first snapshot too; anything else is fatal.
      if (!(err instanceof StorageError) || i >= 20) throw err
      await sleep(10)
    }
  }
}

/**
 * Where a restarted writer picks up: the operation it was running when it died (its outcome is
 * then decided by the marker), or the next one.
 */
async function resumePoint(path: string): Promise<{ seq: number; tries: number }> {
  let last: { seq: number; try: number; finished: boolean } | undefined
  for (const e of await readEvents(path)) {
    if (e.type === 'op-start') last = { seq: e.seq, try: e.try, finished: false }
    else if (e.type === 'attempt' && last !== undefined && e.seq === last.seq) last.finished = true
  }
  if (last === undefined) return { seq: 0, tries: 0 }
  return last.finished ? { seq: last.seq + 1, tries: 0 } : { seq: last.seq, tries: last.try + 1 }
}
