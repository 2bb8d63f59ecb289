import { BIGINT, type DuckDBConnection, type DuckDBValue } from '@duckdb/node-api'
import type { ColumnSpec, DataFileRef, FileMatches } from '../engine/data-plane.js'
import type {
  MergeExecutor,
  MergeInsertClause,
  MergeMultipleMatch,
  MergeRequest,
  MergeResult,
  MergeTargetClause,
} from '../engine/merge-plan.js'
import { InvalidArgumentError, isDeltaError } from '../errors/index.js'
import type { Expression } from '../expressions/ast.js'
import { renderDuckDbSql } from '../expressions/render-duckdb.js'
import type { ObjectStore } from '../storage/object-store.js'
import { appendAll } from '../util/arrays.js'
import { dataPlaneError, dataPlaneFailureKind } from './duckdb-errors.js'
import { defineLiveRows, FILE_INDEX_COL, ROW_ID_COL } from './duckdb-live-rows.js'
import { ChunkAppender, RowValueConverter } from './duckdb-row-appender.js'
import { type DuckDbRuntime, ROW_COL, sqlIdent, sqlString } from './duckdb-runtime.js'
import { duckType } from './duckdb-types.js'
import { toJsValue } from './duckdb-values.js'
import { type StagedFile, stageAndConnect } from './staging.js'
import { logicalStructSql } from './write-layout.js'

/**
 * The default {@link MergeExecutor}: one DuckDB connection per merge.
 *
 * The source rows go to a temporary table through the appender (values checked and converted as
 * the writer does). The live rows of the target files are read with `file_row_number`, their
 * DVs removed by an anti-join on physical positions and their partition values taken from the
 * log, then materialized once. The join keeps each matching (target row, source row) pair with
 * the index of the first matched clause that applies; the rest are set queries over the pairs.
 */
export class DuckDbMergeExecutor implements MergeExecutor {
  readonly #store: ObjectStore
  readonly #duck: DuckDbRuntime
  readonly #scratchDir: string

  /**
   * @param store - the table's store
   * @param duck - the engine's DuckDB
   * @param scratchDir - local directory for staged copies of remote files
   */
  constructor(store: ObjectStore, duck: DuckDbRuntime, scratchDir: string) {
    this.#store = store
    this.#duck = duck
    this.#scratchDir = scratchDir
  }

  async execute(request: MergeRequest): Promise<MergeResult> {
    request.signal?.throwIfAborted()
    const staged: StagedFile[] = []
    let con: DuckDBConnection | undefined
    try {
      con = await stageAndConnect(this.#duck, this.#store, this.#scratchDir, request, staged)
      const job = new MergeJob(con, request)
      return await job.run(staged.map((s) => s.path))
    } catch (err) {
      throw dataPlaneError(err, {
        what: 'merge',
        signal: request.signal,
        paths: staged.map((s) => s.path),
      })
    } finally {
      con?.closeSync()
      await Promise.all(staged.map((s) => s.release()))
    }
  }
}

// === One merge ===

class MergeJob {
  readonly #con: DuckDBConnection
  readonly #req: MergeRequest
  readonly #target: readonly ColumnSpec[]
  readonly #targetIndex: ReadonlyMap<string, number>
  readonly #sourceIndex: ReadonlyMap<string, number>

  constructor(con: DuckDBConnection, req: MergeRequest) {
    this.#con = con
    this.#req = req
    this.#target = req.targetColumns
    this.#targetIndex = new Map(req.targetColumns.map((c, i) => [c.name, i]))
    this.#sourceIndex = new Map(req.sourceColumns.map((c, i) => [c.name, i]))
  }

