/**
 * The options of a race and their resolution into a complete, JSON-serialisable configuration
 * that the harness hands to every writer process and records at the head of the event log, so
 * that the verifier can replay the same plan later from the log alone.
 */
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  CONFLICT_FLAG_KEYS,
  type CommitRetryPolicy,
  InvalidArgumentError,
  parseConflictFlags,
} from '../index.js'

/**
 * What a writer process does in a loop. `mixed` draws one of the other kinds per operation
 * (never `vacuum`, which runs VACUUM at retention 0 over and over: no row changes, but every file
 * removed is deleted at once, and writers in flight must keep theirs).
 */
export type WriterKind =
  | 'append'
  | 'delete'
  | 'update'
  | 'merge'
  | 'optimize'
  | 'mixed'
  | 'merge-insert'
  | 'zorder'
  | 'vacuum'

/** The writer kinds, in the order reports list them. */
export const WRITER_KINDS: readonly WriterKind[] = Object.freeze([
  'append',
  'delete',
  'update',
  'merge',
  'optimize',
  'mixed',
  'merge-insert',
  'zorder',
  'vacuum',
])

/**
 * How the keys of different writers overlap:
 * - `disjoint`: every writer acts on its own keys only (rows of shared files, never shared rows);
 * - `partial`: about one key in five is drawn from the whole key space;
 * - `hot`: about half of the keys are drawn from a small set of hot keys every writer touches.
 */
export type KeyOverlap = 'disjoint' | 'partial' | 'hot'

/** The isolation level the writers' transactions ask for. */
export type RaceIsolationLevel = 'Serializable' | 'WriteSerializable'

/** Fault rates, each a probability in [0, 1]. */
export interface FaultRates {
  /** Per operation: the writer process is killed with SIGKILL at a random moment of it. */
  readonly kill: number
  /** Per store put: the put fails before reaching the store. */
  readonly put: number
  /** Per store read: the read fails. */
  readonly read: number
  /** Per store put: the put lands but the writer sees an error. */
  readonly ambiguous: number
}

/** No faults. */
export const NO_FAULTS: FaultRates = Object.freeze({ kill: 0, put: 0, read: 0, ambiguous: 0 })

/**
 * The `conflicts` setting of a race: every reconciliation, none, a list of flag keys (or case
 * names) to turn on, or flag keys with their values as `DeltaTable.open` takes them.
 */
export type RaceConflicts = 'all' | 'none' | readonly string[] | Readonly<Record<string, boolean | number>>

/**
 * What a caller (the CLI, a test, the demo) asks of a race. Everything but `location` has a
 * default.
 */
