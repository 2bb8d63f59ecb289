import { createReadStream, createWriteStream, rmSync } from 'node:fs'
import { access, mkdtemp, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, extname, join, resolve } from 'node:path'
import { pipeline } from 'node:stream/promises'
import {
  type DuckDBArrayType,
  type DuckDBConnection,
  type DuckDBDecimalType,
  type DuckDBListType,
  DuckDBListValue,
  type DuckDBMapType,
  type DuckDBStructType,
  type DuckDBType,
  DuckDBTypeId,
} from '@duckdb/node-api'
import {
  FileNotFoundError,
  InvalidArgumentError,
  isDeltaError,
  StorageError,
  type StructField,
  type StructType,
  UnsupportedError,
} from '../index.js'
import {
  createDuckDbInstance,
  openStream,
  type ResultStream,
  type StreamFailure,
} from '../subpaths/duckdb.js'
import { UsageError } from './command.js'
import { type ColumnRead, columnRead, NUMBER_MACROS, readsAsText, typeText } from './input-values.js'
import { JsonNumberText } from './json-number-text.js'

/** Formats of input files. */
export type InputFormat = 'json' | 'csv' | 'parquet'

/** A Delta data type, as the schema objects hold it. */
type DataType = StructField['type']

/**
 * What happens to input columns the table does not have: `'error'` refuses them, `'infer'` keeps
 * them with their inferred type (a MERGE source), `'ignore'` leaves them out.
 */
export type ExtraColumns = 'error' | 'infer' | 'ignore'

/** An input column: its name in the file and the type DuckDB reads it as. */
export interface InputColumn {
  readonly name: string
  readonly duckType: DuckDBType
}

/** Input files opened through DuckDB. Close it when done. */
export interface InputFiles {
  readonly format: InputFormat
  /** The columns DuckDB found, in file order. */
  readonly columns: readonly InputColumn[]
  /** Counts the rows (reads CSV and JSON once; Parquet from its footer). */
  countRows(): Promise<number>
  /**
   * Streams the rows in batches, each value converted to the form the table API takes for its
   * column type (bigint longs, decimal text, ISO timestamps, ...).
   *
   * @param schema - the type each column is read as; input columns outside it are an error
   *   unless `extraColumns` says otherwise
   * @param batchRows - rows per batch
   * @param extraColumns - what happens to input columns outside the schema (default `'error'`)
   * @param signal - stops the reading between chunks
   * @throws {InvalidArgumentError} naming the file, line or row, and column of the first value
   *   that does not convert, or when fewer rows were read than the input holds: a short read is
   *   never taken for the end of the input
   */
  readRows(
    schema: StructType,
    batchRows: number,
    extraColumns?: ExtraColumns,
    signal?: AbortSignal,
  ): AsyncGenerator<Record<string, unknown>[]>
  /**
   * Converts every value to its column type without keeping any (one pass over the input), so
   * that a command can refuse bad input before it changes anything.
   *
   * @param schema - the type each column is read as
   * @param extraColumns - as for {@link InputFiles.readRows}
   * @returns the number of rows
   * @throws {InvalidArgumentError} naming the file, line or row, and column of a bad value
   */
  checkRows(schema: StructType, extraColumns?: ExtraColumns): Promise<number>
  close(): void
}

/**
 * The format of an input file: the explicit one, else from its extension.
 *
 * @param path - the file
 * @param explicit - `--format`, when given
 * @returns the format
 * @throws {UsageError} for an unknown format or extension
 */
export function inputFormatOf(path: string, explicit: string | undefined): InputFormat {
  const f = (explicit ?? '').toLowerCase()
  if (f === 'json' || f === 'jsonl' || f === 'ndjson') return 'json'
  if (f === 'csv' || f === 'parquet') return f
  if (f !== '') {
    throw new UsageError(`Unknown input format '${explicit}': use json, csv or parquet`, undefined, {
      argument: 'format',
    })
  }
  const ext = extname(path).toLowerCase()
  if (ext === '.json' || ext === '.jsonl' || ext === '.ndjson') return 'json'
  if (ext === '.csv' || ext === '.tsv' || ext === '.txt') return 'csv'
  if (ext === '.parquet' || ext === '.pq') return 'parquet'
  throw new UsageError(
    `Cannot tell the format of '${path}' from its extension: pass --format json|csv|parquet`,
    undefined,
    { argument: 'format' },
  )
}

