/**
 * The race verifier: checks a table against the event log of the race that wrote it.
 *
 * It reads the Delta log, maps every version to the (writer, sequence number) of its idempotency
 * marker and so to the planned operation, replays the committed operations on an in-memory model
 * in an order the isolation level allows, and checks that the table is readable at every
 * version, that the row count matches the model at every version, that the content matches it
 * (at sampled versions and the last one, and at every version around a mismatch, so that the
 * first divergence is found exactly), that no key is duplicated, that every acknowledged commit
 * is in the log at its version, that no operation landed twice, and that no operation reported
 * as a definite abort landed, and that every compacted source sits in its OPTIMIZE output exactly
 * where its composition tags say. On a table with row tracking enabled it also checks, at every
 * content check, that no two rows share a stable row id and that every row keeps the id it had at
 * the previous check (the same key inserted by the same commit is the same row, however often it
 * was updated, merged or relocated by OPTIMIZE). It also explains every conflict abort by the
 * winning operation.
 */
import {
  type Action,
  DeltaTable,
  FileNotFoundError,
  InvalidArgumentError,
  isDeltaError,
  redactLocation,
  type Snapshot,
  TableScan,
  VersionNotFoundError,
} from '../index.js'
import {
  advanceSnapshot,
  commitKey,
  LOG_DIR,
  listLogFrom,
  loadSnapshot,
  parseLogFileName,
  readCommit,
} from '../subpaths/testing.js'
import { mapLimit } from '../util/map-limit.js'
import { type AttemptEvent, type RaceEvent, type RunEvent, readEvents } from './events.js'
import { RaceModel } from './model.js'
import type { RaceConfig } from './options.js'
import { initialBatches, type PlannedOp, planOperation, type RaceRow, writerOfAppId } from './plan.js'
import { checkCompactionOffsets } from './verify-compaction.js'
import { missingFiles } from './verify-files-present.js'

/** Options of {@link verifyRace}. */
export interface VerifyOptions {
  /** Compare the full content every this many versions (default: about 20 checks per run). */
  readonly fullCheckEvery?: number | undefined
  /** Called with progress messages. */
  readonly log?: ((message: string) => void) | undefined
}

/** One named check of the verifier. */
export interface VerifyCheck {
  readonly name: string
  readonly ok: boolean
  readonly detail: string
}

/** The first point where the table and the serial replay disagree. */
export interface Divergence {
  /** The check that failed. */
  readonly check: string
  /** The first version where it shows. */
  readonly version: number
  /** The operation committed at that version, when it is one of the race's. */
  readonly writer?: number | undefined
  readonly seq?: number | undefined
  readonly kind?: string | undefined
  /** The key whose row differs, when one does. */
  readonly key?: number | undefined
  /** What the replay expects and what the table holds (row text, count or marker). */
  readonly expected?: string | undefined
  readonly actual?: string | undefined
  readonly message: string
}

/** How a conflict abort is explained by the commit that won against it. */
export type AbortClass =
  /** The winner acted on a key the loser acted on: a real conflict. */
  | 'genuine'
  /** One side is OPTIMIZE: a file-level conflict over rewritten files. */
  | 'optimize'
  /**
   * The reconciliation needed a deletion vector it could not load (a storage fault), so the
   * file-level answer stood, as it must.
   */
  | 'fact-unavailable'
  /** No shared key: file-level Delta would abort it, row-level concurrency need not. */
  | 'no-shared-key'

/** A conflict abort with its explanation. */
export interface AbortExplanation {
  readonly writer: number
  readonly seq: number
  readonly kind: string
  readonly code: string
  readonly winnerVersion: number | undefined
  readonly winnerWriter?: number | undefined
  readonly winnerKind?: string | undefined
  readonly sharedKeys: readonly number[]
  readonly class: AbortClass
  readonly reconcileRefused?: string | undefined
}

/** What the verifier found. */
export interface VerifyReport {
  /** Every check passed. */
  readonly ok: boolean
  readonly location: string
  readonly eventsPath: string
  readonly runId: string
  readonly initialVersion: number
  readonly latestVersion: number
  /** Race commits replayed. */
  readonly committedOps: number
  /** Commits acknowledged to their writer (`commit()` returned). */
  readonly acknowledged: number
  /** Operations in the log whose writer never saw the commit return (killed or failed after landing). */
  readonly landedUnacknowledged: number
  readonly finalRows: number
  readonly contentChecks: number
  readonly checks: readonly VerifyCheck[]
  readonly firstDivergence?: Divergence | undefined
  /** Conflict aborts by explanation. */
  readonly aborts: Readonly<Record<AbortClass, number>>
  /** Every conflict abort, explained. */
  readonly abortDetails: readonly AbortExplanation[]
  readonly durationMs: number
}

