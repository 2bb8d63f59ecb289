import type { Row } from '../../index.js'
import {
  type Command,
  integerOption,
  listOption,
  stringOption,
  TIME_TRAVEL_OPTIONS,
  timeTravelOptions,
  UsageError,
} from '../command.js'
import { csvRecord, jsonValue, type RowFormat, renderTable, toJsonText } from '../render.js'
import { formatCount } from '../terminal.js'

/** Rows a `--format table` scan shows when no `--limit` is given. */
export const TABLE_DEFAULT_LIMIT = 1000

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
    where: { type: 'string', value: 'PRED', help: 'SQL predicate the rows must satisfy' },
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
    const limit = limitOpt ?? (format === 'table' && !ctx.json ? TABLE_DEFAULT_LIMIT : undefined)
    const table = await ctx.openTable(loc, {})
    try {
      const snap = await table.snapshot(timeTravelOptions(values, 'scan'))
      const columns = listOption(values, 'columns') ?? snap.schema.fields.map((f) => f.name)
      const where = stringOption(values, 'where')
      const scan = table.scan({
        version: snap.version,
        columns,
        ...(where === undefined ? {} : { where }),
        ...(limit === undefined ? {} : { batchSize: Math.min(8192, Math.max(1, limit)) }),
      })
      const progress = ctx.progress('scan', limit, 'rows')
      const rows: Row[] = []
      let count = 0
      let truncated = false
      const streaming = !ctx.json && format !== 'table'
      if (streaming && format === 'csv') ctx.io.stdout.write(`${csvRecord(columns)}\n`)
      try {
        outer: for await (const batch of scan) {
          for (const row of batch) {
            if (limit !== undefined && count >= limit) {
              truncated = true
              break outer
            }
            count++
            if (!streaming) rows.push(row)
            else if (format === 'csv') ctx.io.stdout.write(`${csvRecord(columns.map((c) => row[c]))}\n`)
            else ctx.io.stdout.write(`${toJsonText(row)}\n`)
          }
          progress.update(count)
        }
      } finally {
        progress.finish()
      }
      if (ctx.json) {
        ctx.printJson({ table: loc, version: snap.version, columns, rows: rows.map((r) => jsonValue(r)) })
        return
      }
      if (format === 'table') {
        ctx.print(renderTable(columns, rows, ctx.out))
        const more =
          truncated && limitOpt === undefined
            ? `; showing the first ${formatCount(count)}, use --limit to see more`
            : ''
        ctx.print(
          ctx.out.paint(
            'dim',
            `(${formatCount(count)} row${count === 1 ? '' : 's'}, version ${snap.version}${more})`,
          ),
        )
      }
    } finally {
      await table.close()
    }
  },
}

/**
 * Parses `--format`.
 *
 * @throws {UsageError} for anything but table, json or csv
 */
export function rowFormat(text: string | undefined, command: string): RowFormat {
  const f = (text ?? 'table').toLowerCase()
  if (f === 'table' || f === 'json' || f === 'csv') return f
  throw new UsageError(`--format must be table, json or csv, got '${text}'`, command, { argument: 'format' })
}
