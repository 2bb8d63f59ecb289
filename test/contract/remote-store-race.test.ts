/**
 * Put-if-absent across OS processes on the remote stores: eight writer processes race to create
 * the same keys on Azurite, on S3 (moto, which refuses a second `If-None-Match: *` put itself;
 * s3rver with the conditional-put guard where moto is not installed) and on fake-gcs-server
 * (skipped with a reason where it is not installed). Every key must end with
 * exactly one winner, every loser must get FileAlreadyExistsError, and the stored object must be
 * the winner's. The same eight processes run both races, one after the other.
 */
import assert from 'node:assert/strict'
import { type ChildProcess, fork } from 'node:child_process'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { createAzureStore, createGcsStore, createS3Store, type ObjectStore } from '../../src/storage/index.js'
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
import { checkRaceRecord, raceKey } from '../helpers/store-race-worker.js'
import type {
  RaceCommand,
  RaceTargetSpec,
  RaceWorkerMessage,
  RaceWorkerReport,
} from './remote-store-race-worker.js'

const WRITERS = 8
const KEYS = 200
const TIMEOUT_MS = 60_000

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const workerPath = path.join(repoRoot, 'test/contract/remote-store-race-worker.ts')

class Worker {
  readonly child: ChildProcess
  readonly ready: Promise<void>
  #pending: ((report: RaceWorkerReport) => void) | undefined
  #failed: ((err: Error) => void) | undefined

  constructor(writer: number) {
    this.child = fork(workerPath, [String(writer), String(KEYS)], {
      cwd: repoRoot,
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    this.ready = new Promise<void>((resolve, reject) => {
      this.child.on('message', (message: RaceWorkerMessage) => {
        if (message.type === 'ready') resolve()
        else this.#pending?.(message.report)
      })
      this.child.on('exit', (code) => {
        const err = new Error(`writer ${writer} exited with code ${code}`)
        reject(err)
        this.#failed?.(err)
      })
    })
  }

  /** Starts one race; resolves with the writer's report. */
  race(target: RaceTargetSpec): Promise<RaceWorkerReport> {
    return new Promise((resolve, reject) => {
      this.#pending = resolve
      this.#failed = reject
      this.child.send({ type: 'race', target } satisfies RaceCommand)
    })
  }
}

interface RaceTarget {
  readonly name: string
  /** Why the target cannot run here, if it cannot. */
  readonly unavailable?: string | undefined
  server: TestServer | undefined
  start(): Promise<TestServer>
  prepare(server: TestServer, container: string): Promise<void>
  spec(server: TestServer, location: string): RaceTargetSpec
  open(server: TestServer, location: string): ObjectStore
}

const TARGETS: readonly RaceTarget[] = [
  {
    name: 'azure (Azurite)',
    server: undefined,
    start: () => startAzurite(),
    prepare: (server, container) => createAzureContainer(server.endpoint, container),
    spec: (server, location) => ({
      backend: 'azure',
      location: `az://${location}`,
      endpoint: server.endpoint,
      user: AZURITE_ACCOUNT,
      secret: AZURITE_KEY,
    }),
    open: (server, location) =>
      createAzureStore(`az://${location}`, {
        endpoint: server.endpoint,
        account: AZURITE_ACCOUNT,
        accountKey: AZURITE_KEY,
        env: {},
      }),
  },
  {
    name: s3ServerName() === 'moto' ? 's3 (moto)' : 's3 (s3rver with the conditional-put guard)',
    server: undefined,
    start: () => startS3(),
    prepare: (server, bucket) => createS3Bucket(server.endpoint, bucket),
    spec: (server, location) => ({
      backend: 's3',
      location: `s3://${location}`,
      endpoint: server.endpoint,
      user: S3RVER_CREDENTIALS.accessKeyId,
      secret: S3RVER_CREDENTIALS.secretAccessKey,
    }),
    open: (server, location) =>
      createS3Store(`s3://${location}`, { endpoint: server.endpoint, ...S3RVER_CREDENTIALS, env: {} }),
  },
  {
    name: 'gcs (fake-gcs-server)',
    unavailable: fakeGcsUnavailable(),
    server: undefined,
    start: () => startFakeGcs(),
    prepare: (server, bucket) => createGcsBucket(server.endpoint, bucket),
    spec: (server, location) => ({
      backend: 'gcs',
      location: `gs://${location}`,
      endpoint: server.endpoint,
      user: '',
      secret: '',
    }),
    open: (server, location) => createGcsStore(`gs://${location}`, { endpoint: server.endpoint, env: {} }),
  },
]

describe('remote put-if-absent across processes', () => {
  let workers: Worker[] = []

  before(async () => {
    // Servers and writers start together: both are mostly process start-up.
    workers = Array.from({ length: WRITERS }, (_, w) => new Worker(w))
    await Promise.all([
      ...TARGETS.filter((t) => t.unavailable === undefined).map(async (t) => {
        t.server = await t.start()
      }),
      ...workers.map((w) => w.ready),
    ])
  })
  after(async () => {
    for (const w of workers) if (w.child.exitCode === null) w.child.disconnect()
    for (const t of TARGETS) await t.server?.stop()
  })

  for (const target of TARGETS) {
    it(`${target.name}: each of ${KEYS} keys has exactly one winner among ${WRITERS} writer processes`, {
      timeout: TIMEOUT_MS,
      skip: target.unavailable,
    }, async () => {
      const server = target.server!
      await target.prepare(server, 'race')
      const location = `race/${uniqueName('t')}`
      const reports = await Promise.all(workers.map((w) => w.race(target.spec(server, location))))

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
  }
})
