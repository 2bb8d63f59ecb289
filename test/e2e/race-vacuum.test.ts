/**
 * A short race with a VACUUM writer at retention 0 (retention check off) among appends, deletes,
 * updates and an OPTIMIZE: VACUUM deletes every file the moment it is removed, and writers in
 * flight keep theirs. The verifier passes, its check that every data and deletion-vector file of
 * the final snapshot exists included, and the log holds VACUUM START and END commits that
 * deleted files.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { type RaceReport, runRace } from '../../src/race/index.js'
import { DeltaTable } from '../../src/table/delta-table.js'

describe('race with a VACUUM writer at retention 0', () => {
  let root: string
  let report: RaceReport

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'delta-rlc-race-vacuum-'))
    report = await runRace({
      location: join(root, 'table'),
      writers: { append: 1, delete: 1, update: 1, optimize: 1, vacuum: 1 },
      overlap: 'disjoint',
      conflicts: 'all',
      seed: 35,
      // Bounded by operations, not time: a timed race on a loaded machine runs too few to test.
      opsPerWriter: 8,
      durationMs: 180_000,
      rows: 1000,
      initialFiles: 4,
    })
  })
  after(() => rm(root, { recursive: true, force: true }))

  it('ends with every committed file present and the verifier passing', () => {
    const run = report.runs[0]
    assert.ok(run)
    assert.deepEqual(run.crashes, [], 'no writer crashed')
    const present = run.verify?.checks.find((c) => c.name === 'committed-files-present')
    assert.ok(present?.ok, JSON.stringify(present))
    assert.ok(run.verify?.ok, JSON.stringify(run.verify?.firstDivergence ?? run.verify?.checks))
    assert.ok((run.verify?.committedOps ?? 0) >= 5, 'enough commits to mean something')
  })

  it('VACUUM ran between the writers and deleted removed files', async () => {
    const table = await DeltaTable.open(join(root, 'table'))
    try {
      const history = await table.history()
      const ends = history.filter((h) => h.operation === 'VACUUM END')
      assert.ok(history.some((h) => h.operation === 'VACUUM START'))
      assert.ok(ends.length > 0)
      const deleted = ends.reduce(
        (n, h) =>
          n +
          Number(
            (h.commitInfo?.operationMetrics as Record<string, string> | undefined)?.numDeletedFiles ?? 0,
          ),
        0,
      )
      assert.ok(deleted > 0, 'VACUUM deleted the files other writers removed')
    } finally {
      await table.close()
    }
  })
})
