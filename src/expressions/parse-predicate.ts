/**
 * The parser of the predicate language: a SQL subset close to Spark SQL.
 *
 * Precedence, loosest first: `OR` < `AND` < `NOT` < comparisons, `IS`, `IN`, `BETWEEN`, `LIKE`
 * (which do not chain) < `+ -` < `* / %` < unary minus. Keywords are case-insensitive;
 * identifiers may be quoted with backticks or double quotes (a doubled quote escapes itself).
 * String literals use single quotes with `''` for a quote; backslashes are ordinary characters.
 *
 * Literals: `NULL`, `TRUE`, `FALSE`; integers (`integer` when they fit 32 bits, else `long`, else
 * `decimal`); `1.5` (decimal, exact text kept); `1e3` (double); Spark suffixes `5Y` (byte),
 * `5S` (short), `5L` (long), `1.5F` (float), `1.5D` (double), `1.5BD` (decimal); strings;
 * `X'0a0b'` (binary); `DATE 'YYYY-MM-DD'`; `TIMESTAMP '...'` (an instant: text without an offset
 * is UTC); `TIMESTAMP_NTZ '...'`.
 */

import { InvalidArgumentError, InvalidPredicateError } from '../errors/index.js'
import {
  arithmetic,
  between,
  binaryLiteral,
  type ComparisonOperator,
  callOf,
  cast,
  col,
  compare,
  conjunction,
  dateLiteral,
  decimalLiteralOf,
  disjunction,
  type Expression,
  expressionDepth,
  FUNCTION_ARITY,
  type FunctionName,
  floatingLiteral,
  integralLiteral,
  isBoolean,
  isIn,
  isNull,
  type Literal,
  like,
  lit,
  MAX_EXPRESSION_DEPTH,
  negate,
  not,
  nullSafeEq,
  stringLiteral,
  timestampLiteral,
  timestampNtzLiteral,
} from './ast.js'
import { INTEGRAL_RANGES, parseDataType } from './data-types.js'
import { parseDecimal } from './decimal.js'
import { type Token, tokenize } from './tokenize.js'

/** Words that cannot be used as bare column names (quote them to use them). */
export const RESERVED_WORDS: ReadonlySet<string> = new Set([
  'AND',
  'OR',
  'NOT',
  'IN',
  'IS',
  'NULL',
  'TRUE',
  'FALSE',
  'BETWEEN',
  'LIKE',
  'CAST',
])

/** Words with a meaning in some positions only; the renderer quotes them to stay unambiguous. */
export const CONTEXTUAL_WORDS: ReadonlySet<string> = new Set([
  'ESCAPE',
  'AS',
  'DISTINCT',
  'FROM',
  'DATE',
  'TIMESTAMP',
  'TIMESTAMP_NTZ',
])

const COMPARISON_OPS: Readonly<Record<string, ComparisonOperator>> = Object.freeze({
  '=': '=',
  '==': '=',
  '<>': '<>',
  '!=': '<>',
  '<': '<',
  '<=': '<=',
  '>': '>',
  '>=': '>=',
  '<=>': '<=>',
})

/**
 * Parses a boolean predicate, e.g. `id > 5 AND name LIKE 'a%'`.
 *
 * @param text - the predicate text
 * @returns the predicate tree
 * @throws {InvalidPredicateError} with the offset of the offending token when the text is not a
 *   valid predicate (syntax error, unknown function, bad literal, a non-boolean expression, or
 *   nesting deeper than `MAX_EXPRESSION_DEPTH`)
 * @throws {InvalidArgumentError} when `text` is not a string, or is blank
 */
export function parsePredicate(text: string): Expression {
  checkText(text, 'parsePredicate')
  if (text.trim() === '') {
    throw new InvalidArgumentError(`The predicate is ${text === '' ? 'empty' : 'blank'}`, {
      argument: 'predicate',
      hint: "A blank predicate is refused rather than taken for every row; pass 'true' for every row.",
    })
  }
  const parser = new Parser(text)
  const expr = parser.parseAll()
  parser.requirePredicate(expr)
  return expr
}