export interface RaceOptions {
  /** A local directory for the table; it must not hold a table yet (with `compare`, a parent dir). */
  readonly location: string
  /** Writers per kind, e.g. `{ delete: 2, update: 1, merge: 1, append: 2, optimize: 1 }`. */
  readonly writers?: Readonly<Partial<Record<WriterKind, number>>> | undefined
  /** Key overlap between writers (default `disjoint`). */
  readonly overlap?: KeyOverlap | undefined
  /** Isolation level of every transaction (default `WriteSerializable`). */
  readonly isolation?: RaceIsolationLevel | undefined
  /**
   * Reconciliations (default `all`): `all`, `none`, flag keys with their values as in
   * `DeltaTable.open`, or a list of flag keys to turn on (a list may also name cases: `case1`,
   * `case1-value`, `case2`, `case3`, `case4a`, `case4b`, `case5` (both of `case5a` and
   * `case5b`), `case6`, `merge-keys`).
   */
  readonly conflicts?: RaceConflicts | undefined
  /** Seed of every random choice (default 1). */
  readonly seed?: number | undefined
  /** How long writers start new operations, ms (default 60000). */
  readonly durationMs?: number | undefined
  /** At most this many operations per writer (default unbounded: the duration decides). */
  readonly opsPerWriter?: number | undefined
  /** Fault rates (default none). */
  readonly faults?: Partial<FaultRates> | undefined
  /** Run the same seeded workload with reconciliation off, then with `conflicts`, and compare. */
  readonly compare?: boolean | undefined
  /** Where events and reports go (default `<location>.race`). */
  readonly outDir?: string | undefined
  /** Rows of the initial table (default 20000). */
  readonly rows?: number | undefined
  /** Data files of the initial table (default 8). */
  readonly initialFiles?: number | undefined
  /** Keys per DELETE, UPDATE or MERGE (default 8). */
  readonly keysPerOp?: number | undefined
  /** Rows per append (default 50). */
  readonly appendRows?: number | undefined
  /** Size of the hot key set for `overlap: 'hot'` (default 16). */
  readonly hotKeys?: number | undefined
  /**
   * Create the race table with row tracking enabled (default: when a `zorder` writer runs, since
   * a DML that loses to a Z-order OPTIMIZE finds its rows by their stable ids, Case 5b). The
   * verifier then also checks that row ids are unique and that every row keeps its id.
   */
  readonly rowTracking?: boolean | undefined
  /** Run the verifier after the race (default true). */
  readonly verify?: boolean | undefined
  /** A name for the run, used in the writers' application ids (default derived from the seed). */
  readonly runId?: string | undefined
  /** The writers' commit retry policy (default: the engine's). */
  readonly commitRetry?: Partial<CommitRetryPolicy> | undefined
  /**
   * Milliseconds each writer's store requests take on top of the store's own time (default 0):
   * a local table then behaves like one in an object store that far away (see
   * `createDelayStore`). Creating the table and verifying it take no added latency.
   */
  readonly storeLatencyMs?: number | undefined
  /**
   * How many times a writer runs an operation again after a conflict aborted it (default 0: an
   * abort is final and the writer goes on to its next operation). With retries, every operation
   * gets done unless it keeps losing, as an application that must write it would do it, so
   * goodput counts completed work and an abort costs its redo.
   */
  readonly conflictRetries?: number | undefined
}

/** One writer of a resolved configuration. */
export interface WriterSpec {
  /** 0-based index, unique in the run. */
  readonly index: number
  readonly kind: WriterKind
}

/** A fully resolved race configuration (plain JSON). */
export interface RaceConfig {
  readonly runId: string
  readonly location: string
  readonly outDir: string
  readonly seed: number
  readonly writers: readonly WriterSpec[]
  readonly overlap: KeyOverlap
  readonly isolation: RaceIsolationLevel
  /** The flags object passed to `DeltaTable.open`, or `all` / `none`. */
  readonly conflicts: 'all' | 'none' | Readonly<Record<string, boolean | number>>
  /** The `conflicts` option as the user spelled it, for reports. */
  readonly conflictsLabel: string
  readonly durationMs: number
  /** 0 means unbounded. */
  readonly opsPerWriter: number
  readonly faults: FaultRates
  readonly rows: number
  readonly initialFiles: number
  readonly keysPerOp: number
  readonly appendRows: number
  readonly hotKeys: number
  /** Whether the race table enables row tracking. */
  readonly rowTracking?: boolean | undefined
  readonly commitRetry?: Partial<CommitRetryPolicy> | undefined
  /** Added latency of each writer store request, ms; absent for none. */
  readonly storeLatencyMs?: number | undefined
  /** Runs of an operation after a conflict aborted it; absent for none. */
  readonly conflictRetries?: number | undefined
}

/** The mix `npm run demo` and the CLI use when none is given: seven writers of every kind. */
export const DEFAULT_WRITER_MIX: Readonly<Partial<Record<WriterKind, number>>> = Object.freeze({
  append: 2,
  delete: 2,
  update: 1,
  merge: 1,
  optimize: 1,
})

