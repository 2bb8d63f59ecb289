/**
 * How `runCli` reports a real concurrent-modification conflict: exit status 2, the error code,
 * the winner, and the hint; as JSON on stderr with `--json`. The conflict is produced by two real
 * transactions on a temp table inside a command, so the whole error path is the production one.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { after, before, describe, it } from 'node:test'
import type { Command } from '../../src/cli/command.js'
import { parseConflictsOption } from '../../src/cli/command.js'
import { COMMANDS, runCli } from '../../src/cli/run-cli.js'
import { DeltaTable } from '../../src/index.js'

function sink(isTTY = false): Writable & { text: string; isTTY: boolean } {
  const w = new Writable({
    write(chunk, _enc, cb) {
      w.text += String(chunk)
      cb()
    },
  }) as Writable & { text: string; isTTY: boolean }
  w.text = ''
  w.isTTY = isTTY
  return w
}

let dir: string
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'delta-rlc-cli-exit-'))
})
after(async () => {
  await rm(dir, { recursive: true, force: true })
})

/** A command that loses a DELETE/DELETE race on the same row, under the flags of `--conflicts`. */
const raceCommand: Command = {
  name: 'lose-race',
  summary: 'test command',
  usage: '<table>',
  options: { conflicts: { type: 'string', help: 'flags' } },
  positionals: { min: 1, max: 1, names: '<table>' },
  async run(ctx, values, [location]) {
    const table = await ctx.openTable(location as string, values)
    try {
      const a = await table.begin()
      const b = await table.begin()
      await a.delete('id = 1')
      await b.delete('id = 1')
      await a.commit()
      await b.commit()
    } finally {
      await table.close()
    }
  },
}

async function freshTable(name: string): Promise<string> {
  const location = join(dir, name)
  const t = await DeltaTable.create(location, {
    schema: 'id long not null',
    properties: { 'delta.enableDeletionVectors': 'true' },
  })
  await t.append([{ id: 1n }, { id: 2n }])
  await t.close()
  return location
}

describe('conflict exit status', () => {
  it('exits 2 with the conflict code, the winning version and a hint', async () => {
    const location = await freshTable('human')
    const out = sink()
    const err = sink()
    const code = await runCli(['lose-race', location], { stdout: out, stderr: err, env: {} }, [raceCommand])
    assert.equal(code, 2)
    assert.equal(out.text, '')
    // The loser re-adds the file the winner already rewrote: Delta reports it as a concurrent change.
    assert.match(err.text, /^error\[DELTA_CONCURRENT_[A-Z_]+\]: .*The winning commit is version 2 \(DELETE\)/)
    assert.match(err.text, /\nhint: This transaction was not committed; rerun it/)
  })

  it('exits 2 with a JSON error naming the winner under --json', async () => {
    const location = await freshTable('json')
    const err = sink()
    const code = await runCli(['lose-race', location, '--json'], { stdout: sink(), stderr: err, env: {} }, [
      raceCommand,
    ])
    assert.equal(code, 2)
    const parsed = JSON.parse(err.text) as {
      error: { code: string; exitCode: number; details: Record<string, unknown> }
    }
    assert.match(parsed.error.code, /^DELTA_CONCURRENT_/)
    assert.equal(parsed.error.exitCode, 2)
    assert.equal(parsed.error.details.winnerVersion, 2)
    assert.equal(parsed.error.details.winnerOperation, 'DELETE')
  })

  it('colours the error only when stderr is a terminal and NO_COLOR is unset', async () => {
    for (const [tty, env, coloured] of [
      [true, {}, true],
      [true, { NO_COLOR: '1' }, false],
      [false, {}, false],
    ] as const) {
      const err = sink(tty)
      await runCli(['describe', join(dir, 'missing')], { stdout: sink(tty), stderr: err, env }, COMMANDS)
      assert.equal(err.text.includes('\u001b['), coloured, `tty=${tty} env=${JSON.stringify(env)}`)
      assert.match(err.text.replace(/\u001b\[[0-9;]*m/g, ''), /^error\[DELTA_TABLE_NOT_FOUND\]/)
    }
  })
})

describe('--conflicts parsing', () => {
  const cases: Array<[string, unknown]> = [
    ['all', 'all'],
    ['none', 'none'],
    ['rowLevelConcurrency.enabled', { 'rowLevelConcurrency.enabled': true }],
    [
      'rowLevelConcurrency.enabled, conflictDetection.dataSkipping.enabled=false',
      { 'rowLevelConcurrency.enabled': true, 'conflictDetection.dataSkipping.enabled': false },
    ],
    [
      'conflictDetection.dataSkipping.valueExact.maxBytes=1024',
      { 'conflictDetection.dataSkipping.valueExact.maxBytes': 1024 },
    ],
  ]
  for (const [text, expected] of cases) {
    it(`parses '${text}'`, () => {
      assert.deepEqual(parseConflictsOption(text), expected)
    })
  }
  it('refuses a flag value that is neither boolean nor number', () => {
    assert.throws(
      () => parseConflictsOption('rowLevelConcurrency.enabled=yes'),
      /needs true, false or a number/,
    )
  })
})
