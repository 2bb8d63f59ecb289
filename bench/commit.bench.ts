/**
 * Commit latency: p50 and p99 of uncontended commits, one writer, on local disk and on Azurite
 * (the Azure Blob emulator, started here as the tests start it).
 *
 * Each commit is a whole transaction: `begin()` (loading the latest snapshot), one staged `add`
 * of a small file, and `commit()` (put-if-absent of the next
 * version, plus the checkpoint every tenth version writes, as `delta.checkpointInterval` asks).
 * The staged file is never read, so no data I/O is timed.
 * The baseline is the storage floor of a commit: one put-if-absent of a commit-sized object on
 * the same store.
 */
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import type { AddFile } from '../src/protocol/actions.js'
import { commitKey } from '../src/protocol/log-files.js'
import { createAzureStore } from '../src/storage/azure-store.js'
import { createLocalStore } from '../src/storage/local-store.js'
import type { ObjectStore } from '../src/storage/object-store.js'
import { DeltaTable } from '../src/table/delta-table.js'
import {
  AZURITE_ACCOUNT,
  AZURITE_KEY,
  createAzureContainer,
  startAzurite,
  uniqueName,
} from '../test/helpers/servers.js'
import { type BenchResult, percentile, result, round, withTempDir } from './harness.js'

/**
 * Runs the commit-latency benchmarks.
 *
 * @param quick - a small smoke run
 * @returns one row per store
 */
export async function commitBenchmarks(quick: boolean): Promise<BenchResult[]> {
  const commits = quick ? 20 : 300
  const warmup = quick ? 2 : 10
  const out: BenchResult[] = []
  await withTempDir('commit', async (root) => {
    const location = join(root, 't')
    out.push(await measure('local', location, createLocalStore(location), commits, warmup))
  })
  const azurite = await startAzurite()
  try {
    await createAzureContainer(azurite.endpoint, 'bench')
    const location = `az://bench/${uniqueName('commit')}`
    const store = createAzureStore(location, {
      endpoint: azurite.endpoint,
      account: AZURITE_ACCOUNT,
      accountKey: AZURITE_KEY,
      env: {},
    })
    out.push(await measure('azurite', location, store, commits, warmup))
  } finally {
    await azurite.stop()
  }
  return out
}

async function measure(
  storeName: string,
  location: string,
  store: ObjectStore,
  commits: number,
  warmup: number,
): Promise<BenchResult> {
  const table = await DeltaTable.create(
    location,
    { schema: 'id long, value double, name string, part int' },
    { storage: store },
  )
  try {
    const whole: number[] = []
    const commitOnly: number[] = []
    const puts: number[] = []
    let body: Uint8Array | undefined
    // A commit and a bare put in turn, so that both see the same machine.
    for (let i = 0; i < warmup + commits; i++) {
      const t0 = performance.now()
      const txn = await table.begin()
      txn.stageActions([{ add: smallFile(i) }], { operation: 'WRITE' })
      const t1 = performance.now()
      const r = await txn.commit()
      const t2 = performance.now()
      body ??= new Uint8Array((await store.read(commitKey(r.version))).length).fill(32)
      const t3 = performance.now()
      await store.put(`_bench_puts/${randomUUID()}.json`, body, { ifNotExists: true })
      const t4 = performance.now()
      if (i >= warmup) {
        whole.push(t2 - t0)
        commitOnly.push(t2 - t1)
        puts.push(t4 - t3)
      }
    }
    const bodyBytes = body?.length ?? 0
    return result(
      'commit.latency',
      { store: storeName, commits },
      whole,
      'one put-if-absent of a commit-sized object',
      puts,
      {
        extra: {
          p50Ms: round(percentile(whole, 50)),
          p99Ms: round(percentile(whole, 99)),
          commitOnlyP50Ms: round(percentile(commitOnly, 50)),
          commitOnlyP99Ms: round(percentile(commitOnly, 99)),
          putP50Ms: round(percentile(puts, 50)),
          putP99Ms: round(percentile(puts, 99)),
          commitBytes: bodyBytes,
        },
      },
    )
  } finally {
    await table.close()
  }
}

function smallFile(i: number): AddFile {
  return {
    path: `part-${String(i).padStart(5, '0')}-${randomUUID()}.c000.snappy.parquet`,
    partitionValues: {},
    size: 1_024n,
    modificationTime: BigInt(Date.now()),
    dataChange: true,
    stats: JSON.stringify({
      numRecords: 10,
      minValues: { id: i * 10, value: 0, name: 'a', part: 0 },
      maxValues: { id: i * 10 + 9, value: 1, name: 'z', part: 3 },
      nullCount: { id: 0, value: 0, name: 0, part: 0 },
    }),
  }
}
