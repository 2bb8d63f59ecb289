/**
 * Data skipping: deciding from a file's statistics and partition values that no row of the file
 * can satisfy a predicate. Used by scans and by conflict-time skipping, where a wrong "no" would
 * lose data or miss a conflict, so the rule is one-sided: `false` only when proven.
 *
 * The proof is an abstract evaluation. Every value expression is summarized over the file's
 * rows by bounds (every non-null value lies in `[lo, hi]`), whether some row may give NULL and
 * whether some row may give a non-null value. Every predicate is summarized by which of
 * TRUE, FALSE and NULL some row may produce. Each summary over-approximates the truth, and
 * AND, OR, NOT, IN, BETWEEN, LIKE and IS combine summaries soundly, so a predicate under NOT is
 * handled as precisely as one without (NOT of a comparison flips it; NOT of a LIKE can only be
 * pruned when the column is all NULL). An IN-list of known values of one type (a MERGE's key set)
 * is decided by binary search in its sorted items (`in-list-bounds.ts`), with exactly the result
 * of comparing each item alone.
 *
 * What the stats are trusted for (protocol.md section 6), and only that:
 * - `nullCount == 0`: no row is NULL; `nullCount == numRecords`: every row is NULL. Any other
 *   count is ignored, which keeps the reasoning valid for wide bounds (`tightBounds: false`,
 *   deletion vectors), so `tightBounds` itself is never needed.
 * - `min`/`max`: every non-null value lies between them. A missing bound is unbounded.
 * - Strings may be truncated: a min is a prefix of the true min (still a lower bound); a max of
 *   `stringPrefixLength` (32) code points or more may be a prefix of the true max, so only the
 *   strings starting with it are known to be below it.
 * - Timestamps are truncated to milliseconds: a max with at most 3 fraction digits is widened
 *   by 999 microseconds. Old timestamps (before 1973) written with a non-UTC offset may have lost
 *   the seconds of a historical offset, so both bounds are widened by 60 seconds.
 * - Numbers read by a lossy JSON parser (JS numbers for long or decimal columns that are not
 *   safe integers) are widened by one unit in the last place; pass bigints or lossless-json
 *   numbers to keep them exact.
 * - Floating-point bounds follow the engine's order, where NaN is the largest value.
 * - Binary columns and columns of unknown type are never pruned on.
 * - A double column widened from float (`delta.typeChanges`) may hold float stats printed in
 *   float precision; such bounds are widened to cover both readings. Other widenings (integers
 *   to long, decimal or double, decimal scale increases, date to timestamp_ntz) keep stats that
 *   read correctly in the new type.
 *
 * Partition values are exact, except a timestamp written without an offset, whose writer's time
 * zone is unknown: it is widened by 18 hours each way. Subexpressions over literals and exact
 * partition values only are evaluated exactly with the row evaluator.
 *
 * Any expression it cannot bound (arithmetic, functions, casts over data columns), any type
 * mismatch, a missing stats object, and any error all mean "may match".
 */

import {
  childrenOf,
  columnsOf,
  conjunction,
  conjuncts,
  type Expression,
  type In,
  type ComparisonOperator as Op,
} from './ast.js'
import type { ColumnInfo, ColumnResolver } from './columns.js'
import type { DataType } from './data-types.js'
import { addDecimals, decimalFromDouble, parseDecimal, ulpOfDouble } from './decimal.js'
import { evaluateRow, evaluateValue } from './evaluate-rows.js'
import { searchable, someEqual, someWithin, sortedInList } from './in-list-bounds.js'
import { likePrefix } from './like-pattern.js'
import { parseTimestamp } from './temporal.js'
import { coerceRaw, compareValues, type Family, familyOf, type Value } from './values.js'

/** A file's statistics as found in `add.stats` (parsed JSON), keyed by physical column names. */
export interface FileStats {
  /** Physical row count of the file (deleted rows included). */
  readonly numRecords?: bigint | number | string | null
  /** Per-column minimum, nested like the schema. */
  readonly minValues?: Readonly<Record<string, unknown>> | null
  /** Per-column maximum, nested like the schema. */
  readonly maxValues?: Readonly<Record<string, unknown>> | null
  /** Per-column null count, nested like the schema. */
  readonly nullCount?: Readonly<Record<string, unknown>> | null
  /** Whether min/max are exact (true or absent) or only bounds (false). */
  readonly tightBounds?: boolean | null
}

