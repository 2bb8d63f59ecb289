/**
 * The SQL that reads an input column as a Delta type, run by the input reader's DuckDB.
 *
 * Decimals and integers are read from the value's text, never through a DuckDB `DOUBLE`: the
 * text is checked digit by digit (digits before and after the point, after leading and trailing
 * zeros are dropped and any exponent applied), so a value the column cannot hold exactly is
 * refused, as the table API refuses it, instead of being rounded by DuckDB's cast. Every other
 * type is converted with `TRY_CAST`, so that a value that does not convert is reported with the
 * column's Delta type rather than DuckDB's.
 *
 * Each column has a `problem` expression (null for a good value, else a sentence naming the value
 * and what is wrong with it), which the reader raises with `error()` and which the search for a
 * bad row reads directly (`try()` cannot hold `error()`, which DuckDB counts as volatile).
 */
import { DuckDBBlobValue } from '@duckdb/node-api'
import { isInteger, isSafeNumber, parse } from 'lossless-json'
import type { StructField } from '../index.js'

/** A Delta data type, as the schema objects hold it. */
type DataType = StructField['type']

/** Converts one value DuckDB returned to the form the table API takes for its column type. */
export type Converter = (v: unknown) => unknown

/** How one input column is read as a Delta type. */
export interface ColumnRead {
  /** The value, valid only where `problem` is null. */
  readonly value: string
  /** Null for a good (or missing) value, else what is wrong with it. */
  readonly problem: string
  /** The value, raising `problem` as an error: what the reader selects. */
  readonly sql: string
  readonly convert: Converter
}

/**
 * Macros the SQL below calls; run once on the reader's connection before reading.
 *
 * `delta_num_shape(t)` reads number text as the table API's decimal parser does (sign, digits
 * before and after the point, exponent) into its sign, its significant digits without leading
 * or trailing zeros (`sig`), and the position of the point after the first of them (`point`):
 * the value needs `max(0, point)` digits before the point and `max(0, len(sig) - point)` after
 * it. The other macros say what is wrong with a value for a type, or write it as plain digits
 * (no exponent), which DuckDB casts exactly. Each binds its argument once with a lambda, so the
 * expressions stay small however often they use it.
 */
export const NUMBER_MACROS: readonly string[] = [
  String.raw`CREATE OR REPLACE TEMP MACRO delta_num_shape(t) AS list_transform(
    [regexp_extract(t, '^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d{1,6}))?$', ['s', 'i', 'f', 'e'])],
    lambda p: list_transform([p.i || p.f], lambda d: {
      'ok': regexp_full_match(t, '[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d{1,6})?'),
      's': p.s,
      'sig': rtrim(ltrim(d, '0'), '0'),
      'point': length(p.i) + (CASE WHEN p.e = '' THEN 0 ELSE CAST(p.e AS BIGINT) END)
        - (length(d) - length(ltrim(d, '0')))
    })[1]
  )[1]`,
  `CREATE OR REPLACE TEMP MACRO delta_num_quoted(t) AS
    '''' || (CASE WHEN length(t) > 100 THEN left(t, 100) || '...' ELSE t END) || ''''`,
  `CREATE OR REPLACE TEMP MACRO delta_decimal_problem(t, width_, scale_) AS list_transform(
    [delta_num_shape(t)],
    lambda x: list_transform(
      [{
        'before': CASE WHEN x.sig = '' THEN 0 ELSE greatest(0, x.point) END,
        'after': CASE WHEN x.sig = '' THEN 0 ELSE greatest(0, length(x.sig) - x.point) END
      }],
      lambda n: CASE
        WHEN NOT x.ok THEN delta_num_quoted(t) || ' is not a number, which a decimal(' || width_ || ',' || scale_ || ') column needs'
        WHEN n.after > scale_ THEN delta_num_quoted(t) || ' has more digits after the point (' || n.after
          || ') than a decimal(' || width_ || ',' || scale_ || ') column keeps (' || scale_ || '): it would be rounded'
        WHEN n.before > width_ - scale_ THEN delta_num_quoted(t) || ' has more digits before the point (' || n.before
          || ') than a decimal(' || width_ || ',' || scale_ || ') column holds (' || (width_ - scale_) || ')'
      END
    )[1]
  )[1]`,
  `CREATE OR REPLACE TEMP MACRO delta_num_plain(t) AS list_transform(
    [delta_num_shape(t)],
    lambda x: CASE
      WHEN x.sig = '' THEN '0'
      WHEN x.point <= 0 THEN x.s || '0.' || repeat('0', CAST(-x.point AS BIGINT)) || x.sig
      WHEN x.point >= length(x.sig) THEN x.s || x.sig || repeat('0', CAST(x.point - length(x.sig) AS BIGINT))
      ELSE x.s || x.sig[1:x.point] || '.' || x.sig[x.point + 1:]
    END
  )[1]`,
  `CREATE OR REPLACE TEMP MACRO delta_integer_problem(t, type_, digits_, lo, hi) AS list_transform(
    [delta_num_shape(t)],
    lambda x: CASE
      WHEN NOT x.ok THEN delta_num_quoted(t) || ' is not a whole number, which a ' || type_ || ' column needs'
      WHEN x.sig <> '' AND length(x.sig) > x.point THEN delta_num_quoted(t) || ' has a fraction, and a ' || type_
        || ' column holds whole numbers only: it would be rounded'
      WHEN x.point > digits_ OR CAST(delta_num_plain(t) AS HUGEINT) NOT BETWEEN lo AND hi
        THEN delta_num_quoted(t) || ' is out of the range of a ' || type_ || ' column (' || lo || ' to ' || hi || ')'
    END
  )[1]`,
]

