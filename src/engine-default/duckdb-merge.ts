import { BIGINT, type DuckDBConnection, type DuckDBValue } from '@duckdb/node-api'
import type { ColumnSpec, DataFileRef, FileMatches } from '../engine/data-plane.js'
import type { WriteTarget } from '../engine/data-writer.js'
import type {
  MergeExecutor,
  MergeInsertClause,
  MergeMultipleMatch,
  MergeRequest,
  MergeResult,
  MergeTargetClause,
  MergeWrite,
  MergeWritten,
} from '../engine/merge-plan.js'
import { InternalError, InvalidArgumentError, isDeltaError } from '../errors/index.js'
import { columnsOf, type Expression } from '../expressions/ast.js'
import { renderDuckDbSql } from '../expressions/render-duckdb.js'
import type { ColumnMappingMode, DataType } from '../protocol/schema.js'
import type { ObjectStore } from '../storage/object-store.js'
import { appendAll } from '../util/arrays.js'
import { dataPlaneError, dataPlaneFailureKind } from './duckdb-errors.js'
import { defineLiveRows, FILE_INDEX_COL, liveRowCounts, ROW_ID_COL } from './duckdb-live-rows.js'
import { ChunkAppender, RowValueConverter } from './duckdb-row-appender.js'
import { type DuckDbRuntime, ROW_COL, sqlIdent, sqlString } from './duckdb-runtime.js'
import { duckType } from './duckdb-types.js'
import { toJsValue } from './duckdb-values.js'
import type { DuckDbWriter, StagedRowsWriter } from './duckdb-writer.js'
import { type StagedFile, stageAllForRead, stageAndConnect } from './staging.js'
import { type LayoutColumn, logicalStructSql, physicalNameOf, type WriteLayout } from './write-layout.js'

/**
 * The default {@link MergeExecutor}: one DuckDB connection per merge.
 *
 * The source rows go to a temporary table through the appender (values checked and converted as
 * the writer does). The live rows of the target files are a relation over the files (positions
 * from `file_row_number`, deletion vectors applied, partition values from the log) that is never
 * materialized whole: the join keeps each matching (target row, source row) pair with the index
 * of the first matched clause that applies, carrying the target row's columns only when an
 * update clause needs them, and the NOT MATCHED BY SOURCE rows some clause acts on are kept
 * likewise. The rest are set queries over those tables.
 *
 * Given the engine's writer and a request that asks for it ({@link MergeRequest.write}), the new
 * rows are computed by SQL into a staging table on the writer's connection and written from there
 * by `COPY`: only positions, counts and file metadata come back to JavaScript. NOT NULL, nested
 * fields and elements included, is checked by a query first. Tables with void columns still get
 * the rows back, for the writer's per-value checks.
 */
export class DuckDbMergeExecutor implements MergeExecutor {
  readonly #store: ObjectStore
  readonly #duck: DuckDbRuntime
  readonly #scratchDir: string
  readonly #writer: DuckDbWriter | undefined

  /**
   * @param store - the table's store
   * @param duck - the engine's DuckDB
   * @param scratchDir - local directory for staged copies of remote files
   * @param writer - the engine's writer, when the executor may write new rows itself
   */
  constructor(store: ObjectStore, duck: DuckDbRuntime, scratchDir: string, writer?: DuckDbWriter) {
    this.#store = store
    this.#duck = duck
    this.#scratchDir = scratchDir
    this.#writer = writer
  }

