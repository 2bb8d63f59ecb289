/**
 * Rows as JSON can hold them: scanned rows carry bigints (`long` columns) and may carry
 * `Uint8Array`s and `Map`s, which `JSON.stringify` refuses or empties.
 */

import type { Row } from './table-scan.js'

/**
 * A copy of a row that `JSON.stringify` writes without loss or error. Values become:
 *
 * | value | JSON-safe form |
 * |---|---|
 * | bigint within ±(2^53 - 1) | number |
 * | other bigint | decimal string (a JSON number would lose digits) |
 * | `NaN`, `Infinity`, `-Infinity` | the strings `'NaN'`, `'Infinity'`, `'-Infinity'` (JSON has no such numbers) |
 * | `Date` | ISO string (`toISOString()`) |
 * | `Uint8Array` | base64 string |
 * | `Map` | object of its entries, keys as strings |
 * | array, plain object | the same, converted value by value |
 *
 * Decimals, dates and timestamps are already text in scanned rows (`'12.50'`, `'2024-01-31'`,
 * `'2024-01-31T12:00:00.000000Z'`) and stay so; strings, booleans, finite numbers and null are
 * kept as they are.
 *
 * ### Examples
 * ```ts
 * const rows = await table.scan().toArray()
 * res.end(JSON.stringify(rows.map(toJSONRow)))
 * // or: await table.scan({ jsonSafe: true }).toArray()
 * ```
 *
 * @param row - a row (or any value of one)
 * @returns the JSON-safe copy; the row itself is not changed
 */
export function toJSONRow(row: Readonly<Row>): Record<string, unknown> {
  return toJSONValue(row) as Record<string, unknown>
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER)

/** One value as {@link toJSONRow} converts it. */
export function toJSONValue(value: unknown): unknown {
  switch (typeof value) {
    case 'bigint':
      return value <= MAX_SAFE && value >= -MAX_SAFE ? Number(value) : value.toString()
    case 'number':
      return Number.isFinite(value) ? value : String(value)
    case 'object': {
      if (value === null) return null
      if (Array.isArray(value)) return value.map(toJSONValue)
      if (value instanceof Date) return value.toISOString()
      if (value instanceof Uint8Array)
        return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64')
      if (value instanceof Map) {
        const out: Record<string, unknown> = {}
        for (const [k, v] of value) out[String(toJSONValue(k))] = toJSONValue(v)
        return out
      }
      const out: Record<string, unknown> = {}
      for (const [k, v] of Object.entries(value)) out[k] = toJSONValue(v)
      return out
    }
    default:
      return value
  }
}
