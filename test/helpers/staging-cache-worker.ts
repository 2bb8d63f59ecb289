/**
 * A process that hammers a shared staging cache: it acquires objects of a "remote" store (a local
 * directory seen without its local paths, so every read goes through the cache), checks each
 * staged file byte for byte against the source, and releases it. Run as
 * `node --import tsx staging-cache-worker.ts <cacheDir> <storeDir> <maxBytes> <rounds> <seed>`;
 * it prints one JSON line: `{ acquisitions, mismatches, errors }`.
 */
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { createStagingCache } from '../../src/engine-default/staging-cache.js'
import { createLocalStore, type ObjectStore, passThroughStore } from '../../src/storage/index.js'

/** What one worker saw. */
export interface CacheWorkerReport {
  readonly acquisitions: number
  /** Staged files whose bytes differed from the source (a partial or wrong file). */
  readonly mismatches: number
  readonly errors: readonly string[]
}

/**
 * A store that behaves like a remote one over a local directory: every call goes to the local
 * store, but it offers no `localPath`, so the data plane stages its objects.
 *
 * @param store - a local store
 * @returns the same objects without local paths
 */
export function remoteView(store: ObjectStore): ObjectStore {
  const { localPath: _localPath, ...calls } = passThroughStore(store)
  return { ...calls, root: `remote-view:${store.root}` }
}

async function main(): Promise<void> {
  const [cacheDir, storeDir, maxBytes, rounds, seed] = process.argv.slice(2)
  const local = createLocalStore(storeDir as string)
  const store = remoteView(local)
  const cache = createStagingCache({ dir: cacheDir, maxBytes: Number(maxBytes) })
  const keys: string[] = []
  for await (const f of local.listRecursive('')) keys.push(f.key)
  keys.sort()
  let state = Number(seed) || 1
  const next = () => {
    state = (state * 48271) % 2147483647
    return state
  }
  let acquisitions = 0
  let mismatches = 0
  const errors: string[] = []
  for (let r = 0; r < Number(rounds); r++) {
    // Two overlapping acquisitions at a time, so that this process also pins while it fills.
    const pick = [keys[next() % keys.length] as string, keys[next() % keys.length] as string]
    await Promise.all(
      pick.map(async (key) => {
        try {
          const staged = await cache.acquire(store, key)
          acquisitions++
          try {
            const [got, want] = await Promise.all([readFile(staged.path), local.read(key)])
            if (!Buffer.from(want).equals(got)) mismatches++
          } finally {
            await staged.release()
          }
        } catch (err) {
          errors.push(err instanceof Error ? `${err.name}: ${err.message}` : String(err))
        }
      }),
    )
  }
  const report: CacheWorkerReport = { acquisitions, mismatches, errors }
  process.stdout.write(`${JSON.stringify(report)}\n`)
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  await main()
}
