/**
 * Commit latency: p50 and p99 of uncontended commits, one writer, on tables whose log is already
 * 10, 1k, 10k or 100k commits long, on local disk and on Azurite (the Azure Blob emulator,
 * started here as the tests start it).
 *
 * Each commit is a whole transaction through the public API: `begin()` (which brings the
 * table's snapshot to the latest version), one staged `add` of a small file, and `commit()`
 * (put-if-absent of the next version, plus the checkpoint every tenth version writes, as the
 * default `delta.checkpointInterval` asks). The staged file is never read, so no data I/O is
 * timed. The table is opened once, untimed, as a long-lived writer holds it.
 *
 * The long logs are written directly (the synthetic log of `snapshot.bench.ts`: about three
 * quarters of the added files stay active, so a 100k-commit table has 75k active files), with a
 * checkpoint where the default interval leaves the last one, at most nine commits back.
 *
 * The baseline is the storage floor of a commit: one put-if-absent of a commit-sized object on
 * the same store, alternating with the commits. The store is wrapped in a delay store with no
 * delay, only to count the requests each commit makes (a listing counts one per page of 1,000).
 *
 * `DELTA_RLC_COMMIT_BENCH_STORES=azurite DELTA_RLC_COMMIT_BENCH_LENGTHS=10` runs one row alone.
 */
import { randomUUID } from 'node:crypto'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { AddFile } from '../src/protocol/actions.js'
import { commitKey } from '../src/protocol/log-files.js'
import { createAzureStore } from '../src/storage/azure-store.js'
import { createDelayStore, type DelayStoreRequests } from '../src/storage/delay-store.js'
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
import { writeSyntheticCommits } from './snapshot.bench.js'

const encoder = new TextEncoder()

/**
 * Runs the commit-latency benchmarks.
 *
 * @param quick - a small smoke run
 * @returns one row per store and log length
 */
export async function commitBenchmarks(quick: boolean): Promise<BenchResult[]> {
  const localLengths = selected('local', quick ? [10, 300] : [10, 1_000, 10_000, 100_000])
  const azureLengths = selected('azurite', quick ? [10] : [10, 10_000])
  const out: BenchResult[] = []
  for (const length of localLengths) {
    await withTempDir('commit', async (root) => {
      const location = join(root, 't')
      const store = createLocalStore(location)
      const logDir = join(location, '_delta_log')
      await mkdir(logDir, { recursive: true })
      const genMs = await buildLog(location, store, length, (name, body) =>
        writeFile(join(logDir, name), body),
      )
      out.push(await measure('local', location, store, length, genMs, quick))
    })
  }
  if (azureLengths.length === 0) {
    appendGrowth(out)
    return out
  }
  const azurite = await startAzurite()
  try {
    await createAzureContainer(azurite.endpoint, 'bench')
    for (const length of azureLengths) {
      const location = `az://bench/${uniqueName('commit')}`
      const store = createAzureStore(location, {
        endpoint: azurite.endpoint,
        account: AZURITE_ACCOUNT,
        accountKey: AZURITE_KEY,
        env: {},
      })
      const genMs = await buildLog(location, store, length, (name, body) =>
        store.put(`_delta_log/${name}`, encoder.encode(body)),
      )
      out.push(await measure('azurite', location, store, length, genMs, quick))
    }
  } finally {
    await azurite.stop()
  }
  appendGrowth(out)
  return out
}

/**
 * The log lengths to run on a store: all of `lengths`, or those the environment selects:
 * `DELTA_RLC_COMMIT_BENCH_STORES` (comma-separated `local`, `azurite`) and
 * `DELTA_RLC_COMMIT_BENCH_LENGTHS` (comma-separated lengths), e.g. only Azurite's 10-commit log.
 */
function selected(store: 'local' | 'azurite', lengths: readonly number[]): number[] {
  const stores = process.env.DELTA_RLC_COMMIT_BENCH_STORES?.split(',')
  const only = process.env.DELTA_RLC_COMMIT_BENCH_LENGTHS?.split(',').map(Number)
  if (stores !== undefined && !stores.includes(store)) return []
  return lengths.filter((n) => only === undefined || only.includes(n))
}

/** Timed commits at a log length: many where a commit is cheap, fewer where it may not be. */
function commitsAt(length: number, quick: boolean): number {
  if (quick) return 10
  return length >= 100_000 ? 40 : length >= 10_000 ? 100 : 200
}

