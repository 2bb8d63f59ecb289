/**
 * How the Azure and S3 stores fail, against real local servers: rejected credentials, a missing
 * container or bucket, throttling and 5xx answers injected by a proxy, responses lost after a
 * write landed, hung requests, and a server that goes away. Every failure must surface as a typed
 * error after a bounded number of attempts, never as a hang, and never with a secret in it.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { inspect } from 'node:util'
import { FileAlreadyExistsError, FileNotFoundError, StorageError } from '../../src/errors/index.js'
import {
  createAzureStore,
  createS3Store,
  type FileMeta,
  type ObjectStore,
  type RetryOptions,
} from '../../src/storage/index.js'
import {
  AZURITE_ACCOUNT,
  AZURITE_KEY,
  createAzureContainer,
  createS3Bucket,
  type FaultProxy,
  type ProxyFault,
  S3RVER_CREDENTIALS,
  startAzurite,
  startFaultProxy,
  startS3rver,
  type TestServer,
  uniqueName,
} from '../helpers/servers.js'

const enc = (s: string) => new TextEncoder().encode(s)
const dec = (b: Uint8Array) => new TextDecoder().decode(b)

/** Short backoffs keep the failure paths fast; the counts are what the tests check. */
const FAST: RetryOptions = { maxRetries: 2, baseDelayMs: 5, maxDelayMs: 20 }

/** A wrong Azure account key of the right shape (base64 of 64 bytes). */
const WRONG_AZURE_KEY = Buffer.alloc(64, 7).toString('base64')

interface WrongCredentials {
  readonly label: string
  readonly store: ObjectStore
  readonly secret: string
}

interface Kit {
  readonly name: string
  /** What the service calls its top-level namespace. */
  readonly containerWord: 'container' | 'bucket'
  readonly throttle: ProxyFault
  start(reuse?: boolean): Promise<TestServer>
  createContainer(server: TestServer, name: string): Promise<void>
  /** The endpoint to give a store for a proxy in front of `server`. */
  viaProxy(server: TestServer, proxy: FaultProxy): string
  open(endpoint: string, container: string, retry?: RetryOptions): ObjectStore
  wrongCredentials(endpoint: string, container: string): WrongCredentials[]
}

const KITS: readonly Kit[] = [
  {
    name: 'azure (Azurite)',
    containerWord: 'container',
    throttle: { kind: 'status', status: 503, code: 'ServerBusy' },
    start: (reuse = true) => startAzurite({ reuse }),
    createContainer: (server, name) => createAzureContainer(server.endpoint, name),
    viaProxy: (_server, proxy) => `${proxy.origin}/${AZURITE_ACCOUNT}`,
    open: (endpoint, container, retry = FAST) =>
      createAzureStore(`az://${container}/${uniqueName('t')}`, {
        endpoint,
        account: AZURITE_ACCOUNT,
        accountKey: AZURITE_KEY,
        retry,
        env: {},
      }),
    wrongCredentials: (endpoint, container) => [
      {
        label: 'a wrong account key',
        secret: WRONG_AZURE_KEY,
        store: createAzureStore(`az://${container}/t`, {
          endpoint,
          account: AZURITE_ACCOUNT,
          accountKey: WRONG_AZURE_KEY,
          retry: FAST,
          env: {},
        }),
      },
      {
        label: 'a connection string with a wrong key, from AZURE_STORAGE_CONNECTION_STRING',
        secret: WRONG_AZURE_KEY,
        store: createAzureStore(`az://${container}/t`, {
          retry: FAST,
          env: {
            AZURE_STORAGE_CONNECTION_STRING: `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${WRONG_AZURE_KEY};BlobEndpoint=${endpoint};`,
          },
        }),
      },
    ],
  },
  {
    name: 's3 (s3rver with the conditional-put guard)',
    containerWord: 'bucket',
    throttle: { kind: 'status', status: 503, code: 'SlowDown' },
    start: (reuse = true) => startS3rver({ reuse }),
    createContainer: (server, name) => createS3Bucket(server.endpoint, name),
    viaProxy: (_server, proxy) => proxy.origin,
    open: (endpoint, container, retry = FAST) =>
      createS3Store(`s3://${container}/${uniqueName('t')}`, {
        endpoint,
        ...S3RVER_CREDENTIALS,
        retry,
        env: {},
      }),
    wrongCredentials: (endpoint, container) => [
      {
        label: 'an unknown key pair',
        secret: 'wrong-secret-access-key-0123456789',
        store: createS3Store(`s3://${container}/t`, {
          endpoint,
          accessKeyId: 'AKIAWRONGWRONGWRONG',
          secretAccessKey: 'wrong-secret-access-key-0123456789',
          retry: FAST,
          env: {},
        }),
      },
      {
        label: 'an unknown key pair from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY',
        secret: 'another-wrong-secret-9876543210',
        store: createS3Store(`s3://${container}/t`, {
          retry: FAST,
          env: {
            AWS_ACCESS_KEY_ID: 'AKIAALSOWRONG',
            AWS_SECRET_ACCESS_KEY: 'another-wrong-secret-9876543210',
            AWS_SESSION_TOKEN: 'session-token-that-must-stay-hidden',
            AWS_ENDPOINT_URL_S3: endpoint,
          },
        }),
      },
    ],
  },
]

