/**
 * A reader that stops early (`delta-rlc show t | head -1`) closes the pipe; the command must end
 * quietly with status 0, not crash with EPIPE.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { DeltaTable } from '../../src/table/delta-table.js'

const main = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url))
const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

describe('delta-rlc in a pipeline', () => {
  it('ends with status 0 when the reader closes the pipe early', async () => {
    const root = await mkdtemp(join(tmpdir(), 'delta-rlc-pipe-'))
    roots.push(root)
    const dir = join(root, 't')
    const table = await DeltaTable.create(dir, { schema: 'id long, name string' })
    await table.append(Array.from({ length: 20_000 }, (_, i) => ({ id: BigInt(i), name: `row number ${i}` })))
    await table.close()
    for (const [command, options] of [
      ['show', '--limit 20000'],
      ['describe', '--files'],
    ]) {
      // bash, for PIPESTATUS: the status of the CLI itself, not of head.
      const r = spawnSync(
        'bash',
        [
          '-c',
          `"${process.execPath}" --import tsx "${main}" ${command} "${dir}" ${options} | head -1; exit \${PIPESTATUS[0]}`,
        ],
        { encoding: 'utf8' },
      )
      assert.equal(r.stderr.includes('EPIPE'), false, r.stderr)
      assert.equal(r.stdout.split('\n').filter(Boolean).length, 1)
      assert.equal(r.status, 0, r.stderr)
    }
  })
})