/**
 * Opens input files through an embedded DuckDB (no extension is installed or loaded).
 *
 * @param paths - one or more files of the same format
 * @param format - their format
 * @returns the opened input
 * @throws {FileNotFoundError} when a file does not exist
 * @throws {InvalidArgumentError} when DuckDB cannot read the files
 */
export async function openInputFiles(
  paths: readonly string[],
  format: InputFormat,
  options: InputOptions = {},
): Promise<InputFiles> {
  const absolute = paths.map((p) => resolve(p))
  for (const p of absolute) {
    try {
      await access(p)
    } catch (err) {
      throw new FileNotFoundError(p, { cause: err, hint: 'Check the input file path.' })
    }
  }
  const instance = await createDuckDbInstance()
  const con = await instance.connect()
  let scratch: string | undefined
  const close = () => {
    con.closeSync()
    instance.closeSync()
    if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true })
  }
  try {
    await con.run(`SET TimeZone = 'UTC'`)
    for (const macro of NUMBER_MACROS) await con.run(macro)
    const scratchFile = async (name: string): Promise<string> => {
      scratch ??= await mkdtemp(join(tmpdir(), 'delta-rlc-input-'))
      return join(scratch, name)
    }
    // The files DuckDB reads: a stream (a FIFO, a device) is read once into a file, since
    // DuckDB reads its input several times; a JSON file is copied with its numbers as text
    // (see JsonNumberText), since DuckDB's JSON reader parses numbers as doubles.
    const typed: string[] = []
    const read: string[] = []
    const names = new Map<string, string>()
    for (const [i, p] of absolute.entries()) {
      let from = p
      if (!(await stat(p)).isFile()) {
        from = await scratchFile(`${i}-stream-${basename(p)}`)
        await pipeline(createReadStream(p), createWriteStream(from))
      }
      typed.push(from)
      let to = from
      if (format === 'json') {
        to = await scratchFile(`${i}-text-${basename(p)}`)
        await pipeline(createReadStream(from), new JsonNumberText(), createWriteStream(to))
      }
      read.push(to)
      names.set(from, p)
      names.set(to, p)
    }
    const csvOptions = format === 'csv' ? await csvReadOptions(con, read, names) : ''
    const sourceOf = (files: readonly string[], text: readonly string[] = []): string => {
      const list = `[${files.map(sqlString).join(', ')}]`
      if (format === 'json') return `read_json_auto(${list}, union_by_name = true)`
      if (format === 'parquet') return `read_parquet(${list}, union_by_name = true)`
      const types =
        text.length === 0 ? '' : `, types = {${text.map((c) => `${sqlString(c)}: 'VARCHAR'`).join(', ')}}`
      return `read_csv_auto(${list}, union_by_name = true, header = true${csvOptions}${types})`
    }
    const source = sourceOf(read)
    let columns: InputColumn[]
    try {
      // The types are DuckDB's reading of the input as given (JSON numbers as numbers).
      const probe = await con.run(
        `SELECT * FROM ${format === 'json' ? `read_json_auto([${typed.map(sqlString).join(', ')}], union_by_name = true)` : source} LIMIT 0`,
      )
      const names = probe.columnNames()
      const types = probe.columnTypes()
      columns = names.map((name, i) => ({ name, duckType: types[i] as DuckDBType }))
    } catch (err) {
      throw new InvalidArgumentError(
        `DuckDB cannot read ${paths.join(', ')} as ${format}: ${firstLine(err)}`,
        {
          argument: 'input',
          cause: err,
          hint: 'Check the file format (pass --format to override the extension) and its contents.',
        },
      )
    }
    if (options.columns !== undefined) columns = chosenColumns(columns, options.columns, paths)
    let counted: number | undefined
    const countRows = async (): Promise<number> => {
      try {
        counted ??= Number((await con.runAndReadAll(`SELECT count(*) FROM ${source}`)).getRows()[0]?.[0] ?? 0)
        return counted
      } catch (err) {
        throw new InvalidArgumentError(`Counting the rows of the input failed: ${firstLine(err)}`, {
          argument: 'input',
          cause: err,
          hint: 'The file is malformed where DuckDB says; fix it and run the command again.',
        })
      }
    }
    const input: InputSource = {
      con,
      format,
      files: read,
      nameOf: (file) => names.get(file) ?? file,
      source,
      sourceOf,
      columns,
      countRows,
    }
    return {
      format,
      columns,
      countRows,
      readRows: (schema, batchRows, extra = 'error', signal) =>
        readBatches(input, schema, batchRows, extra, signal),
      checkRows: async (schema, extra = 'error') => {
        const read = columnsRead(input, schema, extra)
        const selected = selectColumns(read, schema, extra)
        return checkedCount(read, selected, selectSql(read, selected))
      },
      close,
    }
  } catch (err) {
    close()
    throw err
  }
}

