/**
 * A race with `conflictRetries`: a writer whose operation a conflict aborted runs the same
 * operation again (under the same marker) until it commits or the retries run out, as an
 * application that must get its write done would. Three DML writers on one file and two hot keys,
 * with file-level conflict rules, so that operations do lose races; the verifier still passes.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { InvalidArgumentError } from '../../src/errors/index.js'
import { type AttemptEvent, readEvents, renderTerminalReport, runRace } from '../../src/race/index.js'
import { resolveRaceConfig } from '../../src/race/options.js'

const RETRIES = 20

describe('race with conflict retries', () => {
  it('an operation a conflict aborted runs again until it commits; the verifier passes', async () => {
    const root = await mkdtemp(join(tmpdir(), 'delta-rlc-race-retries-'))
    try {
      const report = await runRace({
        location: join(root, 'table'),
        writers: { delete: 1, update: 2 },
        conflicts: 'none',
        overlap: 'hot',
        hotKeys: 2,
        seed: 11,
        durationMs: 120_000,
        opsPerWriter: 6,
        rows: 200,
        initialFiles: 1,
        conflictRetries: RETRIES,
      })
      const run = report.runs[0]!
      assert.ok(run.verify?.ok, `the verifier passes: ${run.verify?.firstDivergence?.message}`)
      const attempts = (await readEvents(run.eventsPath)).filter(
        (e): e is AttemptEvent => e.type === 'attempt',
      )
      const byOp = new Map<string, AttemptEvent[]>()
      for (const a of attempts)
        byOp.set(`${a.writer}/${a.seq}`, [...(byOp.get(`${a.writer}/${a.seq}`) ?? []), a])
      assert.equal(byOp.size, 18, 'every planned operation ran')
      let retried = 0
      for (const [op, tries] of byOp) {
        const last = tries.at(-1)!
        assert.notEqual(last.outcome, 'aborted', `${op} ended aborted after ${tries.length} tries`)
        for (const t of tries.slice(0, -1))
          assert.equal(t.outcome, 'aborted', `${op}: only the last try ends it`)
        if (tries.length > 1) retried++
      }
      assert.ok(retried > 0, 'some operation lost a race and ran again')
      assert.match(
        renderTerminalReport(report).replace(/\s+/g, ' '),
        /aborted operations run again up to 20 times/,
      )
    } finally {
      await rm(root, { recursive: true, force: true })
    }
  })

  it('the option is validated, and 0 leaves the configuration as without it', () => {
    const plain = resolveRaceConfig({ location: '/tmp/t' })
    assert.deepEqual(resolveRaceConfig({ location: '/tmp/t', conflictRetries: 0 }), plain)
    assert.equal(resolveRaceConfig({ location: '/tmp/t', conflictRetries: 5 }).conflictRetries, 5)
    for (const bad of [-1, 1.5, Number.NaN]) {
      assert.throws(
        () => resolveRaceConfig({ location: '/tmp/t', conflictRetries: bad }),
        InvalidArgumentError,
      )
    }
  })
})
