import { randomUUID } from 'node:crypto'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import {
  type DuckDBDataChunk,
  type DuckDBStructType,
  type DuckDBType,
  DuckDBTypeId,
  type DuckDBVector,
} from '@duckdb/node-api'
import type {
  ActionRow,
  CheckpointWriteOptions,
  EngineCallOptions,
  ParquetHandler,
} from '../engine/engine.js'
import { InvalidTableError, isDeltaError, StorageError } from '../errors/index.js'
import { ACTION_KINDS } from '../protocol/actions.js'
import type { ObjectStore } from '../storage/object-store.js'
import { appendAll } from '../util/arrays.js'
import { decodeTypedAdd, type MapTextCache, planTypedAdds, typedAddVectors } from './checkpoint-typed-rows.js'
import { dataPlaneError, dataPlaneFailureKind } from './duckdb-errors.js'
import { type DuckDbRuntime, openStream, sqlIdent, sqlString } from './duckdb-runtime.js'
import { duckType } from './duckdb-types.js'
import { scratchEntryName } from './scratch-dir.js'
import { type StagedFile, stageAllForRead } from './staging.js'

// === Checkpoint schema ===
// The classic (V1) checkpoint layout Spark writes, so that Spark, delta-rs and kernel readers
// find every column where they look for it. Statistics travel as the JSON string `add.stats`,
// the typed struct `add.stats_parsed`, or both, as the table's properties ask; the add struct is
// therefore built per checkpoint (see addColumnType).

const DV =
  'STRUCT(storageType VARCHAR, pathOrInlineDv VARCHAR, "offset" INTEGER, sizeInBytes INTEGER, cardinality BIGINT, maxRowIndex BIGINT)'
const STRING_MAP = 'MAP(VARCHAR, VARCHAR)'

/**
 * Column name -> DuckDB type of each action column, in Spark's column order; `add` depends on
 * the statistics format.
 */
function checkpointColumns(
  opts: CheckpointWriteOptions | undefined,
): ReadonlyArray<readonly [string, string]> {
  return [
    ['txn', 'STRUCT(appId VARCHAR, "version" BIGINT, lastUpdated BIGINT)'],
    ['add', addColumnType(opts)],
    ...OTHER_COLUMNS,
    ...(opts?.checkpointMetadata === true
      ? [['checkpointMetadata', `STRUCT("version" BIGINT, tags ${STRING_MAP})`] as const]
      : []),
  ]
}

const OTHER_COLUMNS: ReadonlyArray<readonly [string, string]> = [
  [
    'remove',
    `STRUCT(path VARCHAR, deletionTimestamp BIGINT, dataChange BOOLEAN, extendedFileMetadata BOOLEAN, partitionValues ${STRING_MAP}, size BIGINT, deletionVector ${DV}, baseRowId BIGINT, defaultRowCommitVersion BIGINT)`,
  ],
  [
    'metaData',
    `STRUCT(id VARCHAR, "name" VARCHAR, description VARCHAR, format STRUCT(provider VARCHAR, "options" ${STRING_MAP}), schemaString VARCHAR, partitionColumns VARCHAR[], "configuration" ${STRING_MAP}, createdTime BIGINT)`,
  ],
  [
    'protocol',
    'STRUCT(minReaderVersion INTEGER, minWriterVersion INTEGER, readerFeatures VARCHAR[], writerFeatures VARCHAR[])',
  ],
  ['domainMetadata', 'STRUCT("domain" VARCHAR, "configuration" VARCHAR, removed BOOLEAN)'],
]

/** The fields of `add` every checkpoint has, before the statistics columns. */
const ADD_FIELDS = `path VARCHAR, partitionValues ${STRING_MAP}, size BIGINT, modificationTime BIGINT, dataChange BOOLEAN, tags ${STRING_MAP}, deletionVector ${DV}, baseRowId BIGINT, defaultRowCommitVersion BIGINT, clusteringProvider VARCHAR`

/** The DuckDB type of the `add` column for the statistics format `opts` asks for. */
function addColumnType(opts: CheckpointWriteOptions | undefined): string {
  let fields = ADD_FIELDS
  if (opts?.statsAsJson !== false) fields += ', stats VARCHAR'
  if (opts?.partitionValuesParsedType)
    fields += `, partitionValues_parsed ${duckType(opts.partitionValuesParsedType)}`
  if (opts?.statsParsedType) fields += `, stats_parsed ${duckType(opts.statsParsedType)}`
  return `STRUCT(${fields})`
}

/** The typed copies of statistics and partition values an `add` may carry. */
const PARSED_ADD_FIELDS: ReadonlySet<string> = new Set(['stats_parsed', 'partitionValues_parsed'])

/**
 * The type to cast a checkpoint's `add` column to before it becomes JSON, or `undefined` when it
 * has no parsed struct. Inside the parsed structs every primitive becomes text: JSON numbers would
 * round decimals past 15 digits and DuckDB writes NaN and infinities as bare words, which are not
 * JSON. The reader types each value again from the table schema.
 */
