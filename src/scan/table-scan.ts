import type { RecordBatch, Table } from 'apache-arrow'
import { checkDvCardinalityFitsFile } from '../dv/row-bounds.js'
import type { RowTrackingColumns, ScanRequest } from '../engine/data-plane.js'
import type { Engine } from '../engine/engine.js'
import { checkKnownKeys, optionsObject, optOneOf } from '../errors/argument-checks.js'
import type { Expression } from '../expressions/ast.js'
import { parseWhere } from '../expressions/parse-where.js'
import { dvUniqueId } from '../log/replay.js'
import type { AddFile } from '../protocol/actions.js'
import { fieldByName, type StructField } from '../protocol/schema.js'
import { parseStats } from '../protocol/stats.js'
import type { Snapshot } from '../snapshot/snapshot.js'
import { mapLimit } from '../util/map-limit.js'
import { columnSpecs } from './column-specs.js'
import { DV_READ_CONCURRENCY, dataFileRefs } from './data-file-refs.js'
import { toJSONRow } from './json-row.js'
import { loadFileDeletionVector } from './load-deletion-vector.js'
import { type PruneResult, pruneFiles } from './prune-files.js'
import { checkFilesTrackRows, ROW_TRACKING_FIELDS, scanRowTracking } from './row-tracking-scan.js'
import { missingFileOf, vacuumedFileError } from './vacuumed-files.js'

/** A row of a scan: column name -> value (see `DataPlane` for the value types). */
export type Row = Record<string, unknown>

/** What to read. */
export interface ScanOptions {
  /** SQL predicate text or a parsed expression; rows must satisfy it. */
  readonly where?: string | Expression | undefined
  /** Columns to return, in order; all columns when absent. */
  readonly columns?: readonly string[] | undefined
  /** Rows per yielded batch (a hint). */
  readonly batchSize?: number | undefined
  /**
   * Rows as `toJSONRow` makes them, so `JSON.stringify` takes them: bigints as numbers (or text
   * beyond 2^53), binary as base64, maps as objects. Arrow output is not affected.
   */
  readonly jsonSafe?: boolean | undefined
  /**
   * Each row also gets `_row_id` and `_row_commit_version` (bigint; Int64 in Arrow output): its
   * stable row id and the version that last inserted or updated it. The table must enable row
   * tracking (`RowTrackingNotEnabledError` otherwise).
   */
  readonly withRowTracking?: boolean | undefined
  readonly signal?: AbortSignal | undefined
}

/** Options of {@link TableScan.batches}. */
export interface BatchesOptions {
  /** `'rows'` (default): arrays of row objects; `'arrow'`: Arrow `RecordBatch`es. */
  readonly format?: 'rows' | 'arrow' | undefined
}

/**
 * A scan of one snapshot: prunes files by partition values and statistics, applies deletion
 * vectors, and streams live rows. Iterate it for batches, or call {@link TableScan.toArray}.
 *
 * ### Examples
 * ```ts
 * for await (const batch of table.scan({ where: 'id < 100', columns: ['id', 'name'] })) {
 *   for (const row of batch) console.log(row.id, row.name)
 * }
 * ```
 */
export class TableScan implements AsyncIterable<Row[]> {
  readonly #engine: Engine
  readonly #loadSnapshot: () => Promise<Snapshot>
  #snapshot: Promise<Snapshot> | undefined
  readonly #options: ScanOptions
  readonly #onFilesRead: ((files: readonly AddFile[], predicate: Expression | undefined) => void) | undefined

  /**
   * @param engine - the table's engine
   * @param snapshot - the snapshot to read, or a function loading it on first use (so a scan
   *   that is never run never loads, and never leaves a rejected promise unobserved)
   * @param options - predicate, columns, batch size
   * @param onFilesRead - told which files the scan read, after pruning (transactions record it)
   */
  constructor(
    engine: Engine,
    snapshot: Snapshot | (() => Promise<Snapshot>),
    options: ScanOptions = {},
    onFilesRead?: (files: readonly AddFile[], predicate: Expression | undefined) => void,
  ) {
    this.#engine = engine
    this.#loadSnapshot = typeof snapshot === 'function' ? snapshot : () => Promise.resolve(snapshot)
    this.#options = options
    this.#onFilesRead = onFilesRead
  }