  async execute(request: MergeRequest): Promise<MergeResult> {
    request.signal?.throwIfAborted()
    const staged: StagedFile[] = []
    let con: DuckDBConnection | undefined
    const write = request.write
    const writer = write !== undefined && writableInDuckDb(write.target) ? this.#writer : undefined
    try {
      if (writer !== undefined && write !== undefined) {
        const paths = await stageAllForRead(
          this.#store,
          request.files.map((f) => f.key),
          this.#scratchDir,
          request.signal,
          staged,
        )
        return await writer.writeComputed(write.target, request.signal, (out) =>
          new MergeJob(out.con, request, { out, write }).run(paths),
        )
      }
      con = await stageAndConnect(this.#duck, this.#store, this.#scratchDir, request, staged)
      const job = new MergeJob(con, request)
      return await job.run(staged.map((s) => s.path))
    } catch (err) {
      throw dataPlaneError(err, {
        what: 'merge',
        signal: request.signal,
        closed: this.#duck.closed,
        paths: staged.map((s) => s.path),
      })
    } finally {
      con?.closeSync()
      await Promise.all(staged.map((s) => s.release()))
    }
  }
}

// === One merge ===

/** Where a merge that writes its new rows puts them. */
interface MergeOutput {
  readonly out: StagedRowsWriter
  readonly write: MergeWrite
}

class MergeJob {
  readonly #con: DuckDBConnection
  readonly #req: MergeRequest
  readonly #target: readonly ColumnSpec[]
  readonly #targetIndex: ReadonlyMap<string, number>
  readonly #sourceIndex: ReadonlyMap<string, number>
  readonly #output: MergeOutput | undefined
  /** The live target rows: `__fidx`, `__pos`, `t<i>` (logical types), `__rid` with row tracking. */
  #targetSql = ''
  /** The local path of each request file. */
  #paths: readonly string[] = []

  constructor(con: DuckDBConnection, req: MergeRequest, output?: MergeOutput) {
    this.#con = con
    this.#req = req
    this.#target = req.targetColumns
    this.#targetIndex = new Map(req.targetColumns.map((c, i) => [c.name, i]))
    this.#sourceIndex = new Map(req.sourceColumns.map((c, i) => [c.name, i]))
    this.#output = output
  }

  async run(paths: readonly string[]): Promise<MergeResult> {
    const req = this.#req
    this.#paths = paths
    await this.#loadSource()
    await this.#defineTarget(paths)
    this.#check()

    const matchedCase = clauseCase(
      req.whenMatched.map((c) => c.condition),
      (e) => this.#sql(e),
    )
    // A kept row carries only the target values its image reads: none for an update that sets
    // every column (`update: '*'`), so the join then reads only the columns it compares.
    const carried = (clauses: readonly MergeTargetClause[]): string => this.#keptColumns(clauses)
    await this.#userSql(
      `CREATE TEMP TABLE m_pairs AS SELECT ${carried(req.whenMatched)}, s.__sid, ${matchedCase} AS __clause ` +
        `FROM (${this.#targetSql}) t JOIN m_src s ON (${this.#sql(req.on)})`,
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
      // Only the rows some clause acts on are kept: every query over them asks for those.
      await this.#userSql(
        `CREATE TEMP TABLE m_nmbs AS SELECT * FROM (SELECT ${carried(req.whenNotMatchedBySource)}, ${nmbsCase} AS __clause ` +
          `FROM (${this.#targetSql}) t ANTI JOIN m_pairs p ON p.__fidx = t.__fidx AND p.__pos = t.__pos) WHERE __clause >= 0`,
      )
    } else {
      const rid = req.rowTracking === undefined ? '' : ', __rid BIGINT'
      await this.#con.run(`CREATE TEMP TABLE m_nmbs (__fidx INTEGER, __pos BIGINT${rid}, __clause INTEGER)`)
    }
    this.#check()

    const files = await this.#leavingPositions()
    const keptMatched = req.reportKeptMatched === true ? await this.#keptMatched(files) : undefined
    const updatedPositions = req.reportUpdated === true ? await this.#updatedPositions() : undefined
    const matched = await this.#counts('m_pairs', req.whenMatched)
    const bySource = await this.#counts('m_nmbs', req.whenNotMatchedBySource)
    const common = {
      files,
      ...(keptMatched === undefined ? {} : { keptMatched }),
      ...(updatedPositions === undefined ? {} : { updatedPositions }),
      numSourceRows: req.sourceRows.length,
      numTargetRowsMatchedUpdated: matched.updated,
      numTargetRowsMatchedDeleted: matched.deleted,
      numTargetRowsNotMatchedBySourceUpdated: bySource.updated,
      numTargetRowsNotMatchedBySourceDeleted: bySource.deleted,
    }
    if (this.#output !== undefined) {
      const { written, inserted } = await this.#writeNewRows(this.#output)
      return Object.freeze({
        ...common,
        rows: Object.freeze([]),
        written,
        numTargetRowsInserted: inserted,
      })
    }
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
      ...common,
      rows: Object.freeze(rows),
      ...(req.rowTracking === undefined ? {} : { rowIds: Object.freeze(rowIds) }),
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

