/**
 * A table directory as a killed or careless process leaves it: a partition directory or a data
 * file that is a link to somewhere else (refused, nothing written or read out there), and the
 * temporary files of puts a SIGKILL interrupted (VACUUM removes them once they are older than
 * the retention, in `_delta_log/` too, and nothing else that is hidden).
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import fs from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { isDeltaError } from '../../src/errors/index.js'
import { isPutTempFileName } from '../../src/storage/local-store.js'
import { DeltaTable } from '../../src/table/delta-table.js'

const SCHEMA = 'id long not null, part int'
const rowsOf = (ids: readonly number[]) => ids.map((i) => ({ id: BigInt(i), part: i % 2 }))
const idsOf = async (t: DeltaTable) =>
  (await t.scan({ columns: ['id'] }).toArray()).map((r) => Number(r.id)).sort((a, b) => a - b)
const WORKER = fileURLToPath(new URL('../helpers/slow-put-worker.ts', import.meta.url))
const DAY_MS = 24 * 3_600_000

function isEscape(err: unknown): boolean {
  return isDeltaError(err, 'DELTA_STORAGE_ERROR') && /outside the table root/.test((err as Error).message)
}

/** Every file under `dir` (links not followed), as relative paths, sorted. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true })
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort()
}

/** Sets a file's modification time `ageMs` into the past. */
async function age(file: string, ageMs: number): Promise<void> {
  const t = new Date(Date.now() - ageMs)
  await fs.utimes(file, t, t)
}

/**
 * Runs a process that keeps putting 16 MiB objects into `dir` and kills it with SIGKILL as soon
 * as one of its temporary files exists; repeats (a few times at most) until a kill lands while
 * the temporary file is still there.
 *
 * @returns the temporary file's name
 */
async function killMidPut(dir: string): Promise<string> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const child = spawn(process.execPath, ['--import', 'tsx', WORKER, dir, '16'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_c, s) => resolve(s)))
    let stderr = ''
    child.stderr.on('data', (d) => {
      stderr += d
    })
    try {
      const deadline = Date.now() + 30_000
      while (Date.now() < deadline && child.exitCode === null) {
        if ((await fs.readdir(dir)).some(isPutTempFileName)) break
        await new Promise((r) => setTimeout(r, 1))
      }
    } finally {
      child.kill('SIGKILL')
    }
    assert.equal(await exited, 'SIGKILL', `the worker was killed (stderr: ${stderr})`)
    const left = (await fs.readdir(dir)).filter(isPutTempFileName)
    if (left.length > 0) return left[0] as string
  }
  throw new Error('no kill landed while a temporary file existed')
}

describe('tables and links out of the table root', () => {
  let base: string
  let dir: string
  let outside: string
  beforeEach(async () => {
    base = await fs.mkdtemp(path.join(tmpdir(), 'delta-rlc-tlinks-'))
    dir = path.join(base, 'table')
    outside = path.join(base, 'elsewhere')
    await fs.mkdir(outside)
  })
  afterEach(async () => {
    await fs.rm(base, { recursive: true, force: true })
  })

  it('an append into a partition directory linked elsewhere fails typed; nothing is written there or left here', async () => {
    const table = await DeltaTable.create(dir, { schema: SCHEMA, partitionBy: ['part'] })
    try {
      await table.append(rowsOf([0, 2]))
      await fs.symlink(outside, path.join(dir, 'part=1'))
      const before = await filesUnder(dir)
      await assert.rejects(table.append(rowsOf([4, 5, 6, 7])), isEscape)
      assert.deepEqual(await fs.readdir(outside), [], 'nothing was written out of the table')
      assert.deepEqual(await filesUnder(dir), before, 'the part=0 file written first is gone again')
      assert.equal((await table.snapshot()).version, 1n)
      assert.deepEqual(await idsOf(table), [0, 2])
    } finally {
      await table.close()
    }
  })

  it('a data file replaced by a link to a file elsewhere is not read: the scan fails typed', async () => {
    const table = await DeltaTable.create(dir, { schema: SCHEMA })
    try {
      await table.append(rowsOf([1, 2, 3]))
      const [file] = (await table.snapshot()).activeFiles()
      assert.ok(file)
      const onDisk = path.join(dir, file.path)
      await fs.rename(onDisk, path.join(outside, 'moved.parquet'))
      await fs.symlink(path.join(outside, 'moved.parquet'), onDisk)
      await assert.rejects(idsOf(table), isEscape)
      await assert.rejects(table.delete('id = 2'), isEscape)
    } finally {
      await table.close()
    }
  })
})

describe('VACUUM and the temporary files of killed puts', () => {
  let dir: string
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(tmpdir(), 'delta-rlc-vtmp-'))
  })
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true })
  })

  it('removes a SIGKILLed put’s temporary file and an abandoned log one once older than the retention, and nothing else hidden', async () => {
    const table = await DeltaTable.create(dir, { schema: SCHEMA }, { autoCheckpoint: false })
    try {
      await table.append(rowsOf([1, 2, 3]))
      await table.checkpoint()
      const killed = await killMidPut(dir)
      const logTemp = '_delta_log/.00000000000000000002.json.0123456789abcdef.tmp'
      await fs.writeFile(path.join(dir, logTemp), '{"commitInfo":')
      // Hidden files that are not the store's temporary files, and log files, all very old.
      const decoys = [
        '.notes.tmp',
        '.x.parquet.0123456789ABCDEF.tmp',
        '_delta_log/.00000000000000000001.json.crc',
      ]
      for (const d of decoys) await fs.writeFile(path.join(dir, d), 'keep')
      const logFiles = (await fs.readdir(path.join(dir, '_delta_log'))).filter((n) => !n.startsWith('.'))
      for (const f of [...decoys, ...logFiles.map((n) => `_delta_log/${n}`)])
        await age(path.join(dir, f), 30 * DAY_MS)
      // The big objects the worker finished are orphans of no interest here.
      for (const n of await fs.readdir(dir)) if (n.startsWith('big-')) await fs.rm(path.join(dir, n))

      await age(path.join(dir, logTemp), 30 * DAY_MS)
      const fresh = await table.vacuum({ dryRun: true })
      assert.deepEqual(fresh.files, [logTemp], 'a temporary file younger than the retention is kept')

      await age(path.join(dir, killed), 8 * DAY_MS)
      const dry = await table.vacuum({ dryRun: true })
      assert.deepEqual(dry.files, [killed, logTemp].sort())
      assert.ok(dry.bytes > 0)
      assert.ok((await fs.stat(path.join(dir, killed))).isFile(), 'a dry run deletes nothing')

      const done = await table.vacuum()
      assert.deepEqual(done.files, dry.files)
      const left = await filesUnder(dir)
      assert.ok(!left.includes(killed) && !left.includes(logTemp))
      for (const d of decoys) assert.ok(left.includes(d), `${d} is kept`)
      for (const f of logFiles) assert.ok(left.includes(`_delta_log/${f}`), `${f} is kept`)
      assert.deepEqual(await idsOf(table), [1, 2, 3])
      await table.append(rowsOf([4]))
      assert.deepEqual(await idsOf(table), [1, 2, 3, 4])
    } finally {
      await table.close()
    }
  })
})
