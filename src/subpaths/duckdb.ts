/**
 * `delta-rlc/duckdb`: DuckDB-specific tools for applications that run their own SQL over a table.
 * They take and return `@duckdb/node-api` values (a `DuckDBConnection`, a `DuckDBInstance`), which
 * the table API never does.
 *
 * ### Examples
 * ```ts
 * import { DeltaTable } from 'delta-rlc'
 * import { createDuckDbInstance, createSnapshotView } from 'delta-rlc/duckdb'
 *
 * const table = await DeltaTable.open('/data/sales')
 * const connection = await (await createDuckDbInstance()).connect()
 * const view = await createSnapshotView(connection, table, { name: 'sales' })
 * const reader = await connection.runAndReadAll('SELECT count(*) FROM sales')
 * await view.release()
 * ```
 *
 * ### Sandboxing SQL that users type
 * `createSnapshotView` itself restricts nothing: the connection runs any DuckDB statement with
 * the process's access to files, network and extensions. Before running SQL from a user, do as
 * `delta-rlc sql` does: `lockDownConnection(connection, view.directories)` (file access only to
 * the view's directories, no external access, no extension install or load, configuration
 * locked, for the whole instance and for good), then `checkReadOnlyQuery(connection, sql)` (one
 * statement, a SELECT). Not covered: CPU time and memory (set the instance's `threads` and
 * `memory_limit`), and reads of any file inside the allowed directories.
 */

export {
  createDuckDbInstance,
  type DuckDbInstanceOptions,
  openStream,
  type ResultStream,
  type StreamChunksOptions,
  type StreamFailure,
  streamChunks,
} from '../engine-default/duckdb-runtime.js'
export { checkReadOnlyQuery, lockDownConnection } from '../engine-default/duckdb-sandbox.js'
export { toPlainValue } from '../engine-default/duckdb-values.js'
export { createSnapshotView, type SnapshotView, type SnapshotViewOptions } from '../table/sql-view.js'