/** Case names accepted in a `conflicts` list, and the flag keys they turn on. */
export const CONFLICT_CASE_FLAGS: Readonly<Record<string, readonly string[]>> = Object.freeze({
  case1: ['conflictDetection.dataSkipping.enabled'],
  'case1-value': [
    'conflictDetection.dataSkipping.enabled',
    'conflictDetection.dataSkipping.valueExact.enabled',
  ],
  case2: ['rowLevelConcurrency.enabled'],
  case3: ['conflictDetection.excludeNoDataChangeFiles.enabled'],
  case4a: ['optimize.conflictReconciliation.enabled'],
  case4b: ['optimize.conflictReconciliation.reverse.enabled'],
  'merge-keys': ['merge.sourceKeyReadPredicate.enabled'],
  case5: [
    'optimize.zorder.conflictReconciliation.enabled',
    'optimize.zorder.conflictReconciliation.reverse.enabled',
  ],
  case5a: ['optimize.zorder.conflictReconciliation.enabled'],
  case5b: ['optimize.zorder.conflictReconciliation.reverse.enabled'],
  case6: ['merge.rowLevelConflicts.enabled'],
})

/**
 * Resolves options into a complete configuration.
 *
 * @param options - the caller's options
 * @returns the frozen configuration
 * @throws {InvalidArgumentError} when a value is out of range or a writer kind is unknown
 */
export function resolveRaceConfig(options: RaceOptions): RaceConfig {
  if (typeof options.location !== 'string' || options.location === '') {
    throw new InvalidArgumentError('The race needs a table location', { argument: 'location' })
  }
  const location = tableLocationOf(options.location)
  const seed = options.seed ?? 1
  if (!Number.isSafeInteger(seed)) {
    throw new InvalidArgumentError(`Invalid seed ${seed}: use an integer`, { argument: 'seed' })
  }
  const writers = expandWriters(options.writers ?? DEFAULT_WRITER_MIX)
  const conflicts = options.conflicts ?? 'all'
  const faults = { ...NO_FAULTS, ...(options.faults ?? {}) }
  for (const [name, rate] of Object.entries(faults)) {
    if (!(typeof rate === 'number' && rate >= 0 && rate <= 1)) {
      throw new InvalidArgumentError(`Invalid fault rate ${name}=${String(rate)}: use a number in [0, 1]`, {
        argument: 'faults',
      })
    }
  }
  const overlap = options.overlap ?? 'disjoint'
  if (!['disjoint', 'partial', 'hot'].includes(overlap)) {
    throw new InvalidArgumentError(`Invalid key overlap '${overlap}': use disjoint, partial or hot`, {
      argument: 'overlap',
    })
  }
  const isolation = options.isolation ?? 'WriteSerializable'
  if (isolation !== 'Serializable' && isolation !== 'WriteSerializable') {
    throw new InvalidArgumentError(`Invalid isolation level '${isolation}'`, {
      argument: 'isolation',
      hint: 'Use Serializable or WriteSerializable.',
    })
  }
  return Object.freeze({
    runId: options.runId ?? `race${seed}`,
    location,
    // Events and reports are local files even when the table lives in an object store.
    outDir:
      options.outDir ??
      (isRemoteLocation(location)
        ? join(tmpdir(), `delta-rlc-race-${options.runId ?? `race${seed}`}`)
        : `${location}.race`),
    seed,
    writers,
    overlap,
    isolation,
    conflicts: conflictsFlags(conflicts),
    conflictsLabel: conflictsLabelOf(conflicts),
    durationMs: positive('durationMs', options.durationMs ?? 60_000, 0),
    opsPerWriter: positive('opsPerWriter', options.opsPerWriter ?? 0, 0),
    faults: Object.freeze(faults),
    rows: positive('rows', options.rows ?? 20_000, 1),
    initialFiles: positive('initialFiles', options.initialFiles ?? 8, 1),
    keysPerOp: positive('keysPerOp', options.keysPerOp ?? 8, 1),
    appendRows: positive('appendRows', options.appendRows ?? 50, 1),
    hotKeys: positive('hotKeys', options.hotKeys ?? 16, 1),
    ...(rowTrackingOf(options, writers) ? { rowTracking: true } : {}),
    ...(options.commitRetry === undefined ? {} : { commitRetry: Object.freeze({ ...options.commitRetry }) }),
    ...(options.storeLatencyMs === undefined || options.storeLatencyMs === 0
      ? {}
      : { storeLatencyMs: latency(options.storeLatencyMs) }),
    ...(options.conflictRetries === undefined || options.conflictRetries === 0
      ? {}
      : { conflictRetries: positive('conflictRetries', options.conflictRetries, 0) }),
  })
}

