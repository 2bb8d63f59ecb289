import { InvalidArgumentError } from '../../index.js'
import {
  checkReadOnlyQuery,
  createDuckDbInstance,
  createSnapshotView,
  lockDownConnection,
  openStream,
  type ResultStream,
  toPlainValue,
} from '../../subpaths/duckdb.js'
import {
  type Command,
  integerOption,
  stringOption,
  TIME_TRAVEL_OPTIONS,
  timeTravelOptions,
} from '../command.js'
import { RowOutput, rowFormat } from '../row-output.js'
import { formatCount } from '../terminal.js'

/** `delta-rlc sql`: a DuckDB query over the live rows of a snapshot, as view `t`. */
export const sqlCommand: Command = {
  name: 'sql',
  summary: 'Run a DuckDB SQL query over the live rows of the table, exposed as the view t.',
  usage: '<table> <query> [--version N | --timestamp TIME] [--format table|json|csv] [--limit N] [--unsafe]',
  details: [
    'Example: delta-rlc sql ./events "SELECT day, count(*) AS n FROM t GROUP BY day ORDER BY day"',
    'The view t holds exactly the live rows of the snapshot: rows hidden by deletion vectors are',
    'anti-joined away, partition values come from the log. Any DuckDB query works over it.',
    'Use --view NAME to give the view another name.',
    '',
    'Sandbox: exactly one read-only statement (a SELECT) runs, and DuckDB itself is locked down',
    'first: files only under the table root (and the folder remote files are copied to),',
    'enable_external_access=false (no other file, no network, no ATTACH), no extension installed',
    'or loaded, lock_configuration=true. read_csv of another file, COPY, ATTACH, INSTALL, SET,',
    'several statements and any statement that is not a query are refused. --unsafe lifts all of',
    'this and runs the SQL with the full access of your user: only for SQL you wrote yourself.',
  ].join('\n'),
  options: {
    ...TIME_TRAVEL_OPTIONS,
    format: { type: 'string', value: 'FMT', help: 'table (default), json (lines) or csv' },
    limit: { type: 'string', value: 'N', help: 'print at most N result rows' },
    view: { type: 'string', value: 'NAME', help: 'name of the view (default t)' },
    unsafe: {
      type: 'boolean',
      help: 'run any DuckDB SQL, with full file, network and extension access (no sandbox)',
    },
  },
  positionals: { min: 2, max: 2, names: '<table> <query>' },
  async run(ctx, values, [location, query]) {
    const loc = location as string
    const format = rowFormat(stringOption(values, 'format'), 'sql')
    const limitOpt = integerOption(values, 'limit', 'sql')
    const unsafe = values.unsafe === true
    if ((query as string).trim() === '') {
      throw new InvalidArgumentError('The query is empty: give one SELECT statement over the view t', {
        argument: 'query',
        hint: `For example: delta-rlc sql ${loc} "SELECT count(*) FROM t"`,
      })
    }
    const table = await ctx.openTable(loc, {})
    const instance = await createDuckDbInstance()
    const con = await instance.connect()
    try {
      const view = await createSnapshotView(con, table, {
        ...timeTravelOptions(values, 'sql'),
        name: stringOption(values, 'view') ?? 't',
      })
      try {
        if (!unsafe) await lockDownConnection(con, view.directories)
        let result: ResultStream
        try {
          if (!unsafe) await checkReadOnlyQuery(con, query as string)
          result = await openStream(con, query as string, {
            onFailure: (f) =>
              new InvalidArgumentError(
                `The query failed after ${formatCount(f.rowsRead)} rows: ${f.detail}`,
                {
                  argument: 'query',
                  cause: f.cause,
                  hint: 'The rows printed so far are incomplete; DuckDB stopped the query on the error above.',
                },
              ),
          })
        } catch (err) {
          if (err instanceof InvalidArgumentError) throw err
          throw new InvalidArgumentError(
            `DuckDB rejected the query: ${err instanceof Error ? err.message : String(err)}`,
            {
              argument: 'query',
              cause: err,
              hint: unsafe
                ? `The table is the view '${view.name}'; check the SQL (DuckDB dialect) and column names (delta-rlc describe ${loc}).`
                : `The table is the view '${view.name}'; check the SQL (DuckDB dialect) and column names (delta-rlc describe ${loc}). The sandbox allows reads of the table only (--unsafe lifts it).`,
            },
          )
        }
        const columns = result.columnNames
        const output = new RowOutput(ctx, columns, format, limitOpt)
        outer: for await (const chunk of result.chunks()) {
          for (const values of chunk.getRows()) {
            const row: Record<string, unknown> = {}
            columns.forEach((c, i) => {
              row[c] = toPlainValue(values[i] ?? null)
            })
            if (!output.take(row)) break outer
          }
        }
        if (ctx.json) {
          ctx.printJson({ table: loc, version: view.version, view: view.name, columns, rows: output.rows })
        } else output.printTable(view.version)
      } finally {
        await view.release()
      }
    } finally {
      con.closeSync()
      instance.closeSync()
      await table.close()
    }
  },
}