/** How input files are read. */
export interface InputOptions {
  /** Read only these input columns (matched case-insensitively); the others are left out. */
  readonly columns?: readonly string[] | undefined
}

/** The input columns `--columns` names, in file order. */
function chosenColumns(
  columns: readonly InputColumn[],
  chosen: readonly string[],
  paths: readonly string[],
): InputColumn[] {
  const wanted = new Set(chosen.map((c) => c.toLowerCase()))
  for (const name of chosen) {
    if (!columns.some((c) => c.name.toLowerCase() === name.toLowerCase())) {
      throw new InvalidArgumentError(
        `--columns names '${name}', which is not a column of ${paths.join(', ')}`,
        {
          argument: 'columns',
          hint: `The input has: ${columns.map((c) => c.name).join(', ')}.`,
        },
      )
    }
  }
  return columns.filter((c) => wanted.has(c.name.toLowerCase()))
}

/**
 * The input as read for `schema`: with `'ignore'`, without the columns the table lacks, so that
 * every reader below (and the search for a bad value) sees the same columns as the query.
 */
function columnsRead(input: InputSource, schema: StructType, extra: ExtraColumns): InputSource {
  const byName = new Map(schema.fields.map((f) => [f.name.toLowerCase(), f]))
  const columns =
    extra === 'ignore' ? input.columns.filter((c) => byName.has(c.name.toLowerCase())) : input.columns
  if (input.format !== 'csv') return { ...input, columns }
  // CSV values are read as text where the column's type is checked from the text (numbers
  // exactly, digit by digit), so that no value passes through the type DuckDB's sniffer guessed
  // from the first rows.
  const text = columns
    .filter((c) => {
      const field = byName.get(c.name.toLowerCase())
      return field === undefined
        ? c.duckType.typeId !== DuckDBTypeId.DATE && !isTimestamp(c.duckType)
        : readsAsText(field.type)
    })
    .map((c) => c.name)
  return {
    ...input,
    columns,
    source: input.sourceOf(input.files, text),
    sourceOf: (files) => input.sourceOf(files, text),
  }
}

function isTimestamp(t: DuckDBType): boolean {
  return (
    t.typeId === DuckDBTypeId.TIMESTAMP ||
    t.typeId === DuckDBTypeId.TIMESTAMP_TZ ||
    t.typeId === DuckDBTypeId.TIMESTAMP_S ||
    t.typeId === DuckDBTypeId.TIMESTAMP_MS ||
    t.typeId === DuckDBTypeId.TIMESTAMP_NS
  )
}

/**
 * The options that make DuckDB's CSV reader honour double quotes: when its sniffer finds no
 * quote character in the rows it samples, it reads a `"` as text, so an unterminated quote
 * would pass silently (and a quoted field after the sample would be split at its commas).
 * Such a file is first read strictly with `"` as the quote, which names the line of a quote
 * that is never closed.
 *
 * @returns extra `read_csv_auto` options, or `''` when the sniffer's dialect stands
 * @throws {InvalidArgumentError} naming the file and line of an unterminated quote
 */