/** Whether the race table gets row tracking: as asked, else when a `zorder` writer runs. */
function rowTrackingOf(options: RaceOptions, writers: readonly WriterSpec[]): boolean {
  if (options.rowTracking !== undefined) {
    if (typeof options.rowTracking !== 'boolean') {
      throw new InvalidArgumentError(
        `Invalid rowTracking ${String(options.rowTracking)}: use true or false`,
        {
          argument: 'rowTracking',
        },
      )
    }
    return options.rowTracking
  }
  return writers.some((w) => w.kind === 'zorder')
}

/**
 * Parses a writer mix such as `delete=2,update=1,merge=1,append=2,optimize=1`.
 *
 * @param text - comma-separated `kind=count` pairs
 * @returns writers per kind
 * @throws {InvalidArgumentError} on an unknown kind or a count that is not a non-negative integer
 */
export function parseWriterMix(text: string): Partial<Record<WriterKind, number>> {
  const out: Partial<Record<WriterKind, number>> = {}
  for (const [name, value] of pairsOf(text, 'writers')) {
    if (!WRITER_KINDS.includes(name as WriterKind)) {
      throw new InvalidArgumentError(`Unknown writer kind '${name}'`, {
        argument: 'writers',
        hint: `Use kinds among ${WRITER_KINDS.join(', ')}, e.g. delete=2,append=1.`,
      })
    }
    const n = Number(value)
    if (!Number.isSafeInteger(n) || n < 0) {
      throw new InvalidArgumentError(`Invalid writer count '${value}' for ${name}`, { argument: 'writers' })
    }
    out[name as WriterKind] = (out[name as WriterKind] ?? 0) + n
  }
  return out
}

/**
 * Parses fault rates such as `kill=0.02,put=0.01,read=0.01,ambiguous=0.01`.
 *
 * @param text - comma-separated `fault=rate` pairs
 * @returns the rates given (the others stay 0)
 * @throws {InvalidArgumentError} on an unknown fault or a rate outside [0, 1]
 */
export function parseFaultRates(text: string): Partial<FaultRates> {
  const out: Record<string, number> = {}
  for (const [name, value] of pairsOf(text, 'faults')) {
    if (!(name in NO_FAULTS)) {
      throw new InvalidArgumentError(`Unknown fault '${name}'`, {
        argument: 'faults',
        hint: 'Use kill, put, read and ambiguous, e.g. kill=0.02,put=0.01.',
      })
    }
    const rate = Number(value)
    if (!(rate >= 0 && rate <= 1)) {
      throw new InvalidArgumentError(`Invalid rate '${value}' for fault ${name}: use a number in [0, 1]`, {
        argument: 'faults',
      })
    }
    out[name] = rate
  }
  return out as Partial<FaultRates>
}

/**
 * Parses a `conflicts` text: `all`, `none`, or a comma-separated list of flag keys and case
 * names. (The CLI reads `--conflicts` with the parser every command shares.)
 *
 * @param text - the option text
 * @returns the setting
 * @throws {InvalidArgumentError} when an entry names neither a flag key nor a case
 */
export function parseRaceConflicts(text: string): RaceConflicts {
  const t = text.trim()
  if (t === 'all' || t === 'none') return t
  const names = t
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
  conflictsFlags(names)
  return names
}

// === Internals ===

function expandWriters(mix: Readonly<Partial<Record<WriterKind, number>>>): readonly WriterSpec[] {
  const out: WriterSpec[] = []
  for (const [kind, count] of Object.entries(mix)) {
    if (!WRITER_KINDS.includes(kind as WriterKind)) {
      throw new InvalidArgumentError(`Unknown writer kind '${kind}'`, {
        argument: 'writers',
        hint: `Use kinds among ${WRITER_KINDS.join(', ')}.`,
      })
    }
    if (!Number.isSafeInteger(count) || (count as number) < 0) {
      throw new InvalidArgumentError(`Invalid writer count ${String(count)} for ${kind}`, {
        argument: 'writers',
      })
    }
  }
  // A fixed kind order keeps writer indexes stable whatever order the caller listed the mix in.
  for (const kind of WRITER_KINDS) {
    for (let i = 0; i < (mix[kind] ?? 0); i++) out.push(Object.freeze({ index: out.length, kind }))
  }
  if (out.length === 0) {
    throw new InvalidArgumentError('The race needs at least one writer', { argument: 'writers' })
  }
  return Object.freeze(out)
}

