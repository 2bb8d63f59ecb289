import {
  type Command,
  integerOption,
  listOption,
  predicateOption,
  stringOption,
  TIME_TRAVEL_OPTIONS,
  timeTravelOptions,
} from '../command.js'
import { jsonValue } from '../render.js'
import { RowOutput, rowFormat, TABLE_DEFAULT_LIMIT } from '../row-output.js'

/** `delta-rlc scan` / `show`: the live rows of a table. */
export const scanCommand: Command = {
  name: 'scan',
  aliases: ['show'],
  summary: 'Print the live rows of the table (deletion vectors applied), optionally filtered.',
  usage:
    '<table> [--where PRED] [--columns COLS] [--limit N] [--version N | --timestamp TIME] [--format table|json|csv]',
  details: [
    `--format table (the default) shows at most ${TABLE_DEFAULT_LIMIT} rows unless --limit is given;`,
    'json prints one JSON object per line (JSON lines), csv a header and RFC 4180 records, both streamed.',
    '--json prints one JSON document: {"table", "version", "columns", "rows": [...]}.',
    'Longs are exact JSON integers, decimals strings, timestamps ISO-8601 text, binary base64.',
  ].join('\n'),
  options: {
    where: {
      type: 'string',
      value: 'PRED',
      help: 'SQL predicate the rows must satisfy (blank is refused; leave it out for every row)',
    },
    columns: { type: 'string', value: 'COLS', help: 'columns to print, comma-separated (default: all)' },
    limit: { type: 'string', value: 'N', help: 'print at most N rows' },
    format: { type: 'string', value: 'FMT', help: 'table (default), json or csv' },
    ...TIME_TRAVEL_OPTIONS,
  },
  positionals: { min: 1, max: 1, names: '<table>' },
  async run(ctx, values, [location]) {
    const loc = location as string
    const format = rowFormat(stringOption(values, 'format'), 'scan')
    const limitOpt = integerOption(values, 'limit', 'scan')
    const table = await ctx.openTable(loc, {})
    try {
      const snap = await table.snapshot(timeTravelOptions(values, 'scan'))
      const columns = listOption(values, 'columns') ?? snap.schema.fields.map((f) => f.name)
      const where = predicateOption(values, 'where', 'scan', 'leave --where out')
      const output = new RowOutput(ctx, columns, format, limitOpt)
      const limit = output.limit
      const scan = table.scan({
        version: snap.version,
        columns,
        ...(where === undefined ? {} : { where }),
        ...(limit === undefined ? {} : { batchSize: Math.min(8192, Math.max(1, limit)) }),
      })
      await output.takeAll(scan, 'scan')
      if (ctx.json) {
        ctx.printJson({
          table: loc,
          version: snap.version,
          columns,
          rows: output.rows.map((r) => jsonValue(r)),
        })
        return
      }
      output.printTable(snap.version)
    } finally {
      await table.close()
    }
  },
}