/** Options of {@link mayMatchFile}. */
export interface SkippingOptions {
  /**
   * String stats of at least this many code points may be truncated prefixes (default 32, the
   * Delta default `delta.dataSkippingStringPrefixLength`).
   */
  readonly stringPrefixLength?: number
}

/**
 * Whether some row of a file may satisfy a predicate, judged from the file's stats and
 * partition values. Returns `false` only when it is proven that no row can.
 *
 * @param predicate - the predicate over logical column names
 * @param stats - the file's parsed stats, or `undefined` when it has none
 * @param partitionValues - the file's partition values keyed by physical name, raw (`add.partitionValues`
 *   strings, with `null` or `''` for NULL) or already typed (bigint, number, boolean, literal node)
 * @param columns - resolves column names to types, physical names and partition membership
 * @param options - skipping options
 * @returns false when no row of the file can satisfy the predicate; true otherwise
 */
export function mayMatchFile(
  predicate: Expression,
  stats: FileStats | undefined,
  partitionValues: Readonly<Record<string, unknown>> | undefined,
  columns: ColumnResolver,
  options: SkippingOptions = {},
): boolean {
  return possibleResults(predicate, stats, partitionValues, columns, options).t
}

/** Which results some row of a file may give for a predicate; each flag over-approximates. */
export interface PossibleResults {
  /** Some row may give TRUE. */
  readonly t: boolean
  /** Some row may give FALSE. */
  readonly f: boolean
  /** Some row may give NULL. */
  readonly n: boolean
}

/**
 * The three-valued summary behind {@link mayMatchFile} (which is its `t`): which of TRUE, FALSE
 * and NULL some row of a file may give for a predicate. A flag is false only when proven.
 *
 * @param predicate - the predicate over logical column names
 * @param stats - the file's parsed stats, or `undefined` when it has none
 * @param partitionValues - the file's partition values keyed by physical name (see {@link mayMatchFile})
 * @param columns - resolves column names to types, physical names and partition membership
 * @param options - skipping options
 * @returns the possible results; all false for a file without rows
 */
export function possibleResults(
  predicate: Expression,
  stats: FileStats | undefined,
  partitionValues: Readonly<Record<string, unknown>> | undefined,
  columns: ColumnResolver,
  options: SkippingOptions = {},
): PossibleResults {
  try {
    const numRecords = toCount(stats?.numRecords)
    if (numRecords === 0n) return NO_ROWS
    const file = new FileView(stats, partitionValues ?? {}, columns, options.stringPrefixLength ?? 32)
    return file.possible(predicate)
  } catch {
    // Fail safe: an unexpected value in the stats must never prune a file.
    return ANY_POSSIBLE
  }
}

/**
 * Splits a predicate at its top-level conjuncts into the part that references only partition
 * columns (exactly decidable from partition values) and the rest.
 *
 * @param expr - the predicate
 * @param partitionColumns - the table's partition columns (logical names, case-insensitive)
 * @returns the AND of the partition-only conjuncts and the AND of the others, each `undefined`
 *   when there is none; conjuncts referencing no column go to `partition`
 */
export function splitPartitionPredicate(
  expr: Expression,
  partitionColumns: readonly string[],
): { partition: Expression | undefined; data: Expression | undefined } {
  const names = new Set(partitionColumns.map((c) => c.toLowerCase()))
  const partition: Expression[] = []
  const data: Expression[] = []
  for (const c of conjuncts(expr)) {
    const onlyPartition = columnsOf(c).every(
      (p) => p.length === 1 && names.has((p[0] as string).toLowerCase()),
    )
    ;(onlyPartition ? partition : data).push(c)
  }
  return Object.freeze({
    partition: partition.length === 0 ? undefined : conjunction(partition),
    data: data.length === 0 ? undefined : conjunction(data),
  })
}

// === Abstract domains ===

/** Which results some row may produce. */
type Possible = PossibleResults

/** What is known about the values of an expression over the file's rows. */
interface Abs {
  /** Some row may give NULL. */
  readonly nullable: boolean
  /** Some row may give a non-null value. */
  readonly nonNull: boolean
  /** Every non-null value is >= lo. */
  readonly lo: Value | undefined
  /** Every non-null value is <= hi (< hi when hiOpen). */
  readonly hi: Value | undefined
  readonly hiOpen: boolean
  /** Every non-null value equals lo (which equals hi). */
  readonly point: boolean
}

