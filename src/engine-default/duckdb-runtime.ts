import { randomUUID } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  type DuckDBConnection,
  type DuckDBDataChunk,
  DuckDBInstance,
  ResultReturnType,
} from '@duckdb/node-api'
import { InvalidArgumentError, StorageError, TableClosedError } from '../errors/index.js'
import { duckDbString } from '../expressions/render-duckdb.js'
import { defaultScratchDir, ensureScratchDir, scratchEntryName } from './scratch-dir.js'

/** Settings of a {@link DuckDbRuntime}'s database. */
export interface DuckDbRuntimeOptions {
  /** DuckDB worker threads; by default DuckDB's own choice (the core count). */
  readonly threads?: number | undefined
  /** DuckDB's memory limit (see {@link DuckDbInstanceOptions.memoryLimit}). */
  readonly memoryLimit?: string | number | undefined
  /**
   * The scratch directory: the database spills there (in an entry of its own, which DuckDB
   * creates on the first spill and removes when the database closes).
   */
  readonly scratchDir?: string | undefined
}

/**
 * One embedded DuckDB database for an engine, created on first use by
 * {@link createDuckDbInstance} (which owns the instance settings).
 *
 * The runtime keeps what is open on it: {@link DuckDbRuntime.hold} registers the release of a
 * read that a caller may abandon (a scan iterated part-way and never finished), so that
 * {@link DuckDbRuntime.close} lets go of every connection, DuckDB stream and staged file still
 * held, not only of the database.
 */
export class DuckDbRuntime {
  readonly #options: DuckDbRuntimeOptions
  #instance: Promise<DuckDBInstance> | undefined
  #closed = false
  /** Releases registered by {@link DuckDbRuntime.hold} and not yet run. */
  readonly #held = new Set<() => Promise<void>>()

  /** @param options - threads, memory limit, and where the database spills */
  constructor(options: DuckDbRuntimeOptions = {}) {
    this.#options = options
  }

  /** Whether {@link DuckDbRuntime.close} has run: nothing can be started on it any more. */
  get closed(): boolean {
    return this.#closed
  }

