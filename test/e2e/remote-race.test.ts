/**
 * Writers as separate processes on one Azurite table: the race harness with its verifier, then
 * writer processes that each act as a host of their own, in the default network namespace and
 * (where `ip netns` works, as root) each in its own network namespace reaching Azurite over a
 * veth link. Every acknowledged commit must be in the log under its txnId, each version holds
 * exactly one of them, and the rows are those of the acknowledged operations, each once.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { parseCommitFile } from '../../src/protocol/action-json.js'
import { commitFileName, LOG_DIR } from '../../src/protocol/log-files.js'
import { renderTerminalReport, runRace } from '../../src/race/index.js'
import { createAzureStore } from '../../src/storage/index.js'
import { DeltaTable } from '../../src/table/delta-table.js'
import { createHostLinks, type HostLinks } from '../helpers/netns.js'
import { type PersistentServer, startAzuriteOn } from '../helpers/persistent-servers.js'
import { azuriteStorageOptions } from '../helpers/remote-backends.js'
import {
  type AckedCommit,
  appendBase,
  type RemoteWriterReport,
  type RemoteWriterTask,
} from '../helpers/remote-writer.js'
import {
  AZURITE_ACCOUNT,
  AZURITE_KEY,
  createAzureContainer,
  startAzurite,
  type TestServer,
  uniqueName,
} from '../helpers/servers.js'

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const WRITER = join(repoRoot, 'test/helpers/remote-writer.ts')
const WRITERS = 3
const ROWS_PER_WRITER = 20
const OPS = 6

/** The connection string writer processes inherit; the emulator's key is public. */
function connectionString(endpoint: string): string {
  return `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${AZURITE_KEY};BlobEndpoint=${endpoint};`
}

/** Runs one writer process; `wrap` puts a command in front of node (such as `ip netns exec`). */
function runWriter(
  task: RemoteWriterTask,
  endpoint: string,
  wrap: readonly string[],
): Promise<RemoteWriterReport> {
  const argv = [process.execPath, '--import', 'tsx', WRITER, JSON.stringify(task)]
  const [command, ...args] = [...wrap, ...argv] as [string, ...string[]]
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, AZURE_STORAGE_CONNECTION_STRING: connectionString(endpoint) },
    })
    let out = ''
    let err = ''
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString()
    })
    child.stderr.on('data', (c: Buffer) => {
      err = (err + c.toString()).slice(-4000)
    })
    child.once('error', reject)
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`writer ${task.writer} exited with ${code}: ${err}`))
      else resolvePromise(JSON.parse(out.trim().split('\n').at(-1) as string) as RemoteWriterReport)
    })
  })
}

/**
 * Creates the shared table, runs the writers from a common start, and checks the log and the rows
 * against what the writers were acknowledged.
 */
async function raceWriters(endpoint: string, container: string, wrapOf: (writer: number) => string[]) {
  const location = `az://${container}/${uniqueName('race')}`
  const storageOptions = azuriteStorageOptions(endpoint)
  const table = await DeltaTable.create(
    location,
    { schema: 'id long not null, owner int', properties: { 'delta.enableDeletionVectors': 'true' } },
    { storageOptions },
  )
  const initial = Array.from({ length: WRITERS * ROWS_PER_WRITER }, (_, i) => i)
  try {
    await table.append(initial.map((id) => ({ id: BigInt(id), owner: Math.floor(id / ROWS_PER_WRITER) })))
    const startAt = Date.now() + 5_000
    const reports = await Promise.all(
      Array.from({ length: WRITERS }, (_, writer) =>
        runWriter(
          { location, writer, rowsPerWriter: ROWS_PER_WRITER, ops: OPS, startAt },
          endpoint,
          wrapOf(writer),
        ),
      ),
    )
    const acked: AckedCommit[] = reports.flatMap((r) => r.acked)
    assert.equal(acked.length, WRITERS * OPS, 'every operation was acknowledged')

    const versions = acked.map((a) => a.version).sort((a, b) => a - b)
    assert.deepEqual(
      versions,
      Array.from({ length: acked.length }, (_, i) => i + 2),
      'each version from 2 on holds exactly one acknowledged commit',
    )
    const store = table.engine.storage
    for (const a of acked) {
      const key = `${LOG_DIR}${commitFileName(BigInt(a.version))}`
      const actions = parseCommitFile(new TextDecoder().decode(await store.read(key)), {
        path: key,
        version: BigInt(a.version),
      })
      const info = actions.find((x) => 'commitInfo' in x)
      assert.ok(info !== undefined && 'commitInfo' in info)
      assert.equal(info.commitInfo.txnId, a.txnId, `version ${a.version} is the acknowledged ${a.kind}`)
    }

    const deleted = new Set(acked.filter((a) => a.kind === 'delete').flatMap((a) => a.ids))
    const appended = acked.filter((a) => a.kind === 'append').flatMap((a) => a.ids)
    const expected = [...initial.filter((id) => !deleted.has(id)), ...appended].sort((a, b) => a - b)
    const reader = await DeltaTable.open(location, { storageOptions })
    try {
      assert.equal((await reader.snapshot()).version, BigInt(acked.length + 1))
      const rows = await reader.scan().toArray()
      assert.deepEqual(
        rows.map((r) => Number(r.id)).sort((a, b) => a - b),
        expected,
        'the rows of every acknowledged operation, each once',
      )
      for (const r of rows) {
        const id = Number(r.id)
        const owner =
          id >= appendBase(0) ? Math.floor((id - appendBase(0)) / 10_000) : Math.floor(id / ROWS_PER_WRITER)
        assert.equal(r.owner, owner, `owner of ${id}`)
      }
    } finally {
      await reader.close()
    }
    return reports
  } finally {
    await table.close()
  }
}

