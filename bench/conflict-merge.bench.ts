/**
 * Case 6: an upsert MERGE that loses to another upsert MERGE of disjoint keys, reconciled row by
 * row, against rerunning the MERGE on the new table state (what a writer does after a plain
 * abort). The table has deletion vectors; 1M rows (20k with `--quick`) in ten files, each MERGE
 * 8k source rows (1k with `--quick`; under the sketch's 8,192-key cap), half of them keys already
 * in the table, spread over every file, half new.
 *
 * Both MERGEs take rows out of every file, so the loser also unions its deletion vectors with the
 * winner's there (Case 2).
 *
 * - `conflict.case6-merge-rows`: the winner wrote no change sketch (Case 6 off in its process),
 *   so the loser reads the key column of the winner's changed rows: the rows its deletion vectors
 *   took out and the rows of its new files, after the statistics tier.
 * - `conflict.case6-merge-sketch`: the winner wrote its change sketch, and the loser decides from
 *   it without reading data.
 *
 * Only the loser's `commit()` (subject) or the rerun's begin + stage + commit (baseline) is timed,
 * each on a fresh copy of the prepared table, after the winner committed.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { MergeOptions } from '../src/ops/merge-clauses.js'
import { DeltaTable } from '../src/table/delta-table.js'
import { type BenchResult, disposeCopy, result, tableCopy } from './harness.js'

const CASE6 = { 'merge.rowLevelConflicts.enabled': true } as const
/** The loser: Case 6 for the winner's new rows, Case 2 for the files both take rows out of. */
const LOSER = { ...CASE6, 'rowLevelConcurrency.enabled': true } as const

const UPSERT: MergeOptions = {
  on: 'target.id = source.id',
  whenMatched: [{ update: { value: 'source.value' } }],
  whenNotMatched: [{ insert: '*' }],
}

/**
 * Runs the Case 6 benchmarks.
 *
 * @param quick - 20k rows and 1k-row sources, one run each (a smoke run)
 * @returns one row without the winner's sketch and one with it
 */
export async function conflictMergeBenchmarks(quick: boolean): Promise<BenchResult[]> {
  const rows = quick ? 20_000 : 1_000_000
  const sourceRows = quick ? 1_000 : 8_000
  const runs = quick ? 1 : 3
  const root = await mkdtemp(join(tmpdir(), 'delta-rlc-bench-case6-'))
  try {
    const template = join(root, 'template')
    await buildTemplate(template, rows)
    // Existing keys of both spread over every file (file f holds the ids = f mod 10), disjoint
    // (the loser's are 125 above the winner's), and new keys above the table's.
    const stride = Math.floor(rows / (sourceRows / 2))
    const source = (offset: number, value: number) =>
      Array.from({ length: sourceRows }, (_, i) => {
        const j = Math.floor(i / 2)
        const id = i % 2 === 0 ? j * stride + (j % 10) + offset : rows + 2 * j + (offset > 0 ? 1 : 0)
        return { id: BigInt(id), region: 'US', value }
      })
    const loserRows = source(Math.floor(stride / 2), 1)
    const winnerRows = source(0, 2)
    const out: BenchResult[] = []
    for (const sketch of [false, true]) {
      out.push(await measure(template, { rows, sourceRows, runs, sketch, loserRows, winnerRows }))
    }
    return out
  } finally {
    await rm(root, { recursive: true, force: true })
  }
}

/** Ten appended files of `rows / 10` rows each, ids interleaved (id % 10 = file). */
async function buildTemplate(dir: string, rows: number): Promise<void> {
  const table = await DeltaTable.create(dir, {
    schema: 'id long not null, region string, value int',
    properties: { 'delta.enableDeletionVectors': 'true' },
  })
  try {
    const per = rows / 10
    for (let f = 0; f < 10; f++) {
      await table.append(
        Array.from({ length: per }, (_, i) => ({ id: BigInt(i * 10 + f), region: 'US', value: 0 })),
      )
    }
  } finally {
    await table.close()
  }
}

/** The winner's MERGE, from its own process's view: with Case 6 on it writes the sketch. */
async function win(
  table: DeltaTable,
  rows: readonly Record<string, unknown>[],
  sketch: boolean,
): Promise<void> {
  const other = await DeltaTable.open(table.location, {
    autoCheckpoint: false,
    conflicts: sketch ? CASE6 : {},
  })
  try {
    await other.merge(rows, UPSERT)
  } finally {
    await other.close()
  }
}

async function measure(
  template: string,
  o: {
    readonly rows: number
    readonly sourceRows: number
    readonly runs: number
    readonly sketch: boolean
    readonly loserRows: readonly Record<string, unknown>[]
    readonly winnerRows: readonly Record<string, unknown>[]
  },
): Promise<BenchResult> {
  const subject: number[] = []
  const baseline: number[] = []
  let kind = ''
  let bySketch = false
  for (let i = 0; i < o.runs; i++) {
    const table = await tableCopy(template, LOSER)
    try {
      const loser = await table.begin()
      await loser.merge(o.loserRows, UPSERT)
      await win(table, o.winnerRows, o.sketch)
      const t0 = performance.now()
      const r = await loser.commit()
      subject.push(performance.now() - t0)
      kind = r.reconciliations.map((x) => x.kind).join(',')
      bySketch = r.reconciliations.some((x) => x.detail.changeSketch === true)
    } finally {
      await disposeCopy(table)
    }
    const rerun = await tableCopy(template, LOSER)
    try {
      await win(rerun, o.winnerRows, o.sketch)
      // The rerun starts from the table already at the new state, as the loser did.
      await (await rerun.begin()).abort()
      const t0 = performance.now()
      const txn = await rerun.begin()
      await txn.merge(o.loserRows, UPSERT)
      await txn.commit()
      baseline.push(performance.now() - t0)
    } finally {
      await disposeCopy(rerun)
    }
  }
  return result(
    o.sketch ? 'conflict.case6-merge-sketch' : 'conflict.case6-merge-rows',
    { tableRows: o.rows, sourceRows: o.sourceRows, reconciled: kind, bySketch: String(bySketch) },
    subject,
    'rerun the losing MERGE on the new state',
    baseline,
    { sizeParameter: 'tableRows' },
  )
}
