/**
 * Shared set-up of the scenario suites (design/scenarios.md): the catalogue's tables T(n, f), its
 * schedules S1, S2, S3 and M, and the checks every record makes (live ids, DV cardinalities,
 * composition tags, the outcome and the error's fields).
 *
 * Everything runs through the real engine: DuckDB data plane, local store, the commit loop and
 * the conflict checker. One DuckDB database serves every table of a test file (the engine is
 * composed exactly as the default one, with a shared runtime) so that hundreds of tiny tables stay
 * cheap; tables built the same way are built once and copied.
 */
import assert from 'node:assert/strict'
import { cp, mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after } from 'node:test'
import { DuckDBInstance } from '@duckdb/node-api'
import { initDeletionVectors } from '../../../src/dv/index.js'
import type { Engine } from '../../../src/engine/engine.js'
import { DuckDbParquetHandler } from '../../../src/engine-default/checkpoint-parquet.js'
import { DuckDbDataPlane } from '../../../src/engine-default/duckdb-data-plane.js'
import { DuckDbMergeExecutor } from '../../../src/engine-default/duckdb-merge.js'
import { DuckDbRuntime } from '../../../src/engine-default/duckdb-runtime.js'
import { DuckDbWriter } from '../../../src/engine-default/duckdb-writer.js'
import { ConcurrentModificationError } from '../../../src/errors/index.js'
import { parseWhere } from '../../../src/expressions/parse-where.js'
import { buildAppend } from '../../../src/ops/append.js'
import { parseCommitFile, serializeCommit } from '../../../src/protocol/action-json.js'
import type { Action, AddFile, RemoveFile } from '../../../src/protocol/actions.js'
import { tombstoneOf } from '../../../src/protocol/file-action-rewrites.js'
import { commitFileName, LOG_DIR } from '../../../src/protocol/log-files.js'
import { decodeAddPath } from '../../../src/protocol/partition-values.js'
import { protocolForProperties } from '../../../src/protocol/table-features.js'
import { loadDeletionVector } from '../../../src/scan/load-deletion-vector.js'
import { pruneFiles } from '../../../src/scan/prune-files.js'
import { createLocalStore, passThroughStore } from '../../../src/storage/index.js'
import type { ObjectStore } from '../../../src/storage/object-store.js'
import type { CreateOptions } from '../../../src/table/create-table.js'
import { DeltaTable } from '../../../src/table/delta-table.js'
import type { Transaction } from '../../../src/table/transaction.js'
import type { CommitResult } from '../../../src/txn/commit-result.js'
import type { PreparedOperation } from '../../../src/txn/staged-operation.js'

// === Flags ===

/** The `conflicts` option of a table handle. */
export type Conflicts = 'all' | 'none' | Readonly<Record<string, boolean | number>>

/** The catalogue's flags, by the option keys of api.md. */
export const FLAG = Object.freeze({
  rowLevel: 'rowLevelConcurrency.enabled',
  skipping: 'conflictDetection.dataSkipping.enabled',
  valueExact: 'conflictDetection.dataSkipping.valueExact.enabled',
  noDataChange: 'conflictDetection.excludeNoDataChangeFiles.enabled',
  forward: 'optimize.conflictReconciliation.enabled',
  reverse: 'optimize.conflictReconciliation.reverse.enabled',
  mergeKeys: 'merge.sourceKeyReadPredicate.enabled',
  mergeKeysThreshold: 'merge.sourceKeyReadPredicate.inSetThreshold',
})

/**
 * Turns the listed flags on (every other one stays off).
 *
 * @param on - option keys of the flags to turn on
 * @returns the `conflicts` option
 */
export function flags(...on: readonly string[]): Readonly<Record<string, boolean>> {
  return Object.freeze(Object.fromEntries(on.map((k) => [k, true])))
}

/** A file-level conflict of Delta's three file checks (the catalogue's "abort(any-CME)"). */
export const ANY_CME = /^DELTA_CONCURRENT_(APPEND|DELETE_READ|DELETE_DELETE)$/

// === Scratch space and engine ===

const roots: string[] = []
const duck = new DuckDbRuntime()
const scratchDir = join(tmpdir(), 'delta-rlc-scratch')