  async run(paths: readonly string[]): Promise<MergeResult> {
    const req = this.#req
    await this.#loadSource()
    await this.#loadTarget(paths)
    this.#check()

    const matchedCase = clauseCase(
      req.whenMatched.map((c) => c.condition),
      (e) => this.#sql(e),
    )
    await this.#userSql(
      `CREATE TEMP TABLE m_pairs AS SELECT t.__fidx, t.__pos, s.__sid, ${matchedCase} AS __clause ` +
        `FROM m_tgt t JOIN m_src s ON (${this.#sql(req.on)})`,
    )
    this.#check()
    if (!req.allowMultipleMatches && req.whenMatched.length > 0) {
      const multiple = await this.#multipleMatch()
      if (multiple !== undefined) return emptyResult(req, multiple)
    }
    if (req.whenNotMatchedBySource.length > 0) {
      const nmbsCase = clauseCase(
        req.whenNotMatchedBySource.map((c) => c.condition),
        (e) => this.#sql(e),
      )
      await this.#userSql(
        `CREATE TEMP TABLE m_nmbs AS SELECT t.__fidx, t.__pos, ${nmbsCase} AS __clause FROM m_tgt t ` +
          'ANTI JOIN m_pairs p ON p.__fidx = t.__fidx AND p.__pos = t.__pos',
      )
    } else {
      await this.#con.run('CREATE TEMP TABLE m_nmbs (__fidx INTEGER, __pos BIGINT, __clause INTEGER)')
    }
    this.#check()

