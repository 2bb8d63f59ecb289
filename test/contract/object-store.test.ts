/**
 * The ObjectStore contract, run against every backend. A new backend joins by adding one entry to
 * `BACKENDS`; every case below then applies to it unchanged. The Azure and S3 backends run against
 * local servers (Azurite; S3 on moto, or on s3rver with the conditional-put guard where moto is
 * not installed) started for this file, each test
 * on a fresh key prefix.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { after, afterEach, before, beforeEach, describe, it } from 'node:test'
import {
  FileAlreadyExistsError,
  FileNotFoundError,
  InvalidArgumentError,
  StorageError,
} from '../../src/errors/index.js'
import {
  createAzureStore,
  createFaultyStore,
  createGcsStore,
  createLocalStore,
  createMemoryStore,
  createS3Store,
  type FileMeta,
  type ObjectStore,
} from '../../src/storage/index.js'
import { createGcsBucket, fakeGcsUnavailable, startFakeGcs } from '../helpers/gcs-server.js'
import {
  AZURITE_ACCOUNT,
  AZURITE_KEY,
  createAzureContainer,
  createS3Bucket,
  S3RVER_CREDENTIALS,
  s3ServerName,
  startAzurite,
  startS3,
  type TestServer,
  uniqueName,
} from '../helpers/servers.js'

interface OpenedStore {
  readonly store: ObjectStore
  dispose(): Promise<void>
}

interface Backend {
  readonly name: string
  /** Why the backend cannot run here (its server is not installed), if it cannot. */
  readonly unavailable?: () => string | undefined
  /** Prepares what every store of this backend needs (a server, a container). */
  start?(): Promise<void>
  stop?(): Promise<void>
  open(): Promise<OpenedStore>
}

let azurite: TestServer | undefined
let s3: TestServer | undefined
let fakeGcs: TestServer | undefined

const BACKENDS: readonly Backend[] = [
  {
    name: 'local',
    async open() {
      const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'delta-rlc-store-'))
      return {
        store: createLocalStore(path.join(dir, 'root')),
        dispose: () => fs.rm(dir, { recursive: true, force: true }),
      }
    },
  },
  {
    name: 'memory',
    async open() {
      return { store: createMemoryStore('contract'), dispose: async () => {} }
    },
  },
  {
    name: 'faulty(memory) with an empty plan',
    async open() {
      return { store: createFaultyStore(createMemoryStore('contract'), {}), dispose: async () => {} }
    },
  },
  {
    name: 'azure (Azurite)',
    async start() {
      azurite = await startAzurite()
      await createAzureContainer(azurite.endpoint, 'contract')
    },
    async stop() {
      await azurite?.stop()
    },
    async open() {
      const store = createAzureStore(`az://contract/${uniqueName('t')}`, {
        endpoint: azurite!.endpoint,
        account: AZURITE_ACCOUNT,
        accountKey: AZURITE_KEY,
        env: {},
      })
      return { store, dispose: async () => {} }
    },
  },
  {
    name: s3ServerName() === 'moto' ? 's3 (moto)' : 's3 (s3rver with the conditional-put guard)',
    async start() {
      s3 = await startS3()
      await createS3Bucket(s3.endpoint, 'contract')
    },
    async stop() {
      await s3?.stop()
    },
    async open() {
      const store = createS3Store(`s3://contract/${uniqueName('t')}`, {
        endpoint: s3!.endpoint,
        ...S3RVER_CREDENTIALS,
        env: {},
      })
      return { store, dispose: async () => {} }
    },
  },
  {
    name: 'gcs (fake-gcs-server)',
    unavailable: fakeGcsUnavailable,
    async start() {
      fakeGcs = await startFakeGcs()
      await createGcsBucket(fakeGcs.endpoint, 'contract')
    },
    async stop() {
      await fakeGcs?.stop()
    },
    async open() {
      const store = createGcsStore(`gs://contract/${uniqueName('t')}`, {
        endpoint: fakeGcs!.endpoint,
        env: {},
      })
      return { store, dispose: async () => {} }
    },
  },
]

