/**
 * The scratch directory sweep: entries of processes that no longer run are removed once past the
 * grace period, whoever's entries these are not (live pids, this process, other names, fresh
 * entries) stay; a writer killed with SIGKILL mid-write leaves an entry that the next engine's
 * sweep removes.
 */
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { createDefaultEngine } from '../../../src/engine-default/default-engine.js'
import {
  defaultScratchDir,
  scratchEntryName,
  sweepScratchDir,
  sweepScratchDirOnce,
} from '../../../src/engine-default/scratch-dir.js'
import { createLocalStore } from '../../../src/storage/index.js'
import { DeltaTable } from '../../../src/table/delta-table.js'

const WORKER = fileURLToPath(new URL('../../helpers/scratch-writer-worker.ts', import.meta.url))
const HOUR = 3_600_000

/** The pid of a process that has already exited. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', ''])
  assert.equal(r.status, 0)
  return r.pid as number
}

async function plant(dir: string, name: string, ageMs: number, kind: 'file' | 'dir' = 'file'): Promise<void> {
  const p = path.join(dir, name)
  if (kind === 'dir') {
    await fs.mkdir(p)
    await fs.writeFile(path.join(p, 'part.parquet'), 'x')
    await age(path.join(p, 'part.parquet'), ageMs)
  } else {
    await fs.writeFile(p, 'x')
  }
  await age(p, ageMs)
}

async function age(p: string, ageMs: number): Promise<void> {
  const t = new Date(Date.now() - ageMs)
  await fs.utimes(p, t, t)
}

describe('scratch directory sweep', () => {
  let dir: string
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'delta-rlc-scratch-test-'))
  })
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true })
  })

  it('removes old entries of dead processes and keeps live, fresh and unknown ones', async () => {
    const dead = deadPid()
    const live = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' })
    try {
      const livePid = live.pid as number
      await plant(dir, `drlc-${dead}-write-abc123`, 2 * HOUR, 'dir')
      await plant(dir, `drlc-${dead}-1f0e.checkpoint.json`, 2 * HOUR)
      await plant(dir, `drlc-${dead}-fresh.checkpoint.json`, 60_000)
      await plant(dir, `drlc-${livePid}-write-live01`, 2 * HOUR, 'dir')
      await plant(dir, scratchEntryName('own.checkpoint.parquet'), 2 * HOUR)
      // A directory of a dead process whose content is still being written is not stale.
      await plant(dir, `drlc-${dead}-write-busy01`, 2 * HOUR, 'dir')
      await fs.writeFile(path.join(dir, `drlc-${dead}-write-busy01`, 'growing.parquet'), 'y')
      await plant(dir, 'notes.txt', 2 * HOUR)
      await plant(dir, 'drlc-x-odd', 2 * HOUR)
      // Names from before entries carried a pid: swept only after a day.
      await plant(dir, 'write-Ab12Cd', 2 * 24 * HOUR, 'dir')
      await plant(dir, '0f8fad5b-d9cb-469f-a165-70867728950e.checkpoint.json', 2 * 24 * HOUR)
      await plant(dir, '7c9e6679-7425-40de-944b-e07fc1f90ae7-part-0.parquet', 2 * HOUR)

      const removed = await sweepScratchDir(dir, { graceMs: HOUR })
      assert.deepEqual(removed.sort(), [
        '0f8fad5b-d9cb-469f-a165-70867728950e.checkpoint.json',
        `drlc-${dead}-1f0e.checkpoint.json`,
        `drlc-${dead}-write-abc123`,
        'write-Ab12Cd',
      ])
      assert.deepEqual(
        (await fs.readdir(dir)).sort(),
        [
          '7c9e6679-7425-40de-944b-e07fc1f90ae7-part-0.parquet',
          'drlc-x-odd',
          `drlc-${dead}-fresh.checkpoint.json`,
          `drlc-${dead}-write-busy01`,
          `drlc-${livePid}-write-live01`,
          scratchEntryName('own.checkpoint.parquet'),
          'notes.txt',
        ].sort(),
      )
    } finally {
      live.kill('SIGKILL')
    }
  })

  it('treats a missing scratch directory as empty', async () => {
    assert.deepEqual(await sweepScratchDir(path.join(dir, 'missing')), [])
  })

  it('defaults to one scratch directory per user', () => {
    const uid = process.getuid?.()
    if (uid !== undefined) assert.equal(path.basename(defaultScratchDir()), `delta-rlc-scratch-${uid}`)
  })

  it('a writer killed with SIGKILL mid-write leaves its write directory; the next engine sweeps it', async () => {
    const tableDir = path.join(dir, 'table')
    const scratch = path.join(dir, 'scratch')
    await (await DeltaTable.create(tableDir, { schema: 'id long, name string' })).close()
    const child = spawn(process.execPath, ['--import', 'tsx', WORKER, tableDir, scratch], {
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (d) => {
      stderr += d
    })
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_c, s) => resolve(s)))
    const prefix = `drlc-${child.pid}-write-`
    const deadline = Date.now() + 60_000
    let seen = false
    try {
      while (!seen && Date.now() < deadline && child.exitCode === null) {
        seen = (await fs.readdir(scratch).catch(() => [] as string[])).some((n) => n.startsWith(prefix))
        if (!seen) await new Promise((r) => setTimeout(r, 2))
      }
    } finally {
      child.kill('SIGKILL')
    }
    assert.equal(await exited, 'SIGKILL', stderr)
    assert.ok(seen, `the writer made a scratch entry (stderr: ${stderr})`)
    const left = (await fs.readdir(scratch)).filter((n) => n.startsWith(prefix))
    assert.equal(left.length, 1, 'the killed writer left its write directory behind')
    // The grace period is for processes of other pid namespaces; here the entry is made old.
    await age(path.join(scratch, left[0] as string), 2 * HOUR)
    for (const f of await fs.readdir(path.join(scratch, left[0] as string))) {
      await age(path.join(scratch, left[0] as string, f), 2 * HOUR)
    }
    const engine = createDefaultEngine(createLocalStore(tableDir), { scratchDir: scratch })
    try {
      await sweepScratchDirOnce(scratch)
      assert.deepEqual(
        (await fs.readdir(scratch)).filter((n) => n.startsWith(prefix)),
        [],
        'the first engine of a process swept it',
      )
    } finally {
      await engine.close()
    }
  })
})