/** The ranges of Delta's integral types. */
const INTEGER_RANGES: Readonly<Record<string, readonly [string, string, number]>> = {
  long: ['-9223372036854775808', '9223372036854775807', 19],
  integer: ['-2147483648', '2147483647', 10],
  short: ['-32768', '32767', 5],
  byte: ['-128', '127', 3],
}

/** The value as the start of a message: quoted, at most 100 characters. */
function shown(text: string): string {
  return `'''' || (CASE WHEN length(${text}) > 100 THEN left(${text}, 100) || '...' ELSE ${text} END) || ''''`
}

function sqlString(s: string): string {
  return `'${s.replaceAll("'", "''")}'`
}

/** The text of a value, null for a missing one or (outside string columns) a blank one. */
function textOf(ref: string): string {
  return `nullif(trim(CAST(${ref} AS VARCHAR)), '')`
}

function withProblem(value: string, problem: string, convert: Converter): ColumnRead {
  return {
    value,
    problem,
    sql: `CASE WHEN (${problem}) IS NOT NULL THEN error(${problem}) ELSE ${value} END`,
    convert,
  }
}

/**
 * A number read whose common case (`fits`: plain digits the type holds) is one pattern match,
 * and whose other values go through the digit analysis, which also says what is wrong.
 */
function numberRead(
  t: string,
  fits: string,
  value: string,
  slow: ColumnRead,
  convert: Converter,
): ColumnRead {
  return {
    value: `CASE WHEN ${fits} THEN ${value} ELSE ${slow.value} END`,
    problem: `CASE WHEN ${t} IS NULL OR ${fits} THEN NULL ELSE ${slow.problem} END`,
    sql: `CASE WHEN ${t} IS NULL THEN NULL WHEN ${fits} THEN ${value} ELSE ${slow.sql} END`,
    convert,
  }
}

/**
 * The SQL reading `ref` as a decimal(precision, scale): exact, or refused naming the value and
 * the digits it has beyond the type.
 */
function decimalRead(ref: string, precision: number, scale: number): ColumnRead {
  const t = textOf(ref)
  const intDigits = precision - scale
  const whole = intDigits > 0 ? `0*\\d{1,${intDigits}}` : '0+'
  const fraction = scale > 0 ? `\\.\\d{0,${scale}}0*` : '\\.0*'
  const fractionOnly = scale > 0 ? `\\.\\d{1,${scale}}0*` : '\\.0+'
  const fits = `regexp_full_match(${t}, '[+-]?(${whole}(${fraction})?|${fractionOnly})')`
  const problem = `delta_decimal_problem(${t}, ${precision}, ${scale})`
  const cast = (x: string) => `CAST(CAST(${x} AS DECIMAL(${precision}, ${scale})) AS VARCHAR)`
  const text: Converter = (v) => (v === null ? null : String(v))
  return numberRead(t, fits, cast(t), withProblem(cast(`delta_num_plain(${t})`), problem, text), text)
}