/** Conflict error codes (the ConcurrentModificationError family). */
export const CONFLICT_CODES: ReadonlySet<string> = new Set([
  'DELTA_CONCURRENT_APPEND',
  'DELTA_CONCURRENT_DELETE_READ',
  'DELTA_CONCURRENT_DELETE_DELETE',
  'DELTA_METADATA_CHANGED',
  'DELTA_PROTOCOL_CHANGED',
  'DELTA_CONCURRENT_TRANSACTION',
  'DELTA_CONCURRENT_VACUUM',
])

/**
 * Verifies a race table against its event log.
 *
 * @param location - the table
 * @param eventsPath - the run's `events.jsonl` (its first line holds the configuration)
 * @param options - sampling and progress
 * @returns the report; `ok` is false when any check failed, with the first divergence
 * @throws {InvalidArgumentError} when the event log has no run header
 * @throws {TableNotFoundError} when there is no table at `location`
 */
export async function verifyRace(
  location: string,
  eventsPath: string,
  options: VerifyOptions = {},
): Promise<VerifyReport> {
  const t0 = Date.now()
  const events = await readEvents(eventsPath)
  const header = events.find((e): e is RunEvent => e.type === 'run')
  if (header === undefined) {
    throw new InvalidArgumentError(`The event log ${eventsPath} has no run header`, {
      argument: 'eventsPath',
      hint: 'Pass the events.jsonl written by a race.',
    })
  }
  const table = await DeltaTable.open(location)
  try {
    return await verifyOpen(table, location, eventsPath, header, events, options, t0)
  } finally {
    await table.close()
  }
}

// === The verification ===

interface LoggedCommit {
  readonly version: number
  readonly operation: string | undefined
  readonly readVersion: number
  readonly isolationLevel: string | undefined
  readonly blindAppend: boolean
  readonly txnId: string | undefined
  /** Whether any file action changes data. */
  readonly dataChange: boolean
  /** Race markers: (writer, seq). */
  readonly markers: ReadonlyArray<{ writer: number; seq: number }>
}

class CheckList {
  readonly checks: VerifyCheck[] = []
  first: Divergence | undefined

  add(name: string, ok: boolean, detail: string): void {
    this.checks.push({ name, ok, detail })
  }

  diverge(d: Divergence): void {
    if (this.first === undefined || d.version < this.first.version) this.first = d
  }
}

