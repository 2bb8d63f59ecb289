/**
 * A writer's `begin()` on Azure is one store request in the steady state: the snapshot advance
 * lists the block of ten versions that holds its own last commit, the next version and any newer
 * checkpoint by name prefix, instead of probing the next commit and reading the
 * `_last_checkpoint` hint. Runs against Azurite, through a delay store without delay that counts
 * the requests (a prefix listing counts as a `listFrom`); another writer's commits and checkpoint
 * in between are still seen, in that same listing.
 */
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import type { AddFile } from '../../src/protocol/actions.js'
import { createAzureStore } from '../../src/storage/azure-store.js'
import { createDelayStore, type DelayStoreRequests } from '../../src/storage/delay-store.js'
import type { ObjectStore } from '../../src/storage/object-store.js'
import { DeltaTable } from '../../src/table/delta-table.js'
import {
  AZURITE_ACCOUNT,
  AZURITE_KEY,
  createAzureContainer,
  startAzurite,
  type TestServer,
  uniqueName,
} from '../helpers/servers.js'

let azurite: TestServer | undefined
before(async () => {
  azurite = await startAzurite()
  await createAzureContainer(azurite.endpoint, 'begin')
})
after(() => azurite?.stop())

function azureStore(location: string): ObjectStore {
  return createAzureStore(location, {
    endpoint: (azurite as TestServer).endpoint,
    account: AZURITE_ACCOUNT,
    accountKey: AZURITE_KEY,
    env: {},
  })
}

function fileAdd(name: string): AddFile {
  return {
    path: `${name}-${randomUUID()}.parquet`,
    partitionValues: {},
    size: 1_024n,
    modificationTime: BigInt(Date.now()),
    dataChange: true,
    stats: '{"numRecords":10}',
  }
}

/** The requests of every kind, as one object with the zero counts left out. */
function made(r: DelayStoreRequests): Record<string, number> {
  return Object.fromEntries(Object.entries(r).filter(([, n]) => n > 0))
}

describe('begin() on Azure', () => {
  it('makes one request per commit in the steady state, and still sees other writers', async () => {
    const location = `az://begin/${uniqueName('t')}`
    const created = await DeltaTable.create(
      location,
      { schema: 'id long' },
      { storage: azureStore(location) },
    )
    await created.close()
    const store = createDelayStore(azureStore(location), { latencyMs: 0 })
    const table = await DeltaTable.open(location, { storage: store })
    const other = await DeltaTable.open(location, { storage: azureStore(location) })
    try {
      const begins: Record<string, number>[] = []
      const commitOnce = async (name: string) => {
        store.resetRequests()
        const txn = await table.begin()
        begins.push(made(store.requests))
        txn.stageActions([{ add: fileAdd(name) }], { operation: 'WRITE' })
        return (await txn.commit()).version
      }
      // Versions 1..14: version 10 gets a checkpoint (the default interval). The begin()s of
      // versions 10 and 11 look at versions from 0 (no checkpoint yet) to 10 or 11, across two
      // blocks of ten names, so they probe and read the hint (and the checkpoint) as before.
      for (let i = 1; i <= 14; i++) assert.equal(await commitOnce(`own-${i}`), BigInt(i))
      const shown = JSON.stringify(begins)
      begins.forEach((b, i) => {
        const version = i + 1
        if (version === 10 || version === 11) assert.equal(b.listFrom, undefined, shown)
        else assert.deepEqual(b, { listFrom: 1 }, shown)
      })

      // Another writer commits 15..18 and checkpoints 17: one listing sees them all.
      for (let i = 15; i <= 18; i++) {
        const txn = await other.begin()
        txn.stageActions([{ add: fileAdd(`other-${i}`) }], { operation: 'WRITE' })
        assert.equal((await txn.commit()).version, BigInt(i))
      }
      await other.checkpoint({ version: 17n })
      store.resetRequests()
      const txn = await table.begin()
      assert.equal(txn.readVersion, 18n)
      assert.equal(store.requests.listFrom, 1, JSON.stringify(made(store.requests)))
      txn.stageActions([{ add: fileAdd('own-19') }], { operation: 'WRITE' })
      assert.equal((await txn.commit()).version, 19n)

      const fresh = await DeltaTable.open(location, { storage: azureStore(location) })
      try {
        const snap = await fresh.snapshot()
        assert.equal(snap.version, 19n)
        assert.equal(snap.activeFiles().length, 19)
        assert.deepEqual(
          snap
            .activeFiles()
            .map((f) => f.path)
            .sort(),
          (await table.snapshot())
            .activeFiles()
            .map((f) => f.path)
            .sort(),
        )
      } finally {
        await fresh.close()
      }
    } finally {
      await other.close()
      await table.close()
    }
  })
})