/**
 * Parses a scalar expression, e.g. the right-hand side of `SET col = <expr>`.
 *
 * @param text - the expression text
 * @returns the expression tree
 * @throws {InvalidPredicateError} with the offset of the offending token when the text is not a
 *   valid expression, or nests deeper than `MAX_EXPRESSION_DEPTH`
 * @throws {InvalidArgumentError} when `text` is not a string
 */
export function parseExpression(text: string): Expression {
  checkText(text, 'parseExpression')
  return new Parser(text).parseAll()
}

function checkText(text: unknown, fn: string): void {
  if (typeof text !== 'string') {
    throw new InvalidArgumentError(
      `text must be a string of SQL for ${fn}; got ${text === null ? 'null' : typeof text}`,
      {
        argument: 'text',
      },
    )
  }
}

class Parser {
  private readonly tokens: Token[]
  private index = 0
  /** Current nesting, bounded by MAX_EXPRESSION_DEPTH. */
  private depth = 0
  /** Where each node started, for errors found after the node was built. */
  private readonly positions = new WeakMap<Expression, number>()

  constructor(private readonly text: string) {
    this.tokens = tokenize(text)
  }

  parseAll(): Expression {
    if (this.peek().kind === 'eof') this.fail('Expected an expression, found the end of the input')
    const expr = this.parseOr()
    const t = this.peek()
    if (t.kind !== 'eof') {
      const hint = t.kind === 'op' && t.text === ')' ? ' (unbalanced parenthesis)' : ''
      this.fail(`Unexpected ${describe(t)} after the end of the expression${hint}`, t)
    }
    // Nesting is bounded while parsing; chains add their logarithm on top, checked here.
    const depth = expressionDepth(expr, MAX_EXPRESSION_DEPTH)
    if (depth > MAX_EXPRESSION_DEPTH) this.tooDeep(0)
    return expr
  }

  requirePredicate(expr: Expression): void {
    const bad = findNonBoolean(expr)
    if (bad !== undefined) {
      this.fail(
        `Expected a condition (such as a = 1), found ${describeNode(bad)}`,
        undefined,
        this.positions.get(bad) ?? 0,
      )
    }
  }

  // === Token helpers ===

  private peek(offset = 0): Token {
    return this.tokens[Math.min(this.index + offset, this.tokens.length - 1)] as Token
  }

  private next(): Token {
    const t = this.peek()
    if (this.index < this.tokens.length - 1) this.index++
    return t
  }

  private isWord(word: string, offset = 0): boolean {
    const t = this.peek(offset)
    return t.kind === 'ident' && t.text.toUpperCase() === word
  }

  private isOp(op: string, offset = 0): boolean {
    const t = this.peek(offset)
    return t.kind === 'op' && t.text === op
  }

  private expectOp(op: string, message: string): Token {
    if (!this.isOp(op)) this.fail(message, this.peek())
    return this.next()
  }

  private fail(message: string, token?: Token, position?: number): never {
    throw new InvalidPredicateError(message, this.text, position ?? token?.pos ?? this.peek().pos)
  }

  /**
   * Enters one level of nesting (a parenthesis, NOT, a sign, a call, CAST or an IN list): the
   * parser recurses per level, so nesting is bounded like tree depth, though parentheses alone
   * add no tree level.
   */
  private enter(pos: number): void {
    if (++this.depth > MAX_EXPRESSION_DEPTH) this.tooDeep(pos)
  }

  private leave(): void {
    this.depth--
  }

  private tooDeep(pos: number): never {
    throw new InvalidPredicateError(
      `The expression nests more than ${MAX_EXPRESSION_DEPTH} levels deep`,
      this.text,
      pos,
      {
        hint: 'Flatten it: long AND / OR chains need no parentheses, and a list of values reads best as col IN (v1, v2, ...).',
      },
    )
  }

