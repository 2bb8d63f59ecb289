import { randomUUID } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api'

/**
 * One embedded DuckDB database for an engine, created on first use.
 *
 * Extensions are never installed or auto-loaded at run time: only the built-in `parquet` and
 * `json` are used, so nothing is fetched from the network and behaviour does not depend on what
 * a previous run left in `~/.duckdb`.
 */
export class DuckDbRuntime {
  readonly #threads: number
  #instance: Promise<DuckDBInstance> | undefined
  #closed = false

  /** @param threads - DuckDB worker threads; defaults to DuckDB's own choice (the core count) */
  constructor(threads?: number) {
    this.#threads = threads ?? 0
  }

  /** A new connection; close it with `closeSync()` when done. */
  async connect(): Promise<DuckDBConnection> {
    this.#instance ??= DuckDBInstance.create(':memory:', {
      autoinstall_known_extensions: 'false',
      autoload_known_extensions: 'false',
      // A directory that is never created: nothing can be loaded from it, and nothing is left
      // behind (one created per engine piled up in the temp directory).
      extension_directory: join(tmpdir(), `delta-rlc-duckdb-ext-${randomUUID()}`),
      ...(this.#threads > 0 ? { threads: String(this.#threads) } : {}),
    })
    return (await this.#instance).connect()
  }

  /** Runs `fn` with a fresh connection and closes it afterwards. */
  async withConnection<T>(fn: (con: DuckDBConnection) => Promise<T>): Promise<T> {
    const con = await this.connect()
    try {
      return await fn(con)
    } finally {
      con.closeSync()
    }
  }

  /** Releases the database. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed || this.#instance === undefined) return
    this.#closed = true
    const inst = await this.#instance
    inst.closeSync()
  }
}

/**
 * Columns the engine adds when it reads data files (the file's name, its physical row
 * position); named so that no table column collides with them.
 */
export const FILE_COL = '__delta_rlc_file'
export const ROW_COL = '__delta_rlc_row'

/**
 * Quotes a string as a SQL string literal.
 *
 * @param s - any string
 * @returns `'s'` with embedded quotes doubled
 */
export function sqlString(s: string): string {
  return `'${s.replaceAll("'", "''")}'`
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