async function collect(items: AsyncIterable<FileMeta>): Promise<string[]> {
  const out: string[] = []
  for await (const item of items) out.push(item.key)
  return out
}

/** Asserts a StorageError with the given flags; returns it for further checks. */
async function rejectsWithStorageError(
  promise: Promise<unknown>,
  expected: { retryable: boolean; ambiguous: boolean; message?: RegExp },
  label = '',
): Promise<StorageError> {
  let caught: unknown
  await assert.rejects(promise, (err: unknown) => {
    caught = err
    return true
  })
  assert.ok(caught instanceof StorageError, `${label}: ${String(caught)}`)
  assert.equal(caught.retryable, expected.retryable, `${label}: retryable (${caught.message})`)
  assert.equal(caught.ambiguous, expected.ambiguous, `${label}: ambiguous (${caught.message})`)
  if (expected.message) assert.match(caught.message, expected.message, label)
  return caught
}

// The two stores' suites run side by side: each mostly waits (server starts, retry backoff, hung
// requests), and each has its own server and proxy. Within a suite the tests take turns, as they
// share the proxy's rules.
describe('remote store failures', { concurrency: true }, () => {
  for (const kit of KITS) {
    describe(`${kit.name} failures`, { concurrency: 1 }, () => {
      let server: TestServer
      let proxy: FaultProxy
      const container = 'failures'

      before(async () => {
        server = await kit.start()
        await kit.createContainer(server, container)
        proxy = await startFaultProxy(server.endpoint)
      })
      after(async () => {
        await proxy?.stop()
        await server?.stop()
      })

      describe('credentials', () => {
        it('rejects wrong credentials with a non-retryable StorageError that holds no secret', async () => {
          for (const { label, store, secret } of kit.wrongCredentials(server.endpoint, container)) {
            const calls: [string, () => Promise<unknown>][] = [
              ['read', () => store.read('x')],
              ['put', () => store.put('x', enc('x'), { ifNotExists: true })],
              ['listFrom', () => collect(store.listFrom(''))],
            ]
            for (const [call, run] of calls) {
              const err = await rejectsWithStorageError(
                run(),
                { retryable: false, ambiguous: false, message: /rejected the credentials/ },
                `${label}, ${call}`,
              )
              assert.match(err.hint ?? '', /credentials|key/i)
              const everything = `${err.message}\n${err.hint}\n${inspect(err, { depth: Number.POSITIVE_INFINITY })}\n${JSON.stringify(err)}`
              assert.ok(!everything.includes(secret), `${label}, ${call}: the secret leaked`)
              assert.ok(
                !everything.includes('session-token-that-must-stay-hidden'),
                `${label}, ${call}: token leaked`,
              )
            }
          }
        })
      })

      describe(`missing ${kit.containerWord}`, () => {
        it(`names the missing ${kit.containerWord} in a non-retryable StorageError from every call`, async () => {
          const missing = `absent-${uniqueName('c')}`.slice(0, 40)
          const store = kit.open(server.endpoint, missing)
          const calls: [string, () => Promise<unknown>][] = [
            ['read', () => store.read('k')],
            ['ranged read', () => store.read('k', { offset: 1, length: 2 })],
            ['head', () => store.head('k')],
            ['put', () => store.put('k', enc('v'))],
            ['put ifNotExists', () => store.put('k', enc('v'), { ifNotExists: true })],
            ['delete', () => store.delete('k')],
            ['listFrom', () => collect(store.listFrom('_delta_log/'))],
            ['listRecursive', () => collect(store.listRecursive(''))],
          ]
          for (const [call, run] of calls) {
            const err = await rejectsWithStorageError(
              run(),
              {
                retryable: false,
                ambiguous: false,
                message: new RegExp(`${kit.containerWord} '${missing}'.*does not exist`),
              },
              call,
            )
            assert.equal(err.path, store.root)
          }
        })
      })

      describe('throttling and server errors', () => {
        it('retries a throttled call with backoff and then succeeds', async () => {
          const store = kit.open(kit.viaProxy(server, proxy), container)
          await store.put('t/a.json', enc('abc'))
          for (const [call, run, expected] of [
            ['read', async () => dec(await store.read('t/a.json')), 'abc'],
            ['head', async () => (await store.head('t/a.json')).size, 3],
            ['listFrom', async () => (await collect(store.listFrom('t/'))).join(), 't/a.json'],
          ] as const) {
            proxy.setRules([{ fault: kit.throttle, times: 2 }])
            assert.equal(await run(), expected, call)
            assert.equal(proxy.requests, 3, `${call}: two refused attempts and one success`)
          }
        })

        it('retries a throttled put-if-absent, since a refused request did not land', async () => {
          const store = kit.open(kit.viaProxy(server, proxy), container)
          proxy.setRules([{ fault: kit.throttle, times: 2, method: 'PUT' }])
          await store.put('t/commit.json', enc('winner'), { ifNotExists: true })
          assert.equal(proxy.requests, 3)
          assert.equal(dec(await store.read('t/commit.json')), 'winner')
        })

        it('gives up on persistent throttling with a retryable StorageError after maxRetries + 1 attempts', async () => {
          const store = kit.open(kit.viaProxy(server, proxy), container)
          proxy.setRules([{ fault: kit.throttle, times: 1000 }])
          await rejectsWithStorageError(store.read('t/a.json'), {
            retryable: true,
            ambiguous: false,
            message: /failed 3 times in a row, last with HTTP 503/,
          })
          assert.equal(proxy.requests, 3)
          proxy.setRules([{ fault: kit.throttle, times: 1000 }])
          // A refused put did not land, so giving up on it is not ambiguous either.
          await rejectsWithStorageError(store.put('t/b.json', enc('b'), { ifNotExists: true }), {
            retryable: true,
            ambiguous: false,
          })
          assert.equal(proxy.requests, 3)
        })

        it('reports a put-if-absent answered 500 as ambiguous without repeating it', async () => {
          const store = kit.open(kit.viaProxy(server, proxy), container)
          proxy.setRules([{ fault: { kind: 'status', status: 500, code: 'InternalError' }, times: 1 }])
          await rejectsWithStorageError(store.put('t/c.json', enc('c'), { ifNotExists: true }), {
            retryable: true,
            ambiguous: true,
            message: /outcome .* is unknown/,
          })
          assert.equal(proxy.requests, 1)
        })
      })

      describe('lost responses and hung requests', () => {
        it('reports a put-if-absent whose response was lost as ambiguous, and the write did land', async () => {
          const store = kit.open(kit.viaProxy(server, proxy), container)
          proxy.setRules([{ fault: { kind: 'drop-response' }, times: 1 }])
          await rejectsWithStorageError(store.put('l/commit.json', enc('mine'), { ifNotExists: true }), {
            retryable: true,
            ambiguous: true,
          })
          // Not repeated: a repeat would have answered "already exists" for a write that won.
          assert.equal(proxy.requests, 1)
          assert.equal(dec(await store.read('l/commit.json')), 'mine')
        })

        it('repeats a plain put whose response was lost, since overwriting is idempotent', async () => {
          const store = kit.open(kit.viaProxy(server, proxy), container)
          proxy.setRules([{ fault: { kind: 'drop-response' }, times: 1 }])
          await store.put('l/data.parquet', enc('bytes'))
          assert.equal(proxy.requests, 2)
          assert.equal(dec(await store.read('l/data.parquet')), 'bytes')
        })

        it('abandons an attempt that hangs past its timeout and retries it', async () => {
          const store = kit.open(kit.viaProxy(server, proxy), container, { ...FAST, attemptTimeoutMs: 500 })
          await store.put('l/h.json', enc('h'))
          proxy.setRules([{ fault: { kind: 'hang' }, times: 1 }])
          const start = performance.now()
          assert.equal(dec(await store.read('l/h.json')), 'h')
          assert.ok(performance.now() - start >= 490)
          // At least the hung attempt and the one that answered (a slow machine may need one more).
          assert.ok(proxy.requests >= 2, `requests: ${proxy.requests}`)
        })

        it('reports a put-if-absent that timed out as ambiguous', async () => {
          const store = kit.open(kit.viaProxy(server, proxy), container, { ...FAST, attemptTimeoutMs: 300 })
          proxy.setRules([{ fault: { kind: 'hang' }, times: 1 }])
          await rejectsWithStorageError(store.put('l/t.json', enc('t'), { ifNotExists: true }), {
            retryable: true,
            ambiguous: true,
            message: /TIMEOUT/,
          })
          assert.equal(proxy.requests, 1)
        })

        it('passes a caller abort through as AbortError, not as a StorageError', async () => {
          const store = kit.open(kit.viaProxy(server, proxy), container)
          proxy.setRules([{ fault: { kind: 'hang' }, times: 1 }])
          const controller = new AbortController()
          // Abort once the request hangs at the proxy: a fixed delay can fire before a loaded
          // machine has even sent it.
          const sent = (async () => {
            const deadline = Date.now() + 10_000
            while (proxy.requests === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5))
            controller.abort()
          })()
          await assert.rejects(
            store.read('l/h.json', undefined, { signal: controller.signal }),
            (err: unknown) => {
              assert.ok(err instanceof Error && err.name === 'AbortError', String(err))
              return true
            },
          )
          await sent
          assert.equal(proxy.requests, 1)
        })
      })

      // S3 answers 409 while another conditional write of the key is in flight; Azure has no such answer.
      if (kit.containerWord === 'bucket') {
        describe('put-if-absent meeting a concurrent conditional write (409 ConditionalRequestConflict)', () => {
          const conflict: ProxyFault = { kind: 'status', status: 409, code: 'ConditionalRequestConflict' }
          const pair = () => {
            const location = `s3://${container}/${uniqueName('t')}`
            return {
              store: createS3Store(location, {
                endpoint: proxy.origin,
                ...S3RVER_CREDENTIALS,
                retry: FAST,
                env: {},
              }),
              direct: createS3Store(location, { endpoint: server.endpoint, ...S3RVER_CREDENTIALS, env: {} }),
            }
          }

          it('repeats the put once the other write is over, and wins if the key is still free', async () => {
            const { store, direct } = pair()
            proxy.setRules([{ fault: conflict, times: 2, method: 'PUT' }])
            await store.put('v.json', enc('mine'), { ifNotExists: true })
            assert.equal(proxy.requests, 3)
            assert.equal(dec(await direct.read('v.json')), 'mine')
          })

          it('loses with FileAlreadyExistsError when the other write created the key', async () => {
            const { store, direct } = pair()
            await direct.put('v.json', enc('theirs'))
            proxy.setRules([{ fault: conflict, times: 1000, method: 'PUT' }])
            await assert.rejects(
              store.put('v.json', enc('mine'), { ifNotExists: true }),
              FileAlreadyExistsError,
            )
            assert.equal(dec(await direct.read('v.json')), 'theirs')
          })

          it('gives up with a retryable StorageError when the key stays contended and absent', async () => {
            const { store, direct } = pair()
            proxy.setRules([{ fault: conflict, times: 1000, method: 'PUT' }])
            await rejectsWithStorageError(store.put('v.json', enc('mine'), { ifNotExists: true }), {
              retryable: true,
              ambiguous: false,
              message: /ConditionalRequestConflict/,
            })
            await assert.rejects(direct.head('v.json'), FileNotFoundError)
          })
        })
      }

      describe('server down', () => {
        it('fails with a retryable StorageError after bounded retries when the server is gone', {
          timeout: 20_000,
        }, async () => {
          const own = await kit.start(false)
          try {
            await kit.createContainer(own, container)
            const store = kit.open(own.endpoint, container, {
              maxRetries: 3,
              baseDelayMs: 20,
              maxDelayMs: 100,
            })
            await store.put('d/a.json', enc('a'))
            await own.stop()
            const start = performance.now()
            await rejectsWithStorageError(store.read('d/a.json'), {
              retryable: true,
              ambiguous: false,
              message: /failed 4 times in a row/,
            })
            for (const [call, run] of [
              ['listFrom', () => collect(store.listFrom('d/'))],
              ['head', () => store.head('d/a.json')],
              // Connections are refused before any byte is sent: the put cannot have landed.
              ['put ifNotExists', () => store.put('d/b.json', enc('b'), { ifNotExists: true })],
            ] as const) {
              await rejectsWithStorageError(
                run(),
                { retryable: true, ambiguous: false, message: /ECONNREFUSED/ },
                call,
              )
            }
            assert.ok(performance.now() - start < 10_000, 'the retries are bounded')
          } finally {
            await own.stop()
          }
        })
      })
    })
  }
})
