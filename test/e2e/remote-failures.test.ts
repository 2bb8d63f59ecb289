/**
 * Failures of remote tables as a new user meets them, through the table API on Azurite and
 * s3rver: wrong credentials, a missing container or bucket, throttling (503) injected by a proxy,
 * a server that goes down while a commit is in flight, and a commit that landed while its answer
 * was lost. Each must end in a typed error or a bounded retry, never a secret in a message, and
 * never a partial commit: the table reopened afterwards is at a whole version, with exactly the
 * rows of the commits that landed.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { inspect } from 'node:util'
import { isDeltaError, StorageError } from '../../src/errors/index.js'
import type { OpenStoreOptions, RetryOptions } from '../../src/storage/index.js'
import { DeltaTable } from '../../src/table/delta-table.js'
import {
  type PersistentServer,
  startPersistentAzurite,
  startPersistentS3rver,
} from '../helpers/persistent-servers.js'
import { azuriteStorageOptions, s3rverStorageOptions } from '../helpers/remote-backends.js'
import {
  AZURITE_ACCOUNT,
  createAzureContainer,
  createS3Bucket,
  type FaultProxy,
  type ProxyFault,
  startAzurite,
  startFaultProxy,
  startS3rver,
  type TestServer,
  uniqueName,
} from '../helpers/servers.js'

const SCHEMA = 'id long not null, name string'
const rows = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => ({ id: BigInt(from + i), name: `r${from + i}` }))
const idsOf = async (t: DeltaTable) =>
  (await t.scan({ columns: ['id'] }).toArray()).map((r) => Number(r.id)).sort((a, b) => a - b)
const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i)

/** Short store retries keep the failure paths quick; what is checked is that they end. */
const QUICK: RetryOptions = { maxRetries: 2, baseDelayMs: 5, maxDelayMs: 20, attemptTimeoutMs: 1500 }

interface Kit {
  readonly name: string
  readonly containerWord: 'container' | 'bucket'
  readonly throttle: ProxyFault
  start(): Promise<TestServer>
  startPersistent(dir: string): Promise<PersistentServer>
  createContainer(endpoint: string, name: string): Promise<void>
  /** The endpoint a store uses to go through `proxy`. */
  viaProxy(proxy: FaultProxy): string
  location(container: string): string
  options(endpoint: string, retry?: RetryOptions): OpenStoreOptions
  /** Options with a wrong secret of the right shape, and that secret. */
  wrongCredentials(endpoint: string): { readonly options: OpenStoreOptions; readonly secret: string }
}

const WRONG_AZURE_KEY = Buffer.alloc(64, 9).toString('base64')
const WRONG_S3_SECRET = 'not-the-secret-access-key-5h2k9'

const KITS: readonly Kit[] = [
  {
    name: 'azure (Azurite)',
    containerWord: 'container',
    throttle: { kind: 'status', status: 503, code: 'ServerBusy' },
    start: () => startAzurite(),
    startPersistent: startPersistentAzurite,
    createContainer: createAzureContainer,
    viaProxy: (proxy) => `${proxy.origin}/${AZURITE_ACCOUNT}`,
    location: (container) => `az://${container}/${uniqueName('t')}`,
    options: (endpoint, retry) => azuriteStorageOptions(endpoint, retry),
    wrongCredentials: (endpoint) => ({
      secret: WRONG_AZURE_KEY,
      options: { azure: { endpoint, account: AZURITE_ACCOUNT, accountKey: WRONG_AZURE_KEY, env: {} } },
    }),
  },
  {
    name: 's3 (s3rver)',
    containerWord: 'bucket',
    throttle: { kind: 'status', status: 503, code: 'SlowDown' },
    start: () => startS3rver(),
    startPersistent: startPersistentS3rver,
    createContainer: createS3Bucket,
    viaProxy: (proxy) => proxy.origin,
    location: (bucket) => `s3://${bucket}/${uniqueName('t')}`,
    options: (endpoint, retry) => s3rverStorageOptions(endpoint, retry),
    wrongCredentials: (endpoint) => ({
      secret: WRONG_S3_SECRET,
      options: {
        s3: { endpoint, accessKeyId: 'AKIANOTAKEY', secretAccessKey: WRONG_S3_SECRET, env: {} },
      },
    }),
  },
]

/** Everything an error shows a user or a log: no secret may be in it. */
function everythingIn(err: unknown): string {
  const e = err as { message?: string; hint?: string }
  return `${e.message}\n${e.hint}\n${inspect(err, { depth: Number.POSITIVE_INFINITY })}\n${JSON.stringify(err)}`
}

