import type { RowIdLookup, RowIdLookupAnswer } from '../conflict/fetched-facts.js'
import type { Engine } from '../engine/engine.js'
import { isDeltaError } from '../errors/index.js'
import { decodeAddPath } from '../protocol/partition-values.js'

/**
 * Answers the conflict checker's row-id lookups (Case 5b) through the data plane, one query per
 * lookup over the materialized row-id column of its files. A lookup still running after its
 * `maxMillis` is stopped and answered `timed-out` (a budget of design beyond-rlc 7.6); one that
 * fails with a library error, or names a file outside the table root, is left out, which makes
 * Case 5b refuse. Cancelling `signal` cancels the lookups and is thrown.
 *
 * @param engine - the engine
 * @param lookups - the lookups
 * @param signal - cancels the lookups
 * @returns the answers by lookup key
 */
export async function loadRowIdLookups(
  engine: Engine,
  lookups: readonly RowIdLookup[],
  signal: AbortSignal | undefined,
): Promise<ReadonlyMap<string, RowIdLookupAnswer>> {
  const answers = new Map<string, RowIdLookupAnswer>()
  for (const lookup of lookups) {
    const answer = await lookUp(engine, lookup, signal)
    if (answer !== undefined) answers.set(lookup.key, answer)
  }
  return answers
}

async function lookUp(
  engine: Engine,
  lookup: RowIdLookup,
  signal: AbortSignal | undefined,
): Promise<RowIdLookupAnswer | undefined> {
  const keys: string[] = []
  for (const f of lookup.files) {
    const decoded = decodeAddPath(f.path)
    if (decoded.kind !== 'relative') return undefined
    keys.push(decoded.key)
  }
  // No bound (0): only the caller's signal stops the search.
  const timer = lookup.maxMillis > 0 ? AbortSignal.timeout(lookup.maxMillis) : new AbortController().signal
  const both = signal === undefined ? timer : AbortSignal.any([signal, timer])
  try {
    const query = engine.data.locateRowIds({
      files: keys.map((key) => ({ key, partitionValues: {} })),
      rowIdColumn: lookup.rowIdColumn,
      ids: lookup.ids,
      signal: both,
    })
    // A query the engine cannot interrupt still loses the race: its late answer is dropped.
    query.catch(() => undefined)
    const found = await Promise.race([
      query,
      new Promise<never>((_, reject) => {
        if (both.aborted) reject(both.reason)
        both.addEventListener('abort', () => reject(both.reason), { once: true })
      }),
    ])
    const files = new Map<string, { positions: readonly number[]; ids: readonly bigint[] }>()
    lookup.files.forEach((f, i) => {
      const hit = found.files[i]
      if (hit !== undefined && hit.positions.length > 0)
        files.set(f.path, { positions: hit.positions, ids: hit.ids })
    })
    return Object.freeze({ kind: 'found', files, nullRows: found.nullRows })
  } catch (err) {
    signal?.throwIfAborted()
    if (timer.aborted) return Object.freeze({ kind: 'timed-out', maxMillis: lookup.maxMillis })
    if (!isDeltaError(err)) throw err
    return undefined
  }
}