async function csvReadOptions(
  con: DuckDBConnection,
  files: readonly string[],
  names: ReadonlyMap<string, string>,
): Promise<string> {
  const unquoted: { file: string; delimiter: string; columns: readonly string[] }[] = []
  for (const file of files) {
    let row: readonly unknown[] | undefined
    try {
      row = (
        await con.runAndReadAll(
          `SELECT Delimiter, Quote, list_transform(Columns, c -> c.name) FROM sniff_csv(${sqlString(file)})`,
        )
      ).getRows()[0]
    } catch {
      // The reader reports a file it cannot read at all, with its own message.
      return ''
    }
    const quote = String(row?.[1] ?? '')
    if (quote === '"') continue
    if (quote !== '' && quote !== '(empty)' && quote !== '\0') return ''
    const list = row?.[2]
    const columns = list instanceof DuckDBListValue ? list.items.map(String) : []
    unquoted.push({ file, delimiter: String(row?.[0] ?? ','), columns })
  }
  if (unquoted.length === 0) return ''
  const forced = `, quote = '"', escape = '"'`
  for (const u of unquoted) {
    // Past the sniffer's sample the reader itself names an unterminated quote's line. Within
    // it, the sniffer settles for a dialect that reads the file otherwise (often as one column),
    // which the strict read below tells apart.
    const probe = await con
      .run(`SELECT * FROM read_csv_auto(${sqlString(u.file)}, header = true${forced}) LIMIT 0`)
      .then((r) => r.columnNames().join('\u0000'))
      .catch(() => undefined)
    if (probe === u.columns.join('\u0000')) continue
    const columns = u.columns.map((c) => `${sqlString(c)}: 'VARCHAR'`).join(', ')
    try {
      await con.run(
        `SELECT count(*) FROM read_csv(${sqlString(u.file)}, auto_detect = false, header = true, ` +
          `delim = ${sqlString(u.delimiter)}, quote = '"', escape = '"', strict_mode = true, columns = {${columns}})`,
      )
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err)
      if (!/unterminated quote/i.test(message)) continue
      const line = /CSV Error on Line: (\d+)/.exec(message)?.[1]
      const where = [
        `file ${names.get(u.file) ?? u.file}`,
        ...(line === undefined ? [] : [`line ${line} (row ${Number(line) - 1})`]),
      ]
      throw new InvalidArgumentError(
        `The input cannot be read at ${where.join(', ')}: a value opens a double quote that is never closed`,
        {
          argument: 'input',
          cause: err,
          hint: 'Nothing was committed. Close the quote, or double a quote that belongs to the value ("" inside a quoted field).',
        },
      )
    }
  }
  return forced
}

/** The Delta type of a timestamp without a time zone: UTC `timestamp`, or `timestamp_ntz`. */
export type NaiveTimestampType = 'timestamp' | 'timestamp_ntz'

/**
 * The Delta schema of input columns, from the types DuckDB inferred. Every column is nullable.
 *
 * @param columns - the input columns
 * @param naiveTimestamps - the type of timestamps without a zone (default `timestamp_ntz`); CSV
 *   and JSON text carry no zone, and `timestamp` reads it as UTC without the `timestampNtz`
 *   table feature (which needs protocol 3/7)
 * @returns the schema
 * @throws {UnsupportedError} for a type Delta cannot hold
 */
export function inferSchema(
  columns: readonly InputColumn[],
  naiveTimestamps: NaiveTimestampType = 'timestamp_ntz',
): StructType {
  return {
    type: 'struct',
    fields: columns.map((c) => ({
      name: c.name,
      type: deltaTypeOf(c.duckType, c.name, naiveTimestamps),
      nullable: true,
      metadata: {},
    })),
  }
}

/**
 * The Delta type that holds values of a DuckDB type.
 *
 * @param t - the DuckDB type
 * @param column - the column, for messages
 * @param naiveTimestamps - the type of a timestamp without a zone (default `timestamp_ntz`)
 * @returns the Delta type
 * @throws {UnsupportedError} for a type Delta cannot hold (such as UNION)
 */
