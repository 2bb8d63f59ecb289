/**
 * What `append` does to its input before the writer checks it: Arrow input becomes row objects
 * (see `arrow-to-rows`), and a `Date` given for a `date` column becomes its UTC calendar day, as
 * a `Date` given for a `timestamp` column is its instant.
 */

import { formatDate } from '../expressions/temporal.js'
import type { DataType, StructType } from '../protocol/schema.js'

type Row = Readonly<Record<string, unknown>>

const MS_PER_DAY = 86_400_000

/**
 * The rows with every `Date` in a `date` column (at any depth) replaced by its UTC day
 * (`'YYYY-MM-DD'`). Rows without one are returned as they are, and so is the array when the
 * schema has no date column.
 *
 * @param rows - the rows to append
 * @param schema - the table schema
 * @returns the rows to hand to the writer
 */
export function withDatesAsDays(rows: readonly Row[], schema: StructType): readonly Row[] {
  const dateFields = schema.fields.filter((f) => hasDate(f.type))
  if (dateFields.length === 0) return rows
  let out: Row[] | undefined
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i] as Row
    let copy: Record<string, unknown> | undefined
    for (const f of dateFields) {
      // The writer matches column names exactly.
      if (!Object.hasOwn(row, f.name)) continue
      const key = f.name
      const v = row[key]
      const converted = convert(v, f.type)
      if (converted !== v) {
        copy ??= { ...row }
        copy[key] = converted
      }
    }
    if (copy !== undefined) {
      out ??= rows.slice()
      out[i] = copy
    }
  }
  return out ?? rows
}

function hasDate(type: DataType): boolean {
  if (typeof type === 'string') return type === 'date'
  switch (type.type) {
    case 'struct':
      return type.fields.some((f) => hasDate(f.type))
    case 'array':
      return hasDate(type.elementType)
    case 'map':
      return hasDate(type.keyType) || hasDate(type.valueType)
  }
}

/** `v` with its dates as days; the same object when nothing changed. */
function convert(v: unknown, type: DataType): unknown {
  if (v === null || v === undefined) return v
  if (typeof type === 'string') {
    if (type === 'date' && v instanceof Date && !Number.isNaN(v.getTime())) {
      return formatDate(Math.floor(v.getTime() / MS_PER_DAY))
    }
    return v
  }
  switch (type.type) {
    case 'struct': {
      if (typeof v !== 'object' || Array.isArray(v)) return v
      let copy: Record<string, unknown> | undefined
      for (const f of type.fields) {
        if (!hasDate(f.type)) continue
        if (!Object.hasOwn(v, f.name)) continue
        const key = f.name
        const before = (v as Row)[key]
        const after = convert(before, f.type)
        if (after !== before) {
          copy ??= { ...(v as Row) }
          copy[key] = after
        }
      }
      return copy ?? v
    }
    case 'array': {
      if (!Array.isArray(v) || !hasDate(type.elementType)) return v
      const mapped = v.map((x) => convert(x, type.elementType))
      return mapped.some((x, i) => x !== v[i]) ? mapped : v
    }
    case 'map': {
      if (!(v instanceof Map)) return v
      let changed = false
      const out = new Map<unknown, unknown>()
      for (const [k, x] of v) {
        const k2 = convert(k, type.keyType)
        const x2 = convert(x, type.valueType)
        changed ||= k2 !== k || x2 !== x
        out.set(k2, x2)
      }
      return changed ? out : v
    }
  }
}
