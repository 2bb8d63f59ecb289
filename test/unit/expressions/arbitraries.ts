/**
 * fast-check generators shared by the expression tests: arbitrary trees (for the text round
 * trip) and well-typed predicates over a fixed table (for DuckDB parity and skipping soundness).
 */
import fc from 'fast-check'
import {
  type ArithmeticOperator,
  and as andNode,
  arithmetic,
  between,
  binaryLiteral,
  type ComparisonOperator,
  call,
  cast,
  col,
  compare,
  dateLiteral,
  decimalLiteralOf,
  type Expression,
  floatingLiteral,
  integralLiteral,
  isBoolean,
  isIn,
  isNull,
  like,
  lit,
  negate,
  not,
  or as orNode,
  stringLiteral,
  timestampLiteral,
  timestampNtzLiteral,
} from '../../../src/expressions/ast.js'

const COMPARISONS: ComparisonOperator[] = ['=', '<>', '<', '<=', '>', '>=', '<=>']
const ARITHMETIC: ArithmeticOperator[] = ['+', '-', '*', '/', '%']

// === Arbitrary trees (any shape, not necessarily well-typed) ===

const NAMES = [
  'a',
  'B_1',
  'and',
  'date',
  'escape',
  'we`ird',
  'dq"x',
  'sp ace',
  'x',
  'X',
  '\u00e9',
  '1st',
  'lower',
]

/** Any literal of any type, including edge values. */
export const anyLiteral: fc.Arbitrary<Expression> = fc.oneof(
  fc.constant(lit(null)),
  fc.boolean().map((b) => lit(b)),
  fc.bigInt({ min: -128n, max: 127n }).map((v) => integralLiteral('byte', v)),
  fc.bigInt({ min: -32768n, max: 32767n }).map((v) => integralLiteral('short', v)),
  fc.bigInt({ min: -(2n ** 31n), max: 2n ** 31n - 1n }).map((v) => integralLiteral('integer', v)),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map((v) => integralLiteral('long', v)),
  fc.float({ noNaN: true, noDefaultInfinity: true }).map((v) => floatingLiteral('float', v)),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((v) => floatingLiteral('double', v)),
  fc
    .tuple(fc.bigInt({ min: -(10n ** 38n) + 1n, max: 10n ** 38n - 1n }), fc.integer({ min: 0, max: 38 }))
    .map(([unscaled, scale]) => decimalLiteralOf({ unscaled, scale })),
  fc.string({ unit: 'binary', maxLength: 8 }).map(stringLiteral),
  fc.constantFrom("it's", "''", '\\', '%_', '`"').map(stringLiteral),
  fc.uint8Array({ maxLength: 4 }).map(binaryLiteral),
  fc.integer({ min: -719162, max: 2932896 }).map(dateLiteral),
  fc.bigInt({ min: -62135596800000000n, max: 253402300799999999n }).map(timestampLiteral),
  fc.bigInt({ min: -62135596800000000n, max: 253402300799999999n }).map(timestampNtzLiteral),
)

const anyColumn = fc.array(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 2 }).map((p) => col(p))

const CAST_TYPES = [
  'boolean',
  'byte',
  'short',
  'integer',
  'long',
  'float',
  'double',
  'decimal(10,2)',
  'string',
]

/** Any expression tree, up to a modest depth. */
export const anyExpression: fc.Arbitrary<Expression> = fc.letrec<{ expr: Expression }>((tie) => {
  const e = tie('expr')
  return {
    expr: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      anyLiteral,
      anyColumn,
      fc.tuple(fc.constantFrom(...COMPARISONS), e, e).map(([op, l, r]) => compare(op, l, r)),
      fc.tuple(e, e).map(([l, r]) => andNode(l, r)),
      fc.tuple(e, e).map(([l, r]) => orNode(l, r)),
      e.map(not),
      fc
        .tuple(e, fc.array(e, { minLength: 1, maxLength: 3 }), fc.boolean())
        .map(([v, l, n]) => isIn(v, l, n)),
      fc.tuple(e, e, e, fc.boolean()).map(([v, lo, hi, n]) => between(v, lo, hi, n)),
      fc.tuple(e, fc.boolean()).map(([v, n]) => isNull(v, n)),
      fc.tuple(e, fc.boolean(), fc.boolean()).map(([v, b, n]) => isBoolean(v, b, n)),
      fc
        .tuple(e, e, fc.constantFrom(null, '\\', "'", '%', 'x'), fc.boolean())
        .map(([v, p, escapeChar, negated]) => like(v, p, { escape: escapeChar, negated })),
      fc.tuple(fc.constantFrom(...ARITHMETIC), e, e).map(([op, l, r]) => arithmetic(op, l, r)),
      e.map(negate),
      fc.tuple(fc.constantFrom('lower', 'upper', 'length', 'abs'), e).map(([name, a]) => call(name, a)),
      fc.array(e, { minLength: 1, maxLength: 3 }).map((args) => call('coalesce', ...args)),
      fc.tuple(e, fc.constantFrom(...CAST_TYPES)).map(([v, t]) => cast(v, t)),
    ),
  }
}).expr

