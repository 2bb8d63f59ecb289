/**
 * Case 5b: a DML that loses to a Z-order OPTIMIZE of the files it touched, reconciled by finding
 * its rows by stable row id in the OPTIMIZE's outputs, against rerunning the DML on the new table
 * state (what a writer does after a plain abort). The table has row tracking and deletion vectors;
 * every row (1M, 20k with `--quick`) is in a source the OPTIMIZE relocates into about 100 outputs
 * clustered by (x, y).
 *
 * - `conflict.case5b-point-delete`: `DELETE WHERE id = k`; the rerun reads every output's `id`
 *   (the Z-order spreads ids over all of them), the reconcile reads the id column of the outputs
 *   whose (id, x, y) statistics admit the row.
 * - `conflict.case5b-region-delete` and `conflict.case5b-region-update`: the rows of a small (x, y)
 *   region; both prune to the same few outputs, the rerun reads x and y there (and, for the
 *   UPDATE, writes the images again), the reconcile their row-id column.
 *
 * Only the loser's `commit()` (subject) or the rerun's begin + stage + commit (baseline) is timed,
 * each on a fresh copy of the prepared table, after the OPTIMIZE committed.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DeltaTable } from '../src/table/delta-table.js'
import { type BenchResult, disposeCopy, result, tableCopy } from './harness.js'

const FLAGS = {
  'optimize.zorder.conflictReconciliation.reverse.enabled': true,
} as const

/** One DML of the benchmark. */
interface Dml {
  readonly name: string
  readonly run: (txn: Awaited<ReturnType<DeltaTable['begin']>> | DeltaTable) => Promise<unknown>
}

/**
 * Runs the Case 5b benchmarks.
 *
 * @param quick - 20k rows, one run each (a smoke run)
 * @returns one row per DML
 */
export async function conflictRelocationBenchmarks(quick: boolean): Promise<BenchResult[]> {
  const rows = quick ? 20_000 : 1_000_000
  const runs = quick ? 1 : 3
  const root = await mkdtemp(join(tmpdir(), 'delta-rlc-bench-case5b-'))
  try {
    const template = join(root, 'template')
    await buildTemplate(template, rows)
    const k = BigInt(Math.floor(rows / 3))
    const dmls: Dml[] = [
      { name: 'conflict.case5b-point-delete', run: (t) => t.delete(`id = ${k}`) },
      {
        name: 'conflict.case5b-region-delete',
        run: (t) => t.delete('x BETWEEN 10 AND 11 AND y BETWEEN 20 AND 29'),
      },
      {
        name: 'conflict.case5b-region-update',
        run: (t) =>
          t.update({ where: 'x BETWEEN 10 AND 11 AND y BETWEEN 20 AND 29', set: { v: "'updated'" } }),
      },
    ]
    const out: BenchResult[] = []
    for (const dml of dmls) out.push(await measure(template, rows, dml, runs))
    return out
  } finally {
    await rm(root, { recursive: true, force: true })
  }
}

/** Ten appended files of `rows / 10` rows each, x and y spread over 0..999. */
async function buildTemplate(dir: string, rows: number): Promise<void> {
  const table = await DeltaTable.create(dir, {
    schema: 'id long not null, x int, y int, v string',
    properties: { 'delta.enableDeletionVectors': 'true', 'delta.enableRowTracking': 'true' },
  })
  try {
    const per = rows / 10
    for (let f = 0; f < 10; f++) {
      await table.append(
        Array.from({ length: per }, (_, i) => {
          const id = f * per + i
          return { id: BigInt(id), x: (id * 7919) % 1000, y: (id * 104_729) % 997, v: `value-${id}` }
        }),
      )
    }
  } finally {
    await table.close()
  }
}

/** The Z-order the DML loses to: about 100 outputs. */
async function zOrder(table: DeltaTable): Promise<void> {
  const other = await DeltaTable.open(table.location, { autoCheckpoint: false })
  try {
    const bytes = (await other.snapshot()).activeFiles().reduce((n, f) => n + Number(f.size), 0)
    await other.optimize({ zOrderBy: ['x', 'y'], targetFileSize: Math.ceil(bytes / 100) })
  } finally {
    await other.close()
  }
}

async function measure(template: string, rows: number, dml: Dml, runs: number): Promise<BenchResult> {
  const subject: number[] = []
  const baseline: number[] = []
  let kind = ''
  let outputs = 0
  for (let i = 0; i < runs; i++) {
    const table = await tableCopy(template, FLAGS)
    try {
      const loser = await table.begin()
      await dml.run(loser)
      await zOrder(table)
      const t0 = performance.now()
      const r = await loser.commit()
      subject.push(performance.now() - t0)
      kind = r.reconciliations.map((x) => x.kind).join(',')
      outputs = (await table.snapshot()).activeFiles().length
    } finally {
      await disposeCopy(table)
    }
    const rerun = await tableCopy(template, FLAGS)
    try {
      await zOrder(rerun)
      // The rerun starts from the table already at the new state, as the loser did.
      await (await rerun.begin()).abort()
      const t0 = performance.now()
      const txn = await rerun.begin()
      await dml.run(txn)
      await txn.commit()
      baseline.push(performance.now() - t0)
    } finally {
      await disposeCopy(rerun)
    }
  }
  return result(
    dml.name,
    { relocatedRows: rows, reconciled: kind },
    subject,
    'rerun the losing DML on the new state',
    baseline,
    { sizeParameter: 'relocatedRows', extra: { outputs } },
  )
}
