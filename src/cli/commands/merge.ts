import type { DeltaTable, StructType } from '../../index.js'
import {
  type InsertClause,
  type MatchedClause,
  parseInsertClause,
  parseMatchedClause,
} from '../clause-text.js'
import {
  CONFLICTS_OPTION,
  type Command,
  type CommandContext,
  stringOption,
  stringsOption,
  UsageError,
} from '../command.js'
import { printCommit } from '../commit-output.js'
import { deltaTypeOf, type InputFormat, inputFormatOf, openInputFiles } from '../input-file.js'
import { type PreparedInput, prepareInput, STDIN_PATH } from '../input-paths.js'
import { openWatchedTable, runCommitting } from '../interrupt.js'

/** Source rows above this count are refused: MERGE holds its source in memory. */
const MAX_SOURCE_ROWS = 5_000_000

/** `delta-rlc merge`: upsert (and more) from a source file. */
export const mergeCommand: Command = {
  name: 'merge',
  summary: 'MERGE the rows of a JSON-lines, CSV or Parquet file into the table (upsert by default).',
  usage: "<table> <source-file> --on 'target.id = source.id' [clauses]",
  details: [
    'Clauses (each repeatable, tried in order; the first that applies acts):',
    "  --when-matched          'update *' | 'update set c = source.c, ...' | 'delete'",
    "  --when-not-matched      'insert *' | 'insert set c = source.c, ...'",
    "  --when-not-matched-by-source  'update set ...' | 'delete'",
    'Any clause may start with a condition: "and source.op = \'D\' then delete".',
    "Without clauses: --when-matched 'update *' --when-not-matched 'insert *' (an upsert).",
    'Source columns with a table column of the same name take its type; others keep the type',
    'DuckDB infers from the file. With --schema-evolution (MERGE WITH SCHEMA EVOLUTION) the source',
    "columns an 'update *' / 'insert *' clause, or an assignment 'c = source.c', gives the table",
    'are added to its schema in the same commit; where the table enables type widening, a Parquet',
    "source column of a wider type widens the table's column.",
  ].join('\n'),
  options: {
    on: { type: 'string', value: 'COND', help: "join condition, e.g. 'target.id = source.id' (required)" },
    'when-matched': {
      type: 'string',
      value: 'CLAUSE',
      multiple: true,
      help: 'clause for matched target rows',
    },
    'when-not-matched': {
      type: 'string',
      value: 'CLAUSE',
      multiple: true,
      help: 'clause for unmatched source rows',
    },
    'when-not-matched-by-source': {
      type: 'string',
      value: 'CLAUSE',
      multiple: true,
      help: 'clause for target rows no source row matches',
    },
    format: {
      type: 'string',
      value: 'FMT',
      help: 'source format: json (lines), csv or parquet (default: by extension)',
    },
    'schema-evolution': {
      type: 'boolean',
      help: 'add the source columns the clauses assign and the table lacks to its schema (nullable)',
    },
    ...CONFLICTS_OPTION,
  },
  positionals: { min: 2, max: 2, names: '<table> <source-file>|-' },
  async run(ctx, values, [location, sourcePath]) {
    const loc = location as string
    const on = stringOption(values, 'on')
    if (on === undefined || on.trim() === '') {
      throw new UsageError("merge needs --on, e.g. --on 'target.id = source.id'", 'merge', { argument: 'on' })
    }
    let whenMatched: MatchedClause[] = stringsOption(values, 'when-matched').map((t) =>
      parseMatchedClause(t, 'matched'),
    )
    let whenNotMatched: InsertClause[] = stringsOption(values, 'when-not-matched').map(parseInsertClause)
    const whenNotMatchedBySource = stringsOption(values, 'when-not-matched-by-source').map((t) =>
      parseMatchedClause(t, 'not-matched-by-source'),
    )
    if (whenMatched.length + whenNotMatched.length + whenNotMatchedBySource.length === 0) {
      whenMatched = [{ update: '*' }]
      whenNotMatched = [{ insert: '*' }]
    }
    const schemaEvolution = values['schema-evolution'] === true
    // A format the extension cannot tell is refused before the table is opened.
    if (sourcePath !== STDIN_PATH) inputFormatOf(sourcePath as string, stringOption(values, 'format'))
    const { table, writes } = await openWatchedTable(loc, values)
    let input: PreparedInput | undefined
    try {
      input = await prepareInput(ctx, [sourcePath as string], stringOption(values, 'format'), 'merge')
      const { paths, format } = input
      let sourceRows = 0
      const result = await runCommitting(ctx, writes, async (signal) => {
        const { rows, sourceSchema } = await readSource(ctx, table, paths[0] as string, format, signal, {
          declaredTypes: schemaEvolution && format === 'parquet',
        })
        sourceRows = rows.length
        return table.merge(rows, {
          on,
          whenMatched,
          whenNotMatched,
          whenNotMatchedBySource,
          sourceSchema,
          ...(schemaEvolution ? { schemaEvolution } : {}),
          signal,
        })
      })
      printCommit(ctx, loc, result, { sourceRows })
    } finally {
      await table.close()
      await input?.cleanup()
    }
  },
}

/**
 * Reads the whole source file into rows, typed by the table's columns where names match (with
 * `declaredTypes`, a Parquet source's own types, which schema evolution may widen the table to).
 */
async function readSource(
  ctx: CommandContext,
  table: DeltaTable,
  sourcePath: string,
  format: InputFormat,
  signal: AbortSignal | undefined,
  options: { readonly declaredTypes: boolean } = { declaredTypes: false },
): Promise<{ rows: Record<string, unknown>[]; sourceSchema: StructType }> {
  const snap = await table.snapshot()
  const input = await openInputFiles([sourcePath], format)
  const rows: Record<string, unknown>[] = []
  let sourceSchema: StructType
  try {
    const byName = new Map(snap.schema.fields.map((f) => [f.name.toLowerCase(), f]))
    sourceSchema = {
      type: 'struct',
      fields: input.columns.map((c) => {
        const f = byName.get(c.name.toLowerCase())
        return {
          name: f?.name ?? c.name,
          type: f === undefined || options.declaredTypes ? deltaTypeOf(c.duckType, c.name) : f.type,
          nullable: true,
          metadata: {},
        }
      }),
    }
    const progress = ctx.progress('read source', undefined, 'rows')
    try {
      for await (const batch of input.readRows(sourceSchema, 50_000, 'infer', signal)) {
        for (const r of batch) rows.push(r)
        if (rows.length > MAX_SOURCE_ROWS) {
          throw new UsageError(
            `The merge source has more than ${MAX_SOURCE_ROWS} rows; split it into several merges`,
            'merge',
          )
        }
        progress.update(rows.length)
      }
    } finally {
      progress.finish()
    }
  } finally {
    input.close()
  }
  return { rows, sourceSchema }
}
