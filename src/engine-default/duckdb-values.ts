import {
  DuckDBArrayValue,
  DuckDBBlobValue,
  DuckDBDateValue,
  DuckDBDecimalValue,
  DuckDBListValue,
  DuckDBMapValue,
  DuckDBStructValue,
  DuckDBTimestampMillisecondsValue,
  DuckDBTimestampNanosecondsValue,
  DuckDBTimestampSecondsValue,
  DuckDBTimestampTZValue,
  DuckDBTimestampValue,
  type DuckDBValue,
} from '@duckdb/node-api'
import { COLUMN_MAPPING_PHYSICAL_NAME_KEY, type DataType, decimalParts } from '../protocol/schema.js'

/**
 * Converts a DuckDB value to the row representation of a Delta type (see `DataPlane`), exactly:
 * no decimal or microsecond is lost on the way.
 *
 * Nested struct fields are looked up by their physical name first (column mapping), then by
 * their logical name, and returned under the logical name.
 *
 * @param v - a value from a DuckDB result
 * @param type - the Delta type of the column
 * @returns its JavaScript form
 */
export function toJsValue(v: DuckDBValue, type: DataType): unknown {
  if (v === null || v === undefined) return null
  if (typeof type === 'string') {
    switch (type) {
      case 'long':
        return typeof v === 'bigint' ? v : typeof v === 'number' ? BigInt(v) : v
      case 'integer':
      case 'short':
      case 'byte':
        return typeof v === 'bigint' ? Number(v) : v
      case 'timestamp':
        return `${isoMicros(micros(v))}Z`
      case 'timestamp_ntz':
        return isoMicros(micros(v))
      case 'date':
        return v instanceof DuckDBDateValue ? v.toString() : String(v)
      case 'binary':
        return v instanceof DuckDBBlobValue ? new Uint8Array(v.bytes) : v
      default: {
        if (v instanceof DuckDBDecimalValue) {
          const scale = decimalParts(type)?.scale ?? v.scale
          return decimalText(rescale(v.value, v.scale, scale), scale)
        }
        return typeof v === 'object' ? String(v) : v
      }
    }
  }
  switch (type.type) {
    case 'struct': {
      if (!(v instanceof DuckDBStructValue)) return null
      const out: Record<string, unknown> = {}
      for (const f of type.fields) {
        const phys = f.metadata[COLUMN_MAPPING_PHYSICAL_NAME_KEY]
        const raw = typeof phys === 'string' && phys in v.entries ? v.entries[phys] : v.entries[f.name]
        out[f.name] = toJsValue(raw ?? null, f.type)
      }
      return out
    }
    case 'array':
      return v instanceof DuckDBListValue || v instanceof DuckDBArrayValue
        ? v.items.map((x) => toJsValue(x, type.elementType))
        : null
    case 'map':
      return v instanceof DuckDBMapValue
        ? new Map(v.entries.map((e) => [toJsValue(e.key, type.keyType), toJsValue(e.value, type.valueType)]))
        : null
  }
}

/**
 * Converts a value from a DuckDB result of one's own SQL, whose Delta type is not known, to a
 * plain JavaScript value, exactly: timestamps as ISO 8601 text with six fractional digits (`Z` for
 * an instant, no zone for wall time, as `toJsValue` gives them), blobs as bytes, and decimals,
 * dates and nested values as DuckDB's text of them.
 *
 * @param v - a value from a DuckDB result
 * @returns `null`, a boolean, number, bigint, string or `Uint8Array`
 */
export function toPlainValue(v: DuckDBValue): unknown {
  if (
    v === null ||
    typeof v === 'boolean' ||
    typeof v === 'number' ||
    typeof v === 'bigint' ||
    typeof v === 'string'
  )
    return v
  if (v instanceof DuckDBBlobValue) return new Uint8Array(v.bytes)
  if (v instanceof DuckDBTimestampTZValue) return `${isoMicros(v.micros)}Z`
  if (v instanceof DuckDBTimestampValue) return isoMicros(v.micros)
  return String(v)
}

function micros(v: DuckDBValue): bigint {
  if (v instanceof DuckDBTimestampTZValue || v instanceof DuckDBTimestampValue) return v.micros
  if (v instanceof DuckDBTimestampMillisecondsValue) return v.millis * 1000n
  if (v instanceof DuckDBTimestampSecondsValue) return v.seconds * 1_000_000n
  if (v instanceof DuckDBTimestampNanosecondsValue) return v.nanos / 1000n
  if (v instanceof DuckDBDateValue) return BigInt(v.days) * 86_400_000_000n
  return 0n
}

function rescale(unscaled: bigint, from: number, to: number): bigint {
  if (from === to) return unscaled
  return from < to ? unscaled * 10n ** BigInt(to - from) : unscaled / 10n ** BigInt(from - to)
}

/**
 * Exact decimal text of `unscaled / 10^scale`.
 *
 * @param unscaled - the scaled-up integer
 * @param scale - digits after the point
 */
export function decimalText(unscaled: bigint, scale: number): string {
  const neg = unscaled < 0n
  const digits = (neg ? -unscaled : unscaled).toString().padStart(scale + 1, '0')
  const text =
    scale === 0 ? digits : `${digits.slice(0, digits.length - scale)}.${digits.slice(digits.length - scale)}`
  return neg ? `-${text}` : text
}

/**
 * ISO-8601 text (no zone suffix) of microseconds since the epoch, with six fractional digits.
 *
 * @param us - microseconds since 1970-01-01T00:00:00
 */
export function isoMicros(us: bigint): string {
  const floorMs = us / 1000n - (us % 1000n < 0n ? 1n : 0n)
  const frac = ((us % 1_000_000n) + 1_000_000n) % 1_000_000n
  return `${new Date(Number(floorMs)).toISOString().slice(0, 19)}.${frac.toString().padStart(6, '0')}`
}