    const files = await this.#leavingPositions()
    const keptMatched = req.reportKeptMatched === true ? await this.#keptMatched(files) : undefined
    const updatedPositions = req.reportUpdated === true ? await this.#updatedPositions() : undefined
    const matched = await this.#counts('m_pairs', req.whenMatched)
    const bySource = await this.#counts('m_nmbs', req.whenNotMatchedBySource)
    // Each part can hold millions of rows: they are appended one by one, as spreading them
    // into one push call would pass them all as arguments and overflow the stack.
    const rows: Record<string, unknown>[] = []
    const rowIds: (bigint | null)[] = []
    for (const images of [
      await this.#images('m_pairs', req.whenMatched, true),
      await this.#images('m_nmbs', req.whenNotMatchedBySource, false),
    ]) {
      appendAll(rows, images.rows)
      appendAll(rowIds, images.rowIds)
    }
    const inserted = await this.#inserts(req.whenNotMatched)
    appendAll(rows, inserted)
    // Inserted rows take fresh ids.
    for (let i = 0; i < inserted.length; i++) rowIds.push(null)
    return Object.freeze({
      files,
      rows: Object.freeze(rows),
      ...(req.rowTracking === undefined ? {} : { rowIds: Object.freeze(rowIds) }),
      ...(keptMatched === undefined ? {} : { keptMatched }),
      ...(updatedPositions === undefined ? {} : { updatedPositions }),
      numSourceRows: req.sourceRows.length,
      numTargetRowsMatchedUpdated: matched.updated,
      numTargetRowsMatchedDeleted: matched.deleted,
      numTargetRowsNotMatchedBySourceUpdated: bySource.updated,
      numTargetRowsNotMatchedBySourceDeleted: bySource.deleted,
      numTargetRowsInserted: inserted.length,
    })
  }

  // === Loading ===

  async #loadSource(): Promise<void> {
    const cols = this.#req.sourceColumns
    const defs = cols.map((c, i) => `${sqlIdent(`s${i}`)} ${duckType(c.type)}`)
    await this.#con.run(`CREATE TEMP TABLE m_src (__sid BIGINT${defs.map((d) => `, ${d}`).join('')})`)
    const appender = await this.#con.createAppender('m_src', 'main', 'temp')
    const converter = new RowValueConverter('none')
    const types = cols.map((_, i) => appender.columnType(i + 1))
    // Sources of primitive columns go in whole data chunks (one native call per 2048 rows, not
    // one per value), which is what makes a source of millions of rows load in seconds; nested
    // values keep the appender's own per-value path, which builds them natively.
    const chunks = cols.every((c) => typeof c.type === 'string')
      ? new ChunkAppender(appender, [BIGINT, ...types])
      : undefined
    const rows = this.#req.sourceRows
    try {
      for (let r = 0; r < rows.length; r++) {
        const row = rows[r] as Readonly<Record<string, unknown>>
        if (chunks) chunks.set(0, BigInt(r))
        else appender.appendBigInt(BigInt(r))
        for (let i = 0; i < cols.length; i++) {
          const c = cols[i] as (typeof cols)[number]
          const at = { row: r, column: c.name }
          if (chunks) chunks.set(i + 1, converter.value(row[c.name], c.type, true, at))
          else converter.append(appender, row[c.name], c.type, true, types[i] as never, at)
        }
        if (chunks) chunks.endRow()
        else appender.endRow()
        if ((r & 0xffff) === 0xffff) this.#check()
      }
      chunks?.flush()
      appender.closeSync()
    } catch (err) {
      appender.clear()
      if (isDeltaError(err, 'DELTA_INVALID_ARGUMENT')) {
        throw new InvalidArgumentError(`MERGE source: ${err.message}`, {
          argument: 'sourceRows',
          cause: err,
          ...(err.hint === undefined ? {} : { hint: err.hint }),
        })
      }
      throw err
    }
  }

  async #loadTarget(paths: readonly string[]): Promise<void> {
    const target = this.#target
    const defs = target.map((c, i) => `${sqlIdent(`t${i}`)} ${duckType(c.type)}`)
    // Row tracking: each target row's stable id, which its updated image keeps.
    const tracking = this.#req.rowTracking
    if (tracking !== undefined) defs.push('__rid BIGINT')
    await this.#con.run(
      `CREATE TEMP TABLE m_tgt (__fidx INTEGER, __pos BIGINT${defs.map((d) => `, ${d}`).join('')})`,
    )
    const files = this.#req.files
    if (files.length === 0) return
    const live = await defineLiveRows(this.#con, {
      files,
      paths,
      columns: target,
      tables: { files: 'm_files', deletedRows: 'm_dv' },
      withFileIndex: true,
      rowTracking: tracking,
    })
    const id = tracking === undefined ? '' : `, ${sqlIdent(ROW_ID_COL)}`
    await this.#con.run(
      `INSERT INTO m_tgt SELECT ${sqlIdent(FILE_INDEX_COL)}, ${sqlIdent(ROW_COL)}${target.map((c, i) => `, ${logicalStructSql(`c${i}`, c.type)}`).join('')}${id} ` +
        `FROM (${live.sql})`,
    )
  }

  // === Queries ===

  async #multipleMatch(): Promise<MergeMultipleMatch | undefined> {
    const rows = (
      await this.#con.runAndReadAll(
        'SELECT __fidx, __pos, list(__sid ORDER BY __sid) FROM m_pairs WHERE __clause >= 0 ' +
          'GROUP BY __fidx, __pos HAVING count(*) > 1 ORDER BY __fidx, __pos LIMIT 1',
      )
    ).getRowsJS()
    const hit = rows[0]
    if (hit === undefined) return undefined
    const file = this.#req.files[Number(hit[0])] as DataFileRef
    const sids = Array.isArray(hit[2]) ? hit[2].map((s) => Number(s)) : []
    return Object.freeze({
      key: file.key,
      position: Number(hit[1]),
      sourceRows: Object.freeze(sids.slice(0, 8)),
    })
  }

  async #leavingPositions(): Promise<FileMatches[]> {
    const acting = (table: string, clauses: readonly MergeTargetClause[]): string =>
      clauses.length === 0 ? '' : `SELECT DISTINCT __fidx, __pos FROM ${table} WHERE __clause >= 0`
    const parts = [
      acting('m_pairs', this.#req.whenMatched),
      acting('m_nmbs', this.#req.whenNotMatchedBySource),
    ].filter((s) => s !== '')
    const byFile = new Map<number, number[]>()
    // Row tracking: the stable id of each leaving row too, for conflict reconciliation (Case 5b).
    const tracking = this.#req.rowTracking !== undefined
    const idsByFile = new Map<number, (bigint | null)[]>()
    if (parts.length > 0) {
      const ids = tracking ? ', list(t.__rid ORDER BY q.__pos)' : ''
      const join = tracking ? ' JOIN m_tgt t ON t.__fidx = q.__fidx AND t.__pos = q.__pos' : ''
      const rows = (
        await this.#con.runAndReadAll(
          `SELECT q.__fidx, list(q.__pos ORDER BY q.__pos)${ids} FROM (${parts.join(' UNION ')}) q${join} GROUP BY q.__fidx`,
        )
      ).getRowsJS()
      for (const [fidx, list, rowIds] of rows) {
        byFile.set(Number(fidx), Array.isArray(list) ? list.map((p) => Number(p)) : [])
        if (tracking && Array.isArray(rowIds)) {
          idsByFile.set(
            Number(fidx),
            rowIds.map((id) => (id === null || id === undefined ? null : BigInt(id as bigint))),
          )
        }
      }
    }
    const live = new Map<number, number>()
    for (const [fidx, n] of (
      await this.#con.runAndReadAll('SELECT __fidx, count(*) FROM m_tgt GROUP BY __fidx')
    ).getRowsJS()) {
      live.set(Number(fidx), Number(n))
    }
    return this.#req.files.map((f, i) =>
      Object.freeze({
        key: f.key,
        positions: Object.freeze(byFile.get(i) ?? []),
        liveRows: live.get(i) ?? 0,
        ...(tracking ? { rowIds: Object.freeze(idsByFile.get(i) ?? []) } : {}),
      }),
    )
  }

  /**
   * Per request file, the target rows matched by some source row that no clause acted on, in the
   * files rows leave (only there can they matter to conflict checking).
   */
  async #keptMatched(files: readonly FileMatches[]): Promise<readonly (readonly number[])[]> {
    const touched: number[] = []
    files.forEach((f, i) => {
      if (f.positions.length > 0) touched.push(i)
    })
    const byFile = new Map<number, number[]>()
    if (touched.length > 0) {
      // A row a clause acted on for one of its source rows left the file: only rows for which no
      // pair picked a clause stayed.
      const rows = (
        await this.#con.runAndReadAll(
          'SELECT __fidx, list(__pos ORDER BY __pos) FROM (SELECT __fidx, __pos FROM m_pairs ' +
            `WHERE __fidx IN (${touched.join(', ')}) GROUP BY __fidx, __pos HAVING max(__clause) < 0) ` +
            'GROUP BY __fidx',
        )
      ).getRowsJS()
      for (const [fidx, list] of rows) {
        byFile.set(Number(fidx), Array.isArray(list) ? list.map((p) => Number(p)) : [])
      }
    }
    this.#check()
    return Object.freeze(files.map((_, i) => Object.freeze(byFile.get(i) ?? [])))
  }

  /** Per request file, the positions of the target rows an update clause acted on (change data). */
  async #updatedPositions(): Promise<readonly (readonly number[])[]> {
    const acting = (table: string, clauses: readonly MergeTargetClause[]): string | undefined => {
      const updates = indexesOf(clauses, 'update')
      return updates.length === 0
        ? undefined
        : `SELECT __fidx, __pos FROM ${table} WHERE __clause IN (${updates.join(', ')})`
    }
    const parts = [
      acting('m_pairs', this.#req.whenMatched),
      acting('m_nmbs', this.#req.whenNotMatchedBySource),
    ].filter((s): s is string => s !== undefined)
    const byFile = new Map<number, number[]>()
    if (parts.length > 0) {
      const rows = (
        await this.#con.runAndReadAll(
          `SELECT __fidx, list(__pos ORDER BY __pos) FROM (${parts.join(' UNION ')}) GROUP BY __fidx`,
        )
      ).getRowsJS()
      for (const [fidx, list] of rows) {
        byFile.set(Number(fidx), Array.isArray(list) ? list.map((p) => Number(p)) : [])
      }
    }
    this.#check()
    return Object.freeze(this.#req.files.map((_, i) => Object.freeze(byFile.get(i) ?? [])))
  }

  /** Target rows acted on by update clauses and by delete clauses. */
  async #counts(
    table: string,
    clauses: readonly MergeTargetClause[],
  ): Promise<{ updated: number; deleted: number }> {
    const updates = indexesOf(clauses, 'update')
    const deletes = indexesOf(clauses, 'delete')
    if (updates.length + deletes.length === 0) return { updated: 0, deleted: 0 }
    const count = (idx: readonly number[]): string =>
      idx.length === 0
        ? '0'
        : `count(DISTINCT (__fidx, __pos)) FILTER (WHERE __clause IN (${idx.join(', ')}))`
    const row = (
      await this.#con.runAndReadAll(`SELECT ${count(updates)}, ${count(deletes)} FROM ${table}`)
    ).getRowsJS()[0]
    return { updated: Number(row?.[0] ?? 0), deleted: Number(row?.[1] ?? 0) }
  }

  /**
   * The new images of the target rows an update clause acted on, with (row tracking) the stable
   * id of each one's target row.
   */
  async #images(
    table: string,
    clauses: readonly MergeTargetClause[],
    withSource: boolean,
  ): Promise<{ rows: Record<string, unknown>[]; rowIds: (bigint | null)[] }> {
    const updates = indexesOf(clauses, 'update')
    if (updates.length === 0) return { rows: [], rowIds: [] }
    const select = this.#target.map((c, i) => {
      const branches: string[] = []
      for (const k of updates) {
        const e = (clauses[k] as Extract<MergeTargetClause, { kind: 'update' }>).set[c.name]
        if (e !== undefined) branches.push(`WHEN ${k} THEN CAST((${this.#sql(e)}) AS ${duckType(c.type)})`)
      }
      const current = `t.${sqlIdent(`t${i}`)}`
      return branches.length === 0 ? current : `CASE p.__clause ${branches.join(' ')} ELSE ${current} END`
    })
    const tracking = this.#req.rowTracking !== undefined
    if (tracking) select.push('t.__rid')
    const joinSource = withSource ? ' JOIN m_src s ON s.__sid = p.__sid' : ''
    const result = await this.#query(
      `SELECT ${select.join(', ')} FROM ${table} p JOIN m_tgt t ON t.__fidx = p.__fidx AND t.__pos = p.__pos` +
        `${joinSource} WHERE p.__clause IN (${updates.join(', ')}) ORDER BY p.__fidx, p.__pos`,
    )
    const values = result.getRows()
    const at = this.#target.length
    return {
      rows: this.#toRows(values),
      rowIds: tracking
        ? values.map((r) => {
            const id = r[at]
            return id === null || id === undefined ? null : BigInt(id as bigint)
          })
        : [],
    }
  }

  /** The rows inserted for source rows that matched nothing. */
  async #inserts(clauses: readonly MergeInsertClause[]): Promise<Record<string, unknown>[]> {
    if (clauses.length === 0) return []
    // The inner query names the source `m`, the outer one `s`.
    const insertCase = clauseCase(
      clauses.map((c) => c.condition),
      (e) => this.#sql(e, 'm'),
    )
    const select = this.#target.map((c) => {
      const branches: string[] = []
      clauses.forEach((clause, k) => {
        const e = clause.values[c.name]
        if (e !== undefined) branches.push(`WHEN ${k} THEN CAST((${this.#sql(e)}) AS ${duckType(c.type)})`)
      })
      return branches.length === 0
        ? `CAST(NULL AS ${duckType(c.type)})`
        : `CASE s.__clause ${branches.join(' ')} ELSE NULL END`
    })
    return this.#toRows(
      (
        await this.#query(
          `SELECT ${select.join(', ')} FROM (SELECT m.*, ${insertCase} AS __clause ` +
            'FROM m_src m ANTI JOIN m_pairs p ON p.__sid = m.__sid) s WHERE s.__clause >= 0 ORDER BY s.__sid',
        )
      ).getRows(),
    )
  }

  async #query(sql: string): Promise<Awaited<ReturnType<DuckDBConnection['runAndReadAll']>>> {
    let result: Awaited<ReturnType<DuckDBConnection['runAndReadAll']>>
    try {
      result = await this.#con.runAndReadAll(sql)
    } catch (err) {
      throw userError(err)
    }
    this.#check()
    return result
  }

  /** The target columns of result rows as rows keyed by target column name (extra columns ignored). */
  #toRows(values: readonly (readonly DuckDBValue[])[]): Record<string, unknown>[] {
    return values.map((row) => {
      const out: Record<string, unknown> = {}
      this.#target.forEach((c, i) => {
        out[c.name] = toJsValue(row[i] ?? null, c.type)
      })
      return out
    })
  }

  async #userSql(sql: string): Promise<void> {
    try {
      await this.#con.run(sql)
    } catch (err) {
      throw userError(err)
    }
  }

  /** SQL for an expression over `t` (target) and the source under `sourceAlias`. */
  #sql(expr: Expression, sourceAlias = 's'): string {
    return renderDuckDbSql(expr, { column: (path) => this.#column(path, sourceAlias) })
  }

  #column(path: readonly string[], sourceAlias: string): string {
    const [side, name, ...nested] = path
    let sql: string | undefined
    if (side === 'target' && name !== undefined && this.#targetIndex.has(name)) {
      sql = `t.${sqlIdent(`t${this.#targetIndex.get(name)}`)}`
    } else if (side === 'source' && name !== undefined && this.#sourceIndex.has(name)) {
      sql = `${sourceAlias}.${sqlIdent(`s${this.#sourceIndex.get(name)}`)}`
    }
    if (sql === undefined) {
      throw new InvalidArgumentError(`Unknown column '${path.join('.')}' in a MERGE expression`, {
        argument: 'merge',
        hint: 'Qualify columns as target.<column> or source.<column>.',
      })
    }
    for (const field of nested) sql = `struct_extract(${sql}, ${sqlString(field)})`
    return sql
  }

  #check(): void {
    this.#req.signal?.throwIfAborted()
  }
}