after(async () => {
  await duck.close()
  await Promise.all(roots.map((r) => rm(r, { recursive: true, force: true })))
})

/**
 * A fresh directory for one table, removed when the test file ends.
 *
 * @returns the table directory (not yet created)
 */
export async function tableDir(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'delta-rlc-scenario-'))
  roots.push(root)
  return join(root, 't')
}

/**
 * The default engine's parts over `storage`, on the file's shared DuckDB database.
 *
 * @param storage - the table's store
 * @returns an engine whose `close` leaves the shared database open
 */
export function engineFor(storage: ObjectStore): Engine {
  return Object.freeze({
    storage,
    parquet: new DuckDbParquetHandler(storage, duck, scratchDir),
    data: new DuckDbDataPlane(storage, duck, scratchDir),
    writer: new DuckDbWriter(storage, duck, scratchDir),
    merge: new DuckDbMergeExecutor(storage, duck, scratchDir),
    close: async () => {},
  })
}

/**
 * Creates a table at `dir` through the public API.
 *
 * @param dir - the table directory
 * @param options - schema, partitioning, properties
 * @param conflicts - the handle's reconciliation flags
 * @returns the open table
 */
export async function createTable(
  dir: string,
  options: CreateOptions,
  conflicts: Conflicts = 'none',
): Promise<DeltaTable> {
  return DeltaTable.create(dir, options, {
    engine: engineFor(createLocalStore(dir)),
    conflicts,
    autoCheckpoint: false,
  })
}

/**
 * Opens another handle on a table, with its own flags (the catalogue sets flags per transaction).
 *
 * @param dir - the table directory
 * @param conflicts - the handle's reconciliation flags
 * @param storage - a store to use instead of the plain local one (S3's hook store)
 * @returns the open table
 */
export async function openTable(
  dir: string,
  conflicts: Conflicts = 'none',
  storage?: ObjectStore,
): Promise<DeltaTable> {
  return DeltaTable.open(dir, {
    engine: engineFor(storage ?? createLocalStore(dir)),
    conflicts,
    autoCheckpoint: false,
  })
}

// === Tables ===

const templates = new Map<string, Promise<string>>()

/**
 * A copy of a table built once per test file: the first call runs `build` on a template
 * directory, every call gets its own copy of the result.
 *
 * @param key - identifies the build
 * @param build - builds the table at the given directory
 * @returns the copy's directory
 */
export async function fromTemplate(key: string, build: (dir: string) => Promise<void>): Promise<string> {
  let template = templates.get(key)
  if (template === undefined) {
    template = (async () => {
      const dir = await tableDir()
      await build(dir)
      return dir
    })()
    templates.set(key, template)
  }
  const source = await template
  const dir = await tableDir()
  await cp(source, dir, { recursive: true })
  return dir
}

/** How a T(n, f) table is laid out. */
export interface TOptions {
  /** `delta.enableDeletionVectors` (default true). */
  readonly dv?: boolean
  /** More table properties. */
  readonly properties?: Readonly<Record<string, string>>
  /** A constant partition column added to every row. */
  readonly partition?: { readonly column: string; readonly value: number }
  /** Write the files without statistics (committed as their adds without `stats`). */
  readonly withoutStats?: boolean
}

/**
 * The catalogue's T(n, f): one `long` column `id` holding 0..n-1 in `f` files of contiguous
 * ranges in id order, each written by its own append. Checks the file count.
 *
 * @param n - rows
 * @param f - files
 * @param options - deletion vectors, properties, partition column, statistics
 * @returns the directory of a fresh copy
 */
