/**
 * The scratch directory is private: one another user created beforehand (mode 0777) is refused,
 * nothing is committed and the table keeps its rows; one of our own that others can write to is
 * refused too, while the default one left 0755 by older versions is made 0700; and a checkpoint
 * file replaced between its write and its upload is not uploaded.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { readScratchFileVerified } from '../../src/engine-default/checkpoint-parquet.js'
import { defaultScratchDir, ensureScratchDir } from '../../src/engine-default/scratch-dir.js'
import { isDeltaError } from '../../src/errors/index.js'
import { DeltaTable } from '../../src/table/delta-table.js'

const NOBODY = 65534
const asRoot = process.getuid?.() === 0
const needsRoot = asRoot ? false : 'needs root to act as user nobody'

/** Runs a shell command as user nobody. */
function asNobody(command: string): void {
  const r = spawnSync('sh', ['-c', command], { uid: NOBODY, gid: NOBODY, encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
}

function isRefusal(err: unknown): boolean {
  return (
    isDeltaError(err, 'DELTA_STORAGE_ERROR') && /Refusing the scratch directory/.test((err as Error).message)
  )
}

describe('scratch directory ownership', () => {
  let root: string
  let tmp: string
  let savedTmp: string | undefined
  before(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'delta-rlc-takeover-'))
    // A shared temp dir as /tmp is: everyone may create entries in it.
    tmp = path.join(root, 'tmp')
    await fs.mkdir(tmp)
    await fs.chmod(root, 0o755)
    await fs.chmod(tmp, 0o1777)
    savedTmp = process.env.TMPDIR
    process.env.TMPDIR = tmp
  })
  after(async () => {
    if (savedTmp === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = savedTmp
    await fs.rm(root, { recursive: true, force: true })
  })

  it('refuses a default directory another user created 0777; nothing is committed', {
    skip: needsRoot,
  }, async () => {
    const own = path.join(root, 'own-scratch')
    const location = path.join(root, 'table')
    const good = await DeltaTable.create(
      location,
      { schema: 'id long' },
      { engineOptions: { scratchDir: own } },
    )
    await good.append([{ id: 1n }, { id: 2n }])
    await good.close()

    const scratch = defaultScratchDir()
    assert.equal(path.dirname(scratch), tmp)
    asNobody(`mkdir -m 0777 '${scratch}' && chmod 0777 '${scratch}'`)
    const victim = await DeltaTable.open(location)
    await assert.rejects(victim.checkpoint(), isRefusal)
    await assert.rejects(victim.append([{ id: 3n }]), isRefusal)
    await victim.close()

    const check = await DeltaTable.open(location, { engineOptions: { scratchDir: own } })
    const rows = await check.scan().toArray()
    assert.deepEqual(rows.map((r) => r.id).sort(), [1n, 2n])
    assert.equal(Number((await check.snapshot()).version), 1)
    await assert.rejects(fs.stat(path.join(location, '_delta_log', '_last_checkpoint')), { code: 'ENOENT' })
    await check.close()
    assert.equal((await fs.readdir(scratch)).length, 0, 'nothing of ours was written into it')
    await fs.rm(scratch, { recursive: true })
  })

  it('refuses a chosen directory of another user, a link, and one of ours that others can write to', async () => {
    const ours = path.join(root, 'open-scratch')
    await fs.mkdir(ours)
    await fs.chmod(ours, 0o777)
    await assert.rejects(ensureScratchDir(ours), isRefusal)
    await fs.chmod(ours, 0o755)
    await ensureScratchDir(ours)
    assert.equal((await fs.stat(ours)).mode & 0o777, 0o755, 'a chosen directory is never changed')
    const link = path.join(root, 'link-scratch')
    await fs.symlink(ours, link)
    await assert.rejects(ensureScratchDir(link), isRefusal)
    if (asRoot) {
      const theirs = path.join(root, 'their-scratch')
      await fs.mkdir(theirs, { mode: 0o700 })
      await fs.chown(theirs, NOBODY, NOBODY)
      await assert.rejects(ensureScratchDir(theirs), isRefusal)
    }
  })

  it('creates the default directory 0700 and makes an old 0755 one of ours 0700', async () => {
    const scratch = defaultScratchDir()
    await ensureScratchDir(scratch)
    assert.equal((await fs.stat(scratch)).mode & 0o777, 0o700)
    await fs.chmod(scratch, 0o755)
    await ensureScratchDir(scratch)
    assert.equal((await fs.stat(scratch)).mode & 0o777, 0o700)
    await fs.rm(scratch, { recursive: true })
  })

  it('checkpoints through the private directory, whose files are 0600', async () => {
    const location = path.join(root, 'checkpointed')
    const table = await DeltaTable.create(location, { schema: 'id long' })
    await table.append([{ id: 7n }])
    await table.checkpoint()
    assert.deepEqual(
      (await table.scan().toArray()).map((r) => r.id),
      [7n],
    )
    await table.close()
    assert.equal((await fs.stat(defaultScratchDir())).mode & 0o777, 0o700)
  })
})

describe('a scratch file read back for upload', () => {
  let dir: string
  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'delta-rlc-readback-'))
  })
  after(async () => {
    await fs.rm(dir, { recursive: true, force: true })
  })

  const fingerprint = async (file: string) => {
    const bytes = await fs.readFile(file)
    const { createHash } = await import('node:crypto')
    return { size: bytes.byteLength, sha256: createHash('sha256').update(bytes).digest('hex') }
  }
  const isTampered = (err: unknown) =>
    isDeltaError(err, 'DELTA_STORAGE_ERROR') &&
    /not uploaded|cannot be read back/.test((err as Error).message)

  it('is the file that was written, or refused', async () => {
    const file = path.join(dir, 'cp.parquet')
    await fs.writeFile(file, 'PAR1 real checkpoint PAR1')
    const written = await fingerprint(file)
    assert.equal(
      Buffer.from(await readScratchFileVerified(file, written)).toString(),
      'PAR1 real checkpoint PAR1',
    )

    // Same size, other content.
    await fs.rm(file)
    await fs.writeFile(file, 'PAR1 fake checkpoint PAR1')
    await assert.rejects(readScratchFileVerified(file, written), isTampered)
    // Other size.
    await fs.writeFile(file, 'PAR1 PAR1')
    await assert.rejects(readScratchFileVerified(file, written), isTampered)
    // A link to the real bytes.
    await fs.writeFile(path.join(dir, 'elsewhere'), 'PAR1 real checkpoint PAR1')
    await fs.rm(file)
    await fs.symlink(path.join(dir, 'elsewhere'), file)
    await assert.rejects(readScratchFileVerified(file, written), isTampered)
    await fs.rm(file)
    // A second name for the same bytes: someone else holds it too.
    await fs.link(path.join(dir, 'elsewhere'), file)
    await assert.rejects(readScratchFileVerified(file, written), isTampered)
  })

  it("refuses another user's file with the very bytes that were written", { skip: needsRoot }, async () => {
    const file = path.join(dir, 'theirs.parquet')
    await fs.writeFile(file, 'PAR1 real checkpoint PAR1')
    const written = await fingerprint(file)
    await fs.chown(file, NOBODY, NOBODY)
    await assert.rejects(readScratchFileVerified(file, written), isTampered)
  })
})
