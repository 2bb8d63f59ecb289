/**
 * What a damaged or trimmed table says: an empty or blank latest commit is a typed corrupt-log
 * error naming the file (fsck too), never an empty version; time travel before cleaned-up commits
 * names the oldest readable version and delta.logRetentionDuration; time travel to a version
 * whose files VACUUM deleted names that VACUUM and the oldest fully readable version (library and
 * CLI); the CLI's refusal of a short retention names --force.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm, truncate, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { isDeltaError } from '../../src/errors/index.js'
import { DeltaTable } from '../../src/table/delta-table.js'
import { runCliInProcess } from '../helpers/cli-in-process.js'

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

async function tableWith(commits: number, properties: Record<string, string> = {}): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'delta-rlc-hints-'))
  roots.push(root)
  const dir = join(root, 't')
  const t = await DeltaTable.create(dir, { schema: 'id long', properties })
  for (let i = 0; i < commits; i++) await t.append([{ id: BigInt(i) }])
  await t.close()
  return dir
}

const LATEST = '_delta_log/00000000000000000002.json'

describe('damaged latest commit', () => {
  for (const [what, damage] of [
    ['zero bytes', (f: string) => truncate(f, 0)],
    ['blank lines only', (f: string) => writeFile(f, '\n\n')],
  ] as const) {
    it(`${what}: a typed corrupt-log error naming the file, from open, fsck and the CLI`, async () => {
      const dir = await tableWith(2)
      await damage(join(dir, LATEST))
      const corrupt = (err: unknown) =>
        isDeltaError(err, 'DELTA_INVALID_TABLE') &&
        err.reason === 'malformed-commit' &&
        err.path === LATEST &&
        err.message.includes(LATEST)
      await assert.rejects(async () => (await DeltaTable.open(dir)).snapshot(), corrupt)
      const fsck = await runCliInProcess(['fsck', dir])
      assert.equal(fsck.code, 3)
      assert.match(fsck.stderr, /DELTA_INVALID_TABLE.*00000000000000000002\.json.*no action/)
    })
  }
})

describe('time travel hints', () => {
  it('before cleaned-up commits: names the oldest readable version and delta.logRetentionDuration', async () => {
    const dir = await tableWith(4, { 'delta.checkpointInterval': '2' })
    await rm(join(dir, '_delta_log/00000000000000000000.json'))
    await rm(join(dir, '_delta_log/00000000000000000001.json'))
    const t = await DeltaTable.open(dir)
    try {
      await assert.rejects(
        () => t.snapshot({ version: 1 }),
        (err) =>
          isDeltaError(err, 'DELTA_VERSION_NOT_FOUND') &&
          /oldest readable version/.test(err.hint ?? '') &&
          /version 2\b/.test(err.hint ?? '') &&
          /delta\.logRetentionDuration/.test(err.hint ?? ''),
      )
    } finally {
      await t.close()
    }
  })

  it('to a version whose files VACUUM deleted: names the VACUUM and the oldest fully readable version', async () => {
    const dir = await tableWith(0)
    const t = await DeltaTable.open(dir)
    try {
      await t.append([{ id: 1n }, { id: 2n }, { id: 3n }]) // v1
      await t.alter.setProperties({ 'delta.enableDeletionVectors': 'true' }) // v2
      await t.delete('id = 1') // v3: a DV on the file of v1
      await t.delete('id = 2') // v4: another DV, the first one removed
      const vacuumed = await t.vacuum({ retentionHours: 0, enforceRetentionDuration: false })
      assert.ok(vacuumed.files.length > 0)
      const start = vacuumed.startVersion
      await assert.rejects(
        () => t.scan({ version: 3n }).toArray(),
        (err) =>
          isDeltaError(err, 'DELTA_FILE_NOT_FOUND') &&
          new RegExp(`VACUUM that started at version ${start}`).test(err.hint ?? '') &&
          /oldest fully readable version after it is 4\b/.test(err.hint ?? ''),
      )
      const cli = await runCliInProcess(['scan', dir, '--version', '3'])
      assert.equal(cli.code, 3)
      assert.match(cli.stderr, /DELTA_FILE_NOT_FOUND/)
      assert.match(cli.stderr, new RegExp(`hint: The VACUUM that started at version ${start}`))
      assert.equal((await t.scan({ version: 4n }).toArray()).length, 1)
    } finally {
      await t.close()
    }
  })
})

describe('CLI vacuum', () => {
  it('a retention below the table’s names --force, not the library option', async () => {
    const dir = await tableWith(1)
    const r = await runCliInProcess(['vacuum', dir, '--retention-hours', '0'])
    assert.equal(r.code !== 0, true)
    assert.match(r.stderr, /--force/)
    assert.doesNotMatch(r.stderr, /enforceRetentionDuration/)
  })
})