async function verifyOpen(
  table: DeltaTable,
  location: string,
  eventsPath: string,
  header: RunEvent,
  events: readonly RaceEvent[],
  options: VerifyOptions,
  t0: number,
): Promise<VerifyReport> {
  const config = header.config
  const log = options.log ?? (() => {})
  const out = new CheckList()
  const commits = await readLog(table, config.runId, header.initialVersion)
  const latest = commits.length === 0 ? header.initialVersion : (commits.at(-1)?.version ?? 0)

  // The log is contiguous after the initial version.
  const gap = commits.findIndex((c, i) => c.version !== header.initialVersion + 1 + i)
  out.add(
    'log-contiguous',
    gap < 0,
    gap < 0
      ? `versions ${header.initialVersion + 1}..${latest} are all present`
      : `version ${header.initialVersion + 1 + gap} is missing`,
  )

  // Map versions to operations; nothing applied twice, nothing unknown.
  const bySeq = new Map<string, number>()
  const opAt = new Map<number, PlannedOp>()
  let twice = 0
  let unknown = 0
  const optimizeByTxnId = new Map<string, number>()
  for (const c of commits) {
    // VACUUM's START and END hold a commitInfo alone: no marker, no data.
    if (c.markers.length === 0 && isVacuumCommit(c)) continue
    if (c.markers.length === 0 && c.operation === 'OPTIMIZE' && !c.dataChange) {
      // OPTIMIZE carries no marker; it changes no data, which the replay checks.
      if (c.txnId !== undefined) optimizeByTxnId.set(c.txnId, c.version)
      continue
    }
    if (c.markers.length !== 1) {
      unknown++
      out.diverge({
        check: 'no-unknown-commits',
        version: c.version,
        message: `version ${c.version} (${c.operation ?? 'no operation'}) carries ${c.markers.length} race markers; every race commit but a data-preserving OPTIMIZE carries exactly one`,
      })
      continue
    }
    const m = c.markers[0] as { writer: number; seq: number }
    const spec = config.writers[m.writer]
    if (spec === undefined) {
      unknown++
      out.diverge({
        check: 'no-unknown-commits',
        version: c.version,
        writer: m.writer,
        message: `version ${c.version} names writer ${m.writer}, which the run does not have`,
      })
      continue
    }
    const key = `${m.writer}:${m.seq}`
    const earlier = bySeq.get(key)
    if (earlier !== undefined) {
      twice++
      out.diverge({
        check: 'applied-at-most-once',
        version: c.version,
        writer: m.writer,
        seq: m.seq,
        message: `operation w${m.writer} seq ${m.seq} landed twice: at versions ${earlier} and ${c.version}`,
      })
      continue
    }
    bySeq.set(key, c.version)
    opAt.set(c.version, planOperation(config, spec, m.seq))
  }
  out.add(
    'no-unknown-commits',
    unknown === 0,
    `${unknown} commits that are neither a data-preserving OPTIMIZE nor carry exactly one known race marker`,
  )
  out.add('applied-at-most-once', twice === 0, `${twice} operations landed more than once`)

  // Acknowledged commits are in the log, at the version their writer was told.
  const attempts = events.filter((e): e is AttemptEvent => e.type === 'attempt')
  let acknowledged = 0
  let lost = 0
  for (const a of attempts) {
    if (a.outcome === 'committed') {
      acknowledged++
      const at =
        a.kind === 'optimize' || a.kind === 'zorder'
          ? a.txnId === undefined
            ? undefined
            : optimizeByTxnId.get(a.txnId)
          : bySeq.get(`${a.writer}:${a.seq}`)
      if (at !== a.version) {
        lost++
        out.diverge({
          check: 'acknowledged-commits-visible',
          version: a.version ?? latest,
          writer: a.writer,
          seq: a.seq,
          kind: a.kind,
          expected: `w${a.writer} seq ${a.seq} at version ${a.version}`,
          actual: at === undefined ? 'not in the log' : `at version ${at}`,
          message: `acknowledged commit of w${a.writer} seq ${a.seq} (${a.kind}) is not at version ${a.version}`,
        })
      }
    } else if (a.outcome === 'already-committed' && !bySeq.has(`${a.writer}:${a.seq}`)) {
      lost++
      out.diverge({
        check: 'acknowledged-commits-visible',
        version: a.readVersion ?? latest,
        writer: a.writer,
        seq: a.seq,
        message: `w${a.writer} seq ${a.seq} was skipped as already committed, but no version carries its marker`,
      })
    }
  }
  out.add(
    'acknowledged-commits-visible',
    lost === 0,
    `${acknowledged} acknowledged commits, ${lost} missing or misplaced`,
  )

  // An operation whose every try ended in a definite abort must not be in the log.
  const landedUnacknowledged = checkAbortedNotLanded(events, bySeq, out)

  // Replay, checking counts at every version and content at sampled ones. The compaction check
  // reads other files and shares nothing with it: the two run together, each using the time the
  // other waits on the data plane.
  const every = options.fullCheckEvery ?? Math.max(1, Math.ceil(commits.length / 20))
  log(`verifying ${commits.length} versions (content every ${every})`)
  // A VACUUM writer at retention 0 deletes compaction sources as soon as they are removed: their
  // offsets cannot be read back, so the compaction check has nothing to read in such a race.
  const vacuumRace = config.writers.some((w) => w.kind === 'vacuum')
  const optimizeVersions = vacuumRace
    ? []
    : commits.filter((c) => c.operation === 'OPTIMIZE').map((c) => c.version)
  const [replayed, compacted] = await Promise.allSettled([
    replay(table, config, header.initialVersion, commits, opAt, (v, i) => {
      return i % every === every - 1 || v === latest
    }),
    checkCompactionOffsets(table, optimizeVersions),
  ])
  // Both settled, so that nothing still reads the table when it is closed; a failure of the
  // replay (then of its narrowing below) comes first, as when the checks ran one after the other.
  if (replayed.status === 'rejected') throw replayed.reason
  const first = replayed.value
  let divergence = first.divergence
  let contentChecks = first.contentChecks
  if (divergence !== undefined && divergence.check === 'content-matches-serial-replay') {
    // Narrow the content mismatch down to its first version.
    const from = first.lastGoodContent
    const narrowed = await replay(
      table,
      config,
      header.initialVersion,
      commits,
      opAt,
      (v) => v > from && v <= (divergence?.version ?? latest),
    )
    contentChecks += narrowed.contentChecks
    divergence = narrowed.divergence ?? divergence
  }
  if (divergence !== undefined) out.diverge(divergence)
  out.add(
    'readable-every-version',
    first.unreadable === undefined,
    first.unreadable ?? `versions ${header.initialVersion}..${latest} load`,
  )
  out.add(
    'row-count-every-version',
    first.countMismatch === undefined,
    first.countMismatch ?? 'the live row count equals the replay at every version',
  )
  out.add(
    'no-duplicate-keys',
    first.duplicates === 0,
    `${first.duplicates} duplicate keys in ${contentChecks} content checks`,
  )
  out.add(
    'content-matches-serial-replay',
    first.contentMismatch === undefined,
    first.contentMismatch === undefined
      ? `${contentChecks} versions hold exactly the rows of the replay in commit order (${config.isolation})`
      : (divergence?.message ?? first.contentMismatch),
  )

  if (first.rowIds !== undefined) {
    const ids = first.rowIds
    for (const [check, problem, ok] of [
      [
        'row-ids-unique',
        ids.duplicate,
        `no two live rows share a stable row id in ${ids.checks} content checks`,
      ],
      [
        'row-ids-preserved',
        ids.changed,
        `every row kept its stable row id across ${ids.checks} content checks (${ids.compared} comparisons)`,
      ],
    ] as const) {
      if (problem !== undefined)
        out.diverge({ check, version: problem.version, key: problem.key, message: problem.message })
      out.add(check, problem === undefined, problem?.message ?? ok)
    }
  }

  // Every file the final snapshot references exists (a VACUUM deleted none a writer committed).
  const missing = await missingFiles(table, await table.snapshot())
  if (missing.length > 0) {
    out.diverge({
      check: 'committed-files-present',
      version: latest,
      message: `version ${latest} references ${missing.length} missing files, first ${missing[0]}`,
    })
  }
  out.add(
    'committed-files-present',
    missing.length === 0,
    missing.length === 0
      ? `every data and deletion-vector file of version ${latest} exists`
      : `${missing.length} files of version ${latest} are missing, first ${missing[0]}`,
  )

  // A file the compaction check cannot read is damage it reports, not a crash of the verifier.
  const compaction: Awaited<ReturnType<typeof checkCompactionOffsets>> =
    compacted.status === 'fulfilled'
      ? compacted.value
      : {
          sources: 0,
          mismatch: {
            version: latest,
            source: '',
            output: '',
            message: `the OPTIMIZE commits cannot be checked: ${failureText(compacted.reason)}`,
          },
        }
  if (compaction.mismatch !== undefined) {
    out.diverge({
      check: 'compaction-offsets-exact',
      version: compaction.mismatch.version,
      kind: 'optimize',
      message: compaction.mismatch.message,
    })
  }
  out.add(
    'compaction-offsets-exact',
    compaction.mismatch === undefined,
    compaction.mismatch?.message ??
      `${compaction.sources} compacted sources of ${optimizeVersions.length} OPTIMIZE commits sit exactly at their tagged offsets`,
  )

  const abortDetails = explainAborts(attempts, opAt, config)
  const aborts: Record<AbortClass, number> = {
    genuine: 0,
    optimize: 0,
    'fact-unavailable': 0,
    'no-shared-key': 0,
  }
  for (const d of abortDetails) aborts[d.class]++

  return Object.freeze({
    ok: out.checks.every((c) => c.ok) && out.first === undefined,
    location: redactLocation(location),
    eventsPath,
    runId: config.runId,
    initialVersion: header.initialVersion,
    latestVersion: latest,
    committedOps: bySeq.size + optimizeByTxnId.size,
    acknowledged,
    landedUnacknowledged,
    finalRows: first.finalRows,
    contentChecks,
    checks: out.checks,
    firstDivergence: out.first,
    aborts,
    abortDetails,
    durationMs: Date.now() - t0,
  })
}

