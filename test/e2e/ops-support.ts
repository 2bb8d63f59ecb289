/**
 * Shared setup of the operation end-to-end suites: real tables in temp dirs through the public
 * `DeltaTable` API, the log read back from disk, and an independent DuckDB (its own instance, not
 * the engine's) to read data files in physical row order.
 */
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { resolveDvLocation } from '../../src/dv/index.js'
import type { DataWriter } from '../../src/engine/data-writer.js'
import type { Engine } from '../../src/engine/engine.js'
import type { MergeExecutor } from '../../src/engine/merge-plan.js'
import { createDefaultEngine } from '../../src/engine-default/default-engine.js'
import { parseCommitFile } from '../../src/protocol/action-json.js'
import type { Action, AddFile, RemoveFile } from '../../src/protocol/actions.js'
import { commitFileName, LOG_DIR } from '../../src/protocol/log-files.js'
import { decodeAddPath } from '../../src/protocol/partition-values.js'
import { parseStats } from '../../src/protocol/stats.js'
import { loadDeletionVector } from '../../src/scan/load-deletion-vector.js'
import { createLocalStore } from '../../src/storage/index.js'
import { DeltaTable, type OpenOptions } from '../../src/table/delta-table.js'

/** A plain row as the tests build them. */
export type Row = Record<string, unknown>

/** The test schema: a NOT NULL key, a nullable string and double, and a small int. */
export const SCHEMA = 'id long not null, name string, value double, part int'

/** Table layouts every suite runs through. */
export const LAYOUTS = [
  { name: 'unpartitioned, deletion vectors', partitioned: false, dv: true },
  { name: 'unpartitioned, copy-on-write', partitioned: false, dv: false },
  { name: 'partitioned, deletion vectors', partitioned: true, dv: true },
  { name: 'partitioned, copy-on-write', partitioned: true, dv: false },
] as const

/** One layout. */
export type Layout = (typeof LAYOUTS)[number]

/** A table in a temp dir and what the tests know about it. */
export interface TestTable {
  readonly dir: string
  readonly table: DeltaTable
  /** Every row appended, in order. */
  readonly rows: Row[]
  /** Store key of each data file written by an append, to the ids it holds. */
  readonly idsByFile: Map<string, Set<bigint>>
  cleanup(): Promise<void>
}

/**
 * Row `i` of the standard data: every third name NULL, every fifth value NULL, part = id % 3.
 *
 * @param i - the id
 */
export function standardRow(i: number): Row {
  return {
    id: BigInt(i),
    name: i % 3 === 0 ? null : `n${i}`,
    value: i % 5 === 0 ? null : i * 1.5,
    part: i % 3,
  }
}

/**
 * Creates a table and appends `batches` (one commit each).
 *
 * @param layout - partitioning and deletion vectors
 * @param batches - row batches
 * @param openOptions - e.g. conflict flags
 */
export async function createTestTable(
  layout: { readonly partitioned: boolean; readonly dv: boolean },
  batches: readonly (readonly Row[])[],
  openOptions: OpenOptions = {},
): Promise<TestTable> {
  const base = await mkdtemp(join(tmpdir(), 'delta-rlc-ops-'))
  const dir = join(base, 'table')
  const table = await DeltaTable.create(
    dir,
    {
      schema: SCHEMA,
      partitionBy: layout.partitioned ? ['part'] : [],
      properties: { 'delta.enableDeletionVectors': String(layout.dv) },
    },
    { autoCheckpoint: false, ...openOptions },
  )
  const rows: Row[] = []
  const idsByFile = new Map<string, Set<bigint>>()
  for (const batch of batches) {
    const result = await table.append(batch)
    rows.push(...batch)
    for (const add of addsOf(await commitActions(dir, result.version))) {
      const ids = new Set<bigint>()
      for (const r of batch) {
        if (!layout.partitioned || add.partitionValues.part === String(r.part)) ids.add(r.id as bigint)
      }
      idsByFile.set(keyOf(add.path), ids)
    }
  }
  return {
    dir,
    table,
    rows,
    idsByFile,
    cleanup: async () => {
      await table.close()
      await rm(base, { recursive: true, force: true })
    },
  }
}

/**
 * The actions of one commit, read from disk.
 *
 * @param dir - the table directory
 * @param version - the version
 */
export async function commitActions(dir: string, version: bigint | number): Promise<Action[]> {
  const v = BigInt(version)
  const text = await readFile(join(dir, LOG_DIR, commitFileName(v)), 'utf8')
  return parseCommitFile(text, { path: commitFileName(v), version: v })
}

/** The `add` payloads of some actions. */
export function addsOf(actions: readonly Action[]): AddFile[] {
  return actions.flatMap((a) => ('add' in a ? [a.add] : []))
}