/** The SQL reading `ref` as an integral type: whole numbers in range only. */
function integerRead(ref: string, type: 'long' | 'integer' | 'short' | 'byte'): ColumnRead {
  const t = textOf(ref)
  const [min, max, digits] = INTEGER_RANGES[type] as readonly [string, string, number]
  // Up to one digit fewer than the type's widest value always fits: the common case.
  const fits = `regexp_full_match(${t}, '[+-]?\\d{1,${digits - 1}}')`
  const exact = `CAST(delta_num_plain(${t}) AS HUGEINT)`
  const problem = `delta_integer_problem(${t}, '${type}', ${digits}, ${min}, ${max})`
  const duck = type === 'long' ? 'BIGINT' : 'INTEGER'
  const convert: Converter =
    type === 'long'
      ? (v) => (v === null ? null : BigInt(v as bigint))
      : (v) => (v === null ? null : Number(v))
  return numberRead(
    t,
    fits,
    `CAST(${t} AS ${duck})`,
    withProblem(`CAST(${exact} AS ${duck})`, problem, convert),
    convert,
  )
}

/** A conversion by `TRY_CAST`, a value it cannot convert named with the column's Delta type. */
function castRead(
  ref: string,
  duckType: string,
  deltaType: string,
  value: string,
  convert: Converter,
): ColumnRead {
  const raw = `CAST(${ref} AS VARCHAR)`
  const problem = `CASE WHEN ${ref} IS NOT NULL AND TRY_CAST(${ref} AS ${duckType}) IS NULL
    THEN ${shown(raw)} || ${sqlString(` is not a ${deltaType}`)} END`
  return withProblem(value.replace('$', `TRY_CAST(${ref} AS ${duckType})`), problem, convert)
}

/**
 * How an input column is read as a Delta type.
 *
 * @param ref - the quoted input column
 * @param type - the Delta type
 * @returns the SQL and the conversion of its result
 */
export function columnRead(ref: string, type: DataType): ColumnRead {
  const text: Converter = (v) => (v === null ? null : String(v))
  if (typeof type !== 'string') {
    const t = duckTypeText(type)
    return castRead(ref, t, typeText(type), 'CAST(to_json($) AS VARCHAR)', (v) =>
      v === null ? null : parseJsonExact(String(v)),
    )
  }
  const decimal = /^decimal\((\d+),\s*(\d+)\)$/.exec(type)
  if (decimal) return decimalRead(ref, Number(decimal[1]), Number(decimal[2]))
  switch (type) {
    case 'long':
    case 'integer':
    case 'short':
    case 'byte':
      return integerRead(ref, type)
    case 'float':
    case 'double':
      return castRead(ref, 'DOUBLE', type, '$', (v) => (v === null ? null : Number(v)))
    case 'boolean':
      return castRead(ref, 'BOOLEAN', type, '$', (v) => (v === null ? null : Boolean(v)))
    case 'binary':
      return castRead(ref, 'BLOB', type, '$', (v) =>
        v instanceof DuckDBBlobValue ? new Uint8Array(v.bytes) : v === null ? null : v,
      )
    case 'date':
      return castRead(ref, 'DATE', type, 'CAST($ AS VARCHAR)', text)
    case 'timestamp':
      return castRead(ref, 'TIMESTAMPTZ', type, `strftime($, '%Y-%m-%dT%H:%M:%S.%fZ')`, text)
    case 'timestamp_ntz':
      return castRead(ref, 'TIMESTAMP', type, `strftime($, '%Y-%m-%dT%H:%M:%S.%f')`, text)
    default:
      return {
        value: `CAST(${ref} AS VARCHAR)`,
        problem: 'NULL',
        sql: `CAST(${ref} AS VARCHAR)`,
        convert: text,
      }
  }
}

/**
 * Whether the input reader should read a column as text rather than as the type DuckDB
 * guesses: every column except temporal ones, whose text formats DuckDB's CSV sniffer detects.
 *
 * @param type - the column's Delta type
 */
export function readsAsText(type: DataType): boolean {
  return (
    typeof type === 'string' &&
    type !== 'date' &&
    type !== 'timestamp' &&
    type !== 'timestamp_ntz' &&
    type !== 'binary'
  )
}

/**
 * The Delta type as messages write it, e.g. `array<decimal(10,2)>`.
 *
 * @param type - the type
 * @returns its text
 */
export function typeText(type: DataType): string {
  if (typeof type === 'string') return type
  if (type.type === 'struct')
    return `struct<${type.fields.map((f) => `${f.name}: ${typeText(f.type)}`).join(', ')}>`
  if (type.type === 'array') return `array<${typeText(type.elementType)}>`
  return `map<${typeText(type.keyType)}, ${typeText(type.valueType)}>`
}

/** DuckDB type text of a Delta type, for casting nested input values. */
export function duckTypeText(type: DataType): string {
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