  /**
   * A new connection; close it with `closeSync()` when done.
   *
   * @throws {TableClosedError} once the runtime is closed
   */
  async connect(): Promise<DuckDBConnection> {
    if (this.#closed) throw closedError('open a DuckDB connection')
    this.#instance ??= this.#create()
    const instance = await this.#instance
    // close() may have run while the instance was being created.
    if (this.#closed) throw closedError('open a DuckDB connection')
    return instance.connect()
  }

  async #create(): Promise<DuckDBInstance> {
    const { threads, memoryLimit, scratchDir } = this.#options
    let tempDirectory: string | undefined
    if (scratchDir !== undefined) {
      // DuckDB creates the spill directory itself, but not its parent; the parent being private
      // keeps the spilled rows from other users.
      await ensureScratchDir(scratchDir)
      tempDirectory = join(scratchDir, scratchEntryName(`duckdb-spill-${randomUUID()}`))
    }
    return createDuckDbInstance({ threads, memoryLimit, tempDirectory })
  }

  /** Runs `fn` with a fresh connection and closes it afterwards. */
  async withConnection<T>(fn: (con: DuckDBConnection) => Promise<T>): Promise<T> {
    const con = await this.connect()
    const release = this.hold(async (byClose) => (byClose ? endAndClose(con) : con.closeSync()))
    try {
      return await fn(con)
    } finally {
      await release()
    }
  }

  /**
   * Registers the release of something open on this database (a connection with its stream, the
   * files a read staged) so that {@link DuckDbRuntime.close} runs it if its owner did not.
   *
   * @param release - lets the resources go; run at most once, with `byClose` true when
   *   {@link DuckDbRuntime.close} runs it (the owner may still be part-way: a query may run)
   * @returns the release for the owner to call when done: idempotent, and it unregisters
   */
  hold(release: (byClose: boolean) => Promise<void> | void): () => Promise<void> {
    let done: Promise<void> | undefined
    const run = (byClose: boolean): Promise<void> => {
      this.#held.delete(onClose)
      done ??= (async () => release(byClose))()
      return done
    }
    const onClose = (): Promise<void> => run(true)
    this.#held.add(onClose)
    return () => run(false)
  }

  /**
   * Releases the database and everything still held on it (see {@link DuckDbRuntime.hold}):
   * open streams are ended, their connections closed and their staged files let go. Idempotent.
   */
  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    await Promise.allSettled([...this.#held].map((release) => release()))
    if (this.#instance === undefined) return
    const inst = await this.#instance.catch(() => undefined)
    inst?.closeSync()
  }
}

/** The error of a use of a closed runtime. */
function closedError(what: string): TableClosedError {
  return new TableClosedError(`Cannot ${what}: the table (its engine) was closed`)
}

/**
 * Ends whatever query `con` still runs, then closes it. A streamed result left part-way keeps its
 * query, with the files it has open and its buffers, alive until the result is garbage
 * collected, even after the connection is closed (the Node bindings offer no way to destroy a
 * result); starting any other statement on the connection makes DuckDB end that query first.
 *
 * @param con - the connection; closed on return, whatever happened
 */
export async function endAndClose(con: DuckDBConnection): Promise<void> {
  try {
    await endActiveQuery(con)
  } finally {
    con.closeSync()
  }
}

/**
 * Makes DuckDB end the query `con` runs, if any (see {@link endAndClose}); a connection that is
 * closed or broken has nothing left to end.
 *
 * @param con - the connection
 */
export async function endActiveQuery(con: DuckDBConnection): Promise<void> {
  try {
    await con.run('SELECT 1')
  } catch {
    // Closed or failed: its query, if any, is gone with it.
  }
}

/** Options of {@link createDuckDbInstance}. */
export interface DuckDbInstanceOptions {
  /** DuckDB worker threads; by default DuckDB's own choice (the core count). */
  readonly threads?: number | undefined
  /**
   * The most memory DuckDB's buffer manager uses before it spills to `tempDirectory`: a number of
   * bytes, or a size with its unit as DuckDB writes it (`'4GB'`, `'512MiB'`). By default DuckDB's
   * own, 80% of the machine's memory.
   */
  readonly memoryLimit?: string | number | undefined
  /**
   * Where DuckDB spills what does not fit in `memoryLimit` (sorts, joins, large MERGEs). DuckDB
   * creates the directory on the first spill (its parent must exist) and removes it when the
   * database closes. By default a new entry of the default scratch directory (private to the
   * user): DuckDB's own default for an in-memory database, `.tmp` in the current working
   * directory, would leave files wherever the process happened to run.
   */
  readonly tempDirectory?: string | undefined
}

/** A memory size as DuckDB's `memory_limit` setting reads it. */
const MEMORY_SIZE = /^\s*\d+(?:\.\d+)?\s*(?:B|bytes|KB|MB|GB|TB|KiB|MiB|GiB|TiB)\s*$/i

/**
 * Checks a memory limit and writes it as DuckDB's `memory_limit` setting reads it.
 *
 * @param limit - a number of bytes (a positive integer), or a size with its unit (`'4GB'`)
 * @returns the setting's value
 * @throws {InvalidArgumentError} for anything else
 */
export function duckDbMemoryLimit(limit: string | number): string {
  if (typeof limit === 'number' ? Number.isSafeInteger(limit) && limit > 0 : MEMORY_SIZE.test(limit)) {
    return typeof limit === 'number' ? `${limit}B` : limit.trim()
  }
  throw new InvalidArgumentError(
    `Invalid memoryLimit ${typeof limit === 'string' ? `'${limit}'` : String(limit)}: use a number of bytes > 0 or a size such as '4GB' or '512MiB'`,
    { argument: 'memoryLimit' },
  )
}

/**
 * Creates an in-memory DuckDB database with the settings every DuckDB of delta-rlc uses: the
 * engine's, and those of the `sql` command and of input files. Extensions are never installed or
 * auto-loaded: only the built-in `parquet` and `json` are used, so nothing is fetched from the
 * network and behaviour does not depend on what a previous run left in `~/.duckdb`.
 *
 * @param options - worker threads, memory limit, spill directory
 * @returns the database; close it with `closeSync()` when done
 * @throws {InvalidArgumentError} for an invalid `memoryLimit`
 */
export async function createDuckDbInstance(options: DuckDbInstanceOptions = {}): Promise<DuckDBInstance> {
  const threads = options.threads ?? 0
  const memoryLimit = options.memoryLimit === undefined ? undefined : duckDbMemoryLimit(options.memoryLimit)
  let tempDirectory = options.tempDirectory
  if (tempDirectory === undefined) {
    // Spilled rows are table data: they go to the private scratch directory, not the shared temp dir.
    const scratch = defaultScratchDir()
    await ensureScratchDir(scratch)
    tempDirectory = join(scratch, scratchEntryName(`duckdb-spill-${randomUUID()}`))
  }
  return DuckDBInstance.create(':memory:', {
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    // A directory that is never created: nothing can be loaded from it, and nothing is left
    // behind (one created per instance piled up in the temp directory).
    extension_directory: join(tmpdir(), `delta-rlc-duckdb-ext-${randomUUID()}`),
    temp_directory: tempDirectory,
    ...(threads > 0 ? { threads: String(threads) } : {}),
    ...(memoryLimit === undefined ? {} : { memory_limit: memoryLimit }),
  })
}

/**
 * Columns the engine adds when it reads data files (the file's name, its physical row
 * position); named so that no table column collides with them.
 */
export const FILE_COL = '__delta_rlc_file'
export const ROW_COL = '__delta_rlc_row'

/**
 * Quotes a string as a SQL string literal (see {@link duckDbString}).
 *
 * @param s - any string
 * @returns `'s'` with embedded quotes doubled; a string holding NUL characters as quoted pieces
 *   joined by `chr(0)`, since DuckDB's parser ends a quoted string at a NUL
 */
export function sqlString(s: string): string {
  return duckDbString(s)
}

/**
 * Quotes a file path for DuckDB's file readers (`read_parquet`, ...), which expand glob
 * characters: each of `[`, `]`, `*` and `?` becomes a one-character class, so the path names
 * exactly the file it spells. A table's file names come from its log, which another writer wrote:
 * a name such as `[e]vil/x.parquet` would otherwise read `evil/x.parquet` (which the checks on the
 * named path never saw), and `*.parquet` would read files the table never committed.
 *
 * @param path - a local file path
 * @returns the SQL string literal of the escaped path
 */
export function sqlFilePath(path: string): string {
  return sqlString(path.replace(/[[\]*?]/g, (c) => `[${c}]`))
}

/**
 * Quotes an identifier for DuckDB.
 *
 * @param name - a column or table name
 * @returns `"name"` with embedded double quotes doubled
 */
export function sqlIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`
}

/** Why a DuckDB result stream ended before its last row. */
export interface StreamFailure {
  /** Rows the stream delivered before it ended. */
  readonly rowsRead: number
  /** DuckDB's own message (its first line), recovered by running the query again. */
  readonly detail: string
  /** The error DuckDB raised when the query ran again, if it raised one. */
  readonly cause: unknown
}

/** Options of {@link openStream} and {@link streamChunks}. */
export interface StreamChunksOptions {
  /** Checked before each chunk: an abort ends the stream with the signal's reason. */
  readonly signal?: AbortSignal | undefined
  /**
   * Builds the error thrown when the stream failed part-way (by default a `StorageError`). A
   * reader of external input uses it to name the row and column at fault.
   */
  readonly onFailure?: ((failure: StreamFailure) => Error | Promise<Error>) | undefined
}

/** A streamed query: its columns, and its chunks to read once. */
export interface ResultStream {
  /** The result's column names, in order. */
  readonly columnNames: readonly string[]
  /**
   * The non-empty chunks in result order; throws when DuckDB ended the stream on an error.
   *
   * @throws {StorageError} when the stream failed part-way and no `onFailure` was given
   */
  chunks(): AsyncGenerator<DuckDBDataChunk, void, undefined>
  /**
   * Ends the query when its chunks were not read to the end (an abandoned stream keeps the files
   * it reads open, and its buffers, until garbage collection); a no-op after the last chunk.
   * {@link ResultStream.chunks} does it when its loop is left early. Idempotent.
   */
  close(): Promise<void>
}

/**
 * Starts a streamed query whose failure part-way is an error, never a short result.
 *
 * DuckDB reports an error raised while a streamed query runs (a value that does not convert, a
 * damaged file) only by ending the stream: the next fetch returns an empty chunk exactly as it
 * does after the last row, and the Node bindings expose no error text for a streaming result.
 * What survives is the result's return type, which DuckDB turns to `INVALID` once the result
 * holds an error. Every reader of a streamed result goes through here, so that a failure is
 * never taken for the end of the data.
 *
 * @param con - the connection (it runs one streamed query at a time)
 * @param sql - the query; statements before the last one are run first
 * @param options - an abort signal, the error to throw on failure
 * @returns the stream
 * @throws whatever DuckDB raises when it rejects the query before the first row
 */
export async function openStream(
  con: DuckDBConnection,
  sql: string,
  options: StreamChunksOptions = {},
): Promise<ResultStream> {
  options.signal?.throwIfAborted()
  const result = await con.stream(sql)
  let ended = false
  const close = async (): Promise<void> => {
    if (ended) return
    ended = true
    await endActiveQuery(con)
  }
  return {
    columnNames: result.columnNames(),
    close,
    async *chunks() {
      let rowsRead = 0
      let failure: StreamFailure | undefined
      try {
        for (;;) {
          options.signal?.throwIfAborted()
          let chunk: DuckDBDataChunk | null
          try {
            chunk = await result.fetchChunk()
          } catch (err) {
            failure = { rowsRead, detail: firstLineOf(err), cause: err }
            break
          }
          if (chunk === null || chunk.rowCount === 0) {
            // DuckDB has ended the query itself.
            ended = true
            break
          }
          rowsRead += chunk.rowCount
          yield chunk
        }
      } finally {
        // Left early: a break in the caller's loop, an abort, a throw while a chunk was handled.
        if (!ended && failure === undefined) await close()
      }
      if (failure === undefined && result.returnType !== ResultReturnType.INVALID) return
      failure ??= await diagnoseStream(con, sql, rowsRead)
      throw options.onFailure
        ? await options.onFailure(failure)
        : new StorageError(`DuckDB stopped a query after ${rowsRead} rows: ${failure.detail}`, {
            cause: failure.cause,
            hint: "A value did not convert or a file could not be read; the message is DuckDB's own.",
          })
    },
  }
}

/**
 * Streams the result of a query chunk by chunk (see {@link openStream}).
 *
 * @param con - the connection
 * @param sql - the query
 * @param options - an abort signal, the error to throw on failure
 * @returns the non-empty chunks, in result order
 * @throws {StorageError} when the stream ended on an error and `onFailure` is not given
 */
export async function* streamChunks(
  con: DuckDBConnection,
  sql: string,
  options: StreamChunksOptions = {},
): AsyncGenerator<DuckDBDataChunk, void, undefined> {
  yield* (await openStream(con, sql, options)).chunks()
}

/**
 * Runs a failed streamed query again, materialized and reduced to one count per column so that
 * every value is computed but none is kept: a materialized query raises its error, which a
 * streamed one does not.
 */
async function diagnoseStream(con: DuckDBConnection, sql: string, rowsRead: number): Promise<StreamFailure> {
  try {
    await con.run(`SELECT count(COLUMNS(*)) FROM (${stripTrailingSemicolons(sql)}) AS __delta_rlc_check`)
  } catch (err) {
    const first = firstLineOf(err)
    // A statement that cannot be wrapped (PRAGMA, SHOW, ...) says nothing about the stream.
    if (!/^(Parser|Binder|Catalog) Error/.test(first)) return { rowsRead, detail: first, cause: err }
  }
  return {
    rowsRead,
    detail: 'the result stream ended on an error DuckDB did not report again when the query was rerun',
    cause: undefined,
  }
}

function firstLineOf(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? ''
}

function stripTrailingSemicolons(sql: string): string {
  return sql.replace(/[\s;]+$/, '')
}
