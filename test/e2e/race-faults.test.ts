/**
 * A race under all three fault kinds: writer processes killed with SIGKILL mid-operation (and
 * restarted by the harness), storage puts and reads that fail, and puts that land while the
 * writer sees an error. Nothing acknowledged is lost and nothing is applied twice: the verifier
 * passes.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { type RaceReport, runRace } from '../../src/race/index.js'

describe('race under kill -9, storage and ambiguous-put faults', () => {
  let root: string
  let report: RaceReport

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'delta-rlc-race-faults-'))
    report = await runRace({
      location: join(root, 'table'),
      writers: { append: 2, delete: 1, update: 1, merge: 1, optimize: 1 },
      overlap: 'disjoint',
      conflicts: 'all',
      seed: 3,
      // Bounded by operations, not time: the kills and faults a seed plans happen however
      // loaded the machine is (an 8-second race on a busy machine once ran too few to kill any).
      opsPerWriter: 10,
      durationMs: 180_000,
      rows: 2000,
      initialFiles: 4,
      faults: { kill: 0.12, put: 0.02, read: 0.01, ambiguous: 0.03 },
    })
  })
  after(() => rm(root, { recursive: true, force: true }))

  it('the verifier passes: nothing acknowledged lost, nothing applied twice', () => {
    const run = report.runs[0]!
    assert.deepEqual(run.crashes, [], 'faults end in logged aborts or kills, never in a crash')
    const v = run.verify!
    assert.ok(v.ok, JSON.stringify(v.firstDivergence ?? v.checks))
    for (const name of [
      'applied-at-most-once',
      'acknowledged-commits-visible',
      'content-matches-serial-replay',
    ]) {
      assert.ok(v.checks.find((c) => c.name === name)?.ok, name)
    }
  })

  it('writers were killed and restarted, and storage faults were logged as aborts', () => {
    const run = report.runs[0]!
    const t = run.stats.totals
    assert.ok(t.kills > 0, 'some writer was killed')
    assert.ok(run.restarts > 0 && run.restarts <= t.kills, `${run.restarts} restarts for ${t.kills} kills`)
    assert.ok((t.abortsByCode.DELTA_STORAGE_ERROR ?? 0) > 0, JSON.stringify(t.abortsByCode))
    assert.ok(t.opRetries > 0, 'operations were tried again under their marker')
    assert.ok(t.commits > 10)
  })

  it('on disjoint keys, a conflict abort only comes from a deletion vector a storage fault kept from loading', () => {
    const v = report.runs[0]!.verify!
    for (const a of v.abortDetails) {
      assert.equal(a.class, 'fact-unavailable', JSON.stringify(a))
      assert.match(a.reconcileRefused ?? '', /was not loaded/)
    }
  })
})