/**
 * Writes a synthetic log of `length` commits with a checkpoint where an interval of 10 leaves
 * the last one (none for a log shorter than 11 commits).
 *
 * @returns how long it took, ms
 */
async function buildLog(
  location: string,
  store: ObjectStore,
  length: number,
  put: (name: string, body: string) => Promise<unknown>,
): Promise<number> {
  const t0 = performance.now()
  const last = length - 1
  const cpVersion = last - (last % 10)
  if (cpVersion === 0) {
    await writeSyntheticCommits(put, 0, length, length)
  } else {
    // The log up to the checkpoint version, its checkpoint through the engine, then the rest.
    await writeSyntheticCommits(put, 0, cpVersion + 1, length)
    const table = await DeltaTable.open(location, { storage: store })
    try {
      await table.checkpoint()
    } finally {
      await table.close()
    }
    await writeSyntheticCommits(put, cpVersion + 1, length, length)
  }
  return performance.now() - t0
}

async function measure(
  storeName: string,
  location: string,
  inner: ObjectStore,
  logLength: number,
  genMs: number,
  quick: boolean,
): Promise<BenchResult> {
  const commits = commitsAt(logLength, quick)
  const warmup = quick ? 2 : 5
  // No delay: the wrapper only counts the requests of each commit.
  const store = createDelayStore(inner, { latencyMs: 0 })
  const table = await DeltaTable.open(location, { storage: store })
  try {
    const whole: number[] = []
    const beginOnly: number[] = []
    const commitOnly: number[] = []
    const puts: number[] = []
    const requests: number[] = []
    const listings: number[] = []
    let body: Uint8Array | undefined
    // A commit and a bare put in turn, so that both see the same machine.
    for (let i = 0; i < warmup + commits; i++) {
      store.resetRequests()
      const t0 = performance.now()
      const txn = await table.begin()
      const tb = performance.now()
      txn.stageActions([{ add: smallFile(i) }], { operation: 'WRITE' })
      const t1 = performance.now()
      const r = await txn.commit()
      const t2 = performance.now()
      const made = store.requests
      body ??= new Uint8Array((await inner.read(commitKey(r.version))).length).fill(32)
      const t3 = performance.now()
      await inner.put(`_bench_puts/${randomUUID()}.json`, body, { ifNotExists: true })
      const t4 = performance.now()
      if (i >= warmup) {
        whole.push(t2 - t0)
        beginOnly.push(tb - t0)
        commitOnly.push(t2 - t1)
        puts.push(t4 - t3)
        requests.push(total(made))
        listings.push(made.listFrom + made.listRecursive)
      }
    }
    return result(
      'commit.latency',
      { store: storeName, logLength, commits },
      whole,
      'one put-if-absent of a commit-sized object',
      puts,
      {
        sizeParameter: 'logLength',
        family: `commit.latency ${storeName}`,
        extra: {
          p50Ms: round(percentile(whole, 50)),
          p99Ms: round(percentile(whole, 99)),
          beginP50Ms: round(percentile(beginOnly, 50)),
          commitOnlyP50Ms: round(percentile(commitOnly, 50)),
          commitOnlyP99Ms: round(percentile(commitOnly, 99)),
          putP50Ms: round(percentile(puts, 50)),
          putP99Ms: round(percentile(puts, 99)),
          requestsP50: percentile(requests, 50),
          requestsMax: percentile(requests, 100),
          listRequestsP50: percentile(listings, 50),
          commitBytes: body?.length ?? 0,
          logGenerationMs: Math.round(genMs),
        },
      },
    )
  } finally {
    await table.close()
  }
}

function total(r: DelayStoreRequests): number {
  return r.read + r.head + r.put + r.delete + r.listFrom + r.listRecursive + r.listTemporaryFiles
}

/**
 * Adds to every row the growth exponent of its p50 from the shortest log of its store:
 * log(p50 / p50 at the shortest) / log(length / shortest length); 0 means flat.
 */
function appendGrowth(rows: BenchResult[]): void {
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i] as BenchResult
    const first = rows.find((r) => r.parameters.store === row.parameters.store)
    if (first === undefined || first === row) continue
    const ratio = Number(row.parameters.logLength) / Number(first.parameters.logLength)
    const growth = Math.log(row.medianMs / first.medianMs) / Math.log(ratio)
    rows[i] = { ...row, extra: { ...row.extra, growthFromShortest: round(growth) } }
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