export function deltaTypeOf(
  t: DuckDBType,
  column: string,
  naiveTimestamps: NaiveTimestampType = 'timestamp_ntz',
): DataType {
  switch (t.typeId) {
    case DuckDBTypeId.BOOLEAN:
      return 'boolean'
    case DuckDBTypeId.TINYINT:
      return 'byte'
    case DuckDBTypeId.SMALLINT:
    case DuckDBTypeId.UTINYINT:
      return 'short'
    case DuckDBTypeId.INTEGER:
    case DuckDBTypeId.USMALLINT:
      return 'integer'
    case DuckDBTypeId.BIGINT:
    case DuckDBTypeId.UINTEGER:
      return 'long'
    case DuckDBTypeId.UBIGINT:
      return 'decimal(20,0)'
    case DuckDBTypeId.HUGEINT:
    case DuckDBTypeId.UHUGEINT:
      return 'decimal(38,0)'
    case DuckDBTypeId.FLOAT:
      return 'float'
    case DuckDBTypeId.DOUBLE:
      return 'double'
    case DuckDBTypeId.DECIMAL: {
      const d = t as DuckDBDecimalType
      return `decimal(${d.width},${d.scale})`
    }
    case DuckDBTypeId.BLOB:
      return 'binary'
    case DuckDBTypeId.DATE:
      return 'date'
    case DuckDBTypeId.TIMESTAMP_TZ:
      return 'timestamp'
    case DuckDBTypeId.TIMESTAMP:
    case DuckDBTypeId.TIMESTAMP_S:
    case DuckDBTypeId.TIMESTAMP_MS:
    case DuckDBTypeId.TIMESTAMP_NS:
      return naiveTimestamps
    case DuckDBTypeId.VARCHAR:
    case DuckDBTypeId.UUID:
    case DuckDBTypeId.ENUM:
    case DuckDBTypeId.TIME:
    case DuckDBTypeId.TIME_TZ:
    case DuckDBTypeId.INTERVAL:
    case DuckDBTypeId.SQLNULL:
      return 'string'
    case DuckDBTypeId.LIST:
    case DuckDBTypeId.ARRAY: {
      const inner = (t as DuckDBListType | DuckDBArrayType).valueType
      return {
        type: 'array',
        elementType: deltaTypeOf(inner, `${column}[]`, naiveTimestamps),
        containsNull: true,
      }
    }
    case DuckDBTypeId.STRUCT: {
      const s = t as DuckDBStructType
      return {
        type: 'struct',
        fields: s.entryNames.map((name, i) => ({
          name,
          type: deltaTypeOf(s.entryTypes[i] as DuckDBType, `${column}.${name}`, naiveTimestamps),
          nullable: true,
          metadata: {},
        })),
      }
    }
    case DuckDBTypeId.MAP: {
      const m = t as DuckDBMapType
      return {
        type: 'map',
        keyType: deltaTypeOf(m.keyType, `${column}.key`, naiveTimestamps),
        valueType: deltaTypeOf(m.valueType, `${column}.value`, naiveTimestamps),
        valueContainsNull: true,
      }
    }
    default:
      throw new UnsupportedError(
        `Column '${column}' has DuckDB type ${t.toString()}, which has no Delta equivalent`,
        { hint: 'Convert the column in the source file, or give the table schema with --schema.' },
      )
  }
}

// === Reading rows ===

/** An opened input, as the readers below need it. */
interface InputSource {
  readonly con: DuckDBConnection
  readonly format: InputFormat
  /** The files DuckDB reads (copies of streams and of JSON files), in the order given. */
  readonly files: readonly string[]
  /** The input file, as given, that a file DuckDB reads stands for. */
  nameOf(file: string): string
  /** The DuckDB table function reading every file. */
  readonly source: string
  /**
   * The DuckDB table function reading some of the files.
   *
   * @param text - CSV columns read as text, whatever type DuckDB's sniffer finds for them
   */
  sourceOf(files: readonly string[], text?: readonly string[]): string
  readonly columns: readonly InputColumn[]
  countRows(): Promise<number>
}

/** One input column as read: its row key, its converting SQL over `ref`, and its conversion. */
interface SelectedColumn extends ColumnRead {
  readonly name: string
  /** The column's Delta type, as messages write it. */
  readonly deltaType: string
  readonly ref: string
  /** False for a table column that is not nullable. */
  readonly nullable: boolean
}

/** The input columns read for `schema`, with the SQL converting each to its column type. */
function selectColumns(input: InputSource, schema: StructType, extra: ExtraColumns): SelectedColumn[] {
  const byName = new Map(schema.fields.map((f) => [f.name.toLowerCase(), f]))
  const selected: SelectedColumn[] = []
  for (const c of input.columns) {
    const field = byName.get(c.name.toLowerCase())
    if (field === undefined && extra === 'error') {
      throw new InvalidArgumentError(`Input column '${c.name}' is not a column of the table`, {
        argument: 'input',
        hint: `The table has: ${schema.fields.map((f) => f.name).join(', ')}. Drop or rename the column in the input, read only some columns with --columns a,b, or leave out the ones the table lacks with --ignore-extra-columns.`,
      })
    }
    const type = field?.type ?? deltaTypeOf(c.duckType, c.name)
    const ref = `"${c.name.replaceAll('"', '""')}"`
    selected.push({
      name: field?.name ?? c.name,
      ref,
      nullable: field?.nullable ?? true,
      deltaType: typeText(type),
      ...columnRead(ref, type),
    })
  }
  return selected
}

function selectSql(input: InputSource, selected: readonly SelectedColumn[]): string {
  return `SELECT ${selected.map((s, i) => `${s.sql} AS c${i}`).join(', ') || '1'} FROM ${input.source}`
}

/**
 * One materialized pass over the converted input: it converts every value without keeping any,
 * so a bad value anywhere is reported before a single row is staged, and it counts the rows
 * apart from any stream, so that a stream that ends early without saying so cannot pass for
 * the whole input.
 */
