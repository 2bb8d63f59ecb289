import {
  BIGINT,
  type DuckDBConnection,
  type DuckDBListVector,
  type DuckDBValue,
  DuckDBVector,
} from '@duckdb/node-api'
import {
  type ColumnBatch,
  type ColumnSpec,
  type DataPlane,
  type FileMatches,
  type LocateRowIdsRequest,
  ROW_COMMIT_VERSION_COLUMN,
  ROW_ID_COLUMN,
  type RowIdLocations,
  type ScanRequest,
  type ValueBounds,
} from '../engine/data-plane.js'
import { InvalidArgumentError } from '../errors/index.js'
import type { Expression } from '../expressions/ast.js'
import { renderDuckDbSql } from '../expressions/render-duckdb.js'
import {
  COLUMN_MAPPING_PHYSICAL_NAME_KEY,
  type DataType,
  fieldByName,
  isStructType,
} from '../protocol/schema.js'
import type { ObjectStore } from '../storage/object-store.js'
import { appendAll } from '../util/arrays.js'
import { ColumnBatcher } from './duckdb-columns.js'
import { dataPlaneError, streamFailureError } from './duckdb-errors.js'
import { defineLiveRows, liveRowCounts, ROW_COMMIT_VERSION_COL, ROW_ID_COL } from './duckdb-live-rows.js'
import { ChunkAppender } from './duckdb-row-appender.js'
import {
  type DuckDbRuntime,
  endAndClose,
  FILE_COL,
  ROW_COL,
  type StreamFailure,
  sqlIdent,
  sqlString,
  streamChunks,
} from './duckdb-runtime.js'
import { toJsValue } from './duckdb-values.js'
import { type StagedFile, stageAndConnect } from './staging.js'

/** Rows per yielded batch when the caller gives no hint. */
const DEFAULT_BATCH = 8192
/** The temporary table of the row ids a lookup seeks. */
const SOUGHT_TABLE = 'delta_rlc_sought_row_ids'

/**
 * The default {@link DataPlane}: one DuckDB query per request over all its files.
 *
 * Deleted rows are removed by an anti-join on (file, `file_row_number`), so the positions a DV
 * names are the physical positions across all row groups, as the protocol defines them.
 * Partition values come from the log, joined per file, and never from the files themselves.
 */
export class DuckDbDataPlane implements DataPlane {
  readonly #store: ObjectStore
  readonly #duck: DuckDbRuntime
  readonly #scratchDir: string

  constructor(store: ObjectStore, duck: DuckDbRuntime, scratchDir: string) {
    this.#store = store
    this.#duck = duck
    this.#scratchDir = scratchDir
  }

