/**
 * Civil dates and day numbers (days since 1970-01-01) in the proleptic Gregorian calendar that
 * Delta and Spark 3 use, for any year: the conversions the partition values and the predicate
 * literals share, each of which bounds the years it accepts itself.
 */

/**
 * Days since the epoch of a civil date (proleptic Gregorian).
 *
 * @param year - full year
 * @param month - 1..12
 * @param day - 1..31
 * @returns days since 1970-01-01 (negative before it)
 */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year
  const era = Math.floor(y / 400)
  const yoe = y - era * 400
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
}

/**
 * The civil date of a day number.
 *
 * @param days - days since 1970-01-01
 * @returns `[year, month, day]`
 */
export function civilFromDays(days: number): [number, number, number] {
  const z = days + 719468
  const era = Math.floor(z / 146097)
  const doe = z - era * 146097
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365,
  )
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1
  const month = mp < 10 ? mp + 3 : mp - 9
  return [yoe + era * 400 + (month <= 2 ? 1 : 0), month, day]
}