export async function tableT(n: number, f: number, options: TOptions = {}): Promise<string> {
  const key = JSON.stringify(['T', n, f, options])
  return fromTemplate(key, async (dir) => {
    const part = options.partition
    const table = await createTable(dir, {
      schema: part === undefined ? 'id long' : `id long, ${part.column} int`,
      partitionBy: part === undefined ? [] : [part.column],
      properties: { 'delta.enableDeletionVectors': String(options.dv ?? true), ...options.properties },
    })
    for (let k = 0; k < f; k++) {
      const rows = span((k * n) / f, ((k + 1) * n) / f).map((i) =>
        part === undefined ? { id: BigInt(i) } : { id: BigInt(i), [part.column]: part.value },
      )
      if (options.withoutStats) {
        const adds = await writeFiles(table, rows)
        await commitStaged(
          table,
          adds.map((a) => ({ add: withoutStats(a) })),
          { operation: 'WRITE' },
        )
      } else {
        await table.append(rows)
      }
    }
    assert.equal((await liveFiles(table)).length, f, `T(${n},${f}) has ${f} files`)
  })
}

/**
 * Commits new table properties (and the protocol they need) as one metadata change, as
 * `ALTER TABLE SET TBLPROPERTIES` does.
 *
 * @param table - the table
 * @param properties - properties to set
 * @returns the commit
 */
export async function setTableProperties(
  table: DeltaTable,
  properties: Readonly<Record<string, string>>,
): Promise<CommitResult> {
  const snap = await table.snapshot()
  const configuration = { ...snap.metadata.configuration, ...properties }
  const protocol = protocolForProperties(configuration, snap.schema)
  const txn = await table.begin()
  const actions: Action[] = [{ metaData: { ...snap.metadata, configuration } }]
  if (JSON.stringify(protocol) !== JSON.stringify(snap.protocol)) actions.unshift({ protocol })
  txn.stageActions(actions, { operation: 'SET TBLPROPERTIES', changesData: false })
  return txn.commit()
}

// === Reading the table back ===

/**
 * The integers of `[a, b)`.
 *
 * @param a - first
 * @param b - end (excluded)
 * @returns them in order
 */
export function span(a: number, b: number): number[] {
  return Array.from({ length: Math.max(0, b - a) }, (_, i) => a + i)
}

/**
 * The catalogue's ids(...): a sorted id multiset from a base, minus and plus some ids.
 *
 * @param base - the starting ids
 * @param minus - ids removed (one occurrence each)
 * @param plus - ids added
 * @returns the sorted multiset
 */
export function idsOf(base: readonly number[], minus: readonly number[] = [], plus: readonly number[] = []) {
  const out = [...base]
  for (const m of minus) {
    const i = out.indexOf(m)
    assert.ok(i >= 0, `id ${m} is not in the base`)
    out.splice(i, 1)
  }
  return [...out, ...plus].sort((a, b) => a - b)
}

/**
 * The live values of an integer column, sorted.
 *
 * @param table - the table
 * @param column - the column (default `id`)
 * @returns the values as numbers
 */
export async function liveIds(table: DeltaTable, column = 'id'): Promise<number[]> {
  const rows = await table.scan({ columns: [column] }).toArray()
  return rows.map((r) => Number(r[column] as bigint)).sort((a, b) => a - b)
}

/**
 * Live rows as plain objects of numbers, sorted by `id`.
 *
 * @param table - a table whose columns are all integers
 * @returns the rows
 */
export async function liveRows(table: DeltaTable): Promise<Array<Record<string, number | null>>> {
  const rows = await table.scan().toArray()
  return rows
    .map((r) =>
      Object.fromEntries(
        Object.entries(r).map(([k, v]) => [k, v === null || v === undefined ? null : Number(v)]),
      ),
    )
    .sort((a, b) => (a.id ?? 0) - (b.id ?? 0))
}

/**
 * The live files of the latest version.
 *
 * @param table - the table
 * @returns their adds
 */
export async function liveFiles(table: DeltaTable): Promise<AddFile[]> {
  return [...(await (await table.snapshot()).files())]
}

/**
 * The catalogue's DV-cards: cardinalities of the live files' deletion vectors, sorted.
 *
 * @param table - the table
 * @returns the cardinalities (files without a DV are not listed)
 */
export async function dvCards(table: DeltaTable): Promise<number[]> {
  return (await liveFiles(table))
    .filter((f) => f.deletionVector !== undefined)
    .map((f) => Number(f.deletionVector!.cardinality))
    .sort((a, b) => a - b)
}

/**
 * The latest version of the table.
 *
 * @param table - the table
 * @returns the version
 */
