import { appendInputFiles, DEFAULT_BATCH_ROWS } from '../append-input.js'
import { CONFLICTS_OPTION, type Command, integerOption, sizeOption, stringOption } from '../command.js'
import { printCommit } from '../commit-output.js'

/** `delta-rlc append`: rows from JSON lines, CSV or Parquet files, as one commit. */
export const appendCommand: Command = {
  name: 'append',
  summary: 'Append the rows of JSON-lines, CSV or Parquet files as one commit.',
  usage: '<table> <file>... [--format json|csv|parquet] [options]',
  details: [
    'Files are read with DuckDB and converted to the table schema; columns are matched by name',
    '(missing columns are null). Large inputs are written in batches inside one transaction, so',
    'either every row lands or none does.',
  ].join('\n'),
  options: {
    format: {
      type: 'string',
      value: 'FMT',
      help: 'input format: json (lines), csv or parquet (default: by extension)',
    },
    'batch-rows': { type: 'string', value: 'N', help: `rows per batch (default ${DEFAULT_BATCH_ROWS})` },
    'target-file-size': { type: 'string', value: 'SIZE', help: 'bytes per new data file, e.g. 128MB' },
    ...CONFLICTS_OPTION,
  },
  positionals: { min: 2, max: Number.POSITIVE_INFINITY, names: '<table> <file>...' },
  async run(ctx, values, [location, ...files]) {
    const loc = location as string
    const table = await ctx.openTable(loc, values)
    try {
      const outcome = await appendInputFiles(ctx, table, files, {
        format: stringOption(values, 'format'),
        batchRows: integerOption(values, 'batch-rows', 'append'),
        targetFileSize: sizeOption(values, 'target-file-size', 'append'),
      })
      printCommit(ctx, loc, outcome.result, { inputFiles: files.length, inputRows: outcome.rows })
    } finally {
      await table.close()
    }
  },
}
