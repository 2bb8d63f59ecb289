import { stringify } from 'lossless-json'
import { type Painter, pad } from './terminal.js'

/** Output formats of row-producing commands. */
export type RowFormat = 'table' | 'json' | 'csv'

/**
 * Turns a row value into plain JSON data: bigints stay bigints (written as exact JSON integers),
 * binary becomes base64, maps become objects, DuckDB value objects their text.
 *
 * @param value - a row value
 * @returns JSON-ready data
 */
export function jsonValue(value: unknown): unknown {
  if (value === null || value === undefined) return null
  if (typeof value === 'bigint' || typeof value === 'string' || typeof value === 'boolean') return value
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value)
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64')
  if (value instanceof Date) return value.toISOString()
  if (value instanceof Map) {
    const out: Record<string, unknown> = {}
    for (const [k, v] of value) out[typeof k === 'string' ? k : String(jsonValue(k))] = jsonValue(v)
    return out
  }
  if (Array.isArray(value)) return value.map(jsonValue)
  if (typeof value === 'object') {
    const proto = Object.getPrototypeOf(value)
    if (proto !== Object.prototype && proto !== null) return String(value)
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) out[k] = jsonValue(v)
    return out
  }
  return String(value)
}

/**
 * JSON text of any CLI result, exact for 64-bit integers.
 *
 * @param value - the result
 * @param indent - pretty-print indentation
 * @returns the JSON text
 */
export function toJsonText(value: unknown, indent?: number): string {
  return stringify(jsonValue(value), undefined, indent) ?? 'null'
}

/**
 * The text of one value in a table cell or CSV field.
 *
 * @param value - a row value
 * @returns its text (`NULL` for null in tables; CSV callers map null separately)
 */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return 'NULL'
  if (typeof value === 'string') return value
  if (typeof value === 'bigint' || typeof value === 'number' || typeof value === 'boolean')
    return String(value)
  if (value instanceof Uint8Array) return `0x${Buffer.from(value).toString('hex')}`
  return toJsonText(value)
}

/**
 * Renders rows as an aligned text table: numbers right-aligned, header bold, nulls dim.
 *
 * @param columns - column names, in order
 * @param rows - the rows
 * @param painter - styles (no-op off a terminal)
 * @returns the table text, one line per row plus the header and a rule
 */
export function renderTable(
  columns: readonly string[],
  rows: readonly Readonly<Record<string, unknown>>[],
  painter: Painter,
): string {
  const MAX_CELL = 60
  const cells = rows.map((r) =>
    columns.map((c) => {
      const t = cellText(r[c]).replaceAll('\n', '\\n')
      return t.length > MAX_CELL ? `${t.slice(0, MAX_CELL - 3)}...` : t
    }),
  )
  const numeric = columns.map((c) =>
    rows.every((r) => {
      const v = r[c]
      return v === null || v === undefined || typeof v === 'number' || typeof v === 'bigint'
    }),
  )
  // A loop, not Math.max(...cells): a result of a million rows would overflow the stack.
  const widths = columns.map((c, i) => {
    let width = c.length
    for (const row of cells) width = Math.max(width, (row[i] as string).length)
    return width
  })
  const lines: string[] = []
  lines.push(
    columns
      .map((c, i) => painter.paint('bold', pad(c, widths[i] as number, numeric[i] ? 'right' : 'left')))
      .join('  ')
      .trimEnd(),
  )
  lines.push(widths.map((w) => painter.paint('dim', '-'.repeat(w))).join('  '))
  for (const [ri, row] of cells.entries()) {
    const raw = rows[ri] as Readonly<Record<string, unknown>>
    lines.push(
      row
        .map((t, i) => {
          const v = raw[columns[i] as string]
          const styled = v === null || v === undefined ? painter.paint('dim', t) : t
          return pad(styled, widths[i] as number, numeric[i] ? 'right' : 'left')
        })
        .join('  ')
        .trimEnd(),
    )
  }
  return lines.join('\n')
}

/**
 * One CSV record (RFC 4180): fields with commas, quotes or line breaks are quoted; null is empty.
 *
 * @param values - the fields
 * @returns the record text, without the line break
 */
export function csvRecord(values: readonly unknown[]): string {
  return values
    .map((v) => {
      if (v === null || v === undefined) return ''
      const t = cellText(v)
      return /[",\r\n]/.test(t) ? `"${t.replaceAll('"', '""')}"` : t
    })
    .join(',')
}
