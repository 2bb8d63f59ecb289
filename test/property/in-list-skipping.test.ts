/**
 * Data skipping decides `x IN (list)` of known values by binary search in the sorted list. On
 * random files (bounds of every key type, missing, inverted, truncated strings, lossy numbers,
 * NaN and infinities, null counts, partition values with and without time zone) and random lists
 * (NULL items, duplicates, items of another type, NOT IN, long lists), its three-valued result must
 * be exactly what the per-item path gives: the OR of `x = item` over the items, each judged alone.
 *
 * Seed: `IN_LIST_SEED=<n>` replays a run (fast-check prints the seed and path of a failure).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import {
  arithmetic,
  binaryLiteral,
  cast,
  col,
  compare,
  dateLiteral,
  decimalLiteral,
  type Expression,
  floatingLiteral,
  integralLiteral,
  isIn,
  lit,
  stringLiteral,
  timestampLiteral,
  timestampNtzLiteral,
} from '../../src/expressions/ast.js'
import { columnsFromTypes } from '../../src/expressions/columns.js'
import { evaluateRow } from '../../src/expressions/evaluate-rows.js'
import {
  type FileStats,
  type PossibleResults,
  possibleResults,
} from '../../src/expressions/evaluate-stats.js'
import { sortedInList } from '../../src/expressions/in-list-bounds.js'
import { formatDate, formatTimestamp } from '../../src/expressions/temporal.js'
import { toSql } from '../../src/expressions/to-sql.js'

const SEED = process.env.IN_LIST_SEED === undefined ? 20261203 : Number(process.env.IN_LIST_SEED)

const TYPES: Readonly<Record<string, string>> = {
  by: 'byte',
  sh: 'short',
  i: 'integer',
  l: 'long',
  f: 'float',
  d: 'double',
  dec: 'decimal(6,2)',
  s: 'string',
  bin: 'binary',
  b: 'boolean',
  dt: 'date',
  ts: 'timestamp',
  ntz: 'timestamp_ntz',
  pl: 'long',
  ps: 'string',
  pdt: 'date',
  pts: 'timestamp',
}
const PARTITIONS = ['pl', 'ps', 'pdt', 'pts']
const columns = columnsFromTypes(TYPES, { partitionColumns: PARTITIONS })

// === Value domains, small so that items and bounds meet often ===

const INTS = [
  -129n,
  -3n,
  -2n,
  -1n,
  0n,
  1n,
  2n,
  3n,
  127n,
  2147483647n,
  9007199254740993n,
  -9223372036854775808n,
]
const DOUBLES = [
  Number.NEGATIVE_INFINITY,
  -1.5,
  -0,
  0,
  1,
  2.5,
  10,
  9007199254740992,
  1e300,
  Number.POSITIVE_INFINITY,
  Number.NaN,
]
const FLOATS = [Math.fround(-1.5), 0, Math.fround(0.1), Math.fround(3.4), 16777216, Number.NaN]
const DECIMALS = ['-1.50', '0', '0.00', '0.10', '2.25', '2.250', '12.34', '9999.99']
const STRINGS = [
  '',
  'a',
  'aa',
  'ab',
  'abc',
  'abd',
  'abcdef',
  'b',
  'zz',
  '\u00e9',
  '\uffff',
  '\u{10000}',
  '\u{10FFFF}',
]
const DAYS = [-1, 0, 1, 2, 10956, 10957, 10958, 19723]
const MICROS = [-1n, 0n, 999n, 1000n, 1001n, 1999n, 946684800000000n, 946684800000500n, 946684800999000n]

/** A literal of a value kind: the items a list holds. NaN and infinities only exist as casts. */
function literalOf(kind: string, raw: unknown): Expression {
  switch (kind) {
    case 'int':
      return integralLiteral('long', raw as bigint)
    case 'f64':
    case 'f32': {
      const n = raw as number
      const type = kind === 'f64' ? 'double' : 'float'
      return Number.isFinite(n) ? floatingLiteral(type, n) : cast(stringLiteral(String(n)), type)
    }
    case 'dec':
      return decimalLiteral(raw as string)
    case 'str':
      return stringLiteral(raw as string)
    case 'bin':
      return binaryLiteral(new TextEncoder().encode(raw as string))
    case 'bool':
      return lit(raw as boolean)
    case 'date':
      return dateLiteral(raw as number)
    case 'ts':
      return timestampLiteral(raw as bigint)
    default:
      return timestampNtzLiteral(raw as bigint)
  }
}