export async function latestVersion(table: DeltaTable): Promise<bigint> {
  return (await table.snapshot()).version
}

/**
 * The actions of one commit, read from the log on disk.
 *
 * @param dir - the table directory
 * @param version - the version
 * @returns its actions
 */
export async function commitActions(dir: string, version: bigint): Promise<Action[]> {
  const text = await readFile(join(dir, LOG_DIR, commitFileName(version)), 'utf8')
  return parseCommitFile(text, { path: commitFileName(version), version })
}

/**
 * The `remove` actions of a list.
 *
 * @param actions - a commit's actions
 * @returns the removes, in order
 */
export function removesOf(actions: readonly Action[]): RemoveFile[] {
  return actions.flatMap((a) => ('remove' in a ? [a.remove] : []))
}

/**
 * The `add` actions of a list.
 *
 * @param actions - a commit's actions
 * @returns the adds, in order
 */
export function addsOf(actions: readonly Action[]): AddFile[] {
  return actions.flatMap((a) => ('add' in a ? [a.add] : []))
}

/**
 * A compaction source's composition tags, parsed.
 *
 * @param remove - the source's tombstone
 * @returns the output paths, the first entry's offset and physical count, and the entry count;
 *   undefined when untagged
 */
export function compositionOf(
  remove: RemoveFile,
): { into: string[]; offset: number; physical: number; entries: number } | undefined {
  const into = remove.tags?.compactedInto
  const info = remove.tags?.compactionInfo
  if (typeof into !== 'string' || typeof info !== 'string') return undefined
  const entries = JSON.parse(info) as Array<{ rowOffsetInTarget: number; sourceNumPhysicalRecords: number }>
  const first = entries[0]!
  return {
    into: JSON.parse(into) as string[],
    offset: first.rowOffsetInTarget,
    physical: first.sourceNumPhysicalRecords,
    entries: entries.length,
  }
}

/**
 * The `id` values of a data file in physical row order, read by a DuckDB of its own (not the
 * engine's), so that the engine's reader is not checking itself.
 *
 * @param dir - the table directory
 * @param path - the file's `add.path`
 * @returns ids by physical row
 */
export async function physicalIds(dir: string, path: string): Promise<number[]> {
  const decoded = decodeAddPath(path)
  assert.equal(decoded.kind, 'relative')
  const file = join(dir, decoded.kind === 'relative' ? decoded.key : '')
  const instance = await DuckDBInstance.create(':memory:', {
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
  })
  const con = await instance.connect()
  try {
    const reader = await con.runAndReadAll(
      `SELECT id FROM read_parquet('${file.replaceAll("'", "''")}', file_row_number = true) ORDER BY file_row_number`,
    )
    return reader.getRows().map((r) => Number(r[0] as bigint))
  } finally {
    con.closeSync()
    instance.closeSync()
  }
}

/**
 * The live `id` values of a data file in physical order: its rows minus its deletion vector.
 *
 * @param table - the table (for its engine)
 * @param dir - the table directory
 * @param file - the file's `add`
 * @returns live ids by physical row
 */
export async function liveIdsInOrder(table: DeltaTable, dir: string, file: AddFile): Promise<number[]> {
  const ids = await physicalIds(dir, file.path)
  if (file.deletionVector === undefined) return ids
  await initDeletionVectors()
  const dv = await loadDeletionVector(table.engine, file.deletionVector)
  const deleted = new Set(dv.toArray())
  return ids.filter((_, i) => !deleted.has(i))
}

/**
 * Each live file's live ids in physical order, keyed by path: what a compaction reads.
 *
 * @param table - the table
 * @param dir - its directory
 * @returns path to live ids
 */
export async function sourcesAsRead(table: DeltaTable, dir: string): Promise<Map<string, number[]>> {
  const out = new Map<string, number[]>()
  for (const f of await liveFiles(table)) out.set(f.path, await liveIdsInOrder(table, dir, f))
  return out
}

/**
 * Checks an OPTIMIZE commit's composition against what was read: every tagged source names the
 * output, the runs tile the output from row 0 without gaps, and the output's physical rows at
 * each run are exactly that source's live rows in order (design decision 9).
 *
 * @returns the runs in write order: source path, output offset, live rows, physical rows
 */