const ANY_POSSIBLE: Possible = Object.freeze({ t: true, f: true, n: true })
const NO_ROWS: Possible = Object.freeze({ t: false, f: false, n: false })
const ANY_ABS: Abs = Object.freeze({
  nullable: true,
  nonNull: true,
  lo: undefined,
  hi: undefined,
  hiOpen: false,
  point: false,
})
const NULL_ABS: Abs = Object.freeze({ ...ANY_ABS, nonNull: false })

function pointAbs(v: Value | null): Abs {
  if (v === null) return NULL_ABS
  return { nullable: false, nonNull: true, lo: v, hi: v, hiOpen: false, point: true }
}

function possibleOfBool(v: boolean | null): Possible {
  return { t: v === true, f: v === false, n: v === null }
}

function and3(a: Possible, b: Possible): Possible {
  return {
    t: a.t && b.t,
    f: a.f || b.f,
    n: (a.n && (b.t || b.n)) || (b.n && (a.t || a.n)),
  }
}

function or3(a: Possible, b: Possible): Possible {
  return {
    t: a.t || b.t,
    f: a.f && b.f,
    n: (a.n && (b.f || b.n)) || (b.n && (a.f || a.n)),
  }
}

function not3(a: Possible): Possible {
  return { t: a.f, f: a.t, n: a.n }
}

function family(a: Abs): Family | undefined {
  const v = a.lo ?? a.hi
  return v === undefined ? undefined : familyOf(v)
}

/** Whether comparing `a` with `b` keeps `a`'s bounds meaningful. */
function boundsComparable(a: Abs, b: Abs): boolean {
  const fa = family(a)
  const fb = family(b)
  if (fa === undefined || fb === undefined || fa === fb) return true
  // A string compared with another type is converted value by value; that conversion does not
  // preserve string order, so string bounds say nothing unless they pin a single value.
  if (fa === 'string' && !a.point) return false
  if (fb === 'string' && !b.point) return false
  return true
}

/** Some a in A and b in B with a < b. */
function canLess(a: Abs, b: Abs): boolean {
  if (a.lo === undefined || b.hi === undefined) return true
  return compareValues(a.lo, b.hi) < 0
}

/** Some a in A and b in B with a <= b. */
function canLessEq(a: Abs, b: Abs): boolean {
  if (a.lo === undefined || b.hi === undefined) return true
  const c = compareValues(a.lo, b.hi)
  return b.hiOpen ? c < 0 : c <= 0
}

function canEq(a: Abs, b: Abs): boolean {
  return canLessEq(a, b) && canLessEq(b, a)
}

function canNe(a: Abs, b: Abs): boolean {
  return !(a.point && b.point && compareValues(a.lo as Value, b.lo as Value) === 0)
}

/**
 * `v IN (list)` for a list of known values, with the result the per-item path gives (the or3 fold
 * of `compareAbs('=', v, item)` over the items), found by binary search in the sorted items.
 *
 * Per item, that path gives: for a NULL item {t: false, f: false, n: true}; for a non-null item p,
 * n = v.nullable and, when v has a non-null value, t = canEq(v, p) and f = canNe(v, p), else
 * neither. Folding with or3 gives: t when some item gives t; f when no item is NULL and every
 * item gives f; n when v.nullable, or when some item is NULL and every non-null item gives f.
 * canEq(v, p) is `lo <= p <= hi` (`< hi` when hiOpen), and canNe(v, p) fails only for a point v
 * equal to p. With bounds of the items' tag these comparisons never throw and the items' order
 * makes each side monotone; any other case (or an unexpected throw) is left to the per-item path.
 *
 * @returns the result, or undefined to use the per-item path
 */
function inSortedList(e: In, v: Abs): Possible | undefined {
  const list = sortedInList(e)
  if (list === undefined) return undefined
  let some = false
  let every = list.values.length === 0
  if (v.nonNull && list.values.length > 0) {
    if (!searchable(list, v.lo) || !searchable(list, v.hi)) return undefined
    if (v.point && v.lo === undefined) return undefined
    try {
      some = someWithin(list, v.lo, v.hi, v.hiOpen)
      every = !(v.point && someEqual(list, v.lo as Value))
    } catch {
      return undefined
    }
  }
  return { t: some, f: !list.hasNull && every, n: v.nullable || (list.hasNull && every) }
}

