/**
 * No commit lists the whole log: on a 5,000-commit table (checkpoints every 10 commits, as by
 * default), a commit through the public API (begin, one staged append, commit) lists a handful of
 * keys, never from before the version the table had read or the newest checkpoint, whether the
 * table's snapshot is current or another writer committed meanwhile. A store wrapper counts every listed key; it runs on the
 * local store (new commits found by probing names) and the memory store (listing from a key).
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { serializeCommit } from '../../src/protocol/action-json.js'
import { commitKey, LOG_DIR } from '../../src/protocol/log-files.js'
import { createLocalStore } from '../../src/storage/local-store.js'
import { createMemoryStore } from '../../src/storage/memory-store.js'
import type { ObjectStore } from '../../src/storage/object-store.js'
import { passThroughStore } from '../../src/storage/pass-through-store.js'
import { DeltaTable } from '../../src/table/delta-table.js'
import { mapLimit } from '../../src/util/map-limit.js'

const COMMITS = 5_000
/** Where the newest checkpoint is: a few commits after it, as on a live table. */
const CHECKPOINT = 4_995n

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

interface Counts {
  listedKeys: number
  listings: string[]
}

/** The store, counting every key its listings yield and where each listing started. */
function counting(inner: ObjectStore, counts: Counts): ObjectStore {
  return {
    ...passThroughStore(inner),
    async *listFrom(from, opts) {
      counts.listings.push(from)
      for await (const meta of inner.listFrom(from, opts)) {
        counts.listedKeys++
        yield meta
      }
    },
    async *listRecursive(prefix, opts) {
      counts.listings.push(`${prefix}**`)
      for await (const meta of inner.listRecursive(prefix, opts)) {
        counts.listedKeys++
        yield meta
      }
    },
  }
}

/** Commits 1..COMMITS-1 written directly (one add each), then a checkpoint at CHECKPOINT. */
async function buildLongLog(store: ObjectStore, location: string): Promise<void> {
  const created = await DeltaTable.create(
    location,
    { schema: 'id long' },
    { storage: store, autoCheckpoint: false },
  )
  await created.close()
  const encoder = new TextEncoder()
  const versions = Array.from({ length: COMMITS - 1 }, (_, i) => i + 1)
  await mapLimit(versions, 32, async (v) => {
    const body = serializeCommit([
      { commitInfo: { timestamp: BigInt(Date.now()), operation: 'WRITE', readVersion: BigInt(v - 1) } },
      {
        add: {
          path: `synthetic-${v}.parquet`,
          partitionValues: {},
          size: 500n,
          modificationTime: BigInt(Date.now()),
          dataChange: true,
          stats: '{"numRecords":1}',
        },
      },
    ])
    await store.put(commitKey(BigInt(v)), encoder.encode(body), { ifNotExists: true })
  })
  const table = await DeltaTable.open(location, { storage: store })
  try {
    await table.checkpoint({ version: CHECKPOINT })
  } finally {
    await table.close()
  }
}

/**
 * At most 50 keys listed, by at most `maxListings` listings, none starting before `floor` (a
 * version: the newest checkpoint, or the version the table had already read).
 */
function assertFewKeys(counts: Counts, what: string, floor: bigint, maxListings: number): void {
  const shown = counts.listings.join(', ')
  assert.ok(counts.listedKeys <= 50, `${what} listed ${counts.listedKeys} keys: ${shown}`)
  assert.ok(
    counts.listings.length <= maxListings,
    `${what} made ${counts.listings.length} listings: ${shown}`,
  )
  const start = `${LOG_DIR}${String(floor).padStart(20, '0')}`
  for (const from of counts.listings) {
    assert.ok(
      from.startsWith(LOG_DIR) && from >= start,
      `${what} listed from ${from}, before version ${floor}`,
    )
  }
}

for (const backend of ['local', 'memory'] as const) {
  describe(`a commit on a ${COMMITS}-commit table (${backend} store)`, () => {
    it('lists O(1) keys, never from before the newest checkpoint, also after another writer committed', async () => {
      let store: ObjectStore
      let location: string
      if (backend === 'local') {
        location = await mkdtemp(join(tmpdir(), 'delta-rlc-commit-listing-'))
        roots.push(location)
        store = createLocalStore(location)
      } else {
        location = `memory://commit-listing-${process.pid}`
        store = createMemoryStore(location)
      }
      await buildLongLog(store, location)

      const counts: Counts = { listedKeys: 0, listings: [] }
      const table = await DeltaTable.open(location, { storage: counting(store, counts) })
      const other = await DeltaTable.open(location, { storage: store })
      try {
        counts.listedKeys = 0
        counts.listings.length = 0
        const first = await table.append([{ id: 1n }])
        assert.equal(first.version, BigInt(COMMITS))
        // Local disk: new commits are found by their names, no listing at all. Elsewhere two
        // listings from the version the table had read: begin, and the checkpoint version 5000
        // gets after the commit.
        assertFewKeys(counts, 'the first commit', BigInt(COMMITS - 1), backend === 'local' ? 0 : 2)

        // Another writer's commits (one of them at a checkpoint version) land in between.
        for (let i = 0; i < 12; i++) await other.append([{ id: 100n + BigInt(i) }])
        counts.listedKeys = 0
        counts.listings.length = 0
        const txn = await table.begin()
        assert.equal(txn.readVersion, BigInt(COMMITS + 12))
        await txn.append([{ id: 2n }])
        const second = await txn.commit()
        assert.equal(second.version, BigInt(COMMITS + 13))
        // The other writer checkpointed version 5010: a listing from there (local disk: named by
        // the _last_checkpoint hint), or from the version the table had read.
        assertFewKeys(
          counts,
          'the commit after another writer',
          backend === 'local' ? BigInt(COMMITS + 10) : BigInt(COMMITS - 1),
          1,
        )

        // The table state the commits built is the one a fresh open reads.
        const fresh = await DeltaTable.open(location, { storage: store })
        try {
          assert.equal((await fresh.snapshot()).activeFiles().length, COMMITS - 1 + 14)
        } finally {
          await fresh.close()
        }
      } finally {
        await other.close()
        await table.close()
      }
    })
  })
}