async function checkedCount(
  input: InputSource,
  selected: readonly SelectedColumn[],
  sql: string,
  signal?: AbortSignal,
): Promise<number> {
  // The pass is one long query: a stop signal interrupts it rather than waiting for its end.
  const interrupt = () => input.con.interrupt()
  signal?.addEventListener('abort', interrupt, { once: true })
  try {
    const counts = selected.map((_, i) => `count(c${i})`)
    const r = await input.con.runAndReadAll(`SELECT ${['count(*)', ...counts].join(', ')} FROM (${sql})`)
    const row = r.getRows()[0] ?? []
    const total = Number(row[0] ?? 0)
    // A null in a column that is not nullable is found here too, so it is named by its file and
    // line as a value that does not convert is, not only by its index among the rows read.
    const missing = selected.findIndex((s, i) => !s.nullable && Number(row[i + 1] ?? 0) < total)
    if (missing >= 0) throw await nullValueError(input, selected[missing] as SelectedColumn)
    return total
  } catch (err) {
    if (isDeltaError(err)) throw err
    signal?.throwIfAborted()
    throw await badValueError(input, selected, { rowsRead: 0, detail: firstLine(err), cause: err })
  } finally {
    signal?.removeEventListener('abort', interrupt)
  }
}

async function* readBatches(
  opened: InputSource,
  schema: StructType,
  batchRows: number,
  extra: ExtraColumns,
  signal: AbortSignal | undefined,
): AsyncGenerator<Record<string, unknown>[]> {
  const input = columnsRead(opened, schema, extra)
  const selected = selectColumns(input, schema, extra)
  const sql = selectSql(input, selected)
  const expected = await checkedCount(input, selected, sql, signal)
  signal?.throwIfAborted()
  let stream: ResultStream
  try {
    stream = await openStream(input.con, sql, {
      signal,
      onFailure: (f) => badValueError(input, selected, f),
    })
  } catch (err) {
    if (isDeltaError(err) || (err instanceof Error && err.name === 'AbortError')) throw err
    throw await badValueError(input, selected, { rowsRead: 0, detail: firstLine(err), cause: err })
  }
  let batch: Record<string, unknown>[] = []
  let rowsRead = 0
  for await (const chunk of stream.chunks()) {
    // Column by column, each vector fetched once: the chunk's row-wise reading asks DuckDB for
    // the column count on every row and builds each value's type on every value.
    const count = chunk.rowCount
    const objs = new Array<Record<string, unknown>>(count)
    for (let r = 0; r < count; r++) objs[r] = {}
    for (let i = 0; i < selected.length; i++) {
      const s = selected[i] as SelectedColumn
      const vector = chunk.getColumnVector(i)
      for (let r = 0; r < count; r++)
        (objs[r] as Record<string, unknown>)[s.name] = s.convert(vector.getItem(r))
    }
    for (const o of objs) batch.push(o)
    rowsRead += count
    if (batch.length >= batchRows) {
      yield batch
      batch = []
    }
  }
  if (rowsRead !== expected) {
    throw new InvalidArgumentError(
      `Read ${rowsRead} rows of the input, but it holds ${expected}: the reading stopped early`,
      {
        argument: 'input',
        hint: 'Nothing was committed. Run the command again; report it if the counts differ again.',
      },
    )
  }
  if (batch.length > 0) yield batch
}

/** Where a bad input value is, as far as DuckDB's message or a search finds it. */
interface BadValue {
  file?: string
  /** The line in the file, as DuckDB counts it (CSV counts the header). */
  line?: number
  /** The data row in the file, from 1. */
  row?: number
  column?: string
  reason: string
}

/**
 * The error for input that DuckDB could not read or convert: it names the file, the line or
 * row, and the column of the first bad value it finds.
 *
 * DuckDB's own reader names the line (and, for CSV, the column) of a value it cannot read as
 * the type it inferred; a conversion to the table's type in our query names neither, so the
 * column is found by reading subsets of the columns, and the row by a search with `try()`.
 */
async function badValueError(
  input: InputSource,
  selected: readonly SelectedColumn[],
  failure: StreamFailure,
): Promise<InvalidArgumentError> {
  let found: BadValue
  try {
    found = await locateBadValue(input, selected, failure)
  } catch {
    found = { reason: failure.detail }
  }
  const where = [
    found.file === undefined ? undefined : `file ${found.file}`,
    found.line !== undefined
      ? `line ${found.line}${found.row !== undefined ? ` (row ${found.row})` : ''}`
      : found.row !== undefined
        ? `row ${found.row}`
        : undefined,
    found.column === undefined ? undefined : `column '${found.column}'`,
  ].filter((x) => x !== undefined)
  return new InvalidArgumentError(
    `The input cannot be read${where.length > 0 ? ` at ${where.join(', ')}` : ''}: ${found.reason}`,
    {
      argument: 'input',
      cause: failure.cause,
      hint: 'Nothing was committed. Fix the input there (or give the column another type) and run the command again.',
    },
  )
}