/** The `remove` payloads of some actions. */
export function removesOf(actions: readonly Action[]): RemoveFile[] {
  return actions.flatMap((a) => ('remove' in a ? [a.remove] : []))
}

/** The commitInfo of some actions. */
export function commitInfoOf(actions: readonly Action[]) {
  const info = actions.flatMap((a) => ('commitInfo' in a ? [a.commitInfo] : []))[0]
  assert.ok(info, 'the commit has a commitInfo')
  return info
}

/** Store key of a log path. */
export function keyOf(path: string): string {
  const d = decodeAddPath(path)
  assert.equal(d.kind, 'relative')
  return d.kind === 'relative' ? d.key : ''
}

/** Physical record count from a file's stats. */
export function numRecords(f: { readonly stats?: string | undefined }): number {
  const n = parseStats(f.stats)?.numRecords
  assert.ok(n !== undefined, 'the file has numRecords')
  return Number(n)
}

/** A canonical text of a row (sorted keys, bigints marked) for multiset comparison. */
export function canon(row: Readonly<Record<string, unknown>>): string {
  return JSON.stringify(
    Object.keys(row)
      .sort()
      .map((k) => [k, row[k] === undefined ? null : row[k]]),
    (_k, v) => (typeof v === 'bigint' ? `${v}n` : v),
  )
}

/**
 * Asserts two row collections are equal as multisets.
 *
 * @param actual - rows read
 * @param expected - rows computed independently
 * @param message - context
 */
export function assertSameRows(actual: readonly Row[], expected: readonly Row[], message?: string): void {
  const a = actual.map(canon).sort()
  const e = expected.map(canon).sort()
  assert.deepEqual(a, e, message)
}

/** The table's live rows through the public scan. */
export async function scanRows(table: DeltaTable, version?: bigint): Promise<Row[]> {
  return table.scan(version === undefined ? {} : { version }).toArray()
}

let reader: Promise<DuckDBInstance> | undefined

/**
 * Reads a Parquet file with a DuckDB of the test's own, in physical row order.
 *
 * @param path - absolute local path
 * @param columns - the columns to return (physical names)
 * @returns rows with `file_row_number` under `__pos`
 */
export async function readParquet(path: string, columns: readonly string[]): Promise<Row[]> {
  reader ??= DuckDBInstance.create(':memory:', { threads: '1' })
  const con = await (await reader).connect()
  try {
    const select = ['file_row_number AS __pos', ...columns.map((c) => `"${c}"`)].join(', ')
    const result = await con.runAndReadAll(
      `SELECT ${select} FROM read_parquet('${path.replaceAll("'", "''")}', file_row_number = true) ORDER BY file_row_number`,
    )
    return result.getRowObjectsJS() as Row[]
  } finally {
    con.closeSync()
  }
}

/**
 * Checks that DuckDB reads every data file the log adds (from version `from` on) with the row
 * count its stats claim.
 *
 * @param dir - the table directory
 * @param from - first version to check
 * @param to - last version to check
 */
export async function assertDuckDbReadsAdds(dir: string, from: number, to: number): Promise<number> {
  let checked = 0
  for (let v = from; v <= to; v++) {
    for (const add of addsOf(await commitActions(dir, v))) {
      if (
        add.deletionVector !== undefined &&
        removesOf(await commitActions(dir, v)).some((r) => r.path === add.path)
      ) {
        continue // a DV update re-adds an existing file; it was checked when written
      }
      const rows = await readParquet(join(dir, keyOf(add.path)), [])
      assert.equal(rows.length, numRecords(add), `DuckDB reads all rows of ${add.path}`)
      checked++
    }
  }
  return checked
}

/**
 * Live rows of a data file as read independently: its rows in physical order minus the
 * positions its DV names.
 *
 * @param table - the table (for the DV loader)
 * @param dir - the table directory
 * @param file - the file with its DV
 * @param columns - columns to return
 */
export async function liveRowsOf(
  table: DeltaTable,
  dir: string,
  file: { readonly path: string; readonly deletionVector?: AddFile['deletionVector'] },
  columns: readonly string[],
): Promise<Row[]> {
  const rows = await readParquet(join(dir, keyOf(file.path)), columns)
  if (file.deletionVector === undefined) return rows
  const deleted = new Set((await loadDeletionVector(table.engine, file.deletionVector)).toArray())
  return rows.filter((r) => !deleted.has(Number(r.__pos)))
}

/** Every file under the table directory, as keys, sorted. */
export async function listFiles(dir: string): Promise<string[]> {
  if (!existsSync(dir)) return []
  const entries = await readdir(dir, { recursive: true, withFileTypes: true })
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort()
}

/** Data and DV files (not the log, not hidden) under the table directory. */
export async function listDataFiles(dir: string): Promise<string[]> {
  return (await listFiles(dir)).filter(
    (k) => !k.startsWith('_') && !k.split('/').some((p) => p.startsWith('.')),
  )
}

