/**
 * LIKE patterns: `%` matches any run of characters (possibly empty), `_` exactly one character
 * (code point). With an escape character, the character after it is literal. Matching is
 * case-sensitive.
 */

import { InvalidPredicateError } from '../errors/index.js'

/** One piece of a pattern. */
type Piece = { readonly literal: string } | '%' | '_'

function pieces(pattern: string, escapeChar: string | null): Piece[] {
  const out: Piece[] = []
  const chars = [...pattern]
  let text = ''
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i] as string
    if (escapeChar !== null && c === escapeChar) {
      const next = chars[i + 1]
      if (next === undefined) {
        throw new InvalidPredicateError(`LIKE pattern '${pattern}' ends with the escape character`, pattern)
      }
      text += next
      i++
    } else if (c === '%' || c === '_') {
      if (text !== '') out.push({ literal: text })
      text = ''
      out.push(c)
    } else {
      text += c
    }
  }
  if (text !== '') out.push({ literal: text })
  return out
}

/**
 * Compiles a LIKE pattern to an anchored regular expression.
 *
 * @param pattern - the pattern
 * @param escape - the escape character, or null for none
 * @returns a regular expression matching exactly the strings the pattern matches
 * @throws {InvalidPredicateError} when the pattern ends with the escape character
 */
export function likeToRegExp(pattern: string, escapeChar: string | null): RegExp {
  const body = pieces(pattern, escapeChar)
    .map((p) => (p === '%' ? '.*' : p === '_' ? '.' : p.literal.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&')))
    .join('')
  return new RegExp(`^${body}$`, 'su')
}

/**
 * What every string matched by a pattern starts with.
 *
 * @param pattern - the pattern
 * @param escape - the escape character, or null for none
 * @returns the literal prefix before the first wildcard, and whether the pattern has no
 *   wildcard at all (then it matches exactly that string)
 * @throws {InvalidPredicateError} when the pattern ends with the escape character
 */
export function likePrefix(pattern: string, escapeChar: string | null): { prefix: string; exact: boolean } {
  const ps = pieces(pattern, escapeChar)
  const first = ps[0]
  const prefix = first !== undefined && typeof first === 'object' ? first.literal : ''
  const exact = ps.every((p) => typeof p === 'object')
  return { prefix: exact ? ps.map((p) => (p as { literal: string }).literal).join('') : prefix, exact }
}
