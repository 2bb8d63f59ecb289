/**
 * Data skipping must never prune a file that has a matching row. Random files (rows, some hidden
 * by a deletion vector) get the stats a Delta writer would record (physical rows, strings
 * truncated, timestamps cut to milliseconds, numbers possibly parsed lossily, offsets of old
 * timestamps written without their seconds), random predicates are checked row by row, and
 * whenever `mayMatchFile` says false no live row may satisfy the predicate.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import {
  and,
  arithmetic,
  between,
  col,
  compare,
  dateLiteral,
  decimalLiteral,
  type Expression,
  floatingLiteral,
  isIn,
  isNull,
  like,
  lit,
  not,
  or,
  timestampLiteral,
  timestampNtzLiteral,
} from '../../../src/expressions/ast.js'
import { columnsFromTypes } from '../../../src/expressions/columns.js'
import { parseDataType } from '../../../src/expressions/data-types.js'
import { evaluateRow } from '../../../src/expressions/evaluate-rows.js'
import { type FileStats, mayMatchFile } from '../../../src/expressions/evaluate-stats.js'
import { formatDate, formatTimestamp } from '../../../src/expressions/temporal.js'
import { toSql } from '../../../src/expressions/to-sql.js'
import { coerceRaw, compareValues, type Value } from '../../../src/expressions/values.js'
import {
  DOMAINS,
  numberLiteral,
  rowsArb,
  TABLE_TYPES,
  type TableRow,
  tableAtom,
  tablePredicate,
} from './arbitraries.js'

const columns = columnsFromTypes(TABLE_TYPES, { partitionColumns: ['p'] })

/** How the simulated writer records stats. */
interface Writer {
  readonly numRecords: 'bigint' | 'number' | 'absent'
  readonly prefixLength: number
  readonly bumpTruncatedMax: boolean
  readonly lossyNumbers: boolean
  readonly offset: 'Z' | '+02:00' | 'historical'
  readonly booleanStats: boolean
  readonly dropped: readonly string[]
  readonly droppedNullCounts: readonly string[]
  readonly partitionAsText: boolean
}

const writerArb: fc.Arbitrary<Writer> = fc.record({
  numRecords: fc.constantFrom('bigint', 'number', 'absent'),
  prefixLength: fc.constantFrom(32, 2, 3),
  bumpTruncatedMax: fc.boolean(),
  lossyNumbers: fc.boolean(),
  offset: fc.constantFrom('Z', '+02:00', 'historical'),
  booleanStats: fc.boolean(),
  dropped: fc.subarray(['i', 'd', 'f', 'dec', 's', 'dt', 'ts', 'ntz', 'st.x'], { maxLength: 2 }),
  droppedNullCounts: fc.subarray(['i', 's', 'ts', 'b', 'st.x'], { maxLength: 2 }),
  partitionAsText: fc.boolean(),
})

interface File {
  readonly p: number | null
  readonly rows: readonly TableRow[]
  readonly deleted: readonly boolean[]
  readonly writer: Writer
}

const fileArb: fc.Arbitrary<File> = fc
  .tuple(fc.option(fc.constantFrom(0, 1, 5), { nil: null, freq: 5 }), writerArb)
  .chain(([p, writer]) =>
    rowsArb(p).chain((rows) =>
      fc
        .array(
          fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
          {
            minLength: rows.length,
            maxLength: rows.length,
          },
        )
        .map((deleted) => ({ p, rows, deleted, writer })),
    ),
  )

function cellOf(row: TableRow, path: string): unknown {
  if (path === 'st.x') return row.st === null ? null : row.st.x
  return row[path as keyof TableRow]
}

const cp = (s: string): string[] => [...s]

function truncateMin(s: string, n: number): string {
  return cp(s).slice(0, n).join('')
}

function truncateMax(s: string, n: number, bump: boolean): string | undefined {
  if (cp(s).length <= n) return s
  const prefix = cp(s).slice(0, n).join('')
  if (!bump) return prefix
  const bumped = `${prefix}\u{10FFFF}`
  // Spark drops a max it cannot bump above the true value.
  return compareValues({ t: 'str', v: bumped }, { t: 'str', v: s }) > 0 ? bumped : undefined
}

/** Historical offsets had seconds (Amsterdam +00:19:32, Liberia -00:44:30); Spark dropped them. */
const HISTORICAL_OFFSETS = [1172, -2670, 3208]

