import { access } from 'node:fs/promises'
import { extname, resolve } from 'node:path'
import {
  type DuckDBArrayType,
  DuckDBBlobValue,
  type DuckDBConnection,
  type DuckDBDecimalType,
  DuckDBInstance,
  type DuckDBListType,
  type DuckDBMapType,
  type DuckDBStructType,
  type DuckDBType,
  DuckDBTypeId,
  type DuckDBValue,
} from '@duckdb/node-api'
import { isInteger, isSafeNumber, parse } from 'lossless-json'
import {
  FileNotFoundError,
  InvalidArgumentError,
  StorageError,
  type StructField,
  type StructType,
  UnsupportedError,
} from '../index.js'
import { UsageError } from './command.js'

/** Formats of input files. */
export type InputFormat = 'json' | 'csv' | 'parquet'

/** A Delta data type, as the schema objects hold it. */
type DataType = StructField['type']

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
   * @param extraColumns - `'infer'` keeps input columns outside the schema with their inferred
   *   type (a MERGE source); `'error'` refuses them
   */
  readRows(
    schema: StructType,
    batchRows: number,
    extraColumns?: 'error' | 'infer',
  ): AsyncGenerator<Record<string, unknown>[]>
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
export async function openInputFiles(paths: readonly string[], format: InputFormat): Promise<InputFiles> {
  const absolute = paths.map((p) => resolve(p))
  for (const p of absolute) {
    try {
      await access(p)
    } catch (err) {
      throw new FileNotFoundError(p, { cause: err, hint: 'Check the input file path.' })
    }
  }
  const instance = await DuckDBInstance.create(':memory:', {
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
  })
  const con = await instance.connect()
  const close = () => {
    con.closeSync()
    instance.closeSync()
  }
  try {
    await con.run(`SET TimeZone = 'UTC'`)
    const list = `[${absolute.map(sqlString).join(', ')}]`
    const source =
      format === 'json'
        ? `read_json_auto(${list}, union_by_name = true)`
        : format === 'csv'
          ? `read_csv_auto(${list}, union_by_name = true, header = true)`
          : `read_parquet(${list}, union_by_name = true)`
    let columns: InputColumn[]
    try {
      const probe = await con.run(`SELECT * FROM ${source} LIMIT 0`)
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
    return {
      format,
      columns,
      async countRows() {
        const r = await con.runAndReadAll(`SELECT count(*) FROM ${source}`)
        return Number(r.getRows()[0]?.[0] ?? 0)
      },
      readRows: (schema, batchRows, extra = 'error') =>
        readBatches(con, source, columns, schema, batchRows, extra),
      close,
    }
  } catch (err) {
    close()
    throw err
  }
}

/**
 * The Delta schema of input columns, from the types DuckDB inferred. Every column is nullable.
 *
 * @param columns - the input columns
 * @returns the schema
 * @throws {UnsupportedError} for a type Delta cannot hold
 */
export function inferSchema(columns: readonly InputColumn[]): StructType {
  return {
    type: 'struct',
    fields: columns.map((c) => ({
      name: c.name,
      type: deltaTypeOf(c.duckType, c.name),
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
 * @returns the Delta type
 * @throws {UnsupportedError} for a type Delta cannot hold (such as UNION)
 */
export function deltaTypeOf(t: DuckDBType, column: string): DataType {
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
      return 'timestamp_ntz'
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
      return { type: 'array', elementType: deltaTypeOf(inner, `${column}[]`), containsNull: true }
    }
    case DuckDBTypeId.STRUCT: {
      const s = t as DuckDBStructType
      return {
        type: 'struct',
        fields: s.entryNames.map((name, i) => ({
          name,
          type: deltaTypeOf(s.entryTypes[i] as DuckDBType, `${column}.${name}`),
          nullable: true,
          metadata: {},
        })),
      }
    }
    case DuckDBTypeId.MAP: {
      const m = t as DuckDBMapType
      return {
        type: 'map',
        keyType: deltaTypeOf(m.keyType, `${column}.key`),
        valueType: deltaTypeOf(m.valueType, `${column}.value`),
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

type Converter = (v: DuckDBValue) => unknown

async function* readBatches(
  con: DuckDBConnection,
  source: string,
  columns: readonly InputColumn[],
  schema: StructType,
  batchRows: number,
  extra: 'error' | 'infer',
): AsyncGenerator<Record<string, unknown>[]> {
  const byName = new Map(schema.fields.map((f) => [f.name.toLowerCase(), f]))
  const selected: Array<{ name: string; sql: string; convert: Converter }> = []
  for (const c of columns) {
    const field = byName.get(c.name.toLowerCase())
    if (field === undefined && extra === 'error') {
      throw new InvalidArgumentError(`Input column '${c.name}' is not a column of the table`, {
        argument: 'input',
        hint: `The table has: ${schema.fields.map((f) => f.name).join(', ')}. Drop or rename the column in the input.`,
      })
    }
    const type = field?.type ?? deltaTypeOf(c.duckType, c.name)
    selected.push({ name: field?.name ?? c.name, ...selectFor(`"${c.name.replaceAll('"', '""')}"`, type) })
  }
  const sql = `SELECT ${selected.map((s, i) => `${s.sql} AS c${i}`).join(', ') || '1'} FROM ${source}`
  let result: Awaited<ReturnType<DuckDBConnection['stream']>>
  try {
    result = await con.stream(sql)
  } catch (err) {
    throw new InvalidArgumentError(`The input does not fit the table schema: ${firstLine(err)}`, {
      argument: 'input',
      cause: err,
      hint: 'Check that each input column holds values of the table column type.',
    })
  }
  let batch: Record<string, unknown>[] = []
  for (;;) {
    let chunk: Awaited<ReturnType<typeof result.fetchChunk>>
    try {
      chunk = await result.fetchChunk()
    } catch (err) {
      throw new InvalidArgumentError(`Reading the input failed: ${firstLine(err)}`, {
        argument: 'input',
        cause: err,
        hint: 'A value probably does not convert to its column type; check the input.',
      })
    }
    if (!chunk || chunk.rowCount === 0) break
    for (const row of chunk.getRows()) {
      const obj: Record<string, unknown> = {}
      for (let i = 0; i < selected.length; i++) {
        const s = selected[i] as (typeof selected)[number]
        obj[s.name] = s.convert(row[i] ?? null)
      }
      batch.push(obj)
    }
    if (batch.length >= batchRows) {
      yield batch
      batch = []
    }
  }
  if (batch.length > 0) yield batch
}

/** The SQL that reads a column as a Delta type, and the conversion of its result to a row value. */
function selectFor(ref: string, type: DataType): { sql: string; convert: Converter } {
  const text: Converter = (v) => (v === null ? null : String(v))
  if (typeof type !== 'string') {
    return {
      sql: `CAST(to_json(CAST(${ref} AS ${duckTypeText(type)})) AS VARCHAR)`,
      convert: (v) => (v === null ? null : parseJsonExact(String(v))),
    }
  }
  if (type.startsWith('decimal')) {
    const m = /^decimal\((\d+),\s*(\d+)\)$/.exec(type)
    return { sql: `CAST(CAST(${ref} AS DECIMAL(${m?.[1]}, ${m?.[2]})) AS VARCHAR)`, convert: text }
  }
  switch (type) {
    case 'long':
      return { sql: `CAST(${ref} AS BIGINT)`, convert: (v) => (v === null ? null : BigInt(v as bigint)) }
    case 'integer':
    case 'short':
    case 'byte':
      return { sql: `CAST(${ref} AS INTEGER)`, convert: (v) => (v === null ? null : Number(v)) }
    case 'float':
    case 'double':
      return { sql: `CAST(${ref} AS DOUBLE)`, convert: (v) => (v === null ? null : Number(v)) }
    case 'boolean':
      return { sql: `CAST(${ref} AS BOOLEAN)`, convert: (v) => (v === null ? null : Boolean(v)) }
    case 'binary':
      return {
        sql: `CAST(${ref} AS BLOB)`,
        convert: (v) => (v instanceof DuckDBBlobValue ? new Uint8Array(v.bytes) : v === null ? null : v),
      }
    case 'date':
      return { sql: `CAST(CAST(${ref} AS DATE) AS VARCHAR)`, convert: text }
    case 'timestamp':
      return { sql: `strftime(CAST(${ref} AS TIMESTAMPTZ), '%Y-%m-%dT%H:%M:%S.%fZ')`, convert: text }
    case 'timestamp_ntz':
      return { sql: `strftime(CAST(${ref} AS TIMESTAMP), '%Y-%m-%dT%H:%M:%S.%f')`, convert: text }
    default:
      return { sql: `CAST(${ref} AS VARCHAR)`, convert: text }
  }
}

/** DuckDB type text of a Delta type, for casting nested input values. */
function duckTypeText(type: DataType): string {
  if (typeof type === 'string') {
    const m = /^decimal\((\d+),\s*(\d+)\)$/.exec(type)
    if (m) return `DECIMAL(${m[1]}, ${m[2]})`
    const simple: Record<string, string> = {
      long: 'BIGINT',
      integer: 'INTEGER',
      short: 'SMALLINT',
      byte: 'TINYINT',
      float: 'FLOAT',
      double: 'DOUBLE',
      boolean: 'BOOLEAN',
      binary: 'BLOB',
      date: 'DATE',
      timestamp: 'TIMESTAMPTZ',
      timestamp_ntz: 'TIMESTAMP',
    }
    return simple[type] ?? 'VARCHAR'
  }
  if (type.type === 'struct')
    return `STRUCT(${type.fields.map((f) => `"${f.name.replaceAll('"', '""')}" ${duckTypeText(f.type)}`).join(', ')})`
  if (type.type === 'array') return `${duckTypeText(type.elementType)}[]`
  return `MAP(${duckTypeText(type.keyType)}, ${duckTypeText(type.valueType)})`
}

/** JSON with integers kept exact: safe ones as numbers, larger ones as bigints. */
function parseJsonExact(text: string): unknown {
  return parse(text, null, (value: string) =>
    isInteger(value) ? (isSafeNumber(value) ? Number(value) : BigInt(value)) : Number(value),
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
