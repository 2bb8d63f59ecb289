/**
 * Conflict checking: the time a losing commit takes to check and reconcile one winner, against
 * re-running the losing operation from scratch on the new table state (what a writer does after
 * a plain abort).
 *
 * - `conflict.case2-dv-union`: two DELETEs of disjoint rows on one large file (Case 2), each
 *   deleting 1k, 100k or 1M positions; the loser merges the deletion vectors.
 * - `conflict.winner-files`: a DELETE on one file loses to a blind append of 10, 1,000 or 10,000
 *   files on a Serializable table; the stats tier proves every added file disjoint (Case 1).
 *
 * Each run starts from a fresh copy of a prepared table; only the loser's `commit()` (subject)
 * or the rerun's begin + stage + commit (baseline) is timed.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Action } from '../src/protocol/actions.js'
import { DeltaTable } from '../src/table/delta-table.js'
import { buildSyntheticTable } from '../test/helpers/synthetic-table.js'
import { type BenchResult, disposeCopy, result, tableCopy } from './harness.js'

/**
 * Runs the conflict benchmarks.
 *
 * @param quick - the smallest sizes only, one run each
 * @returns one row per size
 */
export async function conflictBenchmarks(quick: boolean): Promise<BenchResult[]> {
  const runs = quick ? 1 : 3
  const out: BenchResult[] = []
  const root = await mkdtemp(join(tmpdir(), 'delta-rlc-bench-conflict-'))
  try {
    for (const deleted of quick ? [1_000] : [1_000, 100_000, 1_000_000]) {
      out.push(await dvUnion(root, deleted, runs))
    }
    for (const files of quick ? [10] : [10, 1_000, 10_000]) {
      out.push(await winnerFiles(root, files, runs))
    }
  } finally {
    await rm(root, { recursive: true, force: true })
  }
  return out
}

async function dvUnion(root: string, deleted: number, runs: number): Promise<BenchResult> {
  const template = join(root, `dv-${deleted}`)
  const rows = 2 * deleted
  await buildSyntheticTable(template, { files: 1, rowsPerFile: rows })
  const loserWhere = `id % 2 = 0 AND id < ${rows}`
  const winnerWhere = `id % 2 = 1 AND id < ${rows}`
  const flags = { 'rowLevelConcurrency.enabled': true }
  const subject: number[] = []
  const baseline: number[] = []
  let kind = ''
  for (let i = 0; i < runs; i++) {
    const table = await tableCopy(template, flags)
    try {
      const loser = await table.begin()
      await loser.delete(loserWhere)
      await table.delete(winnerWhere)
      const t0 = performance.now()
      const r = await loser.commit()
      subject.push(performance.now() - t0)
      kind = r.reconciliations.map((x) => x.kind).join(',')
    } finally {
      await disposeCopy(table)
    }
    const rerun = await tableCopy(template, flags)
    try {
      await rerun.delete(winnerWhere)
      const t0 = performance.now()
      await rerun.delete(loserWhere)
      baseline.push(performance.now() - t0)
    } finally {
      await disposeCopy(rerun)
    }
  }
  return result(
    'conflict.case2-dv-union',
    { deletedPerSide: deleted, fileRows: rows, reconciled: kind },
    subject,
    'rerun the losing DELETE on the new state',
    baseline,
  )
}

async function winnerFiles(root: string, files: number, runs: number): Promise<BenchResult> {
  const template = join(root, `files-${files}`)
  const prepared = await DeltaTable.create(template, {
    schema: 'id long, value double',
    properties: { 'delta.enableDeletionVectors': 'true', 'delta.isolationLevel': 'Serializable' },
  })
  await prepared.append(Array.from({ length: 1000 }, (_, i) => ({ id: BigInt(i), value: i / 2 })))
  await prepared.close()
  // The winner's files hold ids far from the loser's predicate; only their log entries matter.
  const adds: Action[] = Array.from({ length: files }, (_, k) => ({
    add: {
      path: `appended-${String(k).padStart(6, '0')}.parquet`,
      partitionValues: {},
      size: 1024n,
      modificationTime: BigInt(Date.now()),
      dataChange: true,
      stats: JSON.stringify({
        numRecords: 100,
        minValues: { id: 1_000_000 + 100 * k, value: 0 },
        maxValues: { id: 1_000_099 + 100 * k, value: 1 },
        nullCount: { id: 0, value: 0 },
      }),
    },
  }))
  const append = async (table: DeltaTable) => {
    const w = await table.begin()
    w.stageActions(adds, { operation: 'WRITE' })
    await w.commit()
  }
  const subject: number[] = []
  const baseline: number[] = []
  let kind = ''
  for (let i = 0; i < runs; i++) {
    const table = await tableCopy(template, 'all')
    try {
      const loser = await table.begin()
      await loser.delete('id < 5')
      await append(table)
      const t0 = performance.now()
      const r = await loser.commit()
      subject.push(performance.now() - t0)
      kind = [...new Set(r.reconciliations.map((x) => x.kind))].join(',')
    } finally {
      await disposeCopy(table)
    }
    const rerun = await tableCopy(template, 'all')
    try {
      await append(rerun)
      const t0 = performance.now()
      await rerun.delete('id < 5')
      baseline.push(performance.now() - t0)
    } finally {
      await disposeCopy(rerun)
    }
  }
  return result(
    'conflict.winner-files',
    { winnerFiles: files, reconciled: kind },
    subject,
    'rerun the losing DELETE on the new state',
    baseline,
  )
}
