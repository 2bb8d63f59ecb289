/**
 * Seeded random numbers for the race. Every choice (keys, values, operation kinds, fault moments)
 * is drawn from a stream named by integers, so a writer process, a restarted writer and the
 * verifier all derive the same operation from the same (seed, writer, sequence number).
 */

/** A deterministic source of numbers in [0, 1). */
export interface Random {
  /** The next number in [0, 1). */
  next(): number
  /**
   * An integer in [0, n).
   *
   * @param n - the exclusive upper bound, at least 1
   */
  int(n: number): number
}

/**
 * A random stream named by `parts` (for example seed, writer, sequence number, purpose).
 *
 * @param parts - integers naming the stream; different lists give independent streams
 * @returns the stream
 */
export function seededRandom(...parts: readonly number[]): Random {
  let state = 0x811c9dc5
  for (const p of parts) {
    // Mix both 32-bit halves so that large seeds and sequence numbers stay distinct.
    state = Math.imul(state ^ (p >>> 0), 0x01000193) >>> 0
    state = Math.imul(state ^ (Math.floor(p / 2 ** 32) >>> 0), 0x01000193) >>> 0
    state = (state ^ (state >>> 15)) >>> 0
  }
  const next = (): number => {
    // mulberry32
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return { next, int: (n) => Math.min(n - 1, Math.floor(next() * n)) }
}
