import {
  encodeKeyTuple,
  isEligibleKeyType,
  type MergeKeyColumn,
  MergeKeySetBuilder,
  type MergeReadSet,
} from '../conflict/case6-merge-read-set.js'
import {
  between,
  col,
  conjunction,
  disjunction,
  type Expression,
  eq,
  isIn,
  type Literal,
  lit,
} from '../expressions/ast.js'
import { type DataType as ExprType, parseDataType } from '../expressions/data-types.js'
import { coerceRaw, compareValues, literalOfValue, type Value } from '../expressions/values.js'
import type { PrimitiveType } from '../protocol/schema.js'
import { type EquiKey, type MergePlan, mapColumns } from './merge-clauses.js'

/**
 * The MERGE source-key read predicate (rlc-spec 3.3, scenarios suite MSK): the target rows a
 * MERGE without a NOT MATCHED BY SOURCE clause can touch are those whose join keys appear among
 * the source rows' keys.
 */
export interface SourceKeyPredicate {
  /**
   * The cheap form: an IN-set per key column when there are at most `inSetThreshold` distinct
   * key tuples, else a `BETWEEN min AND max` per key column; `FALSE` when no source row has a
   * complete (non-NULL) key.
   */
  readonly preFilter: Expression
  /** The row-exact form: the key IN-set, or the OR of the key tuples for several key columns. */
  readonly exact: Expression
  readonly kind: 'inSet' | 'range' | 'empty'
  /** Distinct complete key tuples among the source rows. */
  readonly distinctKeys: number
  /** `BETWEEN min AND max` per key column (`FALSE` when no key is complete), whatever `kind`. */
  readonly ranges: Expression
}

/** Key column types whose equality the data plane and the predicate evaluator agree on exactly. */
const KEY_TYPES = new Set<string>([
  'byte',
  'short',
  'integer',
  'long',
  'string',
  'boolean',
  'date',
  'timestamp',
  'timestamp_ntz',
  'binary',
])

/**
 * Builds the source-key predicate over the target's key columns.
 *
 * A source row with a NULL in any key matches nothing through `=` and contributes no key. Returns
 * undefined (no usable predicate; the caller reads without one) when there are no keys, when a
 * key column's type is not one whose equality is exact here (floating point, decimal of another
 * scale), or when a source value cannot be read as the key column's type.
 *
 * @param keys - the equi-join keys of the ON condition
 * @param rows - the source rows
 * @param inSetThreshold - the most distinct key tuples an IN-set may hold
 * @returns the predicate, or undefined
 */
export function sourceKeyPredicate(
  keys: readonly EquiKey[],
  rows: readonly Readonly<Record<string, unknown>>[],
  inSetThreshold: number,
): SourceKeyPredicate | undefined {
  if (keys.length === 0 || keys.some((k) => !KEY_TYPES.has(k.targetType))) return undefined
  const types = keys.map((k) => parseDataType(k.targetType))
  if (types.some((t) => t === undefined)) return undefined
  try {
    return build(keys, types as ExprType[], rows, inSetThreshold)
  } catch {
    // A value outside its key column's range: no predicate can be built, read without one.
    return undefined
  }
}

