/**
 * Put-if-absent across OS processes on the remote stores: eight writer processes race to create
 * the same keys on Azurite, and on s3rver with the conditional-put guard. Every key must end with
 * exactly one winner, every loser must get FileAlreadyExistsError, and the stored object must be
 * the winner's.
 */
import assert from 'node:assert/strict'
import { type ChildProcess, fork } from 'node:child_process'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { createAzureStore, createS3Store, type ObjectStore } from '../../src/storage/index.js'
import {
  AZURITE_ACCOUNT,
  AZURITE_KEY,
  createAzureContainer,
  createS3Bucket,
  S3RVER_CREDENTIALS,
  startAzurite,
  startS3rver,
  type TestServer,
  uniqueName,
} from '../helpers/servers.js'
import { checkRaceRecord, raceKey } from '../helpers/store-race-worker.js'
import type { RaceWorkerMessage, RaceWorkerReport, RaceWorkerSpec } from './remote-store-race-worker.js'

const WRITERS = 8
const KEYS = 200
const TIMEOUT_MS = 60_000

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const workerPath = path.join(repoRoot, 'test/contract/remote-store-race-worker.ts')

interface Worker {
  readonly child: ChildProcess
  readonly ready: Promise<void>
  readonly report: Promise<RaceWorkerReport>
}

function spawnWorker(spec: RaceWorkerSpec): Worker {
  const child = fork(workerPath, [JSON.stringify(spec)], {
    cwd: repoRoot,
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  let onReady: () => void = () => {}
  const ready = new Promise<void>((resolve) => {
    onReady = resolve
  })
  const report = new Promise<RaceWorkerReport>((resolve, reject) => {
    child.on('message', (message: RaceWorkerMessage) => {
      if (message.type === 'ready') onReady()
      else resolve(message.report)
    })
    child.on('error', reject)
    child.on('exit', (code) =>
      reject(new Error(`writer ${spec.writer} exited with code ${code} before reporting`)),
    )
  })
  return { child, ready, report }
}

interface RaceTarget {
  readonly name: string
  start(): Promise<TestServer>
  prepare(server: TestServer, container: string): Promise<void>
  spec(server: TestServer, location: string, writer: number): RaceWorkerSpec
  open(server: TestServer, location: string): ObjectStore
}

const TARGETS: readonly RaceTarget[] = [
  {
    name: 'azure (Azurite)',
    start: () => startAzurite(),
    prepare: (server, container) => createAzureContainer(server.endpoint, container),
    spec: (server, location, writer) => ({
      backend: 'azure',
      location,
      endpoint: server.endpoint,
      user: AZURITE_ACCOUNT,
      secret: AZURITE_KEY,
      writer,
      keyCount: KEYS,
    }),
    open: (server, location) =>
      createAzureStore(location, {
        endpoint: server.endpoint,
        account: AZURITE_ACCOUNT,
        accountKey: AZURITE_KEY,
        env: {},
      }),
  },
  {
    name: 's3 (s3rver with the conditional-put guard)',
    start: () => startS3rver(),
    prepare: (server, bucket) => createS3Bucket(server.endpoint, bucket),
    spec: (server, location, writer) => ({
      backend: 's3',
      location,
      endpoint: server.endpoint,
      user: S3RVER_CREDENTIALS.accessKeyId,
      secret: S3RVER_CREDENTIALS.secretAccessKey,
      writer,
      keyCount: KEYS,
    }),
    open: (server, location) =>
      createS3Store(location, { endpoint: server.endpoint, ...S3RVER_CREDENTIALS, env: {} }),
  },
]

for (const target of TARGETS) {
  describe(`${target.name} put-if-absent across processes`, () => {
    let server: TestServer
    let workers: Worker[] = []

    before(async () => {
      server = await target.start()
    })
    after(async () => {
      for (const w of workers) if (w.child.exitCode === null) w.child.kill()
      await server.stop()
    })

    it(`gives each of ${KEYS} keys exactly one winner among ${WRITERS} writer processes`, {
      timeout: TIMEOUT_MS,
    }, async () => {
      const container = 'race'
      await target.prepare(server, container)
      const location = `${target.name.startsWith('azure') ? 'az' : 's3'}://${container}/${uniqueName('t')}`
      workers = Array.from({ length: WRITERS }, (_, w) => spawnWorker(target.spec(server, location, w)))
      await Promise.all(workers.map((w) => w.ready))
      for (const w of workers) w.child.send('go')
      const reports = await Promise.all(workers.map((w) => w.report))

      for (const r of reports) assert.deepEqual(r.errors, [], `writer ${r.writer} saw unexpected errors`)
      const winnerOf = new Map<number, number>()
      for (const r of reports) {
        for (const k of r.won) {
          assert.equal(
            winnerOf.get(k),
            undefined,
            `key ${k} won by writers ${winnerOf.get(k)} and ${r.writer}`,
          )
          winnerOf.set(k, r.writer)
        }
      }
      assert.equal(winnerOf.size, KEYS)
      // Every other attempt lost with FileAlreadyExistsError.
      assert.equal(
        reports.reduce((sum, r) => sum + r.lost, 0),
        KEYS * (WRITERS - 1),
      )

      const store = target.open(server, location)
      for (let k = 0; k < KEYS; k++) {
        assert.equal(checkRaceRecord(await store.read(raceKey(k)), k), winnerOf.get(k), `content of key ${k}`)
      }
      let listed = 0
      for await (const _ of store.listFrom('race/')) listed++
      assert.equal(listed, KEYS)
    })
  })
}
