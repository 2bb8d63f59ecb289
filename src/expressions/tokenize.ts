/**
 * The tokenizer of the predicate language. Every token records the character offset where it
 * starts, so that parse errors can point at it.
 */

import { InvalidPredicateError } from '../errors/index.js'

/** A lexical token. */
export type Token =
  | { readonly kind: 'ident'; readonly text: string; readonly pos: number }
  | { readonly kind: 'quoted'; readonly text: string; readonly pos: number }
  | { readonly kind: 'string'; readonly text: string; readonly pos: number }
  | { readonly kind: 'binary'; readonly text: string; readonly pos: number }
  | { readonly kind: 'number'; readonly text: string; readonly pos: number }
  | { readonly kind: 'op'; readonly text: string; readonly pos: number }
  | { readonly kind: 'eof'; readonly text: ''; readonly pos: number }

const OPERATORS = [
  '<=>',
  '<>',
  '!=',
  '<=',
  '>=',
  '==',
  '=',
  '<',
  '>',
  '+',
  '-',
  '*',
  '/',
  '%',
  '(',
  ')',
  ',',
  '.',
]

function isIdentStart(c: string): boolean {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_'
}

function isIdentPart(c: string): boolean {
  return isIdentStart(c) || isDigit(c)
}

function isDigit(c: string): boolean {
  return c >= '0' && c <= '9'
}

function readQuoted(
  text: string,
  start: number,
  quote: string,
  what: string,
): { value: string; end: number } {
  let value = ''
  let i = start + 1
  for (;;) {
    const j = text.indexOf(quote, i)
    if (j < 0) throw new InvalidPredicateError(`Unterminated ${what}`, text, start)
    value += text.slice(i, j)
    if (text[j + 1] === quote) {
      value += quote
      i = j + 2
    } else {
      return { value, end: j + 1 }
    }
  }
}

function readNumber(text: string, start: number): number {
  let i = start
  while (isDigit(text[i] ?? '')) i++
  if (text[i] === '.') {
    i++
    while (isDigit(text[i] ?? '')) i++
  }
  if (text[i] === 'e' || text[i] === 'E') {
    let j = i + 1
    if (text[j] === '+' || text[j] === '-') j++
    if (isDigit(text[j] ?? '')) {
      while (isDigit(text[j] ?? '')) j++
      i = j
    }
  }
  const rest = text.slice(i, i + 2).toLowerCase()
  if (rest === 'bd') i += 2
  else if (/^[lsyfd]/.test(rest)) i += 1
  if (isIdentPart(text[i] ?? '')) {
    throw new InvalidPredicateError(`Invalid number literal '${text.slice(start, i + 1)}'`, text, start)
  }
  return i
}

/** An unpaired UTF-16 surrogate (in Unicode mode a pair is one code point and does not match). */
const LONE_SURROGATE = /\p{Cs}/u

/**
 * Splits predicate text into tokens, ending with an `eof` token.
 *
 * @param text - the predicate or expression text
 * @returns the tokens
 * @throws {InvalidPredicateError} for an unterminated string or quoted identifier, a malformed
 *   number or binary literal, a character the language does not use, or a lone UTF-16 surrogate
 */
export function tokenize(text: string): Token[] {
  // A lone surrogate cannot be stored as UTF-8: DuckDB would compare against U+FFFD instead, and
  // a DELETE by such a literal would match rows that hold a real U+FFFD.
  const lone = text.search(LONE_SURROGATE)
  if (lone >= 0) {
    throw new InvalidPredicateError(
      `The text has a lone UTF-16 surrogate (U+${text.charCodeAt(lone).toString(16).toUpperCase()}), which UTF-8 cannot hold`,
      text,
      lone,
    )
  }
  const tokens: Token[] = []
  let i = 0
  while (i < text.length) {
    const c = text[i] as string
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++
      continue
    }
    const prev = tokens[tokens.length - 1]
    if ((c === 'x' || c === 'X') && text[i + 1] === "'") {
      const { value, end } = readQuoted(text, i + 1, "'", 'binary literal')
      if (!/^(?:[0-9a-fA-F]{2})*$/.test(value)) {
        throw new InvalidPredicateError(
          "Invalid binary literal: expected an even number of hex digits, e.g. X'0a0b'",
          text,
          i,
        )
      }
      tokens.push({ kind: 'binary', text: value.toLowerCase(), pos: i })
      i = end
    } else if (isIdentStart(c)) {
      let j = i + 1
      while (isIdentPart(text[j] ?? '')) j++
      tokens.push({ kind: 'ident', text: text.slice(i, j), pos: i })
      i = j
    } else if (
      isDigit(c) ||
      (c === '.' && isDigit(text[i + 1] ?? '') && prev?.kind !== 'ident' && prev?.kind !== 'quoted')
    ) {
      const end = readNumber(text, i)
      tokens.push({ kind: 'number', text: text.slice(i, end), pos: i })
      i = end
    } else if (c === "'") {
      const { value, end } = readQuoted(text, i, "'", 'string literal')
      tokens.push({ kind: 'string', text: value, pos: i })
      i = end
    } else if (c === '`' || c === '"') {
      const { value, end } = readQuoted(text, i, c, 'quoted identifier')
      if (value.length === 0) throw new InvalidPredicateError('Empty quoted identifier', text, i)
      tokens.push({ kind: 'quoted', text: value, pos: i })
      i = end
    } else {
      const op = OPERATORS.find((o) => text.startsWith(o, i))
      if (op === undefined) {
        throw new InvalidPredicateError(`Unexpected character '${c}'`, text, i)
      }
      tokens.push({ kind: 'op', text: op, pos: i })
      i += op.length
    }
  }
  tokens.push({ kind: 'eof', text: '', pos: text.length })
  return tokens
}
