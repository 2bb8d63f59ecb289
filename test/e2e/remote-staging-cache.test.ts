/**
 * The staging cache the data plane reads remote objects through: one download per object and
 * identity, atomic fills shared by processes, pins that survive eviction, the size bound with
 * least-recently-used eviction, and the paths that bypass it (local stores, a bound of 0).
 */
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { chown, mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { after, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { createDefaultEngine } from '../../src/engine-default/default-engine.js'
import { stageForRead, withStagingCache } from '../../src/engine-default/staging.js'
import { cacheEntryName, createStagingCache } from '../../src/engine-default/staging-cache.js'
import { InvalidArgumentError, StorageError } from '../../src/errors/index.js'
import {
  createFaultyStore,
  createLocalStore,
  createMemoryStore,
  type ObjectStore,
  passThroughStore,
} from '../../src/storage/index.js'
import { DeltaTable } from '../../src/table/delta-table.js'
import { type CacheWorkerReport, remoteView } from '../helpers/staging-cache-worker.js'

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const workerPath = join(repoRoot, 'test/helpers/staging-cache-worker.ts')

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

async function tempDir(stem = 'cache'): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), `delta-rlc-${stem}-`))
  roots.push(d)
  return d
}

const bytesOf = (text: string) => new TextEncoder().encode(text)

/** A memory store that counts the full reads of each key. */
function countingStore(name: string) {
  const faulty = createFaultyStore(createMemoryStore(name), {})
  const reads = new Map<string, number>()
  const store: ObjectStore = {
    ...passThroughStore(faulty),
    read: (key, range, opts) => {
      if (range === undefined) reads.set(key, (reads.get(key) ?? 0) + 1)
      return faulty.read(key, range, opts)
    },
  }
  return { store, reads, readsOf: (key: string) => reads.get(key) ?? 0 }
}

async function entryNames(cacheDir: string): Promise<string[]> {
  return (await readdir(join(cacheDir, 'objects'))).sort()
}