// The three races run side by side, each on its own Azurite: most of each is waiting (server
// starts, writer processes starting and meeting at a common start, the race's fixed duration).
// Their time limits only catch a hang: side by side on a loaded machine, eleven writer processes
// start at once.
describe('remote races', { concurrency: true }, () => {
  describe('the race harness on Azurite', () => {
    let server: TestServer
    let outDir: string
    before(async () => {
      server = await startAzurite()
      outDir = await mkdtemp(join(tmpdir(), 'delta-rlc-remote-race-'))
    })
    after(async () => {
      await server?.stop()
      await rm(outDir, { recursive: true, force: true })
    })

    it('writers as processes on an az:// table; the verifier passes', { timeout: 240_000 }, async () => {
      const container = uniqueName('race')
      const location = `az://${container}/race`
      await createAzureContainer(server.endpoint, container)
      // Writer processes inherit the credentials from the environment, never from their task.
      const saved = process.env.AZURE_STORAGE_CONNECTION_STRING
      process.env.AZURE_STORAGE_CONNECTION_STRING = connectionString(server.endpoint)
      try {
        const report = await runRace({
          location,
          outDir,
          writers: { append: 1, delete: 1, update: 1, merge: 1, optimize: 1 },
          durationMs: 4_000,
          rows: 2_000,
          initialFiles: 4,
          seed: 7,
        })
        const text = renderTerminalReport(report)
        assert.ok(report.ok, text)
        for (const run of report.runs) {
          assert.equal(run.verify?.ok, true, text)
          assert.ok(run.stats.totals.commits > 0, 'writers committed')
          assert.ok(!text.includes(AZURITE_KEY), 'no secret in the report')
        }
        const store = createAzureStore(location, azuriteStorageOptions(server.endpoint).azure)
        const commits: string[] = []
        for await (const f of store.listFrom(LOG_DIR)) commits.push(f.key)
        assert.ok(commits.length > 1, 'the race table lives in the container')
      } finally {
        if (saved === undefined) delete process.env.AZURE_STORAGE_CONNECTION_STRING
        else process.env.AZURE_STORAGE_CONNECTION_STRING = saved
      }
    })
  })

  describe('writer processes as separate hosts of one Azurite table', () => {
    it('in the default network namespace: every acknowledged commit is in the log once, rows match', {
      timeout: 240_000,
    }, async () => {
      const server = await startAzurite({ reuse: false })
      try {
        const container = uniqueName('hosts')
        await createAzureContainer(server.endpoint, container)
        const reports = await raceWriters(server.endpoint, container, () => [])
        assert.equal(reports.length, WRITERS)
      } finally {
        await server.stop()
      }
    })

    describe('each in its own network namespace over a veth link', () => {
      let links: HostLinks | { readonly skip: string }
      let server: PersistentServer | undefined
      before(async () => {
        links = await createHostLinks(WRITERS)
        if ('skip' in links) return
        server = await startAzuriteOn(links.serverAddress)
      })
      after(async () => {
        await server?.stop()
        if (links !== undefined && !('skip' in links)) await links.teardown()
      })

      it('every acknowledged commit is in the log once, rows match', { timeout: 240_000 }, async (t) => {
        if ('skip' in links) {
          t.skip(links.skip)
          return
        }
        const namespaces = links.namespaces
        const endpoint = (server as PersistentServer).endpoint
        assert.match(endpoint, /^http:\/\/10\.200\./, 'Azurite listens on the host end of a veth link')
        const container = uniqueName('netns')
        await createAzureContainer(endpoint, container)
        await raceWriters(endpoint, container, (writer) => [
          'ip',
          'netns',
          'exec',
          namespaces[writer] as string,
        ])
      })
    })
  })
})
