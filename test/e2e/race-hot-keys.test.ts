/**
 * A race where about half of every DML's keys come from a small hot set: writers genuinely
 * collide on rows. With every reconciliation on, the aborts that remain are each explained by
 * the winning commit having acted on a key the loser also acted on, and the table still equals a
 * serial replay of the committed operations.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { type RaceReport, runRace } from '../../src/race/index.js'

describe('race on hot keys', () => {
  let root: string
  let report: RaceReport

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'delta-rlc-race-hot-'))
    report = await runRace({
      location: join(root, 'table'),
      writers: { append: 1, delete: 2, update: 2, merge: 1 },
      overlap: 'hot',
      hotKeys: 12,
      conflicts: 'all',
      seed: 5,
      // Bounded by operations, not time: a timed race on a loaded machine runs too few to test.
      opsPerWriter: 8,
      durationMs: 180_000,
      rows: 3000,
      initialFiles: 4,
    })
  })
  after(() => rm(root, { recursive: true, force: true }))

  it('the verifier passes', () => {
    const run = report.runs[0]!
    assert.deepEqual(run.crashes, [])
    assert.ok(run.verify?.ok, JSON.stringify(run.verify?.firstDivergence ?? run.verify?.checks))
  })

  it('aborts happen, and only as genuine conflicts on a shared key', () => {
    const v = report.runs[0]!.verify!
    const conflicts = v.abortDetails
    assert.ok(conflicts.length > 0, 'writers on hot keys do collide')
    for (const a of conflicts) {
      assert.equal(
        a.class,
        'genuine',
        `w${a.writer} seq ${a.seq} ${a.code} vs v${a.winnerVersion}: ${a.reconcileRefused}`,
      )
      assert.ok(a.sharedKeys.length > 0)
      assert.match(a.code, /^DELTA_CONCURRENT_/)
    }
    // Every abort of the run is one of the explained conflicts.
    assert.equal(report.runs[0]!.stats.totals.aborts, conflicts.length)
  })

  it('reconciles the DML that did not collide', () => {
    assert.ok(report.runs[0]!.stats.totals.reconciliations > 0)
  })
})