  private mark<E extends Expression>(expr: E, pos: number): E {
    if (!this.positions.has(expr)) this.positions.set(expr, pos)
    return expr
  }

  /** Checks that an operand follows `what` before descending, for a precise message. */
  private requireOperand(what: string, allowNot: boolean): void {
    const t = this.peek()
    let ok: boolean
    switch (t.kind) {
      case 'eof':
        ok = false
        break
      case 'op':
        ok = t.text === '(' || t.text === '-' || t.text === '+'
        break
      case 'ident': {
        const w = t.text.toUpperCase()
        ok =
          !RESERVED_WORDS.has(w) || ['NULL', 'TRUE', 'FALSE', 'CAST'].includes(w) || (allowNot && w === 'NOT')
        break
      }
      default:
        ok = true
    }
    if (!ok) this.fail(`Expected an expression after ${what}`, t)
  }

  // === Boolean levels ===

  // A chain `a OR b OR ...` is collected in a loop and built as a balanced tree, so that any
  // length parses without recursion and stays shallow for every later stage.
  private parseOr(): Expression {
    const first = this.parseAnd()
    if (!this.isWord('OR')) return first
    const operands = [first]
    while (this.isWord('OR')) {
      this.next()
      this.requireOperand('OR', true)
      operands.push(this.parseAnd())
    }
    return disjunction(operands)
  }

  /** Parses a nested full expression (in parentheses, an IN list, call arguments or CAST). */
  private parseNested(pos: number): Expression {
    this.enter(pos)
    try {
      return this.parseOr()
    } finally {
      this.leave()
    }
  }

  private parseAnd(): Expression {
    const first = this.parseNot()
    if (!this.isWord('AND')) return first
    const operands = [first]
    while (this.isWord('AND')) {
      this.next()
      this.requireOperand('AND', true)
      operands.push(this.parseNot())
    }
    return conjunction(operands)
  }

  private parseNot(): Expression {
    if (this.isWord('NOT')) {
      const start = this.next().pos
      this.requireOperand('NOT', true)
      this.enter(start)
      try {
        return this.mark(not(this.parseNot()), start)
      } finally {
        this.leave()
      }
    }
    return this.parseComparison()
  }

  private parseComparison(): Expression {
    const start = this.peek().pos
    const left = this.parseAdditive()
    const result = this.parsePredicateSuffix(left)
    if (result === left) {
      if (this.isWord('NOT')) this.fail('Expected IN, BETWEEN or LIKE after NOT', this.peek(1))
      return left
    }
    this.mark(result, start)
    if (this.startsPredicateSuffix()) {
      this.fail(`Conditions cannot be chained with ${describe(this.peek())}; add parentheses`, this.peek())
    }
    return result
  }

  private startsPredicateSuffix(): boolean {
    const t = this.peek()
    if (t.kind === 'op') return Object.hasOwn(COMPARISON_OPS, t.text)
    return (
      this.isWord('IS') ||
      this.isWord('IN') ||
      this.isWord('BETWEEN') ||
      this.isWord('LIKE') ||
      (this.isWord('NOT') && (this.isWord('IN', 1) || this.isWord('BETWEEN', 1) || this.isWord('LIKE', 1)))
    )
  }