// === Log ===

async function readLog(table: DeltaTable, runId: string, initialVersion: number): Promise<LoggedCommit[]> {
  const versions: number[] = []
  for (const f of await listLogFrom(table.engine, BigInt(initialVersion + 1))) {
    const name = parseLogFileName(f.key.slice(LOG_DIR.length))
    if (name?.type === 'commit' && Number(name.version) > initialVersion) versions.push(Number(name.version))
  }
  versions.sort((a, b) => a - b)
  // Read several at once; a failure is thrown for the first version that has one, as if read
  // one after the other.
  const read = await mapLimit(versions, LOG_READ_CONCURRENCY, (v) =>
    readCommit(table.engine, BigInt(v)).then(
      (actions) => ({ actions }),
      (error: unknown) => ({ error }),
    ),
  )
  const out: LoggedCommit[] = []
  for (const [i, v] of versions.entries()) {
    const r = read[i] as { actions: Action[] | undefined } | { error: unknown }
    if (!('actions' in r)) throw r.error
    const actions = r.actions
    if (actions === undefined) throw new FileNotFoundError(commitKey(BigInt(v)))
    let info: Omit<LoggedCommit, 'dataChange'> | undefined
    let dataChange = false
    const markers: Array<{ writer: number; seq: number }> = []
    for (const a of actions) {
      if ('add' in a) dataChange ||= a.add.dataChange
      else if ('remove' in a) dataChange ||= a.remove.dataChange
      else if ('txn' in a) {
        const writer = writerOfAppId(runId, a.txn.appId)
        if (writer !== undefined) markers.push({ writer, seq: Number(a.txn.version) })
      } else if ('commitInfo' in a) {
        info = {
          version: v,
          operation: a.commitInfo.operation,
          readVersion: a.commitInfo.readVersion === undefined ? v - 1 : Number(a.commitInfo.readVersion),
          isolationLevel: a.commitInfo.isolationLevel,
          blindAppend: a.commitInfo.isBlindAppend === true,
          txnId: a.commitInfo.txnId,
          markers,
        }
      }
    }
    out.push({
      ...(info ?? {
        version: v,
        operation: undefined,
        readVersion: v - 1,
        isolationLevel: undefined,
        blindAppend: false,
        txnId: undefined,
        markers,
      }),
      dataChange,
    })
  }
  return out
}