const KIND_DOMAIN: Readonly<Record<string, readonly unknown[]>> = {
  int: INTS,
  f64: DOUBLES,
  f32: FLOATS,
  dec: DECIMALS,
  str: STRINGS,
  bin: ['', 'a', 'ab', 'b'],
  bool: [true, false],
  date: DAYS,
  ts: MICROS,
  ntz: MICROS,
}

/** The item kind that matches each column, so that most lists take the sorted path. */
const COLUMN_KIND: Readonly<Record<string, string>> = {
  by: 'int',
  sh: 'int',
  i: 'int',
  l: 'int',
  pl: 'int',
  f: 'f32',
  d: 'f64',
  dec: 'dec',
  s: 'str',
  ps: 'str',
  bin: 'bin',
  b: 'bool',
  dt: 'date',
  pdt: 'date',
  ts: 'ts',
  pts: 'ts',
  ntz: 'ntz',
}

const itemOf = (kind: string): fc.Arbitrary<Expression> =>
  fc.constantFrom(...(KIND_DOMAIN[kind] as unknown[])).map((raw) => literalOf(kind, raw))

const FAMILY_KINDS: Readonly<Record<string, readonly string[]>> = {
  int: ['int', 'f64', 'f32', 'dec'],
  f64: ['int', 'f64', 'f32', 'dec'],
  f32: ['int', 'f64', 'f32', 'dec'],
  dec: ['int', 'f64', 'f32', 'dec'],
  date: ['date', 'ts', 'ntz'],
  ts: ['date', 'ts', 'ntz'],
  ntz: ['date', 'ts', 'ntz'],
}

/**
 * A list: items of the column's kind, with NULLs, duplicates and known non-literal items; or
 * items of its comparison family (integers with doubles, dates with timestamps); or of any kind
 * (numeric and date-like strings against numbers and dates).
 */
function listArb(kind: string, maxLength: number): fc.Arbitrary<Expression[]> {
  const nulls = { weight: 1, arbitrary: fc.constant(lit(null)) }
  const known = { weight: 1, arbitrary: itemOf(kind).map((item) => cast(item, kindType(kind))) }
  const family = FAMILY_KINDS[kind] ?? [kind]
  const anyKind = fc.constantFrom(...Object.keys(KIND_DOMAIN)).chain((other) => itemOf(other))
  // Where orders disagree: strings that convert to numbers, integers past double precision.
  const tricky = fc.constantFrom(
    stringLiteral('10'),
    stringLiteral('9'),
    stringLiteral('100'),
    stringLiteral('2.5'),
    integralLiteral('long', 9n),
    integralLiteral('long', 9007199254740992n),
    integralLiteral('long', 9007199254740993n),
    floatingLiteral('double', 9007199254740992),
  )
  return fc.oneof(
    {
      weight: 2,
      arbitrary: fc.array(fc.oneof({ weight: 6, arbitrary: tricky }, nulls), { minLength: 1, maxLength }),
    },
    {
      weight: 6,
      arbitrary: fc.array(fc.oneof({ weight: 12, arbitrary: itemOf(kind) }, nulls, known), {
        minLength: 1,
        maxLength,
      }),
    },
    {
      weight: 2,
      arbitrary: fc.array(
        fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...family).chain(itemOf) }, nulls),
        { minLength: 1, maxLength },
      ),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(...Object.keys(KIND_DOMAIN)).chain((other) =>
        fc.array(
          fc.oneof({ weight: 6, arbitrary: itemOf(other) }, { weight: 1, arbitrary: anyKind }, nulls),
          {
            minLength: 1,
            maxLength,
          },
        ),
      ),
    },
  )
}

