/**
 * One writer process of the multi-process put-if-absent race on the remote stores (forked by
 * test/contract/remote-store-race.test.ts with an IPC channel).
 *
 * Usage: `node --import tsx remote-store-race-worker.ts <writerId> <keyCount>`
 *
 * The writer says `ready`, then for each `race` message tries to create every raced key on the
 * store it names with `ifNotExists`, and reports the keys it won and any error other than
 * FileAlreadyExistsError. It exits when the parent disconnects.
 */
import { FileAlreadyExistsError } from '../../src/errors/index.js'
import type { ObjectStore } from '../../src/storage/object-store.js'
import { raceKey, raceRecord } from '../helpers/store-race-worker.js'

/** The store a race runs on. */
export interface RaceTargetSpec {
  readonly backend: 'azure' | 's3' | 'gcs'
  readonly location: string
  readonly endpoint: string
  /** Account and key for Azure, access key pair for S3 (unused for the GCS emulator). */
  readonly user: string
  readonly secret: string
}

/** What a writer reports after one race. */
export interface RaceWorkerReport {
  readonly writer: number
  readonly won: number[]
  readonly lost: number
  readonly errors: string[]
}

/** Message sent to a writer. */
export interface RaceCommand {
  readonly type: 'race'
  readonly target: RaceTargetSpec
}

/** Message sent to the parent. */
export type RaceWorkerMessage =
  | { readonly type: 'ready' }
  | { readonly type: 'report'; readonly report: RaceWorkerReport }

async function openTarget(spec: RaceTargetSpec): Promise<ObjectStore> {
  // Short backoffs: contention is the point of the race, and the servers are local.
  const retry = { baseDelayMs: 5, maxDelayMs: 200 }
  // Each SDK is loaded only when a race needs it: eight processes start on two cores.
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
  if (spec.backend === 'gcs') {
    const { createGcsStore } = await import('../../src/storage/gcs-store.js')
    return createGcsStore(spec.location, { endpoint: spec.endpoint, retry, env: {} })
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

async function race(store: ObjectStore, writer: number, keyCount: number): Promise<RaceWorkerReport> {
  const won: number[] = []
  const errors: string[] = []
  let lost = 0
  for (let i = 0; i < keyCount; i++) {
    try {
      await store.put(raceKey(i), raceRecord(writer, i), { ifNotExists: true })
      won.push(i)
    } catch (err) {
      if (err instanceof FileAlreadyExistsError) lost++
      else errors.push(`${raceKey(i)}: ${String(err)}`)
    }
  }
  return { writer, won, lost, errors }
}

function main(): void {
  const send = process.send?.bind(process)
  const writer = Number(process.argv[2])
  const keyCount = Number(process.argv[3])
  if (send === undefined || !Number.isInteger(writer) || !Number.isInteger(keyCount)) {
    process.stderr.write(
      'remote-store-race-worker must be forked with an IPC channel: <writerId> <keyCount>\n',
    )
    process.exitCode = 2
    return
  }
  process.on('disconnect', () => process.exit(0))
  process.on('message', (command: RaceCommand) => {
    void openTarget(command.target)
      .then((store) => race(store, writer, keyCount))
      .catch((err: unknown) => ({ writer, won: [], lost: 0, errors: [`setup: ${String(err)}`] }))
      .then((report) => send({ type: 'report', report } satisfies RaceWorkerMessage))
  })
  send({ type: 'ready' } satisfies RaceWorkerMessage)
}

if (process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].replace(/\\/g, '/'))) {
  main()
}
