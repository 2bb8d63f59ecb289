/**
 * Two CLI leftovers: copies of standard input that killed processes left in the temp directory
 * are swept by the next command that reads standard input (those of running processes, fresh
 * ones, other users' and other names stay), and `--verbose` shows a store's request summary
 * among the causes as its fields, not as `[object Object]`.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { STDIN_COPY_GRACE_MS, sweepStdinCopies } from '../../src/cli/input-paths.js'
import { DeltaTable } from '../../src/index.js'
import { runCliInProcess } from '../helpers/cli-in-process.js'

const HOUR = 3_600_000

/** The pid of a process that has already exited. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', ''])
  return r.pid as number
}

/** Makes a stdin copy directory holding a file, both `ageMs` old. */
async function plant(dir: string, name: string, ageMs: number): Promise<string> {
  const p = path.join(dir, name)
  await fs.mkdir(p)
  await fs.writeFile(path.join(p, 'stdin.jsonl'), '{"id": 1}\n')
  const t = new Date(Date.now() - ageMs)
  await fs.utimes(path.join(p, 'stdin.jsonl'), t, t)
  await fs.utimes(p, t, t)
  return p
}

describe('stale copies of standard input', () => {
  let dir: string
  let saved: string | undefined
  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'delta-rlc-stdin-sweep-'))
    saved = process.env.TMPDIR
  })
  after(async () => {
    if (saved === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = saved
    await fs.rm(dir, { recursive: true, force: true })
  })

  it("removes dead processes' old copies and keeps the rest", async () => {
    const sweepDir = path.join(dir, 'unit')
    await fs.mkdir(sweepDir)
    const dead = deadPid()
    await plant(sweepDir, `delta-rlc-stdin-${dead}-aaaaaa`, STDIN_COPY_GRACE_MS + 60_000)
    await plant(sweepDir, `delta-rlc-stdin-${dead}-bbbbbb`, 60_000)
    await plant(sweepDir, `delta-rlc-stdin-${process.ppid}-cccccc`, 48 * HOUR)
    await plant(sweepDir, 'delta-rlc-stdin-dddddd', 48 * HOUR)
    await plant(sweepDir, 'delta-rlc-stdin-eeeeee', HOUR)
    await plant(sweepDir, 'delta-rlc-stdin-notes', 48 * HOUR)
    if (process.getuid?.() === 0) {
      const theirs = await plant(sweepDir, `delta-rlc-stdin-${dead}-ffffff`, 48 * HOUR)
      await fs.chown(theirs, 65534, 65534)
    }
    const removed = await sweepStdinCopies(sweepDir)
    assert.deepEqual(removed.sort(), [`delta-rlc-stdin-${dead}-aaaaaa`, 'delta-rlc-stdin-dddddd'].sort())
    const left = (await fs.readdir(sweepDir)).sort()
    assert.ok(left.includes(`delta-rlc-stdin-${dead}-bbbbbb`))
    assert.ok(left.includes(`delta-rlc-stdin-${process.ppid}-cccccc`))
    assert.ok(left.includes('delta-rlc-stdin-eeeeee'))
    assert.ok(left.includes('delta-rlc-stdin-notes'))
  })

  it('append - sweeps what a killed append left, and leaves no copy of its own', async () => {
    const tmp = path.join(dir, 'cli-tmp')
    await fs.mkdir(tmp)
    const stale = `delta-rlc-stdin-${deadPid()}-zzzzzz`
    await plant(tmp, stale, 2 * HOUR)
    const location = path.join(dir, 'table')
    await (await DeltaTable.create(location, { schema: 'id long' })).close()
    process.env.TMPDIR = tmp
    try {
      const r = await runCliInProcess(['append', location, '-', '--format', 'json'], '{"id": 1}\n{"id": 2}\n')
      assert.equal(r.code, 0, r.stderr)
    } finally {
      if (saved === undefined) delete process.env.TMPDIR
      else process.env.TMPDIR = saved
    }
    assert.deepEqual(
      (await fs.readdir(tmp)).filter((n) => n.startsWith('delta-rlc-stdin-')),
      [],
      'the stale copy is swept and the new one removed',
    )
  })
})

describe('--verbose causes', () => {
  it("show a store's request summary as fields", async () => {
    const keys = ['AWS_ENDPOINT_URL', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'] as const
    const saved = keys.map((k) => process.env[k])
    // Nothing listens on port 1: the request fails, and the cause is the store's summary.
    process.env.AWS_ENDPOINT_URL = 'http://127.0.0.1:1'
    process.env.AWS_ACCESS_KEY_ID = 'AKIDEXAMPLE'
    process.env.AWS_SECRET_ACCESS_KEY = 'not-a-real-secret'
    try {
      const r = await runCliInProcess(['describe', 's3://bucket/table', '--verbose'])
      assert.notEqual(r.code, 0)
      assert.ok(!r.stderr.includes('[object Object]'), r.stderr)
      assert.match(r.stderr, /caused by: S3: \{.*"message"/, r.stderr)
      const j = await runCliInProcess(['describe', 's3://bucket/table', '--verbose', '--json'])
      assert.ok(!j.stderr.includes('[object Object]'), j.stderr)
    } finally {
      keys.forEach((k, i) => {
        if (saved[i] === undefined) delete process.env[k]
        else process.env[k] = saved[i]
      })
    }
  })
})