  private parsePredicateSuffix(left: Expression): Expression {
    const t = this.peek()
    if (t.kind === 'op' && Object.hasOwn(COMPARISON_OPS, t.text)) {
      this.next()
      this.requireOperand(t.text, false)
      return compare(COMPARISON_OPS[t.text] as ComparisonOperator, left, this.parseAdditive())
    }
    if (this.isWord('IS')) return this.parseIs(left)
    let negated = false
    if (this.isWord('NOT') && (this.isWord('IN', 1) || this.isWord('BETWEEN', 1) || this.isWord('LIKE', 1))) {
      this.next()
      negated = true
    }
    if (this.isWord('IN')) {
      this.next()
      this.expectOp('(', 'Expected ( after IN')
      if (this.isOp(')')) this.fail('Expected a value in the IN list', this.peek())
      const list: Expression[] = []
      for (;;) {
        list.push(this.parseNested(t.pos))
        if (!this.isOp(',')) break
        this.next()
        this.requireOperand(',', true)
      }
      this.expectOp(')', 'Expected , or ) in the IN list')
      return isIn(left, list, negated)
    }
    if (this.isWord('BETWEEN')) {
      this.next()
      this.requireOperand('BETWEEN', false)
      const low = this.parseAdditive()
      if (!this.isWord('AND')) this.fail('Expected AND between the bounds of BETWEEN', this.peek())
      this.next()
      this.requireOperand('AND', false)
      return between(left, low, this.parseAdditive(), negated)
    }
    if (this.isWord('LIKE')) {
      this.next()
      this.requireOperand('LIKE', false)
      const pattern = this.parseAdditive()
      let escapeChar: string | null = null
      if (this.isWord('ESCAPE')) {
        this.next()
        const e = this.peek()
        if (e.kind !== 'string' || [...e.text].length !== 1) {
          this.fail("Expected a one-character string after ESCAPE, e.g. ESCAPE '\\'", e)
        }
        escapeChar = this.next().text
      }
      return like(left, pattern, { escape: escapeChar, negated })
    }
    return left
  }

  private parseIs(left: Expression): Expression {
    this.next()
    let negated = false
    if (this.isWord('NOT')) {
      this.next()
      negated = true
    }
    if (this.isWord('NULL')) {
      this.next()
      return isNull(left, negated)
    }
    if (this.isWord('TRUE') || this.isWord('FALSE')) {
      const value = this.next().text.toUpperCase() === 'TRUE'
      return isBoolean(left, value, negated)
    }
    if (this.isWord('DISTINCT') && this.isWord('FROM', 1)) {
      this.next()
      this.next()
      this.requireOperand('DISTINCT FROM', false)
      const eq = nullSafeEq(left, this.parseAdditive())
      return negated ? eq : not(eq)
    }
    this.fail(`Expected NULL, TRUE, FALSE or DISTINCT FROM after IS${negated ? ' NOT' : ''}`, this.peek())
  }

  // === Arithmetic levels ===

  private parseAdditive(): Expression {
    const start = this.peek().pos
    let left = this.parseMultiplicative()
    while (this.isOp('+') || this.isOp('-')) {
      const op = this.next().text as '+' | '-'
      this.requireOperand(op, false)
      left = this.mark(arithmetic(op, left, this.parseMultiplicative()), start)
    }
    return left
  }

  private parseMultiplicative(): Expression {
    const start = this.peek().pos
    let left = this.parseUnary()
    while (this.isOp('*') || this.isOp('/') || this.isOp('%')) {
      const op = this.next().text as '*' | '/' | '%'
      this.requireOperand(op, false)
      left = this.mark(arithmetic(op, left, this.parseUnary()), start)
    }
    return left
  }

  private parseUnary(): Expression {
    const t = this.peek()
    if (t.kind === 'op' && (t.text === '-' || t.text === '+')) {
      this.next()
      this.requireOperand(`unary ${t.text}`, false)
      const n = this.peek()
      // A sign directly before a number is part of the literal, so that -2147483648 is an integer.
      if (n.kind === 'number') {
        this.next()
        return this.mark(this.numberLiteral(n, t.text === '-'), t.pos)
      }
      this.enter(t.pos)
      try {
        const operand = this.parseUnary()
        return t.text === '-' ? this.mark(negate(operand), t.pos) : operand
      } finally {
        this.leave()
      }
    }
    return this.parsePrimary()
  }

  // === Primaries ===