  async *scan(request: ScanRequest): AsyncIterable<Record<string, unknown>[]> {
    if (request.files.length === 0) return
    const batchSize = Math.max(1, request.batchSize ?? DEFAULT_BATCH)
    const prepared = await this.#prepare(request)
    const con = prepared.con
    try {
      const tracked = request.rowTracking !== undefined
      const { sql, onFailure } = scanQuery(request, prepared)
      // Each output column's name and type, then the chunk column it comes from (by index).
      const outputs: { readonly name: string; readonly type: DataType }[] = request.columns.map((c) => ({
        name: c.name,
        type: c.type,
      }))
      if (tracked)
        outputs.push({ name: ROW_ID_COLUMN, type: 'long' }, { name: ROW_COMMIT_VERSION_COLUMN, type: 'long' })
      let batch: Record<string, unknown>[] = []
      for await (const chunk of streamChunks(con, sql, { signal: request.signal, onFailure })) {
        // Column by column, each vector fetched once: the chunk's row-wise reading asks DuckDB
        // for the column count on every row and builds each value's type on every value.
        const count = chunk.rowCount
        const objs = new Array<Record<string, unknown>>(count)
        for (let r = 0; r < count; r++) objs[r] = {}
        for (let i = 0; i < outputs.length; i++) {
          const { name, type } = outputs[i] as { name: string; type: DataType }
          const vector = chunk.getColumnVector(i)
          for (let r = 0; r < count; r++) {
            ;(objs[r] as Record<string, unknown>)[name] = toJsValue(vector.getItem(r), type)
          }
        }
        appendAll(batch, objs)
        if (batch.length >= batchSize) {
          yield batch
          batch = []
        }
      }
      if (batch.length > 0) yield batch
    } catch (err) {
      throw wrap(this.#duck.closed, err, 'scan', request, prepared.paths)
    } finally {
      await prepared.release()
    }
  }

  async *scanColumns(request: ScanRequest): AsyncIterable<ColumnBatch> {
    if (request.files.length === 0) return
    const batchSize = Math.max(1, request.batchSize ?? DEFAULT_BATCH)
    const prepared = await this.#prepare(request)
    try {
      const { sql, onFailure } = scanQuery(request, prepared)
      const types: DataType[] = request.columns.map((c) => c.type)
      if (request.rowTracking !== undefined) types.push('long', 'long')
      const batcher = new ColumnBatcher(types, batchSize, DuckDBVector.standardSize())
      for await (const chunk of streamChunks(prepared.con, sql, { signal: request.signal, onFailure })) {
        if (!batcher.fits(chunk.rowCount)) yield batcher.take()
        batcher.add(chunk)
        if (batcher.length >= batchSize) yield batcher.take()
      }
      if (batcher.length > 0) yield batcher.take()
    } catch (err) {
      throw wrap(this.#duck.closed, err, 'scan', request, prepared.paths)
    } finally {
      await prepared.release()
    }
  }

  async count(request: Omit<ScanRequest, 'batchSize'>): Promise<number> {
    if (request.files.length === 0) return 0
    const prepared = await this.#prepare({ ...request })
    try {
      const r = await prepared.con.runAndReadAll(`SELECT count(*) ${prepared.fromWhere}`)
      return Number(r.getRows()[0]?.[0] ?? 0)
    } catch (err) {
      throw wrap(this.#duck.closed, err, 'count', request, prepared.paths)
    } finally {
      await prepared.release()
    }
  }

  async matchPositions(
    request: Omit<ScanRequest, 'batchSize' | 'columns'> & {
      columns?: readonly ColumnSpec[]
      boundsOf?: readonly ColumnSpec[] | undefined
    },
  ): Promise<FileMatches[]> {
    if (request.files.length === 0) return []
    const boundsOf = request.boundsOf ?? []
    // The predicate filters the scan itself, so DuckDB evaluates it where it reads the column
    // and carries only matching rows further; live row counts come from the footers instead.
    const prepared = await this.#prepare({
      ...request,
      columns: [...(request.columns ?? []), ...boundsOf],
    })
    try {
      const tracked = request.rowTracking !== undefined
      const row = `d.${ROW_COL}`
      // Positions cross as DOUBLE (exact below 2^53) so that they are read from the list's child
      // vector as numbers, one native read each, with no value object per position. Row ids must
      // pair with them, so a tracking match orders both lists; otherwise order is restored in
      // JavaScript only when DuckDB's threads did not keep it.
      const aggregates = [
        tracked ? `list(CAST(${row} AS DOUBLE) ORDER BY ${row})` : `list(CAST(${row} AS DOUBLE))`,
        ...(tracked ? [`list(d.${sqlIdent(ROW_ID_COL)} ORDER BY ${row})`] : []),
        ...boundsOf.flatMap((c) => {
          const v = prepared.columnSql(c)
          return [`min(${v})`, `max(${v})`, `count(*) - count(${v})`]
        }),
      ]
      const result = await prepared.con.run(
        `SELECT d.${FILE_COL}, ${aggregates.join(', ')} ${prepared.fromWhere} GROUP BY d.${FILE_COL}`,
      )
      const byPath = new Map<string, Omit<FileMatches, 'key' | 'liveRows'>>()
      for (let c = 0; c < result.chunkCount; c++) {
        const chunk = result.getChunk(c)
        const lists = [1, ...(tracked ? [2] : [])].map((k) => chunk.getColumnVector(k) as DuckDBListVector)
        const values = (k: number, r: number): DuckDBValue => chunk.getColumnVector(k).getItem(r)
        for (let r = 0; r < chunk.rowCount; r++) {
          const at = lists.map((l) => ({ offset: l.getEntryOffset(r), length: l.getEntryLength(r) }))
          const positions = numbersOf(lists[0] as DuckDBListVector, at[0]!.offset, at[0]!.length)
          const out: { positions: number[]; rowIds?: (bigint | null)[]; bounds?: ValueBounds[] } = {
            positions: tracked ? positions : ascending(positions),
          }
          if (tracked) out.rowIds = bigintsOf(lists[1] as DuckDBListVector, at[1]!.offset, at[1]!.length)
          let k = tracked ? 3 : 2
          if (boundsOf.length > 0) {
            out.bounds = boundsOf.map((col) => {
              const b = {
                min: toJsValue(values(k, r) ?? null, col.type),
                max: toJsValue(values(k + 1, r) ?? null, col.type),
                nullCount: Number(values(k + 2, r)),
              }
              k += 3
              return Object.freeze(b)
            })
          }
          byPath.set(String(values(0, r)), out)
        }
      }
      const liveRows = await liveRowCounts(prepared.con, request.files, prepared.paths)
      return request.files.map((f, i) => {
        const found = byPath.get(prepared.paths[i] as string)
        return Object.freeze({
          key: f.key,
          positions: found?.positions ?? [],
          liveRows: liveRows[i] as number,
          ...(tracked ? { rowIds: found?.rowIds ?? [] } : {}),
          ...(boundsOf.length > 0
            ? {
                bounds:
                  found?.bounds ?? boundsOf.map(() => Object.freeze({ min: null, max: null, nullCount: 0 })),
              }
            : {}),
        })
      })
    } catch (err) {
      throw wrap(this.#duck.closed, err, 'predicate evaluation', request, prepared.paths)
    } finally {
      await prepared.release()
    }
  }

  async locateRowIds(request: LocateRowIdsRequest): Promise<RowIdLocations> {
    if (request.files.length === 0) return Object.freeze({ files: [], nullRows: 0 })
    const idColumn: ColumnSpec = {
      name: '__delta_rlc_sought_row_id',
      type: 'long',
      physicalName: request.rowIdColumn,
      isPartition: false,
    }
    // Every row of the files is looked at: a deletion vector, partition values or a base row id
    // would change nothing the lookup answers.
    const prepared = await this.#prepare({
      files: request.files.map((f) => ({ key: f.key, partitionValues: {} })),
      columns: [idColumn],
      signal: request.signal,
    })
    try {
      const con = prepared.con
      const id = prepared.columnSql(idColumn)
      await con.run(`CREATE OR REPLACE TEMP TABLE ${sqlIdent(SOUGHT_TABLE)} (id BIGINT)`)
      const appender = await con.createAppender(SOUGHT_TABLE, 'main', 'temp')
      const chunks = new ChunkAppender(appender, [BIGINT])
      for (const v of request.ids) {
        chunks.set(0, v)
        chunks.endRow()
      }
      chunks.flush()
      appender.closeSync()
      const nulls = await con.runAndReadAll(`SELECT count(*) ${prepared.fromWhere} WHERE ${id} IS NULL`)
      const hits = await con.runAndReadAll(
        `SELECT d.${FILE_COL}, d.${ROW_COL}, ${id} ${prepared.fromWhere} ` +
          `SEMI JOIN ${sqlIdent(SOUGHT_TABLE)} s ON s.id = ${id} ORDER BY d.${FILE_COL}, d.${ROW_COL}`,
      )
      const byPath = new Map<string, { positions: number[]; ids: bigint[] }>()
      for (const [file, row, value] of hits.getRows()) {
        const path = String(file)
        let acc = byPath.get(path)
        if (acc === undefined) {
          acc = { positions: [], ids: [] }
          byPath.set(path, acc)
        }
        acc.positions.push(Number(row))
        acc.ids.push(BigInt(value as bigint))
      }
      return Object.freeze({
        files: request.files.map((f, i) => {
          const found = byPath.get(prepared.paths[i] as string)
          return Object.freeze({ key: f.key, positions: found?.positions ?? [], ids: found?.ids ?? [] })
        }),
        nullRows: Number(nulls.getRows()[0]?.[0] ?? 0),
      })
    } catch (err) {
      throw wrap(this.#duck.closed, err, 'row-id lookup', request, prepared.paths)
    } finally {
      await prepared.release()
    }
  }

  // === Query preparation ===

  async #prepare(request: Omit<ScanRequest, 'batchSize'>): Promise<PreparedQuery> {
    const staged: StagedFile[] = []
    let con: DuckDBConnection | undefined
    try {
      con = await stageAndConnect(this.#duck, this.#store, this.#scratchDir, request, staged)
      const paths = staged.map((s) => s.path)
      const allColumns = uniqueColumns([...request.columns, ...(request.predicateColumns ?? [])])
      const live = await defineLiveRows(con, {
        files: request.files,
        paths,
        columns: allColumns,
        tables: { files: 'delta_files', deletedRows: 'delta_dv' },
        rowTracking: request.rowTracking,
      })
      const from = `FROM (${live.sql}) d`
      const position = new Map(allColumns.map((c, k) => [c.name, k]))
      const columnSql = (c: ColumnSpec): string => `d.c${position.get(c.name)}`
      const byName = new Map(allColumns.map((c) => [c.name.toLowerCase(), c]))
      const render = (expr: Expression): string =>
        renderDuckDbSql(expr, {
          column: (path: readonly string[]) => {
            const spec = byName.get((path[0] ?? '').toLowerCase())
            if (!spec) {
              throw new InvalidArgumentError(`Unknown column '${path.join('.')}' in predicate`, {
                argument: 'predicate',
                hint: `Known columns: ${[...byName.values()].map((c) => c.name).join(', ')}`,
              })
            }
            return `${columnSql(spec)}${nestedFieldsSql(spec.type, path.slice(1))}`
          },
        })
      const where = request.predicate ? ` WHERE coalesce((${render(request.predicate)}), false)` : ''
      const opened = con
      // Held on the runtime: a scan its caller stops iterating, and never returns, still lets its
      // stream, connection and staged files go when the table closes.
      const release = this.#duck.hold(async (byClose) => {
        if (byClose) await endAndClose(opened)
        else opened.closeSync()
        await Promise.all(staged.map((s) => s.release()))
      })
      return {
        con: opened,
        paths,
        fromWhere: `${from}${where}`,
        columnSql,
        render,
        release,
      }
    } catch (err) {
      con?.closeSync()
      await Promise.all(staged.map((s) => s.release()))
      // Preparing reads the files' schemas and loads positions: no predicate is evaluated yet.
      throw wrap(
        this.#duck.closed,
        err,
        'scan preparation',
        { signal: request.signal },
        staged.map((s) => s.path),
      )
    }
  }
}

