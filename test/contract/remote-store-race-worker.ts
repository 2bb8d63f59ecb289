/**
 * One writer process of the multi-process put-if-absent race on a remote store (forked by
 * test/contract/remote-store-race.test.ts with an IPC channel).
 *
 * Usage: `node --import tsx remote-store-race-worker.ts '<RaceWorkerSpec as JSON>'`
 *
 * The writer says `ready`, waits for `go`, then tries to create every raced key with
 * `ifNotExists` and reports the keys it won and any error other than FileAlreadyExistsError.
 */
import { FileAlreadyExistsError } from '../../src/errors/index.js'
import type { ObjectStore } from '../../src/storage/object-store.js'
import { raceKey, raceRecord } from '../helpers/store-race-worker.js'

/** What the parent tells a writer. */
export interface RaceWorkerSpec {
  readonly backend: 'azure' | 's3'
  readonly location: string
  readonly endpoint: string
  /** Account and key for Azure, access key pair for S3. */
  readonly user: string
  readonly secret: string
  readonly writer: number
  readonly keyCount: number
}

/** What a writer reports. */
export interface RaceWorkerReport {
  readonly writer: number
  readonly won: number[]
  readonly lost: number
  readonly errors: string[]
}

/** Message sent to the parent. */
export type RaceWorkerMessage =
  | { readonly type: 'ready' }
  | { readonly type: 'report'; readonly report: RaceWorkerReport }

async function openSpecStore(spec: RaceWorkerSpec): Promise<ObjectStore> {
  // Short backoffs: contention is the point of the race, and the servers are local.
  const retry = { baseDelayMs: 5, maxDelayMs: 200 }
  // Only the SDK in use is loaded: eight processes start on two cores.
  if (spec.backend === 'azure') {
    const { createAzureStore } = await import('../../src/storage/azure-store.js')
    return createAzureStore(spec.location, {
      endpoint: spec.endpoint,
      account: spec.user,
      accountKey: spec.secret,
      retry,
      env: {},
    })
  }
  const { createS3Store } = await import('../../src/storage/s3-store.js')
  return createS3Store(spec.location, {
    endpoint: spec.endpoint,
    accessKeyId: spec.user,
    secretAccessKey: spec.secret,
    retry,
    env: {},
  })
}

async function main(): Promise<void> {
  const send = process.send?.bind(process)
  const specText = process.argv[2]
  if (send === undefined || specText === undefined) {
    process.stderr.write('remote-store-race-worker must be forked with an IPC channel and a JSON spec\n')
    process.exitCode = 2
    return
  }
  const spec = JSON.parse(specText) as RaceWorkerSpec
  const store = await openSpecStore(spec)
  const go = new Promise<void>((resolve) => process.once('message', () => resolve()))
  send({ type: 'ready' } satisfies RaceWorkerMessage)
  await go
  const won: number[] = []
  const errors: string[] = []
  let lost = 0
  for (let i = 0; i < spec.keyCount; i++) {
    try {
      await store.put(raceKey(i), raceRecord(spec.writer, i), { ifNotExists: true })
      won.push(i)
    } catch (err) {
      if (err instanceof FileAlreadyExistsError) lost++
      else errors.push(`${raceKey(i)}: ${String(err)}`)
    }
  }
  const report: RaceWorkerReport = { writer: spec.writer, won, lost, errors }
  send({ type: 'report', report } satisfies RaceWorkerMessage, () => process.disconnect())
}

if (process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].replace(/\\/g, '/'))) {
  await main()
}