  /**
   * Defines the relation of the live target rows. It is scanned, not materialized: the join reads
   * only the columns it needs, and only the rows the clauses act on are kept.
   */
  async #defineTarget(paths: readonly string[]): Promise<void> {
    const target = this.#target
    // Row tracking: each target row's stable id, which its updated image keeps.
    const tracking = this.#req.rowTracking
    const files = this.#req.files
    if (files.length === 0) {
      const defs = target.map((c, i) => `${sqlIdent(`t${i}`)} ${duckType(c.type)}`)
      if (tracking !== undefined) defs.push('__rid BIGINT')
      await this.#con.run(
        `CREATE TEMP TABLE m_tgt (__fidx INTEGER, __pos BIGINT${defs.map((d) => `, ${d}`).join('')})`,
      )
      this.#targetSql = 'SELECT * FROM m_tgt'
      return
    }
    const live = await defineLiveRows(this.#con, {
      files,
      paths,
      columns: target,
      tables: { files: 'm_files', deletedRows: 'm_dv' },
      withFileIndex: true,
      rowTracking: tracking,
    })
    const cols = [
      `${sqlIdent(FILE_INDEX_COL)} AS __fidx`,
      `${sqlIdent(ROW_COL)} AS __pos`,
      ...target.map(
        (c, i) => `CAST(${logicalStructSql(`c${i}`, c.type)} AS ${duckType(c.type)}) AS ${sqlIdent(`t${i}`)}`,
      ),
      ...(tracking === undefined ? [] : [`${sqlIdent(ROW_ID_COL)} AS __rid`]),
    ]
    this.#targetSql = `SELECT ${cols.join(', ')} FROM (${live.sql})`
  }

  /** The target columns a kept row carries: its position, its id, and the values its image reads. */
  #keptColumns(clauses: readonly MergeTargetClause[]): string {
    const cols = ['t.__fidx', 't.__pos']
    if (this.#req.rowTracking !== undefined) cols.push('t.__rid')
    for (const i of this.#imageInputs(clauses)) cols.push(`t.${sqlIdent(`t${i}`)}`)
    return cols.join(', ')
  }

  /**
   * Indexes (ascending) of the target columns the images of `clauses` read: those an update
   * clause leaves as they are, and those its expressions reference.
   */
  #imageInputs(clauses: readonly MergeTargetClause[]): number[] {
    const updates = indexesOf(clauses, 'update').map(
      (k) => clauses[k] as Extract<MergeTargetClause, { kind: 'update' }>,
    )
    const inputs = new Set<number>()
    this.#target.forEach((c, i) => {
      if (updates.some((u) => u.set[c.name] === undefined)) inputs.add(i)
    })
    for (const u of updates) {
      for (const e of Object.values(u.set)) {
        for (const [side, name] of columnsOf(e)) {
          const i = side === 'target' && name !== undefined ? this.#targetIndex.get(name) : undefined
          if (i !== undefined) inputs.add(i)
        }
      }
    }
    return [...inputs].sort((a, b) => a - b)
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
    // Row tracking: the stable id of each leaving row too, for conflict reconciliation (Case 5b).
    const tracking = this.#req.rowTracking !== undefined
    const rid = tracking ? ', __rid' : ''
    const acting = (table: string, clauses: readonly MergeTargetClause[]): string =>
      clauses.length === 0 ? '' : `SELECT DISTINCT __fidx, __pos${rid} FROM ${table} WHERE __clause >= 0`
    const parts = [
      acting('m_pairs', this.#req.whenMatched),
      acting('m_nmbs', this.#req.whenNotMatchedBySource),
    ].filter((s) => s !== '')
    const byFile = new Map<number, number[]>()
    const idsByFile = new Map<number, (bigint | null)[]>()
    if (parts.length > 0) {
      const ids = tracking ? ', list(q.__rid ORDER BY q.__pos)' : ''
      const rows = (
        await this.#con.runAndReadAll(
          `SELECT q.__fidx, list(q.__pos ORDER BY q.__pos)${ids} FROM (${parts.join(' UNION ')}) q GROUP BY q.__fidx`,
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
    const live = await liveRowCounts(this.#con, this.#req.files, this.#paths)
    return this.#req.files.map((f, i) =>
      Object.freeze({
        key: f.key,
        positions: Object.freeze(byFile.get(i) ?? []),
        liveRows: live[i] as number,
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
   * Per target column, the SQL of an updated image over a kept-rows table aliased `t` (with its
   * `__clause`) and, for matched rows, the source under `s`.
   */
  #imageSelect(clauses: readonly MergeTargetClause[], updates: readonly number[]): string[] {
    return this.#target.map((c, i) => {
      const branches: string[] = []
      for (const k of updates) {
        const e = (clauses[k] as Extract<MergeTargetClause, { kind: 'update' }>).set[c.name]
        if (e !== undefined) branches.push(`WHEN ${k} THEN CAST((${this.#sql(e)}) AS ${duckType(c.type)})`)
      }
      const current = `t.${sqlIdent(`t${i}`)}`
      if (branches.length === 0) return current
      // Set by every update clause: the current value is neither needed nor carried.
      if (branches.length === updates.length) return `CASE t.__clause ${branches.join(' ')} END`
      return `CASE t.__clause ${branches.join(' ')} ELSE ${current} END`
    })
  }

  /** `FROM ... WHERE ...` of the updated images of a kept-rows table. */
  #imageFrom(table: string, updates: readonly number[], withSource: boolean): string {
    const joinSource = withSource ? ' JOIN m_src s ON s.__sid = t.__sid' : ''
    return `FROM ${table} t${joinSource} WHERE t.__clause IN (${updates.join(', ')})`
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
    const select = this.#imageSelect(clauses, updates)
    const tracking = this.#req.rowTracking !== undefined
    if (tracking) select.push('t.__rid')
    const result = await this.#query(
      `SELECT ${select.join(', ')} ${this.#imageFrom(table, updates, withSource)} ORDER BY t.__fidx, t.__pos`,
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

  /**
   * Per target column, the SQL of an inserted row over the unmatched source rows under `s` (with
   * the applying clause in `__clause`), and the `FROM ... WHERE ...` that selects them; undefined
   * without insert clauses.
   */
  #insertQuery(clauses: readonly MergeInsertClause[]): { select: string[]; from: string } | undefined {
    if (clauses.length === 0) return undefined
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
    const from =
      `FROM (SELECT m.*, ${insertCase} AS __clause ` +
      'FROM m_src m ANTI JOIN m_pairs p ON p.__sid = m.__sid) s WHERE s.__clause >= 0'
    return { select, from }
  }

  /** The rows inserted for source rows that matched nothing. */
  async #inserts(clauses: readonly MergeInsertClause[]): Promise<Record<string, unknown>[]> {
    const q = this.#insertQuery(clauses)
    if (q === undefined) return []
    return this.#toRows(
      (await this.#query(`SELECT ${q.select.join(', ')} ${q.from} ORDER BY s.__sid`)).getRows(),
    )
  }

  // === Writing the new rows ===

  /**
   * Computes the updated images and the inserted rows into staging tables of the writer's layout
   * and writes them: images by file then position (matched ones first), then inserts in source
   * order, as the rows would have come back. Nothing is written when a value breaks NOT NULL.
   */
  async #writeNewRows(output: MergeOutput): Promise<{ written: MergeWritten; inserted: number }> {
    const req = this.#req
    const layout = output.out.layout
    const toLayout = layoutColumnIndexes(layout, this.#target)
    const tracking = req.rowTracking !== undefined
    const files = req.files.length + 1
    // `__idx` orders the parts (matched images, NOT MATCHED BY SOURCE images, inserts) and the
    // files within them, `__frn` the rows; the writer writes in that order.
    const staged = (select: readonly string[], order: readonly [string, string], rid: string): string =>
      [
        ...layout.dataColumns.map(
          (c, i) =>
            `${typeof c.type === 'string' ? select[toLayout.data[i] as number] : `CAST(${physicalStructSql(select[toLayout.data[i] as number] as string, c.type, layout.columnMappingMode)} AS ${c.sqlType})`} AS d${i}`,
        ),
        ...layout.partitionColumns.map((_, j) => `${select[toLayout.partition[j] as number]} AS p${j}`),
        `CAST(${order[0]} AS INTEGER) AS __idx`,
        `CAST(${order[1]} AS BIGINT) AS __frn`,
        ...(tracking ? [`CAST(${rid} AS BIGINT) AS __rid`] : []),
      ].join(', ')
    const imageParts: string[] = []
    for (const [part, table, clauses, withSource] of [
      [0, 'm_pairs', req.whenMatched, true],
      [1, 'm_nmbs', req.whenNotMatchedBySource, false],
    ] as const) {
      const updates = indexesOf(clauses, 'update')
      if (updates.length === 0) continue
      const select = this.#imageSelect(clauses, updates)
      imageParts.push(
        `SELECT ${staged(select, [`${part * files} + t.__fidx`, 't.__pos'], 't.__rid')} ${this.#imageFrom(table, updates, withSource)}`,
      )
    }
    const insert = this.#insertQuery(req.whenNotMatched)
    const insertPart =
      insert === undefined
        ? undefined
        : `SELECT ${staged(insert.select, [`${2 * files}`, 's.__sid'], 'NULL')} ${insert.from}`
    const empty = `SELECT ${staged(
      this.#target.map((c) => `CAST(NULL AS ${duckType(c.type)})`),
      ['0', '0'],
      'NULL',
    )} WHERE false`
    const create = async (table: string, parts: readonly string[]): Promise<void> => {
      await this.#userSql(
        `CREATE TEMP TABLE ${table} AS ${parts.length === 0 ? empty : parts.join(' UNION ALL ')}`,
      )
      this.#check()
    }
    const separate = output.write.separate
    const tables = separate ? ['m_out_images', 'm_out_inserts'] : ['m_out']
    if (separate) {
      await create('m_out_images', imageParts)
      await create('m_out_inserts', insertPart === undefined ? [] : [insertPart])
    } else {
      await create('m_out', insertPart === undefined ? imageParts : [...imageParts, insertPart])
    }
    const insertedRows = (
      await this.#con.runAndReadAll(
        `SELECT count(*) FROM ${separate ? 'm_out_inserts' : 'm_out'} WHERE __idx = ${2 * files}`,
      )
    ).getRows()[0]?.[0]
    await checkNotNull(this.#con, layout, tables)
    const images = separate ? await output.out.write('m_out_images', req.rowTracking) : []
    const inserts = await output.out.write(separate ? 'm_out_inserts' : 'm_out', req.rowTracking)
    return {
      written: Object.freeze({ images: Object.freeze(images), inserts: Object.freeze(inserts) }),
      inserted: Number(insertedRows ?? 0),
    }
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

/**
 * Whether the new rows of a merge into `target` can be written straight from DuckDB: no column
 * is void (rows may only hold null there, which the writer's per-value check enforces).
 */
function writableInDuckDb(target: WriteTarget): boolean {
  return target.schema.fields.every((f) => f.type !== 'void')
}

/**
 * SQL that gives a value with the table's logical struct field names the names files store
 * (column mapping): the inverse of `logicalStructSql`. A value without struct fields, or of a
 * table without mapping, is `sql` itself.
 */
function physicalStructSql(sql: string, type: DataType, mode: ColumnMappingMode, depth = 0): string {
  if (mode === 'none' || typeof type === 'string') return sql
  switch (type.type) {
    case 'struct': {
      const fields = type.fields.map(
        (f) =>
          `${sqlIdent(physicalNameOf(f, mode))} := ${physicalStructSql(`struct_extract(${sql}, ${sqlString(f.name)})`, f.type, mode, depth)}`,
      )
      return `CASE WHEN (${sql}) IS NULL THEN NULL ELSE struct_pack(${fields.join(', ')}) END`
    }
    case 'array': {
      const e = `__p${depth}`
      return `list_transform(${sql}, lambda ${e}: ${physicalStructSql(e, type.elementType, mode, depth + 1)})`
    }
    case 'map': {
      const e = `__p${depth}`
      const key = physicalStructSql(`struct_extract(${e}, 'key')`, type.keyType, mode, depth + 1)
      const value = physicalStructSql(`struct_extract(${e}, 'value')`, type.valueType, mode, depth + 1)
      return `map_from_entries(list_transform(map_entries(${sql}), lambda ${e}: struct_pack(key := ${key}, value := ${value})))`
    }
  }
}

/**
 * SQL that is true when a stored value (physical field names) holds null where its type forbids
 * it inside: a non-nullable struct field of a non-null struct, an element of an array without
 * `containsNull`, a value of a map without `valueContainsNull`, at any depth; undefined when the
 * type forbids none.
 */
function nestedNullSql(sql: string, type: DataType, mode: ColumnMappingMode, depth = 0): string | undefined {
  if (typeof type === 'string') return undefined
  const any = (list: string, e: string, nullable: boolean, inner: DataType): string | undefined => {
    const parts = [nullable ? undefined : `${e} IS NULL`, nestedNullSql(e, inner, mode, depth + 1)].filter(
      (p): p is string => p !== undefined,
    )
    return parts.length === 0
      ? undefined
      : `coalesce(list_bool_or(list_transform(${list}, lambda ${e}: ${parts.join(' OR ')})), false)`
  }
  switch (type.type) {
    case 'struct': {
      const parts: string[] = []
      for (const f of type.fields) {
        const v = `struct_extract(${sql}, ${sqlString(physicalNameOf(f, mode))})`
        if (!f.nullable) parts.push(`${v} IS NULL`)
        const inner = nestedNullSql(v, f.type, mode, depth)
        if (inner !== undefined) parts.push(inner)
      }
      return parts.length === 0 ? undefined : `((${sql}) IS NOT NULL AND (${parts.join(' OR ')}))`
    }
    case 'array':
      return any(sql, `__n${depth}`, type.containsNull, type.elementType)
    case 'map': {
      const parts = [
        any(`map_keys(${sql})`, `__n${depth}`, true, type.keyType),
        any(`map_values(${sql})`, `__n${depth}`, type.valueContainsNull, type.valueType),
      ].filter((p): p is string => p !== undefined)
      return parts.length === 0 ? undefined : `(${parts.join(' OR ')})`
    }
  }
}

/** For each data and partition column of the layout, the index of its target column. */
function layoutColumnIndexes(
  layout: WriteLayout,
  target: readonly ColumnSpec[],
): { data: number[]; partition: number[] } {
  const find = (c: LayoutColumn): number => {
    let k = target.findIndex((t) => t.name === c.name)
    if (k < 0) k = target.findIndex((t) => t.name.toLowerCase() === c.name.toLowerCase())
    if (k < 0) throw new InternalError(`the merge's target columns lack the written column '${c.name}'`)
    return k
  }
  return { data: layout.dataColumns.map(find), partition: layout.partitionColumns.map(find) }
}

/**
 * Fails when a new row holds null in a non-nullable column or nested field, before anything is
 * written.
 */
async function checkNotNull(
  con: DuckDBConnection,
  layout: WriteLayout,
  tables: readonly string[],
): Promise<void> {
  const checks: { what: string; sql: string }[] = []
  layout.dataColumns.forEach((c, i) => {
    if (!c.nullable) checks.push({ what: `column '${c.name}'`, sql: `count(*) FILTER (WHERE d${i} IS NULL)` })
    const nested = nestedNullSql(`d${i}`, c.type, layout.columnMappingMode)
    if (nested !== undefined) {
      checks.push({
        what: `a non-nullable field or element inside column '${c.name}'`,
        sql: `count(*) FILTER (WHERE ${nested})`,
      })
    }
  })
  layout.partitionColumns.forEach((c, j) => {
    if (!c.nullable) checks.push({ what: `column '${c.name}'`, sql: `count(*) FILTER (WHERE p${j} IS NULL)` })
  })
  if (checks.length === 0) return
  for (const table of tables) {
    const row =
      (await con.runAndReadAll(`SELECT ${checks.map((c) => c.sql).join(', ')} FROM ${table}`)).getRows()[0] ??
      []
    checks.forEach((c, k) => {
      const nulls = Number(row[k] ?? 0)
      if (nulls > 0) {
        throw new InvalidArgumentError(
          `MERGE writes null into ${c.what} in ${nulls} row(s), which is not nullable`,
          {
            argument: 'merge',
            hint: 'Give the column a non-null value in every update and insert clause that sets it.',
          },
        )
      }
    })
  }
}