interface PreparedQuery {
  readonly con: DuckDBConnection
  /** Local path of each request file, in request order. */
  readonly paths: readonly string[]
  /** `FROM ... [WHERE ...]` of the live (and matching) rows. */
  readonly fromWhere: string
  columnSql(c: ColumnSpec): string
  render(expr: Expression): string
  release(): Promise<void>
}

/** Items `offset` to `offset + length` of a list's DOUBLE child vector, as numbers. */
function numbersOf(list: DuckDBListVector, offset: number, length: number): number[] {
  const child = list.childVector
  const out = new Array<number>(length)
  for (let k = 0; k < length; k++) out[k] = child.getItem(offset + k) as number
  return out
}

/** Items `offset` to `offset + length` of a list's BIGINT child vector. */
function bigintsOf(list: DuckDBListVector, offset: number, length: number): (bigint | null)[] {
  const child = list.childVector
  const out = new Array<bigint | null>(length)
  for (let k = 0; k < length; k++) out[k] = child.getItem(offset + k) as bigint | null
  return out
}

/**
 * `positions` (distinct non-negative integers) in ascending order: as given when they already
 * are, else through a bitset over their range when that is small (the common case: a file's rows
 * are its range), else by a numeric sort.
 */
function ascending(positions: number[]): number[] {
  let sorted = true
  let last = -1
  for (let k = 0; k < positions.length; k++) {
    const p = positions[k] as number
    if (p < last) sorted = false
    if (p > last) last = p
  }
  if (sorted) return positions
  if (last >= BITSET_SORT_MAX_BITS || last > positions.length * BITSET_SORT_BITS_PER_POSITION) {
    return Array.from(Float64Array.from(positions).sort())
  }
  const words = new Uint32Array((last >>> 5) + 1)
  for (let k = 0; k < positions.length; k++) {
    const p = positions[k] as number
    words[p >>> 5] = (words[p >>> 5] as number) | (1 << (p & 31))
  }
  const out = new Array<number>(positions.length)
  let n = 0
  for (let w = 0; w < words.length; w++) {
    let bits = words[w] as number
    while (bits !== 0) {
      const low = bits & -bits
      out[n++] = w * 32 + 31 - Math.clz32(low)
      bits ^= low
    }
  }
  return out
}

