import { DeltaTable, isDeltaError, parseDdlSchema, type StructType } from '../../index.js'
import { appendInputFiles, DEFAULT_BATCH_ROWS } from '../append-input.js'
import {
  CONFLICTS_OPTION,
  type Command,
  integerOption,
  listOption,
  openOptions,
  stringOption,
  stringsOption,
  UsageError,
} from '../command.js'
import { commitJson } from '../commit-output.js'
import { inferSchema, inputFormatOf, openInputFiles } from '../input-file.js'
import { formatCount } from '../terminal.js'
import { schemaLines } from './describe.js'

/** `delta-rlc create`: a new table from a DDL schema, or from data files with an inferred schema. */
export const createCommand: Command = {
  name: 'create',
  summary: 'Create a table from a schema, or from data files (schema inferred, rows appended).',
  usage: '<table> (--schema DDL | --from FILE) [options]',
  details: [
    "The schema is Spark DDL, e.g. 'id long not null, name string, amount decimal(10,2), day date'.",
    'With --from, the schema is inferred from the file (JSON lines, CSV or Parquet, read by DuckDB)',
    'unless --schema is also given, and the rows are appended as version 1.',
    'Deletion vectors are enabled unless --no-deletion-vectors is given: row-level concurrency needs them.',
  ].join('\n'),
  options: {
    schema: {
      type: 'string',
      value: 'DDL',
      help: "column definitions, e.g. 'id long not null, name string'",
    },
    from: {
      type: 'string',
      value: 'FILE',
      multiple: true,
      help: 'infer the schema from this file and append its rows',
    },
    format: {
      type: 'string',
      value: 'FMT',
      help: 'format of --from files: json, csv or parquet (default: by extension)',
    },
    'partition-by': { type: 'string', value: 'COLS', help: 'partition columns, comma-separated' },
    property: { type: 'string', value: 'KEY=VALUE', multiple: true, help: 'a table property' },
    'no-deletion-vectors': { type: 'boolean', help: 'do not enable delta.enableDeletionVectors' },
    'if-not-exists': { type: 'boolean', help: 'succeed without change when a table is already there' },
    'batch-rows': {
      type: 'string',
      value: 'N',
      help: `rows per append batch (default ${DEFAULT_BATCH_ROWS})`,
    },
    ...CONFLICTS_OPTION,
  },
  positionals: { min: 1, max: 1, names: '<table>' },
  async run(ctx, values, [location]) {
    const loc = location as string
    const ddl = stringOption(values, 'schema')
    const from = stringsOption(values, 'from')
    if (ddl === undefined && from.length === 0) {
      throw new UsageError('create needs --schema DDL or --from FILE', 'create')
    }
    const properties: Record<string, string> = {}
    if (values['no-deletion-vectors'] !== true) properties['delta.enableDeletionVectors'] = 'true'
    for (const p of stringsOption(values, 'property')) {
      const eq = p.indexOf('=')
      if (eq <= 0)
        throw new UsageError(`--property needs KEY=VALUE, got '${p}'`, 'create', { argument: 'property' })
      properties[p.slice(0, eq).trim()] = p.slice(eq + 1).trim()
    }
    let schema: StructType = ddl === undefined ? { type: 'struct', fields: [] } : parseDdlSchema(ddl)
    if (from.length > 0) {
      const format = inputFormatOf(from[0] as string, stringOption(values, 'format'))
      const input = await openInputFiles(from, format)
      try {
        if (ddl === undefined) schema = inferSchema(input.columns)
        // A bad value is refused before the table exists, rather than after an empty version 0.
        await input.checkRows(schema)
      } finally {
        input.close()
      }
    }
    const partitionBy = listOption(values, 'partition-by') ?? []
    if (values['if-not-exists'] === true) {
      const existing = await openIfExists(loc)
      if (existing !== undefined) {
        if (ctx.json) ctx.printJson({ table: loc, created: false, version: existing })
        else
          ctx.print(
            `table ${ctx.out.paint('bold', loc)} already exists (version ${existing}); nothing changed`,
          )
        return
      }
    }
    const table = await DeltaTable.create(loc, { schema, partitionBy, properties }, openOptions(values))
    try {
      let appended: Awaited<ReturnType<typeof appendInputFiles>> | undefined
      if (from.length > 0) {
        try {
          appended = await appendInputFiles(ctx, table, from, {
            format: stringOption(values, 'format'),
            batchRows: integerOption(values, 'batch-rows', 'create'),
          })
        } catch (err) {
          ctx.io.stderr.write(
            `${ctx.err.paint('yellow', 'note')}: table ${loc} was created (version 0) and holds no rows; the append of the --from files failed\n`,
          )
          throw err
        }
      }
      const final = await table.snapshot()
      if (ctx.json) {
        ctx.printJson({
          table: loc,
          created: true,
          version: final.version,
          schema: final.schema,
          partitionColumns: final.partitionColumns,
          properties: final.properties,
          ...(appended ? { rowsAppended: appended.rows, append: commitJson(loc, appended.result) } : {}),
        })
        return
      }
      const p = ctx.out
      ctx.print(`${p.paint('green', 'created')} table ${p.paint('bold', loc)} (version 0)`)
      for (const line of schemaLines(final.schema, p)) ctx.print(`  ${line}`)
      if (final.partitionColumns.length > 0)
        ctx.print(`  ${p.paint('dim', 'partitioned by')} ${final.partitionColumns.join(', ')}`)
      if (appended) {
        ctx.print(
          `${p.paint('green', 'appended')} ${formatCount(appended.rows)} rows from ${from.length} ${appended.format} file${from.length === 1 ? '' : 's'} as version ${appended.result.version}`,
        )
      }
    } finally {
      await table.close()
    }
  },
}

/** The latest version of the table at `location`, or undefined when there is none. */
async function openIfExists(location: string): Promise<bigint | undefined> {
  try {
    const table = await DeltaTable.open(location)
    try {
      return (await table.snapshot()).version
    } finally {
      await table.close()
    }
  } catch (err) {
    if (isDeltaError(err, 'DELTA_TABLE_NOT_FOUND')) return undefined
    throw err
  }
}