function kindType(kind: string): string {
  const types: Record<string, string> = {
    int: 'long',
    f64: 'double',
    f32: 'float',
    dec: 'decimal(8,3)',
    str: 'string',
    bin: 'binary',
    bool: 'boolean',
    date: 'date',
    ts: 'timestamp',
    ntz: 'timestamp_ntz',
  }
  return types[kind] as string
}

// === Files: stats as a writer (or a broken writer) records them ===

/** A raw stats value for a column: the forms JSON parsers and writers give. */
function rawBound(name: string): fc.Arbitrary<unknown> {
  switch (COLUMN_KIND[name]) {
    case 'int':
      return fc.constantFrom(...INTS).chain((v) => fc.constantFrom<unknown>(v, Number(v), String(v)))
    case 'f64':
    case 'f32':
      return fc
        .constantFrom(...(name === 'f' ? FLOATS : DOUBLES))
        .chain((v) => fc.constantFrom<unknown>(Number.isFinite(v) ? v : String(v), String(v)))
    case 'dec':
      return fc.constantFrom(...DECIMALS).chain((v) => fc.constantFrom<unknown>(v, Number(v)))
    case 'str':
      return fc.constantFrom(...STRINGS, 'abcdefghij', '\u{10FFFF}\u{10FFFF}\u{10FFFF}')
    case 'bin':
      return fc.constantFrom('YQ==', 'a')
    case 'bool':
      return fc.boolean()
    case 'date':
      return fc.constantFrom(...DAYS).chain((v) => fc.constantFrom<unknown>(formatDate(v), v))
    default:
      return fc.constantFrom(...MICROS).chain((v) =>
        fc.constantFrom<unknown>(
          `${formatTimestamp(v).replace(' ', 'T')}Z`,
          formatTimestamp(v).replace(' ', 'T'),
          // Milliseconds only, as Delta writers print them: widened by 999 microseconds.
          `${formatTimestamp(v - (((v % 1000n) + 1000n) % 1000n)).replace(' ', 'T')}`,
          v,
        ),
      )
  }
}

const DATA_COLUMNS = Object.keys(TYPES).filter((c) => !PARTITIONS.includes(c))

interface File {
  readonly stats: FileStats | undefined
  readonly partitionValues: Record<string, unknown>
  readonly prefixLength: number
}

const numRecordsArb = fc.constantFrom<unknown>(1n, 3, '5', undefined)

const fileArb: fc.Arbitrary<File> = fc
  .record({
    numRecords: numRecordsArb,
    bounds: fc.record(
      Object.fromEntries(
        DATA_COLUMNS.map((c) => [
          c,
          fc.record({
            min: fc.option(rawBound(c), { nil: undefined, freq: 6 }),
            max: fc.option(rawBound(c), { nil: undefined, freq: 6 }),
            nulls: fc.constantFrom<unknown>(0, 0n, 1, 5, undefined),
          }),
        ]),
      ),
    ),
    // One file in twenty has no stats at all.
    noStats: fc.integer({ min: 0, max: 19 }).map((n) => n === 0),
    pl: fc.constantFrom<unknown>('1', '-3', '', null, 2n, '9007199254740993'),
    ps: fc.constantFrom<unknown>('a', 'ab', '', null, 'zz'),
    pdt: fc.constantFrom<unknown>('1970-01-02', '2000-01-01', null),
    pts: fc.constantFrom<unknown>(
      '2000-01-01 00:00:00',
      '2000-01-01T00:00:00Z',
      '1970-01-01 00:00:00.001',
      '1970-01-01T00:00:00.000999Z',
      null,
    ),
    prefixLength: fc.constantFrom(32, 2, 3),
  })
  .map(({ numRecords, bounds, noStats, pl, ps, pdt, pts, prefixLength }) => {
    const minValues: Record<string, unknown> = {}
    const maxValues: Record<string, unknown> = {}
    const nullCount: Record<string, unknown> = {}
    for (const [c, b] of Object.entries(bounds)) {
      if (b.min !== undefined) minValues[c] = b.min
      if (b.max !== undefined) maxValues[c] = b.max
      if (b.nulls !== undefined) nullCount[c] = b.nulls
    }
    const stats = noStats ? undefined : ({ numRecords, minValues, maxValues, nullCount } as FileStats)
    return { stats, partitionValues: { pl, ps, pdt, pts }, prefixLength }
  })