function compareAbs(op: Op, a: Abs, b: Abs): Possible {
  const both = a.nonNull && b.nonNull
  const comparable = both && boundsComparable(a, b)
  const tf = (t: () => boolean, f: () => boolean): { t: boolean; f: boolean } => {
    if (!both) return { t: false, f: false }
    if (!comparable) return { t: true, f: true }
    try {
      return { t: t(), f: f() }
    } catch {
      return { t: true, f: true }
    }
  }
  if (op === '<=>') {
    const r = tf(
      () => canEq(a, b),
      () => canNe(a, b),
    )
    return {
      t: (a.nullable && b.nullable) || r.t,
      f: (a.nullable && b.nonNull) || (a.nonNull && b.nullable) || r.f,
      n: false,
    }
  }
  const n = a.nullable || b.nullable
  let r: { t: boolean; f: boolean }
  switch (op) {
    case '=':
      r = tf(
        () => canEq(a, b),
        () => canNe(a, b),
      )
      break
    case '<>':
      r = tf(
        () => canNe(a, b),
        () => canEq(a, b),
      )
      break
    case '<':
      r = tf(
        () => canLess(a, b),
        () => canLessEq(b, a),
      )
      break
    case '<=':
      r = tf(
        () => canLessEq(a, b),
        () => canLess(b, a),
      )
      break
    case '>':
      r = tf(
        () => canLess(b, a),
        () => canLessEq(a, b),
      )
      break
    default:
      r = tf(
        () => canLessEq(b, a),
        () => canLess(a, b),
      )
  }
  return { ...r, n }
}

/** The smallest string greater than every string that starts with `s`, if any. */
function successor(s: string): string | undefined {
  const cps = [...s]
  while (cps.length > 0) {
    const last = (cps.pop() as string).codePointAt(0) as number
    if (last < 0x10ffff) {
      // Skip the surrogate range, which holds no characters.
      const next = last + 1 === 0xd800 ? 0xe000 : last + 1
      return cps.join('') + String.fromCodePoint(next)
    }
  }
  return undefined
}

function codePointLength(s: string): number {
  let n = 0
  for (const _ of s) n++
  return n
}

// === Reading stats ===

function toCount(raw: unknown): bigint | undefined {
  if (typeof raw === 'bigint') return raw
  if (typeof raw === 'number') return Number.isSafeInteger(raw) ? BigInt(raw) : undefined
  if (typeof raw === 'string') return /^\d+$/.test(raw) ? BigInt(raw) : undefined
  if (raw !== null && typeof raw === 'object') {
    const r = raw as { isLosslessNumber?: unknown; value?: unknown }
    if (r.isLosslessNumber === true && typeof r.value === 'string' && /^\d+$/.test(r.value))
      return BigInt(r.value)
  }
  return undefined
}

function statAt(
  root: Readonly<Record<string, unknown>> | null | undefined,
  path: readonly string[],
): unknown {
  let current: unknown = root
  for (const part of path) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, part)) return undefined
    current = (current as Record<string, unknown>)[part]
  }
  return current
}

interface Bound {
  readonly v: Value
  /** The bound is a value some row holds exactly (not widened, not truncated). */
  readonly exact: boolean
  /** For an upper bound: values are strictly below it. */
  readonly open: boolean
}

const MICROS_999 = 999n
const MINUTE_MICROS = 60_000_000n
/** 1973-01-01T00:00:00Z: after it, no time zone in use had an offset with seconds. */
const HISTORICAL_OFFSET_LIMIT = 94_694_400_000_000n