function addReadType(type: DuckDBType): string | undefined {
  if (type.typeId !== DuckDBTypeId.STRUCT) return undefined
  const struct = type as DuckDBStructType
  if (!struct.entryNames.some((n) => PARSED_ADD_FIELDS.has(n))) return undefined
  const fields = struct.entryNames.map((name, i) => {
    const t = struct.entryTypes[i] as DuckDBType
    return `${sqlIdent(name)} ${PARSED_ADD_FIELDS.has(name) ? textLeaves(t) : t.toString()}`
  })
  return `STRUCT(${fields.join(', ')})`
}

function textLeaves(type: DuckDBType): string {
  switch (type.typeId) {
    case DuckDBTypeId.STRUCT: {
      const struct = type as DuckDBStructType
      const fields = struct.entryNames.map(
        (name, i) => `${sqlIdent(name)} ${textLeaves(struct.entryTypes[i] as DuckDBType)}`,
      )
      return `STRUCT(${fields.join(', ')})`
    }
    case DuckDBTypeId.LIST:
    case DuckDBTypeId.ARRAY:
    case DuckDBTypeId.MAP:
    case DuckDBTypeId.UNION:
      return type.toString()
    default:
      return 'VARCHAR'
  }
}

/**
 * Action columns a reader looks for, V2 ones included: every action kind in checkpoint column
 * order, but the two a checkpoint never holds (commit information and change data files).
 */
const ACTION_COLUMNS: readonly string[] = ACTION_KINDS.filter((k) => k !== 'commitInfo' && k !== 'cdc')

/**
 * The default {@link ParquetHandler}: DuckDB reads and writes the log's Parquet files.
 */
export class DuckDbParquetHandler implements ParquetHandler {
  readonly #store: ObjectStore
  readonly #duck: DuckDbRuntime
  readonly #scratchDir: string

  constructor(store: ObjectStore, duck: DuckDbRuntime, scratchDir: string) {
    this.#store = store
    this.#duck = duck
    this.#scratchDir = scratchDir
  }

  async readActionRows(keys: readonly string[], opts?: EngineCallOptions): Promise<readonly string[]> {
    const out: string[] = []
    await this.#readRows(keys, (rows) => appendAll(out, rows as readonly string[]), opts, false)
    return out
  }

  readActionRowBatches(
    keys: readonly string[],
    onBatch: (rows: readonly ActionRow[]) => void,
    opts?: EngineCallOptions,
  ): Promise<void> {
    return this.#readRows(keys, onBatch, opts, true)
  }

