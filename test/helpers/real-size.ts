/**
 * The real-size test tier's shared pieces: a language of table operations kept as data, run both
 * on a real table (through the public `DeltaTable` API) and on a row model kept in JavaScript, so
 * a test can check after every commit that the table, its count and its time travel agree with
 * the model.
 *
 * The table: `id long not null, name string, value double, part int`, optionally partitioned by
 * `part`. Appended row `i` has `name` NULL for every third id, `value` NULL for every fifth, and
 * `part = i % 3`. MERGE sources mix appended ids with ids from 1,000,000 up, which no append uses.
 */
import assert from 'node:assert/strict'
import { readdir, unlink } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { resolveDvLocation } from '../../src/dv/index.js'
import type { MergeOptions } from '../../src/ops/merge-clauses.js'
import type { DeletionVectorDescriptor } from '../../src/protocol/actions.js'
import { decodeAddPath } from '../../src/protocol/partition-values.js'
import type { DeltaTable } from '../../src/table/delta-table.js'
import type { CommitResult } from '../../src/txn/commit-result.js'

// === Rows ===

/**
 * A row of the model, typed as a scan returns it. A type alias, not an interface, so that model
 * rows pass where the API takes rows as records.
 */
export type ModelRow = {
  readonly id: bigint
  readonly name: string | null
  readonly value: number | null
  readonly part: number
}

/** The schema every real-size table uses. */
export const REAL_SIZE_SCHEMA = 'id long not null, name string, value double, part int'

/** The first id MERGE inserts use: far above every appended id. */
export const MERGE_ID_BASE = 1_000_000

/**
 * Appended row `i`.
 *
 * @param i - the id
 */
export function appendedRow(i: number): ModelRow {
  return {
    id: BigInt(i),
    name: i % 3 === 0 ? null : `n${i}`,
    value: i % 5 === 0 ? null : i * 1.5,
    part: i % 3,
  }
}

// === Operations as data ===

/** A predicate as data: rendered to SQL for the table, evaluated in JavaScript for the model. */
export type Pred =
  | { readonly t: 'mod'; readonly m: number; readonly r: number }
  | { readonly t: 'range'; readonly a: number; readonly b: number }
  | { readonly t: 'partMod'; readonly p: number; readonly m: number; readonly r: number }
  | { readonly t: 'valueAbove'; readonly c: number }
  | { readonly t: 'nameNullMod'; readonly m: number; readonly r: number }

/** What an UPDATE sets. */
export type SetSpec =
  | { readonly t: 'addValue'; readonly k: number }
  | { readonly t: 'name'; readonly s: string }
  | { readonly t: 'movePart' }

/** One operation of a test script. */
export type Op =
  | { readonly kind: 'append'; readonly from: number; readonly count: number }
  | { readonly kind: 'delete'; readonly where: Pred }
  | { readonly kind: 'update'; readonly where: Pred; readonly set: SetSpec }
  | {
      readonly kind: 'merge'
      /** upsert: update every column or insert; delete: delete matches; mixed: a conditional mix. */
      readonly mode: 'upsert' | 'delete' | 'mixed'
      /**
       * Source ids: below {@link MERGE_ID_BASE}, appended ids (they match unless deleted since);
       * at or above it, ids no append uses.
       */
      readonly ids: readonly number[]
      /** Varies the source values from one MERGE to the next. */
      readonly salt: number
    }
  | { readonly kind: 'optimize' }
  /** VACUUM with the table's retention: nothing recent is deleted, no version is written. */
  | { readonly kind: 'vacuum' }

/**
 * The SQL text of a predicate.
 *
 * @param p - the predicate
 */
export function sqlOf(p: Pred): string {
  switch (p.t) {
    case 'mod':
      return `id % ${p.m} = ${p.r}`
    case 'range':
      return `id >= ${p.a} AND id < ${p.b}`
    case 'partMod':
      return `part = ${p.p} AND id % ${p.m} = ${p.r}`
    case 'valueAbove':
      return `value > ${p.c}`
    case 'nameNullMod':
      return `name IS NULL AND id % ${p.m} = ${p.r}`
  }
}

/**
 * Whether a model row satisfies a predicate, with SQL's NULL semantics (a comparison with NULL
 * selects nothing).
 *
 * @param p - the predicate
 * @param row - the row
 */
export function holds(p: Pred, row: ModelRow): boolean {
  const id = Number(row.id)
  switch (p.t) {
    case 'mod':
      return id % p.m === p.r
    case 'range':
      return id >= p.a && id < p.b
    case 'partMod':
      return row.part === p.p && id % p.m === p.r
    case 'valueAbove':
      return row.value !== null && row.value > p.c
    case 'nameNullMod':
      return row.name === null && id % p.m === p.r
  }
}