/** The tested value: a column mostly; a condition (boolean bounds) or arithmetic (no bounds) now and then. */
const valueArb: fc.Arbitrary<{ value: Expression; kind: string }> = fc.oneof(
  {
    weight: 10,
    arbitrary: fc
      .constantFrom(...Object.keys(TYPES))
      .map((c) => ({ value: col(c), kind: COLUMN_KIND[c] as string })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(...INTS.slice(1, 8))
      .map((v) => ({ value: compare('>', col('l'), integralLiteral('long', v)), kind: 'bool' })),
  },
  { weight: 1, arbitrary: fc.constant({ value: arithmetic('+', col('l'), lit(1n)), kind: 'int' }) },
)

const or3 = (a: PossibleResults, b: PossibleResults): PossibleResults => ({
  t: a.t || b.t,
  f: a.f && b.f,
  n: (a.n && (b.f || b.n)) || (b.n && (a.f || a.n)),
})

/** The per-item path: `x = item` judged for each item alone, combined as SQL's OR. */
function perItem(
  value: Expression,
  list: readonly Expression[],
  negated: boolean,
  file: File,
): PossibleResults {
  const judge = (e: Expression) =>
    possibleResults(e, file.stats, file.partitionValues, columns, { stringPrefixLength: file.prefixLength })
  const r = list.map((item) => judge(compare('=', value, item))).reduce(or3)
  return negated ? { t: r.f, f: r.t, n: r.n } : r
}

/** Whether the row evaluator decides the IN exactly from the partition values alone. */
function decidedExactly(e: Expression, file: File): boolean {
  if (!(e.kind === 'in' && e.value.kind === 'column' && PARTITIONS.includes(e.value.path[0] as string)))
    return false
  const name = e.value.path[0] as string
  const raw = file.partitionValues[name]
  // A timestamp without an offset is not an exact partition value; the abstract path runs.
  if (name === 'pts' && typeof raw === 'string' && !raw.endsWith('Z')) return false
  try {
    evaluateRow(e, { [name]: raw === '' ? null : raw }, { columns })
    return true
  } catch {
    return false
  }
}

function check(maxLength: number, numRuns: number): { sorted: number; pruned: number } {
  let sorted = 0
  let pruned = 0
  fc.assert(
    fc.property(
      fileArb,
      valueArb.chain(({ value, kind }) =>
        fc.tuple(fc.constant(value), listArb(kind, maxLength), fc.boolean()),
      ),
      (file, [value, list, negated]) => {
        const e = isIn(value, list, negated)
        const got = possibleResults(e, file.stats, file.partitionValues, columns, {
          stringPrefixLength: file.prefixLength,
        })
        if (!decidedExactly(e, file) && sortedInList(e) !== undefined) sorted++
        if (!got.t) pruned++
        const expected = perItem(value, list, negated, file)
        assert.deepEqual(
          { ...got },
          expected,
          `${toSql(e)} on ${JSON.stringify(file, (_, v) => (typeof v === 'bigint' ? `${v}n` : v))}`,
        )
      },
    ),
    { numRuns, seed: SEED },
  )
  return { sorted, pruned }
}

describe('IN-list skipping by binary search', () => {
  it('gives the per-item result on short lists with NULLs, duplicates, mixed items and NOT IN', () => {
    const { sorted, pruned } = check(8, 4000)
    // Meaningful only if the sorted path runs and prunes often.
    assert.ok(sorted > 2000, `the sorted path ran ${sorted} times`)
    assert.ok(pruned > 400, `only ${pruned} files were pruned`)
  })

  it('gives the per-item result on long lists', () => {
    const { sorted } = check(300, 150)
    assert.ok(sorted > 50, `the sorted path ran ${sorted} times`)
  })
})
