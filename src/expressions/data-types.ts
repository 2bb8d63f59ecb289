/**
 * Delta primitive types as predicates see them: the names used in a Delta schema (`long`,
 * `decimal(10,2)`, `timestamp_ntz`, ...) and the SQL aliases accepted in `CAST(x AS type)`.
 */

/** A Delta primitive type other than decimal, spelled as in a Delta schema. */
export type SimpleTypeName =
  | 'boolean'
  | 'byte'
  | 'short'
  | 'integer'
  | 'long'
  | 'float'
  | 'double'
  | 'string'
  | 'binary'
  | 'date'
  | 'timestamp'
  | 'timestamp_ntz'

/** A Delta primitive type name: a simple name or `decimal(p,s)`. */
export type DataTypeName = SimpleTypeName | `decimal(${number},${number})`

/** A parsed Delta primitive type. */
export type DataType =
  | { readonly name: SimpleTypeName }
  | { readonly name: 'decimal'; readonly precision: number; readonly scale: number }

/** The largest decimal precision Delta (and Spark, and DuckDB) allow. */
export const MAX_DECIMAL_PRECISION = 38

const SIMPLE_ALIASES: Readonly<Record<string, SimpleTypeName>> = Object.freeze({
  boolean: 'boolean',
  bool: 'boolean',
  byte: 'byte',
  tinyint: 'byte',
  short: 'short',
  smallint: 'short',
  int: 'integer',
  integer: 'integer',
  long: 'long',
  bigint: 'long',
  float: 'float',
  real: 'float',
  double: 'double',
  string: 'string',
  varchar: 'string',
  text: 'string',
  binary: 'binary',
  blob: 'binary',
  date: 'date',
  timestamp: 'timestamp',
  timestamp_ltz: 'timestamp',
  timestamptz: 'timestamp',
  timestamp_ntz: 'timestamp_ntz',
})

const DECIMAL_RE = /^(?:decimal|dec|numeric)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?$/i

/**
 * Parses a primitive type name: a Delta schema name (`long`, `decimal(10,2)`) or a common SQL
 * alias (`bigint`, `varchar`, `numeric(5)`). Bare `decimal` means `decimal(10,0)`, as in Spark.
 *
 * @param text - the type name, case-insensitive
 * @returns the type, or `undefined` when the name is not a supported primitive type
 */
export function parseDataType(text: string): DataType | undefined {
  const trimmed = text.trim()
  const simple = SIMPLE_ALIASES[trimmed.toLowerCase()]
  if (simple !== undefined) return Object.freeze({ name: simple })
  const m = DECIMAL_RE.exec(trimmed)
  if (m === null) return undefined
  const precision = m[1] === undefined ? 10 : Number(m[1])
  const scale = m[2] === undefined ? 0 : Number(m[2])
  if (precision < 1 || precision > MAX_DECIMAL_PRECISION || scale > precision) return undefined
  return Object.freeze({ name: 'decimal', precision, scale })
}

/**
 * Spells a type the way a Delta schema does.
 *
 * @param type - a parsed type
 * @returns its canonical name, e.g. `long` or `decimal(10,2)`
 */
export function formatDataType(type: DataType): DataTypeName {
  return type.name === 'decimal' ? `decimal(${type.precision},${type.scale})` : type.name
}

/**
 * Whether a type is one of the numeric types (integral, floating or decimal).
 *
 * @param type - a parsed type
 * @returns true for byte, short, integer, long, float, double and decimal
 */
export function isNumericType(type: DataType): boolean {
  switch (type.name) {
    case 'byte':
    case 'short':
    case 'integer':
    case 'long':
    case 'float':
    case 'double':
    case 'decimal':
      return true
    default:
      return false
  }
}

/** Inclusive value range of each integral type. */
export const INTEGRAL_RANGES: Readonly<
  Record<'byte' | 'short' | 'integer' | 'long', readonly [bigint, bigint]>
> = Object.freeze({
  byte: Object.freeze([-128n, 127n] as const),
  short: Object.freeze([-32768n, 32767n] as const),
  integer: Object.freeze([-2147483648n, 2147483647n] as const),
  long: Object.freeze([-9223372036854775808n, 9223372036854775807n] as const),
})