function timestampText(micros: bigint, writer: Writer, zoned: boolean): string {
  const ms = micros - (((micros % 1000n) + 1000n) % 1000n)
  let offset = 0
  let printed = 'Z'
  if (zoned && writer.offset === '+02:00') {
    offset = 7200
    printed = '+02:00'
  } else if (zoned && writer.offset === 'historical' && micros < 94694400000000n) {
    offset = HISTORICAL_OFFSETS[Number(((micros % 3n) + 3n) % 3n)] as number
    const sign = offset < 0 ? '-' : '+'
    const abs = Math.abs(offset)
    printed = `${sign}${String(Math.floor(abs / 3600)).padStart(2, '0')}:${String(Math.floor((abs % 3600) / 60)).padStart(2, '0')}`
  }
  const wall = formatTimestamp(ms + BigInt(offset) * 1_000_000n).replace(' ', 'T')
  const withMillis = wall.includes('.') ? wall.slice(0, 23) : `${wall}.000`
  return zoned ? `${withMillis}${printed}` : withMillis
}

function encode(path: string, v: Value, side: 'min' | 'max', writer: Writer): unknown {
  switch (path) {
    case 'i':
    case 'st.x': {
      const n = v.v as bigint
      if (writer.lossyNumbers) return Number(n)
      return Number.isSafeInteger(Number(n)) ? Number(n) : n
    }
    case 'd':
    case 'f': {
      const n = v.v as number
      if (Number.isNaN(n)) return 'NaN'
      if (!Number.isFinite(n)) return n > 0 ? 'Infinity' : '-Infinity'
      return n
    }
    case 'dec': {
      const text = `${(v.v as { unscaled: bigint }).unscaled}`.padStart(3, '0')
      const neg = text.startsWith('-')
      const digits = (neg ? text.slice(1) : text).padStart(3, '0')
      const decimal = `${neg ? '-' : ''}${digits.slice(0, -2)}.${digits.slice(-2)}`
      return writer.lossyNumbers ? Number(decimal) : decimal
    }
    case 's':
      return side === 'min'
        ? truncateMin(v.v as string, writer.prefixLength)
        : truncateMax(v.v as string, writer.prefixLength, writer.bumpTruncatedMax)
    case 'dt':
      return formatDate(v.v as number)
    case 'ts':
      return timestampText(v.v as bigint, writer, true)
    case 'ntz':
      return timestampText(v.v as bigint, writer, false)
    case 'b':
      return v.v
  }
  return undefined
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.')
  let obj = target
  for (const part of parts.slice(0, -1)) {
    obj[part] ??= {}
    obj = obj[part] as Record<string, unknown>
  }
  obj[parts[parts.length - 1] as string] = value
}

/** The stats a writer would record over all physical rows (deleted ones included). */
function statsOf(file: File): FileStats {
  const { rows, writer } = file
  const minValues: Record<string, unknown> = {}
  const maxValues: Record<string, unknown> = {}
  const nullCount: Record<string, unknown> = {}
  for (const path of ['i', 'd', 'f', 'dec', 's', 'dt', 'ts', 'ntz', 'b', 'st.x']) {
    const type = parseDataType(TABLE_TYPES[path] as string)
    if (type === undefined) throw new Error(`bad test type for ${path}`)
    const values = rows.map((r) => coerceRaw(cellOf(r, path), type) ?? null)
    const nonNull = values.filter((v): v is Value => v !== null)
    if (!writer.droppedNullCounts.includes(path)) setPath(nullCount, path, values.length - nonNull.length)
    if (writer.dropped.includes(path) || nonNull.length === 0) continue
    if (path === 'b' && !writer.booleanStats) continue
    const min = nonNull.reduce((a, b) => (compareValues(b, a) < 0 ? b : a))
    const max = nonNull.reduce((a, b) => (compareValues(b, a) > 0 ? b : a))
    const lo = encode(path, min, 'min', writer)
    const hi = encode(path, max, 'max', writer)
    if (lo !== undefined) setPath(minValues, path, lo)
    if (hi !== undefined) setPath(maxValues, path, hi)
  }
  const stats: Record<string, unknown> = { minValues, maxValues, nullCount }
  if (writer.numRecords !== 'absent') {
    stats.numRecords = writer.numRecords === 'bigint' ? BigInt(rows.length) : rows.length
  }
  if (file.deleted.some((d) => d)) stats.tightBounds = false
  return stats as FileStats
}

function partitionValuesOf(file: File): Record<string, unknown> {
  if (file.p === null) return { p: file.writer.partitionAsText ? '' : null }
  return { p: file.writer.partitionAsText ? String(file.p) : file.p }
}

function liveResults(file: File, pred: Expression): (boolean | null)[] | undefined {
  try {
    return file.rows.filter((_, i) => !file.deleted[i]).map((r) => evaluateRow(pred, r, { columns }))
  } catch {
    return undefined
  }
}