export async function assertCompositionReadsBack(
  dir: string,
  removes: readonly RemoveFile[],
  output: AddFile,
  asRead: ReadonlyMap<string, readonly number[]>,
): Promise<Array<{ path: string; offset: number; live: number; physical: number }>> {
  const rows = await physicalIds(dir, output.path)
  const runs = removes
    .map((r) => ({ path: r.path, c: compositionOf(r) }))
    .sort((a, b) => (a.c?.offset ?? 0) - (b.c?.offset ?? 0))
  let next = 0
  const out: Array<{ path: string; offset: number; live: number; physical: number }> = []
  for (const { path, c } of runs) {
    assert.ok(c, `source ${path} is tagged`)
    assert.deepEqual(c.into, [output.path])
    assert.equal(c.entries, 1)
    assert.equal(c.offset, next, 'runs are contiguous in write order')
    const live = asRead.get(path)!
    assert.deepEqual(rows.slice(c.offset, c.offset + live.length), live, `rows of ${path} sit at ${c.offset}`)
    out.push({ path, offset: c.offset, live: live.length, physical: c.physical })
    next += live.length
  }
  assert.equal(next, rows.length)
  return out
}

/**
 * The Parquet files under a table directory (for orphan checks).
 *
 * @param dir - the table directory
 * @returns their relative paths
 */
export async function parquetFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true })
  return entries.map(String).filter((p) => p.endsWith('.parquet') && !p.startsWith(LOG_DIR))
}

// === Outcomes ===

/** How a transaction's commit ended. */
export type Outcome =
  | { readonly kind: 'committed'; readonly result: CommitResult }
  | { readonly kind: 'aborted'; readonly error: ConcurrentModificationError }

/**
 * Waits for a commit and classifies it; anything other than a concurrent-modification error
 * fails the test.
 *
 * @param commit - the commit in flight
 * @returns the outcome
 */
export async function settle(commit: Promise<CommitResult>): Promise<Outcome> {
  try {
    return { kind: 'committed', result: await commit }
  } catch (err) {
    if (err instanceof ConcurrentModificationError) return { kind: 'aborted', error: err }
    throw err
  }
}

/**
 * Asserts a commit landed a version.
 *
 * @param outcome - the outcome
 * @returns the commit result
 */
export function committed(outcome: Outcome): CommitResult {
  if (outcome.kind === 'aborted') {
    assert.fail(`expected a commit, got ${outcome.error.code}: ${outcome.error.message}`)
  }
  assert.equal(outcome.result.committed, true, 'the commit wrote a version')
  return outcome.result
}

/** What an abort must show. */
export interface AbortExpectation {
  /** The error code, or a pattern of codes (default: any file-level conflict). */
  readonly code?: string | RegExp
  /** The check that failed. */
  readonly check?: string
  /** The winning version and operation the error must name. */
  readonly winnerVersion?: bigint
  readonly winnerOperation?: string
  /** The refusal the error must carry (a pattern), or `'none'` when no reconcile was tried. */
  readonly refused?: RegExp | 'none'
}

/**
 * Asserts a commit aborted with a conflict error that says which check failed.
 *
 * @param outcome - the outcome
 * @param expect - the fields the error must show
 * @returns the error
 */
export function aborted(outcome: Outcome, expect: AbortExpectation = {}): ConcurrentModificationError {
  if (outcome.kind === 'committed') {
    assert.fail(`expected an abort, but version ${outcome.result.version} was committed`)
  }
  const error = outcome.error
  const code = expect.code ?? ANY_CME
  if (typeof code === 'string') assert.equal(error.code, code)
  else assert.match(error.code, code)
  assert.ok(error.check, 'the error names the check that failed')
  if (expect.check !== undefined) assert.equal(error.check, expect.check)
  if (expect.winnerVersion !== undefined) assert.equal(error.winnerVersion, expect.winnerVersion)
  if (expect.winnerOperation !== undefined) assert.equal(error.winnerOperation, expect.winnerOperation)
  if (expect.refused === 'none') assert.equal(error.reconcileRefused, undefined)
  else if (expect.refused !== undefined) {
    assert.ok(error.reconcileRefused, 'the error says why the reconcile was refused')
    assert.match(error.reconcileRefused, expect.refused)
    assert.ok(error.message.includes(error.reconcileRefused), 'the message carries the refusal')
  }
  return error
}

