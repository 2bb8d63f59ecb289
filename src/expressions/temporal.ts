/**
 * Dates and timestamps as numbers: days since 1970-01-01 and microseconds since
 * 1970-01-01T00:00:00Z, in the proleptic Gregorian calendar Delta and Spark 3 use. Years are
 * limited to 0001..9999, the range every engine involved agrees on.
 */

import { civilFromDays, daysFromCivil } from '../protocol/civil-dates.js'

const MICROS_PER_SECOND = 1_000_000n
const SECONDS_PER_DAY = 86_400

function validDate(year: number, month: number, day: number): boolean {
  if (year < 1 || year > 9999 || month < 1 || month > 12 || day < 1) return false
  const [y, m, d] = civilFromDays(daysFromCivil(year, month, day))
  return y === year && m === month && d === day
}

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/

/**
 * Parses `YYYY-MM-DD`.
 *
 * @param text - the date text
 * @returns days since the epoch, or `undefined` when the text is not a valid date
 */
export function parseDate(text: string): number | undefined {
  const m = DATE_RE.exec(text.trim())
  if (m === null) return undefined
  const year = Number(m[1])
  const month = Number(m[2])
  const day = Number(m[3])
  return validDate(year, month, day) ? daysFromCivil(year, month, day) : undefined
}

/** A parsed timestamp text. */
export interface ParsedTimestamp {
  /** Microseconds since the epoch, with the text's offset applied (UTC when it has none). */
  readonly micros: bigint
  /** The offset written in the text in seconds east of UTC, or `undefined` when it had none. */
  readonly offsetSeconds: number | undefined
  /** How many fraction digits the text had (0 when none). */
  readonly fractionDigits: number
}

const TIMESTAMP_RE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|z|UTC|[+-]\d{2}(?::?\d{2}(?::?\d{2})?)?)?$/

function parseOffset(text: string): number | undefined {
  if (text === 'Z' || text === 'z' || text === 'UTC') return 0
  const sign = text.startsWith('-') ? -1 : 1
  const digits = text.slice(1).replaceAll(':', '')
  if (digits.length !== 2 && digits.length !== 4 && digits.length !== 6) return undefined
  const h = Number(digits.slice(0, 2))
  const m = digits.length >= 4 ? Number(digits.slice(2, 4)) : 0
  const s = digits.length === 6 ? Number(digits.slice(4, 6)) : 0
  if (h > 18 || m > 59 || s > 59) return undefined
  return sign * (h * 3600 + m * 60 + s)
}

/**
 * Parses `YYYY-MM-DD[( |T)HH:MM[:SS[.fffffffff]]][Z|UTC|+HH[:MM[:SS]]]`. Fraction digits beyond
 * microseconds are truncated toward the past, the way Delta truncates.
 *
 * @param text - the timestamp text
 * @returns the parsed timestamp, or `undefined` when the text is not valid
 */
export function parseTimestamp(text: string): ParsedTimestamp | undefined {
  const m = TIMESTAMP_RE.exec(text.trim())
  if (m === null) return undefined
  const year = Number(m[1])
  const month = Number(m[2])
  const day = Number(m[3])
  const hour = m[4] === undefined ? 0 : Number(m[4])
  const minute = m[5] === undefined ? 0 : Number(m[5])
  const second = m[6] === undefined ? 0 : Number(m[6])
  if (!validDate(year, month, day) || hour > 23 || minute > 59 || second > 59) return undefined
  let offsetSeconds: number | undefined
  if (m[8] !== undefined) {
    offsetSeconds = parseOffset(m[8])
    if (offsetSeconds === undefined) return undefined
  }
  const fraction = m[7] ?? ''
  const micros = BigInt((fraction + '000000').slice(0, 6))
  const seconds = daysFromCivil(year, month, day) * SECONDS_PER_DAY + hour * 3600 + minute * 60 + second
  const total = BigInt(seconds - (offsetSeconds ?? 0)) * MICROS_PER_SECOND + micros
  return Object.freeze({ micros: total, offsetSeconds, fractionDigits: fraction.length })
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0')
}

/**
 * Formats a day number as `YYYY-MM-DD`.
 *
 * @param days - days since the epoch
 * @returns the date text
 */
export function formatDate(days: number): string {
  const [y, m, d] = civilFromDays(days)
  return `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}`
}

/**
 * Formats microseconds since the epoch as `YYYY-MM-DD HH:MM:SS[.ffffff]` (UTC wall time, no
 * zone suffix); the fraction is written only when it is not zero.
 *
 * @param micros - microseconds since the epoch
 * @returns the timestamp text
 */
export function formatTimestamp(micros: bigint): string {
  let seconds = micros / MICROS_PER_SECOND
  let fraction = micros % MICROS_PER_SECOND
  if (fraction < 0n) {
    fraction += MICROS_PER_SECOND
    seconds -= 1n
  }
  const secs = Number(seconds)
  const days = Math.floor(secs / SECONDS_PER_DAY)
  const rest = secs - days * SECONDS_PER_DAY
  const time = `${pad(Math.floor(rest / 3600), 2)}:${pad(Math.floor((rest % 3600) / 60), 2)}:${pad(rest % 60, 2)}`
  const frac = fraction === 0n ? '' : `.${fraction.toString().padStart(6, '0')}`
  return `${formatDate(days)} ${time}${frac}`
}

/**
 * Microseconds at midnight UTC of a day.
 *
 * @param days - days since the epoch
 * @returns microseconds since the epoch
 */
export function daysToMicros(days: number): bigint {
  return BigInt(days) * BigInt(SECONDS_PER_DAY) * MICROS_PER_SECOND
}

/**
 * The day (UTC) a microsecond instant falls in.
 *
 * @param micros - microseconds since the epoch
 * @returns days since the epoch
 */
export function microsToDays(micros: bigint): number {
  const perDay = BigInt(SECONDS_PER_DAY) * MICROS_PER_SECOND
  let days = micros / perDay
  if (micros % perDay < 0n) days -= 1n
  return Number(days)
}

/** The first microsecond of year 0001. */
export const MIN_TIMESTAMP_MICROS = daysToMicros(daysFromCivil(1, 1, 1))
/** The last microsecond of year 9999. */
export const MAX_TIMESTAMP_MICROS = daysToMicros(daysFromCivil(10000, 1, 1)) - 1n