describe('staging cache: identity and reuse', () => {
  it('downloads an object once and serves later reads from the cache, each through its own pin', async () => {
    const dir = await tempDir()
    const { store, readsOf } = countingStore('cache-once')
    await store.put('a/part-0.parquet', bytesOf('alpha'))
    const cache = createStagingCache({ dir, maxBytes: 1_000_000 })
    const first = await cache.acquire(store, 'a/part-0.parquet')
    const second = await cache.acquire(store, 'a/part-0.parquet')
    assert.equal(readsOf('a/part-0.parquet'), 1)
    assert.notEqual(first.path, second.path)
    assert.equal(await readFile(first.path, 'utf8'), 'alpha')
    assert.equal(await readFile(second.path, 'utf8'), 'alpha')
    await first.release()
    await second.release()
    await first.release()
    assert.deepEqual(await readdir(join(dir, 'pins')), [], 'released pins are gone')
    assert.deepEqual(await cache.usage(), { entries: 1, bytes: 5 })
    const third = await cache.acquire(store, 'a/part-0.parquet')
    assert.equal(readsOf('a/part-0.parquet'), 1, 'the entry outlives its readers')
    await third.release()
  })

  it('concurrent reads of one missing object in a process share one download', async () => {
    const dir = await tempDir()
    const { store, readsOf } = countingStore('cache-dedupe')
    await store.put('k.parquet', bytesOf('x'.repeat(1000)))
    const cache = createStagingCache({ dir, maxBytes: 1_000_000 })
    const staged = await Promise.all(Array.from({ length: 6 }, () => cache.acquire(store, 'k.parquet')))
    assert.equal(readsOf('k.parquet'), 1)
    for (const s of staged) assert.equal((await stat(s.path)).size, 1000)
    await Promise.all(staged.map((s) => s.release()))
  })

  it('a replaced object of another size or modification time is downloaded again', async () => {
    const dir = await tempDir()
    const { store, readsOf } = countingStore('cache-identity')
    const cache = createStagingCache({ dir, maxBytes: 1_000_000 })
    const read = async () => {
      const s = await cache.acquire(store, 'c.parquet')
      try {
        return await readFile(s.path, 'utf8')
      } finally {
        await s.release()
      }
    }
    await store.put('c.parquet', bytesOf('one'))
    assert.equal(await read(), 'one')
    await store.put('c.parquet', bytesOf('three'))
    assert.equal(await read(), 'three', 'a new size is a new entry')
    // The next put must carry a later modification time: wait for the clock to pass this one's
    // (a condition, at most a millisecond, not a guessed delay).
    const { lastModified } = await store.head('c.parquet')
    while (Date.now() <= lastModified) await new Promise((r) => setImmediate(r))
    await store.put('c.parquet', bytesOf('seven'))
    assert.equal(await read(), 'seven', 'same size, new modification time: a new entry')
    assert.equal(readsOf('c.parquet'), 3)
  })

  it('the same key under two store roots is two entries', async () => {
    const dir = await tempDir()
    const a = createMemoryStore('cache-root-a')
    const b = createMemoryStore('cache-root-b')
    const meta = { key: 'p.parquet', size: 1, lastModified: 5 }
    assert.notEqual(cacheEntryName(a.root, meta), cacheEntryName(b.root, meta))
    await a.put('p.parquet', bytesOf('a'))
    await b.put('p.parquet', bytesOf('b'))
    const cache = createStagingCache({ dir, maxBytes: 1000 })
    const [sa, sb] = [await cache.acquire(a, 'p.parquet'), await cache.acquire(b, 'p.parquet')]
    assert.equal(await readFile(sa.path, 'utf8'), 'a')
    assert.equal(await readFile(sb.path, 'utf8'), 'b')
    await Promise.all([sa.release(), sb.release()])
  })

  it('an entry with the wrong size is never served: it is removed and downloaded again', async () => {
    const dir = await tempDir()
    const { store, readsOf } = countingStore('cache-damaged')
    await store.put('d.parquet', bytesOf('correct'))
    const cache = createStagingCache({ dir, maxBytes: 1000 })
    await (await cache.acquire(store, 'd.parquet')).release()
    const name = cacheEntryName(store.root, await store.head('d.parquet'))
    await writeFile(join(dir, 'objects', name), 'corr')
    const s = await cache.acquire(store, 'd.parquet')
    assert.equal(await readFile(s.path, 'utf8'), 'correct')
    assert.equal(readsOf('d.parquet'), 2)
    await s.release()
    assert.equal(await readFile(join(dir, 'objects', name), 'utf8'), 'correct')
  })

  it('a cache directory removed under a running process is made again on the next download', async () => {
    const dir = await tempDir()
    const { store, readsOf } = countingStore('cache-removed')
    await store.put('r.parquet', bytesOf('again'))
    const cache = createStagingCache({ dir, maxBytes: 1000 })
    await (await cache.acquire(store, 'r.parquet')).release()
    await rm(dir, { recursive: true, force: true })
    const s = await cache.acquire(store, 'r.parquet')
    assert.equal(await readFile(s.path, 'utf8'), 'again')
    assert.equal(readsOf('r.parquet'), 2)
    await s.release()
    assert.equal((await cache.usage()).entries, 1)
  })

  it('a missing object fails with FileNotFoundError and leaves no pin', async () => {
    const dir = await tempDir()
    const cache = createStagingCache({ dir, maxBytes: 1000 })
    await assert.rejects(cache.acquire(createMemoryStore('cache-missing'), 'nope.parquet'), {
      code: 'DELTA_FILE_NOT_FOUND',
    })
    assert.deepEqual(await readdir(join(dir, 'pins')), [])
  })

  it('an aborted read passes the AbortError through and leaves no temp file', async () => {
    const dir = await tempDir()
    const store = createFaultyStore(createMemoryStore('cache-abort'), {
      delays: [{ methods: 'read', ms: 2000 }],
    })
    await store.put('slow.parquet', bytesOf('s'))
    const cache = createStagingCache({ dir, maxBytes: 1000 })
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 30)
    await assert.rejects(cache.acquire(store, 'slow.parquet', controller.signal), { name: 'AbortError' })
    assert.deepEqual(await readdir(join(dir, 'tmp')), [])
    assert.deepEqual(await readdir(join(dir, 'pins')), [])
  })
})

