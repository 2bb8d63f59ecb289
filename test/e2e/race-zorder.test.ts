/**
 * A short race with a Z-order OPTIMIZE writer beside DELETE and UPDATE writers, on a table with
 * row tracking (on by default when a `zorder` writer runs): the Z-order commits while the DML
 * writers change its sources, reconciling through Case 5a or 5b, and the verifier passes, its
 * row-id checks included (no two rows share a stable id, and every row keeps its id across the
 * relocations). `case5` in a conflicts list turns on both Z-order flags.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { type RaceReport, resolveRaceConfig, runRace } from '../../src/race/index.js'

describe('race with a Z-order OPTIMIZE writer', () => {
  let root: string
  let report: RaceReport

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'delta-rlc-race-zorder-'))
    report = await runRace({
      location: join(root, 'table'),
      writers: { delete: 1, update: 1, zorder: 1 },
      overlap: 'disjoint',
      conflicts: 'all',
      seed: 5,
      // Bounded by operations, not time: a timed race on a loaded machine runs too few to test.
      opsPerWriter: 8,
      durationMs: 180_000,
      rows: 1000,
      initialFiles: 4,
    })
  })
  after(() => rm(root, { recursive: true, force: true }))

  it('commits Z-order OPTIMIZEs among the DML, and the verifier passes with its row-id checks', () => {
    const [run] = report.runs
    assert.ok(run)
    assert.deepEqual(run.crashes, [])
    assert.ok(run.verify?.ok, JSON.stringify(run.verify?.firstDivergence ?? run.verify?.checks))
    const checks = new Map(run.verify?.checks.map((c) => [c.name, c]))
    assert.equal(checks.get('row-ids-unique')?.ok, true)
    assert.equal(checks.get('row-ids-preserved')?.ok, true)
    assert.match(checks.get('row-ids-preserved')?.detail ?? '', /\(([1-9]\d*) comparisons\)/)
    const zorder = run.stats.writers.find((w) => w.kind === 'zorder')
    assert.ok((zorder?.commits ?? 0) > 0, 'the Z-order writer committed')
    const byCase = run.stats.totals.reconciliationsByCase
    assert.ok(
      (byCase['case5a-zorder-forward'] ?? 0) + (byCase['case5b-zorder-reverse'] ?? 0) > 0,
      `a Z-order reconciled with a DML: ${JSON.stringify(byCase)}`,
    )
  })

  it('case5 in a conflicts list turns on both Z-order flags; row tracking follows the writers unless asked', () => {
    const config = resolveRaceConfig({
      location: join(root, 'x'),
      writers: { zorder: 1 },
      conflicts: ['case5'],
    })
    assert.deepEqual(config.conflicts, {
      'optimize.zorder.conflictReconciliation.enabled': true,
      'optimize.zorder.conflictReconciliation.reverse.enabled': true,
    })
    assert.equal(config.rowTracking, true)
    assert.equal(
      resolveRaceConfig({ location: join(root, 'y'), writers: { delete: 1 } }).rowTracking,
      undefined,
    )
    assert.equal(
      resolveRaceConfig({ location: join(root, 'z'), writers: { zorder: 1 }, rowTracking: false })
        .rowTracking,
      undefined,
    )
  })
})
