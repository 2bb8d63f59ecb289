import { InvalidArgumentError } from '../../index.js'
import {
  createDuckDbInstance,
  createSnapshotView,
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
  usage: '<table> <query> [--version N | --timestamp TIME] [--format table|json|csv] [--limit N]',
  details: [
    'Example: delta-rlc sql ./events "SELECT day, count(*) AS n FROM t GROUP BY day ORDER BY day"',
    'The view t holds exactly the live rows of the snapshot: rows hidden by deletion vectors are',
    'anti-joined away, partition values come from the log. Any DuckDB SQL works over it.',
    'Use --view NAME to give the view another name.',
  ].join('\n'),
  options: {
    ...TIME_TRAVEL_OPTIONS,
    format: { type: 'string', value: 'FMT', help: 'table (default), json (lines) or csv' },
    limit: { type: 'string', value: 'N', help: 'print at most N result rows' },
    view: { type: 'string', value: 'NAME', help: 'name of the view (default t)' },
  },
  positionals: { min: 2, max: 2, names: '<table> <query>' },
  async run(ctx, values, [location, query]) {
    const loc = location as string
    const format = rowFormat(stringOption(values, 'format'), 'sql')
    const limitOpt = integerOption(values, 'limit', 'sql')
    const table = await ctx.openTable(loc, {})
    const instance = await createDuckDbInstance()
    const con = await instance.connect()
    try {
      const view = await createSnapshotView(con, table, {
        ...timeTravelOptions(values, 'sql'),
        name: stringOption(values, 'view') ?? 't',
      })
      try {
        let result: ResultStream
        try {
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
          throw new InvalidArgumentError(
            `DuckDB rejected the query: ${err instanceof Error ? err.message : String(err)}`,
            {
              argument: 'query',
              cause: err,
              hint: `The table is the view '${view.name}'; check the SQL (DuckDB dialect) and column names (delta-rlc describe ${loc}).`,
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