/**
 * The source row a MERGE sends for an id: a negative value for every fourth id (the mixed MERGE
 * deletes those matches and skips those inserts).
 *
 * @param id - the source id
 * @param salt - the MERGE's salt
 */
export function mergeSourceRow(id: number, salt: number): ModelRow {
  return {
    id: BigInt(id),
    name: `m${salt}_${id}`,
    value: id % 4 === 0 ? -salt : salt + id * 0.25,
    part: (id + salt) % 3,
  }
}

function mergeOptions(mode: 'upsert' | 'delete' | 'mixed'): MergeOptions {
  const on = 'target.id = source.id'
  switch (mode) {
    case 'upsert':
      return { on, whenMatched: [{ update: '*' }], whenNotMatched: [{ insert: '*' }] }
    case 'delete':
      return { on, whenMatched: [{ delete: true }] }
    case 'mixed':
      return {
        on,
        whenMatched: [
          { if: 'source.value < 0', delete: true },
          { update: { name: 'source.name', value: 'source.value' } },
        ],
        whenNotMatched: [{ if: 'source.value >= 0', insert: '*' }],
      }
  }
}

function setOf(s: SetSpec): Record<string, string> {
  switch (s.t) {
    case 'addValue':
      return { value: `value + ${s.k}` }
    case 'name':
      return { name: `'${s.s}'` }
    case 'movePart':
      return { part: '(part + 1) % 3' }
  }
}

function setRow(s: SetSpec, r: ModelRow): ModelRow {
  switch (s.t) {
    case 'addValue':
      return { ...r, value: r.value === null ? null : r.value + s.k }
    case 'name':
      return { ...r, name: s.s }
    case 'movePart':
      return { ...r, part: (r.part + 1) % 3 }
  }
}

/**
 * An operation applied to a model state (a new array; the input is not changed).
 *
 * @param op - the operation
 * @param state - the rows before
 * @returns the rows after
 */
export function applyToModel(op: Op, state: readonly ModelRow[]): ModelRow[] {
  switch (op.kind) {
    case 'append': {
      const out = state.slice()
      for (let i = op.from; i < op.from + op.count; i++) out.push(appendedRow(i))
      return out
    }
    case 'delete':
      return state.filter((r) => !holds(op.where, r))
    case 'update':
      return state.map((r) => (holds(op.where, r) ? setRow(op.set, r) : r))
    case 'merge': {
      const source = new Map(op.ids.map((id) => [BigInt(id), mergeSourceRow(id, op.salt)]))
      const present = new Set(state.map((r) => r.id))
      const out: ModelRow[] = []
      for (const r of state) {
        const s = source.get(r.id)
        if (s === undefined) out.push(r)
        else if (op.mode === 'upsert') out.push(s)
        else if (op.mode === 'mixed' && s.value !== null && s.value >= 0)
          out.push({ ...r, name: s.name, value: s.value })
      }
      if (op.mode !== 'delete') {
        for (const s of source.values()) {
          if (present.has(s.id)) continue
          if (op.mode === 'upsert' || (s.value !== null && s.value >= 0)) out.push(s)
        }
      }
      return out
    }
    case 'optimize':
    case 'vacuum':
      return state.slice()
  }
}

/**
 * Runs an operation on the table through the public API.
 *
 * @param table - the table
 * @param op - the operation
 * @returns the commit (`committed: false` when there was nothing to do)
 */
export async function applyToTable(table: DeltaTable, op: Op): Promise<CommitResult> {
  switch (op.kind) {
    case 'append': {
      const rows: ModelRow[] = []
      for (let i = op.from; i < op.from + op.count; i++) rows.push(appendedRow(i))
      return table.append(rows)
    }
    case 'delete':
      return table.delete(sqlOf(op.where))
    case 'update':
      return table.update({ where: sqlOf(op.where), set: setOf(op.set) })
    case 'merge':
      return table.merge(
        op.ids.map((id) => mergeSourceRow(id, op.salt)),
        mergeOptions(op.mode),
      )
    case 'optimize':
      return table.optimize()
    case 'vacuum':
      return table.vacuum()
  }
}

/** A short label of an operation, for assertion messages. */
export function describeOp(op: Op): string {
  switch (op.kind) {
    case 'append':
      return `append ${op.count} rows from id ${op.from}`
    case 'delete':
      return `delete where ${sqlOf(op.where)}`
    case 'update':
      return `update ${JSON.stringify(setOf(op.set))} where ${sqlOf(op.where)}`
    case 'merge':
      return `merge (${op.mode}) of ${op.ids.length} source rows`
    case 'optimize':
    case 'vacuum':
      return op.kind
  }
}

// === Checks ===

/** A row as one comparable line. */
export function rowKey(r: Readonly<Record<string, unknown>>): string {
  const v = (x: unknown) => (x === null || x === undefined ? 'NULL' : String(x))
  return `${v(r.id)}|${v(r.name)}|${v(r.value)}|${v(r.part)}`
}

