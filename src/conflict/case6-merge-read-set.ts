/**
 * Case 6 (design beyond-rlc 8.2): what a MERGE read, recorded so that the conflict checker can
 * decide row by row whether a winner changed any of it:
 *
 *   Read(L) = (T and key(t) in K_L) or N_1 or ... or N_k
 *
 * with T the target-only conjuncts of ON, K_L the distinct non-NULL key tuples of the source the
 * MERGE joined, and N_j the conditions of its NOT MATCHED BY SOURCE clauses (target columns
 * only). Keys are encoded by the table's schema type, never through a JS `number`, so that 2^53
 * and 2^53 + 1 stay two keys; the set is exact up to a cap and a Bloom filter beyond it, whose
 * false positives only cost an abort.
 */
import type { Expression } from '../expressions/ast.js'
import { type DataType, parseDataType } from '../expressions/data-types.js'
import { unscaledAt } from '../expressions/decimal.js'
import { coerceRaw, type Value } from '../expressions/values.js'
import type { PrimitiveType } from '../protocol/schema.js'

/** Key column types whose equality is exact in the data plane and in the encoding (M-S1). */
const ELIGIBLE_KEY_TYPES: ReadonlySet<string> = new Set([
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
  'decimal',
])

/** One key column of the equi-join, by its table (logical) name and schema type. */
export interface MergeKeyColumn {
  readonly name: string
  readonly type: PrimitiveType
}

/**
 * The read set of one MERGE (design beyond-rlc 8.2). Recorded only for a MERGE whose join keys
 * are eligible (M-S1); an unconditional NOT MATCHED BY SOURCE clause is recorded as
 * `wholeTable`, which no winner that changed data reconciles against (M-S4).
 */
export interface MergeReadSet {
  /** The equi-join key columns, in the order the key tuples list them. */
  readonly keyColumns: readonly MergeKeyColumn[]
  /** K_L: the distinct non-NULL key tuples of the source, encoded by {@link encodeKeyTuple}. */
  readonly keys: MergeKeySet
  /**
   * T and a cheap over-approximation of "key in K_L" (an IN-set or a range per key column), over
   * unqualified table columns: pushed to the data plane and to the statistics. Every row in the
   * key part of the read set satisfies it.
   */
  readonly keyFilter: Expression
  /**
   * What the row reads push to the data plane: `keyFilter` with large key IN-sets widened to
   * their ranges (cheaper for the data plane; every row of the key part still satisfies it).
   * Absent: `keyFilter`.
   */
  readonly rowFilter?: Expression | undefined
  /** The OR of the N_j over unqualified table columns; undefined without such clauses. */
  readonly notMatchedBySource: Expression | undefined
  /** Some NOT MATCHED BY SOURCE clause has no condition: every target row was read. */
  readonly wholeTable: boolean
}

/** A probe's answer: a Bloom filter cannot say "yes" for sure. */
export type KeyProbe = 'absent' | 'present' | 'maybe'

/** K_L: an exact set of encoded key tuples up to a cap, a Bloom filter beyond it. */
export interface MergeKeySet {
  /** Distinct tuples added. */
  readonly size: number
  /** Whether the set spilled into a Bloom filter. */
  readonly approximate: boolean
  /**
   * @param encoded - a key tuple from {@link encodeKeyTuple}
   * @returns whether the tuple is in the set ('maybe' only once approximate)
   */
  probe(encoded: string): KeyProbe
  /** The tuples, while the set is exact; undefined once approximate. */
  exactTuples(): readonly string[] | undefined
}

/**
 * Whether a key column type can carry the key part of a read set.
 *
 * @param type - the table's type of the column
 * @returns true for integral, string, boolean, date, timestamp, binary and decimal columns
 */
export function isEligibleKeyType(type: PrimitiveType): boolean {
  const parsed = parseDataType(type)
  return parsed !== undefined && ELIGIBLE_KEY_TYPES.has(parsed.name)
}

/**
 * The canonical encoding of a key tuple: each value read as its column's schema type (integers
 * and timestamps as BigInt, dates as days, decimals as the unscaled integer at the column's
 * scale, strings as their text, binary as hex), length-prefixed and concatenated.
 *
 * @param raws - the tuple's values, as a source row or a data-plane row holds them
 * @param columns - the key columns
 * @returns the encoding; `null` when some value is NULL (such a tuple matches nothing); undefined
 *   when some value cannot be read exactly as its column's type
 */
