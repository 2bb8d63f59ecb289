/**
 * gs:// tables end to end on fake-gcs-server, as the Azurite suites run them: commits of every
 * operation kind and two writers committing against each other (reconciled where disjoint,
 * aborted on the same row); the race harness with its verifier, writers as processes; and writer
 * processes killed (SIGKILL) at random points of a commit, after which every acknowledged commit
 * is in the log once, the rows are a serial replay of the log, and VACUUM removes exactly the
 * files no version references. Skipped with a reason when fake-gcs-server is not installed.
 *
 * Child processes reach the server through `STORAGE_EMULATOR_HOST`, as a user's would.
 * DELTA_RLC_GCS_CRASH_KILLS sets the number of killed writers (default 4; the local crash test
 * kills 200).
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { ConcurrentModificationError } from '../../src/errors/index.js'
import { LOG_DIR } from '../../src/protocol/log-files.js'
import { renderTerminalReport, runRace } from '../../src/race/index.js'
import { createGcsStore, type ObjectStore } from '../../src/storage/index.js'
import { DeltaTable } from '../../src/table/delta-table.js'
import { createGcsBucket, fakeGcsUnavailable, startFakeGcs } from '../helpers/gcs-server.js'
import { testEngineOptions } from '../helpers/remote-backends.js'
import { type TestServer, uniqueName } from '../helpers/servers.js'

const repoRoot = fileURLToPath(new URL('../..', import.meta.url))
const CRASH_WORKER = fileURLToPath(new URL('../helpers/crash-worker.ts', import.meta.url))
const KILLS = Number(process.env.DELTA_RLC_GCS_CRASH_KILLS ?? 4)
const PHASES = ['before-data', 'after-data', 'after-dv', 'before-log', 'after-log'] as const

const ids = (rows: readonly Record<string, unknown>[]) =>
  rows.map((r) => Number(r.id as bigint)).sort((a, b) => a - b)
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i)

describe('gs:// tables on fake-gcs-server', { skip: fakeGcsUnavailable(), concurrency: true }, () => {
  let server: TestServer
  let bucket: string
  let savedHost: string | undefined
  const scratch: string[] = []

  before(async () => {
    server = await startFakeGcs()
    bucket = uniqueName('tables')
    await createGcsBucket(server.endpoint, bucket)
    savedHost = process.env.STORAGE_EMULATOR_HOST
    process.env.STORAGE_EMULATOR_HOST = server.endpoint
  })
  after(async () => {
    if (savedHost === undefined) delete process.env.STORAGE_EMULATOR_HOST
    else process.env.STORAGE_EMULATOR_HOST = savedHost
    await server?.stop()
    await Promise.all(scratch.map((d) => rm(d, { recursive: true, force: true })))
  })

  const fresh = (stem: string) => {
    const location = `gs://${bucket}/${uniqueName(stem)}`
    const options = {
      storageOptions: { gcs: { endpoint: server.endpoint, env: {} } },
      engineOptions: testEngineOptions(),
    }
    return { location, options, store: createGcsStore(location, { endpoint: server.endpoint, env: {} }) }
  }

  it('commits every operation kind; disjoint concurrent deletes reconcile, one row twice aborts', async () => {
    const { location, options, store } = fresh('ops')
    const table = await DeltaTable.create(
      location,
      { schema: 'id long not null, v int', properties: { 'delta.enableDeletionVectors': 'true' } },
      { ...options, conflicts: 'all' },
    )
    const other = await DeltaTable.open(location, { ...options, conflicts: 'all' })
    try {
      await table.append(range(0, 20).map((i) => ({ id: BigInt(i), v: i })))
      await table.delete('id < 2')
      await table.update({ where: 'id = 5', set: { v: '500' } })
      await table.merge(
        [
          { id: 6n, v: 600 },
          { id: 100n, v: 1 },
        ],
        {
          on: 'target.id = source.id',
          whenMatched: [{ update: { v: 'source.v' } }],
          whenNotMatched: [{ insert: { id: 'source.id', v: 'source.v' } }],
        },
      )
      await table.optimize()
      // Two writers delete disjoint rows of one file: the second commit is reconciled.
      const a = await table.begin()
      const b = await other.begin()
      await a.delete('id = 10')
      await b.delete('id = 11')
      const first = await a.commit()
      const second = await b.commit()
      assert.equal(second.version, first.version + 1n)
      assert.ok(second.reconciliations.length > 0, 'the second delete was reconciled, not aborted')
      // Both delete one row: the second aborts.
      const c = await table.begin()
      const d = await other.begin()
      await c.delete('id = 12')
      await d.delete('id = 12')
      await c.commit()
      await assert.rejects(() => d.commit(), ConcurrentModificationError)

      const rows = await table.scan().toArray()
      assert.deepEqual(ids(rows), [...range(2, 10), ...range(13, 20), 100])
      assert.equal(rows.find((r) => r.id === 5n)?.v, 500)
      assert.equal(rows.find((r) => r.id === 6n)?.v, 600)
      // The log is in the bucket, one commit per version.
      const versions: string[] = []
      for await (const f of store.listFrom(`${LOG_DIR}0`)) if (f.key.endsWith('.json')) versions.push(f.key)
      assert.equal(versions.length, Number((await table.snapshot()).version) + 1)
    } finally {
      await other.close()
      await table.close()
    }
  })

  it('the race harness with writers as processes on a gs:// table; the verifier passes', {
    timeout: 240_000,
  }, async () => {
    const { location } = fresh('race')
    const outDir = await mkdtemp(join(tmpdir(), 'delta-rlc-gcs-race-'))
    scratch.push(outDir)
    const report = await runRace({
      location,
      outDir,
      writers: { append: 1, delete: 1, update: 1, merge: 1, optimize: 1 },
      durationMs: 4_000,
      rows: 2_000,
      initialFiles: 4,
      seed: 11,
    })
    const text = renderTerminalReport(report)
    assert.ok(report.ok, text)
    for (const run of report.runs) {
      assert.equal(run.verify?.ok, true, text)
      assert.ok(run.stats.totals.commits > 0, 'writers committed')
    }
  })

  it(`${KILLS} writer processes killed at random points of a commit leave a consistent gs:// table`, {
    timeout: 300_000,
  }, async () => {
    const { location, options, store } = fresh('crash')
    const TABLE = {
      schema: 'id long not null, seq int',
      properties: { 'delta.enableDeletionVectors': 'true', 'delta.checkpointInterval': '7' },
    }
    await (await DeltaTable.create(location, TABLE, options)).close()
    const table = await DeltaTable.open(location, options)
    try {
      const acked = await crashLoop(table, location, KILLS, 29)
      const snap = await table.snapshot()
      const seqByVersion = new Map<bigint, number>()
      const referenced = new Set<string>()
      for (let v = 1n; v <= snap.version; v++) {
        const s = await table.snapshot({ version: v })
        for (const f of await s.files()) referenced.add(decodeURIComponent(f.path))
        const seq = Number(s.setTransactions().get('writer')?.version)
        const prev = seqByVersion.get(v - 1n)
        assert.ok(
          prev === undefined || seq === prev + 1,
          `version ${v} applies op ${seq} right after ${prev}`,
        )
        seqByVersion.set(v, seq)
        await table.scan({ version: v }).count()
      }
      const applied = [...seqByVersion.values()]
      assert.equal(new Set(applied).size, applied.length, 'no operation applied twice')
      for (const [seq, version] of acked) {
        assert.equal(seqByVersion.get(version), seq, `acknowledged op ${seq} is version ${version}`)
      }
      const rows = ids(await table.scan({ columns: ['id'] }).toArray())
      assert.deepEqual(rows, replay(applied))

      const onStore = await dataKeys(store)
      const orphans = onStore.filter((k) => !referenced.has(k))
      // The orphans are untracked files written minutes ago: VACUUM keeps them for an hour
      // whatever the retention (a writer may be about to commit them), and deletes no live file.
      const vacuumed = await table.vacuum({ retentionHours: 0, enforceRetentionDuration: false })
      assert.deepEqual(
        vacuumed.files.filter((f) => f.endsWith('.parquet') && !orphans.includes(f)),
        [],
        'VACUUM deletes no data file a version references',
      )
      assert.deepEqual(
        vacuumed.files.filter((f) => orphans.includes(f)),
        [],
        'VACUUM keeps untracked files younger than its minimum age',
      )
      const live = new Set((await snap.files()).map((f) => decodeURIComponent(f.path)))
      assert.deepEqual((await dataKeys(store)).filter((k) => !orphans.includes(k)).sort(), [...live].sort())
      assert.deepEqual(ids(await table.scan({ columns: ['id'] }).toArray()), rows)
    } finally {
      await table.close()
    }
  })

  async function crashLoop(table: DeltaTable, location: string, kills: number, seed: number) {
    let rand = seed
    const next = () => {
      rand = (Math.imul(rand, 1103515245) + 12345) >>> 0
      return rand / 2 ** 32
    }
    const acked = new Map<number, bigint>()
    let killed = 0
    while (killed < kills) {
      const recorded = (await table.snapshot()).setTransactions().get('writer')?.version
      const start = recorded === undefined ? 0 : Number(recorded) + 1
      const phase = PHASES[Math.floor(next() * PHASES.length)] as string
      const nth = 1 + Math.floor(next() * 3)
      const r = await runCrashWorker([location, 'writer', String(start), '6', phase, String(nth)])
      for (const [s, v] of r.acks) acked.set(s, v)
      if (r.killed) killed++
    }
    return acked
  }
})

/** Serial replay of operations (see crash-worker.ts): even appends ten ids, odd deletes five. */
function replay(seqs: readonly number[]): number[] {
  const live = new Set<number>()
  for (const seq of seqs) {
    if (seq % 2 === 0) for (let i = 0; i < 10; i++) live.add(seq * 10 + i)
    else for (let i = 0; i < 5; i++) live.delete((seq - 1) * 10 + i)
  }
  return [...live].sort((a, b) => a - b)
}

async function dataKeys(store: ObjectStore): Promise<string[]> {
  const keys: string[] = []
  for await (const f of store.listRecursive('')) {
    if (f.key.endsWith('.parquet') && !f.key.startsWith(LOG_DIR)) keys.push(f.key)
  }
  return keys
}

function runCrashWorker(args: string[]): Promise<{ acks: Array<[number, bigint]>; killed: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CRASH_WORKER, ...args], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => {
      out += d
    })
    child.stderr.on('data', (d) => {
      err = (err + d).slice(-4000)
    })
    child.on('error', reject)
    child.on('exit', (code, signal) => {
      const acks = out
        .split('\n')
        .filter((l) => l.startsWith('ACK '))
        .map((l) => {
          const [, s, v] = l.split(' ')
          return [Number(s), BigInt(v as string)] as [number, bigint]
        })
      if (signal === 'SIGKILL') resolve({ acks, killed: true })
      else if (code === 0) resolve({ acks, killed: false })
      else reject(new Error(`crash worker failed (${code}): ${err}`))
    })
  })
}
