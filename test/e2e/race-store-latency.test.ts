/**
 * A race with `storeLatencyMs`: the writer processes reach the table through a store whose every
 * request takes that much longer, the run header records it, and the race is otherwise the same
 * (the verifier passes). The only assertion on time is a lower bound that follows from the
 * deliberate waits: a committed attempt makes at least a listing and then a put, so it cannot take
 * less than two latencies (without the added latency these attempts take a few tens of ms).
 * Nothing is asserted about speed.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { InvalidArgumentError } from '../../src/errors/index.js'
import {
  type AttemptEvent,
  type RunEvent,
  readEvents,
  renderTerminalReport,
  runRace,
} from '../../src/race/index.js'
import { resolveRaceConfig } from '../../src/race/options.js'

const LATENCY_MS = 100

describe('race with added store latency', () => {
  it('writers pay the latency on their requests, the header records it, the verifier passes', async () => {
    const root = await mkdtemp(join(tmpdir(), 'delta-rlc-race-latency-'))
    try {
      const report = await runRace({
        location: join(root, 'table'),
        writers: { append: 1, delete: 1 },
        seed: 5,
        durationMs: 60_000,
        opsPerWriter: 3,
        rows: 400,
        initialFiles: 2,
        storeLatencyMs: LATENCY_MS,
      })
      const run = report.runs[0]!
      assert.ok(run.verify?.ok, `the verifier passes: ${run.verify?.firstDivergence?.message}`)
      assert.deepEqual(run.crashes, [])
      const events = await readEvents(run.eventsPath)
      assert.equal((events[0] as RunEvent).config.storeLatencyMs, LATENCY_MS)
      assert.match(renderTerminalReport(report).replace(/\s+/g, ' '), /100 ms added per store request/)
      const committed = events.filter(
        (e): e is AttemptEvent => e.type === 'attempt' && e.outcome === 'committed',
      )
      assert.ok(committed.length >= 3, `some attempts commit (${committed.length})`)
      for (const a of committed) {
        assert.ok(
          a.endedAt - a.startedAt >= 2 * LATENCY_MS,
          `attempt ${a.writer}/${a.seq} took ${a.endedAt - a.startedAt} ms, less than two requests`,
        )
      }
    } finally {
      await rm(root, { recursive: true, force: true })
    }
  })

  it('the option is validated, and 0 leaves the configuration as without it', () => {
    const plain = resolveRaceConfig({ location: '/tmp/t' })
    assert.deepEqual(resolveRaceConfig({ location: '/tmp/t', storeLatencyMs: 0 }), plain)
    assert.equal(plain.storeLatencyMs, undefined)
    assert.equal(resolveRaceConfig({ location: '/tmp/t', storeLatencyMs: 20 }).storeLatencyMs, 20)
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      assert.throws(
        () => resolveRaceConfig({ location: '/tmp/t', storeLatencyMs: bad }),
        InvalidArgumentError,
      )
    }
  })
})
