/**
 * The local store and symbolic links: a link that resolves inside the root is an ordinary path,
 * one that leads out of the root is refused for reads, heads, puts and deletes before anything
 * outside is touched. And the store's own abandoned temporary files, which only
 * `listTemporaryFiles` reports, by their exact name form.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, it } from 'node:test'
import { isDeltaError } from '../../src/errors/index.js'
import { createLocalStore, type ObjectStore, passThroughStore } from '../../src/storage/index.js'
import { isPutTempFileName } from '../../src/storage/local-store.js'

const enc = (s: string) => new TextEncoder().encode(s)
const dec = (b: Uint8Array) => new TextDecoder().decode(b)

/** A refusal to go through a link out of the root. */
function isEscape(err: unknown): boolean {
  return (
    isDeltaError(err, 'DELTA_STORAGE_ERROR') &&
    /outside the table root/.test((err as Error).message) &&
    (err as { retryable?: boolean }).retryable === false
  )
}

async function temporaryKeys(store: ObjectStore): Promise<string[]> {
  const keys: string[] = []
  for await (const m of store.listTemporaryFiles?.() ?? []) keys.push(m.key)
  return keys.sort()
}

describe('local store and symbolic links', () => {
  let base: string
  let root: string
  let outside: string

  beforeEach(async () => {
    base = await fs.mkdtemp(path.join(os.tmpdir(), 'delta-rlc-links-'))
    root = path.join(base, 'table')
    outside = path.join(base, 'elsewhere')
    await fs.mkdir(root)
    await fs.mkdir(outside)
  })
  afterEach(async () => {
    await fs.rm(base, { recursive: true, force: true })
  })

  it('refuses a put through a linked directory that leads out of the root, creating nothing there', async () => {
    await fs.symlink(outside, path.join(root, 'part=1'))
    const store = createLocalStore(root)
    await assert.rejects(store.put('part=1/a.parquet', enc('x')), isEscape)
    await assert.rejects(store.put('part=1/sub/deeper/a.parquet', enc('x')), isEscape)
    await assert.rejects(store.put('part=1/b.parquet', enc('x'), { ifNotExists: true }), isEscape)
    assert.deepEqual(await fs.readdir(outside), [], 'no file and no directory was created outside')
  })

  it('refuses to read or head a file linked from outside the root', async () => {
    await fs.writeFile(path.join(outside, 'secret.parquet'), 'outside bytes')
    await fs.symlink(path.join(outside, 'secret.parquet'), path.join(root, 'data.parquet'))
    await fs.symlink(outside, path.join(root, 'part=2'))
    const store = createLocalStore(root)
    await assert.rejects(store.read('data.parquet'), isEscape)
    await assert.rejects(store.read('data.parquet', { offset: 0, length: 3 }), isEscape)
    await assert.rejects(store.head('data.parquet'), isEscape)
    await assert.rejects(store.read('part=2/secret.parquet'), isEscape)
    await assert.rejects(store.head('part=2/secret.parquet'), isEscape)
  })

  it('refuses a delete through a linked directory out of the root; the file there survives', async () => {
    await fs.writeFile(path.join(outside, 'keep.parquet'), 'keep')
    await fs.symlink(outside, path.join(root, 'part=3'))
    const store = createLocalStore(root)
    await assert.rejects(store.delete('part=3/keep.parquet'), isEscape)
    assert.equal(await fs.readFile(path.join(outside, 'keep.parquet'), 'utf8'), 'keep')
  })

  it('follows links that stay inside the root, for reads and puts alike', async () => {
    const store = createLocalStore(root)
    await store.put('real/a.parquet', enc('inside'))
    await fs.symlink(path.join(root, 'real'), path.join(root, 'alias'))
    await fs.symlink(path.join(root, 'real', 'a.parquet'), path.join(root, 'link.parquet'))
    assert.equal(dec(await store.read('alias/a.parquet')), 'inside')
    assert.equal(dec(await store.read('link.parquet')), 'inside')
    assert.equal((await store.head('link.parquet')).size, 6)
    await store.put('alias/b.parquet', enc('via alias'))
    assert.equal(await fs.readFile(path.join(root, 'real', 'b.parquet'), 'utf8'), 'via alias')
    await store.delete('alias/b.parquet')
    assert.deepEqual((await fs.readdir(path.join(root, 'real'))).sort(), ['a.parquet'])
  })

  it('accepts a root that is itself a link: the real root is where the files are', async () => {
    const linkedRoot = path.join(base, 'table-link')
    await fs.symlink(root, linkedRoot)
    const store = createLocalStore(linkedRoot)
    await store.put('p/a.parquet', enc('ok'))
    assert.equal(dec(await store.read('p/a.parquet')), 'ok')
    assert.equal(await fs.readFile(path.join(root, 'p', 'a.parquet'), 'utf8'), 'ok')
  })

  it('still reports a missing object as FileNotFoundError', async () => {
    const store = createLocalStore(root)
    await assert.rejects(store.read('nope.parquet'), (err) => isDeltaError(err, 'DELTA_FILE_NOT_FOUND'))
    await assert.rejects(store.head('nope/nope.parquet'), (err) => isDeltaError(err, 'DELTA_FILE_NOT_FOUND'))
    await store.delete('nope/nope.parquet')
  })
})

