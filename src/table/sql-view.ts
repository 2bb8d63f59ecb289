import type { DuckDBConnection } from '@duckdb/node-api'
import { createLiveRowsView } from '../engine-default/duckdb-live-rows-view.js'
import { optionsObject } from '../errors/argument-checks.js'
import { InvalidArgumentError } from '../errors/index.js'
import type { Version } from '../protocol/actions.js'
import { columnSpecs } from '../scan/column-specs.js'
import { dataFileRefs } from '../scan/data-file-refs.js'
import type { LoadSnapshotOptions } from '../snapshot/load-snapshot.js'
import type { DeltaTable } from './delta-table.js'

/** Options of {@link createSnapshotView}. */
export interface SnapshotViewOptions extends LoadSnapshotOptions {
  /** Name of the view (default `t`). Helper tables get this name plus a suffix. */
  readonly name?: string | undefined
}

/** A DuckDB view over the live rows of one snapshot. */
export interface SnapshotView {
  /** The view's name. */
  readonly name: string
  /** The snapshot version the view shows. */
  readonly version: Version
  /** Data files behind the view. */
  readonly files: number
  /** Rows hidden by deletion vectors (physical rows in the files that the view leaves out). */
  readonly deletedRows: number
  /**
   * The local directories the view reads (the table root of a local table, the folder remote
   * files were copied to): what `lockDownConnection` must allow.
   */
  readonly directories: readonly string[]
  /** Drops the view and its helper tables, and deletes local copies of remote files. */
  release(): Promise<void>
}

/**
 * Defines a temporary DuckDB view that shows exactly the live rows of a table snapshot, so that
 * any DuckDB query can run over a Delta table with deletion vectors.
 *
 * The view reads the snapshot's Parquet files with `file_row_number` and removes the rows named
 * by each file's deletion vector with an anti-join, so the positions are the physical positions
 * the protocol defines: the same live-rows relation as the engine's scans. Partition values come
 * from the log, and columns carry their logical names even under column mapping. Files on remote
 * stores are copied to a private local folder first; {@link SnapshotView.release} deletes the
 * copies.
 *
 * Column names are quoted in the view, so any name works, but DuckDB parses the query before it
 * looks at the view: a name its parser reads as a keyword (`at`, `order`, `select`; see
 * `SELECT * FROM duckdb_keywords()`) or a name with spaces or punctuation must be written in
 * double quotes (`SELECT max("at") FROM t`) or qualified by the view (`t.at`).
 *
 * ### Examples
 * ```ts
 * import { DuckDBInstance } from '@duckdb/node-api'
 * const con = await (await DuckDBInstance.create(':memory:')).connect()
 * const view = await createSnapshotView(con, table, { version: 3n })
 * const reader = await con.runAndReadAll('SELECT part, count(*) FROM t GROUP BY part')
 * await view.release()
 * ```
 *
 * @param connection - the DuckDB connection the view is created on (temporary objects are per connection)
 * @param table - the open table
 * @param options - `name` of the view, and `version` / `timestamp` for time travel
 * @returns the view and a release function
 * @throws {InvalidArgumentError} when the view name is empty
 * @throws {VersionNotFoundError} when the version or timestamp is not in the log
 * @throws {InvalidDeletionVectorError} on a malformed deletion vector
 * @throws {StorageError} when DuckDB cannot read the data files
 */
export async function createSnapshotView(
  connection: DuckDBConnection,
  table: DeltaTable,
  options: SnapshotViewOptions = {},
): Promise<SnapshotView> {
  if (typeof (connection as { run?: unknown } | null)?.run !== 'function') {
    throw new InvalidArgumentError('connection must be a DuckDB connection (DuckDBConnection)', {
      argument: 'connection',
    })
  }
  if (typeof (table as { snapshot?: unknown } | null)?.snapshot !== 'function') {
    throw new InvalidArgumentError('table must be an open DeltaTable', { argument: 'table' })
  }
  optionsObject(options, 'options')
  const name = options.name ?? 't'
  if (typeof name !== 'string' || name.trim() === '') {
    throw new InvalidArgumentError('The view name must be a non-empty string', { argument: 'name' })
  }
  const snap = await table.snapshot({
    version: options.version,
    timestamp: options.timestamp,
    signal: options.signal,
  })
  const refs = await dataFileRefs(table.engine, snap.activeFiles(), options.signal)
  const view = await createLiveRowsView(connection, {
    name,
    columns: columnSpecs(snap, undefined),
    files: refs,
    storage: table.engine.storage,
    signal: options.signal,
  })
  return Object.freeze({ ...view, version: snap.version })
}