/** {@link ascending} uses a bitset for positions below this (2^31: 256 MiB of bits at most)... */
const BITSET_SORT_MAX_BITS = 2 ** 31
/** ...and of at most this many bits per position (a bitset scan costs one step per 32 of them). */
const BITSET_SORT_BITS_PER_POSITION = 1024

function uniqueColumns(cols: readonly ColumnSpec[]): ColumnSpec[] {
  const seen = new Map<string, ColumnSpec>()
  for (const c of cols) if (!seen.has(c.name)) seen.set(c.name, c)
  return [...seen.values()]
}

/** A failure as the library error that says whose it is: the caller's predicate's, a file's, a bug. */
function wrap(
  closed: boolean,
  err: unknown,
  what: string,
  request: Pick<ScanRequest, 'predicate' | 'signal'>,
  paths: readonly string[],
): unknown {
  return dataPlaneError(err, { what, predicate: request.predicate, signal: request.signal, paths, closed })
}

/**
 * The query of a scan over a prepared read: the columns as `c<i>`, then with row tracking the
 * row id and commit version, in physical order when asked; and how a failure of its stream is
 * reported.
 */
function scanQuery(
  request: ScanRequest,
  prepared: {
    columnSql(c: ColumnSpec): string
    readonly fromWhere: string
    readonly paths: readonly string[]
  },
): { sql: string; onFailure: (failure: StreamFailure) => Error } {
  const selected = request.columns.map((c, i) => `${prepared.columnSql(c)} AS c${i}`)
  if (request.rowTracking !== undefined) {
    selected.push(`d.${sqlIdent(ROW_ID_COL)}`, `d.${sqlIdent(ROW_COMMIT_VERSION_COL)}`)
  }
  const order = request.physicalOrder
    ? ` ORDER BY list_position([${prepared.paths.map(sqlString).join(', ')}], d.${FILE_COL}), d.${ROW_COL}`
    : ''
  return {
    sql: `SELECT ${selected.join(', ') || '1'} ${prepared.fromWhere}${order}`,
    onFailure: (failure) =>
      streamFailureError(failure, {
        what: 'scan',
        predicate: request.predicate,
        signal: request.signal,
        paths: prepared.paths,
      }),
  }
}

/**
 * The SQL of a nested field path under a column of `type`: each struct field by the name files
 * store it under (its column-mapping physical name, when it has one), as the live rows hold it.
 */
function nestedFieldsSql(type: DataType | undefined, path: readonly string[]): string {
  let sql = ''
  let at = type
  for (const p of path) {
    const f = at !== undefined && isStructType(at) ? fieldByName(at, p) : undefined
    const phys = f?.metadata[COLUMN_MAPPING_PHYSICAL_NAME_KEY]
    sql += `.${sqlIdent(typeof phys === 'string' && phys !== '' ? phys : (f?.name ?? p))}`
    at = f?.type
  }
  return sql
}