describe('local store temporary files', () => {
  let root: string
  beforeEach(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'delta-rlc-tmpfiles-'))
  })
  afterEach(async () => {
    await fs.rm(root, { recursive: true, force: true })
  })

  it('recognises exactly the names puts give their temporary files', () => {
    assert.ok(isPutTempFileName('.part-0.parquet.0123456789abcdef.tmp'))
    assert.ok(isPutTempFileName('.00000000000000000001.json.fedcba9876543210.tmp'))
    for (const name of [
      '.part-0.parquet.tmp',
      '.x.0123456789ABCDEF.tmp',
      '.x.0123456789abcde.tmp',
      'part.0123456789abcdef.tmp',
      '.x.0123456789abcdef.tmp.bak',
      `.${'n'.repeat(101)}.0123456789abcdef.tmp`,
      '.hidden',
    ]) {
      assert.equal(isPutTempFileName(name), false, name)
    }
  })

  it('lists abandoned temporary files everywhere, _delta_log included, and nothing else', async () => {
    const store = createLocalStore(root)
    await store.put('_delta_log/00000000000000000000.json', enc('{}'))
    await store.put('p=1/a.parquet', enc('a'))
    const planted = [
      '_delta_log/.00000000000000000001.json.0123456789abcdef.tmp',
      'p=1/.b.parquet.00112233445566ff.tmp',
      '.c.parquet.aaaaaaaaaaaaaaaa.tmp',
    ]
    for (const key of [...planted, '.d.parquet.tmp', 'p=1/.hidden', '_delta_log/.x.crc']) {
      await fs.writeFile(path.join(root, key), 'partial')
    }
    await fs.mkdir(path.join(root, '.e.parquet.bbbbbbbbbbbbbbbb.tmp'))
    assert.deepEqual(await temporaryKeys(store), [...planted].sort())
    assert.deepEqual(await temporaryKeys(passThroughStore(store)), [...planted].sort(), 'wrappers pass it on')
    for (const key of planted) await store.delete(key)
    assert.deepEqual(await temporaryKeys(store), [])
    assert.ok((await fs.stat(path.join(root, '.d.parquet.tmp'))).isFile(), 'other hidden files stay')
  })

  it('does not descend into a linked directory when listing temporary files', async () => {
    const outside = await fs.mkdtemp(path.join(os.tmpdir(), 'delta-rlc-tmpfiles-out-'))
    try {
      await fs.writeFile(path.join(outside, '.a.parquet.0123456789abcdef.tmp'), 'x')
      await fs.symlink(outside, path.join(root, 'p=9'))
      assert.deepEqual(await temporaryKeys(createLocalStore(root)), [])
    } finally {
      await fs.rm(outside, { recursive: true, force: true })
    }
  })
})