/** Commit files read at once. */
const LOG_READ_CONCURRENCY = 16

// === Replay ===

interface ReplayResult {
  divergence: Divergence | undefined
  contentChecks: number
  lastGoodContent: number
  unreadable: string | undefined
  countMismatch: string | undefined
  contentMismatch: string | undefined
  duplicates: number
  finalRows: number
  /** The row-id checks, on a table with row tracking enabled. */
  rowIds: RowIdChecks | undefined
}

/** A row-id check that failed. */
interface RowIdProblem {
  readonly version: number
  readonly key: number
  readonly message: string
}

/**
 * The stable row ids seen so far, by key, with the version that inserted the row (a key deleted
 * and inserted again is another row), and what the checks found.
 */
interface RowIdChecks {
  readonly seen: Map<number, { readonly birth: number; readonly rowId: bigint; readonly version: number }>
  checks: number
  compared: number
  duplicate: RowIdProblem | undefined
  changed: RowIdProblem | undefined
}

/** Whether a snapshot's table enables row tracking (every row then has a stable id). */
function tracksRowIds(snap: Snapshot): boolean {
  return (
    (snap.protocol.writerFeatures ?? []).includes('rowTracking') &&
    snap.properties['delta.enableRowTracking']?.toLowerCase() === 'true' &&
    snap.properties['delta.rowTrackingSuspended']?.toLowerCase() !== 'true'
  )
}

