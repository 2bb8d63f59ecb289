/**
 * Option values are checked before a command starts anything: a malformed one exits 1 (a usage
 * error) with nothing created, `--conflicts` takes the same words in `race` as in every command,
 * and a race refuses a directory that already holds its table, saying what to do instead.
 * Commands run in-process through `runCli` (`runCliInProcess`) on real tables in a temp directory.
 */
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { durationOption } from '../../src/cli/command.js'
import { DeltaTable, InvalidArgumentError } from '../../src/index.js'
import { resolveRaceConfig } from '../../src/race/index.js'
import { runCliInProcess as cli } from '../helpers/cli-in-process.js'

let dir: string
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'delta-rlc-cli-options-'))
})
after(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('malformed option values', () => {
  it('race --conflicts case9 exits 1 before any table, writer or report exists', async () => {
    const loc = join(dir, 'race-case9')
    const r = await cli(['race', loc, '--conflicts', 'case9', '--duration', '1'])
    assert.equal(r.code, 1, r.stderr)
    assert.match(r.stderr, /^error\[DELTA_INVALID_ARGUMENT\]: Unknown --conflicts flag 'case9'/)
    assert.match(r.stderr, /hint: Use all, none, or a comma list of flag keys .*rowLevelConcurrency\.enabled/)
    assert.doesNotMatch(r.stderr, /verifier|RESULT|DELTA_INTERNAL/)
    assert.equal(existsSync(loc), false)
    assert.equal(existsSync(`${loc}.race`), false)
  })

  it('race and delete refuse a case name in --conflicts alike, naming its flag key', async () => {
    const table = join(dir, 'orders')
    await (await DeltaTable.create(table, { schema: 'id long' })).close()
    const race = await cli(['race', join(dir, 'race-case2'), '--conflicts', 'case2'])
    const del = await cli(['delete', table, '--where', 'id = 1', '--conflicts', 'case2'])
    for (const r of [race, del]) {
      assert.equal(r.code, 1, r.stderr)
      assert.match(r.stderr, /Unknown --conflicts flag 'case2'/)
      assert.match(r.stderr, /its flag key is rowLevelConcurrency\.enabled/)
    }
    assert.equal(existsSync(join(dir, 'race-case2')), false)
    const t = await DeltaTable.open(table)
    assert.equal((await t.snapshot()).version, 0n)
    await t.close()
  })

  for (const [what, args, message] of [
    [
      '--writers delete=two',
      ['race', 'R', '--writers', 'delete=two'],
      /Invalid writer count 'two' for delete/,
    ],
    [
      '--duration soon',
      ['race', 'R', '--duration', 'soon'],
      /--duration needs a duration such as 90, 30s or 2m/,
    ],
    ['--faults kill=2', ['race', 'R', '--faults', 'kill=2'], /Invalid rate '2' for fault kill/],
    ['--timestamp yesterday', ['show', 'T', '--timestamp', 'yesterday'], /--timestamp needs an ISO time/],
    [
      '--conflicts rowLevelConcurrency.enabled=maybe',
      ['delete', 'T', '--where', 'id = 1', '--conflicts', 'rowLevelConcurrency.enabled=maybe'],
      /needs true, false or a number after '='/,
    ],
  ] as const) {
    it(`${what} exits 1 as a usage error`, async () => {
      const table = join(dir, 'usage-table')
      if (!existsSync(table)) await (await DeltaTable.create(table, { schema: 'id long' })).close()
      const loc = join(dir, `race-${what.replace(/\W+/g, '-')}`)
      const r = await cli(args.map((a) => (a === 'R' ? loc : a === 'T' ? table : a)))
      assert.equal(r.code, 1, r.stderr)
      assert.match(r.stderr, message)
      assert.match(r.stderr, /\nusage: delta-rlc /)
      assert.equal(existsSync(loc), false)
    })
  }
})

describe('durations', () => {
  for (const [text, seconds] of [
    ['90', 90],
    ['30s', 30],
    ['2m', 120],
    ['1.5m', 90],
    ['500ms', 0.5],
    ['1h', 3600],
  ] as const) {
    it(`reads --duration ${text} as ${seconds} s`, () => {
      assert.equal(durationOption({ duration: text }, 'duration', 'race'), seconds)
    })
  }
  it('refuses a negative or unitless-word duration', () => {
    assert.throws(() => durationOption({ duration: '-5' }, 'duration', 'race'), /needs a duration/)
    assert.throws(() => durationOption({ duration: '5 fortnights' }, 'duration', 'race'), /needs a duration/)
  })
})

describe('race with store latency and conflict retries', () => {
  it('passes both to the race configuration, and refuses malformed values before racing', async () => {
    const loc = join(dir, 'race-latency')
    const r = await cli([
      'race',
      loc,
      '--writers',
      'delete=1',
      '--ops-per-writer',
      '1',
      '--rows',
      '100',
      '--store-latency',
      '5ms',
      '--conflict-retries',
      '3',
      '--json',
    ])
    assert.equal(r.code, 0, r.stderr)
    const report = JSON.parse(r.stdout) as {
      runs: Array<{ config: { storeLatencyMs?: number; conflictRetries?: number } }>
    }
    assert.equal(report.runs[0]?.config.storeLatencyMs, 5)
    assert.equal(report.runs[0]?.config.conflictRetries, 3)
    for (const bad of [
      ['--conflict-retries', '-1'],
      ['--conflict-retries', 'many'],
      ['--store-latency', 'soon'],
    ]) {
      const refused = await cli(['race', join(dir, 'race-refused'), ...bad])
      assert.equal(refused.code, 1, `${bad.join(' ')}: ${refused.stderr}`)
      assert.match(refused.stderr, new RegExp(`${bad[0]}`))
    }
  })
})

describe('race flags and an existing race table', () => {
  it('races with the flag keys every command takes, then refuses to race again in the same directory', async () => {
    const loc = join(dir, 'race-flags')
    const first = await cli([
      'race',
      loc,
      '--conflicts',
      'rowLevelConcurrency.enabled,conflictDetection.dataSkipping.enabled=false',
      '--writers',
      'delete=1',
      '--duration',
      '1s',
      '--ops-per-writer',
      '2',
      '--rows',
      '200',
      '--json',
    ])
    assert.equal(first.code, 0, first.stderr)
    const report = JSON.parse(first.stdout) as { runs: Array<{ config: { conflicts: unknown } }> }
    assert.deepEqual(report.runs[0]?.config.conflicts, {
      'rowLevelConcurrency.enabled': true,
      'conflictDetection.dataSkipping.enabled': false,
    })
    const events = join(`${loc}.race`, 'events.jsonl')
    const before = await stat(events)
    const again = await cli(['race', loc, '--duration', '1'])
    assert.equal(again.code, 3, again.stderr)
    assert.match(again.stderr, /^error\[DELTA_TABLE_ALREADY_EXISTS\]: A Delta table already exists at /)
    assert.match(again.stderr, /hint: A race creates its own table\. Race in a new directory/)
    assert.match(again.stderr, /--verify-events .*events\.jsonl/)
    assert.doesNotMatch(again.stderr, /DeltaTable\.open/)
    // The earlier race's events are untouched, so --verify-events still checks it.
    assert.equal((await stat(events)).mtimeMs, before.mtimeMs)
    assert.ok((await readdir(`${loc}.race`)).includes('report.json'))
    const verify = await cli(['race', loc, '--verify-events', events])
    assert.equal(verify.code, 0, verify.stderr)
  })
})

describe('race conflicts in the library', () => {
  const location = '/tmp/delta-rlc-never-created'
  it('resolves flag keys with values, and a list of flag keys or case names, to the flags', () => {
    assert.deepEqual(
      resolveRaceConfig({
        location,
        conflicts: {
          'rowLevelConcurrency.enabled': true,
          'conflictDetection.dataSkipping.valueExact.maxBytes': 64,
        },
      }).conflicts,
      { 'rowLevelConcurrency.enabled': true, 'conflictDetection.dataSkipping.valueExact.maxBytes': 64 },
    )
    assert.deepEqual(resolveRaceConfig({ location, conflicts: ['case2', 'case4a'] }).conflicts, {
      'rowLevelConcurrency.enabled': true,
      'optimize.conflictReconciliation.enabled': true,
    })
    assert.equal(
      resolveRaceConfig({
        location,
        conflicts: { 'rowLevelConcurrency.enabled': true, 'merge.sourceKeyReadPredicate.inSetThreshold': 5 },
      }).conflictsLabel,
      'rowLevelConcurrency.enabled,merge.sourceKeyReadPredicate.inSetThreshold=5',
    )
  })
  it('refuses an unknown flag or case before a race could start', () => {
    for (const conflicts of [
      ['case9'],
      { case9: true },
      { 'rowLevelConcurrency.enabled': 'maybe' },
    ] as const) {
      assert.throws(
        () => resolveRaceConfig({ location, conflicts: conflicts as never }),
        (err: unknown) => err instanceof InvalidArgumentError && err.argument === 'conflicts',
      )
    }
    assert.equal(existsSync(location), false)
  })
})
