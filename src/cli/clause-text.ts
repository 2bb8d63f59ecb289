import { UsageError } from './command.js'

/** Column name to SQL expression text. */
export type Assignments = Record<string, string>

/** A MERGE clause for target rows (matched, or not matched by source), as the table API takes it. */
export type MatchedClause =
  | { readonly if?: string; readonly update: Assignments | '*' }
  | { readonly if?: string; readonly delete: true }

/** A MERGE clause for source rows no target row matches. */
export type InsertClause = { readonly if?: string; readonly insert: Assignments | '*' }

/** Any MERGE clause. */
export type ClauseAction = MatchedClause | InsertClause

/**
 * Parses a `--when-matched` or `--when-not-matched-by-source` clause.
 *
 * @param text - the clause text
 * @param kind - which option it came from
 * @returns the clause
 * @throws {UsageError} when the text is not such a clause
 */
export function parseMatchedClause(text: string, kind: 'matched' | 'not-matched-by-source'): MatchedClause {
  return parseMergeClause(text, kind) as MatchedClause
}

/**
 * Parses a `--when-not-matched` clause.
 *
 * @param text - the clause text
 * @returns the clause
 * @throws {UsageError} when the text is not an insert clause
 */
export function parseInsertClause(text: string): InsertClause {
  return parseMergeClause(text, 'not-matched') as InsertClause
}

/**
 * Splits text at a separator that sits outside quotes and parentheses.
 *
 * @param text - SQL-ish text
 * @param sep - a one-character separator
 * @returns the pieces, untrimmed
 */
export function splitTopLevel(text: string, sep: string): string[] {
  const out: string[] = []
  let depth = 0
  let quote: string | undefined
  let start = 0
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string
    if (quote !== undefined) {
      if (ch === quote) {
        if (text[i + 1] === quote) i++
        else quote = undefined
      }
      continue
    }
    if (ch === "'" || ch === '"' || ch === '`') quote = ch
    else if (ch === '(') depth++
    else if (ch === ')') depth = Math.max(0, depth - 1)
    else if (ch === sep && depth === 0) {
      out.push(text.slice(start, i))
      start = i + 1
    }
  }
  out.push(text.slice(start))
  return out
}

/**
 * Parses `col = expr[, col = expr ...]`.
 *
 * @param text - the assignments
 * @param option - the option they came from, for messages
 * @returns column name to expression text
 * @throws {UsageError} on an entry without `=` or without a column name
 */
export function parseAssignments(text: string, option: string): Assignments {
  const out: Assignments = {}
  for (const piece of splitTopLevel(text, ',')) {
    const entry = piece.trim()
    if (entry === '') continue
    const eq = entry.indexOf('=')
    const column = unquote(entry.slice(0, Math.max(0, eq)).trim())
    const expr = entry.slice(eq + 1).trim()
    if (
      eq <= 0 ||
      column === '' ||
      expr === '' ||
      !/^[A-Za-z_][\w.]*$|^`.*`$|^".*"$/.test(entry.slice(0, eq).trim())
    ) {
      throw new UsageError(`${option} needs 'column = expression', got '${entry}'`, undefined, {
        argument: option,
      })
    }
    out[column] = expr
  }
  if (Object.keys(out).length === 0) {
    throw new UsageError(`${option} needs at least one 'column = expression'`, undefined, {
      argument: option,
    })
  }
  return out
}

/**
 * Parses one MERGE clause option: `[and COND then] ACTION`, where ACTION is `delete`,
 * `update *`, `update set a = expr, ...`, `insert *` or `insert set a = expr, ...`.
 *
 * @param text - the clause text
 * @param kind - which clause list it belongs to (which actions are allowed)
 * @returns the clause
 * @throws {UsageError} when the text is not a clause of that kind
 */
export function parseMergeClause(
  text: string,
  kind: 'matched' | 'not-matched' | 'not-matched-by-source',
): ClauseAction {
  const option = `--when-${kind}`
  let rest = text.trim()
  let condition: string | undefined
  const head = /^(and|if)\s+/i.exec(rest)
  if (head) {
    const thenAt = findKeyword(rest, 'then')
    if (thenAt < 0)
      throw new UsageError(
        `${option} '${text}': a condition needs 'then', as in "and source.op = 'D' then delete"`,
        'merge',
      )
    condition = rest.slice(head[0].length, thenAt).trim()
    rest = rest.slice(thenAt + 4).trim()
    if (condition === '') throw new UsageError(`${option} '${text}': empty condition`, 'merge')
  }
  const cond = condition === undefined ? {} : { if: condition }
  const m = /^(delete|update|insert)\b\s*(.*)$/is.exec(rest)
  const verb = m?.[1]?.toLowerCase()
  const body = (m?.[2] ?? '').trim()
  const allowed = kind === 'not-matched' ? ['insert'] : ['update', 'delete']
  if (verb === undefined || !allowed.includes(verb)) {
    throw new UsageError(
      `${option} '${text}': expected ${allowed.map((a) => `'${a} ...'`).join(' or ')}`,
      'merge',
    )
  }
  if (verb === 'delete') {
    if (body !== '') throw new UsageError(`${option} '${text}': 'delete' takes nothing after it`, 'merge')
    return { ...cond, delete: true }
  }
  let values: Assignments | '*'
  if (body === '*') values = '*'
  else if (/^set\s+/i.test(body)) values = parseAssignments(body.replace(/^set\s+/i, ''), option)
  else
    throw new UsageError(
      `${option} '${text}': expected '${verb} *' or '${verb} set col = expr, ...'`,
      'merge',
    )
  return verb === 'update' ? { ...cond, update: values } : { ...cond, insert: values }
}

/** Index of a keyword (whole word, any case) outside quotes and parentheses, or -1. */
function findKeyword(text: string, word: string): number {
  let depth = 0
  let quote: string | undefined
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string
    if (quote !== undefined) {
      if (ch === quote) quote = undefined
      continue
    }
    if (ch === "'" || ch === '"' || ch === '`') quote = ch
    else if (ch === '(') depth++
    else if (ch === ')') depth = Math.max(0, depth - 1)
    else if (
      depth === 0 &&
      text.slice(i, i + word.length).toLowerCase() === word &&
      /\s/.test(text[i - 1] ?? '') &&
      /\s|$/.test(text[i + word.length] ?? '')
    )
      return i
  }
  return -1
}

function unquote(name: string): string {
  const m = /^[`"](.*)[`"]$/.exec(name)
  return m ? (m[1] as string) : name
}
