/**
 * The delay store: every call reaches the wrapped store unchanged, each request waits the
 * latency (half before the call, half after, also when the call fails), a listing is one request
 * per page, and the counters say how many requests were made. The waits are recorded by an
 * injected wait function, so nothing here depends on the clock.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { FileNotFoundError, InvalidArgumentError } from '../../src/errors/index.js'
import {
  createDelayStore,
  createLocalStore,
  createMemoryStore,
  type FileMeta,
  type ObjectStore,
} from '../../src/storage/index.js'

/** A delay store over `inner` whose waits are logged (as `wait <ms>`) next to the inner calls. */
function recorded(inner: ObjectStore, listPageSize?: number) {
  const log: string[] = []
  const watched: ObjectStore = {
    ...inner,
    read: (k, r, o) => {
      log.push(`read ${k}`)
      return inner.read(k, r, o)
    },
    put: (k, d, o) => {
      log.push(`put ${k}`)
      return inner.put(k, d, o)
    },
    head: (k, o) => {
      log.push(`head ${k}`)
      return inner.head(k, o)
    },
    delete: (k, o) => {
      log.push(`delete ${k}`)
      return inner.delete(k, o)
    },
    listFrom: (f, o) => inner.listFrom(f, o),
    listRecursive: (p, o) => inner.listRecursive(p, o),
  }
  const store = createDelayStore(watched, {
    latencyMs: 20,
    listPageSize,
    wait: async (ms) => {
      log.push(`wait ${ms}`)
    },
  })
  return { store, log }
}

async function keys(items: AsyncIterable<FileMeta>): Promise<string[]> {
  const out: string[] = []
  for await (const f of items) out.push(f.key)
  return out
}

describe('createDelayStore', () => {
  it('waits half the latency before and half after every call, and passes the call through', async () => {
    const inner = createMemoryStore('delay-calls')
    const { store, log } = recorded(inner)
    await store.put('a/x.bin', new Uint8Array([1, 2, 3]), { ifNotExists: true })
    assert.deepEqual([...(await store.read('a/x.bin', { offset: 1, length: 2 }))], [2, 3])
    assert.equal((await store.head('a/x.bin')).size, 3)
    await store.delete('a/x.bin')
    assert.deepEqual(log, [
      'wait 10',
      'put a/x.bin',
      'wait 10',
      'wait 10',
      'read a/x.bin',
      'wait 10',
      'wait 10',
      'head a/x.bin',
      'wait 10',
      'wait 10',
      'delete a/x.bin',
      'wait 10',
    ])
    await assert.rejects(inner.head('a/x.bin'), FileNotFoundError)
    assert.deepEqual(store.requests, {
      read: 1,
      head: 1,
      put: 1,
      delete: 1,
      listFrom: 0,
      listRecursive: 0,
      listTemporaryFiles: 0,
    })
    assert.equal(store.latencyMs, 20)
  })

  it('a failing call still pays the whole round trip and its error reaches the caller', async () => {
    const { store, log } = recorded(createMemoryStore('delay-fail'))
    await assert.rejects(store.read('missing.json'), FileNotFoundError)
    assert.deepEqual(log, ['wait 10', 'read missing.json', 'wait 10'])
    assert.equal(store.requests.read, 1)
  })

  it('counts a listing as one request per page, and an empty listing as one', async () => {
    const inner = createMemoryStore('delay-list')
    const names = Array.from({ length: 7 }, (_, i) => `_delta_log/${String(i).padStart(20, '0')}.json`)
    for (const k of names) await inner.put(k, new Uint8Array(1))
    const { store, log } = recorded(inner, 3)
    assert.deepEqual(await keys(store.listFrom('_delta_log/')), names)
    assert.equal(store.requests.listFrom, 3, '7 keys in pages of 3')
    assert.equal(log.filter((l) => l.startsWith('wait')).length, 6)

    store.resetRequests()
    assert.deepEqual(await keys(store.listFrom(names[1] as string)), names.slice(1))
    assert.equal(store.requests.listFrom, 2, '6 keys in pages of 3: no empty third page')

    store.resetRequests()
    assert.deepEqual(await keys(store.listFrom('nothing/')), [])
    assert.equal(store.requests.listFrom, 1)

    store.resetRequests()
    assert.equal((await keys(store.listRecursive(''))).length, 7)
    assert.equal(store.requests.listRecursive, 3)
  })

  it('a caller that stops early pays only for the pages it read', async () => {
    const inner = createMemoryStore('delay-early')
    for (let i = 0; i < 10; i++) await inner.put(`d/${i}.json`, new Uint8Array(1))
    const { store } = recorded(inner, 2)
    for await (const f of store.listFrom('d/')) {
      if (f.key === 'd/2.json') break
    }
    assert.equal(store.requests.listFrom, 2)
  })

  it('takes the latency for real with the default wait, and an aborted signal cuts it short', async () => {
    const store = createDelayStore(createMemoryStore('delay-real'), { latencyMs: 60_000 })
    const controller = new AbortController()
    const pending = store.put('k.bin', new Uint8Array(1), { signal: controller.signal })
    controller.abort()
    await assert.rejects(pending, (err: Error) => err.name === 'AbortError')
    const quick = createDelayStore(createMemoryStore('delay-real'), { latencyMs: 1 })
    await quick.put('k.bin', new Uint8Array([9]))
    assert.deepEqual([...(await quick.read('k.bin'))], [9])
  })

  it('offers localPath and listTemporaryFiles exactly when the wrapped store does', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'delta-rlc-delay-'))
    try {
      const local = createLocalStore(dir)
      const store = createDelayStore(local, { latencyMs: 0 })
      assert.equal(store.localPath?.('k.parquet'), local.localPath?.('k.parquet'))
      assert.ok(store.listTemporaryFiles)
      assert.deepEqual(await keys(store.listTemporaryFiles()), [])
      assert.equal(store.requests.listTemporaryFiles, 1)
      const memory = createDelayStore(createMemoryStore('delay-local'), { latencyMs: 0 })
      assert.equal(memory.localPath, undefined)
      assert.equal(memory.listTemporaryFiles, undefined)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('refuses a negative or non-finite latency and a page size below 1', () => {
    const inner = createMemoryStore('delay-bad')
    for (const latencyMs of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      assert.throws(() => createDelayStore(inner, { latencyMs }), InvalidArgumentError)
    }
    assert.throws(() => createDelayStore(inner, { latencyMs: 1, listPageSize: 0 }), InvalidArgumentError)
    assert.throws(() => createDelayStore(inner, { latencyMs: 1, listPageSize: 1.5 }), InvalidArgumentError)
  })
})