/**
 * Asserts the reconciliations of a commit: their kinds in order, each naming a winner.
 *
 * @param result - the commit result
 * @param expected - kind, winner version and operation of each, and optionally its files and rows
 */
export function assertReconciled(
  result: CommitResult,
  expected: readonly {
    readonly kind: string
    readonly winnerVersion: bigint
    readonly winnerOperation: string
    readonly files?: readonly string[]
    readonly rows?: number
  }[],
): void {
  assert.deepEqual(
    result.reconciliations.map((r) => [r.kind, r.winnerVersion, r.winnerOperation]),
    expected.map((e) => [e.kind, e.winnerVersion, e.winnerOperation]),
  )
  for (const [i, e] of expected.entries()) {
    const got = result.reconciliations[i]!
    if (e.files !== undefined) assert.deepEqual([...(got.detail.files ?? [])].sort(), [...e.files].sort())
    if (e.rows !== undefined) assert.equal(got.detail.rows, e.rows)
  }
}

// === Schedules ===

/** An operation staged on a transaction. */
export type Op = (txn: Transaction) => Promise<unknown>

/**
 * Runs an operation as its own transaction: begin, stage, commit.
 *
 * @param table - the handle (its flags apply)
 * @param op - the operation
 * @returns the commit
 */
export async function run(table: DeltaTable, op: Op): Promise<CommitResult> {
  const txn = await table.begin()
  await op(txn)
  return txn.commit()
}

/**
 * Schedule S1 (A-start, B, A-end): the loser runs to just before commit, the winner runs start
 * to finish, then the loser commits.
 *
 * @param loser - the loser's handle and operation
 * @param winner - the winner's handle and operation
 * @returns the winner's commit and the loser's outcome
 */
export async function s1(
  loser: readonly [DeltaTable, Op],
  winner: readonly [DeltaTable, Op],
): Promise<{ readonly winner: CommitResult; readonly loser: Outcome }> {
  const txn = await loser[0].begin()
  await loser[1](txn)
  const w = await run(winner[0], winner[1])
  assert.equal(w.committed, true, 'the winner committed')
  return { winner: w, loser: await settle(txn.commit()) }
}

/**
 * Schedule S2 (A-start, B, C, A-end): the loser pauses before commit while two winners commit
 * one after the other (the second reads the first's state).
 *
 * @param loser - the loser's handle and operation
 * @param first - the first winner's handle and operation
 * @param second - the second winner's, begun after the first committed
 * @returns the winners' commits and the loser's outcome
 */
export async function s2(
  loser: readonly [DeltaTable, Op],
  first: readonly [DeltaTable, Op],
  second: readonly [DeltaTable, Op],
): Promise<{ readonly winners: readonly CommitResult[]; readonly loser: Outcome }> {
  const txn = await loser[0].begin()
  await loser[1](txn)
  const w1 = await run(first[0], first[1])
  const w2 = await run(second[0], second[1])
  return { winners: [w1, w2], loser: await settle(txn.commit()) }
}

/**
 * A store that runs `beforeCommit` once, just before the first put of a log commit goes through:
 * schedule S3's "the winner commits while the loser is at pre-commit", for operations that stage
 * and commit inside one call (OPTIMIZE with its own retry).
 *
 * @param inner - the table's store
 * @param beforeCommit - the winner
 * @returns the wrapping store
 */
export function preCommitHookStore(inner: ObjectStore, beforeCommit: () => Promise<unknown>): ObjectStore {
  let pending: (() => Promise<unknown>) | undefined = beforeCommit
  return {
    ...passThroughStore(inner),
    put: async (key, data, opts) => {
      if (pending !== undefined && /^_delta_log\/\d{20}\.json$/.test(key)) {
        const hook = pending
        pending = undefined
        await hook()
      }
      return inner.put(key, data, opts)
    },
  }
}

