import { stat } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { DeltaTable, InvalidArgumentError, isDeltaError, type StructType } from '../../index.js'
import { appendInputFiles, DEFAULT_BATCH_ROWS } from '../append-input.js'
import {
  CONFLICTS_OPTION,
  type Command,
  type CommandContext,
  ddlArgument,
  INPUT_COLUMNS_OPTIONS,
  integerOption,
  listOption,
  type OptionValues,
  openOptions,
  stringOption,
  stringsOption,
  UsageError,
} from '../command.js'
import { commitJson } from '../commit-output.js'
import {
  deltaTypeOf,
  type InputColumn,
  inferSchema,
  type NaiveTimestampType,
  openInputFiles,
} from '../input-file.js'
import { type PreparedInput, prepareInput } from '../input-paths.js'
import { formatCount } from '../terminal.js'
import { clusteringColumnsOf, schemaLines } from './describe.js'

/** `delta-rlc create`: a new table from a DDL schema, or from data files with an inferred schema. */
export const createCommand: Command = {
  name: 'create',
  summary: 'Create a table from a schema, or from data files (schema inferred, rows appended).',
  usage: '<table> (--schema DDL | --from FILE) [options]',
  details: [
    "The schema is Spark DDL, e.g. 'id long not null, name string, amount decimal(10,2), day date'.",
    'With --from, the schema is inferred from the file (JSON lines, CSV or Parquet, read by DuckDB)',
    'unless --schema is also given, and the rows are appended as version 1. CSV and JSON times',
    'without a zone are inferred as timestamp (UTC) unless --timestamp-ntz is given. --from - reads',
    'standard input (with --format).',
    'Deletion vectors are enabled unless --no-deletion-vectors is given: row-level concurrency needs them.',
    '--cluster-by makes a clustered table (the clustering feature; not with --partition-by).',
    "Generated columns: 'ts timestamp, day date GENERATED ALWAYS AS (CAST(ts AS DATE))'; identity columns:",
    "'id long GENERATED ALWAYS AS IDENTITY' (or BY DEFAULT, optionally (START WITH n INCREMENT BY m)).",
    'Appends compute generated values and assign identity values.',
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
    'cluster-by': {
      type: 'string',
      value: 'COLS',
      help: 'clustering columns, comma-separated (liquid clustering: OPTIMIZE clusters by them)',
    },
    property: { type: 'string', value: 'KEY=VALUE', multiple: true, help: 'a table property' },
    'timestamp-ntz': {
      type: 'boolean',
      help: 'infer CSV/JSON times without a zone as timestamp_ntz (default: timestamp, read as UTC)',
    },
    ...INPUT_COLUMNS_OPTIONS,
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
    // Written either way: the library's default is on, so leaving the property out would not opt out.
    properties['delta.enableDeletionVectors'] = values['no-deletion-vectors'] === true ? 'false' : 'true'
    for (const p of stringsOption(values, 'property')) {
      const eq = p.indexOf('=')
      if (eq <= 0)
        throw new UsageError(`--property needs KEY=VALUE, got '${p}'`, 'create', { argument: 'property' })
      properties[p.slice(0, eq).trim()] = p.slice(eq + 1).trim()
    }
    let schema: StructType = ddl === undefined ? { type: 'struct', fields: [] } : ddlArgument(ddl, 'create')
    // A malformed option, or a location that is a file, is refused before any input is read.
    openOptions(values)
    const columns = listOption(values, 'columns')
    const extraColumns = values['ignore-extra-columns'] === true ? ('ignore' as const) : ('error' as const)
    const batchRows = integerOption(values, 'batch-rows', 'create')
    await refuseFileLocation(loc)
    const prepared =
      from.length === 0 ? undefined : await prepareInput(ctx, from, stringOption(values, 'format'), 'create')
    try {
      if (prepared !== undefined) {
        const input = await openInputFiles(prepared.paths, prepared.format, { columns })
        try {
          if (ddl === undefined) {
            // Text carries no zone: such times are read as UTC unless the user wants them naive,
            // which would need the timestampNtz feature (protocol 3/7) on the new table.
            const naive =
              prepared.format === 'parquet' || values['timestamp-ntz'] === true
                ? 'timestamp_ntz'
                : 'timestamp'
            schema = inferSchema(input.columns, naive)
            noteNaiveTimestamps(ctx, input.columns, naive, prepared.format)
          }
          // A bad value is refused before the table exists, rather than after an empty version 0.
          await input.checkRows(schema, extraColumns)
        } finally {
          input.close()
        }
      }
      await createTable(ctx, values, loc, schema, properties, prepared, {
        columns,
        extraColumns,
        batchRows,
      })
    } finally {
      await prepared?.cleanup()
    }
  },
}

