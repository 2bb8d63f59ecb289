/**
 * What a new user reads from `delta-rlc demo`, the quick look, run through the command line: a
 * headline of measured numbers first, a table, a plain-words line for each name that occurred,
 * the verifier's verdict, and nothing wider than 100 columns.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { join, resolve } from 'node:path'
import { before, describe, it } from 'node:test'
import { runCliInProcess } from '../helpers/cli-in-process.js'

const ROOT = resolve(import.meta.dirname, '../..')
const MAIN = join(ROOT, 'src/cli/main.ts')

function cli(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: '1' },
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
  return new Promise((res, rej) => {
    child.on('error', rej)
    child.on('close', (code) => res({ code, stdout, stderr }))
  })
}

describe('delta-rlc demo, the quick look', () => {
  const writers = 5
  let out: { code: number | null; stdout: string; stderr: string }
  let lines: string[]
  before(async () => {
    out = await cli(['demo', '--writers', String(writers), '--rows', '5000'])
    lines = out.stdout.split('\n')
  })

  it('exits 0 and leads with a headline of measured numbers', () => {
    assert.equal(out.code, 0, out.stderr)
    const headline = lines.find((l) => l.startsWith('file-level: '))
    assert.ok(headline, out.stdout)
    const m =
      /^file-level: (\d+) of (\d+) deletes aborted \| row-level: (\d+) of (\d+) aborted, (\d+) conflicts? reconciled$/.exec(
        headline,
      )
    assert.ok(m, headline)
    // Every writer after the first loses to a file-level check; with row-level reconciliation
    // each one commits, reconciling once against every writer that committed before it.
    assert.deepEqual(m.slice(1).map(Number), [
      writers - 1,
      writers,
      0,
      writers,
      (writers * (writers - 1)) / 2,
    ])
    assert.ok(
      lines.indexOf(headline) < lines.findIndex((l) => /file-level\s+row-level/.test(l)),
      'the headline comes before the table',
    )
  })

  it('explains in plain words each name the table shows, pointing to docs/concepts.md', () => {
    assert.match(out.stdout, /^ {4}DELTA_CONCURRENT_APPEND +4 +0$/m)
    assert.match(out.stdout, /^ {4}case2-dv-union +0 +10$/m)
    const glossary = lines.findIndex((l) => l.startsWith('What the names mean'))
    assert.ok(glossary > 0, out.stdout)
    assert.match(lines[glossary] as string, /docs\/concepts\.md/)
    const entries = lines.slice(glossary + 1).join('\n')
    assert.match(entries, /^ {2}case2-dv-union +two commits deleted different rows of the same file/m)
    assert.match(entries, /^ {2}DELTA_CONCURRENT_APPEND +Delta's name for: a file you read was rewritten/m)
    assert.match(entries, /\[#case-2\]/)
    // Only the names that occurred: no other case, no other code.
    assert.doesNotMatch(entries, /case1|case3|case4|DELTA_CONCURRENT_DELETE/)
    assert.match(out.stdout, /Reconciliations \(10\) outnumber commits \(5\): a commit that lost the race/)
  })

  it('prints the verifier verdict with the row arithmetic it checked', () => {
    assert.match(
      out.stdout,
      /^verifier: PASS: in both tables the live rows are the initial rows minus 5 per/m,
    )
    assert.match(out.stdout.replaceAll('\n  ', ' '), /4995 = 5000 - 1 x 5 and 4975 = 5000 - 5 x 5/)
  })

  it('keeps every line within 100 columns', () => {
    for (const l of lines) assert.ok(l.length <= 100, `${l.length} columns: ${l}`)
  })

  // The refusals are option parsing, the same in this process (the process's exit status 1 is
  // checked on the built binary in cli-commands).
  it('refuses quick-look options with --full before starting anything (exit status 1)', async () => {
    const r = await runCliInProcess(['demo', '--full', '--writers', '3'])
    assert.equal(r.code, 1)
    assert.match(r.stderr, /--writers is an option of the quick look, not of --full/)
    assert.equal(r.stdout, '')
    const zero = await runCliInProcess(['demo', '--full', '--duration', '0'])
    assert.equal(zero.code, 1)
    assert.match(zero.stderr, /--duration must be more than 0/)
    const untimed = await runCliInProcess(['demo', '--duration', '30s'])
    assert.equal(untimed.code, 1)
    assert.match(untimed.stderr, /--duration is an option of --full/)
  })
})