function build(
  keys: readonly EquiKey[],
  types: readonly ExprType[],
  rows: readonly Readonly<Record<string, unknown>>[],
  inSetThreshold: number,
): SourceKeyPredicate | undefined {
  // One key column holds values of one tag, so its values (bigint, string, number, boolean)
  // are map keys themselves, with no text built per row; bytes and tuples get a text key.
  const tuples = new Map<unknown, Value[]>()
  const single = keys.length === 1 ? (keys[0] as EquiKey) : undefined
  for (const row of rows) {
    if (single !== undefined) {
      const v = coerceRaw(row[single.source], types[0]!)
      if (v === undefined) return undefined
      if (v !== null) {
        const key = typeof v.v === 'object' ? tupleKey([v]) : v.v
        if (!tuples.has(key)) tuples.set(key, [v])
      }
      continue
    }
    const tuple: Value[] = []
    let complete = true
    for (let i = 0; i < keys.length; i++) {
      const v = coerceRaw(row[(keys[i] as EquiKey).source], types[i]!)
      if (v === undefined) return undefined
      if (v === null) {
        complete = false
        break
      }
      tuple.push(v)
    }
    if (complete) tuples.set(tupleKey(tuple), tuple)
  }
  if (tuples.size === 0) {
    return Object.freeze({
      preFilter: lit(false),
      exact: lit(false),
      kind: 'empty',
      distinctKeys: 0,
      ranges: lit(false),
    })
  }
  const all = Array.from(tuples.values())
  const columns = keys.map((k) => col([k.target]))
  // The exact form holds one literal per distinct key: built only when asked for (the read
  // predicate under the source-key flag), not for every MERGE of a million-row source.
  let exact: Expression | undefined
  const exactOf = (): Expression => {
    exact ??= exactPredicate(keys, columns, all)
    return exact
  }
  // The ranges are the pre-filter past the threshold, and otherwise built only when asked for
  // (the row reads of Case 6 above a few hundred keys).
  let ranges: Expression | undefined
  const rangesOf = (): Expression => {
    ranges ??= conjunction(
      keys.map((k, i) => {
        let min = all[0]![i]!
        let max = min
        for (const t of all) {
          const v = t[i]!
          if (compareValues(v, min) < 0) min = v
          if (compareValues(v, max) > 0) max = v
        }
        return between(columns[i]!, literalOf(min, k.targetType), literalOf(max, k.targetType))
      }),
    )
    return ranges
  }
  if (all.length <= inSetThreshold) {
    if (keys.length === 1) {
      const preFilter = exactOf()
      return Object.freeze({
        preFilter,
        exact: preFilter,
        kind: 'inSet',
        distinctKeys: all.length,
        get ranges() {
          return rangesOf()
        },
      })
    }
    const preFilter = conjunction(
      keys.map((k, i) => {
        const distinct = new Map<string, Value>()
        for (const t of all) distinct.set(tupleKey([t[i]!]), t[i]!)
        return isIn(
          columns[i]!,
          Array.from(distinct.values(), (v) => literalOf(v, k.targetType)),
        )
      }),
    )
    return Object.freeze({
      preFilter,
      get exact() {
        return exactOf()
      },
      kind: 'inSet',
      distinctKeys: all.length,
      get ranges() {
        return rangesOf()
      },
    })
  }
  const preFilter = rangesOf()
  return Object.freeze({
    preFilter,
    get exact() {
      return exactOf()
    },
    kind: 'range',
    distinctKeys: all.length,
    ranges: preFilter,
  })
}

/**
 * The key IN-set for one key column; for several, the OR of the key tuples (a balanced tree, so
 * that a million tuples nest twenty levels deep rather than a million).
 */
function exactPredicate(
  keys: readonly EquiKey[],
  columns: readonly Expression[],
  all: readonly Value[][],
): Expression {
  if (keys.length === 1) {
    const type = (keys[0] as EquiKey).targetType
    return isIn(
      columns[0]!,
      all.map((t) => literalOf(t[0]!, type)),
    )
  }
  return disjunction(
    all.map((t) => conjunction(keys.map((k, i) => eq(columns[i]!, literalOf(t[i]!, k.targetType))))),
  )
}

/** A map key for a tuple of values: the type tag and text of each, length-prefixed. */
function tupleKey(values: readonly Value[]): string {
  if (values.length === 1) {
    const v = values[0]!
    return `${v.t}:${valueText(v)}`
  }
  let key = ''
  for (const v of values) {
    const text = valueText(v)
    key += `${v.t}:${text.length}:${text}`
  }
  return key
}

function valueText(v: Value): string {
  switch (v.t) {
    case 'bin':
      return Array.from(v.v, (b) => b.toString(16).padStart(2, '0')).join('')
    case 'dec':
      return `${v.v.unscaled}e-${v.v.scale}`
    case 'struct':
      return JSON.stringify(v.v)
    default:
      return String(v.v)
  }
}

