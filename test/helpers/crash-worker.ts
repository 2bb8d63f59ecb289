/**
 * A writer process for the crash-safety test. It commits operations `seq = start, start+1, ...`
 * on a table, each marked with the idempotency marker `txn(appId, seq)`, and kills itself with
 * SIGKILL at a chosen point of a chosen commit: before or after a data file put, after the DV
 * file put, or just before or after the log put. Each acknowledged commit is printed as
 * `ACK <seq> <version>` once `commit()` has returned.
 *
 * Operation `seq`: even -> append ids seq*10 .. seq*10+9; odd -> delete ids (seq-1)*10 .. +4
 * (rows the previous operation appended, if it landed).
 *
 * The test runs it bundled to CommonJS through `code-cache-loader.ts`, so it has no top-level await.
 */
import { createLocalStore, openStore, passThroughStore } from '../../src/storage/index.js'
import type { ObjectStore } from '../../src/storage/object-store.js'
import { DeltaTable } from '../../src/table/delta-table.js'

const [dir = '', appId = '', startArg = '0', countArg = '1', phase = 'none', nthArg = '1'] =
  process.argv.slice(2)
const start = Number(startArg)
const count = Number(countArg)
const nth = Number(nthArg)

function kindOf(key: string): 'data' | 'dv' | 'log' | 'other' {
  if (key.endsWith('.parquet') && !key.startsWith('_delta_log/')) return 'data'
  if (key.startsWith('deletion_vector_')) return 'dv'
  if (/^_delta_log\/\d{20}\.json$/.test(key)) return 'log'
  return 'other'
}

/** Kills this process at the n-th put of the chosen phase. */
function killingStore(inner: ObjectStore): ObjectStore {
  const seen = { data: 0, dv: 0, log: 0, other: 0 }
  const die = () => process.kill(process.pid, 'SIGKILL')
  return {
    ...passThroughStore(inner),
    async put(key, data, opts) {
      const kind = kindOf(key)
      seen[kind]++
      const hit = (want: string) => phase === want && seen[kind] === nth
      if (kind === 'data' && hit('before-data')) die()
      if (kind === 'log' && hit('before-log')) die()
      await inner.put(key, data, opts)
      if (kind === 'data' && hit('after-data')) die()
      if (kind === 'dv' && hit('after-dv')) die()
      if (kind === 'log' && hit('after-log')) die()
    },
  }
}

/** Commits the operations; the caller exits on a failure (top-level await is not CommonJS). */
async function main(): Promise<void> {
  const table = await DeltaTable.open(dir, {
    // A remote location (gs://, az://) reaches its server through the environment's settings.
    storage: killingStore(dir.includes('://') ? openStore(dir) : createLocalStore(dir)),
    autoCheckpoint: true,
  })
  for (let seq = start; seq < start + count; seq++) {
    const txn = await table.begin()
    const recorded = txn.setTransaction(appId, seq)
    if (recorded !== undefined && recorded >= BigInt(seq)) continue
    if (seq % 2 === 0) {
      await txn.append(Array.from({ length: 10 }, (_, i) => ({ id: BigInt(seq * 10 + i), seq })))
    } else {
      await txn.delete(`id >= ${(seq - 1) * 10} AND id < ${(seq - 1) * 10 + 5}`)
    }
    const r = await txn.commit()
    process.stdout.write(`ACK ${seq} ${r.version}\n`)
  }
  await table.close()
}

main().catch((err: unknown) => {
  console.error(err)
  process.exit(1)
})