  /**
   * Streams the rows of `keys` to `onBatch`, one batch per DuckDB chunk; with `typedAdds`,
   * `add` rows whose fields have their protocol types come decoded (see checkpoint-typed-rows).
   */
  async #readRows(
    keys: readonly string[],
    onBatch: (rows: readonly ActionRow[]) => void,
    opts: EngineCallOptions | undefined,
    typedAdds: boolean,
  ): Promise<void> {
    if (keys.length === 0) return
    const staged: StagedFile[] = []
    // What the consumer throws is its own (a malformed action, an abort): it passes through as is.
    let consumerError: { readonly error: unknown } | undefined
    try {
      await stageAllForRead(this.#store, keys, this.#scratchDir, opts?.signal, staged)
      const list = `[${staged.map((s) => sqlString(s.path)).join(', ')}]`
      await this.#duck.withConnection(async (con) => {
        const source = `read_parquet(${list}, union_by_name = true)`
        // One query for every column's name and type.
        const head = await con.run(`SELECT * FROM ${source} LIMIT 0`)
        const names = head.columnNames()
        const present = ACTION_COLUMNS.filter((c) => names.includes(c))
        if (present.length === 0) return
        // Timestamps in the parsed structs become text in UTC, whatever the process's zone.
        await con.run(`SET TimeZone = 'UTC'`)
        const addIndex = names.indexOf('add')
        const addType = addIndex < 0 ? undefined : head.columnType(addIndex)
        const addCast = addType === undefined ? undefined : addReadType(addType)
        const json = (c: string): string =>
          c === 'add' && addCast !== undefined
            ? `to_json(CAST("add" AS ${addCast}))`
            : `to_json(${sqlIdent(c)})`
        // One commit-shaped JSON line per row: the first non-null action column wins (a valid
        // checkpoint row has exactly one). to_json writes BIGINTs as exact integers.
        let line = `coalesce(${present.map((c) => `'{"${c}":' || ${json(c)} || '}'`).join(', ')})`
        const plan =
          typedAdds && addType !== undefined
            ? planTypedAdds(addType, present.slice(0, present.indexOf('add')))
            : undefined
        if (plan !== undefined) line = `CASE WHEN ${plan.condition} THEN NULL ELSE ${line} END`
        const columns = plan === undefined ? '' : `, ${plan.columns.join(', ')}`
        // Streamed, not materialized: DuckDB holds one chunk of rows at a time, and each chunk is
        // handed over before the next one is read.
        const stream = await openStream(con, `SELECT ${line} AS line${columns} FROM ${source}`, {
          signal: opts?.signal,
          onFailure: (failure) =>
            failure.cause instanceof Error ? failure.cause : new Error(`IO Error: ${failure.detail}`),
        })
        const maps: MapTextCache = new Map()
        const chunks = stream.chunks()
        let next = chunks.next()
        try {
          for (;;) {
            const { done, value: chunk } = await next
            if (done) break
            // DuckDB reads the next chunk on its own thread while this one is decoded and parsed
            // here: a fetched chunk owns its memory, so the two never share a buffer.
            next = chunks.next()
            const rows = chunkRows(chunk, plan !== undefined, maps)
            try {
              onBatch(rows)
            } catch (error) {
              consumerError = { error }
              throw error
            }
          }
        } catch (err) {
          // The fetch under way must end before the connection serves another query.
          await next.catch(() => undefined)
          await chunks.return(undefined).catch(() => undefined)
          throw err
        }
      })
    } catch (err) {
      if (consumerError !== undefined && err === consumerError.error) throw err
      if (isDeltaError(err) || (err instanceof Error && err.name === 'AbortError')) throw err
      if (opts?.signal?.aborted && err === opts.signal.reason) throw err
      // A JavaScript error (a TypeError, a stack overflow) is a bug, not a damaged checkpoint.
      if (dataPlaneFailureKind(err) === 'internal') throw dataPlaneError(err, { what: 'checkpoint read' })
      throw new InvalidTableError(
        'invalid-checkpoint',
        `Cannot read checkpoint file(s) ${keys.join(', ')}: ${errorText(err)}`,
        {
          path: keys[0],
          cause: err,
          hint: 'The checkpoint is damaged; delete it (the JSON commits still hold the history) or restore it from a copy.',
        },
      )
    } finally {
      await Promise.all(staged.map((s) => s.release()))
    }
  }

  async writeActionRows(
    key: string,
    jsonLines: readonly string[],
    opts?: CheckpointWriteOptions,
  ): Promise<number> {
    await mkdir(this.#scratchDir, { recursive: true })
    const id = randomUUID()
    const jsonPath = join(this.#scratchDir, scratchEntryName(`${id}.checkpoint.json`))
    const parquetPath = join(this.#scratchDir, scratchEntryName(`${id}.checkpoint.parquet`))
    try {
      await writeFile(jsonPath, jsonLines.length === 0 ? '' : `${jsonLines.join('\n')}\n`)
      const columns = `{${checkpointColumns(opts)
        .map(([name, type]) => `${sqlString(name)}: ${sqlString(type)}`)
        .join(', ')}}`
      await this.#duck.withConnection(async (con) => {
        // Timestamp text without a zone (timestamp_ntz bounds) must not move with the process's zone.
        await con.run(`SET TimeZone = 'UTC'`)
        await con.run(
          `COPY (SELECT * FROM read_json(${sqlString(jsonPath)}, format = 'newline_delimited', columns = ${columns})) ` +
            `TO ${sqlString(parquetPath)} (FORMAT parquet, COMPRESSION snappy)`,
        )
      })
      const bytes = await readFile(parquetPath)
      opts?.signal?.throwIfAborted()
      await this.#store.put(key, bytes, { signal: opts?.signal })
      return bytes.byteLength
    } catch (err) {
      if (isDeltaError(err) || (err instanceof Error && err.name === 'AbortError')) throw err
      if (dataPlaneFailureKind(err) === 'internal')
        throw dataPlaneError(err, { what: `checkpoint write of ${key}` })
      throw new StorageError(`Cannot write checkpoint ${key}: ${errorText(err)}`, { path: key, cause: err })
    } finally {
      await rm(jsonPath, { force: true })
      await rm(parquetPath, { force: true })
    }
  }
}

/**
 * The rows of one result chunk: column 0 holds each row's JSON line, and with `typed` the
 * columns after it a typed add's fields (used where the line is null).
 */
function chunkRows(chunk: DuckDBDataChunk, typed: boolean, maps: MapTextCache): ActionRow[] {
  const lines = chunk.getColumnVector(0)
  const fields = typed ? typedAddVectors(chunk, 1) : undefined
  const rows: ActionRow[] = []
  // Read once: the getter is a native call.
  const count = chunk.rowCount
  for (let i = 0; i < count; i++) {
    const value = lines.getItem(i)
    if (typeof value === 'string') rows.push(value)
    // No line but the typed fields: a typed add (a row with no action at all has neither).
    else if (fields !== undefined && (fields[0] as DuckDBVector).getItem(i) !== null)
      rows.push(decodeTypedAdd(fields, i, maps))
  }
  return rows
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}