function statBound(
  raw: unknown,
  type: DataType,
  side: 'min' | 'max',
  prefixLength: number,
  widenedFromFloat: boolean,
): Bound | undefined {
  if (raw === null || raw === undefined) return undefined
  switch (type.name) {
    case 'double':
      if (widenedFromFloat && typeof raw === 'number') {
        // A file written before float -> double widening printed the float (3.4 for 3.4f, which
        // reads back as 3.4000000953674316); a later file printed a double. Cover both readings.
        const f = Math.fround(raw)
        return {
          v: { t: 'f64', v: side === 'min' ? Math.min(raw, f) : Math.max(raw, f) },
          exact: false,
          open: false,
        }
      }
      break
    case 'binary':
      return undefined
    case 'string': {
      if (typeof raw !== 'string') return undefined
      if (codePointLength(raw) < prefixLength) return { v: { t: 'str', v: raw }, exact: true, open: false }
      if (side === 'min') return { v: { t: 'str', v: raw }, exact: false, open: false }
      const next = successor(raw)
      return next === undefined ? undefined : { v: { t: 'str', v: next }, exact: false, open: true }
    }
    case 'timestamp':
    case 'timestamp_ntz': {
      const t = type.name === 'timestamp' ? 'ts' : 'ntz'
      let micros: bigint
      let truncated: boolean
      let widen = 0n
      if (typeof raw === 'string') {
        const parsed = parseTimestamp(raw)
        if (parsed === undefined) return undefined
        micros = parsed.micros
        truncated = parsed.fractionDigits <= 3
        if (
          parsed.offsetSeconds !== undefined &&
          parsed.offsetSeconds !== 0 &&
          micros < HISTORICAL_OFFSET_LIMIT
        ) {
          widen = MINUTE_MICROS
        }
      } else if (typeof raw === 'bigint') {
        micros = raw
        truncated = false
      } else if (raw instanceof Date) {
        micros = BigInt(raw.getTime()) * 1000n
        truncated = true
      } else {
        return undefined
      }
      if (side === 'min')
        return { v: { t, v: micros - widen }, exact: !truncated && widen === 0n, open: false }
      return {
        v: { t, v: micros + widen + (truncated ? MICROS_999 : 0n) },
        exact: !truncated && widen === 0n,
        open: false,
      }
    }
    case 'byte':
    case 'short':
    case 'integer':
    case 'long':
      if (typeof raw === 'number' && Number.isFinite(raw) && !Number.isSafeInteger(raw)) {
        // A lossy JSON parse may have moved the value by up to half a unit in the last place.
        const ulp = ulpOfDouble(raw).unscaled
        const base = BigInt(raw)
        return { v: { t: 'int', v: side === 'min' ? base - ulp : base + ulp }, exact: false, open: false }
      }
      break
    case 'decimal':
      if (typeof raw === 'number' && Number.isFinite(raw) && !Number.isSafeInteger(raw)) {
        const ulp = ulpOfDouble(raw)
        const base = decimalFromDouble(raw)
        const delta = side === 'min' ? { unscaled: -ulp.unscaled, scale: ulp.scale } : ulp
        return { v: { t: 'dec', v: addDecimals(base, delta) }, exact: false, open: false }
      }
      if (typeof raw === 'string' && parseDecimal(raw) === undefined) return undefined
      break
  }
  const v = coerceRaw(raw, type)
  if (v === undefined || v === null) return undefined
  return { v, exact: true, open: false }
}

// === Evaluation over one file ===

/** Column paths per node; nodes are immutable, so this is computed once per predicate tree. */
const REFERENCED = new WeakMap<Expression, readonly (readonly string[])[]>()

const NO_COLUMNS: readonly (readonly string[])[] = Object.freeze([])

// Built from the children's lists, so that asking at every node of a deep tree costs linear time
// overall rather than a walk of each subtree; leaves are answered without the cache.
function referencedColumns(e: Expression): readonly (readonly string[])[] {
  if (e.kind === 'column') return [e.path]
  if (e.kind === 'literal') return NO_COLUMNS
  let paths = REFERENCED.get(e)
  if (paths === undefined) {
    const seen = new Set<string>()
    const out: (readonly string[])[] = []
    for (const c of childrenOf(e)) {
      for (const path of referencedColumns(c)) {
        const key = path.join('\u0000')
        if (!seen.has(key)) {
          seen.add(key)
          out.push(path)
        }
      }
    }
    paths = out
    REFERENCED.set(e, paths)
  }
  return paths
}

/** Partition values that are not exact (a timestamp without offset) are bounded by this. */
const PARTITION_ZONE_SLACK = 18n * 3600n * 1_000_000n

