/**
 * What the local store adds to the common contract: files on disk, temporary files that never
 * show, directories that are not objects, and openStore's mapping of locations to backends.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, it } from 'node:test'
import { pathToFileURL } from 'node:url'
import {
  FileAlreadyExistsError,
  FileNotFoundError,
  InvalidArgumentError,
  StorageError,
  UnsupportedError,
} from '../../src/errors/index.js'
import { createLocalStore, type ObjectStore, openStore } from '../../src/storage/index.js'
import { isLocalTempName } from '../../src/storage/local-store.js'

const enc = (s: string) => new TextEncoder().encode(s)

async function listAll(store: ObjectStore, prefix = ''): Promise<string[]> {
  const keys: string[] = []
  for await (const m of store.listRecursive(prefix)) keys.push(m.key)
  return keys.sort()
}

/** Every file name under `dir`, recursively, as relative paths. */
async function filesOnDisk(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true })
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath ?? e.path, e.name)))
    .sort()
}

describe('local store on disk', () => {
  let dir: string
  let root: string
  let store: ObjectStore

  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'delta-rlc-local-'))
    root = path.join(dir, 'table')
    store = createLocalStore(root)
  })
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true })
  })

  it('writes each key to the file at localPath, creating parent directories', async () => {
    await store.put('p=1/q=x/part-0.parquet', enc('data'), { ifNotExists: true })
    const file = store.localPath!('p=1/q=x/part-0.parquet')
    assert.equal(file, path.join(root, 'p=1', 'q=x', 'part-0.parquet'))
    assert.equal(await fs.readFile(file, 'utf8'), 'data')
    assert.equal(store.root, root)
  })

  it('leaves no temporary file behind after successful, refused and replacing puts', async () => {
    await store.put('_delta_log/0.json', enc('a'), { ifNotExists: true })
    await assert.rejects(
      store.put('_delta_log/0.json', enc('b'), { ifNotExists: true }),
      FileAlreadyExistsError,
    )
    await store.put('_delta_log/1.json', enc('c'))
    await store.put('_delta_log/1.json', enc('d'))
    assert.deepEqual(await filesOnDisk(root), ['_delta_log/0.json', '_delta_log/1.json'])
  })

  it('never lists the temporary files of in-flight puts', async () => {
    await store.put('_delta_log/0.json', enc('a'))
    await fs.writeFile(path.join(root, '_delta_log', '.1.json.0123456789abcdef.tmp'), 'partial')
    await fs.writeFile(path.join(root, '.top.tmp'), 'partial')
    const listed: string[] = []
    for await (const m of store.listFrom('_delta_log/')) listed.push(m.key)
    assert.deepEqual(listed, ['_delta_log/0.json'])
    assert.deepEqual(await listAll(store), ['_delta_log/0.json'])
  })

  it('refuses puts to names reserved for temporary files', async () => {
    for (const key of ['.x.tmp', 'dir/.part.abc.tmp']) {
      await assert.rejects(store.put(key, enc('x')), InvalidArgumentError, key)
    }
    assert.equal(isLocalTempName('.a.tmp'), true)
    assert.equal(isLocalTempName('a.tmp'), false)
    assert.equal(isLocalTempName('.crc'), false)
  })

  it('treats a directory as no object: read and head throw FileNotFoundError, delete is a no-op', async () => {
    await store.put('dir/inner', enc('x'))
    await assert.rejects(store.read('dir'), FileNotFoundError)
    await assert.rejects(store.head('dir'), FileNotFoundError)
    await store.delete('dir')
    assert.deepEqual(await listAll(store), ['dir/inner'])
  })

  it('reports a put below an existing file as a StorageError naming the path', async () => {
    await store.put('file', enc('x'))
    await assert.rejects(store.put('file/child', enc('y')), (err: unknown) => {
      assert.ok(err instanceof StorageError)
      assert.ok(err.path?.startsWith(root), err.path)
      assert.equal(err.retryable, false)
      return true
    })
  })

  it('lists a store whose root does not exist yet as empty', async () => {
    const missing = createLocalStore(path.join(dir, 'never-created'))
    assert.deepEqual(await listAll(missing), [])
    await assert.rejects(missing.head('x'), FileNotFoundError)
  })

  it('sees objects written by another store on the same directory', async () => {
    await store.put('k', enc('v'), { ifNotExists: true })
    const other = createLocalStore(root)
    await assert.rejects(other.put('k', enc('w'), { ifNotExists: true }), FileAlreadyExistsError)
    assert.equal(new TextDecoder().decode(await other.read('k')), 'v')
  })
})

describe('openStore', () => {
  it('opens a local store at the absolute path of a relative location', () => {
    const store = openStore('some/relative/table')
    assert.equal(store.root, path.resolve('some/relative/table'))
    assert.equal(typeof store.localPath, 'function')
  })

  it('opens a local store from a file:// URL', () => {
    const target = path.join(os.tmpdir(), 'a table with spaces')
    const store = openStore(pathToFileURL(target).href)
    assert.equal(store.root, target)
  })

  it('shares one memory store per name across opens', async () => {
    const name = `shared-${process.pid}-${Date.now()}`
    const a = openStore(`memory://${name}`)
    await a.put('k', enc('v'))
    const b = openStore(`memory://${name}/`)
    assert.equal(b, a)
    assert.equal(new TextDecoder().decode(await b.read('k')), 'v')
    const other = openStore(`memory://${name}-other`)
    await assert.rejects(other.read('k'), FileNotFoundError)
  })

  it('refuses schemes without a backend with UnsupportedError', () => {
    for (const location of ['ftp://host/x', 'hdfs://namenode/table', 'https://example.com/table']) {
      assert.throws(() => openStore(location), UnsupportedError, location)
    }
  })

  it('rejects empty locations, unnamed memory stores and file URLs with a host', () => {
    for (const location of ['', '  ', 'memory://', 'file://remote-host/share/table']) {
      assert.throws(() => openStore(location), InvalidArgumentError, JSON.stringify(location))
    }
  })
})
