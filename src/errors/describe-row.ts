/**
 * A short rendering of a row for a message: at most a few hundred characters.
 */
export function describeRow(row: Readonly<Record<string, unknown>>): string {
  const text = `{ ${Object.entries(row)
    .map(([k, v]) => `${k}: ${renderValue(v)}`)
    .join(', ')} }`
  return text.length > 300 ? `${text.slice(0, 297)}...` : text
}

function renderValue(v: unknown): string {
  if (v === null || v === undefined) return 'NULL'
  if (typeof v === 'string') return JSON.stringify(v)
  if (typeof v === 'bigint') return v.toString()
  if (v instanceof Uint8Array) return `<${v.length} bytes>`
  try {
    return JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x)) ?? String(v)
  } catch {
    return String(v)
  }
}
