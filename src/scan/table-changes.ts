/**
 * Reading the change data feed (protocol: Reader Requirements for AddCDCFile): the row-level
 * changes of a range of versions, each row with `_change_type`, `_commit_version` and
 * `_commit_timestamp`.
 */
import type { RecordBatch, Table } from 'apache-arrow'
import { initDeletionVectors, RoaringBitmapArray } from '../dv/index.js'
import type { ColumnSpec, DataFileRef } from '../engine/data-plane.js'
import { CHANGE_TYPE_COLUMN, type ChangeType } from '../engine/data-writer.js'
import type { Engine } from '../engine/engine.js'
import {
  checkKnownKeys,
  optBoolean,
  optionsObject,
  optNumber,
  optOneOf,
  optSignal,
} from '../errors/argument-checks.js'
import {
  ChangeDataFileNotFoundError,
  ChangeDataRangeError,
  FileNotFoundError,
  InvalidArgumentError,
  InvalidTableError,
  MissingChangeDataError,
  VersionNotFoundError,
} from '../errors/index.js'
import { dvUniqueId } from '../log/replay.js'
import type { Action, AddFile, CommitInfo, RemoveFile, Version } from '../protocol/actions.js'
import { decodeAddPath } from '../protocol/partition-values.js'
import type { StructField } from '../protocol/schema.js'
import { parseStats } from '../protocol/stats.js'
import { changeDataFeedEnabled } from '../protocol/table-properties.js'
import { historyTimeline } from '../snapshot/commit-timestamps.js'
import { listLogFrom, readCommit } from '../snapshot/log-reader.js'
import type { Snapshot } from '../snapshot/snapshot.js'
import { columnSpecs } from './column-specs.js'
import { fileRefWithDeletions } from './data-file-refs.js'
import { toJSONRow } from './json-row.js'
import { loadFileDeletionVector } from './load-deletion-vector.js'
import type { BatchesOptions, Row } from './table-scan.js'

/** The column holding each change row's commit version (bigint). */
export const COMMIT_VERSION_COLUMN = '_commit_version'
/** The column holding each change row's commit time, as timestamps are returned by scans. */
export const COMMIT_TIMESTAMP_COLUMN = '_commit_timestamp'

/** Which versions {@link TableChanges} reads: a start (version or time), and an optional end. */
export interface ChangesOptions {
  /** The first version read. */
  readonly startingVersion?: Version | number | undefined
  /** The last version read (default: the latest). */
  readonly endingVersion?: Version | number | undefined
  /** Read from the first commit made at or after this time (ISO text, `Date` or ms). */
  readonly startingTimestamp?: string | Date | number | undefined
  /** Read up to the last commit made at or before this time. */
  readonly endingTimestamp?: string | Date | number | undefined
  /** Rows per yielded batch (a hint). */
  readonly batchSize?: number | undefined
  /** Rows as `toJSONRow` makes them (see `ScanOptions.jsonSafe`). */
  readonly jsonSafe?: boolean | undefined
  readonly signal?: AbortSignal | undefined
}

/** The versions of a change data read, with their commit times. */
interface PlannedVersion {
  readonly version: Version
  readonly timestamp: number
  readonly actions: readonly Action[]
}

interface Plan {
  /** The snapshot at the end of the range: its schema shapes every row. */
  readonly end: Snapshot
  readonly versions: readonly PlannedVersion[]
}

/** The extra columns of a change row, in order. */
const CHANGE_FIELDS: readonly StructField[] = Object.freeze([
  Object.freeze({ name: CHANGE_TYPE_COLUMN, type: 'string', nullable: false, metadata: Object.freeze({}) }),
  Object.freeze({ name: COMMIT_VERSION_COLUMN, type: 'long', nullable: false, metadata: Object.freeze({}) }),
  Object.freeze({
    name: COMMIT_TIMESTAMP_COLUMN,
    type: 'timestamp',
    nullable: false,
    metadata: Object.freeze({}),
  }),
])