async function replay(
  table: DeltaTable,
  config: RaceConfig,
  initialVersion: number,
  commits: readonly LoggedCommit[],
  opAt: ReadonlyMap<number, PlannedOp>,
  checkContentAt: (version: number, index: number) => boolean,
): Promise<ReplayResult> {
  const model = new RaceModel(initialBatches(config).flat(), initialVersion)
  const r: ReplayResult = {
    divergence: undefined,
    contentChecks: 0,
    lastGoodContent: initialVersion,
    unreadable: undefined,
    countMismatch: undefined,
    contentMismatch: undefined,
    duplicates: 0,
    finalRows: model.size,
    rowIds: undefined,
  }
  const at = (c: LoggedCommit | undefined, version: number) => {
    const op = c === undefined ? undefined : opAt.get(c.version)
    return { version, writer: op?.writer, seq: op?.seq, kind: op?.kind }
  }
  // One snapshot walks the versions: each step reads the one commit it adds (a fresh load per
  // version would replay the log from its checkpoint every time). Past a hole in the log (which
  // log-contiguous reports) a version is loaded afresh, as any reader would, from a checkpoint.
  let snap: Snapshot | undefined
  const snapshotAt = async (version: number): Promise<Snapshot> => {
    const v = BigInt(version)
    snap =
      snap === undefined || snap.version > v || v - snap.version > 1n
        ? await loadSnapshot(table.engine, table.location, { version: v })
        : await advanceSnapshot(table.engine, snap, { toVersion: v })
    if (snap.version !== v) throw new VersionNotFoundError(`version ${version}`)
    return snap
  }
  const initialSnap = await snapshotAt(initialVersion)
  if (tracksRowIds(initialSnap)) {
    r.rowIds = { seen: new Map(), checks: 0, compared: 0, duplicate: undefined, changed: undefined }
  }
  // A VACUUM writer at retention 0 deletes the files of older versions: their content cannot be
  // read back, only counted from the log. The latest version is always read.
  const vacuumed = config.writers.some((w) => w.kind === 'vacuum')
  const readable = async (s: Snapshot): Promise<boolean> =>
    !vacuumed ||
    Number(s.version) === latestOf(commits, initialVersion) ||
    (await missingFiles(table, s)).length === 0
  // A version whose rows cannot be read is reported by readable-every-version (a missing or
  // truncated data file), whichever read meets it first: the count or the content check.
  const unreadable = (c: LoggedCommit | undefined, version: number, err: unknown): ReplayResult => {
    r.unreadable = `version ${version} cannot be read: ${failureText(err)}`
    r.divergence ??= { check: 'readable-every-version', ...at(c, version), message: r.unreadable }
    return r
  }
  /** Records a content difference; returns whether the replay must stop. */
  const differs = (c: LoggedCommit | undefined, version: number, diff: ContentDiff | undefined): boolean => {
    r.contentChecks++
    if (diff === undefined) return false
    r.duplicates += diff.duplicates
    // A key held twice is the duplicate check's finding; any other difference is the content's.
    const check = diff.duplicates > 0 ? 'no-duplicate-keys' : 'content-matches-serial-replay'
    if (check === 'content-matches-serial-replay') r.contentMismatch = diff.message
    r.divergence = { check, ...at(c, version), ...divergenceOf(diff) }
    return true
  }
  // The initial state is checked first: nothing else can be right if it is wrong.
  let initial: ContentDiff | undefined
  if (await readable(initialSnap)) {
    try {
      initial = await contentDiff(table, initialSnap, model, r.rowIds)
    } catch (err) {
      return unreadable(undefined, initialVersion, err)
    }
  }
  if (differs(undefined, initialVersion, initial)) return r
  for (const [i, c] of commits.entries()) {
    const op = opAt.get(c.version)
    if (op !== undefined) {
      model.apply(op, {
        version: c.version,
        readVersion: c.readVersion,
        blindAppend: c.blindAppend,
        isolationLevel: c.isolationLevel,
      })
    }
    // A version whose files a VACUUM at retention 0 deleted can be neither counted nor read.
    if (!(await readable(await snapshotAt(c.version)))) continue
    let count: number
    try {
      count = await new TableScan(table.engine, await snapshotAt(c.version)).count()
    } catch (err) {
      return unreadable(c, c.version, err)
    }
    if (count !== model.size && r.countMismatch === undefined) {
      r.countMismatch = `version ${c.version}: ${count} live rows, the replay has ${model.size}`
    }
    if (count !== model.size || checkContentAt(c.version, i)) {
      let diff: ContentDiff | undefined
      try {
        diff = await contentDiff(table, await snapshotAt(c.version), model, r.rowIds)
      } catch (err) {
        return unreadable(c, c.version, err)
      }
      if (differs(c, c.version, diff)) return r
      r.lastGoodContent = c.version
    }
  }
  r.finalRows = model.size
  return r
}