async function rejectsTyped(promise: Promise<unknown>, label: string): Promise<unknown> {
  let caught: unknown
  await assert.rejects(promise, (err: unknown) => {
    caught = err
    return true
  })
  assert.ok(isDeltaError(caught), `${label}: a typed error, got ${String(caught)}`)
  return caught
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

// The two stores' suites run side by side: each mostly waits on its servers (starts, stops,
// retry backoff), and each has its own servers and proxy. Within a suite the tests take turns,
// as they share the proxy's rules.
describe('remote failures', { concurrency: true }, () => {
  for (const kit of KITS) {
    describe(`${kit.name}: failures through the table API`, { timeout: 60_000, concurrency: 1 }, () => {
      let server: TestServer
      let proxy: FaultProxy
      const container = uniqueName('fail')
      const dirs: string[] = []

      before(async () => {
        server = await kit.start()
        await kit.createContainer(server.endpoint, container)
        proxy = await startFaultProxy(server.endpoint)
      })
      after(async () => {
        await proxy?.stop()
        await server?.stop()
        await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })))
      })

      it('wrong credentials: open and create fail with a non-retryable StorageError that holds no secret', async () => {
        const location = kit.location(container)
        const { options, secret } = kit.wrongCredentials(server.endpoint)
        for (const [call, run] of [
          ['open', () => DeltaTable.open(location, { storageOptions: options })],
          ['create', () => DeltaTable.create(location, { schema: SCHEMA }, { storageOptions: options })],
        ] as const) {
          const err = await rejectsTyped(run(), call)
          assert.ok(err instanceof StorageError, `${call}: ${String(err)}`)
          assert.equal(err.retryable, false, call)
          assert.match(err.message, /rejected the credentials/, call)
          assert.ok(!everythingIn(err).includes(secret), `${call}: the secret leaked`)
        }
        const good = await rejectsTyped(
          DeltaTable.open(location, { storageOptions: kit.options(server.endpoint) }),
          'open with the right credentials',
        )
        assert.equal(
          (good as { code?: string }).code,
          'DELTA_TABLE_NOT_FOUND',
          'the failed create wrote nothing',
        )
      })

      it(`a missing ${kit.containerWord}: open and create fail naming it, and create makes none`, async () => {
        const missing = `absent-${uniqueName('c')}`.slice(0, 40)
        const location = kit.location(missing)
        const storageOptions = kit.options(server.endpoint)
        for (const [call, run] of [
          ['open', () => DeltaTable.open(location, { storageOptions })],
          ['create', () => DeltaTable.create(location, { schema: SCHEMA }, { storageOptions })],
          ['open again', () => DeltaTable.open(location, { storageOptions })],
        ] as const) {
          const err = await rejectsTyped(run(), call)
          assert.ok(err instanceof StorageError, `${call}: ${String(err)}`)
          assert.equal(err.retryable, false, call)
          assert.match(err.message, new RegExp(`${kit.containerWord} '${missing}'.*does not exist`), call)
        }
      })

      it('throttling (503) is retried with backoff: the append commits exactly once', async () => {
        const location = kit.location(container)
        const storageOptions = kit.options(kit.viaProxy(proxy))
        const table = await DeltaTable.create(location, { schema: SCHEMA }, { storageOptions })
        try {
          proxy.setRules([{ fault: kit.throttle, times: 3 }])
          const result = await table.append(rows(0, 10))
          assert.equal(result.version, 1n)
          assert.ok(proxy.requests > 3, 'the refused requests were repeated')
          assert.deepEqual(await idsOf(table), range(0, 10))
          proxy.setRules([{ fault: kit.throttle, times: 2, method: 'PUT' }])
          assert.equal((await table.append(rows(10, 5))).version, 2n)
          assert.deepEqual(await idsOf(table), range(0, 15))
        } finally {
          proxy.setRules([])
          await table.close()
        }
      })

      it('persistent throttling: the append fails with a retryable StorageError in bounded time, nothing committed', async () => {
        const location = kit.location(container)
        const storageOptions = kit.options(kit.viaProxy(proxy))
        const table = await DeltaTable.create(location, { schema: SCHEMA }, { storageOptions })
        try {
          await table.append(rows(0, 5))
          proxy.setRules([{ fault: kit.throttle, times: 1_000_000 }])
          const started = performance.now()
          const err = await rejectsTyped(table.append(rows(5, 5)), 'throttled append')
          assert.ok(err instanceof StorageError && err.retryable, String(err))
          assert.match(err.message, /HTTP 503/)
          assert.ok(performance.now() - started < 20_000, 'the retries are bounded')
          proxy.setRules([])
          const reopened = await DeltaTable.open(location, { storageOptions })
          try {
            assert.equal((await reopened.snapshot()).version, 1n)
            assert.deepEqual(await idsOf(reopened), range(0, 5))
            assert.equal((await reopened.append(rows(5, 5))).version, 2n, 'the table takes the next commit')
            assert.deepEqual(await idsOf(reopened), range(0, 10))
          } finally {
            await reopened.close()
          }
        } finally {
          proxy.setRules([])
          await table.close()
        }
      })

      it('a commit answered by nothing but lost responses and refusals: typed error, and the commit is whole once found', async () => {
        const location = kit.location(container)
        const storageOptions = kit.options(kit.viaProxy(proxy), QUICK)
        const table = await DeltaTable.create(location, { schema: SCHEMA }, { storageOptions })
        try {
          await table.append(rows(0, 5))
          const txn = await table.begin()
          await txn.append(rows(100, 7))
          // The commit's put lands but its answer is lost; then the server refuses everything, so
          // the writer cannot look at the log to learn the outcome.
          proxy.setRules([
            { fault: { kind: 'drop-response' }, times: 1, method: 'PUT' },
            { fault: kit.throttle, times: 1_000_000 },
          ])
          const err = await rejectsTyped(txn.commit(), 'commit with a lost answer')
          // The put may have landed and the log cannot be read to tell: the outcome is unknown.
          assert.equal((err as { code?: string }).code, 'DELTA_COMMIT_STATE_UNKNOWN', String(err))
          proxy.setRules([])
          const reopened = await DeltaTable.open(location, { storageOptions })
          try {
            assert.equal((await reopened.snapshot()).version, 2n, 'the commit landed, once')
            assert.deepEqual(await idsOf(reopened), [...range(0, 5), ...range(100, 7)])
          } finally {
            await reopened.close()
          }
        } finally {
          proxy.setRules([])
          await table.close()
        }
      })

      it('the server goes down while a commit is in flight: typed error; after a restart the table is whole', async () => {
        const dir = await mkdtemp(join(tmpdir(), 'delta-rlc-down-'))
        dirs.push(dir)
        let own = await kit.startPersistent(dir)
        let ownProxy: FaultProxy | undefined
        try {
          const bucket = uniqueName('down')
          await kit.createContainer(own.endpoint, bucket)
          ownProxy = await startFaultProxy(own.endpoint)
          const location = kit.location(bucket)
          const table = await DeltaTable.create(
            location,
            { schema: SCHEMA, properties: { 'delta.enableDeletionVectors': 'true' } },
            { storageOptions: kit.options(kit.viaProxy(ownProxy), QUICK) },
          )
          try {
            await table.append(rows(0, 20))
            await table.delete('id < 3')
            const txn = await table.begin()
            await txn.append(rows(50, 10))
            // The commit's put reaches the proxy and hangs there; the server goes down meanwhile.
            const proxyOfServer = ownProxy
            proxyOfServer.setRules([{ fault: { kind: 'hang' }, times: 1, method: 'PUT' }])
            const commit = rejectsTyped(txn.commit(), 'commit while the server goes down')
            await waitFor(() => proxyOfServer.requests >= 1, 'the commit put')
            await own.stop()
            const err = await commit
            // The put went out and no answer came back: it may have landed, so the outcome is unknown.
            assert.equal((err as { code?: string }).code, 'DELTA_COMMIT_STATE_UNKNOWN', String(err))
          } finally {
            await table.close()
          }
          own = await kit.startPersistent(dir)
          const reopened = await DeltaTable.open(location, {
            storageOptions: kit.options(own.endpoint, QUICK),
          })
          try {
            assert.equal((await reopened.snapshot()).version, 2n, 'the in-flight commit did not land')
            assert.deepEqual(await idsOf(reopened), range(3, 17))
            await reopened.append(rows(60, 5))
            await reopened.delete('id = 10')
            assert.deepEqual(await idsOf(reopened), [
              ...range(3, 17).filter((i) => i !== 10),
              ...range(60, 5),
            ])
            assert.equal((await reopened.snapshot()).version, 4n)
          } finally {
            await reopened.close()
          }
        } finally {
          await ownProxy?.stop()
          await own.stop()
        }
      })
    })
  }
})
