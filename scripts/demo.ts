/**
 * `npm run demo`: row-level concurrency on a local table, side by side with file-level Delta.
 *
 * Eight writers each begin a transaction on the same snapshot and delete a disjoint set of keys
 * (all living in the same data files), then commit one after the other. With file-level
 * conflict checking every writer after the first aborts; with row-level reconciliation all of
 * them commit, and the table holds exactly the expected rows.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DeltaTable, isDeltaError } from '../src/index.js'

const WRITERS = 8
const ROWS = 100_000

async function run(
  conflicts: 'none' | 'all',
): Promise<{ committed: number; aborted: Record<string, number>; rows: number; ms: number }> {
  const root = await mkdtemp(join(tmpdir(), 'delta-rlc-demo-'))
  const dir = join(root, 'orders')
  const table = await DeltaTable.create(
    dir,
    {
      schema: 'id long not null, customer string, amount double',
      properties: { 'delta.enableDeletionVectors': 'true' },
    },
    { conflicts },
  )
  try {
    const rows = Array.from({ length: ROWS }, (_, i) => ({
      id: BigInt(i),
      customer: `c${i % 997}`,
      amount: (i % 500) / 10,
    }))
    await table.append(rows)
    const t0 = performance.now()
    const txns = await Promise.all(Array.from({ length: WRITERS }, () => table.begin()))
    // Writer w deletes the ids congruent to w modulo 1000: disjoint rows, the same files.
    await Promise.all(txns.map((t, w) => t.delete(`id % 1000 = ${w}`)))
    let committed = 0
    const aborted: Record<string, number> = {}
    for (const t of txns) {
      try {
        await t.commit()
        committed++
      } catch (err) {
        if (!isDeltaError(err)) throw err
        aborted[err.code] = (aborted[err.code] ?? 0) + 1
      }
    }
    const ms = performance.now() - t0
    const live = await table.scan().count()
    const expected = ROWS - committed * (ROWS / 1000)
    if (live !== expected) throw new Error(`verification failed: ${live} rows, expected ${expected}`)
    return { committed, aborted, rows: live, ms }
  } finally {
    await table.close()
    await rm(root, { recursive: true, force: true })
  }
}

console.log(
  `delta-rlc demo: ${WRITERS} concurrent DELETE writers on disjoint keys of one ${ROWS}-row table\n`,
)
const off = await run('none')
const on = await run('all')
const fmt = (r: typeof off) =>
  `${String(r.committed).padStart(9)}  ${String(WRITERS - r.committed).padStart(7)}  ${String(r.rows).padStart(10)}  ${
    Object.entries(r.aborted)
      .map(([k, v]) => `${k} x${v}`)
      .join(', ') || '-'
  }`
console.log('conflict checking          committed  aborted   live rows  abort codes')
console.log(`file-level (open source)   ${fmt(off)}`)
console.log(`row-level (delta-rlc)      ${fmt(on)}`)
console.log('\nBoth tables were verified: live rows = initial rows - rows deleted by committed writers.')
