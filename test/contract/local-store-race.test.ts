/**
 * Put-if-absent across OS processes on the local store: eight writers race to create the same
 * keys while a ninth process reads each key the moment it appears.
 */
import assert from 'node:assert/strict'
import { type ChildProcess, fork } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { createLocalStore } from '../../src/storage/index.js'
import {
  checkRaceRecord,
  type ReaderReport,
  raceKey,
  type WorkerMessage,
  type WriterReport,
} from '../helpers/store-race-worker.js'

const WRITERS = 8
const KEYS = 1000
const TIMEOUT_MS = 90_000

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const workerPath = path.join(repoRoot, 'test/helpers/store-race-worker.ts')

interface Worker {
  readonly child: ChildProcess
  readonly ready: Promise<void>
  readonly report: Promise<WriterReport | ReaderReport>
}

function spawnWorker(args: string[]): Worker {
  const child = fork(workerPath, args, {
    cwd: repoRoot,
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  let onReady: () => void = () => {}
  const ready = new Promise<void>((resolve) => {
    onReady = resolve
  })
  const report = new Promise<WriterReport | ReaderReport>((resolve, reject) => {
    child.on('message', (message: WorkerMessage) => {
      if (message.type === 'ready') onReady()
      else resolve(message.report)
    })
    child.on('error', reject)
    child.on('exit', (code) =>
      reject(new Error(`worker ${args.join(' ')} exited with code ${code} before reporting`)),
    )
  })
  return { child, ready, report }
}

describe('local store put-if-absent across processes', () => {
  let dir: string
  let workers: Worker[] = []

  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'delta-rlc-race-'))
  })
  after(async () => {
    for (const w of workers) if (w.child.exitCode === null) w.child.kill()
    await fs.rm(dir, { recursive: true, force: true })
  })

  it(`gives each of ${KEYS} keys exactly one winner among ${WRITERS} processes, and readers never see a partial object`, {
    timeout: TIMEOUT_MS,
  }, async () => {
    const root = path.join(dir, 'table')
    const writers = Array.from({ length: WRITERS }, (_, w) =>
      spawnWorker(['writer', root, String(w), String(KEYS)]),
    )
    const reader = spawnWorker(['reader', root, String(KEYS)])
    workers = [...writers, reader]
    await Promise.all(workers.map((w) => w.ready))
    for (const w of workers) w.child.send('go')
    const writerReports = (await Promise.all(writers.map((w) => w.report))) as WriterReport[]
    const readerReport = (await reader.report) as ReaderReport

    for (const r of writerReports) assert.deepEqual(r.errors, [], `writer ${r.writer} saw unexpected errors`)
    assert.deepEqual(readerReport.errors, [])

    // Exactly one winner per key, by the writers' own accounts.
    const winnerOf = new Map<number, number>()
    for (const r of writerReports) {
      for (const k of r.won) {
        assert.equal(winnerOf.get(k), undefined, `key ${k} won by writers ${winnerOf.get(k)} and ${r.writer}`)
        winnerOf.set(k, r.writer)
      }
    }
    assert.equal(
      writerReports.reduce((sum, r) => sum + r.won.length, 0),
      KEYS,
    )
    assert.equal(winnerOf.size, KEYS)

    // What the reader saw, and what is stored now, is the content of that winner.
    assert.equal(readerReport.partialReads, 0)
    assert.equal(readerReport.tempFilesListed, 0)
    const store = createLocalStore(root)
    for (let k = 0; k < KEYS; k++) {
      assert.equal(readerReport.seen[k], winnerOf.get(k), `reader saw another writer's content at key ${k}`)
      assert.equal(checkRaceRecord(await store.read(raceKey(k)), k), winnerOf.get(k))
    }

    // No temporary file is left behind, and the listing holds exactly the raced keys.
    const names = await fs.readdir(path.join(root, 'race'))
    assert.deepEqual(
      names.filter((n) => n.startsWith('.')),
      [],
    )
    assert.equal(names.length, KEYS)
    let listed = 0
    for await (const _ of store.listFrom('race/')) listed++
    assert.equal(listed, KEYS)
  })
})