/** Creates the table, appends the prepared input to it, and prints the outcome. */
async function createTable(
  ctx: CommandContext,
  values: OptionValues,
  loc: string,
  schema: StructType,
  properties: Record<string, string>,
  prepared: PreparedInput | undefined,
  read: Pick<Parameters<typeof appendInputFiles>[3], 'columns' | 'extraColumns' | 'batchRows'>,
): Promise<void> {
  const partitionBy = listOption(values, 'partition-by') ?? []
  const clusterBy = listOption(values, 'cluster-by')
  if (values['if-not-exists'] === true) {
    const existing = await openIfExists(loc)
    if (existing !== undefined) {
      if (ctx.json) ctx.printJson({ table: loc, created: false, version: existing })
      else
        ctx.print(`table ${ctx.out.paint('bold', loc)} already exists (version ${existing}); nothing changed`)
      return
    }
  }
  const table = await DeltaTable.create(
    loc,
    { schema, partitionBy, properties, ...(clusterBy === undefined ? {} : { clusterBy }) },
    openOptions(values),
  )
  try {
    let appended: Awaited<ReturnType<typeof appendInputFiles>> | undefined
    if (prepared !== undefined) {
      try {
        appended = await appendInputFiles(ctx, table, prepared.paths, { ...read, format: prepared.format })
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
        ...(clusterBy === undefined ? {} : { clusteringColumns: clusteringColumnsOf(final) }),
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
    if (clusterBy !== undefined)
      ctx.print(`  ${p.paint('dim', 'clustered by')} ${clusteringColumnsOf(final).join(', ')}`)
    if (appended) {
      ctx.print(
        `${p.paint('green', 'appended')} ${formatCount(appended.rows)} rows from ${prepared?.paths.length ?? 0} ${appended.format} file${prepared?.paths.length === 1 ? '' : 's'} as version ${appended.result.version}`,
      )
    }
  } finally {
    await table.close()
  }
}

/** Says on stderr which zone-less input times were inferred as UTC `timestamp`. */
function noteNaiveTimestamps(
  ctx: CommandContext,
  columns: readonly InputColumn[],
  naive: NaiveTimestampType,
  format: string,
): void {
  if (naive !== 'timestamp' || ctx.json) return
  const names = columns.filter((c) => deltaTypeOf(c.duckType, c.name, 'timestamp_ntz') === 'timestamp_ntz')
  if (names.length === 0) return
  ctx.io.stderr.write(
    `${ctx.err.paint('yellow', 'note')}: ${format} column${names.length === 1 ? '' : 's'} ${names.map((c) => `'${c.name}'`).join(', ')} ${names.length === 1 ? 'holds' : 'hold'} times without a zone: inferred as timestamp, read as UTC (--timestamp-ntz keeps them as timestamp_ntz)\n`,
  )
}

/**
 * Refuses a local location that is a file, or lies under one: a table is a directory (its data
 * files and its `_delta_log`), and the store would otherwise fail to make that directory.
 */
async function refuseFileLocation(location: string): Promise<void> {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(location) && !location.startsWith('file://')) return
  let path = resolve(location.startsWith('file://') ? fileURLToPath(location) : location)
  for (;;) {
    const info = await stat(path).catch(() => undefined)
    if (info !== undefined && !info.isDirectory()) {
      const what = path === resolve(location.startsWith('file://') ? fileURLToPath(location) : location)
      throw new InvalidArgumentError(
        what
          ? `${path} is a file, not a directory: a Delta table is a directory`
          : `${path} is a file, so no table can be created under it at ${location}`,
        {
          argument: 'table',
          hint: 'Give the path of a directory (it is created when missing), not of a data file; to load a file into a new table, use --from FILE.',
        },
      )
    }
    if (info !== undefined) return
    const parent = dirname(path)
    if (parent === path) return
    path = parent
  }
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
