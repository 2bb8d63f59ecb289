import { InvalidArgumentError } from '../errors/index.js'
import { type PartitionValue, parsePartitionValue } from '../protocol/partition-values.js'
import { type DataType, decimalParts, type PrimitiveType } from '../protocol/schema.js'
import { sqlString } from './duckdb-runtime.js'
import { duckType } from './duckdb-types.js'

/** What {@link partitionValueLiteral} needs to know of a partition column. */
export interface PartitionLiteralColumn {
  /** Logical name (a fallback key of `partitionValues`, and named in errors). */
  readonly name: string
  /** Physical name: the key of `partitionValues` under column mapping. */
  readonly physicalName: string
  /** The column type; partition columns are always primitive. */
  readonly type: DataType
}

/**
 * A file's partition value for one column as an exact, typed DuckDB literal.
 *
 * Every SQL path that injects partition values (scans, counts, the SQL view, rewrites,
 * compaction, MERGE) renders them here, so that they all decode the log value the same way: the
 * text is typed once by {@link parsePartitionValue}, then written as a literal that DuckDB cannot
 * reinterpret. Binary values become `from_hex(...)` of their bytes, because a text-to-BLOB cast
 * would read `\xNN` in the text as an escape and produce other bytes than the protocol's.
 * Timestamps become microseconds since the epoch, which does not depend on how DuckDB parses
 * timestamp text. The connection's time zone must be UTC (the engine pins it).
 *
 * @param values - the file's `partitionValues` (physical names; logical names are a fallback)
 * @param column - the partition column
 * @returns the SQL literal; a typed NULL for a null or empty value
 * @throws {InvalidTableError} `malformed-action` when the text does not fit the column type
 * @throws {InvalidArgumentError} when the column type cannot be a partition column type
 */
export function partitionValueLiteral(
  values: Readonly<Record<string, string | null | undefined>>,
  column: PartitionLiteralColumn,
): string {
  const type = column.type
  if (typeof type !== 'string') {
    throw new InvalidArgumentError(`Partition column '${column.name}' has a nested type`, {
      argument: column.name,
    })
  }
  const raw = values[column.physicalName] ?? values[column.name] ?? null
  return typedLiteral(parsePartitionValue(raw, type, column.name), type)
}

function typedLiteral(value: PartitionValue, type: PrimitiveType): string {
  const t = duckType(type)
  if (value === null) return `CAST(NULL AS ${t})`
  if (value instanceof Uint8Array) return `from_hex(${sqlString(Buffer.from(value).toString('hex'))})`
  switch (type) {
    case 'string':
      return sqlString(String(value))
    case 'boolean':
      return value ? 'TRUE' : 'FALSE'
    case 'date':
      return `DATE ${sqlString(String(value))}`
    case 'timestamp':
      return `CAST(make_timestamp(CAST(${String(value)} AS BIGINT)) AS TIMESTAMPTZ)`
    case 'timestamp_ntz':
      return `make_timestamp(CAST(${String(value)} AS BIGINT))`
    case 'float':
    case 'double':
      // String(-0) is '0'; non-finite values ('NaN', 'Infinity') need the string form too.
      return `CAST(${sqlString(Object.is(value, -0) ? '-0.0' : String(value))} AS ${t})`
    default:
      return decimalParts(type) !== undefined
        ? `CAST(${sqlString(String(value))} AS ${t})`
        : `CAST(${String(value)} AS ${t})`
  }
}