describe('staging cache: size bound', () => {
  const KB = 1024
  const fill = async (store: ObjectStore, names: string[]) => {
    for (const n of names) await store.put(n, new Uint8Array(KB).fill(n.charCodeAt(0)))
  }

  it('evicts the least recently used entries once the bound is exceeded', async () => {
    const dir = await tempDir()
    const store = createMemoryStore('cache-lru')
    await fill(store, ['a', 'b', 'c', 'd'])
    const cache = createStagingCache({ dir, maxBytes: 3 * KB })
    const touch = async (key: string) => (await cache.acquire(store, key)).release()
    // The first three entries were filled a minute, 50 s and 40 s ago (their files' times say so,
    // however fast this machine filled them); the hit on `a` then stamps it with the present.
    const start = Date.now() - 60_000
    for (const [i, k] of ['a', 'b', 'c'].entries()) {
      await touch(k)
      const name = (await entryNames(dir)).find((n) => n.endsWith(`-${k}`))!
      const at = new Date(start + 10_000 * i)
      await utimes(join(dir, 'objects', name), at, at)
    }
    await touch('a') // a hit: `a` is now the most recent
    await touch('d')
    const kept = (await entryNames(dir)).map((n) => n.slice(n.lastIndexOf('-') + 1)).sort()
    assert.deepEqual(kept, ['a', 'c', 'd'])
    assert.deepEqual(await cache.usage(), { entries: 3, bytes: 3 * KB })
  })

  it('never evicts an entry this process is reading; evicts it once released if still over', async () => {
    const dir = await tempDir()
    const store = createMemoryStore('cache-inuse')
    await fill(store, ['a', 'b'])
    const cache = createStagingCache({ dir, maxBytes: KB })
    const a = await cache.acquire(store, 'a')
    const b = await cache.acquire(store, 'b')
    assert.equal((await cache.usage()).entries, 2, 'both in use: over the bound, nothing evicted')
    await a.release()
    const left = await entryNames(dir)
    assert.equal(left.length, 1)
    assert.ok(left[0]?.endsWith('-b'), 'the released entry went, the one in use stayed')
    assert.equal((await readFile(b.path)).length, KB)
    await b.release()
    assert.deepEqual(await cache.usage(), { entries: 1, bytes: KB })
  })

  it('a pinned file stays readable when another process evicts its entry', async () => {
    const dir = await tempDir()
    const store = createMemoryStore('cache-pin')
    await fill(store, ['p'])
    const cache = createStagingCache({ dir, maxBytes: 10 * KB })
    const staged = await cache.acquire(store, 'p')
    for (const n of await entryNames(dir)) await rm(join(dir, 'objects', n))
    assert.deepEqual(await readFile(staged.path), Buffer.alloc(KB, 'p'.charCodeAt(0)))
    await staged.release()
  })

  it('serves an object larger than the whole bound without keeping it', async () => {
    const dir = await tempDir()
    const store = createMemoryStore('cache-large')
    await store.put('big', new Uint8Array(4 * KB).fill(9))
    const cache = createStagingCache({ dir, maxBytes: KB })
    const staged = await cache.acquire(store, 'big')
    assert.equal((await stat(staged.path)).size, 4 * KB)
    await staged.release()
    assert.deepEqual(await cache.usage(), { entries: 0, bytes: 0 })
  })
})

