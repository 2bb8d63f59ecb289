import { randomUUID } from 'node:crypto'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import {
  BIGINT,
  type DuckDBAppender,
  type DuckDBConnection,
  type DuckDBType,
  INTEGER,
} from '@duckdb/node-api'
import type { DataFileRef, RowTrackingColumns } from '../engine/data-plane.js'
import {
  CHANGE_TYPE_COLUMN,
  type ChangeDataRequest,
  type CompactedSource,
  type CompactionOutput,
  type CompactRequest,
  type DataWriter,
  type RewriteRequest,
  type RewriteRowTracking,
  type WriteRowsRequest,
  type WriteTarget,
  type WrittenFile,
  type ZOrderOutput,
  type ZOrderRequest,
} from '../engine/data-writer.js'
import { InternalError, InvalidArgumentError, isDeltaError } from '../errors/index.js'
import type { Expression } from '../expressions/ast.js'
import { renderDuckDbSql } from '../expressions/render-duckdb.js'
import { encodeAddPath, partitionDirectory, serializePartitionValue } from '../protocol/partition-values.js'
import type { DataType } from '../protocol/schema.js'
import type { ObjectStore } from '../storage/object-store.js'
import { appendLiveEndedMasks, deletedPositionsOf, MASK_POSITION_LIMIT } from './duckdb-deletion-mask.js'
import { dataPlaneError, dataPlaneFailureKind } from './duckdb-errors.js'
import {
  defineLiveRows,
  FILE_INDEX_COL,
  footerRowCounts,
  ROW_COMMIT_VERSION_COL,
  ROW_ID_COL,
} from './duckdb-live-rows.js'
import {
  appendIndexedPositions,
  ChunkAppender,
  isPlainObject,
  RowValueConverter,
  toPartitionInput,
  unknownColumn,
} from './duckdb-row-appender.js'
import { type DuckDbRuntime, ROW_COL, sqlFilePath, sqlIdent, sqlString } from './duckdb-runtime.js'
import { toJsValue } from './duckdb-values.js'
import { writeZOrdered } from './duckdb-zorder.js'
import { ensureScratchDir, scratchEntryName } from './scratch-dir.js'
import { type StagedFile, stageAllForRead } from './staging.js'
import {
  type LayoutColumn,
  type PartitionColumn,
  physicalNameOf,
  planWriteLayout,
  type WriteLayout,
} from './write-layout.js'
import { type ReturnedFileStats, readReturnedStats, writtenFilesStats } from './written-file-stats.js'

/**
 * The default {@link DataWriter}: DuckDB writes every file (`COPY ... TO` a local scratch file,
 * Parquet with snappy), its statistics come from what that COPY returned (checked against the
 * footer; columns where that is not exact get an aggregate query over the written file), and the
 * bytes go to the store with put-if-absent under a fresh UUID name.
 *
 * Rows are staged in a connection-local temporary table: JavaScript rows through the appender,
 * existing files through `read_parquet` with `file_row_number`, their deletion vectors removed by
 * an anti-join on physical row positions (as the read side does).
 */
export class DuckDbWriter implements DataWriter {
  readonly #store: ObjectStore
  readonly #duck: DuckDbRuntime
  readonly #scratchDir: string

  /**
   * @param store - the table's store; keys are relative to the table root
   * @param duck - the engine's DuckDB
   * @param scratchDir - local directory for staged copies and files before upload
   */
  constructor(store: ObjectStore, duck: DuckDbRuntime, scratchDir: string) {
    this.#store = store
    this.#duck = duck
    this.#scratchDir = scratchDir
  }

