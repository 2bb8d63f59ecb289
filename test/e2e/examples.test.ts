/**
 * Every runnable example under `examples/` runs to completion (each verifies its own outcome and
 * fails loudly otherwise), spawned with tsx as a user would run it.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { after, before, describe, it } from 'node:test'

const repoRoot = resolve(import.meta.dirname, '../..')
const examplesDir = join(repoRoot, 'examples')

/** What each example must print when it succeeds. */
const EXPECTED: Readonly<Record<string, RegExp>> = {
  'ingest-gdpr-compaction.ts': /^verified: user 42 erased, 31800 events kept exactly once/m,
  'upsert-service.ts': /^verified: \d+ customers, every batch applied exactly once$/m,
}

function runExample(file: string, dir: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(examplesDir, file), dir], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => {
      stdout += d
    })
    child.stderr.on('data', (d) => {
      stderr += d
    })
    child.on('error', reject)
    child.on('close', (code) => done({ code: code ?? -1, stdout, stderr }))
  })
}

let work: string
before(async () => {
  work = await mkdtemp(join(tmpdir(), 'delta-rlc-examples-'))
})
after(async () => {
  await rm(work, { recursive: true, force: true })
})

describe('examples', () => {
  it('has an expectation for every example file', async () => {
    const files = (await readdir(examplesDir)).filter((f) => f.endsWith('.ts')).sort()
    assert.deepEqual(files, Object.keys(EXPECTED).sort())
  })

  for (const [file, expected] of Object.entries(EXPECTED)) {
    it(`${file} runs and verifies its result`, async () => {
      const dir = join(work, file.replace(/\.ts$/, ''))
      const r = await runExample(file, dir)
      assert.equal(r.code, 0, `${file} failed:\n${r.stdout}\n${r.stderr}`)
      assert.match(r.stdout, expected)
      // The example leaves its table where it was asked to: a real Delta log.
      const tables = await readdir(dir)
      assert.equal(tables.length, 1)
      assert.ok((await readdir(join(dir, tables[0] as string))).includes('_delta_log'))
    })
  }
})
