import { appendInputFiles, DEFAULT_BATCH_ROWS } from '../append-input.js'
import {
  CONFLICTS_OPTION,
  type Command,
  INPUT_COLUMNS_OPTIONS,
  integerOption,
  listOption,
  type OptionValues,
  sizeOption,
  stringOption,
  UsageError,
} from '../command.js'
import { printCommit } from '../commit-output.js'
import { prepareInput } from '../input-paths.js'
import { openWatchedTable } from '../interrupt.js'
import { WRITE_MODE_OPTIONS, writeModeOption } from '../write-mode-options.js'

/** `delta-rlc append`: rows from JSON lines, CSV or Parquet files, as one commit. */
export const appendCommand: Command = {
  name: 'append',
  summary: 'Append the rows of JSON-lines, CSV or Parquet files as one commit.',
  usage: '<table> <file>...|- [--format json|csv|parquet] [options]',
  details: [
    'Files are read with DuckDB and converted to the table schema; columns are matched by name',
    '(missing columns are null; an input column the table lacks is refused unless --columns or',
    '--ignore-extra-columns leaves it out, or --schema-mode merge adds it to the schema in the same',
    'commit; with --mode overwrite, --schema-mode overwrite replaces the schema with the input columns,',
    'partitioned by --partition-by or as before). Large inputs are read in batches into one write, whose',
    'files are cut near --target-file-size, and one commit: either every row lands or none does. A file given as - is standard input',
    '(--format is then required), e.g. cat rows.csv | delta-rlc append ./t - --format csv.',
  ].join('\n'),
  options: {
    format: {
      type: 'string',
      value: 'FMT',
      help: 'input format: json (lines), csv or parquet (default: by extension)',
    },
    'batch-rows': { type: 'string', value: 'N', help: `rows per batch (default ${DEFAULT_BATCH_ROWS})` },
    'target-file-size': { type: 'string', value: 'SIZE', help: 'bytes per new data file, e.g. 128MB' },
    'schema-mode': {
      type: 'string',
      value: 'merge|overwrite',
      help: 'merge: add the input columns the table lacks to its schema (nullable) in the same commit, and widen columns where the table enables type widening (Parquet input); overwrite (with --mode overwrite): replace the schema with the input columns',
    },
    'partition-by': {
      type: 'string',
      value: 'COLS',
      help: 'with --schema-mode overwrite: the new partition columns, comma-separated',
    },
    ...WRITE_MODE_OPTIONS,
    ...INPUT_COLUMNS_OPTIONS,
    ...CONFLICTS_OPTION,
  },
  positionals: { min: 2, max: Number.POSITIVE_INFINITY, names: '<table> <file>...' },
  async run(ctx, values, [location, ...files]) {
    const loc = location as string
    // Every option is read (and a malformed one refused) before the table or the input is touched.
    const format = stringOption(values, 'format')
    const options = {
      columns: listOption(values, 'columns'),
      extraColumns: values['ignore-extra-columns'] === true ? ('ignore' as const) : ('error' as const),
      batchRows: integerOption(values, 'batch-rows', 'append'),
      targetFileSize: sizeOption(values, 'target-file-size', 'append'),
      overwrite: writeModeOption(values, 'append'),
      schemaMode: schemaModeOption(values),
      partitionBy: listOption(values, 'partition-by'),
    }
    if (options.schemaMode === 'overwrite' && options.overwrite === undefined) {
      throw new UsageError('--schema-mode overwrite needs --mode overwrite', 'append', {
        argument: 'schema-mode',
      })
    }
    const partial =
      options.overwrite?.replaceWhere !== undefined
        ? 'replace-where'
        : options.overwrite?.partitionOverwriteMode === 'dynamic'
          ? 'partition-overwrite-mode'
          : undefined
    if (options.schemaMode === 'overwrite' && partial !== undefined) {
      throw new UsageError(
        `--schema-mode overwrite replaces every row: it cannot be given with --${partial}`,
        'append',
        {
          argument: 'schema-mode',
        },
      )
    }
    if (options.partitionBy !== undefined && options.schemaMode !== 'overwrite') {
      throw new UsageError('--partition-by needs --schema-mode overwrite', 'append', {
        argument: 'partition-by',
      })
    }
    // The watched store counts the staged files an interrupt removes, which the report names.
    const { table, writes } = await openWatchedTable(loc, values)
    let input: Awaited<ReturnType<typeof prepareInput>> | undefined
    try {
      input = await prepareInput(ctx, files, format, 'append')
      if (
        options.schemaMode !== undefined &&
        (options.overwrite !== undefined || input.format === 'parquet')
      ) {
        // A schema that follows the input's declared types (an overwrite's, or a Parquet input's
        // wider types) is the library's appendFile: one transaction, as below, without a progress bar.
        const result = await table.appendFile(input.paths, {
          format: input.format,
          columns: options.columns,
          ignoreExtraColumns: options.extraColumns === 'ignore',
          batchRows: options.batchRows,
          targetFileSize: options.targetFileSize,
          ...(options.overwrite === undefined ? {} : { mode: 'overwrite' as const, ...options.overwrite }),
          schemaMode: options.schemaMode,
          partitionBy: options.partitionBy,
          signal: ctx.io.interrupt,
        })
        printCommit(ctx, loc, result, { inputFiles: files.length, inputRows: result.metrics?.numOutputRows })
        return
      }
      const outcome = await appendInputFiles(ctx, table, input.paths, {
        ...options,
        // An overwrite's schema mode took the branch above.
        schemaMode: options.schemaMode === 'merge' ? 'merge' : undefined,
        format: input.format,
        writes,
      })
      printCommit(ctx, loc, outcome.result, { inputFiles: files.length, inputRows: outcome.rows })
    } finally {
      await table.close()
      await input?.cleanup()
    }
  },
}

/** `--schema-mode`: `merge`, `overwrite`, or absent. */
function schemaModeOption(values: OptionValues): 'merge' | 'overwrite' | undefined {
  const mode = stringOption(values, 'schema-mode')
  if (mode === undefined) return undefined
  if (mode !== 'merge' && mode !== 'overwrite') {
    throw new UsageError(`--schema-mode must be merge or overwrite, got '${mode}'`, 'append', {
      argument: 'schema-mode',
    })
  }
  return mode
}