/** The backends whose service selects listed names by prefix, so they offer `listPrefix`. */
const PREFIX_LISTING: ReadonlySet<string> = new Set([
  'memory',
  'faulty(memory) with an empty plan',
  'azure (Azurite)',
  'gcs (fake-gcs-server)',
])

const encoder = new TextEncoder()
const decoder = new TextDecoder()

function bytes(text: string): Uint8Array {
  return encoder.encode(text)
}

async function collect(items: AsyncIterable<FileMeta>): Promise<FileMeta[]> {
  const out: FileMeta[] = []
  for await (const item of items) out.push(item)
  return out
}

async function keysOf(items: AsyncIterable<FileMeta>): Promise<string[]> {
  return (await collect(items)).map((m) => m.key)
}

function isAbortError(err: unknown): boolean {
  return err instanceof Error && err.name === 'AbortError'
}

// The backends run side by side, each on its own store and server: the remote ones mostly wait on
// their servers. Within a backend the tests take turns (they share the store of beforeEach).
describe('ObjectStore contract', { concurrency: true }, () => {
  for (const backend of BACKENDS) {
    describe(`ObjectStore contract: ${backend.name}`, {
      concurrency: 1,
      skip: backend.unavailable?.(),
    }, () => {
      let opened: OpenedStore
      let store: ObjectStore

      before(async () => {
        await backend.start?.()
      })
      after(async () => {
        await backend.stop?.()
      })
      beforeEach(async () => {
        opened = await backend.open()
        store = opened.store
      })
      afterEach(async () => {
        await opened.dispose()
      })

      describe('put, read, head', () => {
        it('reads back what was put, with its size and a recent lastModified', async () => {
          const before = Date.now()
          await store.put('dir/a.json', bytes('{"hello":"world"}'))
          assert.equal(decoder.decode(await store.read('dir/a.json')), '{"hello":"world"}')
          const meta = await store.head('dir/a.json')
          assert.equal(meta.key, 'dir/a.json')
          assert.equal(meta.size, 17)
          // File systems may truncate mtime to a coarser unit than milliseconds.
          assert.ok(meta.lastModified >= before - 2000 && meta.lastModified <= Date.now() + 1000)
        })

        it('stores an empty object', async () => {
          await store.put('empty', new Uint8Array(0), { ifNotExists: true })
          assert.equal((await store.read('empty')).byteLength, 0)
          assert.equal((await store.head('empty')).size, 0)
          assert.deepEqual(await keysOf(store.listFrom('')), ['empty'])
        })

        it('round-trips a 1 MiB object byte for byte', async () => {
          const data = new Uint8Array(1024 * 1024)
          for (let i = 0; i < data.length; i++) data[i] = (i * 31 + (i >>> 8)) & 0xff
          await store.put('big/blob.bin', data)
          const back = await store.read('big/blob.bin')
          assert.equal(back.byteLength, data.byteLength)
          assert.ok(Buffer.from(back).equals(Buffer.from(data)))
          assert.equal((await store.head('big/blob.bin')).size, 1024 * 1024)
        })

        it('keeps stored bytes safe from later changes to the written and the returned buffers', async () => {
          const data = bytes('abc')
          await store.put('k', data)
          data[0] = 0x7a
          const first = await store.read('k')
          first[1] = 0x7a
          assert.equal(decoder.decode(await store.read('k')), 'abc')
        })

        it('rejects keys that name a directory rather than an object', async () => {
          for (const key of ['', 'dir/']) {
            await assert.rejects(store.put(key, bytes('x')), InvalidArgumentError, `put '${key}'`)
            await assert.rejects(store.read(key), InvalidArgumentError, `read '${key}'`)
          }
        })
      })

      describe('ranged reads', () => {
        const cases = [
          { name: 'from the start', range: { offset: 0, length: 4 }, expected: '0123' },
          { name: 'in the middle', range: { offset: 3, length: 4 }, expected: '3456' },
          { name: 'up to the exact end', range: { offset: 6, length: 4 }, expected: '6789' },
          { name: 'running past the end', range: { offset: 7, length: 100 }, expected: '789' },
          { name: 'starting past the end', range: { offset: 50, length: 5 }, expected: '' },
          { name: 'of zero length', range: { offset: 2, length: 0 }, expected: '' },
        ]
        for (const c of cases) {
          it(`returns the bytes of a range ${c.name}`, async () => {
            await store.put('r/digits.txt', bytes('0123456789'))
            assert.equal(decoder.decode(await store.read('r/digits.txt', c.range)), c.expected)
          })
        }

        it('rejects a negative or fractional range', async () => {
          await store.put('r/x', bytes('0123'))
          for (const range of [
            { offset: -1, length: 2 },
            { offset: 0, length: -2 },
            { offset: 0.5, length: 1 },
          ]) {
            await assert.rejects(store.read('r/x', range), InvalidArgumentError, JSON.stringify(range))
          }
        })
      })

      describe('missing objects', () => {
        it('read, ranged read and head of a missing key throw FileNotFoundError', async () => {
          await store.put('present/one', bytes('1'))
          for (const call of [
            () => store.read('present/absent'),
            () => store.read('absent/dir/key', { offset: 0, length: 1 }),
            () => store.head('present/absent'),
            () => store.head('absent'),
          ]) {
            await assert.rejects(call(), (err: unknown) => {
              assert.ok(err instanceof FileNotFoundError)
              assert.equal(err.code, 'DELTA_FILE_NOT_FOUND')
              assert.match(err.path, /absent/)
              return true
            })
          }
        })
      })

      describe('put-if-absent and overwrite', () => {
        it('refuses an ifNotExists put on an existing key and leaves the object untouched', async () => {
          await store.put('_delta_log/00000000000000000000.json', bytes('first'), { ifNotExists: true })
          await assert.rejects(
            store.put('_delta_log/00000000000000000000.json', bytes('second, longer'), { ifNotExists: true }),
            (err: unknown) => {
              assert.ok(err instanceof FileAlreadyExistsError)
              assert.equal(err.code, 'DELTA_FILE_ALREADY_EXISTS')
              return true
            },
          )
          assert.equal(decoder.decode(await store.read('_delta_log/00000000000000000000.json')), 'first')
          assert.equal((await store.head('_delta_log/00000000000000000000.json')).size, 5)
        })

        it('replaces an existing object when ifNotExists is not set', async () => {
          await store.put('k.json', bytes('old content'))
          await store.put('k.json', bytes('new'))
          assert.equal(decoder.decode(await store.read('k.json')), 'new')
          assert.equal((await store.head('k.json')).size, 3)
          assert.deepEqual(await keysOf(store.listFrom('')), ['k.json'])
        })

        it('lets exactly one of 50 concurrent ifNotExists puts on one key win', async () => {
          const results = await Promise.allSettled(
            Array.from({ length: 50 }, (_, i) =>
              store.put('race/v.json', bytes(`writer-${i}`), { ifNotExists: true }).then(() => i),
            ),
          )
          const winners = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))
          assert.equal(winners.length, 1)
          for (const r of results) {
            if (r.status === 'rejected')
              assert.ok(r.reason instanceof FileAlreadyExistsError, String(r.reason))
          }
          assert.equal(decoder.decode(await store.read('race/v.json')), `writer-${winners[0]}`)
          assert.deepEqual(await keysOf(store.listFrom('race/')), ['race/v.json'])
        })
      })

      describe('delete', () => {
        it('removes an object and succeeds again when it is already gone', async () => {
          await store.put('d/x', bytes('x'))
          await store.delete('d/x')
          await assert.rejects(store.head('d/x'), FileNotFoundError)
          await store.delete('d/x')
          await store.delete('never/existed')
          assert.deepEqual(await keysOf(store.listFrom('d/')), [])
        })

        it('allows an ifNotExists put again after a delete', async () => {
          await store.put('d/y', bytes('1'), { ifNotExists: true })
          await store.delete('d/y')
          await store.put('d/y', bytes('2'), { ifNotExists: true })
          assert.equal(decoder.decode(await store.read('d/y')), '2')
        })
      })

      describe('listFrom', () => {
        // U+FF61 sorts after U+10000 in UTF-16 code units but before it in UTF-8 bytes.
        const names = ['b', 'a', 'A', 'a0', '\u00e9t\u00e9', 'z', '\uff61', '\u{10000}', '\u{1f600}', '_x']
        const utf8Order = [...names].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)))

        it('lists one directory in UTF-8 byte order, including non-ASCII names', async () => {
          assert.notDeepEqual(utf8Order, [...names].sort(), 'the fixture must tell the two orders apart')
          for (const n of names) await store.put(`u/${n}`, bytes(n))
          const listed = await collect(store.listFrom('u/'))
          assert.deepEqual(
            listed.map((m) => m.key),
            utf8Order.map((n) => `u/${n}`),
          )
          for (const m of listed) assert.equal(m.size, Buffer.byteLength(m.key.slice(2)))
        })

        it('starts at a non-ASCII from key, with and without names beyond U+D7FF', async () => {
          for (const n of names) await store.put(`v/${n}`, bytes(n))
          for (const n of ['e', '\u00e9', '\u00f8', 'z']) await store.put(`w/${n}`, bytes(n))
          const after = (from: string, all: readonly string[]) =>
            all.filter((n) => Buffer.compare(Buffer.from(n), Buffer.from(from)) >= 0)
          assert.deepEqual(
            await keysOf(store.listFrom('v/\uff61')),
            after('\uff61', utf8Order).map((n) => `v/${n}`),
          )
          assert.deepEqual(await keysOf(store.listFrom('w/\u00e9')), ['w/\u00e9', 'w/\u00f8'])
        })

        it('includes the from key itself and everything after it', async () => {
          for (const v of [0, 1, 2, 3, 10]) {
            await store.put(`_delta_log/${String(v).padStart(20, '0')}.json`, bytes(String(v)))
          }
          assert.deepEqual(await keysOf(store.listFrom('_delta_log/00000000000000000002.json')), [
            '_delta_log/00000000000000000002.json',
            '_delta_log/00000000000000000003.json',
            '_delta_log/00000000000000000010.json',
          ])
          // `from` is a lower bound, not a prefix: the whole rest of the directory follows it.
          assert.deepEqual(await keysOf(store.listFrom('_delta_log/0000000000000000000')), [
            '_delta_log/00000000000000000000.json',
            '_delta_log/00000000000000000001.json',
            '_delta_log/00000000000000000002.json',
            '_delta_log/00000000000000000003.json',
            '_delta_log/00000000000000000010.json',
          ])
          assert.deepEqual(await keysOf(store.listFrom('_delta_log/00000000000000000003.jsom')), [
            '_delta_log/00000000000000000003.json',
            '_delta_log/00000000000000000010.json',
          ])
          assert.deepEqual(await keysOf(store.listFrom('_delta_log/00000000000000000011')), [])
        })

        it('lists only the objects directly inside the directory', async () => {
          await store.put('t/part-0.parquet', bytes('p'))
          await store.put('t/_delta_log/00000000000000000000.json', bytes('{}'))
          await store.put('t/p=1/part-1.parquet', bytes('q'))
          await store.put('top', bytes('r'))
          assert.deepEqual(await keysOf(store.listFrom('t/')), ['t/part-0.parquet'])
          assert.deepEqual(await keysOf(store.listFrom('')), ['top'])
          assert.deepEqual(await keysOf(store.listFrom('t/_delta_log/')), [
            't/_delta_log/00000000000000000000.json',
          ])
        })

        it('returns nothing for a directory that does not exist', async () => {
          assert.deepEqual(await keysOf(store.listFrom('nowhere/')), [])
          assert.deepEqual(await keysOf(store.listFrom('nowhere/deeper/0001')), [])
          assert.deepEqual(await keysOf(store.listFrom('')), [])
        })

        it('reflects every completed put and delete', async () => {
          await store.put('l/1', bytes('1'))
          assert.deepEqual(await keysOf(store.listFrom('l/')), ['l/1'])
          await store.put('l/2', bytes('22'), { ifNotExists: true })
          assert.deepEqual(await keysOf(store.listFrom('l/')), ['l/1', 'l/2'])
          await store.delete('l/1')
          const listed = await collect(store.listFrom('l/'))
          assert.deepEqual(
            listed.map((m) => [m.key, m.size]),
            [['l/2', 2]],
          )
        })
      })

      describe('listPrefix (where the backend has it)', () => {
        it('is offered by the backends whose service selects names by prefix', () => {
          const expected = PREFIX_LISTING.has(backend.name)
          assert.equal(typeof store.listPrefix === 'function', expected)
        })

        it('lists the names of one directory that start with the prefix, in UTF-8 byte order', async (t) => {
          const listPrefix = store.listPrefix?.bind(store)
          if (listPrefix === undefined) return t.skip('no prefix listing')
          const log = (v: number, suffix: string) => `_delta_log/${String(v).padStart(20, '0')}${suffix}`
          const keys = [
            log(9, '.json'),
            log(10, '.json'),
            log(10, '.checkpoint.parquet'),
            log(12, '.crc'),
            log(19, '.json'),
            log(15, '.19.compacted.json'),
            log(20, '.json'),
            log(100, '.json'),
            '_delta_log/_last_checkpoint',
            '_delta_log/00000000000000000011/nested.json',
            'other/00000000000000000011.json',
          ]
          for (const k of keys) await store.put(k, bytes(k))
          const listed = await collect(listPrefix('_delta_log/0000000000000000001'))
          assert.deepEqual(
            listed.map((m) => m.key),
            [
              log(10, '.checkpoint.parquet'),
              log(10, '.json'),
              log(12, '.crc'),
              log(15, '.19.compacted.json'),
              log(19, '.json'),
            ],
          )
          for (const m of listed) assert.equal(m.size, m.key.length)
          assert.deepEqual(await keysOf(listPrefix(log(10, '.'))), [
            log(10, '.checkpoint.parquet'),
            log(10, '.json'),
          ])
          // A directory key lists the whole directory; non-ASCII names in UTF-8 byte order.
          const names = ['b', '\uff61', '\u{10000}', 'a']
          for (const n of names) await store.put(`u/${n}`, bytes(n))
          assert.deepEqual(await keysOf(listPrefix('u/')), ['u/a', 'u/b', 'u/\uff61', 'u/\u{10000}'])
          assert.deepEqual(await keysOf(listPrefix('u/\u{10000}')), ['u/\u{10000}'])
          assert.deepEqual(await keysOf(listPrefix('_delta_log/0000000000000000003')), [])
          assert.deepEqual(await keysOf(listPrefix('nowhere/00')), [])
        })

        it('reflects every completed put and delete, and rejects keys that could escape the root', async (t) => {
          const listPrefix = store.listPrefix?.bind(store)
          if (listPrefix === undefined) return t.skip('no prefix listing')
          await store.put('p/a1', bytes('1'))
          await store.put('p/a2', bytes('22'), { ifNotExists: true })
          await store.delete('p/a1')
          const listed = await collect(listPrefix('p/a'))
          assert.deepEqual(
            listed.map((m) => [m.key, m.size]),
            [['p/a2', 2]],
          )
          for (const key of ['../x', '/abs', 'a/../b', 'a//b']) {
            await assert.rejects(collect(listPrefix(key)), InvalidArgumentError)
          }
          const controller = new AbortController()
          controller.abort()
          await assert.rejects(collect(listPrefix('p/', { signal: controller.signal })), isAbortError)
        })
      })

      describe('listRecursive', () => {
        it('lists every object under a prefix at any depth, and nothing outside it', async () => {
          const keys = ['t/a', 't/_delta_log/0.json', 't/p=1/q=2/f.parquet', 't/p=1/g', 'other/x', 'root']
          for (const k of keys) await store.put(k, bytes(k))
          const listed = await collect(store.listRecursive('t/'))
          assert.deepEqual(listed.map((m) => m.key).sort(), [
            't/_delta_log/0.json',
            't/a',
            't/p=1/g',
            't/p=1/q=2/f.parquet',
          ])
          for (const m of listed) assert.equal(m.size, m.key.length)
          assert.deepEqual((await keysOf(store.listRecursive(''))).sort(), [...keys].sort())
        })

        it('returns nothing for a missing prefix', async () => {
          await store.put('a/b', bytes('x'))
          assert.deepEqual(await keysOf(store.listRecursive('missing/')), [])
        })

        it('rejects a prefix that is not a directory key', async () => {
          await assert.rejects(keysOf(store.listRecursive('a/b')), InvalidArgumentError)
        })
      })

      describe('keys that could escape the root', () => {
        const badKeys = ['../x', '/abs', 'a/../b', './a', 'a//b', 'a\\b']
        for (const key of badKeys) {
          it(`rejects '${key}' in every call with InvalidArgumentError`, async () => {
            const calls: [string, () => Promise<unknown>][] = [
              ['read', () => store.read(key)],
              ['head', () => store.head(key)],
              ['put', () => store.put(key, bytes('x'))],
              ['put ifNotExists', () => store.put(key, bytes('x'), { ifNotExists: true })],
              ['delete', () => store.delete(key)],
              ['listFrom', () => collect(store.listFrom(key))],
              ['listRecursive', () => collect(store.listRecursive(`${key}/`))],
            ]
            for (const [name, call] of calls) {
              await assert.rejects(call(), (err: unknown) => {
                assert.ok(err instanceof InvalidArgumentError, `${name}: ${String(err)}`)
                assert.equal(err.code, 'DELTA_INVALID_ARGUMENT')
                return true
              })
            }
            assert.deepEqual(await keysOf(store.listRecursive('')), [])
          })
        }
      })

      describe('cancellation', () => {
        it('rejects every call with AbortError when the signal is already aborted, and writes nothing', async () => {
          await store.put('c/existing', bytes('x'))
          const controller = new AbortController()
          controller.abort()
          const signal = controller.signal
          const calls: [string, () => Promise<unknown>][] = [
            ['read', () => store.read('c/existing', undefined, { signal })],
            ['ranged read', () => store.read('c/existing', { offset: 0, length: 1 }, { signal })],
            ['head', () => store.head('c/existing', { signal })],
            ['put', () => store.put('c/new', bytes('y'), { signal })],
            ['put ifNotExists', () => store.put('c/new2', bytes('y'), { signal, ifNotExists: true })],
            ['delete', () => store.delete('c/existing', { signal })],
            ['listFrom', () => collect(store.listFrom('c/', { signal }))],
            ['listRecursive', () => collect(store.listRecursive('', { signal }))],
          ]
          for (const [name, call] of calls) {
            await assert.rejects(call(), (err: unknown) => {
              assert.ok(isAbortError(err), `${name}: ${String(err)}`)
              assert.ok(!(err instanceof StorageError), `${name}: abort must not be wrapped`)
              return true
            })
          }
          assert.deepEqual(await keysOf(store.listRecursive('')), ['c/existing'])
        })
      })
    })
  }
})
