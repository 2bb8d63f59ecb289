import { type DuckDBConnection, DuckDBVector } from '@duckdb/node-api'
import {
  type ColumnBatch,
  type ColumnSpec,
  type DataPlane,
  type FileMatches,
  ROW_COMMIT_VERSION_COLUMN,
  ROW_ID_COLUMN,
  type ScanRequest,
} from '../engine/data-plane.js'
import { InvalidArgumentError } from '../errors/index.js'
import type { Expression } from '../expressions/ast.js'
import { renderDuckDbSql } from '../expressions/render-duckdb.js'
import type { DataType } from '../protocol/schema.js'
import type { ObjectStore } from '../storage/object-store.js'
import { ColumnBatcher } from './duckdb-columns.js'
import { dataPlaneError, streamFailureError } from './duckdb-errors.js'
import { defineLiveRows, ROW_COMMIT_VERSION_COL, ROW_ID_COL } from './duckdb-live-rows.js'
import {
  type DuckDbRuntime,
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
      const width = request.columns.length
      const { sql, onFailure } = scanQuery(request, prepared)
      let batch: Record<string, unknown>[] = []
      for await (const chunk of streamChunks(con, sql, { signal: request.signal, onFailure })) {
        for (const row of chunk.getRows()) {
          const obj: Record<string, unknown> = {}
          for (let i = 0; i < width; i++) {
            const c = request.columns[i] as ColumnSpec
            obj[c.name] = toJsValue(row[i] ?? null, c.type)
          }
          if (tracked) {
            obj[ROW_ID_COLUMN] = toJsValue(row[width] ?? null, 'long')
            obj[ROW_COMMIT_VERSION_COLUMN] = toJsValue(row[width + 1] ?? null, 'long')
          }
          batch.push(obj)
        }
        if (batch.length >= batchSize) {
          yield batch
          batch = []
        }
      }
      if (batch.length > 0) yield batch
    } catch (err) {
      throw wrap(err, 'scan', request, prepared.paths)
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
      throw wrap(err, 'scan', request, prepared.paths)
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
      throw wrap(err, 'count', request, prepared.paths)
    } finally {
      await prepared.release()
    }
  }

  async matchPositions(
    request: Omit<ScanRequest, 'batchSize' | 'columns'> & { columns?: readonly ColumnSpec[] },
  ): Promise<FileMatches[]> {
    if (request.files.length === 0) return []
    const prepared = await this.#prepare({ ...request, columns: request.columns ?? [], predicate: undefined })
    try {
      const cond = request.predicate ? prepared.render(request.predicate) : 'true'
      const r = await prepared.con.runAndReadAll(
        `SELECT d.${FILE_COL}, count(*), list(d.${ROW_COL} ORDER BY d.${ROW_COL}) FILTER (WHERE coalesce((${cond}), false)) ` +
          `${prepared.fromWhere} GROUP BY d.${FILE_COL}`,
      )
      const byPath = new Map<string, { live: number; positions: number[] }>()
      for (const [file, live, list] of r.getRowsJS()) {
        byPath.set(String(file), {
          live: Number(live),
          positions: Array.isArray(list) ? list.map((p) => Number(p)) : [],
        })
      }
      return request.files.map((f, i) => {
        const hit = byPath.get(prepared.paths[i] as string)
        return Object.freeze({ key: f.key, positions: hit?.positions ?? [], liveRows: hit?.live ?? 0 })
      })
    } catch (err) {
      throw wrap(err, 'predicate evaluation', request, prepared.paths)
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
            const base = columnSql(spec)
            return path.length === 1
              ? base
              : `${base}${path
                  .slice(1)
                  .map((p) => `.${sqlIdent(p)}`)
                  .join('')}`
          },
        })
      const where = request.predicate ? ` WHERE coalesce((${render(request.predicate)}), false)` : ''
      const opened = con
      return {
        con: opened,
        paths,
        fromWhere: `${from}${where}`,
        columnSql,
        render,
        release: async () => {
          opened.closeSync()
          await Promise.all(staged.map((s) => s.release()))
        },
      }
    } catch (err) {
      con?.closeSync()
      await Promise.all(staged.map((s) => s.release()))
      // Preparing reads the files' schemas and loads positions: no predicate is evaluated yet.
      throw wrap(
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

function uniqueColumns(cols: readonly ColumnSpec[]): ColumnSpec[] {
  const seen = new Map<string, ColumnSpec>()
  for (const c of cols) if (!seen.has(c.name)) seen.set(c.name, c)
  return [...seen.values()]
}

/** A failure as the library error that says whose it is: the caller's predicate's, a file's, a bug. */
function wrap(
  err: unknown,
  what: string,
  request: Pick<ScanRequest, 'predicate' | 'signal'>,
  paths: readonly string[],
): unknown {
  return dataPlaneError(err, { what, predicate: request.predicate, signal: request.signal, paths })
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
