/**
 * The quick-look demo as a person sees it: `delta-rlc demo` in a real terminal 100 columns wide
 * (a tmux pane, colours and progress bar on), read back with `capture-pane`. A line that wrapped
 * shows as two rows of the pane but one line when tmux joins wrapped rows (`-J`): the two
 * captures must be the same. Skips when tmux is not installed.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { join, resolve } from 'node:path'
import { describe, it } from 'node:test'

const ROOT = resolve(import.meta.dirname, '../..')
const MAIN = join(ROOT, 'src/cli/main.ts')
const hasTmux = spawnSync('tmux', ['-V']).status === 0
const SOCKET = `delta-rlc-demo-tmux-${process.pid}`
const WIDTH = 100

function tmux(...args: string[]): string {
  const r = spawnSync('tmux', ['-L', SOCKET, ...args], { encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`tmux ${args.join(' ')} failed: ${r.stderr}`)
  return r.stdout
}

describe('delta-rlc demo in a 100-column terminal', {
  skip: hasTmux ? false : 'tmux is not installed',
}, () => {
  it('fits: no line wraps, and the headline, glossary and verdict are on screen', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, LANG: 'C.UTF-8' }
    delete env.NO_COLOR
    const script = `${process.execPath} --import tsx ${MAIN} demo --writers 6 --rows 6000; echo DEMO-EXIT-$?; sleep 120`
    const start = spawnSync(
      'tmux',
      [
        ...['-L', SOCKET, '-f', '/dev/null', 'new-session', '-d', '-s', 'demo', '-c', ROOT],
        ...['-x', String(WIDTH), '-y', '80', `sh -c '${script}'`],
      ],
      { env, encoding: 'utf8' },
    )
    assert.equal(start.status, 0, start.stderr)
    try {
      const deadline = Date.now() + 60_000
      let screen = ''
      while (!/^DEMO-EXIT-\d+$/m.test(screen)) {
        if (Date.now() > deadline) throw new Error(`the demo did not finish:\n${screen}`)
        await new Promise((r) => setTimeout(r, 200))
        screen = tmux('capture-pane', '-p', '-t', 'demo', '-S', '-', '-E', '-')
      }
      assert.equal(tmux('display-message', '-p', '-t', 'demo', '#{pane_width}').trim(), String(WIDTH))
      const joined = tmux('capture-pane', '-p', '-J', '-t', 'demo', '-S', '-', '-E', '-')
      assert.match(screen, /^DEMO-EXIT-0$/m)
      assert.equal(screen, joined, 'a line of the demo wrapped')
      const rows = screen.split('\n')
      for (const row of rows) assert.ok(row.length <= WIDTH, row)
      assert.ok(
        rows.some((r) =>
          /^file-level: 5 of 6 deletes aborted \| row-level: 0 of 6 aborted, 15 conflicts reconciled$/.test(
            r,
          ),
        ),
        screen,
      )
      assert.ok(
        rows.some((r) => /^ {2}DELTA_CONCURRENT_APPEND +Delta's name for:/.test(r)),
        screen,
      )
      assert.ok(
        rows.some((r) => /^verifier: PASS: /.test(r)),
        screen,
      )
    } finally {
      spawnSync('tmux', ['-L', SOCKET, 'kill-server'])
    }
  })
})
