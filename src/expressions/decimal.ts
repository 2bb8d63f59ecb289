/**
 * Exact decimal numbers as `(unscaled, scale)` pairs: the value is `unscaled / 10^scale`.
 * Used for decimal literals, decimal columns and the exact comparison of integers, decimals and
 * doubles.
 */

/** An exact decimal number `unscaled * 10^-scale` (scale >= 0). */
export interface Decimal {
  readonly unscaled: bigint
  readonly scale: number
}

const DECIMAL_TEXT_RE = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/

/**
 * Parses decimal text such as `-1.50`, `.5`, `5.`, `1.5e3`, keeping trailing zeros as scale.
 *
 * @param text - the number text
 * @returns the exact value, or `undefined` when the text is not a decimal number
 */
export function parseDecimal(text: string): Decimal | undefined {
  const m = DECIMAL_TEXT_RE.exec(text.trim())
  if (m === null) return undefined
  const intPart = m[2] ?? ''
  const fracPart = m[3] ?? ''
  if (intPart === '' && fracPart === '') return undefined
  const exponent = m[4] === undefined ? 0 : Number(m[4])
  if (!Number.isSafeInteger(exponent) || Math.abs(exponent) > 10_000) return undefined
  let unscaled = BigInt(intPart + fracPart || '0')
  let scale = fracPart.length - exponent
  if (scale < 0) {
    unscaled *= 10n ** BigInt(-scale)
    scale = 0
  }
  return Object.freeze({ unscaled: m[1] === '-' ? -unscaled : unscaled, scale })
}

/**
 * Writes a decimal with exactly `scale` fraction digits, e.g. `-1.50` or `0.05`.
 *
 * @param value - the decimal
 * @returns its canonical text
 */
export function formatDecimal(value: Decimal): string {
  const negative = value.unscaled < 0n
  const digits = (negative ? -value.unscaled : value.unscaled).toString().padStart(value.scale + 1, '0')
  const cut = digits.length - value.scale
  const text = value.scale === 0 ? digits : `${digits.slice(0, cut)}.${digits.slice(cut)}`
  return negative ? `-${text}` : text
}

/**
 * The number of significant digits of the unscaled value (at least 1), as Spark counts
 * precision before widening it to the scale.
 *
 * @param value - the decimal
 * @returns the digit count
 */
export function digitCount(value: Decimal): number {
  const abs = value.unscaled < 0n ? -value.unscaled : value.unscaled
  return abs === 0n ? 1 : abs.toString().length
}

/**
 * Brings a decimal to a larger or equal scale without changing its value.
 *
 * @param value - the decimal
 * @param scale - the target scale, >= value.scale
 * @returns the unscaled value at that scale
 */
export function unscaledAt(value: Decimal, scale: number): bigint {
  return value.unscaled * 10n ** BigInt(scale - value.scale)
}

/**
 * Compares two decimals exactly.
 *
 * @param a - left value
 * @param b - right value
 * @returns negative, zero or positive
 */
export function compareDecimals(a: Decimal, b: Decimal): number {
  const scale = Math.max(a.scale, b.scale)
  const x = unscaledAt(a, scale)
  const y = unscaledAt(b, scale)
  return x < y ? -1 : x > y ? 1 : 0
}

/**
 * Rounds a decimal to a smaller scale, half away from zero (the rounding DuckDB and Spark use
 * for decimal rescaling).
 *
 * @param value - the decimal
 * @param scale - the target scale
 * @returns the rounded decimal
 */
export function roundDecimal(value: Decimal, scale: number): Decimal {
  if (scale >= value.scale) return Object.freeze({ unscaled: unscaledAt(value, scale), scale })
  const divisor = 10n ** BigInt(value.scale - scale)
  const negative = value.unscaled < 0n
  const abs = negative ? -value.unscaled : value.unscaled
  let q = abs / divisor
  if ((abs % divisor) * 2n >= divisor) q += 1n
  return Object.freeze({ unscaled: negative ? -q : q, scale })
}

const BITS = new DataView(new ArrayBuffer(8))

/**
 * The exact decimal value of a finite double (every finite double is a finite decimal).
 *
 * @param x - a finite number
 * @returns its exact value
 */
export function decimalFromDouble(x: number): Decimal {
  if (Number.isInteger(x)) return Object.freeze({ unscaled: BigInt(x), scale: 0 })
  BITS.setFloat64(0, x)
  const hi = BITS.getUint32(0)
  const lo = BITS.getUint32(4)
  const biased = (hi >>> 20) & 0x7ff
  let mantissa = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo)
  let exponent: number
  if (biased === 0) {
    exponent = -1074
  } else {
    mantissa |= 1n << 52n
    exponent = biased - 1075
  }
  // x is not an integer, so exponent < 0: x = mantissa / 2^k = mantissa * 5^k / 10^k
  const k = -exponent
  const unscaled = mantissa * 5n ** BigInt(k)
  return Object.freeze({ unscaled: x < 0 ? -unscaled : unscaled, scale: k })
}

/**
 * The gap between a finite double and the next double away from zero, as an exact decimal.
 * A decimal text that parses to `x` lies within half of this of `x`.
 *
 * @param x - a finite number
 * @returns the unit in the last place of `x`
 */
export function ulpOfDouble(x: number): Decimal {
  BITS.setFloat64(0, x)
  const biased = (BITS.getUint32(0) >>> 20) & 0x7ff
  const exponent = (biased === 0 ? 1 : biased) - 1075
  if (exponent >= 0) return Object.freeze({ unscaled: 1n << BigInt(exponent), scale: 0 })
  return Object.freeze({ unscaled: 5n ** BigInt(-exponent), scale: -exponent })
}

/**
 * Adds two decimals exactly.
 *
 * @param a - left value
 * @param b - right value
 * @returns `a + b` at the larger scale
 */
export function addDecimals(a: Decimal, b: Decimal): Decimal {
  const scale = Math.max(a.scale, b.scale)
  return Object.freeze({ unscaled: unscaledAt(a, scale) + unscaledAt(b, scale), scale })
}

/**
 * Converts a decimal to the nearest double.
 *
 * @param value - the decimal
 * @returns the closest double (correctly rounded by the runtime's number parser)
 */
export function decimalToDouble(value: Decimal): number {
  return Number.parseFloat(formatDecimal(value))
}