const CONFLICTS_HINT = `Use all, none, or flag keys among ${CONFLICT_FLAG_KEYS.join(', ')}.`

/**
 * The flags of a `conflicts` setting, checked as `DeltaTable.open` checks them, so that a race
 * with an unknown flag fails here, before it creates its table or starts a writer.
 */
function conflictsFlags(
  conflicts: RaceConflicts,
): 'all' | 'none' | Readonly<Record<string, boolean | number>> {
  if (conflicts === 'all' || conflicts === 'none') return conflicts
  if (typeof conflicts === 'string' || conflicts === null || typeof conflicts !== 'object') {
    throw new InvalidArgumentError(`Invalid conflicts setting '${String(conflicts)}'`, {
      argument: 'conflicts',
      hint: CONFLICTS_HINT,
    })
  }
  const flags: Record<string, boolean | number> = {}
  if (isNameList(conflicts)) {
    for (const name of conflicts) {
      for (const k of CONFLICT_CASE_FLAGS[name] ?? [name]) flags[k] = true
    }
  } else {
    Object.assign(flags, conflicts)
  }
  try {
    parseConflictFlags(flags)
  } catch (err) {
    if (!(err instanceof InvalidArgumentError)) throw err
    throw new InvalidArgumentError(`Invalid race conflicts setting: ${err.message}`, {
      argument: 'conflicts',
      cause: err,
      hint: CONFLICTS_HINT,
    })
  }
  return Object.freeze(flags)
}

function isNameList(conflicts: RaceConflicts): conflicts is readonly string[] {
  return Array.isArray(conflicts)
}

function conflictsLabelOf(conflicts: RaceConflicts): string {
  if (typeof conflicts === 'string') return conflicts
  if (isNameList(conflicts)) return conflicts.join(',')
  return Object.entries(conflicts)
    .map(([k, v]) => (v === true ? k : `${k}=${String(v)}`))
    .join(',')
}

function positive(name: string, value: number, min: number): number {
  if (!Number.isSafeInteger(value) || value < min) {
    throw new InvalidArgumentError(`Invalid ${name} ${value}: use an integer >= ${min}`, { argument: name })
  }
  return value
}

function latency(value: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new InvalidArgumentError(`Invalid storeLatencyMs ${String(value)}: use a number of ms >= 0`, {
      argument: 'storeLatencyMs',
    })
  }
  return value
}

function pairsOf(text: string, argument: string): Array<[string, string]> {
  const out: Array<[string, string]> = []
  for (const part of text.split(',')) {
    const p = part.trim()
    if (p === '') continue
    const eq = p.indexOf('=')
    if (eq <= 0) {
      throw new InvalidArgumentError(`Invalid ${argument} entry '${p}': expected name=value`, { argument })
    }
    out.push([p.slice(0, eq).trim(), p.slice(eq + 1).trim()])
  }
  return out
}

/** Whether a location names an object store (`az://`, `s3://`, ...) rather than a local path. */
export function isRemoteLocation(location: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(location) && !location.startsWith('file://')
}

/**
 * A location below another: a path join for local tables, a key prefix for object stores.
 *
 * @param location - the parent location
 * @param name - the child's name
 */
export function childLocation(location: string, name: string): string {
  if (!isRemoteLocation(location)) return join(location, name)
  // The query (an https:// location's SAS token) stays at the end.
  const q = location.indexOf('?')
  const [path, query] = q < 0 ? [location, ''] : [location.slice(0, q), location.slice(q)]
  return `${path.replace(/\/+$/, '')}/${name}${query}`
}

function tableLocationOf(location: string): string {
  if (location.startsWith('file://')) return decodeURIComponent(new URL(location).pathname)
  return location
}