async function locateBadValue(
  input: InputSource,
  selected: readonly SelectedColumn[],
  failure: StreamFailure,
): Promise<BadValue> {
  const full = failure.cause instanceof Error ? failure.cause.message : failure.detail
  const found = await locateValue(input, selected, failure, full)
  if (found.file !== undefined) found.file = input.nameOf(found.file)
  // DuckDB's own readers name their types ('DOUBLE', 'DATE'): the message names the column's.
  const col = selected.find((s) => s.name === found.column)
  const cast = /^Could not convert string (["'])(.*)\1 to '?[^']*'?\s*$/.exec(found.reason)
  if (col !== undefined && cast) found.reason = `'${cast[2]}' is not a ${col.deltaType}`
  if (found.line !== undefined && found.row === undefined) {
    found.row = input.format === 'csv' ? found.line - 1 : found.line
  }
  return found
}

async function locateValue(
  input: InputSource,
  selected: readonly SelectedColumn[],
  failure: StreamFailure,
  full: string,
): Promise<BadValue> {
  // A file DuckDB cannot even split into rows fails whatever columns are read: no column is at
  // fault, and the halving below would blame one.
  try {
    await input.con.run(`SELECT count(*) FROM ${input.source}`)
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err)
    return { ...parseReaderError(message), reason: reasonOf(message) }
  }
  // A value the column's type refuses says so itself: the first such row, in one pass a file.
  const problem = await findProblem(input, selected)
  if (problem !== undefined) return problem
  const found: BadValue = { ...parseReaderError(full), reason: reasonOf(full) }
  if (found.column === undefined) {
    const bad = await findBadColumn(input, selected, failure.cause instanceof Error ? full : undefined)
    if (bad === undefined) return found
    found.column = input.columns[bad.index]?.name
    Object.assign(found, { ...parseReaderError(bad.message), ...definedOnly(found) })
    found.reason = reasonOf(bad.message)
  }
  if (found.line === undefined && found.column !== undefined) {
    const col = selected[input.columns.findIndex((c) => c.name === found.column)]
    if (col !== undefined) Object.assign(found, await findBadRow(input, col))
  }
  return found
}

/**
 * The first row, file by file, with a value its column's type refuses, and what is wrong with it.
 */
async function findProblem(
  input: InputSource,
  selected: readonly SelectedColumn[],
): Promise<BadValue | undefined> {
  const checked = selected.filter((s) => s.problem !== 'NULL')
  if (checked.length === 0) return undefined
  const problems = checked.map((s, i) => `(${s.problem}) AS p${i}`).join(', ')
  const any = checked.map((_, i) => `p${i}`).join(', ')
  for (const file of input.files) {
    const r = await input.con.runAndReadAll(
      `SELECT n, ${any} FROM (SELECT row_number() OVER () AS n, ${problems} FROM ${input.sourceOf([file])}) ` +
        `WHERE coalesce(${any}) IS NOT NULL ORDER BY n LIMIT 1`,
    )
    const row = r.getRows()[0]
    if (row === undefined) continue
    const index = row.slice(1).findIndex((v) => v !== null)
    const rowNumber = Number(row[0])
    return {
      file: input.nameOf(file),
      row: rowNumber,
      ...(input.format === 'csv'
        ? { line: rowNumber + 1 }
        : input.format === 'json'
          ? { line: rowNumber }
          : {}),
      column: checked[index]?.name,
      reason: String(row[index + 1]),
    }
  }
  return undefined
}

/** File, line and column named by a DuckDB reader error (CSV and JSON readers name them). */
function parseReaderError(message: string): Omit<BadValue, 'reason'> {
  const out: Omit<BadValue, 'reason'> = {}
  const csvLine = /CSV Error on Line: (\d+)/.exec(message)
  if (csvLine) out.line = Number(csvLine[1])
  const csvColumn = /converting column "((?:[^"]|"")*)"/.exec(message)
  if (csvColumn) out.column = (csvColumn[1] as string).replaceAll('""', '"')
  const csvFile = /^\s*file = (.+)$/m.exec(message)
  if (csvFile) out.file = (csvFile[1] as string).trim()
  const json = /in file "([^"]+)", in line (\d+)/.exec(message)
  if (json) {
    out.file = json[1] as string
    out.line = Number(json[2])
  }
  return out
}

