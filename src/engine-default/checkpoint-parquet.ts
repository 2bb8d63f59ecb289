import { createHash, randomUUID } from 'node:crypto'
import { constants } from 'node:fs'
import { chmod, type FileHandle, open, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import {
  type DuckDBConnection,
  type DuckDBDataChunk,
  type DuckDBStructType,
  type DuckDBType,
  DuckDBTypeId,
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
import {
  type MapTextCache,
  planTypedAdds,
  planTypedRemoves,
  ROW_SEPARATOR_SQL,
  splitRows,
} from './checkpoint-typed-rows.js'
import { dataPlaneError, dataPlaneFailureKind } from './duckdb-errors.js'
import { type DuckDbRuntime, openStream, sqlFilePath, sqlIdent, sqlString } from './duckdb-runtime.js'
import { duckType } from './duckdb-types.js'
import { ensureScratchDir, scratchEntryName } from './scratch-dir.js'
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
 * Rows whose texts DuckDB joins into one string (see `ROW_SEPARATOR` in checkpoint-typed-rows):
 * each string fetched costs a native call and a buffer of its own, so a group costs about what
 * one row did. Groups this large usually make texts of more than 128 KiB, which V8 allocates
 * outside its young generation: the texts stay referenced (paths and statistics are slices of
 * them) and are then never copied by a scavenge.
 */
const ROWS_PER_TEXT = 2048

/**
 * Rows of one file read by one query: two of DuckDB's default row groups (122,880 rows each).
 */
const ROWS_PER_SLICE = 2 ** 18

/**
 * The longest group text fetched as one string, in UTF-8 bytes (a JavaScript string holds at
 * most 2^29 - 24 UTF-16 units); the rows of a longer group are fetched one by one.
 */
const MAX_TEXT_BYTES = 2 ** 28

/**
 * The most rows a checkpoint or sidecar file may hold per byte of its size. Every row of a real
 * checkpoint is a distinct action (a file's path appears once), so its rows cannot compress
 * without bound: the densest checkpoint measured, one to seven digit paths with no statistics
 * under zstd, holds 2.25 rows per byte, and Spark's and this library's snappy files at most 0.25.
 * A file of one action repeated compresses to hundreds of rows per byte (10^8 rows in 216 KB) and
 * would cost gigabytes to read: it is refused from its footer before any row is read. See
 * docs/troubleshooting.md, "Limits on hostile logs".
 */
export const MAX_CHECKPOINT_ROWS_PER_BYTE = 10

/**
 * Refuses a file whose footer claims more rows than {@link MAX_CHECKPOINT_ROWS_PER_BYTE} allows
 * for its size.
 *
 * @throws {InvalidTableError} `invalid-checkpoint`, naming the file, its rows and its size
 */
async function checkRowsFitBytes(
  con: DuckDBConnection,
  keys: readonly string[],
  staged: readonly StagedFile[],
): Promise<void> {
  const rows = (
    await con.runAndReadAll(
      `SELECT file_name, num_rows FROM parquet_file_metadata([${staged.map((s) => sqlString(s.path)).join(', ')}])`,
    )
  ).getRows()
  const byPath = new Map(rows.map(([name, count]) => [String(name), BigInt(count as bigint)]))
  for (let i = 0; i < staged.length; i++) {
    const path = (staged[i] as StagedFile).path
    const count = byPath.get(path)
    if (count === undefined) continue
    const bytes = (await stat(path)).size
    if (count <= BigInt(bytes) * BigInt(MAX_CHECKPOINT_ROWS_PER_BYTE)) continue
    const key = keys[i] ?? path
    throw new InvalidTableError(
      'invalid-checkpoint',
      `Checkpoint file ${key} claims ${count} rows in ${bytes} bytes: more than ${MAX_CHECKPOINT_ROWS_PER_BYTE} rows per byte, which no checkpoint of distinct actions reaches`,
      {
        path: key,
        hint: 'The checkpoint is damaged or hostile; delete it (the JSON commits still hold the history) or restore it from a copy.',
      },
    )
  }
}

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
   * Streams the rows of `keys` to `onBatch`, one batch per group of rows; with `typedAdds`,
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
      const list = `[${staged.map((s) => sqlFilePath(s.path)).join(', ')}]`
      await this.#duck.withConnection(async (con) => {
        await checkRowsFitBytes(con, keys, staged)
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
        const line = `coalesce(${present.map((c) => `'{"${c}":' || ${json(c)} || '}'`).join(', ')})`
        const removeIndex = names.indexOf('remove')
        const plans = typedAdds
          ? [
              addType === undefined
                ? undefined
                : planTypedAdds(addType, present.slice(0, present.indexOf('add'))),
              removeIndex < 0
                ? undefined
                : planTypedRemoves(head.columnType(removeIndex), present.slice(0, present.indexOf('remove'))),
            ].filter((p) => p !== undefined)
          : []
        // A row's text, optionally after its number (null for a row with no action at all).
        const rowText = (number?: string): string => {
          const json = number === undefined ? line : `${number} || ${line}`
          if (plans.length === 0) return json
          const typed = plans.map((p) => `WHEN ${p.condition} THEN ${p.text(number)}`).join(' ')
          return `CASE ${typed} ELSE ${json} END`
        }
        const text = rowText()
        const maps: MapTextCache = new Map()
        const deliver = (rows: ActionRow[]): void => {
          try {
            onBatch(rows)
          } catch (error) {
            consumerError = { error }
            throw error
          }
        }
        // A file column named like DuckDB's row position columns would hide them: the rows of
        // such a file are streamed one text each.
        if (names.includes('file_index') || names.includes('file_row_number')) {
          await forEachChunk(con, `SELECT ${text} AS t FROM ${source}`, opts?.signal, async (chunk) => {
            const texts = chunk.getColumnVector(0)
            const rows: ActionRow[] = []
            // Read once: the getter is a native call.
            const count = chunk.rowCount
            for (let i = 0; i < count; i++) {
              const value = texts.getItem(i)
              if (typeof value === 'string') splitRows(value, rows, maps)
            }
            deliver(rows)
          })
          return
        }
        // Each file is read in slices of rows, so that DuckDB holds the texts of one slice at a
        // time (the grouping waits for every row of its input); a slice reads only the row
        // groups it covers.
        for (let file = 0; file < staged.length; file++) {
          for (let from = 0; ; from += ROWS_PER_SLICE) {
            const rowsSql =
              `SELECT file_row_number AS r, ${rowText('CAST(file_row_number AS VARCHAR)')} AS t FROM ${source} WHERE file_index = ${file} ` +
              `AND file_row_number >= ${from} AND file_row_number < ${from + ROWS_PER_SLICE}`
            const sql =
              `SELECT r // ${ROWS_PER_TEXT} AS g, count(*) AS n, sum(strlen(t)) AS bytes, ` +
              `string_agg(t, ${ROW_SEPARATOR_SQL}) AS t FROM (${rowsSql}) GROUP BY g ORDER BY g`
            let sliceRows = 0
            await forEachChunk(con, sql, opts?.signal, async (chunk) => {
              const groups = chunk.getColumnVector(0)
              const counts = chunk.getColumnVector(1)
              const bytes = chunk.getColumnVector(2)
              const texts = chunk.getColumnVector(3)
              const count = chunk.rowCount
              for (let i = 0; i < count; i++) {
                sliceRows += Number(counts.getItem(i))
                const size = bytes.getItem(i)
                // Every row of the group was null (no action): nothing to hand over.
                if (size === null) continue
                const rows: ActionRow[] = []
                if (Number(size) <= MAX_TEXT_BYTES) {
                  splitRows(texts.getItem(i) as string, rows, maps, true)
                } else {
                  // Too long for one JavaScript string: this group's rows come one text each.
                  const group = `SELECT t FROM (${rowsSql}) WHERE r // ${ROWS_PER_TEXT} = ${groups.getItem(i)} AND t IS NOT NULL ORDER BY r`
                  await this.#duck.withConnection(async (other) => {
                    await other.run(`SET TimeZone = 'UTC'`)
                    await forEachChunk(other, group, opts?.signal, async (part) => {
                      const one = part.getColumnVector(0)
                      for (let j = 0; j < part.rowCount; j++)
                        splitRows(one.getItem(j) as string, rows, maps, true)
                    })
                  })
                }
                deliver(rows)
              }
            })
            // A short slice is the file's last.
            if (sliceRows < ROWS_PER_SLICE) break
          }
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
    await ensureScratchDir(this.#scratchDir)
    const id = randomUUID()
    const jsonPath = join(this.#scratchDir, scratchEntryName(`${id}.checkpoint.json`))
    const parquetPath = join(this.#scratchDir, scratchEntryName(`${id}.checkpoint.parquet`))
    try {
      await writeFile(jsonPath, jsonLines.length === 0 ? '' : `${jsonLines.join('\n')}\n`, {
        mode: 0o600,
        flag: 'wx',
      })
      const columns = `{${checkpointColumns(opts)
        .map(([name, type]) => `${sqlString(name)}: ${sqlString(type)}`)
        .join(', ')}}`
      const written = await this.#duck.withConnection(async (con) => {
        // Timestamp text without a zone (timestamp_ntz bounds) must not move with the process's zone.
        await con.run(`SET TimeZone = 'UTC'`)
        const copy = await con.runAndReadAll(
          `COPY (SELECT * FROM read_json(${sqlFilePath(jsonPath)}, format = 'newline_delimited', columns = ${columns})) ` +
            `TO ${sqlString(parquetPath)} (FORMAT parquet, COMPRESSION snappy, RETURN_STATS)`,
        )
        const stats = copy.getRowObjectsJson()[0]
        // DuckDB creates its files 0644; the checkpoint holds the table's schema and statistics.
        await chmod(parquetPath, 0o600)
        // Fingerprinted by the writer as soon as the file is complete, for the upload to check.
        const print = await con.runAndReadAll(
          `SELECT sha256(content) AS h FROM read_blob(${sqlFilePath(parquetPath)})`,
        )
        return {
          rows: Number(stats?.count),
          size: Number(stats?.file_size_bytes),
          sha256: String(print.getRowObjectsJson()[0]?.h),
        }
      })
      if (written.rows !== jsonLines.length) {
        throw new StorageError(
          `Cannot write checkpoint ${key}: DuckDB wrote ${written.rows} rows of ${jsonLines.length}; the scratch file was changed`,
          { path: key, hint: SCRATCH_TAMPERED_HINT },
        )
      }
      const bytes = await readScratchFileVerified(parquetPath, written)
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

const SCRATCH_TAMPERED_HINT =
  'Nothing was committed. Another process changed a file in the scratch directory: make sure no other user can write to it (engine option scratchDir).'

/**
 * Reads a file of the scratch directory back for upload, through one descriptor that follows no
 * link, and checks it is the file that was written: this user's, with one name, of the size and
 * SHA-256 recorded when it was written. A file replaced in between would otherwise be uploaded
 * (a checkpoint of another user's choosing is a table state of their choosing).
 *
 * @param path - the file
 * @param expected - its size in bytes and SHA-256 (hex) when written
 * @returns its bytes
 * @throws {StorageError} when the file differs from what was written
 */
export async function readScratchFileVerified(
  path: string,
  expected: { readonly size: number; readonly sha256: string },
): Promise<Uint8Array> {
  let handle: FileHandle
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW)
  } catch (err) {
    throw new StorageError(`The scratch file ${path} cannot be read back for upload: ${errorText(err)}`, {
      path,
      cause: err,
      hint: SCRATCH_TAMPERED_HINT,
    })
  }
  try {
    const s = await handle.stat()
    const uid = typeof process.getuid === 'function' ? process.getuid() : undefined
    const problem =
      !s.isFile() || s.nlink !== 1
        ? 'it is not a plain file of one name'
        : uid !== undefined && s.uid !== uid
          ? `it belongs to another user (uid ${s.uid})`
          : s.size !== expected.size
            ? `it holds ${s.size} bytes, ${expected.size} were written`
            : undefined
    if (problem === undefined) {
      const bytes = await handle.readFile()
      const sha256 = createHash('sha256').update(bytes).digest('hex')
      if (bytes.byteLength === expected.size && sha256 === expected.sha256) return bytes
    }
    throw new StorageError(
      `The scratch file ${path} is not the one that was written (${problem ?? 'its content differs'}); it is not uploaded`,
      { path, hint: SCRATCH_TAMPERED_HINT },
    )
  } finally {
    await handle.close()
  }
}

/**
 * Streams the chunks of `sql` to `onChunk`, one at a time: DuckDB computes the next chunk on its
 * own thread while this one is handled here (a fetched chunk owns its memory, so the two never
 * share a buffer).
 */
async function forEachChunk(
  con: DuckDBConnection,
  sql: string,
  signal: AbortSignal | undefined,
  onChunk: (chunk: DuckDBDataChunk) => Promise<void>,
): Promise<void> {
  const stream = await openStream(con, sql, {
    signal,
    onFailure: (failure) =>
      failure.cause instanceof Error ? failure.cause : new Error(`IO Error: ${failure.detail}`),
  })
  const chunks = stream.chunks()
  let next = chunks.next()
  try {
    for (;;) {
      const { done, value: chunk } = await next
      if (done) break
      next = chunks.next()
      await onChunk(chunk)
    }
  } catch (err) {
    // The fetch under way must end before the connection serves another query.
    await next.catch(() => undefined)
    await chunks.return(undefined).catch(() => undefined)
    throw err
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}