class FileView {
  /** Exactly known partition columns, as a row for the row evaluator (raw values by logical name). */
  private readonly knownRow: Record<string, unknown> = {}
  private readonly known = new Set<string>()
  private readonly partitionAbs = new Map<string, Abs>()

  constructor(
    private readonly stats: FileStats | undefined,
    private readonly partitionValues: Readonly<Record<string, unknown>>,
    private readonly columns: ColumnResolver,
    private readonly prefixLength: number,
  ) {}

  private isKnown(e: Expression): boolean {
    return referencedColumns(e).every((path) => {
      const info = this.columns.resolve(path)
      if (info?.partition !== true) return false
      this.partitionColumn(info)
      return this.known.has(info.path[0] as string)
    })
  }

  /** The summary of a partition column, computed once per file. */
  private partitionColumn(info: ColumnInfo): Abs {
    const name = info.path[0] as string
    const cached = this.partitionAbs.get(name)
    if (cached !== undefined) return cached
    const abs = this.readPartition(info)
    this.partitionAbs.set(name, abs)
    return abs
  }

  private readPartition(info: ColumnInfo): Abs {
    const name = info.path[0] as string
    const physical = info.physicalPath[0] as string
    let key: string | undefined = Object.hasOwn(this.partitionValues, physical) ? physical : undefined
    if (key === undefined) {
      const lower = physical.toLowerCase()
      const keys = Object.keys(this.partitionValues).filter((k) => k.toLowerCase() === lower)
      key = keys.length === 1 ? keys[0] : undefined
    }
    if (key === undefined || info.type === undefined) return ANY_ABS
    const raw = this.partitionValues[key]
    if (raw === null || raw === undefined || raw === '') {
      this.known.add(name)
      this.knownRow[name] = null
      return NULL_ABS
    }
    if (info.type.name === 'timestamp' && typeof raw === 'string') {
      const parsed = parseTimestamp(raw)
      if (parsed === undefined) return ANY_ABS
      if (parsed.offsetSeconds === undefined) {
        return {
          nullable: false,
          nonNull: true,
          lo: { t: 'ts', v: parsed.micros - PARTITION_ZONE_SLACK },
          hi: { t: 'ts', v: parsed.micros + PARTITION_ZONE_SLACK },
          hiOpen: false,
          point: false,
        }
      }
    }
    const v = coerceRaw(raw, info.type)
    if (v === undefined) return ANY_ABS
    this.known.add(name)
    this.knownRow[name] = raw
    return pointAbs(v)
  }

  private dataColumn(info: ColumnInfo): Abs {
    const type = info.type
    if (type === undefined || this.stats === undefined) return ANY_ABS
    const numRecords = toCount(this.stats.numRecords)
    const nullCount = toCount(statAt(this.stats.nullCount, info.physicalPath))
    const allNull = numRecords !== undefined && nullCount !== undefined && nullCount >= numRecords
    if (allNull) return NULL_ABS
    const nullable = nullCount !== 0n
    const fromFloat = info.widenedFrom.includes('float')
    const min = statBound(
      statAt(this.stats.minValues, info.physicalPath),
      type,
      'min',
      this.prefixLength,
      fromFloat,
    )
    const max = statBound(
      statAt(this.stats.maxValues, info.physicalPath),
      type,
      'max',
      this.prefixLength,
      fromFloat,
    )
    if (min !== undefined && max !== undefined) {
      const c = compareValues(min.v, max.v)
      // Inverted bounds are corrupt: trust neither.
      if (c > 0 || (c === 0 && max.open)) return { ...ANY_ABS, nullable }
      const point = min.exact && max.exact && c === 0
      return { nullable, nonNull: true, lo: min.v, hi: max.v, hiOpen: max.open, point }
    }
    return { nullable, nonNull: true, lo: min?.v, hi: max?.v, hiOpen: max?.open ?? false, point: false }
  }

  private exactValue(e: Expression): Abs | undefined {
    if (!this.isKnown(e)) return undefined
    try {
      return pointAbs(evaluateValue(e, this.knownRow, { columns: this.columns }))
    } catch {
      return undefined
    }
  }