// === Well-typed predicates over the test table ===

/** Column types of the table used for parity and soundness tests. */
export const TABLE_TYPES: Readonly<Record<string, string>> = Object.freeze({
  p: 'integer',
  i: 'long',
  d: 'double',
  f: 'float',
  dec: 'decimal(6,2)',
  s: 'string',
  dt: 'date',
  ts: 'timestamp',
  ntz: 'timestamp_ntz',
  b: 'boolean',
  'st.x': 'integer',
})

/** Small value domains, so that equalities and ties happen often. */
export const DOMAINS = {
  i: [-2n, -1n, 0n, 1n, 2n, 3n, 9007199254740993n, -9223372036854775808n],
  d: [-1.5, -0, 0, 1, 2.5, 1e300, Number.NaN, Number.POSITIVE_INFINITY],
  f: [Math.fround(-1.5), 0, Math.fround(0.1), Math.fround(3.4), 16777216],
  dec: ['-1.50', '0.00', '0.10', '2.25', '12.34', '9999.99'],
  s: ['', 'a', 'ab', 'abc', 'abd', 'b', 'a\u00e9', 'a%b', 'B', '\u{10FFFF}', 'ab'.repeat(3), '\u00e9'],
  dt: [-1, 0, 1, 10957, 10958, 19723],
  ts: [-1n, 0n, 999n, 1000n, 1001n, 946684800000000n, 946684800000999n, -2208988800000001n],
  ntz: [0n, 500n, 1000n, 86400000000n],
  p: [0, 1, 5],
  stx: [0, 1, 2],
} as const

/** Number literals of every numeric type, drawn near the number domains. */
export const numberLiteral: fc.Arbitrary<Expression> = fc.oneof(
  fc.constantFrom(...DOMAINS.i).map((v) => lit(v)),
  fc.integer({ min: -3, max: 3 }).map((v) => lit(BigInt(v))),
  fc.constantFrom('-1.5', '0', '0.1', '2.25', '2.250', '12.34').map((t) => decimalLiteralOf(parseDec(t))),
  fc.constantFrom(-1.5, 0, 0.1, 2.5, 1e300).map((v) => floatingLiteral('double', v)),
  fc.constantFrom(0.1, 3.4, -1.5).map((v) => floatingLiteral('float', v)),
)

function parseDec(text: string): { unscaled: bigint; scale: number } {
  const [intPart, frac = ''] = text.split('.')
  return { unscaled: BigInt(`${intPart}${frac}`), scale: frac.length }
}

const stringLiteralArb = fc.constantFrom(...DOMAINS.s, 'aa', 'abcz', 'ac', 'A').map(stringLiteral)
const dateLiteralArb = fc.constantFrom(...DOMAINS.dt, 10956, 2).map(dateLiteral)
const tsLiteralArb = fc.oneof(
  fc.constantFrom(...DOMAINS.ts, 2n, 998n, 1999n, 946684800000500n).map(timestampLiteral),
  fc.constantFrom(0, 10957).map(dateLiteral),
)
const ntzLiteralArb = fc.constantFrom(...DOMAINS.ntz, 999n, 1001n).map(timestampNtzLiteral)

interface Family {
  readonly columns: readonly Expression[]
  readonly literal: fc.Arbitrary<Expression>
}

const FAMILIES: Readonly<Record<string, Family>> = {
  number: {
    columns: [col('i'), col('d'), col('f'), col('dec'), col('p'), col('st.x')],
    literal: numberLiteral,
  },
  string: { columns: [col('s')], literal: stringLiteralArb },
  date: { columns: [col('dt'), col('ts')], literal: fc.oneof(dateLiteralArb, tsLiteralArb) },
  ntz: { columns: [col('ntz')], literal: ntzLiteralArb },
  bool: { columns: [col('b')], literal: fc.constantFrom(lit(true), lit(false)) },
}

function operandOf(f: Family, withNull: boolean): fc.Arbitrary<Expression> {
  const options: fc.Arbitrary<Expression>[] = [fc.constantFrom(...f.columns), f.literal]
  if (withNull) options.push(fc.constant(lit(null)))
  return fc.oneof(...options)
}

const likePattern = fc
  .constantFrom('a%', 'ab%', 'a_', '%b', 'a', '', '%', 'a\\%%', '\u{10FFFF}%', '\u00e9%', 'ab_%', 'abab%')
  .map(stringLiteral)

