/**
 * A short race of seven writer processes (an OPTIMIZE among them) on disjoint keys of shared
 * files, run twice on the same seeded workload: with file-level conflict checking, concurrent DML
 * and the OPTIMIZE abort with Delta's concurrent-modification errors; with every reconciliation
 * on, nothing aborts and the OPTIMIZE commits while the DML writers change its sources. The
 * verifier passes on both tables.
 */
import assert from 'node:assert/strict'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { type RaceReport, renderTerminalReport, runRace } from '../../src/race/index.js'

describe('race on disjoint keys, file-level vs row-level', () => {
  let root: string
  let report: RaceReport

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'delta-rlc-race-disjoint-'))
    report = await runRace({
      location: join(root, 'table'),
      writers: { append: 2, delete: 2, update: 1, merge: 1, optimize: 1 },
      overlap: 'disjoint',
      conflicts: 'all',
      compare: true,
      seed: 11,
      // Bounded by operations, not time: every writer runs the same number of operations however
      // fast the machine is (the duration is only a ceiling).
      opsPerWriter: 8,
      durationMs: 120_000,
      rows: 3000,
      initialFiles: 4,
    })
  })
  after(() => rm(root, { recursive: true, force: true }))

  it('runs both tables with the same writers and the verifier passes on each', () => {
    assert.equal(report.runs.length, 2)
    const [off, on] = report.runs
    assert.equal(off?.label, 'file-level')
    assert.equal(on?.label, 'row-level')
    for (const run of report.runs) {
      assert.deepEqual(run.crashes, [], `${run.label}: no writer crashed`)
      assert.ok(
        run.verify?.ok,
        `${run.label}: ${JSON.stringify(run.verify?.firstDivergence ?? run.verify?.checks)}`,
      )
      assert.ok((run.verify?.committedOps ?? 0) >= 20, `${run.label}: enough commits to mean something`)
      assert.equal(run.verify?.acknowledged, run.stats.totals.commits)
    }
    assert.ok(report.ok)
  })

  it('file-level checking aborts concurrent DML with concurrent-modification codes', () => {
    const off = report.runs[0]!.stats.totals
    assert.ok(off.aborts > 0, 'file-level Delta aborts some of the disjoint DML')
    for (const code of Object.keys(off.abortsByCode)) assert.match(code, /^DELTA_CONCURRENT_/)
    assert.equal(off.reconciliations, 0)
  })

  it('row-level reconciliation commits every operation: zero aborts', (t) => {
    const on = report.runs[1]!.stats.totals
    t.diagnostic(
      `row-level: ${on.attempts} attempts, ${on.commits} commits, ${JSON.stringify(on.reconciliationsByCase)}`,
    )
    assert.equal(on.aborts, 0, JSON.stringify(on.abortsByCode))
    assert.ok(on.reconciliations > 0)
    assert.ok(
      (on.reconciliationsByCase['case2-dv-union'] ?? 0) > 0,
      'same-file disjoint DML used the DV union',
    )
    const optimizer = report.runs[1]!.stats.writers.find((w) => w.kind === 'optimize')
    assert.ok((optimizer?.commits ?? 0) > 0, 'the OPTIMIZE writer committed')
    // In 8 operations per writer both directions occur (measured: see the commit).
    assert.ok(
      (on.reconciliationsByCase['case4a-forward-remap'] ?? 0) > 0,
      'an OPTIMIZE remapped a winning DML',
    )
    assert.ok(
      (on.reconciliationsByCase['case4b-reverse-remap'] ?? 0) > 0,
      'a DML was remapped onto an OPTIMIZE',
    )
  })

  it('logs every attempt as a JSON line with its parameters, versions and timings', async () => {
    const run = report.runs[1]!
    const lines = (await readFile(run.eventsPath, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    assert.equal(lines[0].type, 'run')
    const attempts = lines.filter((e) => e.type === 'attempt')
    assert.equal(attempts.length, run.stats.totals.attempts)
    const dml = attempts.find((e) => e.kind === 'update' && e.outcome === 'committed')
    assert.ok(dml, 'an update committed')
    assert.ok(Array.isArray(dml.params.keys) && dml.params.keys.length > 0)
    assert.equal(typeof dml.readVersion, 'number')
    assert.ok(dml.version > dml.readVersion)
    assert.ok(dml.attempts >= 1)
    assert.ok(dml.endedAt >= dml.commitStartedAt && dml.commitStartedAt >= dml.startedAt)
  })

  it('prints the side-by-side comparison', () => {
    const text = renderTerminalReport(report)
    assert.match(text, /side by side/)
    assert.match(text, /file-level\s+row-level/)
    assert.match(text, /RESULT: PASS/)
  })
})