  #snap(): Promise<Snapshot> {
    this.#snapshot ??= this.#loadSnapshot()
    return this.#snapshot
  }

  /** The files the scan will read and how many were pruned, without reading data. */
  async plan(): Promise<PruneResult & { predicate: Expression | undefined }> {
    const snap = await this.#snap()
    const predicate = parseWhere(this.#options.where)
    return { ...pruneFiles(snap, snap.activeFiles(), predicate), predicate }
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Row[]> {
    if (this.#options.jsonSafe !== true) {
      yield* this.#rows()
      return
    }
    for await (const batch of this.#rows()) yield batch.map(toJSONRow)
  }

  /**
   * The scan's batches: arrays of row objects (as iterating the scan gives them), or with
   * `{ format: 'arrow' }` Arrow record batches, typed as delta-rs types them (`long` -> Int64,
   * `timestamp` -> Timestamp(us, UTC), `date` -> Date32, `decimal` -> Decimal128, ...) and all of
   * one schema.
   *
   * ### Examples
   * ```ts
   * for await (const batch of table.scan({ columns: ['id', 'name'] }).batches({ format: 'arrow' })) {
   *   console.log(batch.numRows, batch.getChild('id')?.get(0))
   * }
   * ```
   *
   * @throws {InvalidArgumentError} for an unknown format or option
   */
  batches(options: { readonly format: 'arrow' }): AsyncIterable<RecordBatch>
  batches(options?: { readonly format?: 'rows' | undefined }): AsyncIterable<Row[]>
  batches(options: BatchesOptions = {}): AsyncIterable<Row[]> | AsyncIterable<RecordBatch> {
    checkBatchesOptions(options)
    if (options.format === 'arrow') return { [Symbol.asyncIterator]: () => this.#arrowBatches() }
    return { [Symbol.asyncIterator]: () => this[Symbol.asyncIterator]() }
  }

  /**
   * Every matching live row in one Arrow `Table` (see {@link TableScan.batches} for the types).
   * A scan that matches no row gives an empty table with the columns' schema.
   */
  async toArrow(): Promise<Table> {
    const { Table } = await import('apache-arrow')
    const { arrowSchemaOf } = await import('../arrow/arrow-schema.js')
    const schema = arrowSchemaOf(this.#fields(await this.#snap()))
    const batches: RecordBatch[] = []
    for await (const batch of this.#arrowBatches()) batches.push(batch)
    return batches.length === 0 ? new Table(schema) : new Table(batches)
  }

  async *#arrowBatches(): AsyncGenerator<RecordBatch> {
    // Loaded on first use: importing Arrow costs every process about 0.2 s at start.
    const { arrowSchemaOf } = await import('../arrow/arrow-schema.js')
    const fields = this.#fields(await this.#snap())
    const schema = arrowSchemaOf(fields)
    const data = this.#engine.data
    if (data.scanColumns !== undefined) {
      // Columns straight into Arrow buffers: no row object is built.
      const { columnBatchToRecordBatch } = await import('../arrow/columns-to-arrow.js')
      try {
        const request = await this.#scanRequest()
        for await (const batch of data.scanColumns(request))
          yield columnBatchToRecordBatch(batch, fields, schema)
      } catch (err) {
        throw await this.#explained(err)
      }
      return
    }
    const { rowsToRecordBatch } = await import('../arrow/rows-to-arrow.js')
    for await (const rows of this.#rows()) yield rowsToRecordBatch(rows, fields, schema)
  }

  /** The table fields the scan returns, in order. */
  #fields(snap: Snapshot): StructField[] {
    const names = this.#options.columns
    const tracked = this.#rowTracking(snap) === undefined ? [] : ROW_TRACKING_FIELDS
    if (names === undefined) return [...snap.schema.fields, ...tracked]
    // columnSpecs reports an unknown name; every name left is a field.
    columnSpecs(snap, names)
    return [...names.map((n) => fieldByName(snap.schema, n) as StructField), ...tracked]
  }

  #rowTracking(snap: Snapshot): RowTrackingColumns | undefined {
    return scanRowTracking(snap, this.#options.withRowTracking, columnSpecs(snap, undefined))
  }

  async *#rows(): AsyncGenerator<Row[]> {
    try {
      yield* this.#engine.data.scan(await this.#scanRequest())
    } catch (err) {
      throw await this.#explained(err)
    }
  }

  /** A missing file of the scanned version, explained by the VACUUM that deleted it. */
  async #explained(err: unknown): Promise<unknown> {
    const path = missingFileOf(err)
    if (path === undefined) return err
    return vacuumedFileError(this.#engine, await this.#snap(), path, err)
  }

  /** The data plane request of the scan: its files (pruned, DVs loaded), columns and predicate. */
  async #scanRequest(): Promise<ScanRequest> {
    const snap = await this.#snap()
    const rowTracking = this.#rowTracking(snap)
    const { files, predicate } = await this.plan()
    if (rowTracking !== undefined) checkFilesTrackRows(files)
    this.#onFilesRead?.(files, predicate)
    const columns = columnSpecs(snap, this.#options.columns)
    const refs = await dataFileRefs(this.#engine, files, this.#options.signal)
    return {
      files: refs,
      columns,
      rowTracking,
      predicateColumns: predicate ? columnSpecs(snap, undefined) : undefined,
      predicate,
      batchSize: this.#options.batchSize,
      signal: this.#options.signal,
    }
  }

  /** Every matching live row, in one array. */
  async toArray(): Promise<Row[]> {
    const out: Row[] = []
    for await (const batch of this) for (const row of batch) out.push(row)
    return out
  }

  /**
   * The number of matching live rows as a bigint, the type Delta's counts have (`numRecords`
   * is a long), for callers that keep counts with versions.
   */
  async countBigInt(): Promise<bigint> {
    return BigInt(await this.count())
  }

  /**
   * The number of matching live rows, counted without moving rows into JavaScript. A number, as
   * Arrow's `Table.numRows` and JavaScript array lengths are: a count cannot reach 2^53 rows in
   * one process. {@link TableScan.countBigInt} gives it as a bigint.
   */
  async count(): Promise<number> {
    try {
      return await this.#count()
    } catch (err) {
      throw await this.#explained(err)
    }
  }

  async #count(): Promise<number> {
    const snap = await this.#snap()
    this.#rowTracking(snap)
    const { files, predicate } = await this.plan()
    this.#onFilesRead?.(files, predicate)
    if (predicate === undefined) {
      // numRecords counts every physical row and the DV cardinality the deleted ones, both
      // exactly (protocol), so a plain count needs no data, once each DV is known to name only
      // rows of its file: a DV deleting positions past the end would make this count disagree
      // with the rows a scan returns.
      const fromLog = countFromLog(files)
      if (fromLog !== undefined) {
        await checkDeletionVectors(this.#engine, files, this.#options.signal)
        return fromLog
      }
    }
    const refs = await dataFileRefs(this.#engine, files, this.#options.signal)
    return this.#engine.data.count({
      files: refs,
      columns: [],
      predicateColumns: predicate ? columnSpecs(snap, undefined) : undefined,
      predicate,
      signal: this.#options.signal,
    })
  }
}

function countFromLog(files: readonly AddFile[]): number | undefined {
  let total = 0
  for (const f of files) {
    const n = parseStats(f.stats)?.numRecords
    if (n === undefined) return undefined
    if (f.deletionVector !== undefined) checkDvCardinalityFitsFile(f.deletionVector, n, f.path)
    total += Number(n) - Number(f.deletionVector?.cardinality ?? 0n)
  }
  return total
}

/** Loads every DV of `files` only to check it against its file (see `loadFileDeletionVector`). */
async function checkDeletionVectors(
  engine: Engine,
  files: readonly AddFile[],
  signal: AbortSignal | undefined,
): Promise<void> {
  let checked = checkedDvs.get(engine)
  if (checked === undefined || checked.size > CHECKED_DV_LIMIT) {
    checked = new Set()
    checkedDvs.set(engine, checked)
  }
  const seen = checked
  const toCheck = files.filter((f) => f.deletionVector !== undefined && !seen.has(checkedDvKey(f)))
  await mapLimit(toCheck, DV_READ_CONCURRENCY, async (f) => {
    ;(await loadFileDeletionVector(engine, f, signal))?.dispose()
    seen.add(checkedDvKey(f))
  })
}

/**
 * The (file, DV, row count) triples whose DV was loaded and found to fit its file, per engine. A
 * DV's content never changes under its descriptor (on-disk DVs are named by a UUID and addressed
 * by offset and size, inline ones carry their bytes), so a plain count at every version of a long
 * log loads each DV once instead of once per version.
 */
const checkedDvs = new WeakMap<Engine, Set<string>>()
/** Past this many entries the set starts afresh: a bound on memory, not on correctness. */
const CHECKED_DV_LIMIT = 200_000

function checkedDvKey(f: AddFile): string {
  const dv = f.deletionVector
  return `${f.path}\u0000${dv === undefined ? '' : dvUniqueId(dv)}\u0000${parseStats(f.stats)?.numRecords ?? ''}`
}

const BATCHES_KEYS = { format: true } as const satisfies Record<keyof BatchesOptions, true>

/**
 * Options of `scan().batches`: `format`.
 *
 * @throws {InvalidArgumentError} naming the option
 */
function checkBatchesOptions(value: unknown): void {
  const o = optionsObject(value, 'options')
  checkKnownKeys(o, 'options', BATCHES_KEYS, 'batches')
  optOneOf(o, 'format', 'options', ['rows', 'arrow'])
}