  private parsePrimary(): Expression {
    const t = this.peek()
    switch (t.kind) {
      case 'number':
        this.next()
        return this.mark(this.numberLiteral(t, false), t.pos)
      case 'string':
        this.next()
        return this.mark(stringLiteral(t.text), t.pos)
      case 'binary':
        this.next()
        return this.mark(binaryLiteral(t.text), t.pos)
      case 'quoted':
        return this.parseColumn()
      case 'ident':
        return this.parseWord(t)
      case 'op':
        if (t.text === '(') {
          this.next()
          const inner = this.parseNested(t.pos)
          this.expectOp(')', `Expected ) to close the parenthesis opened at position ${t.pos}`)
          return inner
        }
        return this.fail(`Unexpected ${describe(t)}: expected an expression`, t)
      case 'eof':
        return this.fail('Unexpected end of input: expected an expression', t)
    }
  }

  private parseWord(t: Token): Expression {
    const word = t.text.toUpperCase()
    if (word === 'NULL' || word === 'TRUE' || word === 'FALSE') {
      this.next()
      return this.mark(word === 'NULL' ? lit(null) : lit(word === 'TRUE'), t.pos)
    }
    if (word === 'CAST' && this.isOp('(', 1)) return this.parseCast()
    if (
      (word === 'DATE' || word === 'TIMESTAMP' || word === 'TIMESTAMP_NTZ') &&
      this.peek(1).kind === 'string'
    ) {
      this.next()
      const s = this.next()
      return this.mark(this.typedLiteral(word, s), t.pos)
    }
    if (RESERVED_WORDS.has(word)) {
      this.fail(`Unexpected keyword ${word}: expected an expression (quote it to use it as a column name)`, t)
    }
    if (this.isOp('(', 1)) return this.parseCall(t)
    return this.parseColumn()
  }

  private parseColumn(): Expression {
    const first = this.next()
    const path = [first.text]
    while (this.isOp('.')) {
      this.next()
      const part = this.peek()
      if (part.kind !== 'ident' && part.kind !== 'quoted') {
        this.fail('Expected a field name after .', part)
      }
      path.push(this.next().text)
    }
    return this.mark(col(path), first.pos)
  }

  private parseCall(nameToken: Token): Expression {
    const name = nameToken.text.toLowerCase()
    if (!Object.hasOwn(FUNCTION_ARITY, name)) {
      this.fail(
        `Unknown function ${nameToken.text}; supported functions: ${Object.keys(FUNCTION_ARITY).join(', ')}`,
        nameToken,
      )
    }
    this.next()
    this.next()
    const args: Expression[] = []
    if (!this.isOp(')')) {
      for (;;) {
        args.push(this.parseNested(nameToken.pos))
        if (!this.isOp(',')) break
        this.next()
        this.requireOperand(',', true)
      }
    }
    this.expectOp(')', `Expected , or ) in the arguments of ${name}`)
    const [min, max] = FUNCTION_ARITY[name as FunctionName]
    if (args.length < min || args.length > max) {
      const expected = min === max ? `${min}` : `at least ${min}`
      this.fail(`Function ${name} takes ${expected} argument(s), got ${args.length}`, nameToken)
    }
    return this.mark(callOf(name, args), nameToken.pos)
  }

  private parseCast(): Expression {
    const start = this.next().pos
    this.next()
    this.requireOperand('CAST(', true)
    const operand = this.parseNested(start)
    if (!this.isWord('AS')) this.fail('Expected AS in CAST(expression AS type)', this.peek())
    this.next()
    const typeToken = this.peek()
    if (typeToken.kind !== 'ident') this.fail('Expected a type name after AS', typeToken)
    let typeText = this.next().text
    if (this.isOp('(')) {
      const open = this.next()
      const parts: string[] = []
      while (!this.isOp(')') && this.peek().kind !== 'eof') parts.push(this.next().text)
      this.expectOp(')', `Expected ) to close the type parameters opened at position ${open.pos}`)
      typeText += `(${parts.join('')})`
    }
    const type = parseDataType(typeText)
    if (type === undefined) this.fail(`Unknown type ${typeText} in CAST`, typeToken)
    this.expectOp(')', 'Expected ) to close CAST(')
    return this.mark(cast(operand, typeText), start)
  }

  // === Literals ===

