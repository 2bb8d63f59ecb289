/**
 * DuckDB's own sandbox for a connection that runs SQL a user typed: file access limited to the
 * directories a view reads, no external access, no extension installed or loaded, and the
 * configuration locked; and a check that the SQL is exactly one read-only query.
 */
import { join } from 'node:path'
import { type DuckDBConnection, StatementType } from '@duckdb/node-api'
import { InvalidArgumentError } from '../errors/index.js'
import { sqlString } from './duckdb-runtime.js'

/**
 * Locks down the DuckDB instance of `connection`: `allowed_directories` set to `directories`
 * (each with a trailing separator, so a sibling with the same prefix stays out),
 * `enable_external_access = false` (no other file, no network, no ATTACH of another file, no
 * extension from disk), `autoinstall_known_extensions` and `autoload_known_extensions` off, then
 * `lock_configuration = true`, so no later statement can undo any of it. The settings are the
 * instance's: every connection of it is locked down, for good.
 *
 * What it does not do: writes inside the allowed directories stay possible for a statement that
 * writes (COPY TO); pair it with {@link checkReadOnlyQuery}. CPU and memory are not limited
 * beyond the instance's own `threads` and `memory_limit`.
 *
 * @param connection - a connection of the instance to lock down
 * @param directories - local directories queries may read (a view's `directories`)
 * @throws {Error} from DuckDB when the configuration is already locked
 */
export async function lockDownConnection(
  connection: DuckDBConnection,
  directories: readonly string[],
): Promise<void> {
  const dirs = directories.map((d) => (d.endsWith('/') ? d : join(d, '/')))
  await connection.run(`SET allowed_directories = [${dirs.map(sqlString).join(', ')}]`)
  await connection.run('SET enable_external_access = false')
  await connection.run('SET autoinstall_known_extensions = false')
  await connection.run('SET autoload_known_extensions = false')
  await connection.run('SET lock_configuration = true')
}

/**
 * Checks that `sql` is exactly one statement, and a query (`SELECT`, `WITH ... SELECT`, `FROM`,
 * `VALUES`, a `TABLE` reference): not a second statement, not COPY, ATTACH, INSTALL, SET,
 * CREATE, INSERT, PRAGMA, EXPLAIN or any other kind.
 *
 * @param connection - the connection the query will run on (the statement is prepared on it)
 * @param sql - the text
 * @throws {InvalidArgumentError} naming what was found, when it is not one query; the message of
 *   DuckDB's own refusal when it cannot be prepared (a sandbox refusal included)
 */
export async function checkReadOnlyQuery(connection: DuckDBConnection, sql: string): Promise<void> {
  if (typeof sql !== 'string' || sql.trim() === '') {
    throw new InvalidArgumentError('The query is empty: give one SELECT statement over the view', {
      argument: 'query',
      hint: `For example: "SELECT count(*) FROM t".`,
    })
  }
  const extracted = await connection.extractStatements(sql)
  if (extracted.count !== 1) {
    throw new InvalidArgumentError(
      extracted.count === 0
        ? 'The query holds no statement: give one SELECT statement over the view'
        : `The query holds ${extracted.count} statements: only one read-only query runs`,
      { argument: 'query', hint: 'Run each query on its own; remove the ";" between them.' },
    )
  }
  const prepared = await extracted.prepare(0)
  try {
    if (prepared.statementType !== StatementType.SELECT) {
      throw new InvalidArgumentError(
        `Only a read-only query (SELECT) runs here; this is a ${StatementType[prepared.statementType] ?? 'other'} statement`,
        {
          argument: 'query',
          hint: 'Query the view with SELECT; write to the table with the append, delete, update and merge commands.',
        },
      )
    }
  } finally {
    prepared.destroySync()
  }
}
