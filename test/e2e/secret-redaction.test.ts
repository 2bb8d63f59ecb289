/**
 * No secret in any output: a SAS token in an `https://...?sig=` location, the account key, the
 * connection string, the S3 secret and session token, a presigned URL's signature and an
 * endpoint's password never appear in errors, `DeltaTable.location`, the CLI's text and `--json`,
 * `util.inspect` / `JSON.stringify` of stores and tables, the race's log, or a writer process's
 * command line (`ps`).
 */
import assert from 'node:assert/strict'
import { fork } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { inspect } from 'node:util'
import {
  ContainerSASPermissions,
  generateBlobSASQueryParameters,
  StorageSharedKeyCredential,
} from '@azure/storage-blob'
import { DeltaTable, isDeltaError, redactLocation } from '../../src/index.js'
import { writerProcessArgs } from '../../src/race/harness.js'
import { runRace } from '../../src/race/index.js'
import { resolveRaceConfig } from '../../src/race/options.js'
import { createAzureStore, createS3Store } from '../../src/storage/index.js'
import { runCliInProcess } from '../helpers/cli-in-process.js'
import {
  AZURITE_ACCOUNT,
  AZURITE_KEY,
  createAzureContainer,
  startAzurite,
  type TestServer,
  uniqueName,
} from '../helpers/servers.js'

const S3_SECRET = 'S3-SECRET-wJalrXUtnFEMIK7MDENG'
const S3_TOKEN = 'S3-SESSION-TOKEN-FwoGZXIvYXdzEJr'
const WORKER = fileURLToPath(new URL('../../src/race/worker.ts', import.meta.url))

/** Throws when `text` holds any of `secrets`. */
function assertClean(text: string, secrets: readonly string[], what: string): void {
  for (const s of secrets)
    assert.ok(!text.includes(s), `${what} holds a secret (${s.slice(0, 12)}...):\n${text}`)
}

describe('redactLocation', () => {
  it('hides the query and a URL password, and leaves local paths alone', () => {
    assert.equal(
      redactLocation('https://acct.blob.core.windows.net/c/t?sv=2024&sig=abc%2Bdef'),
      'https://acct.blob.core.windows.net/c/t?***',
    )
    assert.equal(redactLocation('https://user:pa55@host:9000/x'), 'https://user:***@host:9000/x')
    assert.equal(redactLocation('az://c/t'), 'az://c/t')
    assert.equal(redactLocation('/data/why?/t'), '/data/why?/t')
  })
})

describe('stores and S3 messages', () => {
  const connection = `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${AZURITE_KEY};BlobEndpoint=http://127.0.0.1:1/${AZURITE_ACCOUNT};`
  const stores = () => [
    createAzureStore('az://c/t', { account: AZURITE_ACCOUNT, accountKey: AZURITE_KEY, env: {} }),
    createAzureStore('az://c/t', { connectionString: connection, env: {} }),
    createS3Store('s3://b/t', {
      accessKeyId: 'AKIDEXAMPLE',
      secretAccessKey: S3_SECRET,
      sessionToken: S3_TOKEN,
      endpoint: 'http://minio:pa55w0rdXYZ@127.0.0.1:1',
      env: {},
    }),
  ]
  const secrets = [AZURITE_KEY, connection, S3_SECRET, S3_TOKEN, 'pa55w0rdXYZ']

  it('util.inspect, console.log and JSON.stringify of a store show no credential', () => {
    for (const store of stores()) {
      assertClean(inspect(store, { depth: 8, showHidden: true }), secrets, 'inspect')
      assertClean(JSON.stringify(store), secrets, 'JSON.stringify')
      assertClean(`${inspect({ store }, { depth: 8 })}`, secrets, 'console.log')
      assert.match(JSON.stringify(store), /"root":"(az|s3):\/\/[bc]\/t"/)
    }
  })

  it('a presigned S3 location and an endpoint with a password are echoed redacted', () => {
    const presigned = 's3://b/t?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=5ecre75ecre75ecre7'
    assert.throws(
      () => createS3Store(presigned, { env: {} }),
      (err: Error) => isDeltaError(err, 'DELTA_INVALID_ARGUMENT') && !err.message.includes('5ecre7'),
    )
    assert.throws(
      () => createS3Store('s3://b/t', { endpoint: 'http://minio:pa55w0rdXYZ@[bad', env: {} }),
      (err: Error) => isDeltaError(err, 'DELTA_INVALID_ARGUMENT') && !err.message.includes('pa55w0rdXYZ'),
    )
  })
})