  private typedLiteral(word: string, s: Token): Literal {
    try {
      if (word === 'DATE') return dateLiteral(s.text)
      return word === 'TIMESTAMP' ? timestampLiteral(s.text) : timestampNtzLiteral(s.text)
    } catch (err) {
      if (err instanceof InvalidArgumentError) {
        const format = word === 'DATE' ? 'YYYY-MM-DD' : 'YYYY-MM-DD HH:MM:SS[.ffffff]'
        const zone = word === 'TIMESTAMP' ? ' with an optional offset (Z, +02:00)' : ''
        this.fail(`Invalid ${word} literal '${s.text}': expected ${format}${zone} in years 0001..9999`, s)
      }
      throw err
    }
  }

  private numberLiteral(t: Token, negative: boolean): Literal {
    const m = /^(.*?)(bd|[lsyfd])?$/i.exec(t.text) as RegExpExecArray
    const body = m[1] as string
    const suffix = m[2]?.toLowerCase()
    const signed = negative ? `-${body}` : body
    const integral = /^\d+$/.test(body)
    const shown = negative ? `-${t.text}` : t.text
    try {
      switch (suffix) {
        case 'y':
        case 's':
        case 'l': {
          const type = suffix === 'y' ? 'byte' : suffix === 's' ? 'short' : 'long'
          if (!integral) this.fail(`Invalid ${type} literal ${shown}: expected digits only`, t)
          return integralLiteral(type, BigInt(signed))
        }
        case 'f':
        case 'd':
          return floatingLiteral(suffix === 'f' ? 'float' : 'double', Number(signed))
        case 'bd':
          return decimalLiteralOf(parseDecimal(signed) ?? this.fail(`Invalid decimal literal ${shown}`, t))
      }
      if (integral) {
        const v = BigInt(signed)
        for (const type of ['integer', 'long'] as const) {
          const [lo, hi] = INTEGRAL_RANGES[type]
          if (v >= lo && v <= hi) return integralLiteral(type, v)
        }
        return decimalLiteralOf({ unscaled: v, scale: 0 })
      }
      if (/e/i.test(body)) return floatingLiteral('double', Number(signed))
      return decimalLiteralOf(parseDecimal(signed) ?? this.fail(`Invalid number literal ${shown}`, t))
    } catch (err) {
      if (err instanceof InvalidArgumentError) this.fail(`Invalid literal ${shown}: ${err.message}`, t)
      throw err
    }
  }
}

function describe(t: Token): string {
  switch (t.kind) {
    case 'eof':
      return 'end of input'
    case 'string':
      return `string '${t.text}'`
    case 'ident':
      return RESERVED_WORDS.has(t.text.toUpperCase()) ? t.text.toUpperCase() : `'${t.text}'`
    default:
      return `'${t.text}'`
  }
}

function describeNode(e: Expression): string {
  switch (e.kind) {
    case 'literal':
      return `a ${e.type} literal`
    case 'arithmetic':
    case 'negate':
      return 'an arithmetic expression'
    case 'call':
      return `a call to ${e.name}`
    case 'cast':
      return `a cast to ${e.type}`
    default:
      return `a ${e.kind} expression`
  }
}

/** The first node, in a boolean position, that cannot be boolean-valued. */
function findNonBoolean(e: Expression): Expression | undefined {
  switch (e.kind) {
    case 'and':
    case 'or':
      return findNonBoolean(e.left) ?? findNonBoolean(e.right)
    case 'not':
    case 'is-boolean':
      return findNonBoolean(e.operand)
    case 'literal':
      return e.type === 'boolean' || e.type === 'null' ? undefined : e
    case 'call':
      if (e.name !== 'coalesce') return e
      for (const a of e.args) {
        const bad = findNonBoolean(a)
        if (bad !== undefined) return bad
      }
      return undefined
    case 'cast':
      return e.type === 'boolean' ? undefined : e
    case 'arithmetic':
    case 'negate':
      return e
    default:
      return undefined
  }
}
