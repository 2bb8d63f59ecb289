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
export { toPlainValue } from '../engine-default/duckdb-values.js'
export { createSnapshotView, type SnapshotView, type SnapshotViewOptions } from '../table/sql-view.js'