  abs(e: Expression): Abs {
    const exact = this.exactValue(e)
    if (exact !== undefined) return exact
    switch (e.kind) {
      case 'column': {
        const info = this.columns.resolve(e.path)
        if (info === undefined) return ANY_ABS
        return info.partition ? this.partitionColumn(info) : this.dataColumn(info)
      }
      case 'comparison':
      case 'and':
      case 'or':
      case 'not':
      case 'in':
      case 'between':
      case 'is-null':
      case 'is-boolean':
      case 'like': {
        const p = this.possible(e)
        const f: Value = { t: 'bool', v: false }
        const t: Value = { t: 'bool', v: true }
        if (!p.t && !p.f) return NULL_ABS
        return {
          nullable: p.n,
          nonNull: true,
          lo: p.f ? f : t,
          hi: p.t ? t : f,
          hiOpen: false,
          point: p.t !== p.f,
        }
      }
      default:
        return ANY_ABS
    }
  }

  possible(e: Expression): Possible {
    // An AND / OR of exactly known operands is decided exactly by its operands, so chains skip
    // the check, which would otherwise run at every level of a long chain.
    if (e.kind !== 'and' && e.kind !== 'or' && this.isKnown(e)) {
      try {
        return possibleOfBool(evaluateRow(e, this.knownRow, { columns: this.columns }))
      } catch {
        // fall through to the abstract evaluation
      }
    }
    switch (e.kind) {
      case 'and':
        return and3(this.possible(e.left), this.possible(e.right))
      case 'or':
        return or3(this.possible(e.left), this.possible(e.right))
      case 'not':
        return not3(this.possible(e.operand))
      case 'comparison':
        return compareAbs(e.op, this.abs(e.left), this.abs(e.right))
      case 'in': {
        const v = this.abs(e.value)
        const r = inSortedList(e, v) ?? e.list.map((item) => compareAbs('=', v, this.abs(item))).reduce(or3)
        return e.negated ? not3(r) : r
      }
      case 'between': {
        const v = this.abs(e.value)
        const r = and3(compareAbs('>=', v, this.abs(e.low)), compareAbs('<=', v, this.abs(e.high)))
        return e.negated ? not3(r) : r
      }
      case 'is-null': {
        const a = this.abs(e.operand)
        const r = { t: a.nullable, f: a.nonNull, n: false }
        return e.negated ? not3(r) : r
      }
      case 'is-boolean': {
        const p = this.possible(e.operand)
        const yes = e.value ? p.t : p.f
        const no = (e.value ? p.f : p.t) || p.n
        return e.negated ? { t: no, f: yes, n: false } : { t: yes, f: no, n: false }
      }
      case 'like': {
        const r = this.like(this.abs(e.value), this.abs(e.pattern), e.escape)
        return e.negated ? not3(r) : r
      }
      case 'column':
      case 'call':
      case 'cast': {
        // A boolean-valued column (or expression) used as a condition.
        const a = this.abs(e)
        const isBool = (v: Value | undefined): boolean => v === undefined || v.t === 'bool'
        if (!isBool(a.lo) || !isBool(a.hi)) return ANY_POSSIBLE
        return {
          t: a.nonNull && (a.hi === undefined || a.hi.v === true),
          f: a.nonNull && (a.lo === undefined || a.lo.v === false),
          n: a.nullable,
        }
      }
      default:
        return ANY_POSSIBLE
    }
  }

  private like(value: Abs, pattern: Abs, escapeChar: string | null): Possible {
    const n = value.nullable || pattern.nullable
    if (!value.nonNull || !pattern.nonNull) return { t: false, f: false, n }
    if (!pattern.point || pattern.lo?.t !== 'str') return { t: true, f: true, n }
    const fam = family(value)
    if (fam !== undefined && fam !== 'string') return { t: true, f: true, n }
    const { prefix, exact } = likePrefix(pattern.lo.v, escapeChar)
    if (exact) {
      const target = pointAbs({ t: 'str', v: prefix })
      return { t: canEq(value, target), f: canNe(value, target), n }
    }
    if (prefix === '') return { t: true, f: true, n }
    // Matches start with the prefix, so they lie in [prefix, successor(prefix)).
    const lowest = pointAbs({ t: 'str', v: prefix })
    const next = successor(prefix)
    const aboveLow = canLessEq(lowest, value)
    const belowHigh =
      next === undefined || value.lo === undefined || compareValues(value.lo, { t: 'str', v: next }) < 0
    return { t: aboveLow && belowHigh, f: true, n }
  }
}