interface ContentDiff {
  readonly key?: number | undefined
  readonly expected?: string | undefined
  readonly actual?: string | undefined
  readonly message: string
  readonly duplicates: number
}

async function contentDiff(
  table: DeltaTable,
  snapshot: Snapshot,
  model: RaceModel,
  rowIds?: RowIdChecks,
): Promise<ContentDiff | undefined> {
  const version = Number(snapshot.version)
  // Each row is compared with the model as it streams in; the smallest key that differs (a row
  // the model lacks, or holds otherwise) is kept, and rows the table lacks are looked for only
  // when fewer keys matched than the model holds.
  const seen = new Set<number>()
  let duplicates = 0
  let firstDuplicate: number | undefined
  let present = 0
  let firstBad: { key: number; expected: RaceRow | undefined; actual: RaceRow | undefined } | undefined
  const ids = new Map<bigint, number>()
  if (rowIds !== undefined) rowIds.checks++
  const scan = new TableScan(table.engine, snapshot, {
    columns: ['id', 'val', 'tag'],
    ...(rowIds === undefined ? {} : { withRowTracking: true }),
  })
  for await (const batch of scan) {
    for (const raw of batch) {
      const id = Number(raw.id)
      if (seen.has(id)) {
        // The duplicate check reports it; its second row's id says nothing more.
        duplicates++
        firstDuplicate ??= id
        continue
      }
      seen.add(id)
      if (rowIds !== undefined) checkRowId(rowIds, ids, version, id, raw._row_id as bigint, model.birthOf(id))
      const val = Number(raw.val)
      const tag = String(raw.tag)
      const e = model.get(id)
      if (e !== undefined) present++
      if (e !== undefined && e.val === val && e.tag === tag) continue
      if (firstBad === undefined || id < firstBad.key)
        firstBad = { key: id, expected: e, actual: { id, val, tag } }
    }
  }
  if (firstDuplicate !== undefined) {
    return {
      key: firstDuplicate,
      expected: text(model.get(firstDuplicate)),
      actual: `${duplicates} duplicate rows, first for key ${firstDuplicate}`,
      message: `version ${version} holds key ${firstDuplicate} more than once (${duplicates} duplicate rows)`,
      duplicates,
    }
  }
  if (present < model.size) {
    for (const e of model.rows()) {
      if (firstBad !== undefined && e.id >= firstBad.key) break
      if (!seen.has(e.id)) {
        firstBad = { key: e.id, expected: e, actual: undefined }
        break
      }
    }
  }
  if (firstBad === undefined) return undefined
  return {
    key: firstBad.key,
    expected: text(firstBad.expected),
    actual: text(firstBad.actual),
    message: `version ${version}, key ${firstBad.key}: the table has ${text(firstBad.actual)}, the serial replay has ${text(firstBad.expected)}`,
    duplicates: 0,
  }
}

/**
 * Checks one row's stable id: no other row of the version has it, and the row had it at the last
 * check that saw the same row (same key, same inserting version).
 */
function checkRowId(
  checks: RowIdChecks,
  inVersion: Map<bigint, number>,
  version: number,
  key: number,
  rowId: bigint,
  birth: number | undefined,
): void {
  const other = inVersion.get(rowId)
  if (other !== undefined) {
    checks.duplicate ??= {
      version,
      key,
      message: `version ${version}: keys ${other} and ${key} share the stable row id ${rowId}`,
    }
  } else inVersion.set(rowId, key)
  if (birth === undefined) return
  const before = checks.seen.get(key)
  if (before !== undefined && before.birth === birth) {
    checks.compared++
    if (before.rowId !== rowId) {
      checks.changed ??= {
        version,
        key,
        message: `version ${version}: key ${key} has stable row id ${rowId}, but had ${before.rowId} at version ${before.version} (the same row)`,
      }
    }
  }
  checks.seen.set(key, { birth, rowId, version })
}

/** An error as a check's detail: its code, when it has one, and its message. */
function failureText(err: unknown): string {
  return `${isDeltaError(err) ? `${err.code} ` : ''}${err instanceof Error ? err.message : String(err)}`
}

function divergenceOf(d: ContentDiff): Pick<Divergence, 'key' | 'expected' | 'actual' | 'message'> {
  return { key: d.key, expected: d.expected, actual: d.actual, message: d.message }
}