describe('staging cache: shared by processes', () => {
  function runWorker(args: string[]): Promise<CacheWorkerReport> {
    return new Promise((resolvePromise, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', workerPath, ...args], {
        cwd: repoRoot,
        stdio: ['ignore', 'pipe', 'inherit'],
      })
      let out = ''
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString()
      })
      child.once('error', reject)
      child.once('exit', (code) => {
        if (code !== 0) reject(new Error(`cache worker exited with ${code}: ${out}`))
        else resolvePromise(JSON.parse(out.trim()) as CacheWorkerReport)
      })
    })
  }

  it('four processes filling and evicting one small cache never read a wrong or partial file', {
    timeout: 60_000,
  }, async () => {
    const base = await tempDir()
    const storeDir = join(base, 'store')
    const cacheDir = join(base, 'cache')
    const local = createLocalStore(storeDir)
    // Files of different sizes and contents; the bound holds about three of them.
    for (let i = 0; i < 12; i++) {
      const bytes = new Uint8Array(20_000 + i * 3_001)
      for (let j = 0; j < bytes.length; j++) bytes[j] = (i * 31 + j * 7) & 0xff
      await local.put(`d/part-${i}.parquet`, bytes)
    }
    const maxBytes = 80_000
    const reports = await Promise.all(
      [1, 2, 3, 4].map((seed) => runWorker([cacheDir, storeDir, String(maxBytes), '40', String(seed)])),
    )
    for (const r of reports) {
      assert.deepEqual(r.errors, [])
      assert.equal(r.mismatches, 0)
      assert.equal(r.acquisitions, 80)
    }
    assert.deepEqual(await readdir(join(cacheDir, 'tmp')), [], 'no temp file left behind')
    assert.deepEqual(await readdir(join(cacheDir, 'pins')), [], 'no pin left behind')
    const usage = await createStagingCache({ dir: cacheDir, maxBytes }).usage()
    // Each process keeps the bound for what it can see; the last pass of the last filler bounds
    // the total, up to entries the other processes were reading at that moment.
    assert.ok(usage.bytes <= maxBytes + 2 * 3 * 60_000, `cache holds ${usage.bytes} bytes`)
  })

  it('sweeps the pins and temp files of processes that died, and only theirs', async () => {
    const dir = await tempDir()
    const dead = await new Promise<number>((resolvePromise) => {
      const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' })
      child.once('exit', () => resolvePromise(child.pid as number))
    })
    for (const sub of ['pins', 'tmp']) await mkdir(join(dir, sub), { recursive: true })
    const old = new Date(Date.now() - 10 * 60_000)
    const stale = [join(dir, 'pins', `${dead}-x-part.parquet`), join(dir, 'tmp', `${dead}-y`)]
    const fresh = join(dir, 'pins', `${dead}-z-recent.parquet`)
    const alive = join(dir, 'pins', `${process.ppid}-w-parent.parquet`)
    for (const f of [...stale, fresh, alive]) await writeFile(f, 'x')
    for (const f of [...stale, alive]) await utimes(f, old, old)
    const store = createMemoryStore('cache-sweep')
    await store.put('s', bytesOf('s'))
    await (await createStagingCache({ dir, maxBytes: 100 }).acquire(store, 's')).release()
    assert.deepEqual((await readdir(join(dir, 'tmp'))).sort(), [])
    assert.deepEqual(
      (await readdir(join(dir, 'pins'))).sort(),
      [`${dead}-z-recent.parquet`, `${process.ppid}-w-parent.parquet`].sort(),
    )
  })

  it('refuses a cache directory that belongs to another user', {
    skip: process.getuid?.() === 0 ? false : 'needs root to hand a directory to another user',
  }, async () => {
    const dir = await tempDir()
    await chown(dir, 4242, 4242)
    const store = createMemoryStore('cache-owner')
    await store.put('o', bytesOf('o'))
    await assert.rejects(createStagingCache({ dir, maxBytes: 100 }).acquire(store, 'o'), (err: unknown) => {
      assert.ok(err instanceof StorageError)
      assert.match(err.message, /belongs to another user/)
      assert.match(err.hint ?? '', /cacheDir/)
      return true
    })
  })
})