/** A comparison-level atom over one family of columns. */
function atomOf(name: string, f: Family): fc.Arbitrary<Expression> {
  const valueArb = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...f.columns) },
    { weight: 1, arbitrary: f.literal },
  )
  const atoms: fc.Arbitrary<Expression>[] = [
    fc
      .tuple(fc.constantFrom(...COMPARISONS), valueArb, operandOf(f, true))
      .map(([op, l, r]) => compare(op, l, r)),
    fc
      .tuple(fc.constantFrom(...COMPARISONS), operandOf(f, false), valueArb)
      .map(([op, l, r]) => compare(op, l, r)),
    fc
      .tuple(valueArb, fc.array(operandOf(f, true), { minLength: 1, maxLength: 3 }), fc.boolean())
      .map(([v, list, n]) => isIn(v, list, n)),
    fc
      .tuple(valueArb, operandOf(f, true), operandOf(f, true), fc.boolean())
      .map(([v, lo, hi, n]) => between(v, lo, hi, n)),
    fc.tuple(valueArb, fc.boolean()).map(([v, n]) => isNull(v, n)),
  ]
  if (name === 'string') {
    atoms.push(
      fc
        .tuple(likePattern, fc.boolean(), fc.boolean())
        .map(([p, n, esc]) => like(col('s'), p, { negated: n, escape: esc ? '\\' : null })),
      fc
        .tuple(fc.constantFrom('lower', 'upper'), stringLiteralArb)
        .map(([fn, v]) => compare('=', call(fn, col('s')), v)),
    )
  }
  if (name === 'number') {
    atoms.push(
      fc
        .tuple(fc.constantFrom(...ARITHMETIC), fc.constantFrom(...f.columns), numberLiteral, numberLiteral)
        .map(([op, c, k, v]) => compare('>', arithmetic(op, c, k), v)),
      fc.tuple(fc.constantFrom(...f.columns), numberLiteral).map(([c, v]) => compare('=', negate(c), v)),
      fc.tuple(fc.constantFrom(...f.columns), numberLiteral).map(([c, v]) => compare('<', call('abs', c), v)),
    )
  }
  if (name === 'bool') {
    atoms.push(
      fc.constant(col('b')),
      fc.tuple(fc.boolean(), fc.boolean()).map(([v, n]) => isBoolean(col('b'), v, n)),
    )
  }
  return fc.oneof(...atoms)
}

/** One condition over one family of columns (no AND/OR/NOT around it). */
export const tableAtom: fc.Arbitrary<Expression> = fc.oneof(
  ...Object.entries(FAMILIES).map(([name, f]) => atomOf(name, f)),
  fc.constantFrom(lit(true), lit(false), lit(null)),
)

/** A well-typed predicate over {@link TABLE_TYPES}. */
export const tablePredicate: fc.Arbitrary<Expression> = fc.letrec<{ pred: Expression }>((tie) => ({
  pred: fc.oneof(
    { depthSize: 'small', maxDepth: 4 },
    tableAtom,
    fc.tuple(tie('pred'), tie('pred')).map(([l, r]) => andNode(l, r)),
    fc.tuple(tie('pred'), tie('pred')).map(([l, r]) => orNode(l, r)),
    tie('pred').map(not),
    fc.tuple(tie('pred'), fc.boolean(), fc.boolean()).map(([p, v, n]) => isBoolean(p, v, n)),
  ),
})).pred

/** One row of the test table, as raw JS values typed by {@link TABLE_TYPES}. */
export type TableRow = {
  readonly p: number | null
  readonly i: bigint | null
  readonly d: number | null
  readonly f: number | null
  readonly dec: string | null
  readonly s: string | null
  readonly dt: number | null
  readonly ts: bigint | null
  readonly ntz: bigint | null
  readonly b: boolean | null
  readonly st: { readonly x: number | null } | null
}

function maybe<T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | null> {
  return fc.option(arb, { freq: 4, nil: null })
}

/** Rows sharing one partition value `p`. */
export function rowsArb(p: number | null, maxLength = 6): fc.Arbitrary<TableRow[]> {
  const row = fc.record({
    p: fc.constant(p),
    i: maybe(fc.constantFrom(...DOMAINS.i)),
    d: maybe(fc.constantFrom(...DOMAINS.d)),
    f: maybe(fc.constantFrom(...DOMAINS.f)),
    dec: maybe(fc.constantFrom(...DOMAINS.dec)),
    s: maybe(fc.constantFrom(...DOMAINS.s)),
    dt: maybe(fc.constantFrom(...DOMAINS.dt)),
    ts: maybe(fc.constantFrom(...DOMAINS.ts)),
    ntz: maybe(fc.constantFrom(...DOMAINS.ntz)),
    b: maybe(fc.boolean()),
    st: maybe(fc.record({ x: maybe(fc.constantFrom(...DOMAINS.stx)) })),
  })
  return fc.array(row, { minLength: 0, maxLength })
}