/**
 * Asserts two row collections are equal as multisets, with a short diff on failure (a deepEqual
 * of thousands of rows prints a diff nobody can read).
 *
 * @param actual - the rows read
 * @param expected - the model's rows
 * @param message - what was read
 */
export function assertSameRows(
  actual: readonly Readonly<Record<string, unknown>>[],
  expected: readonly ModelRow[],
  message: string,
): void {
  const counts = new Map<string, number>()
  for (const r of expected) counts.set(rowKey(r), (counts.get(rowKey(r)) ?? 0) + 1)
  const extra: string[] = []
  for (const r of actual) {
    const k = rowKey(r)
    const n = counts.get(k) ?? 0
    if (n === 0) extra.push(k)
    else counts.set(k, n - 1)
  }
  const missing: string[] = []
  for (const [k, n] of counts) for (let i = 0; i < n; i++) missing.push(k)
  if (extra.length === 0 && missing.length === 0) return
  assert.fail(
    `${message}: ${actual.length} rows read, ${expected.length} expected; ` +
      `${missing.length} missing (e.g. ${missing.slice(0, 5).join(', ')}), ` +
      `${extra.length} unexpected (e.g. ${extra.slice(0, 5).join(', ')})`,
  )
}

/**
 * Asserts that a version (latest when absent) reads as the model: the full scan equals the model
 * as a multiset, and `count()` and the scan's length both equal the model's size.
 *
 * @param table - the table
 * @param expected - the model's rows at that version
 * @param message - context for failures
 * @param at - the version or timestamp to read
 */
export async function assertTableIs(
  table: DeltaTable,
  expected: readonly ModelRow[],
  message: string,
  at: { readonly version?: bigint; readonly timestamp?: number } = {},
): Promise<void> {
  const rows = await table.scan(at).toArray()
  assertSameRows(rows, expected, message)
  assert.equal(await table.scan(at).count(), expected.length, `${message}: count()`)
}

// === The log on disk ===

/** The versions of the checkpoint files in a local table's log, ascending. */
export async function checkpointVersions(dir: string): Promise<bigint[]> {
  const names = await readdir(join(dir, '_delta_log'))
  return names
    .filter((n) => /^\d{20}\.checkpoint(\.\d+\.\d+)?\.parquet$/.test(n))
    .map((n) => BigInt(n.slice(0, 20)))
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
}

/** The versions of the commit files in a local table's log, ascending. */
export async function commitVersions(dir: string): Promise<bigint[]> {
  const names = await readdir(join(dir, '_delta_log'))
  return names
    .filter((n) => /^\d{20}\.json$/.test(n))
    .map((n) => BigInt(n.slice(0, 20)))
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
}

/**
 * Cleans a local table's log up to a checkpoint the way Delta's log cleanup does: every commit
 * and checkpoint file of a version below `checkpoint` is deleted; the checkpoint, its commit and
 * everything after stay.
 *
 * @param dir - the table directory
 * @param checkpoint - the version of the checkpoint that becomes the start of the log
 * @returns the deleted file names
 */
export async function cleanUpLogBefore(dir: string, checkpoint: bigint): Promise<string[]> {
  const log = join(dir, '_delta_log')
  const deleted: string[] = []
  for (const n of await readdir(log)) {
    if (!/^\d{20}\./.test(n) || BigInt(n.slice(0, 20)) >= checkpoint) continue
    await unlink(join(log, n))
    deleted.push(n)
  }
  return deleted.sort()
}

/**
 * Files under a local table's root (outside `_delta_log/`) that the latest snapshot names
 * neither as a live file nor as a tombstone, nor as the deletion vector of one: files a failed
 * or finished operation left behind. Every tombstone is still in the snapshot while it is inside
 * the retention window, so on a young table this is exactly the set of files no version uses.
 *
 * @param table - the table
 * @param dir - its directory
 * @returns how many files were listed, and the keys of those the log does not name, sorted
 */
export async function filesTheLogDoesNotName(
  table: DeltaTable,
  dir: string,
): Promise<{ listed: number; unnamed: string[] }> {
  const snap = await table.snapshot()
  const named = new Set<string>()
  const name = (path: string, dv: DeletionVectorDescriptor | undefined) => {
    const decoded = decodeAddPath(path)
    if (decoded.kind === 'relative') named.add(decoded.key)
    if (dv === undefined) return
    const loc = resolveDvLocation(dv)
    if (loc.kind === 'relative') named.add(loc.path)
  }
  for (const f of snap.activeFiles()) name(f.path, f.deletionVector)
  for (const t of snap.tombstones()) name(t.path, t.deletionVector)
  const entries = await readdir(dir, { recursive: true, withFileTypes: true })
  const keys = entries
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .filter((k) => !k.startsWith('_delta_log/'))
  return { listed: keys.length, unnamed: keys.filter((k) => !named.has(k)).sort() }
}