describe('staging: what bypasses the cache', () => {
  it('a local store is read in place, with no copy and no cache directory', async () => {
    const base = await tempDir()
    const store = createLocalStore(join(base, 'root'))
    await store.put('x/f.parquet', bytesOf('local'))
    const cacheDir = join(base, 'cache')
    const staged = await stageForRead(
      withStagingCache(store, createStagingCache({ dir: cacheDir })),
      'x/f.parquet',
      join(base, 'scratch'),
    )
    assert.equal(staged.path, store.localPath?.('x/f.parquet'))
    await staged.release()
    assert.equal(await readFile(store.localPath?.('x/f.parquet') ?? '', 'utf8'), 'local')
    await assert.rejects(stat(cacheDir), { code: 'ENOENT' })
  })

  it('a bound of 0 stages a private copy per read and deletes it on release', async () => {
    const base = await tempDir()
    const store = createMemoryStore('cache-off')
    await store.put('y/[odd] name*.parquet', bytesOf('private'))
    const cacheDir = join(base, 'cache')
    const scratch = join(base, 'scratch')
    const viewed = withStagingCache(store, createStagingCache({ dir: cacheDir, maxBytes: 0 }))
    const staged = await stageForRead(viewed, 'y/[odd] name*.parquet', scratch)
    assert.equal(dirname(staged.path), scratch)
    assert.doesNotMatch(staged.path.slice(scratch.length), /[[\]* ]/, 'no glob characters reach DuckDB')
    assert.equal(await readFile(staged.path, 'utf8'), 'private')
    await staged.release()
    assert.deepEqual(await readdir(scratch), [])
    await assert.rejects(stat(cacheDir), { code: 'ENOENT' })
  })

  it('a store view forwards every call to the store it wraps', async () => {
    const store = createMemoryStore('cache-view')
    const viewed = withStagingCache(store, createStagingCache({ maxBytes: 10 }))
    assert.equal(viewed.root, store.root)
    await viewed.put('v', bytesOf('v'), { ifNotExists: true })
    await assert.rejects(viewed.put('v', bytesOf('w'), { ifNotExists: true }), {
      code: 'DELTA_FILE_ALREADY_EXISTS',
    })
    assert.equal(new TextDecoder().decode(await store.read('v')), 'v')
    assert.equal(viewed.localPath, undefined)
  })

  it('rejects a negative or non-numeric bound and an empty directory', () => {
    for (const bad of [-1, Number.NaN, '5' as unknown as number]) {
      assert.throws(() => createStagingCache({ maxBytes: bad }), InvalidArgumentError)
      assert.throws(() => createDefaultEngine(createMemoryStore('bad'), { cacheMaxBytes: bad }), {
        code: 'DELTA_INVALID_ARGUMENT',
      })
    }
    assert.throws(() => createStagingCache({ dir: ' ' }), InvalidArgumentError)
  })
})

describe('staging cache under a table', () => {
  it('scans of a remote table fill the engine cache once; later scans read no data file again', async () => {
    const cacheDir = await tempDir()
    const { store, reads } = countingStore('cache-table')
    const engine = createDefaultEngine(store, { cacheDir, cacheMaxBytes: 50_000_000 })
    const table = await DeltaTable.create(
      'memory://cache-table',
      { schema: 'id long not null, v string', properties: { 'delta.enableDeletionVectors': 'true' } },
      { engine },
    )
    try {
      for (let b = 0; b < 3; b++) {
        await table.append(Array.from({ length: 50 }, (_, i) => ({ id: BigInt(b * 50 + i), v: `v${i}` })))
      }
      await table.delete('id % 10 = 0')
      const dataReads = () =>
        [...reads].filter(([k]) => k.endsWith('.parquet')).reduce((sum, [, n]) => sum + n, 0)
      assert.equal(await table.scan().count(), 135)
      const afterFirst = dataReads()
      assert.ok(afterFirst > 0 && afterFirst <= 3, `each data file is read at most once (${afterFirst})`)
      assert.equal((await table.scan({ where: 'id >= 100' }).toArray()).length, 45)
      assert.equal(await table.scan().count(), 135)
      assert.equal(dataReads(), afterFirst)
      assert.ok((await entryNames(cacheDir)).length >= afterFirst)
      assert.deepEqual(await readdir(join(cacheDir, 'pins')), [])
    } finally {
      await table.close()
      await engine.close()
    }
  })

  it('another process reads the entries this one filled without downloading them', {
    timeout: 30_000,
  }, async () => {
    const base = await tempDir()
    const storeDir = join(base, 'store')
    const cacheDir = join(base, 'cache')
    const local = createLocalStore(storeDir)
    await local.put('f.parquet', new Uint8Array(5000).fill(3))
    const cache = createStagingCache({ dir: cacheDir, maxBytes: 1_000_000 })
    await (await cache.acquire(remoteView(local), 'f.parquet')).release()
    const entry = join(cacheDir, 'objects', (await entryNames(cacheDir))[0] as string)
    const before = (await stat(entry)).ino
    // A worker process makes 10 acquisitions of the only key: all served by the same entry.
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', workerPath, cacheDir, storeDir, '1000000', '5', '1'],
      { cwd: repoRoot },
    )
    const report = JSON.parse(stdout.trim()) as CacheWorkerReport
    assert.equal(report.acquisitions, 10)
    assert.equal(report.mismatches, 0)
    assert.equal((await stat(entry)).ino, before, 'the entry was not downloaded again')
  })
})