describe('a SAS-bearing location', () => {
  let server: TestServer
  let container: string
  let location: string
  let sig: string
  before(async () => {
    server = await startAzurite()
    container = uniqueName('sas')
    await createAzureContainer(server.endpoint, container)
    const sas = generateBlobSASQueryParameters(
      {
        containerName: container,
        permissions: ContainerSASPermissions.parse('racwdl'),
        expiresOn: new Date(Date.now() + 3_600_000),
      },
      new StorageSharedKeyCredential(AZURITE_ACCOUNT, AZURITE_KEY),
    ).toString()
    sig = new URLSearchParams(sas).get('sig') as string
    location = `https://${AZURITE_ACCOUNT}.blob.core.windows.net/${container}/t?${sas}`
  })
  after(async () => {
    await server?.stop()
  })
  // The location's host would be Azure itself: the store is pointed at the emulator, and
  // authenticates with the location's SAS token.
  const opts = () => ({ storageOptions: { azure: { endpoint: server.endpoint, env: {} } } })

  it('is redacted in table errors, DeltaTable.location and inspect(table)', async () => {
    const secrets = [sig, encodeURIComponent(sig)]
    await assert.rejects(DeltaTable.open(location, opts()), (err: Error & { location?: string }) => {
      assert.ok(isDeltaError(err, 'DELTA_TABLE_NOT_FOUND'), String(err))
      assertClean(err.message, secrets, 'TableNotFoundError')
      assert.equal(err.location, `https://${AZURITE_ACCOUNT}.blob.core.windows.net/${container}/t?***`)
      return true
    })
    const table = await DeltaTable.create(location, { schema: 'id long' }, opts())
    try {
      await table.append([{ id: 1n }])
      assert.equal(table.location, redactLocation(location))
      assertClean(inspect(table, { depth: 6 }), [...secrets, AZURITE_KEY], 'inspect(table)')
      assertClean(inspect((await table.snapshot()).location), secrets, 'snapshot.location')
    } finally {
      await table.close()
    }
    await assert.rejects(DeltaTable.create(location, { schema: 'id long' }, opts()), (err: Error) => {
      assert.ok(isDeltaError(err, 'DELTA_TABLE_ALREADY_EXISTS'))
      assertClean(`${err.message} ${JSON.stringify(err)}`, secrets, 'TableAlreadyExistsError')
      return true
    })
  })

  it('is redacted in the CLI: create, describe, --json and errors', async () => {
    // A store the CLI reaches here (the https location's host would be Azure itself), with a
    // query as a SAS token is one: every command echoes it.
    const mem = `memory://${uniqueName('cli')}?sv=2024&sig=CLISECRETSIG`
    const outputs: string[] = []
    for (const args of [
      ['create', mem, '--schema', 'id long', '--json'],
      ['describe', mem, '--json'],
      ['describe', mem],
      ['create', mem, '--schema', 'id long'],
      ['checkpoint', mem, '--json'],
      // Unreachable: errors, as text and as JSON, with the cause chain.
      ['describe', location, '--json', '--verbose'],
    ]) {
      const r = await runCliInProcess(args)
      outputs.push(r.stdout, r.stderr)
    }
    const all = outputs.join('\n')
    assertClean(all, ['CLISECRETSIG', 'sv=2024', sig, encodeURIComponent(sig)], 'CLI output')
    assert.match(outputs[0] as string, /"table": "memory:\/\/cli-[^"]*\?\*\*\*"/)
  })

  it('is redacted in the race log and refused by the race command', async () => {
    const out = await mkdtemp(join(tmpdir(), 'delta-rlc-race-sas-'))
    const lines: string[] = []
    try {
      // The location's host is not reachable here: the race stops at creating its table.
      await assert.rejects(
        runRace(
          { location: 'https://acct.blob.core.windows.net/c/race?sv=1&sig=RACESECRETSIG', outDir: out },
          { log: (m) => lines.push(m) },
        ),
        (err: Error) => !err.message.includes('RACESECRETSIG'),
      )
      assert.ok(lines.length > 0)
      assertClean(lines.join('\n'), ['RACESECRETSIG'], 'race log')
      const refused = await runCliInProcess(['race', location])
      assert.equal(refused.code, 1, refused.stderr)
      assert.match(refused.stderr, /runs on a local directory/)
      assertClean(refused.stderr, [sig], 'race usage error')
      const az = await runCliInProcess(['race', 'az://c/t'])
      assert.equal(az.code, 1, az.stderr)
    } finally {
      await rm(out, { recursive: true, force: true })
    }
  })

  it("keeps a writer's location off its command line and hands it over by environment", async () => {
    const config = resolveRaceConfig({
      location: 'https://acct.blob.core.windows.net/c/w?sv=1&sig=WRITERSECRET',
    })
    const task = {
      config,
      writer: config.writers[0]!,
      eventsPath: join(tmpdir(), 'unused.jsonl'),
      incarnation: 0,
      deadline: 1,
    }
    const { args, env } = writerProcessArgs(task)
    const child = fork(WORKER, args, {
      env,
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    })
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()))
    try {
      const cmdline = readFileSync(`/proc/${child.pid}/cmdline`, 'utf8')
      assert.match(cmdline, /acct\.blob\.core\.windows\.net\/c\/w\?\*\*\*/)
      assertClean(cmdline, ['WRITERSECRET'], 'the writer command line')
      // The real location is in the environment, which only this user can read.
      assert.ok(readFileSync(`/proc/${child.pid}/environ`, 'utf8').includes('sig=WRITERSECRET'))
    } finally {
      child.kill('SIGKILL')
      await exited
    }
  })
})