/** The sentence of a DuckDB message that says what is wrong with the value. */
function reasonOf(message: string): string {
  if (/unterminated quote/i.test(message)) return 'a value opens a double quote that is never closed'
  const raised = /^Invalid Input Error: (?!CSV Error)([^\n]*)/.exec(message)
  if (raised) return (raised[1] as string).trim()
  const convert = /Could not convert[^\n]*/.exec(message)
  if (convert) return convert[0].trim()
  const columns = /Expected Number of Columns: \d+ Found: \d+/.exec(message)
  if (columns) return columns[0]
  const json = /in line \d+: ([^\n]*)/.exec(message)
  if (json) return (json[1] as string).trim()
  return (message.split('\n')[0] ?? '').trim()
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>
}

/**
 * A column whose conversion fails, by halving: a materialized count over a set of columns
 * computes every value of them and raises the first error.
 *
 * @param known - the error all the columns together raised, when already known
 */
async function findBadColumn(
  input: InputSource,
  selected: readonly SelectedColumn[],
  known: string | undefined,
): Promise<{ index: number; message: string } | undefined> {
  const probe = async (indexes: readonly number[]): Promise<string | undefined> => {
    const counts = indexes.map((i) => `count(${(selected[i] as SelectedColumn).sql})`).join(', ')
    try {
      await input.con.run(`SELECT ${counts} FROM ${input.source}`)
      return undefined
    } catch (err) {
      return err instanceof Error ? err.message : String(err)
    }
  }
  let candidates = selected.map((_, i) => i)
  let message = known ?? (await probe(candidates))
  if (message === undefined) return undefined
  // When the first half converts, the error the whole set raised came from the second half.
  while (candidates.length > 1) {
    const half = candidates.slice(0, Math.ceil(candidates.length / 2))
    const m = await probe(half)
    if (m !== undefined) {
      candidates = half
      message = m
    } else {
      candidates = candidates.slice(half.length)
    }
  }
  return { index: candidates[0] as number, message }
}

/** The first row, file by file, whose value of `col` is present but does not convert. */
async function findBadRow(input: InputSource, col: SelectedColumn): Promise<Omit<BadValue, 'reason'>> {
  for (const file of input.files) {
    const r = await input.con.runAndReadAll(
      `SELECT n FROM (SELECT row_number() OVER () AS n, ${col.ref} AS raw, try(${col.value}) AS v ` +
        `FROM ${input.sourceOf([file])}) WHERE v IS NULL AND raw IS NOT NULL ORDER BY n LIMIT 1`,
    )
    const n = r.getRows()[0]?.[0]
    if (n !== undefined && n !== null) {
      const row = Number(n)
      return {
        file: input.nameOf(file),
        row,
        ...(input.format === 'csv' ? { line: row + 1 } : input.format === 'json' ? { line: row } : {}),
      }
    }
  }
  return {}
}

/** The error for a null (or missing) value in a column that is not nullable, naming the first. */
async function nullValueError(input: InputSource, col: SelectedColumn): Promise<InvalidArgumentError> {
  let where = ' in'
  for (const file of input.files) {
    const r = await input.con.runAndReadAll(
      `SELECT n FROM (SELECT row_number() OVER () AS n, ${col.sql} AS v FROM ${input.sourceOf([file])}) ` +
        'WHERE v IS NULL ORDER BY n LIMIT 1',
    )
    const n = r.getRows()[0]?.[0]
    if (n === undefined || n === null) continue
    const row = Number(n)
    const line = input.format === 'csv' ? row + 1 : input.format === 'json' ? row : undefined
    where = ` at file ${input.nameOf(file)}, ${line === undefined ? `row ${row}` : `line ${line} (row ${row})`},`
    break
  }
  return new InvalidArgumentError(
    `The input has no value${where} column '${col.name}', which is not nullable`,
    {
      argument: 'input',
      hint: 'Nothing was committed. Give the column a value in every row of the input, or append into a table where it is nullable.',
    },
  )
}

function sqlString(s: string): string {
  return `'${s.replaceAll("'", "''")}'`
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? ''
}

/** Wraps a DuckDB failure while reading input into a typed error. */
export function inputError(err: unknown): unknown {
  if (err instanceof Error && 'code' in err) return err
  return new StorageError(`Reading the input failed: ${firstLine(err)}`, { cause: err })
}
