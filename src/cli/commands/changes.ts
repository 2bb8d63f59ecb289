import { type Command, integerOption, stringOption, UsageError } from '../command.js'
import { jsonValue } from '../render.js'
import { RowOutput, rowFormat, TABLE_DEFAULT_LIMIT } from '../row-output.js'

/** The columns every change row carries after the table's own. */
const CHANGE_COLUMNS = ['_change_type', '_commit_version', '_commit_timestamp'] as const

/** `delta-rlc changes`: the change data feed of a range of versions. */
export const changesCommand: Command = {
  name: 'changes',
  summary: 'Print the change data feed: rows inserted, deleted and updated between two versions.',
  usage:
    '<table> (--from V | --from-timestamp TIME) [--to V | --to-timestamp TIME] [--limit N] [--format table|json|csv]',
  details: [
    'The table must record change data (delta.enableChangeDataFeed=true) from the start of the range on.',
    'Each row carries the table columns, then _change_type (insert, delete, update_preimage,',
    'update_postimage), _commit_version and _commit_timestamp. The range is inclusive; --to defaults',
    `to the latest version. --format table (the default) shows at most ${TABLE_DEFAULT_LIMIT} rows unless --limit is given;`,
    'json prints one JSON object per line, csv a header and records, both streamed.',
    '--json prints one JSON document: {"table", "from", "to", "columns", "rows": [...]}.',
  ].join('\n'),
  options: {
    from: { type: 'string', value: 'V', help: 'first version read' },
    to: { type: 'string', value: 'V', help: 'last version read (default: the latest)' },
    'from-timestamp': { type: 'string', value: 'TIME', help: 'read from the first commit at or after TIME' },
    'to-timestamp': { type: 'string', value: 'TIME', help: 'read up to the last commit at or before TIME' },
    limit: { type: 'string', value: 'N', help: 'print at most N rows' },
    format: { type: 'string', value: 'FMT', help: 'table (default), json or csv' },
  },
  positionals: { min: 1, max: 1, names: '<table>' },
  async run(ctx, values, [location]) {
    const loc = location as string
    const format = rowFormat(stringOption(values, 'format'), 'changes')
    const limitOpt = integerOption(values, 'limit', 'changes')
    const from = integerOption(values, 'from', 'changes')
    const to = integerOption(values, 'to', 'changes')
    const fromTimestamp = stringOption(values, 'from-timestamp')
    const toTimestamp = stringOption(values, 'to-timestamp')
    if ((from === undefined) === (fromTimestamp === undefined)) {
      throw new UsageError('changes needs exactly one of --from and --from-timestamp', 'changes', {
        argument: 'from',
      })
    }
    if (to !== undefined && toTimestamp !== undefined) {
      throw new UsageError('Pass --to or --to-timestamp, not both', 'changes', { argument: 'to' })
    }
    const table = await ctx.openTable(loc, {})
    try {
      const changes = table.changes({
        ...(from === undefined ? { startingTimestamp: fromTimestamp } : { startingVersion: from }),
        ...(to === undefined ? {} : { endingVersion: to }),
        ...(toTimestamp === undefined ? {} : { endingTimestamp: toTimestamp }),
      })
      const versions = await changes.versions()
      const last = versions.at(-1)?.version ?? 0n
      const end = await table.snapshot({ version: last })
      const columns = [...end.schema.fields.map((f) => f.name), ...CHANGE_COLUMNS]
      const output = new RowOutput(ctx, columns, format, limitOpt)
      await output.takeAll(changes, 'changes')
      if (ctx.json) {
        ctx.printJson({
          table: loc,
          from: versions[0]?.version ?? null,
          to: last,
          columns,
          rows: output.rows.map((r) => jsonValue(r)),
        })
        return
      }
      output.printTable(last)
    } finally {
      await table.close()
    }
  },
}