// === The manual API (schedule M) ===

const NO_ACTIONS: PreparedOperation = Object.freeze({
  operation: 'READ',
  parameters: {},
  actions: [],
  metrics: {},
  changesData: false,
})

/**
 * Records a read the way Delta's manual API (`txn.filterFiles`) does, without reading rows:
 * `'matching'` registers the predicate and the files it may select (by partition values and
 * stats); `'all'` registers the predicate and every live file; `'none'` registers the predicate
 * only (the partition-of-new-files read of a dynamic partition overwrite).
 *
 * @param txn - the transaction
 * @param where - the predicate (a full scan when undefined)
 * @param files - which files the read registers
 */
export async function recordRead(
  txn: Transaction,
  where: string | undefined,
  files: 'matching' | 'all' | 'none' = 'matching',
): Promise<void> {
  await txn.stage(async (ctx) => {
    const predicate = parseWhere(where)
    const active = ctx.snapshot.activeFiles()
    const chosen =
      files === 'none' ? [] : files === 'all' ? active : pruneFiles(ctx.snapshot, active, predicate).files
    ctx.recordRead(chosen, predicate, files === 'none' ? { predicateOnly: true } : {})
    return NO_ACTIONS
  })
}

/**
 * Writes real data files for `rows` (one per partition) without committing them, as a writer
 * preparing a manual commit does.
 *
 * @param table - the table
 * @param rows - the rows
 * @returns their adds (dataChange = true, with exact statistics)
 */
export async function writeFiles(
  table: DeltaTable,
  rows: readonly Readonly<Record<string, unknown>>[],
): Promise<AddFile[]> {
  const txn = await table.begin()
  const op = await txn.stage((ctx) => buildAppend(ctx, rows))
  return addsOf(op.actions)
}

/**
 * An add without statistics (as written by an engine that collects none).
 *
 * @param add - the add
 * @returns a copy without `stats`
 */
export function withoutStats(add: AddFile): AddFile {
  const { stats: _stats, ...rest } = add
  return Object.freeze(rest)
}

/**
 * An add with another `dataChange`.
 *
 * @param file - the add
 * @param dataChange - the new value
 * @returns the copy
 */
export function withDataChange(file: AddFile, dataChange: boolean): AddFile {
  return Object.freeze({ ...file, dataChange })
}

/**
 * The tombstone of a live file, as the manual API writes it.
 *
 * @param add - the file
 * @param dataChange - the tombstone's `dataChange` (default true)
 * @returns the remove
 */
export function tombstone(add: AddFile, dataChange = true): RemoveFile {
  return tombstoneOf(add, BigInt(Date.now()), dataChange)
}

/**
 * Stages raw actions on a fresh transaction (after `before`, which may record reads) and
 * commits them.
 *
 * @param table - the handle
 * @param actions - the actions
 * @param options - operation name, whether it changes data, reads to make first
 * @returns the commit
 */
export async function commitStaged(
  table: DeltaTable,
  actions: readonly Action[],
  options: { operation?: string; changesData?: boolean; before?: (txn: Transaction) => Promise<void> } = {},
): Promise<CommitResult> {
  const txn = await table.begin()
  await options.before?.(txn)
  txn.stageActions(actions, {
    operation: options.operation ?? 'Manual Update',
    changesData: options.changesData,
  })
  return txn.commit()
}

/**
 * Writes the next version directly, as another engine's commit (one that delta-rlc's own API
 * never produces, such as an empty commit holding only `commitInfo`).
 *
 * @param table - the table
 * @param actions - the actions after `commitInfo`
 * @param operation - `commitInfo.operation`
 * @returns the version written
 */
export async function commitRaw(
  table: DeltaTable,
  actions: readonly Action[],
  operation: string,
): Promise<bigint> {
  const version = (await latestVersion(table)) + 1n
  const body = serializeCommit([
    { commitInfo: { timestamp: BigInt(Date.now()), operation, txnId: `raw-${version}` } },
    ...actions,
  ])
  await table.engine.storage.put(`${LOG_DIR}${commitFileName(version)}`, new TextEncoder().encode(body), {
    ifNotExists: true,
  })
  return version
}