  async writeRows(request: WriteRowsRequest): Promise<WrittenFile[]> {
    const layout = planWriteLayout(request.target)
    const input: unknown = request.rows
    const batches = isAsyncIterable(input) ? (input as AsyncIterable<unknown>) : undefined
    if (batches === undefined && !Array.isArray(input)) {
      throw new InvalidArgumentError(
        'rows must be an array of row objects, or an async iterable of arrays of them',
        { argument: 'rows' },
      )
    }
    const tracking = request.rowTracking
    if (batches !== undefined && request.rowIds !== undefined) {
      throw new InvalidArgumentError('rowIds are written only with an array of rows', { argument: 'rowIds' })
    }
    const rows = batches === undefined ? (input as readonly unknown[]) : []
    const rowIds = checkRowIds(request.rowIds, tracking, rows.length)
    if (tracking !== undefined) checkRowTrackingSources(tracking, [], layout, 'A write', 'rows')
    if (batches === undefined && rows.length === 0) return []
    const partitions = new PartitionGroups(layout)
    // An array is checked whole before any DuckDB work, as it always was.
    const first = batches === undefined ? partitions.add(rows, 0) : undefined
    // A failure of the caller's own batches is theirs: it is thrown as it came, not as a DuckDB one.
    let inputFailure: { error: unknown } | undefined
    try {
      return await this.#job('write', layout, request.signal, async (job) => {
        const staging = await RowStaging.open(job, tracking !== undefined)
        try {
          if (first !== undefined) staging.append(rows, first, 0, rowIds)
          else {
            const iterator = (batches as AsyncIterable<unknown>)[Symbol.asyncIterator]()
            let offset = 0
            for (;;) {
              let next: IteratorResult<unknown>
              try {
                next = await iterator.next()
              } catch (error) {
                inputFailure = { error }
                throw error
              }
              if (next.done === true) break
              job.check()
              const batch: unknown = next.value
              if (!Array.isArray(batch)) {
                throw new InvalidArgumentError(
                  `Batch of rows at row ${offset} is not an array of row objects`,
                  {
                    argument: 'rows',
                  },
                )
              }
              staging.append(batch, partitions.add(batch, offset), offset, undefined)
              offset += batch.length
            }
          }
          staging.close()
        } catch (err) {
          staging.abandon()
          throw err
        }
        if (staging.rows === 0) return []
        return job.writeGroups(
          'w_rows',
          partitions.groups.map((partitionValues, g) => ({ where: `__gid = ${g}`, partitionValues })),
          tracking === undefined ? [] : rowTrackingSelect({ ...tracking, updated: true }),
        )
      })
    } catch (err) {
      if (inputFailure !== undefined) throw inputFailure.error
      throw err
    }
  }

  async rewrite(request: RewriteRequest): Promise<WrittenFile[]> {
    const layout = planWriteLayout(request.target)
    const sources = request.sources
    checkUniqueKeys(sources, 'sources')
    const positions = checkPositions(request.positions, sources)
    const mode = request.positionsMode ?? 'include'
    if (mode !== 'include' && mode !== 'exclude') {
      throw new InvalidArgumentError(`positionsMode must be 'include' or 'exclude', got '${String(mode)}'`, {
        argument: 'positionsMode',
      })
    }
    const set = resolveSet(request.set, layout)
    const tracking = request.rowTracking
    if (tracking !== undefined) checkRowTrackingSources(tracking, sources, layout, 'A rewrite', 'sources')
    if (sources.length === 0) return []
    return this.#job('rewrite', layout, request.signal, async (job) => {
      const { sql: rel } = await job.sourceRelation(sources, true, tracking)
      const columns = new ColumnResolver(layout, 'r')
      const render = (e: Expression): string => renderDuckDbSql(e, { column: (path) => columns.sql(path) })
      const out = [
        ...layout.dataColumns.map((c, i) => {
          const e = set.get(c)
          return `${e === undefined ? `r.d${i}` : `CAST((${render(e)}) AS ${c.sqlType})`} AS d${i}`
        }),
        ...layout.partitionColumns.map((c, j) => {
          const e = set.get(c)
          return `${e === undefined ? `r.p${j}` : `CAST((${render(e)}) AS ${c.sqlType})`} AS p${j}`
        }),
      ]
      let from = `(${rel}) r`
      const conditions: string[] = []
      if (request.where !== undefined) conditions.push(`coalesce((${render(request.where)}), false)`)
      if (positions !== undefined) {
        const filter = await job.positionsFilter('w_pos', sources, positions, mode)
        from += filter.join
        if (filter.condition !== undefined) conditions.push(filter.condition)
      }
      const where = conditions.length === 0 ? '' : ` WHERE ${conditions.join(' AND ')}`
      if (tracking !== undefined) out.push('r.__rid', 'r.__rcv')
      const select = `SELECT ${out.join(', ')}, r.__idx, r.__frn FROM ${from}${where} ORDER BY r.__idx, r.__frn`
      const hidden = tracking === undefined ? [] : rowTrackingSelect(tracking)
      const checksNulls = notNullChecks(layout, set).length > 0
      if (layout.partitionColumns.length === 0 && !checksNulls) {
        // Nothing to check or group first: the rows go from the sources to the files in one COPY,
        // never held in a table (an empty result writes no file).
        return job.userSql(() =>
          job.writeGroups(`(${select})`, [{ where: 'true', partitionValues: {} }], hidden),
        )
      }
      await job.userSql(() => job.con.run(`CREATE TEMP TABLE w_out AS ${select}`))
      job.check()
      await checkNotNull(job.con, layout, set)
      const total = Number((await job.con.runAndReadAll('SELECT count(*) FROM w_out')).getRows()[0]?.[0] ?? 0)
      if (total === 0) return []
      if (layout.partitionColumns.length === 0) {
        return job.writeGroups('w_out', [{ where: 'true', partitionValues: {} }], hidden)
      }
      const groups = await groupTableByPartition(job.con, layout)
      return job.writeGroups(
        'w_final',
        groups.map((partitionValues, g) => ({ where: `__gid = ${g}`, partitionValues })),
        hidden,
      )
    })
  }

  async writeChangeData(request: ChangeDataRequest): Promise<WrittenFile[]> {
    const layout = planWriteLayout({
      ...request.target,
      pathPrefix: CHANGE_DATA_DIR,
      targetFileSize: undefined,
    })
    // One relation over every source of every part: a file may give rows to several parts (the
    // preimages and the deletions of one MERGE), each part selecting its own positions.
    const sources: DataFileRef[] = []
    const indexOf = new Map<string, number>()
    const parts = request.parts.map((part) => {
      checkUniqueKeys(part.sources, 'parts.sources')
      const positions =
        part.positions === undefined ? undefined : checkPositions(part.positions, part.sources)
      for (const f of part.sources) {
        if (indexOf.has(f.key)) continue
        indexOf.set(f.key, sources.length)
        sources.push(f)
      }
      return { ...part, positions }
    })
    if (parts.every((p) => p.sources.length === 0)) return []
    return this.#job('change data', layout, request.signal, async (job) => {
      const { sql: rel } = await job.sourceRelation(sources, true)
      const cols = [
        ...layout.dataColumns.map((_, i) => `r.d${i}`),
        ...layout.partitionColumns.map((_, j) => `r.p${j}`),
      ]
      const selects: string[] = []
      for (const [k, part] of parts.entries()) {
        if (part.sources.length === 0) continue
        const type = sqlString(part.changeType)
        if (part.positions === undefined) {
          const idx = part.sources.map((f) => indexOf.get(f.key) as number)
          selects.push(
            `SELECT ${cols.join(', ')}, ${type} AS __ct, r.__idx, r.__frn FROM (${rel}) r WHERE r.__idx IN (${idx.join(', ')})`,
          )
          continue
        }
        const filter = await job.positionsFilter(`w_cdc_pos${k}`, sources, part.positions, 'include')
        selects.push(
          `SELECT ${cols.join(', ')}, ${type} AS __ct, r.__idx, r.__frn FROM (${rel}) r${filter.join}` +
            (filter.condition === undefined ? '' : ` WHERE ${filter.condition}`),
        )
      }
      await job.con.run(
        `CREATE TEMP TABLE w_out AS SELECT * FROM (${selects.join(' UNION ALL ')}) ORDER BY __idx, __frn`,
      )
      job.check()
      const total = Number((await job.con.runAndReadAll('SELECT count(*) FROM w_out')).getRows()[0]?.[0] ?? 0)
      if (total === 0) return []
      const hidden = [`__ct AS ${sqlIdent(CHANGE_TYPE_COLUMN)}`]
      if (layout.partitionColumns.length === 0) {
        return job.writeGroups('w_out', [{ where: 'true', partitionValues: {} }], hidden, 'cdc')
      }
      const groups = await groupTableByPartition(job.con, layout)
      return job.writeGroups(
        'w_final',
        groups.map((partitionValues, g) => ({ where: `__gid = ${g}`, partitionValues })),
        hidden,
        'cdc',
      )
    })
  }

  async compact(request: CompactRequest): Promise<CompactionOutput[]> {
    const layout = planWriteLayout(request.target)
    const bins = request.bins.map((bin, b) => {
      if (bin.length === 0) {
        throw new InvalidArgumentError(`Compaction bin ${b} is empty`, {
          argument: 'bins',
          hint: 'Leave empty bins out.',
        })
      }
      checkUniqueKeys(bin, `bins[${b}]`)
      const values = bin.map((f) => normalizedPartitionValues(f, layout))
      const first = JSON.stringify(values[0])
      const other = values.findIndex((v) => JSON.stringify(v) !== first)
      if (other >= 0) {
        throw new InvalidArgumentError(
          `Compaction bin ${b} mixes partitions: '${(bin[0] as DataFileRef).key}' and '${(bin[other] as DataFileRef).key}' have different partition values`,
          { argument: 'bins', hint: 'Bin files of one partition together.' },
        )
      }
      return { sources: bin, partitionValues: values[0] as Record<string, string | null> }
    })
    const tracking = request.rowTracking
    if (tracking !== undefined) {
      checkRowTrackingSources(
        tracking,
        bins.flatMap((b) => b.sources),
        layout,
        'A compaction',
        'bins',
      )
    }
    if (bins.length === 0) return []
    return this.#job('compaction', layout, request.signal, async (job) => {
      const outputs: CompactionOutput[] = []
      for (const bin of bins) {
        job.check()
        outputs.push(await job.compactBin(bin.sources, bin.partitionValues, tracking))
        await job.releaseStaged()
      }
      return outputs
    })
  }

  async zOrder(request: ZOrderRequest): Promise<ZOrderOutput> {
    const layout = planWriteLayout(request.target)
    const sources = request.sources
    checkUniqueKeys(sources, 'sources')
    const values = sources.map((f) => normalizedPartitionValues(f, layout))
    const other = values.findIndex((v) => JSON.stringify(v) !== JSON.stringify(values[0]))
    if (other >= 0) {
      throw new InvalidArgumentError(
        `Z-order sources mix partitions: '${(sources[0] as DataFileRef).key}' and '${(sources[other] as DataFileRef).key}' have different partition values`,
        { argument: 'sources', hint: 'Z-order one partition per call.' },
      )
    }
    const columns = zOrderColumnIndexes(request.columns, layout)
    const tracking = request.rowTracking
    if (tracking !== undefined) checkRowTrackingSources(tracking, sources, layout, 'A Z-order', 'sources')
    const keep = request.keepPermutationUpTo ?? 0
    if (!Number.isSafeInteger(keep) || keep < 0) {
      throw new InvalidArgumentError(
        `keepPermutationUpTo must be a non-negative integer, got ${String(keep)}`,
        {
          argument: 'keepPermutationUpTo',
        },
      )
    }
    if (sources.length === 0) return Object.freeze({ files: Object.freeze([]), liveRows: Object.freeze([]) })
    return this.#job('Z-order', layout, request.signal, (job) =>
      writeZOrdered(job, {
        sources,
        partitionValues: values[0] as Record<string, string | null>,
        columns,
        selectList: [
          dataSelectList(layout),
          ...(tracking === undefined ? [] : rowTrackingSelect(tracking)),
        ].join(', '),
        rowTracking: tracking,
        keepPermutationUpTo: keep,
        beforeWrite: request.beforeWrite,
      }),
    )
  }

  /**
   * Writes rows another part of this engine computes in DuckDB, without taking them into
   * JavaScript: `produce` runs on a write job's connection, leaves each set of rows in a
   * temporary table and has {@link StagedRowsWriter.write} turn it into files, cut, partitioned
   * and given statistics as every other write's. Files stored by a call that then fails are
   * deleted again.
   *
   * @param target - the layout of the new files
   * @param signal - stops the work
   * @param produce - computes the rows and writes them
   * @returns what `produce` returns
   * @throws {InvalidArgumentError} for an invalid target
   * @throws {StorageError} when DuckDB or the store fails
   */
  async writeComputed<T>(
    target: WriteTarget,
    signal: AbortSignal | undefined,
    produce: (out: StagedRowsWriter) => Promise<T>,
  ): Promise<T> {
    const layout = planWriteLayout(target)
    return this.#job('write', layout, signal, (job) =>
      produce(
        Object.freeze({
          con: job.con,
          layout,
          write: (table: string, rowTracking?: RowTrackingColumns) =>
            job.writeStagedTable(table, rowTracking),
        }),
      ),
    )
  }

  /** Runs `fn` with a fresh connection and scratch directory; undoes uploads when it fails. */
  async #job<T>(
    what: string,
    layout: WriteLayout,
    signal: AbortSignal | undefined,
    fn: (job: WriteJob) => Promise<T>,
  ): Promise<T> {
    signal?.throwIfAborted()
    let job: WriteJob | undefined
    try {
      await ensureScratchDir(this.#scratchDir)
      const dir = await mkdtemp(join(this.#scratchDir, scratchEntryName('write-')))
      const con = await this.#duck.connect().catch(async (err: unknown) => {
        await rm(dir, { recursive: true, force: true })
        throw err
      })
      job = new WriteJob(this.#store, con, layout, dir, this.#scratchDir, signal)
      await con.run(`SET TimeZone = 'UTC'`)
      return await fn(job)
    } catch (err) {
      await job?.undoUploads()
      throw dataPlaneError(err, { what, signal, closed: this.#duck.closed })
    } finally {
      // Removing the scratch directory can fail too (no descriptor left): never as a raw error.
      await job?.close().catch((err: unknown) => {
        throw dataPlaneError(err, { what, signal, closed: this.#duck.closed })
      })
    }
  }
}

/** What {@link DuckDbWriter.writeComputed} gives the code that computes the rows. */
export interface StagedRowsWriter {
  /** The write's connection (time zone UTC); its temporary tables last until the call ends. */
  readonly con: DuckDBConnection
  /** The checked layout of the target. */
  readonly layout: WriteLayout
  /**
   * Writes the rows of a temporary table to new files, in the table's order within each
   * partition. Its columns: `d<i>` (data column `i` of the layout, of its `sqlType`), `p<j>`
   * (partition column `j`, of its type), `__idx` and `__frn` (integers that order the rows of one
   * partition) and, with `rowTracking`, `__rid` (the stable row id a row keeps, or NULL for a fresh
   * one; the commit version is written NULL, as for updated and inserted rows). Values are written
   * as they are: the caller has checked them (NOT NULL included).
   *
   * @param table - the temporary table
   * @param rowTracking - the hidden columns' names, for a table that tracks rows
   * @returns the new files; empty when the table has no row
   */
  write(table: string, rowTracking?: RowTrackingColumns): Promise<WrittenFile[]>
}

/** Where change data files go (protocol: Change Data Files). */
const CHANGE_DATA_DIR = '_change_data/'

// === One write job: connection, scratch files, staged sources, uploads ===

interface ScratchFile {
  readonly localPath: string
  readonly partitionValues: Readonly<Record<string, string | null>>
}

interface GroupSpec {
  /** SQL condition selecting the group's rows. */
  readonly where: string
  readonly partitionValues: Readonly<Record<string, string | null>>
}

class WriteJob {
  readonly con: DuckDBConnection
  readonly layout: WriteLayout
  readonly #store: ObjectStore
  readonly #dir: string
  readonly #stageDir: string
  readonly #signal: AbortSignal | undefined
  readonly #uploaded: string[] = []
  /** What each COPY returned about the files it wrote, by scratch path, until they are stored. */
  readonly #returned = new Map<string, ReturnedFileStats>()
  #staged: StagedFile[] = []
  #fileIndex = 0
  #scratchIndex = 0

  constructor(
    store: ObjectStore,
    con: DuckDBConnection,
    layout: WriteLayout,
    dir: string,
    stageDir: string,
    signal: AbortSignal | undefined,
  ) {
    this.#store = store
    this.con = con
    this.layout = layout
    this.#dir = dir
    this.#stageDir = stageDir
    this.#signal = signal
  }

  check(): void {
    this.#signal?.throwIfAborted()
  }

  /**
   * Runs work whose SQL evaluates caller expressions: DuckDB's query errors (conversion, overflow,
   * type mismatch) are the caller's; any other failure is left to the job's own mapping.
   */
  async userSql<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work()
    } catch (err) {
      if (isDeltaError(err) || dataPlaneFailureKind(err) !== 'query') throw err
      throw dataPlaneError(err, { what: 'rewrite expressions', argument: 'set' })
    }
  }

  /**
   * SQL for the live rows of `sources` (deletion vectors applied), with `__idx` (source index),
   * `__frn` (physical row position), `d<i>` (data columns in the table's physical types) and,
   * when asked, `p<j>` (partition values from the log, typed).
   */
  async sourceRelation(
    sources: readonly DataFileRef[],
    withPartitions: boolean,
    rowTracking?: RowTrackingColumns,
  ): Promise<{ sql: string; paths: string[] }> {
    const layout = this.layout
    this.check()
    const paths = await stageAllForRead(
      this.#store,
      sources.map((f) => f.key),
      this.#stageDir,
      this.#signal,
      this.#staged,
    )
    const dataCols = layout.dataColumns.map((c) => ({ ...c, isPartition: false, readAs: c.sqlType }))
    const partCols = withPartitions ? layout.partitionColumns.map((c) => ({ ...c, isPartition: true })) : []
    const live = await defineLiveRows(this.con, {
      files: sources,
      paths,
      columns: [...dataCols, ...partCols],
      tables: { files: 'w_src', deletedRows: 'w_dv' },
      withFileIndex: true,
      rowTracking,
    })
    const n = dataCols.length
    const cols = [
      `${sqlIdent(FILE_INDEX_COL)} AS __idx`,
      `${sqlIdent(ROW_COL)} AS __frn`,
      ...dataCols.map((_, i) => `c${i} AS d${i}`),
      ...partCols.map((_, j) => `c${n + j} AS p${j}`),
      ...(rowTracking === undefined
        ? []
        : [`${sqlIdent(ROW_ID_COL)} AS __rid`, `${sqlIdent(ROW_COMMIT_VERSION_COL)} AS __rcv`]),
    ]
    const sql = `SELECT ${cols.join(', ')} FROM (${live.sql})`
    return { sql, paths }
  }

  /**
   * What keeps the rows of `positions` (`include`: only them, and none of a source missing from
   * the map) or drops them (`exclude`) from a relation `r` with `__idx` and `__frn`: a join to
   * append after `r`, and a condition to AND into its WHERE. Positions go in as one `BIT` mask
   * per source, tested with `get_bit` (one bit per position up to the last: no hash table, a few
   * bytes per file per row); when some source's positions are too sparse or too far for a mask,
   * every source's go in as `(__idx, __pos)` rows, semi- or anti-joined.
   *
   * @param table - the name of the helper table to fill
   */
  async positionsFilter(
    table: string,
    sources: readonly DataFileRef[],
    positions: ReadonlyMap<string, readonly number[]>,
    mode: 'include' | 'exclude',
  ): Promise<{ join: string; condition?: string | undefined }> {
    const groups = sources.flatMap((f, index) => {
      const list = positions.get(f.key)
      return list === undefined ? [] : [{ index, positions: list }]
    })
    const t = sqlIdent(table)
    if (!groups.every((g) => fitsMask(g.positions))) {
      await this.appendPositions(table, sources, positions)
      const kind = mode === 'include' ? 'SEMI' : 'ANTI'
      return { join: ` ${kind} JOIN ${t} ON ${t}.__idx = r.__idx AND ${t}.__pos = r.__frn` }
    }
    await this.con.run(`CREATE OR REPLACE TEMP TABLE ${t} (__idx INTEGER, mask BIT)`)
    const appender = await this.con.createAppender(table, 'main', 'temp')
    appendLiveEndedMasks(appender, groups)
    appender.closeSync()
    // A mask's last bit is clear: a row past it reads that bit (the index is clamped), so one
    // get_bit answers for every row.
    const bit = `get_bit(${t}.mask, CAST(least(r.__frn, bit_length(${t}.mask) - 1) AS INTEGER))`
    return mode === 'include'
      ? { join: ` JOIN ${t} ON ${t}.__idx = r.__idx`, condition: `${bit} = 1` }
      : { join: ` LEFT JOIN ${t} ON ${t}.__idx = r.__idx`, condition: `(${t}.mask IS NULL OR ${bit} = 0)` }
  }

  /** Fills a `(__idx, __pos)` table from positions keyed by source key. */
  async appendPositions(
    table: string,
    sources: readonly DataFileRef[],
    positions: ReadonlyMap<string, readonly number[]>,
  ): Promise<void> {
    await this.con.run(`CREATE OR REPLACE TEMP TABLE ${table} (__idx INTEGER, __pos BIGINT)`)
    const appender = await this.con.createAppender(table, 'main', 'temp')
    appendIndexedPositions(
      appender,
      sources.map((f, i) => ({ index: i, positions: positions.get(f.key) })),
    )
    appender.closeSync()
  }

  /**
   * Writes the rows of each group of `table` to files near the target size, then uploads them;
   * `hidden` are further select items written after the data columns (row tracking).
   */
  async writeGroups(
    table: string,
    groups: readonly GroupSpec[],
    hidden: readonly string[] = [],
    namePrefix = 'part',
  ): Promise<WrittenFile[]> {
    const layout = this.layout
    const select = [dataSelectList(layout), ...hidden].join(', ')
    const files: ScratchFile[] = []
    for (const g of groups) {
      this.check()
      const dir = join(this.#dir, `g${this.#scratchIndex++}`)
      const written = await this.#copy(
        `SELECT ${select} FROM ${table} WHERE ${g.where}`,
        dir,
        layout.targetFileSize,
      )
      for (const w of written) files.push({ localPath: w.path, partitionValues: g.partitionValues })
    }
    return this.#finish(files, namePrefix)
  }

  /** See {@link StagedRowsWriter.write}. */
  async writeStagedTable(table: string, rowTracking?: RowTrackingColumns): Promise<WrittenFile[]> {
    this.check()
    const total = Number(
      (await this.con.runAndReadAll(`SELECT count(*) FROM ${table}`)).getRows()[0]?.[0] ?? 0,
    )
    if (total === 0) return []
    const hidden = rowTracking === undefined ? [] : rowTrackingSelect({ ...rowTracking, updated: true })
    if (this.layout.partitionColumns.length === 0) {
      return this.writeGroups(
        `(SELECT * FROM ${table} ORDER BY __idx, __frn)`,
        [{ where: 'true', partitionValues: {} }],
        hidden,
      )
    }
    const final = `${table}_final`
    const groups = await groupTableByPartition(this.con, this.layout, table, final)
    return this.writeGroups(
      final,
      groups.map((partitionValues, g) => ({ where: `__gid = ${g}`, partitionValues })),
      hidden,
    )
  }

  /** Compacts one bin into one file, its sources' live rows in bin order then row order. */
  async compactBin(
    sources: readonly DataFileRef[],
    partitionValues: Readonly<Record<string, string | null>>,
    rowTracking?: RowTrackingColumns,
  ): Promise<CompactionOutput> {
    const { sql: rel, paths } = await this.sourceRelation(sources, false, rowTracking)
    // Preserving row tracking: the hidden columns follow the data columns, in the output file
    // and in the rows the order check compares it with.
    const selectList = [
      dataSelectList(this.layout),
      ...(rowTracking === undefined ? [] : rowTrackingSelect(rowTracking)),
    ].join(', ')
    // One pass over the sources gives each one's live row count and the fingerprint of its rows
    // in order. A source without deletions has its rows at file_row_number 0..n-1, so its rank is
    // the position itself and only a bin with deletions needs DuckDB's window to rank its rows.
    const withDeletions = sources.flatMap((f, i) => (deletedPositionsOf(f) === undefined ? [] : [i]))
    const expected = await sourceFingerprints(
      this.con,
      `SELECT __idx AS __i, __frn AS __f, ${selectList} FROM (${rel})`,
      withDeletions.length > 0 ? 'window' : 'position',
    )
    // Without deletions, every physical row is live; a source with deletions has its physical
    // count read from its footer, since a deletion vector naming rows the file lacks is not
    // evidence of how many it has.
    const counts = await footerRowCounts(
      this.con,
      withDeletions.map((i) => paths[i] as string),
    )
    const footerRows = new Map(withDeletions.map((i, k) => [i, counts[k] as number]))
    const compacted: CompactedSource[] = []
    let offset = 0
    sources.forEach((f, i) => {
      const rowCount = expected.get(i)?.rows ?? 0
      const physicalRowCount = footerRows.get(i) ?? rowCount
      compacted.push(Object.freeze({ key: f.key, rowOffsetInTarget: offset, rowCount, physicalRowCount }))
      offset += rowCount
    })
    if (offset === 0) return Object.freeze({ file: null, sources: Object.freeze(compacted) })

    // The offsets above are only true if rows land in exactly this order: hence the ORDER BY.
    const target = join(this.#dir, `bin-${this.#scratchIndex++}.parquet`)
    const written = await this.#copy(
      `SELECT ${selectList} FROM (${rel}) ORDER BY __idx, __frn`,
      target,
      undefined,
    )
    const rows = written.reduce((n, w) => n + w.count, 0)
    if (written.length !== 1 || rows !== offset) {
      throw new InternalError(
        `compaction wrote ${written.length} file(s) with ${rows} rows where one file with ${offset} rows was planned`,
      )
    }
    const outputPath = (written[0] as { path: string }).path
    await checkCompactionOutput(this.con, outputPath, compacted, expected)
    const [file] = await this.#finish([{ localPath: outputPath, partitionValues }])
    if (file === undefined || file.numRecords !== offset) {
      throw new InternalError(`compacted file holds ${file?.numRecords} rows, ${offset} were planned`)
    }
    return Object.freeze({ file, sources: Object.freeze(compacted) })
  }

  /** COPY of one select to one new scratch file (the Z-order outputs); the non-empty files. */
  copyToScratchFile(select: string): Promise<{ path: string; count: number }[]> {
    return this.#copy(select, join(this.#dir, `z-${this.#scratchIndex++}.parquet`), undefined)
  }

  /** Stores scratch files under fresh names, with their statistics, in the order given. */
  finishFiles(files: readonly ScratchFile[]): Promise<WrittenFile[]> {
    return this.#finish(files)
  }

  async releaseStaged(): Promise<void> {
    const staged = this.#staged
    this.#staged = []
    await Promise.all(staged.map((s) => s.release()))
  }

  /** Deletes the files this job stored; used when the job fails after some uploads. */
  async undoUploads(): Promise<void> {
    for (const key of this.#uploaded.splice(0)) {
      try {
        await this.#store.delete(key)
      } catch {
        // Best effort: an orphan data file is harmless (VACUUM removes it); the original error matters.
      }
    }
  }

  async close(): Promise<void> {
    try {
      this.con.closeSync()
    } finally {
      await this.releaseStaged()
      await rm(this.#dir, { recursive: true, force: true })
    }
  }

  // === Private steps ===

  /** COPY to a file, or to a directory of files cut near `fileSize`; returns the non-empty files. */
  async #copy(
    select: string,
    target: string,
    fileSize: number | undefined,
  ): Promise<{ path: string; count: number }[]> {
    this.check()
    const layout = this.layout
    const options = ['FORMAT parquet', 'COMPRESSION snappy', 'RETURN_STATS']
    if (fileSize !== undefined) options.push(`FILE_SIZE_BYTES ${fileSize}`)
    if (layout.fieldIdsSql !== undefined) options.push(`FIELD_IDS ${layout.fieldIdsSql}`)
    const result = await this.con.runAndReadAll(
      `COPY (${select}) TO ${sqlString(target)} (${options.join(', ')})`,
    )
    const names = result.columnNames()
    const fileAt = names.indexOf('filename')
    const countAt = names.indexOf('count')
    const columnsAt = names.indexOf('column_statistics')
    if (fileAt < 0 || countAt < 0) throw new InternalError('DuckDB COPY did not return file statistics')
    const written: { path: string; count: number }[] = []
    for (const r of result.getRows()) {
      const w = { path: String(r[fileAt]), count: Number(r[countAt]) }
      if (w.count === 0) continue
      written.push(w)
      const returned = columnsAt < 0 ? undefined : readReturnedStats(r[countAt] ?? null, r[columnsAt] ?? null)
      if (returned !== undefined) this.#returned.set(w.path, returned)
    }
    return written
  }

  /**
   * Stores the scratch files under fresh names with their statistics: from what their COPY
   * returned where that is exact, else from an aggregate over the files (`written-file-stats.ts`).
   */
  async #finish(files: readonly ScratchFile[], namePrefix = 'part'): Promise<WrittenFile[]> {
    if (files.length === 0) return []
    const layout = this.layout
    const stats = await writtenFilesStats(
      this.con,
      layout.statsLeaves,
      files.map((f) => ({ path: f.localPath, returned: this.#returned.get(f.localPath) })),
    )
    for (const f of files) this.#returned.delete(f.localPath)
    const partitionPhysical = layout.partitionColumns.map((c) => c.physicalName)
    const out: WrittenFile[] = []
    for (const f of files) {
      this.check()
      const fileStats = stats.get(f.localPath)
      if (fileStats === undefined)
        throw new InternalError(`no statistics for the written file ${f.localPath}`)
      const { json, numRecords } = fileStats
      const name = `${namePrefix}-${String(this.#fileIndex++).padStart(5, '0')}-${randomUUID()}.c000.snappy.parquet`
      const key = `${layout.pathPrefix}${partitionDirectory(partitionPhysical, f.partitionValues)}${name}`
      const bytes = await readFile(f.localPath)
      try {
        await this.#store.put(key, bytes, { ifNotExists: true, signal: this.#signal })
      } catch (err) {
        if (isDeltaError(err, 'DELTA_FILE_ALREADY_EXISTS')) {
          throw new InternalError(`a new data file name collided with an existing object '${key}'`, {
            cause: err,
          })
        }
        throw err
      }
      this.#uploaded.push(key)
      out.push(
        Object.freeze({
          key,
          path: encodeAddPath(key),
          size: bytes.length,
          partitionValues: Object.freeze({ ...f.partitionValues }),
          stats: json,
          numRecords,
        }),
      )
    }
    return out
  }
}

// === Rows from JavaScript into the staging table ===

/**
 * The connection-local table `w_rows` that a row write fills: the data columns `d<i>`, the
 * partition group `__gid`, and with row tracking the stable row id `__rid` (null for a fresh one).
 * Batches are appended as they come, so the JavaScript rows of one batch can be dropped before
 * the next is read while DuckDB holds (and may spill) the rows of all of them.
 */
class RowStaging {
  readonly #job: WriteJob
  readonly #appender: DuckDBAppender
  readonly #converter: RowValueConverter
  readonly #types: readonly DuckDBType[]
  readonly #chunks: ChunkAppender | undefined
  readonly #tracking: boolean
  #rows = 0

  private constructor(job: WriteJob, appender: DuckDBAppender, tracking: boolean) {
    const layout = job.layout
    this.#job = job
    this.#appender = appender
    this.#tracking = tracking
    this.#converter = new RowValueConverter(layout.columnMappingMode)
    this.#types = layout.dataColumns.map((_, i) => appender.columnType(i))
    // Rows of primitive columns go in whole data chunks; nested values keep the appender's
    // own per-value path, which builds them natively.
    this.#chunks = layout.dataColumns.every((c) => typeof c.type === 'string')
      ? new ChunkAppender(appender, tracking ? [...this.#types, INTEGER, BIGINT] : [...this.#types, INTEGER])
      : undefined
  }

  /** Creates `w_rows` on the job's connection and opens its appender. */
  static async open(job: WriteJob, tracking: boolean): Promise<RowStaging> {
    const defs = job.layout.dataColumns.map((c, i) => `${sqlIdent(`d${i}`)} ${c.sqlType}`)
    const idColumn = tracking ? ', __rid BIGINT' : ''
    await job.con.run(`CREATE TEMP TABLE w_rows (${defs.join(', ')}, __gid INTEGER${idColumn})`)
    return new RowStaging(job, await job.con.createAppender('w_rows', 'main', 'temp'), tracking)
  }

  /** Rows appended so far. */
  get rows(): number {
    return this.#rows
  }

  /**
   * Converts, checks and appends one batch, group by group: a single batch (an array write)
   * then keeps each partition's rows contiguous, so the per-group COPY reads only its own row
   * groups.
   *
   * @param rows - the batch, already checked by {@link PartitionGroups.add}
   * @param rowsByGroup - its row indexes per group
   * @param offset - the input index of its first row, for messages
   * @param rowIds - with row tracking, each row's stable id (null for a fresh one)
   * @throws {InvalidArgumentError} naming the input row and column of a value that does not fit
   */
  append(
    rows: readonly unknown[],
    rowsByGroup: readonly (readonly number[])[],
    offset: number,
    rowIds: readonly (bigint | null)[] | undefined,
  ): void {
    const columns = this.#job.layout.dataColumns
    const n = columns.length
    const chunks = this.#chunks
    const appender = this.#appender
    const converter = this.#converter
    // One position object for every value, read only by the message of a value that does not
    // fit (thrown at once): an object per value was most of this loop's own time.
    const at = { row: 0, column: '' }
    for (let g = 0; g < rowsByGroup.length; g++) {
      for (const r of rowsByGroup[g] as readonly number[]) {
        const row = rows[r] as Record<string, unknown>
        at.row = offset + r
        for (let i = 0; i < n; i++) {
          const c = columns[i] as LayoutColumn
          at.column = c.name
          if (chunks) chunks.set(i, converter.value(row[c.name], c.type, c.nullable, at))
          else converter.append(appender, row[c.name], c.type, c.nullable, this.#types[i] as DuckDBType, at)
        }
        const id = rowIds?.[r] ?? null
        if (chunks) {
          chunks.set(n, g)
          if (this.#tracking) chunks.set(n + 1, id)
          chunks.endRow()
        } else {
          appender.appendInteger(g)
          if (this.#tracking) {
            if (id === null) appender.appendNull()
            else appender.appendBigInt(id)
          }
          appender.endRow()
        }
        if (++this.#rows % 65_536 === 0) this.#job.check()
      }
    }
  }

  /** Appends what is pending and closes the appender. */
  close(): void {
    this.#chunks?.flush()
    this.#appender.closeSync()
  }

  /** Closes the appender after a failure. */
  abandon(): void {
    // Drop the half-appended row so closing the appender cannot fail on it.
    this.#appender.clear()
    this.#appender.closeSync()
  }
}

// === Rows, partitions and expressions ===

function isAsyncIterable(v: unknown): boolean {
  return (
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    typeof (v as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function'
  )
}

/**
 * Checks every row's shape and partition values, and groups row indexes by partition. The groups
 * last across the batches of one write: a partition met in a later batch joins its group, and
 * rows are numbered from each batch's offset in the whole input, so a message names the row's
 * place in the input, not in its batch.
 */
class PartitionGroups {
  /** Partition values of each group, by physical column name, in order of first appearance. */
  readonly groups: Record<string, string | null>[] = []
  readonly #layout: WriteLayout
  readonly #known: Set<string>
  readonly #voids: Set<string>
  readonly #index = new Map<string, number>()

  constructor(layout: WriteLayout) {
    this.#layout = layout
    this.#known = new Set([...layout.dataColumns, ...layout.partitionColumns].map((c) => c.name))
    // Void columns are never stored, but rows may carry them as null.
    this.#voids = new Set(layout.voidColumns)
  }

  /**
   * Checks one batch and groups it.
   *
   * @param rows - the batch
   * @param offset - the input index of its first row
   * @returns per group (by its index in {@link groups}), the batch's row indexes in it
   * @throws {InvalidArgumentError} naming the input row and column at fault
   */
  add(rows: readonly unknown[], offset: number): number[][] {
    const layout = this.#layout
    const known = this.#known
    const voids = this.#voids
    const rowsByGroup: number[][] = this.groups.map(() => [])
    // Without partition columns every row is in the one group: no group key to build per row.
    const unpartitioned = layout.partitionColumns.length === 0
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r]
      const at = offset + r
      if (!isPlainObject(row)) {
        throw new InvalidArgumentError(`Row ${at} is not a plain object`, { argument: 'rows' })
      }
      for (const k of Object.keys(row)) {
        if (known.has(k) || (voids.has(k) && (row[k] === null || row[k] === undefined))) continue
        if (voids.has(k)) {
          throw new InvalidArgumentError(
            `Row ${at}, column '${k}': expected null (the column type is void)`,
            {
              argument: 'rows',
            },
          )
        }
        unknownColumn({ row: at }, k, k, known)
      }
      if (unpartitioned) {
        if (this.groups.length === 0) {
          this.groups.push({})
          rowsByGroup.push([])
        }
        ;(rowsByGroup[0] as number[]).push(r)
        continue
      }
      const values: Record<string, string | null> = {}
      for (const c of layout.partitionColumns)
        values[c.physicalName] = partitionValueOfRow(row[c.name], c, at)
      const id = JSON.stringify(layout.partitionColumns.map((c) => values[c.physicalName] ?? null))
      let g = this.#index.get(id)
      if (g === undefined) {
        g = this.groups.length
        this.#index.set(id, g)
        this.groups.push(values)
        rowsByGroup.push([])
      }
      ;(rowsByGroup[g] as number[]).push(r)
    }
    return rowsByGroup
  }
}

function partitionValueOfRow(value: unknown, c: PartitionColumn, row: number): string | null {
  if (value === null || value === undefined) {
    if (!c.nullable) {
      throw new InvalidArgumentError(
        `Row ${row}, column '${c.name}': expected a non-null value (the column is not nullable)`,
        {
          argument: 'rows',
        },
      )
    }
    return null
  }
  const typed = toPartitionInput(value, c.type, { row, column: c.name })
  try {
    return emptyToNull(serializePartitionValue(typed, c.type, c.name))
  } catch (err) {
    if (!isDeltaError(err)) throw err
    throw new InvalidArgumentError(`Row ${row}, column '${c.name}': ${err.message}`, {
      argument: 'rows',
      cause: err,
    })
  }
}

// The log reads an empty partition value as null, so one is written as null outright.
function emptyToNull(v: string | null): string | null {
  return v === '' ? null : v
}

/**
 * Groups `from` (default `w_out`) by its partition columns into `into` (default `w_final`, with
 * `__gid`); returns each group's values.
 */
async function groupTableByPartition(
  con: DuckDBConnection,
  layout: WriteLayout,
  from = 'w_out',
  into = 'w_final',
): Promise<Record<string, string | null>[]> {
  const parts = layout.partitionColumns.map((_, j) => `p${j}`)
  const groupTable = `${into}_groups`
  await con.run(
    `CREATE TEMP TABLE ${groupTable} AS SELECT row_number() OVER () - 1 AS __gid, * FROM (SELECT DISTINCT ${parts.join(', ')} FROM ${from})`,
  )
  const rows = (
    await con.runAndReadAll(`SELECT ${parts.join(', ')} FROM ${groupTable} ORDER BY __gid`)
  ).getRows()
  const groups = rows.map((r, g) => {
    const values: Record<string, string | null> = {}
    layout.partitionColumns.forEach((c, j) => {
      const js = toJsValue(r[j] ?? null, c.type)
      values[c.physicalName] =
        js === null
          ? null
          : emptyToNull(
              serializePartitionValue(
                toPartitionInput(js, c.type, { row: g, column: c.name }),
                c.type,
                c.name,
              ),
            )
    })
    return values
  })
  const on = parts.map((p) => `o.${p} IS NOT DISTINCT FROM g.${p}`).join(' AND ')
  await con.run(
    `CREATE TEMP TABLE ${into} AS SELECT o.*, g.__gid FROM ${from} o JOIN ${groupTable} g ON ${on} ORDER BY g.__gid, o.__idx, o.__frn`,
  )
  return groups
}

/** A count of the nulls of each non-nullable column that a `set` assigns, over `w_out`. */
function notNullChecks(
  layout: WriteLayout,
  set: ReadonlyMap<LayoutColumn, Expression>,
): { column: string; sql: string }[] {
  const checks: { column: string; sql: string }[] = []
  layout.dataColumns.forEach((c, i) => {
    if (!c.nullable && set.has(c))
      checks.push({ column: c.name, sql: `count(*) FILTER (WHERE d${i} IS NULL)` })
  })
  layout.partitionColumns.forEach((c, j) => {
    if (!c.nullable && set.has(c))
      checks.push({ column: c.name, sql: `count(*) FILTER (WHERE p${j} IS NULL)` })
  })
  return checks
}

/** Fails when a `set` made a non-nullable column null. */
async function checkNotNull(
  con: DuckDBConnection,
  layout: WriteLayout,
  set: ReadonlyMap<LayoutColumn, Expression>,
): Promise<void> {
  const checks = notNullChecks(layout, set)
  if (checks.length === 0) return
  const row =
    (await con.runAndReadAll(`SELECT ${checks.map((c) => c.sql).join(', ')} FROM w_out`)).getRows()[0] ?? []
  checks.forEach((c, k) => {
    const nulls = Number(row[k] ?? 0)
    if (nulls > 0) {
      throw new InvalidArgumentError(
        `The new value of column '${c.column}' is null in ${nulls} row(s), but the column is not nullable`,
        {
          argument: 'set',
        },
      )
    }
  })
}

/**
 * Whether a source's positions go in as a `BIT` mask: every position within `get_bit`'s 32-bit
 * index, and the mask (one bit per position up to the last) at most 8 KiB or 32 bytes per
 * position, so that a few positions far into a large file stay a short list.
 */
function fitsMask(positions: readonly number[]): boolean {
  let last = -1
  for (let k = 0; k < positions.length; k++) last = Math.max(last, positions[k] as number)
  return (
    last < MASK_POSITION_LIMIT && last < Math.max(MASK_FREE_BITS, positions.length * MASK_BITS_PER_POSITION)
  )
}

/** A mask of up to this many bits (8 KiB) is used however few positions it holds. */
const MASK_FREE_BITS = 2 ** 16
/** Beyond that, a mask may take this many bits per position it holds (32 bytes). */
const MASK_BITS_PER_POSITION = 256

function resolveSet(
  set: Readonly<Record<string, Expression>> | undefined,
  layout: WriteLayout,
): Map<LayoutColumn, Expression> {
  const out = new Map<LayoutColumn, Expression>()
  if (set === undefined) return out
  const all: LayoutColumn[] = [...layout.dataColumns, ...layout.partitionColumns]
  for (const [name, expr] of Object.entries(set)) {
    const c = all.find((x) => x.name.toLowerCase() === name.toLowerCase())
    if (c === undefined) {
      throw new InvalidArgumentError(`Cannot set unknown column '${name}'`, {
        argument: 'set',
        hint: `Set top-level columns by name; known columns: ${all.map((x) => x.name).join(', ')}`,
      })
    }
    if (out.has(c)) throw new InvalidArgumentError(`Column '${c.name}' is set twice`, { argument: 'set' })
    out.set(c, expr)
  }
  return out
}

/** SQL for logical column paths over a relation with `d<i>` and `p<j>` columns. */
class ColumnResolver {
  readonly #layout: WriteLayout
  readonly #alias: string

  constructor(layout: WriteLayout, alias: string) {
    this.#layout = layout
    this.#alias = alias
  }

  sql(path: readonly string[]): string {
    const [head, ...rest] = path
    const lower = (head ?? '').toLowerCase()
    const d = this.#layout.dataColumns.findIndex((c) => c.name.toLowerCase() === lower)
    const p = this.#layout.partitionColumns.findIndex((c) => c.name.toLowerCase() === lower)
    const col = d >= 0 ? this.#layout.dataColumns[d] : this.#layout.partitionColumns[p]
    if (col === undefined) {
      throw new InvalidArgumentError(`Unknown column '${path.join('.')}' in a rewrite expression`, {
        argument: 'where',
        hint: `Known columns: ${[...this.#layout.dataColumns, ...this.#layout.partitionColumns].map((c) => c.name).join(', ')}`,
      })
    }
    let sql = `${this.#alias}.${d >= 0 ? `d${d}` : `p${p}`}`
    let type: DataType = col.type
    for (const name of rest) {
      const field =
        typeof type === 'object' && type.type === 'struct'
          ? type.fields.find((f) => f.name.toLowerCase() === name.toLowerCase())
          : undefined
      if (field === undefined) {
        throw new InvalidArgumentError(`Unknown column '${path.join('.')}' in a rewrite expression`, {
          argument: 'where',
        })
      }
      sql = `struct_extract(${sql}, ${sqlString(physicalNameOf(field, this.#layout.columnMappingMode))})`
      type = field.type
    }
    return sql
  }
}

function dataSelectList(layout: WriteLayout): string {
  return layout.dataColumns.map((c, i) => `d${i} AS ${sqlIdent(c.physicalName)}`).join(', ')
}

/**
 * The row-tracking columns of a copied or updated row, over a relation with `__rid` and (for
 * copies) `__rcv`, such as a tracking {@link WriteJob.sourceRelation}: the stable row id in the
 * materialized row-id column, and the stable commit version in the other one, or NULL for an
 * updated row (it then reads its new file's `defaultRowCommitVersion`). Compaction, rewrites and
 * row writes write them alike.
 */
function rowTrackingSelect(tracking: RewriteRowTracking): string[] {
  return [
    `__rid AS ${sqlIdent(tracking.materializedRowIdColumn as string)}`,
    `${tracking.updated === true ? 'CAST(NULL AS BIGINT)' : '__rcv'} AS ${sqlIdent(tracking.materializedRowCommitVersionColumn as string)}`,
  ]
}

/**
 * A compaction or rewrite that preserves row tracking needs both hidden column names, names no
 * data column has, and every source's `baseRowId` and `defaultRowCommitVersion` (a row without a
 * materialized value takes its id from them).
 *
 * @param what - the request, for messages (`A compaction`)
 * @param argument - the request field that lists the sources
 * @throws {InvalidArgumentError} naming what is missing
 */
function checkRowTrackingSources(
  tracking: RowTrackingColumns,
  sources: readonly DataFileRef[],
  layout: WriteLayout,
  what: string,
  argument: string,
): void {
  const names = [tracking.materializedRowIdColumn, tracking.materializedRowCommitVersionColumn]
  if (names.some((n) => n === undefined || n === '')) {
    throw new InvalidArgumentError(
      `${what} that preserves row tracking needs both materialized column names`,
      {
        argument: 'rowTracking',
      },
    )
  }
  const taken = new Set(
    [...layout.dataColumns, ...layout.partitionColumns].map((c) => c.physicalName.toLowerCase()),
  )
  const clash = names.find((n) => taken.has((n as string).toLowerCase()))
  if (clash !== undefined) {
    throw new InvalidArgumentError(
      `The materialized row-tracking column '${clash}' has the name of a data column`,
      {
        argument: 'rowTracking',
      },
    )
  }
  for (const f of sources) {
    if (f.baseRowId === undefined || f.defaultRowCommitVersion === undefined) {
      throw new InvalidArgumentError(
        `Source '${f.key}' has no baseRowId or defaultRowCommitVersion, which preserving its row ids needs`,
        { argument },
      )
    }
  }
}

/**
 * The row ids of a write that preserves row tracking: one bigint or null per row.
 *
 * @throws {InvalidArgumentError} for ids without `rowTracking`, a length other than the rows', or
 *   an entry that is neither
 */
function checkRowIds(
  rowIds: readonly (bigint | null)[] | undefined,
  tracking: RowTrackingColumns | undefined,
  rows: number,
): readonly (bigint | null)[] | undefined {
  if (rowIds === undefined) return undefined
  if (tracking === undefined) {
    throw new InvalidArgumentError('rowIds are written only with rowTracking', { argument: 'rowIds' })
  }
  if (!Array.isArray(rowIds) || rowIds.length !== rows) {
    throw new InvalidArgumentError(`rowIds must hold one entry per row (${rows})`, { argument: 'rowIds' })
  }
  const bad = rowIds.findIndex((id) => id !== null && typeof id !== 'bigint')
  if (bad >= 0) {
    throw new InvalidArgumentError(`rowIds[${bad}] is neither a bigint nor null`, { argument: 'rowIds' })
  }
  return rowIds
}

/**
 * The `layout.dataColumns` indexes of Z-order columns given by logical name.
 *
 * @throws {InvalidArgumentError} for none, or an unknown, partition or repeated column
 */
function zOrderColumnIndexes(columns: readonly string[], layout: WriteLayout): number[] {
  if (!Array.isArray(columns) || columns.length === 0) {
    throw new InvalidArgumentError('A Z-order needs at least one column', { argument: 'columns' })
  }
  const out: number[] = []
  for (const name of columns) {
    const lower = typeof name === 'string' ? name.toLowerCase() : ''
    const i = layout.dataColumns.findIndex((c) => c.name.toLowerCase() === lower)
    if (i < 0) {
      throw new InvalidArgumentError(`Z-order column '${String(name)}' is not a data column`, {
        argument: 'columns',
        hint: `Data columns: ${layout.dataColumns.map((c) => c.name).join(', ')}`,
      })
    }
    if (out.includes(i)) {
      throw new InvalidArgumentError(`Z-order column '${String(name)}' is listed twice`, {
        argument: 'columns',
      })
    }
    out.push(i)
  }
  return out
}

function checkUniqueKeys(files: readonly DataFileRef[], argument: string): void {
  const seen = new Set<string>()
  for (const f of files) {
    if (seen.has(f.key)) {
      throw new InvalidArgumentError(`File '${f.key}' is listed twice in ${argument}`, { argument })
    }
    seen.add(f.key)
  }
}

function checkPositions(
  positions: ReadonlyMap<string, readonly number[]> | undefined,
  sources: readonly DataFileRef[],
): ReadonlyMap<string, readonly number[]> | undefined {
  if (positions === undefined) return undefined
  if (!(positions instanceof Map)) {
    throw new InvalidArgumentError('positions must be a Map from source key to row positions', {
      argument: 'positions',
    })
  }
  const keys = new Set(sources.map((f) => f.key))
  for (const [key, list] of positions) {
    if (!keys.has(key)) {
      throw new InvalidArgumentError(`positions names '${key}', which is not among the sources`, {
        argument: 'positions',
      })
    }
    for (let k = 0; k < list.length; k++) {
      const p = list[k] as number
      if (!Number.isSafeInteger(p) || p < 0) {
        throw new InvalidArgumentError(
          `positions of '${key}' hold ${p}; row positions are non-negative integers`,
          {
            argument: 'positions',
          },
        )
      }
    }
  }
  return positions
}

function normalizedPartitionValues(f: DataFileRef, layout: WriteLayout): Record<string, string | null> {
  const out: Record<string, string | null> = {}
  for (const c of layout.partitionColumns) {
    const raw = f.partitionValues[c.physicalName] ?? f.partitionValues[c.name] ?? null
    out[c.physicalName] = emptyToNull(raw)
  }
  return out
}

/** Each source's live row count and the order-sensitive fingerprint of its rows, by source index. */
export type SourceFingerprints = ReadonlyMap<number, { readonly rows: number; readonly fingerprint: string }>

/**
 * The fingerprints a compacted file is checked against ({@link checkCompactionOutput}): per
 * source, its live row count and the sum of each row's hash weighted by the row's rank among the
 * source's live rows in file_row_number order.
 *
 * @param con - a DuckDB connection
 * @param sourceRows - SQL relation of the sources' live rows: `__i` (source index), `__f`
 *   (file_row_number in the source), then the data columns exactly as written
 * @param rank - `'window'` ranks rows with a window over `__f`; `'position'` takes `__f + 1`,
 *   which is the rank only when no source has a deleted row (its rows are then at 0..n-1)
 * @returns the fingerprints by source index (sources without live rows are absent)
 */
export async function sourceFingerprints(
  con: DuckDBConnection,
  sourceRows: string,
  rank: 'window' | 'position',
): Promise<SourceFingerprints> {
  const rk = rank === 'window' ? 'row_number() OVER (PARTITION BY __i ORDER BY __f)' : '__f + 1'
  return readFingerprints(
    con,
    fingerprintSql(
      `SELECT __i AS i, hash(struct_pack(*COLUMNS(* EXCLUDE (__i, __f)))) AS h, ${rk} AS rk FROM (${sourceRows})`,
    ),
  )
}

/**
 * Reads a compacted file back and proves, per source, that the source's live rows sit at its
 * planned offset in file_row_number order: the fingerprint of the output's rows in the source's
 * range, each weighted by its place in the range, must equal the source's own
 * ({@link sourceFingerprints}). The composition tags OPTIMIZE writes rely on these offsets, and a
 * wrong offset would make a later reconciliation delete the wrong rows, so the order is checked,
 * not assumed.
 *
 * @param con - a DuckDB connection
 * @param outputPath - the local output Parquet file
 * @param sources - each source's planned offset and live row count, by source index
 * @param expected - the sources' fingerprints
 * @throws {InternalError} when any source's rows are not exactly at their offset
 */
export async function checkCompactionOutput(
  con: DuckDBConnection,
  outputPath: string,
  sources: readonly Pick<CompactedSource, 'key' | 'rowOffsetInTarget' | 'rowCount'>[],
  expected: SourceFingerprints,
): Promise<void> {
  const ranges = sources
    .map((s, i) => [i, s] as const)
    .filter(([, s]) => s.rowCount > 0)
    .map(([i, s]) => `(${i}, ${s.rowOffsetInTarget}, ${s.rowCount})`)
  if (ranges.length === 0) return
  const output =
    `SELECT __f, hash(struct_pack(*COLUMNS(* EXCLUDE (__f)))) AS h FROM (SELECT file_row_number AS __f, * EXCLUDE (file_row_number) ` +
    `FROM read_parquet(${sqlFilePath(outputPath)}, file_row_number = true, hive_partitioning = false))`
  // The ranges are contiguous and sorted by start, so each row's range is the last one starting
  // at or before it: an ASOF join, which DuckDB runs as a merge instead of a range join per row.
  const actual = await readFingerprints(
    con,
    fingerprintSql(
      `SELECT r.i AS i, o.h, o.__f - r.s + 1 AS rk FROM (${output}) o ASOF JOIN (VALUES ${ranges.join(', ')}) r(i, s, n) ` +
        'ON o.__f >= r.s WHERE o.__f < r.s + r.n',
    ),
  )
  for (const [i, s] of sources.entries()) {
    if (s.rowCount === 0) continue
    const want = expected.get(i)
    const got = actual.get(i)
    if (
      want === undefined ||
      got === undefined ||
      want.rows !== got.rows ||
      want.fingerprint !== got.fingerprint
    ) {
      throw new InternalError(
        `compaction output does not hold source ${s.key} at rows ${s.rowOffsetInTarget}..${s.rowOffsetInTarget + s.rowCount - 1} in order`,
      )
    }
  }
}

/**
 * {@link sourceFingerprints} then {@link checkCompactionOutput}, for callers that plan the
 * offsets without the fingerprints' counts.
 *
 * @throws {InternalError} when any source's rows are not exactly at their offset
 */
export async function verifyCompactionOrder(
  con: DuckDBConnection,
  sourceRows: string,
  outputPath: string,
  sources: readonly Pick<CompactedSource, 'key' | 'rowOffsetInTarget' | 'rowCount'>[],
): Promise<void> {
  await checkCompactionOutput(con, outputPath, sources, await sourceFingerprints(con, sourceRows, 'window'))
}

/** Rows `(i, h, rk)` (source index, row hash, rank) to one fingerprint per source. */
function fingerprintSql(rows: string): string {
  return `SELECT i, count(*) AS n, sum(h::HUGEINT * rk) AS fp FROM (${rows}) GROUP BY i`
}

async function readFingerprints(con: DuckDBConnection, sql: string): Promise<SourceFingerprints> {
  const rows = (await con.runAndReadAll(sql)).getRows()
  return new Map(rows.map((r) => [Number(r[0]), { rows: Number(r[1]), fingerprint: String(r[2]) }] as const))
}
