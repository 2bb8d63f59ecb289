/**
 * What a person sees: the built `delta-rlc` runs in a real terminal (a tmux pane), and the
 * screen is read back with `capture-pane`, once as plain text (alignment) and once with escape
 * sequences (colour). Skips when tmux is not installed.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { DeltaTable } from '../../src/index.js'
import { buildCli, CLI } from '../helpers/cli-build.js'

const hasTmux = spawnSync('tmux', ['-V']).status === 0
const SOCKET = `delta-rlc-cli-tty-${process.pid}`

let panes = 0

function tmux(socket: string, ...args: string[]): string {
  const r = spawnSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`tmux ${args.join(' ')} failed: ${r.stderr}`)
  return r.stdout
}

/** Runs a shell script in a fresh 160x60 pane and waits until `done` appears on screen. */
async function runInPane(
  script: string,
  done: string,
): Promise<{ plain: string; styled: string; screens: string[] }> {
  const env = { ...process.env }
  delete env.NO_COLOR
  // A server per pane: a server being killed cannot take a new session.
  const socket = `${SOCKET}-${panes++}`
  const start = spawnSync(
    'tmux',
    [
      '-L',
      socket,
      '-f',
      '/dev/null',
      'new-session',
      '-d',
      '-s',
      'cli',
      '-x',
      '160',
      '-y',
      '60',
      `sh -c '${script}; sleep 120'`,
    ],
    { env, encoding: 'utf8' },
  )
  if (start.status !== 0) throw new Error(`tmux new-session failed: ${start.stderr}`)
  const deadline = Date.now() + 60_000
  const screens: string[] = []
  try {
    for (;;) {
      const plain = tmux(socket, 'capture-pane', '-p', '-t', 'cli', '-S', '-', '-E', '-')
      screens.push(plain)
      if (plain.includes(done)) {
        return {
          plain,
          styled: tmux(socket, 'capture-pane', '-p', '-e', '-t', 'cli', '-S', '-', '-E', '-'),
          screens,
        }
      }
      if (Date.now() > deadline) throw new Error(`'${done}' did not appear on screen:\n${plain}`)
      await new Promise((r) => setTimeout(r, 50))
    }
  } finally {
    spawnSync('tmux', ['-L', socket, 'kill-server'])
  }
}

describe('delta-rlc in a terminal', { skip: hasTmux ? false : 'tmux is not installed' }, () => {
  let dir: string
  let table: string
  before(async () => {
    await buildCli()
    dir = await mkdtemp(join(tmpdir(), 'delta-rlc-cli-tty-'))
    table = join(dir, 'people')
    const t = await DeltaTable.create(table, {
      schema: 'id long not null, name string, score double',
      properties: { 'delta.enableDeletionVectors': 'true' },
    })
    await t.append([
      { id: 1n, name: 'ada', score: 9.5 },
      { id: 22n, name: null, score: 7 },
      { id: 333n, name: 'grace hopper', score: 10.25 },
      { id: 4n, name: 'gone', score: 0 },
    ])
    await t.delete('id = 4')
    await t.close()
  })
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  it('shows rows as an aligned table with a bold header and dim NULLs', async () => {
    const { plain, styled } = await runInPane(`node ${CLI} show ${table} && echo SHOW-DONE`, 'SHOW-DONE')
    const lines = plain.split('\n')
    const head = lines.findIndex((l) => /^ +id {2}name/.test(l))
    assert.ok(head >= 0, plain)
    assert.deepEqual(lines.slice(head, head + 5), [
      ' id  name          score',
      '---  ------------  -----',
      '  1  ada             9.5',
      ' 22  NULL              7',
      '333  grace hopper  10.25',
    ])
    assert.match(lines[head + 5] as string, /^\(3 rows, version 2\)/)
    // Bold header cells, dim NULL and row-count footer.
    // tmux re-encodes attribute resets, so only the opening sequences are compared.
    assert.match(styled, /\u001b\[1m +id/)
    assert.match(styled, /\u001b\[1mname/)
    assert.match(styled, /\u001b\[2mNULL/)
    assert.doesNotMatch(styled, /\u001b\[[0-9;]*m(ada|grace)/)
    assert.match(styled, /\u001b\[2m\(3 rows, version 2\)/)
  })

  it('describes the table with aligned sections and coloured types', async () => {
    const { plain, styled } = await runInPane(
      `node ${CLI} describe ${table} && echo DESCRIBE-DONE`,
      'DESCRIBE-DONE',
    )
    assert.match(plain, /^schema\n {2}id {5}long {4}not null\n {2}name {3}string\n {2}score {2}double\n/m)
    assert.match(plain, /^ {2}reader features {2}deletionVectors$/m)
    assert.match(plain, /^ {2}live rows {7}3$/m)
    assert.match(plain, /^ {2}deleted by DVs {2}1 \(25\.00%\) in 1 file$/m)
    assert.match(styled, /\u001b\[36mlong/)
    assert.match(styled, /\u001b\[33mnot null/)
    assert.match(styled, /\u001b\[1mschema/)
  })

  it('draws a progress bar during a large append and clears it afterwards', async () => {
    const csv = join(dir, 'big.csv')
    const lines = ['id,name,score']
    for (let i = 0; i < 300_000; i++) lines.push(`${1000 + i},n${i % 97},${i % 13}`)
    await writeFile(csv, `${lines.join('\n')}\n`)
    const { plain, screens } = await runInPane(
      `node ${CLI} append ${table} ${csv} --batch-rows 50000 && echo APPEND-DONE`,
      'APPEND-DONE',
    )
    assert.match(plain, /committed WRITE as version 3/)
    assert.match(plain, /inputRows +300,000/)
    assert.doesNotMatch(plain, /append \[/)
    const bar = screens.find((s) => /append \[#*-*\] +\d+% [\d,]+\/300,000 rows/.test(s))
    assert.ok(bar, 'no progress bar was seen while the append ran')
  })
})
