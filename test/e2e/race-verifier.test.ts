/**
 * The verifier on tables a race wrote, then tampered with: a row deleted behind the race's back
 * (in a commit dressed with a race marker) is found at exactly its version and key, even when
 * later commits hide it from the last version's content check; an operation applied a second
 * time under its marker is reported too. The untouched table passes.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { type RaceConfig, type RunEvent, readEvents, runRace, verifyRace } from '../../src/race/index.js'
import { appIdOf, planOperation } from '../../src/race/plan.js'
import { stageOperation } from '../../src/race/stage-op.js'
import { DeltaTable } from '../../src/table/delta-table.js'

describe('race verifier on a tampered table', () => {
  let root: string
  let location: string
  let eventsPath: string
  let config: RaceConfig

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'delta-rlc-race-verify-'))
    location = join(root, 'table')
    const report = await runRace({
      location,
      writers: { append: 1, delete: 1 },
      conflicts: 'all',
      seed: 21,
      durationMs: 60_000,
      opsPerWriter: 4,
      rows: 500,
      initialFiles: 2,
    })
    const run = report.runs[0]!
    eventsPath = run.eventsPath
    config = ((await readEvents(eventsPath))[0] as RunEvent).config
    assert.ok(run.verify?.ok, 'the untouched table passes')
  })
  after(() => rm(root, { recursive: true, force: true }))

  it('names the version and key of a row deleted behind the race, and a double application', async () => {
    const table = await DeltaTable.open(location)
    let tampered: bigint
    let victim: number
    try {
      const ids = (await table.scan({ columns: ['id'] }).toArray())
        .map((r) => Number(r.id))
        .sort((a, b) => a - b)
      victim = ids[0]!
      // A DELETE dressed as the append writer's operation 100.
      const bad = await table.begin()
      bad.setTransaction(appIdOf(config.runId, 0), 100)
      await bad.delete(`id = ${victim}`)
      tampered = (await bad.commit()).version
      // Then a legitimate operation of the delete writer, so the last version alone would not
      // say where things went wrong.
      const next = await table.begin()
      next.setTransaction(appIdOf(config.runId, 1), 100)
      await stageOperation(next, planOperation(config, config.writers[1]!, 100))
      await next.commit()
      // And the delete writer's first operation once more, under its own marker.
      const again = await table.begin()
      again.setTransaction(appIdOf(config.runId, 1), 0)
      await stageOperation(again, planOperation(config, config.writers[1]!, 0))
      await again.commit()
    } finally {
      await table.close()
    }

    const v = await verifyRace(location, eventsPath, { fullCheckEvery: 1000 })
    assert.equal(v.ok, false)
    const d = v.firstDivergence!
    assert.equal(d.version, Number(tampered))
    assert.equal(d.check, 'content-matches-serial-replay')
    assert.equal(d.key, victim)
    assert.equal(d.actual, 'no row')
    assert.match(d.expected ?? '', new RegExp(`id: ${victim},`))
    assert.equal(d.writer, 0)
    assert.equal(d.seq, 100)
    assert.match(d.message, new RegExp(`version ${tampered}, key ${victim}`))
    assert.equal(v.checks.find((c) => c.name === 'applied-at-most-once')?.ok, false)
    assert.equal(v.checks.find((c) => c.name === 'content-matches-serial-replay')?.ok, false)
    assert.equal(v.checks.find((c) => c.name === 'log-contiguous')?.ok, true)
  })

  it('rejects an event log without a run header', async () => {
    const { writeFile } = await import('node:fs/promises')
    const bogus = join(root, 'bogus.jsonl')
    await writeFile(bogus, '{"type":"attempt"}\n')
    await assert.rejects(verifyRace(location, bogus), { code: 'DELTA_INVALID_ARGUMENT' })
  })
})