// === Helpers ===

/** `CASE WHEN c0 THEN 0 WHEN c1 THEN 1 ... ELSE -1 END`: the first clause that applies. */
function clauseCase(conditions: readonly (Expression | undefined)[], sql: (e: Expression) => string): string {
  if (conditions.length === 0) return 'CAST(-1 AS INTEGER)'
  const whens = conditions.map((c, k) => `WHEN ${c === undefined ? 'TRUE' : `(${sql(c)})`} THEN ${k}`)
  return `CAST(CASE ${whens.join(' ')} ELSE -1 END AS INTEGER)`
}

function indexesOf(clauses: readonly MergeTargetClause[], kind: MergeTargetClause['kind']): number[] {
  const out: number[] = []
  clauses.forEach((c, k) => {
    if (c.kind === kind) out.push(k)
  })
  return out
}

function emptyResult(req: MergeRequest, multipleMatch: MergeMultipleMatch): MergeResult {
  return Object.freeze({
    files: Object.freeze([]),
    rows: Object.freeze([]),
    numSourceRows: req.sourceRows.length,
    numTargetRowsMatchedUpdated: 0,
    numTargetRowsMatchedDeleted: 0,
    numTargetRowsNotMatchedBySourceUpdated: 0,
    numTargetRowsNotMatchedBySourceDeleted: 0,
    numTargetRowsInserted: 0,
    multipleMatch,
  })
}

/**
 * DuckDB's query errors (conversion, overflow, type mismatch) while evaluating the caller's
 * expressions are the caller's; anything else is left for the executor's own mapping.
 */
function userError(err: unknown): unknown {
  return !isDeltaError(err) && dataPlaneFailureKind(err) === 'query'
    ? dataPlaneError(err, { what: 'MERGE', argument: 'merge' })
    : err
}