/**
 * The change data of a range of versions, read lazily like a scan: iterate it for batches of
 * rows, or call {@link TableChanges.toArray} or {@link TableChanges.toArrow}. Each row holds the
 * table's columns (as of the range's last version) and `_change_type` (`insert`, `delete`,
 * `update_preimage`, `update_postimage`), `_commit_version` (bigint) and `_commit_timestamp`
 * (a timestamp, as scans return them: `'YYYY-MM-DDTHH:MM:SS.ffffffZ'`). Rows come version by
 * version, ascending.
 *
 * A version with `cdc` actions is read from its change data files alone; another one gives its
 * added rows (`dataChange` adds) as inserts and its removed rows as deletes, and a file it
 * removed and re-added with a different deletion vector gives only the rows that vector change
 * newly hides (deletes) or shows again (inserts). Files rearranged without a data change
 * (OPTIMIZE) give nothing.
 */
export class TableChanges implements AsyncIterable<Row[]> {
  readonly #engine: Engine
  readonly #snapshot: (version?: Version) => Promise<Snapshot>
  readonly #options: ChangesOptions
  #plan: Promise<Plan> | undefined

  /**
   * @param engine - the table's engine
   * @param snapshot - loads the latest snapshot (no argument) or the one at a version
   * @param options - the range and the output form
   * @throws {InvalidArgumentError} for a missing start, a version and a timestamp for the same
   *   bound, or a malformed bound
   */
  constructor(engine: Engine, snapshot: (version?: Version) => Promise<Snapshot>, options: ChangesOptions) {
    checkChangesOptions(options)
    this.#engine = engine
    this.#snapshot = snapshot
    this.#options = options
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Row[]> {
    const jsonSafe = this.#options.jsonSafe === true
    for await (const batch of this.#rows()) yield jsonSafe ? batch.map(toJSONRow) : batch
  }

  /**
   * The batches: arrays of rows, or with `{ format: 'arrow' }` Arrow record batches (the change
   * columns as Utf8, Int64 and Timestamp(us, UTC)).
   */
  batches(options: { readonly format: 'arrow' }): AsyncIterable<RecordBatch>
  batches(options?: { readonly format?: 'rows' | undefined }): AsyncIterable<Row[]>
  batches(options: BatchesOptions = {}): AsyncIterable<Row[]> | AsyncIterable<RecordBatch> {
    const o = optionsObject(options, 'options')
    checkKnownKeys(o, 'options', { format: true }, 'batches')
    optOneOf(o, 'format', 'options', ['rows', 'arrow'])
    if (options.format === 'arrow') return { [Symbol.asyncIterator]: () => this.#arrowBatches() }
    return { [Symbol.asyncIterator]: () => this[Symbol.asyncIterator]() }
  }

  /** Every change row in one array. */
  async toArray(): Promise<Row[]> {
    const out: Row[] = []
    for await (const batch of this) for (const row of batch) out.push(row)
    return out
  }

  /** Every change row in one Arrow `Table` (an empty one with the schema when there is none). */
  async toArrow(): Promise<Table> {
    const { Table } = await import('apache-arrow')
    const { arrowSchemaOf } = await import('../arrow/arrow-schema.js')
    const schema = arrowSchemaOf(this.#fields((await this.#planned()).end))
    const batches: RecordBatch[] = []
    for await (const batch of this.#arrowBatches()) batches.push(batch)
    return batches.length === 0 ? new Table(schema) : new Table(batches)
  }

  /** The versions read and the snapshot at the last one, without reading any row. */
  async versions(): Promise<{ version: Version; timestamp: number }[]> {
    return (await this.#planned()).versions.map((v) => ({ version: v.version, timestamp: v.timestamp }))
  }

  async *#arrowBatches(): AsyncGenerator<RecordBatch> {
    const { arrowSchemaOf } = await import('../arrow/arrow-schema.js')
    const { rowsToRecordBatch } = await import('../arrow/rows-to-arrow.js')
    const fields = this.#fields((await this.#planned()).end)
    const schema = arrowSchemaOf(fields)
    for await (const rows of this.#rows()) yield rowsToRecordBatch(rows, fields, schema)
  }

  #fields(end: Snapshot): StructField[] {
    return [...end.schema.fields, ...CHANGE_FIELDS]
  }

  #planned(): Promise<Plan> {
    this.#plan ??= this.#makePlan()
    return this.#plan
  }

  async #makePlan(): Promise<Plan> {
    const o = this.#options
    const signal = o.signal
    const latest = await this.#snapshot()
    const listing = await listLogFrom(this.#engine, undefined, signal)
    const timeline = historyTimeline(listing, latest)
    const commits = timeline.commits
    // Commit times need each commit's commitInfo (In-Commit Timestamps): read once, kept.
    const actionsOf = new Map<Version, readonly Action[]>()
    const read = async (version: Version): Promise<readonly Action[]> => {
      let actions = actionsOf.get(version)
      if (actions === undefined) {
        actions = await readCommit(this.#engine, version, signal)
        if (actions === undefined)
          throw new VersionNotFoundError(`version ${version} (its commit file is gone)`)
        actionsOf.set(version, actions)
      }
      return actions
    }
    const timeOf = async (c: (typeof commits)[number]): Promise<number> =>
      timeline.timestampOf(c, commitInfoOf(await read(c.version)))

    let start: Version
    if (o.startingVersion !== undefined) start = BigInt(o.startingVersion)
    else {
      const from = toMillis(o.startingTimestamp, 'startingTimestamp')
      let found: Version | undefined
      for (const c of commits) {
        if ((await timeOf(c)) >= from) {
          found = c.version
          break
        }
      }
      if (found === undefined) {
        throw new ChangeDataRangeError(
          `No commit was made at or after ${new Date(from).toISOString()}: the latest version is ${latest.version}`,
          'Pass an earlier startingTimestamp (`delta-rlc history` lists the commit times).',
        )
      }
      start = found
    }
    let end: Version = latest.version
    if (o.endingVersion !== undefined) end = BigInt(o.endingVersion)
    else if (o.endingTimestamp !== undefined) {
      const to = toMillis(o.endingTimestamp, 'endingTimestamp')
      let found: Version | undefined
      for (const c of commits) {
        if ((await timeOf(c)) <= to) found = c.version
        else break
      }
      if (found === undefined) {
        throw new ChangeDataRangeError(
          `No commit was made at or before ${new Date(to).toISOString()}`,
          'Pass a later endingTimestamp (`delta-rlc history` lists the commit times).',
        )
      }
      end = found
    }
    if (start > latest.version || end > latest.version) {
      throw new ChangeDataRangeError(
        `Cannot read change data for versions ${start} to ${end}: the latest version of the table is ${latest.version}`,
        'Read a range that ends at or before the latest version, or leave the end out to read up to it.',
      )
    }
    if (end < start) {
      throw new ChangeDataRangeError(
        `Cannot read change data for versions ${start} to ${end}: the end is before the start`,
        'Pass an end at or after the start.',
      )
    }
    const first = commits[0]?.version
    if (first === undefined || start < first) {
      throw new VersionNotFoundError(`version ${start} (change data from the log)`, first, latest.version)
    }
    // Delta's rule: change data must be on at the start, and no version of the range turns it off.
    const startSnap = await this.#snapshot(start)
    if (!changeDataFeedEnabled(startSnap.metadata.configuration))
      throw new MissingChangeDataError(start, end, start)
    const versions: PlannedVersion[] = []
    for (const c of commits) {
      if (c.version < start) continue
      if (c.version > end) break
      signal?.throwIfAborted()
      const actions = await read(c.version)
      for (const a of actions) {
        if ('metaData' in a && !changeDataFeedEnabled(a.metaData.configuration)) {
          throw new MissingChangeDataError(start, end, c.version)
        }
      }
      versions.push({ version: c.version, timestamp: await timeOf(c), actions })
    }
    const endSnap = end === latest.version ? latest : await this.#snapshot(end)
    return { end: endSnap, versions }
  }

  async *#rows(): AsyncGenerator<Row[]> {
    const plan = await this.#planned()
    const columns = columnSpecs(plan.end, undefined)
    for (const v of plan.versions) {
      try {
        yield* this.#versionRows(v, columns)
      } catch (err) {
        if (err instanceof FileNotFoundError) throw new ChangeDataFileNotFoundError(v.version, { cause: err })
        throw err
      }
    }
  }

  async *#versionRows(v: PlannedVersion, columns: readonly ColumnSpec[]): AsyncGenerator<Row[]> {
    const extra = {
      [COMMIT_VERSION_COLUMN]: v.version,
      [COMMIT_TIMESTAMP_COLUMN]: timestampText(v.timestamp),
    }
    const cdc = v.actions.flatMap((a) => ('cdc' in a ? [a.cdc] : []))
    if (cdc.length > 0) {
      const typeColumn: ColumnSpec = {
        name: CHANGE_TYPE_COLUMN,
        type: 'string',
        physicalName: CHANGE_TYPE_COLUMN,
        isPartition: false,
      }
      const files: DataFileRef[] = cdc.map((c) => ({
        key: storeKey(c.path),
        partitionValues: c.partitionValues,
      }))
      yield* this.#scan(files, [...columns, typeColumn], extra, undefined)
      return
    }
    // No change data files: dataChange adds are inserts, removes deletes, except a file removed
    // and added again in the same commit, whose changes are the difference of its deletion vectors.
    const adds = new Map<string, AddFile>()
    const removes = new Map<string, RemoveFile>()
    for (const a of v.actions) {
      if ('add' in a && a.add.dataChange) adds.set(a.add.path, a.add)
      else if ('remove' in a && a.remove.dataChange) removes.set(a.remove.path, a.remove)
    }
    const inserted: DataFileRef[] = []
    const deleted: DataFileRef[] = []
    for (const [path, add] of adds) {
      const removed = removes.get(path)
      if (removed === undefined) {
        inserted.push(await this.#ref(add))
        continue
      }
      removes.delete(path)
      const diff = await this.#deletionVectorChange(removed, add)
      if (diff.deleted !== undefined) deleted.push(diff.deleted)
      if (diff.inserted !== undefined) inserted.push(diff.inserted)
    }
    for (const removed of removes.values()) deleted.push(await this.#ref(removed))
    yield* this.#scan(deleted, columns, extra, 'delete')
    yield* this.#scan(inserted, columns, extra, 'insert')
  }

  async *#scan(
    files: readonly DataFileRef[],
    columns: readonly ColumnSpec[],
    extra: Readonly<Record<string, unknown>>,
    changeType: ChangeType | undefined,
  ): AsyncGenerator<Row[]> {
    if (files.length === 0) return
    const stream = this.#engine.data.scan({
      files,
      columns,
      batchSize: this.#options.batchSize,
      signal: this.#options.signal,
    })
    for await (const batch of stream) {
      for (const row of batch) {
        if (changeType !== undefined) row[CHANGE_TYPE_COLUMN] = changeType
        Object.assign(row, extra)
      }
      yield batch
    }
  }

  /** A file with the rows its deletion vector hides left out. */
  async #ref(file: AddFile | RemoveFile): Promise<DataFileRef> {
    const dv = await loadFileDeletionVector(this.#engine, file, this.#options.signal)
    return fileRefWithDeletions({ key: storeKey(file.path), partitionValues: file.partitionValues ?? {} }, dv)
  }

  /**
   * The rows a new deletion vector on a file newly hides (deleted) and newly shows (inserted), as
   * reads of the file that leave every other row out.
   */
  async #deletionVectorChange(
    removed: RemoveFile,
    added: AddFile,
  ): Promise<{ deleted?: DataFileRef; inserted?: DataFileRef }> {
    const same =
      removed.deletionVector !== undefined &&
      added.deletionVector !== undefined &&
      dvUniqueId(removed.deletionVector) === dvUniqueId(added.deletionVector)
    if (same || (removed.deletionVector === undefined && added.deletionVector === undefined)) return {}
    const rows = parseStats(added.stats)?.numRecords ?? parseStats(removed.stats)?.numRecords
    if (rows === undefined) {
      throw new InvalidTableError(
        'malformed-action',
        `Cannot read the change data of ${added.path}: its deletion vector changed and the log gives no row count`,
        { path: added.path, hint: 'The add action needs stats with numRecords.' },
      )
    }
    if (rows > MAX_CHANGED_FILE_ROWS) {
      throw new InvalidTableError(
        'malformed-action',
        `Cannot read the change data of ${added.path}: its stats claim ${rows} rows, more than a data file holds`,
        {
          path: added.path,
          hint: 'The stats of the add action are wrong; restore the commit that wrote them.',
        },
      )
    }
    const signal = this.#options.signal
    await initDeletionVectors()
    // Sets throughout: a deletion vector may hold a billion positions in a few hundred KB.
    const before = (await loadFileDeletionVector(this.#engine, removed, signal)) ?? RoaringBitmapArray.empty()
    const after = (await loadFileDeletionVector(this.#engine, added, signal)) ?? RoaringBitmapArray.empty()
    const all = RoaringBitmapArray.fromRange(0, rows)
    const base = { key: storeKey(added.path), partitionValues: added.partitionValues }
    // Every row but the wanted ones is hidden.
    const keep = (wanted: RoaringBitmapArray): DataFileRef | undefined =>
      wanted.isEmpty ? undefined : fileRefWithDeletions(base, all.difference(wanted))
    const deleted = keep(after.difference(before))
    const inserted = keep(before.difference(after))
    return { ...(deleted === undefined ? {} : { deleted }), ...(inserted === undefined ? {} : { inserted }) }
  }
}

/**
 * The most rows a file's stats may claim for its change data to be read: the hidden rows are a
 * set over the claimed range, with one bucket per 2^32 positions.
 */
const MAX_CHANGED_FILE_ROWS = 2n ** 40n

function commitInfoOf(actions: readonly Action[]): CommitInfo | undefined {
  for (const a of actions) if ('commitInfo' in a) return a.commitInfo
  return undefined
}

function storeKey(path: string): string {
  const decoded = decodeAddPath(path)
  if (decoded.kind === 'relative') return decoded.key
  throw new InvalidArgumentError(
    `File ${path} is an absolute URI; delta-rlc reads files inside the table root`,
    {
      argument: 'path',
    },
  )
}

/** A commit time as scans return timestamps: ISO 8601 with microseconds, UTC. */
function timestampText(ms: number): string {
  return new Date(ms).toISOString().replace('Z', '000Z')
}

function toMillis(value: string | Date | number | undefined, argument: string): number {
  const ms =
    value instanceof Date
      ? value.getTime()
      : typeof value === 'number'
        ? value
        : typeof value === 'string'
          ? Date.parse(value)
          : Number.NaN
  if (!Number.isFinite(ms)) {
    throw new InvalidArgumentError(`${argument} is not a valid time: ${String(value)}`, {
      argument,
      hint: "Pass an ISO 8601 text such as '2026-12-01T10:00:00Z', a Date, or milliseconds since the epoch.",
    })
  }
  return ms
}

const CHANGES_KEYS = {
  startingVersion: true,
  endingVersion: true,
  startingTimestamp: true,
  endingTimestamp: true,
  batchSize: true,
  jsonSafe: true,
  signal: true,
} as const satisfies Record<keyof ChangesOptions, true>

/**
 * Options of `changes`: a start (version or timestamp, not both), an optional end of either kind.
 *
 * @throws {InvalidArgumentError} naming the option
 */
function checkChangesOptions(value: unknown): void {
  const o = optionsObject(value, 'options')
  checkKnownKeys(o, 'options', CHANGES_KEYS, 'changes')
  const version = (key: 'startingVersion' | 'endingVersion'): void => {
    const v = o[key]
    if (v === undefined) return
    const ok =
      (typeof v === 'bigint' && v >= 0n) || (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0)
    if (!ok) {
      throw new InvalidArgumentError(`${key} must be a non-negative integer version, got ${String(v)}`, {
        argument: key,
      })
    }
  }
  version('startingVersion')
  version('endingVersion')
  optNumber(o, 'batchSize', 'options', { min: 1, integer: true })
  optBoolean(o, 'jsonSafe', 'options')
  optSignal(o, 'options')
  if (o.startingVersion === undefined && o.startingTimestamp === undefined) {
    throw new InvalidArgumentError('changes needs a start: startingVersion or startingTimestamp', {
      argument: 'startingVersion',
      hint: 'Pass e.g. { startingVersion: 0 } to read every change since the table was created.',
    })
  }
  if (o.startingVersion !== undefined && o.startingTimestamp !== undefined) {
    throw new InvalidArgumentError('Pass either startingVersion or startingTimestamp, not both', {
      argument: 'startingTimestamp',
    })
  }
  if (o.endingVersion !== undefined && o.endingTimestamp !== undefined) {
    throw new InvalidArgumentError('Pass either endingVersion or endingTimestamp, not both', {
      argument: 'endingTimestamp',
    })
  }
  if (o.startingTimestamp !== undefined) toMillis(o.startingTimestamp as never, 'startingTimestamp')
  if (o.endingTimestamp !== undefined) toMillis(o.endingTimestamp as never, 'endingTimestamp')
}
