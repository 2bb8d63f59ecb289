/**
 * The store-wrapper base: every call reaches the wrapped store, and `localPath` is offered
 * exactly when the wrapped store offers it (the data plane reads such files in place).
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { createLocalStore, createMemoryStore, passThroughStore } from '../../src/storage/index.js'

describe('passThroughStore', () => {
  it('passes every call to the wrapped store', async () => {
    const inner = createMemoryStore('pass')
    const store = passThroughStore(inner)
    await store.put('a/x.bin', new Uint8Array([1, 2, 3]), { ifNotExists: true })
    assert.deepEqual([...(await inner.read('a/x.bin'))], [1, 2, 3])
    assert.deepEqual([...(await store.read('a/x.bin', { offset: 1, length: 2 }))], [2, 3])
    assert.equal((await store.head('a/x.bin')).size, 3)
    const listed: string[] = []
    for await (const f of store.listFrom('a/')) listed.push(f.key)
    for await (const f of store.listRecursive('')) listed.push(f.key)
    assert.deepEqual(listed, ['a/x.bin', 'a/x.bin'])
    await store.delete('a/x.bin')
    await assert.rejects(inner.head('a/x.bin'))
    assert.equal(store.root, inner.root)
    assert.equal(store.localPath, undefined)
  })

  it('offers localPath exactly when the wrapped store does', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'delta-rlc-pass-'))
    try {
      const inner = createLocalStore(dir)
      assert.ok(inner.localPath, 'a local store offers localPath')
      assert.equal(passThroughStore(inner).localPath?.('k.parquet'), inner.localPath?.('k.parquet'))
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