/** The latest version of the table. */
export async function latestVersion(table: DeltaTable): Promise<bigint> {
  return (await table.snapshot()).version
}

/**
 * Opens a second handle on a table whose engine runs `hook` once, right after the first call of
 * one writer method: a deterministic place for "another writer commits now".
 *
 * @param dir - the table directory
 * @param method - the writer method to follow
 * @param hook - what the other writer does
 * @param openOptions - conflict flags and the like
 */
export async function openWithHook(
  dir: string,
  method: keyof DataWriter,
  hook: () => Promise<unknown>,
  openOptions: OpenOptions = {},
): Promise<DeltaTable> {
  const base = createDefaultEngine(createLocalStore(dir))
  let fired = false
  const after = async <T>(result: T): Promise<T> => {
    if (!fired) {
      fired = true
      await hook()
    }
    return result
  }
  const writer: DataWriter = {
    writeRows: async (r) => {
      const out = await base.writer.writeRows(r)
      return method === 'writeRows' ? after(out) : out
    },
    rewrite: async (r) => {
      const out = await base.writer.rewrite(r)
      return method === 'rewrite' ? after(out) : out
    },
    compact: async (r) => {
      const out = await base.writer.compact(r)
      return method === 'compact' ? after(out) : out
    },
    zOrder: async (r) => {
      const out = await base.writer.zOrder(r)
      return method === 'zOrder' ? after(out) : out
    },
  }
  // A MERGE executor that writes its new rows itself (`MergeResult.written`) does the MERGE's
  // writeRows: the hook follows it there.
  const baseMerge = base.merge
  const merge: MergeExecutor | undefined =
    baseMerge === undefined
      ? undefined
      : {
          execute: async (r) => {
            const out = await baseMerge.execute(r)
            return method === 'writeRows' && out.written !== undefined ? after(out) : out
          },
        }
  const engine: Engine = { ...base, writer, merge, close: () => base.close() }
  try {
    return await DeltaTable.open(dir, { autoCheckpoint: false, ...openOptions, engine })
  } catch (err) {
    await engine.close()
    throw err
  }
}

/** Closes a table opened with {@link openWithHook} (it does not own its engine). */
export async function closeHooked(table: DeltaTable): Promise<void> {
  await table.engine.close()
}

/** Keys of the files the latest snapshot references: data files and their DV files. */
export async function liveKeys(table: DeltaTable): Promise<string[]> {
  const keys = new Set<string>()
  for (const f of (await table.snapshot()).activeFiles()) {
    keys.add(keyOf(f.path))
    if (f.deletionVector !== undefined) {
      const loc = resolveDvLocation(f.deletionVector)
      if (loc.kind === 'relative') keys.add(loc.path)
    }
  }
  return [...keys].sort()
}

/**
 * Cases 5a/5b: a table `t` under `root` of four files of 50 rows (ids 0..199) with row tracking and
 * deletion vectors, spread over x and y.
 */
export async function relocationTable(root: string): Promise<string> {
  const dir = join(root, 't')
  const table = await DeltaTable.create(dir, {
    schema: 'id long not null, x int, y int, v string',
    properties: { 'delta.enableDeletionVectors': 'true', 'delta.enableRowTracking': 'true' },
  })
  try {
    for (let f = 0; f < 4; f++) {
      await table.append(
        Array.from({ length: 50 }, (_, i) => {
          const k = f * 50 + i
          return { id: BigInt(k), x: (k * 37) % 101, y: (k * 53) % 89, v: `r${k}` }
        }),
      )
    }
  } finally {
    await table.close()
  }
  return dir
}

/** Live rows as `id -> "x,y,v@rowId"`, asserting every row id is live once. */
export async function liveWithRowIds(dir: string): Promise<Map<number, string>> {
  const table = await DeltaTable.open(dir)
  try {
    const rows = await table.scan({ withRowTracking: true }).toArray()
    const ids = rows.map((r) => r._row_id as bigint)
    assert.equal(new Set(ids).size, ids.length, 'every row id is live exactly once')
    return new Map(rows.map((r) => [Number(r.id), `${r.x},${r.y},${r.v}@${r._row_id}`]))
  } finally {
    await table.close()
  }
}

// biome-ignore lint/suspicious/noExplicitAny: log lines are free-form JSON read field by field
export type LogLine = Record<string, any>

/** The lines of commit `version` of the table at `dir`, each parsed as plain JSON. */
export async function logLines(dir: string, version: bigint | number): Promise<LogLine[]> {
  const text = await readFile(join(dir, LOG_DIR, commitFileName(BigInt(version))), 'utf8')
  return text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
}

/** How many commit files the table at `dir` has. */
export async function commitCount(dir: string): Promise<number> {
  return (await readdir(join(dir, LOG_DIR))).filter((f) => /^\d{20}\.json$/.test(f)).length
}