function text(row: RaceRow | undefined): string {
  return row === undefined ? 'no row' : `{id: ${row.id}, val: ${row.val}, tag: ${row.tag}}`
}

// === Aborts ===

/**
 * Operations reported as definite aborts in every try must not be in the log. Returns how many
 * landed operations no try acknowledged (killed, or failed ambiguously after landing).
 */
function checkAbortedNotLanded(
  events: readonly RaceEvent[],
  bySeq: ReadonlyMap<string, number>,
  out: CheckList,
): number {
  // Per operation: how many tries could have landed (no end logged, committed, or a failure that
  // leaves the outcome open) and the code of a definite conflict abort, if any.
  const tries = new Map<string, { open: number; possible: number; code: string | undefined }>()
  for (const e of events) {
    if (e.type !== 'op-start' && e.type !== 'attempt') continue
    const key = `${e.writer}:${e.seq}`
    const t = tries.get(key) ?? { open: 0, possible: 0, code: undefined }
    if (e.type === 'op-start') {
      t.open++
    } else {
      t.open = Math.max(0, t.open - 1)
      if (e.outcome === 'aborted' && CONFLICT_CODES.has(e.code ?? '')) t.code = e.code
      else t.possible++
    }
    tries.set(key, t)
  }
  let bad = 0
  for (const [key, t] of tries) {
    const version = bySeq.get(key)
    if (version === undefined || t.code === undefined || t.open > 0 || t.possible > 0) continue
    bad++
    const [writer, seq] = key.split(':').map(Number)
    out.diverge({
      check: 'aborted-ops-not-landed',
      version,
      writer,
      seq,
      message: `w${writer} seq ${seq} was reported aborted (${t.code}) in every try, yet landed at version ${version}`,
    })
  }
  out.add('aborted-ops-not-landed', bad === 0, `${bad} operations reported as conflicts landed anyway`)
  const acked = new Set(
    events
      .filter((e): e is AttemptEvent => e.type === 'attempt' && e.outcome === 'committed')
      .map((e) => `${e.writer}:${e.seq}`),
  )
  let unacknowledged = 0
  for (const key of bySeq.keys()) if (!acked.has(key)) unacknowledged++
  return unacknowledged
}

function explainAborts(
  attempts: readonly AttemptEvent[],
  opAt: ReadonlyMap<number, PlannedOp>,
  config: RaceConfig,
): AbortExplanation[] {
  const out: AbortExplanation[] = []
  for (const a of attempts) {
    if (a.outcome !== 'aborted' || !CONFLICT_CODES.has(a.code ?? '')) continue
    const spec = config.writers[a.writer]
    const loser = spec === undefined ? undefined : planOperation(config, spec, a.seq)
    const winner = a.winnerVersion === undefined ? undefined : opAt.get(a.winnerVersion)
    const shared = sharedKeys(loser, winner)
    const optimize =
      loser?.kind === 'optimize' || loser?.kind === 'zorder' || a.winnerOperation === 'OPTIMIZE'
    out.push({
      writer: a.writer,
      seq: a.seq,
      kind: a.kind,
      code: a.code ?? '',
      winnerVersion: a.winnerVersion,
      winnerWriter: winner?.writer,
      winnerKind: winner?.kind ?? a.winnerOperation?.toLowerCase(),
      sharedKeys: shared,
      class:
        shared.length > 0
          ? 'genuine'
          : NOT_LOADED.test(a.reconcileRefused ?? '')
            ? 'fact-unavailable'
            : optimize
              ? 'optimize'
              : 'no-shared-key',
      reconcileRefused: a.reconcileRefused,
    })
  }
  return out
}

/** The refusals of a reconciliation that could not load a deletion vector. */
const NOT_LOADED = /deletion vector .*was not loaded/

function sharedKeys(a: PlannedOp | undefined, b: PlannedOp | undefined): number[] {
  if (a === undefined || b === undefined || !('keys' in a) || !('keys' in b)) return []
  const keys = new Set(b.keys)
  return a.keys.filter((k) => keys.has(k))
}

function isVacuumCommit(c: LoggedCommit): boolean {
  return !c.dataChange && (c.operation === 'VACUUM START' || c.operation === 'VACUUM END')
}

function latestOf(commits: readonly LoggedCommit[], initialVersion: number): number {
  return commits.at(-1)?.version ?? initialVersion
}