describe('data skipping soundness', () => {
  /** A condition on one column against a value of that column's own domain, to hit the bounds. */
  const domainAtom: fc.Arbitrary<Expression> = fc.oneof(
    ...(
      [
        ['i', DOMAINS.i.map((v) => lit(v))],
        ['d', DOMAINS.d.filter(Number.isFinite).map((v) => floatingLiteral('double', v))],
        ['f', DOMAINS.f.map((v) => floatingLiteral('float', v))],
        ['dec', DOMAINS.dec.map((v) => decimalLiteral(v))],
        ['s', DOMAINS.s.map((v) => lit(v))],
        ['dt', DOMAINS.dt.map((v) => dateLiteral(v))],
        ['ts', DOMAINS.ts.map((v) => timestampLiteral(v))],
        ['ntz', DOMAINS.ntz.map((v) => timestampNtzLiteral(v))],
        ['st.x', DOMAINS.stx.map((v) => lit(BigInt(v)))],
      ] as const
    ).flatMap(([path, values]) => [
      fc
        .tuple(
          fc.constantFrom('=', '<>', '<', '<=', '>', '>=', '<=>' as const),
          fc.constantFrom(...values),
          fc.boolean(),
        )
        .map(([op, v, negated]) => {
          const atom = compare(op, col(path), v)
          return negated ? not(atom) : atom
        }),
      // IN-lists of the column's own values (searched in sorted order), with NULLs and duplicates.
      fc
        .tuple(
          fc.array(fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...values) }, fc.constant(lit(null))), {
            minLength: 1,
            maxLength: 6,
          }),
          fc.boolean(),
        )
        .map(([list, negated]) => isIn(col(path), list, negated)),
    ]),
    fc
      .tuple(fc.constantFrom(...DOMAINS.s), fc.constantFrom('%', '_%', '', '_'), fc.boolean())
      .map(([prefix, rest, negated]) => like(col('s'), lit(prefix + rest), { negated })),
  )

  it('never skips a file with a live row that satisfies the predicate', () => {
    let skipped = 0
    let checked = 0
    fc.assert(
      fc.property(fileArb, fc.oneof(tablePredicate, tableAtom, domainAtom), (file, pred) => {
        const results = liveResults(file, pred)
        if (results === undefined) return
        checked++
        const stats = statsOf(file)
        const may = mayMatchFile(pred, stats, partitionValuesOf(file), columns, {
          stringPrefixLength: file.writer.prefixLength,
        })
        if (!may) {
          skipped++
          assert.ok(
            results.every((r) => r !== true),
            `skipped a matching file for ${toSql(pred)}`,
          )
        }
      }),
      { numRuns: 20000 },
    )
    // The property is only meaningful if skipping actually happens often.
    assert.ok(checked > 15000, `only ${checked} predicates were evaluable`)
    assert.ok(skipped > checked / 10, `only ${skipped} of ${checked} files were skipped`)
  })

  const partitionAtom: fc.Arbitrary<Expression> = fc.oneof(
    fc
      .tuple(fc.constantFrom('=', '<>', '<', '<=', '>', '>=', '<=>' as const), numberLiteral)
      .map(([op, v]) => compare(op, col('p'), v)),
    fc
      .tuple(fc.constantFrom('+', '-', '*', '%' as const), numberLiteral, numberLiteral)
      .map(([op, k, v]) => compare('=', arithmetic(op, col('p'), k), v)),
    fc
      .array(fc.oneof(numberLiteral, fc.constant(lit(null))), { minLength: 1, maxLength: 3 })
      .map((l) => isIn(col('p'), l)),
    fc.tuple(numberLiteral, numberLiteral).map(([lo, hi]) => between(col('p'), lo, hi)),
    fc.boolean().map((n) => isNull(col('p'), n)),
  )
  const partitionPredicate = fc.letrec<{ p: Expression }>((tie) => ({
    p: fc.oneof(
      { depthSize: 'small', maxDepth: 3 },
      partitionAtom,
      fc.tuple(tie('p'), tie('p')).map(([l, r]) => and(l, r)),
      fc.tuple(tie('p'), tie('p')).map(([l, r]) => or(l, r)),
      tie('p').map(not),
    ),
  })).p

  it('decides predicates over partition columns exactly', () => {
    fc.assert(
      fc.property(
        fc.option(fc.constantFrom(0, 1, 5, -3), { nil: null }),
        fc.boolean(),
        partitionPredicate,
        (p, asText, pred) => {
          let expected: boolean | null
          try {
            expected = evaluateRow(pred, { p }, { columns })
          } catch {
            return
          }
          const pv = { p: asText && p !== null ? String(p) : p }
          assert.equal(mayMatchFile(pred, { numRecords: 3n }, pv, columns), expected === true, toSql(pred))
        },
      ),
      { numRuns: 1500 },
    )
  })
})