export function encodeKeyTuple(
  raws: readonly unknown[],
  columns: readonly MergeKeyColumn[],
): string | null | undefined {
  let out = ''
  for (let i = 0; i < columns.length; i++) {
    const type = parseDataType((columns[i] as MergeKeyColumn).type)
    if (type === undefined || !ELIGIBLE_KEY_TYPES.has(type.name)) return undefined
    const value = coerceRaw(raws[i], type)
    if (value === undefined) return undefined
    if (value === null) return null
    const text = valueText(value, type)
    if (text === undefined) return undefined
    out += `${text.length}:${text}`
  }
  return out
}

/**
 * Collects K_L: exact up to `maxExact` distinct tuples, then a Bloom filter sized for `expected`
 * tuples at about 1% false positives.
 */
export class MergeKeySetBuilder {
  readonly #maxExact: number
  readonly #expected: number
  #exact: Set<string> | undefined = new Set()
  #bloom: BloomFilter | undefined
  #size = 0

  /**
   * @param maxExact - the most tuples kept exactly
   * @param expected - an upper bound of the tuples to come (the source row count)
   */
  constructor(maxExact: number, expected: number) {
    this.#maxExact = maxExact
    this.#expected = Math.max(expected, 1)
  }

  /**
   * Adds one encoded tuple.
   *
   * @param encoded - from {@link encodeKeyTuple}
   */
  add(encoded: string): void {
    if (this.#exact !== undefined) {
      if (this.#exact.has(encoded)) return
      if (this.#exact.size < this.#maxExact) {
        this.#exact.add(encoded)
        this.#size++
        return
      }
      this.#bloom = new BloomFilter(this.#expected)
      for (const k of this.#exact) this.#bloom.add(k)
      this.#exact = undefined
    }
    if (this.#bloom!.probe(encoded)) return
    this.#bloom!.add(encoded)
    this.#size++
  }

  /** @returns the frozen set */
  build(): MergeKeySet {
    const exact = this.#exact
    const bloom = this.#bloom
    return Object.freeze({
      size: this.#size,
      approximate: exact === undefined,
      probe(encoded: string): KeyProbe {
        if (exact !== undefined) return exact.has(encoded) ? 'present' : 'absent'
        return bloom!.probe(encoded) ? 'maybe' : 'absent'
      },
      exactTuples: () => (exact === undefined ? undefined : Array.from(exact)),
    })
  }
}

// === Internals ===

function valueText(v: Value, type: DataType): string | undefined {
  switch (v.t) {
    case 'int':
      return v.v.toString()
    case 'str':
      return v.v
    case 'bool':
      return v.v ? '1' : '0'
    case 'date':
      return String(v.v)
    case 'ts':
    case 'ntz':
      return v.v.toString()
    case 'bin':
      return Array.from(v.v, (b) => b.toString(16).padStart(2, '0')).join('')
    case 'dec': {
      if (type.name !== 'decimal') return undefined
      // A value with more digits after the point than the column keeps is not one of its values.
      if (v.v.scale > type.scale) {
        const excess = 10n ** BigInt(v.v.scale - type.scale)
        if (v.v.unscaled % excess !== 0n) return undefined
        return (v.v.unscaled / excess).toString()
      }
      return unscaledAt(v.v, type.scale).toString()
    }
    default:
      return undefined
  }
}

/**
 * A Bloom filter over strings: about 9.6 bits and 7 probes per expected element (1% false
 * positives), double hashing of two 32-bit FNV-1a variants over the UTF-16 code units.
 */
class BloomFilter {
  readonly #bits: Uint32Array
  readonly #m: number
  static readonly #probes = 7

  constructor(expected: number) {
    this.#m = Math.max(64, Math.ceil(expected * 9.6))
    this.#bits = new Uint32Array(Math.ceil(this.#m / 32))
  }

  add(s: string): void {
    const [h1, h2] = hashes(s)
    for (let i = 0; i < BloomFilter.#probes; i++) {
      const bit = (h1 + i * h2) % this.#m
      this.#bits[bit >>> 5]! |= 1 << (bit & 31)
    }
  }

  probe(s: string): boolean {
    const [h1, h2] = hashes(s)
    for (let i = 0; i < BloomFilter.#probes; i++) {
      const bit = (h1 + i * h2) % this.#m
      if ((this.#bits[bit >>> 5]! & (1 << (bit & 31))) === 0) return false
    }
    return true
  }
}

function hashes(s: string): readonly [number, number] {
  let a = 0x811c9dc5
  let b = 0x01000193 ^ s.length
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    a = Math.imul(a ^ c, 0x01000193) >>> 0
    b = Math.imul(b ^ c, 0x5bd1e995) >>> 0
    b ^= b >>> 15
  }
  // An odd step visits distinct bits for distinct probes.
  return [a, (b | 1) >>> 0]
}
