/**
 * Type widening (the `typeWidening` table feature): which type changes the protocol allows, which
 * of them a write may apply on its own (schema evolution), and how a change is recorded in the
 * field's `delta.typeChanges` metadata.
 *
 * The protocol's list: `byte` -> `short` -> `integer` -> `long`; `float` -> `double`; `byte`,
 * `short` or `integer` -> `double`; `date` -> `timestamp_ntz`; `decimal(p, s)` ->
 * `decimal(p + k1, s + k2)`; `byte`, `short` or `integer` -> `decimal(10 + k1, k2)`; `long` ->
 * `decimal(20 + k1, k2)`; always with `k1 >= k2 >= 0`. Delta applies the integer to decimal and
 * integer to double changes only when asked to (ALTER), never through schema evolution, so that
 * integers are not turned into fractions by accident: {@link isAutomaticTypeChange} leaves them out.
 */
import type { JsonValue } from './json-text.js'
import { type DataType, decimalParts, type PrimitiveType, type StructField } from './schema.js'
import { booleanProperty, type TableConfiguration, TableProperty } from './table-properties.js'

/** The field metadata key holding a column's type changes. */
export const TYPE_CHANGES_KEY = 'delta.typeChanges'

const INTEGERS: readonly PrimitiveType[] = ['byte', 'short', 'integer', 'long']

/** Digits an integer type needs as a decimal with scale 0 (the protocol's 10 and 20). */
function integerDigits(t: PrimitiveType): number | undefined {
  if (t === 'byte' || t === 'short' || t === 'integer') return 10
  if (t === 'long') return 20
  return undefined
}

/**
 * Whether the protocol allows changing a column of type `from` to `to` (primitive types only).
 *
 * @param from - the current type
 * @param to - the wider type
 */
export function isSupportedTypeChange(from: DataType, to: DataType): boolean {
  if (typeof from !== 'string' || typeof to !== 'string' || from === to) return false
  if (isAutomaticTypeChange(from, to)) return true
  const target = decimalParts(to)
  const digits = integerDigits(from)
  if (target !== undefined && digits !== undefined) {
    // decimal(d + k1, k2) with k1 >= k2 >= 0.
    return target.precision - digits >= target.scale
  }
  return to === 'double' && (from === 'byte' || from === 'short' || from === 'integer')
}

/**
 * Whether a write that evolves the schema (an append with `schemaMode: 'merge'`, a MERGE with
 * schema evolution) may apply the change on its own: the supported changes less integer to
 * decimal and integer to double.
 *
 * @param from - the current type
 * @param to - the input's type
 */
export function isAutomaticTypeChange(from: DataType, to: DataType): boolean {
  if (typeof from !== 'string' || typeof to !== 'string' || from === to) return false
  const a = INTEGERS.indexOf(from)
  const b = INTEGERS.indexOf(to)
  if (a >= 0 && b >= 0) return b > a
  if (from === 'float') return to === 'double'
  if (from === 'date') return to === 'timestamp_ntz'
  const f = decimalParts(from)
  const t = decimalParts(to)
  if (f === undefined || t === undefined) return false
  const k1 = t.precision - f.precision
  const k2 = t.scale - f.scale
  return k1 >= k2 && k2 >= 0
}

/**
 * Whether the table lets writers widen column types: `delta.enableTypeWidening` is `true`.
 *
 * @param config - the table's configuration
 * @throws {InvalidArgumentError} when the property is not a boolean
 */
export function typeWideningEnabled(config: TableConfiguration): boolean {
  return booleanProperty(config, TableProperty.enableTypeWidening)
}

/**
 * The field with its type changed to `to` and the change appended to its `delta.typeChanges`
 * (earlier changes kept, as writers must preserve them).
 *
 * @param field - a top-level or struct field of primitive type
 * @param to - the wider type
 */
export function withTypeChange(field: StructField, to: PrimitiveType): StructField {
  const prior = field.metadata[TYPE_CHANGES_KEY]
  const changes: JsonValue[] = Array.isArray(prior) ? [...(prior as readonly JsonValue[])] : []
  changes.push(Object.freeze({ fromType: field.type as PrimitiveType, toType: to }))
  return Object.freeze({
    ...field,
    type: to,
    metadata: Object.freeze({ ...field.metadata, [TYPE_CHANGES_KEY]: Object.freeze(changes) }),
  })
}

const INTEGER_RANGES: readonly [PrimitiveType, bigint, bigint][] = [
  ['byte', -(2n ** 7n), 2n ** 7n - 1n],
  ['short', -(2n ** 15n), 2n ** 15n - 1n],
  ['integer', -(2n ** 31n), 2n ** 31n - 1n],
  ['long', -(2n ** 63n), 2n ** 63n - 1n],
]

/**
 * The type a JavaScript value written to a column of `type` asks for, when it is an automatic
 * widening of it: a whole number beyond an integer type's range asks for the narrowest integer
 * type that holds it; a number a `float` cannot hold exactly (a JavaScript number is a double)
 * asks for `double`. Undefined when the value fits, or when no widening would make it fit (the
 * writer then refuses it as always).
 *
 * @param type - the column's type
 * @param value - one value written to it
 */
export function widerTypeForValue(type: PrimitiveType, value: unknown): PrimitiveType | undefined {
  const at = INTEGERS.indexOf(type)
  if (at >= 0) {
    const n =
      typeof value === 'bigint'
        ? value
        : typeof value === 'number' && Number.isSafeInteger(value)
          ? BigInt(value)
          : undefined
    if (n === undefined) return undefined
    for (const [name, lo, hi] of INTEGER_RANGES.slice(at)) {
      if (n >= lo && n <= hi) return name === type ? undefined : name
    }
    return undefined
  }
  if (type === 'float' && typeof value === 'number' && Number.isFinite(value)) {
    return Math.fround(value) === value ? undefined : 'double'
  }
  return undefined
}

/**
 * The wider of two types a column's values ask for (both automatic widenings of one type, so one
 * is an automatic widening of the other or they are equal).
 */
export function widerOf(a: PrimitiveType, b: PrimitiveType): PrimitiveType {
  return isAutomaticTypeChange(a, b) ? b : a
}