/** A literal of the key column's type holding a value read as that type. */
function literalOf(v: Value, type: PrimitiveType): Literal {
  return literalOfValue(v, type) ?? lit(null)
}

/**
 * The most key tuples whose IN-sets the row reads of Case 6 push to the data plane; past it they
 * push each key column's range. DuckDB parses and binds an IN-list of thousands of literals more
 * slowly than it reads the rows the list would spare, and the checker probes K_L exactly anyway.
 */
const ROW_READ_IN_SET_MAX = 256

/**
 * The row-level read set of a MERGE (Case 6, design beyond-rlc 8.2): the distinct non-NULL key
 * tuples of the source rows, encoded by the key columns' schema types (exact up to `maxExact`,
 * a Bloom filter beyond), the target-only part of ON with a cheap key filter, and the NOT
 * MATCHED BY SOURCE conditions.
 *
 * Undefined (no read set: any concurrent change of the table conflicts) when ON has no equi-join
 * key, when a key column's type is not exactly comparable (floating point) or differs from its
 * source column's type (M-S1), or when a source key cannot be read exactly as its column's type.
 *
 * @param plan - the planned MERGE: keys, source columns, target-only conjuncts, clauses
 * @param rows - the source rows the MERGE joins
 * @param options - the key-set cap, the IN-set threshold of the key filter, and the source-key
 *   predicate when already built
 * @returns the read set, or undefined
 */
export function captureMergeReadSet(
  plan: Pick<MergePlan, 'keys' | 'sourceColumns' | 'targetOnly' | 'whenNotMatchedBySource'>,
  rows: readonly Readonly<Record<string, unknown>>[],
  options: {
    readonly maxExact: number
    readonly inSetThreshold: number
    /** The source-key predicate when the caller built it already (same rows and threshold). */
    readonly sourceKeys?: SourceKeyPredicate | undefined
  },
): MergeReadSet | undefined {
  const { keys } = plan
  if (keys.length === 0) return undefined
  for (const k of keys) {
    const source = plan.sourceColumns.find((c) => c.name === k.source)
    if (source === undefined || JSON.stringify(source.type) !== JSON.stringify(k.targetType)) return undefined
    if (!isEligibleKeyType(k.targetType)) return undefined
  }
  const columns: MergeKeyColumn[] = keys.map((k) => Object.freeze({ name: k.target, type: k.targetType }))
  const set = new MergeKeySetBuilder(options.maxExact, rows.length)
  const tuple: unknown[] = new Array(keys.length)
  for (const row of rows) {
    for (let i = 0; i < keys.length; i++) tuple[i] = row[(keys[i] as EquiKey).source]
    const encoded = encodeKeyTuple(tuple, columns)
    if (encoded === undefined) return undefined
    if (encoded !== null) set.add(encoded)
  }
  // The source-key filter exists for the types it compares exactly; T alone over-approximates
  // the rest (decimal keys), and the checker probes the exact set.
  const pre =
    'sourceKeys' in options ? options.sourceKeys : sourceKeyPredicate(keys, rows, options.inSetThreshold)
  const parts = [plan.targetOnly, pre?.preFilter].filter((e): e is Expression => e !== undefined)
  const rowPre = pre === undefined || pre.distinctKeys <= ROW_READ_IN_SET_MAX ? pre?.preFilter : pre.ranges
  const rowParts = [plan.targetOnly, rowPre].filter((e): e is Expression => e !== undefined)
  const conditions: Expression[] = []
  let wholeTable = false
  for (const c of plan.whenNotMatchedBySource) {
    if (c.condition === undefined) wholeTable = true
    else conditions.push(mapColumns(c.condition, (path) => col(path.slice(1))))
  }
  return Object.freeze({
    keyColumns: Object.freeze(columns),
    keys: set.build(),
    keyFilter: parts.length === 0 ? lit(true) : conjunction(parts),
    rowFilter: rowParts.length === 0 ? lit(true) : conjunction(rowParts),
    notMatchedBySource: conditions.length === 0 ? undefined : disjunction(conditions),
    wholeTable,
  })
}
