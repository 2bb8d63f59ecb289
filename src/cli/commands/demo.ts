import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DeltaTable, InternalError, isDeltaError } from '../../index.js'
import { type Command, integerOption, stringOption, UsageError } from '../command.js'
import { renderTable } from '../render.js'

/** What one demo run measured. */
interface DemoRun {
  readonly checking: 'file-level' | 'row-level'
  readonly committed: number
  readonly aborted: number
  readonly abortCodes: Readonly<Record<string, number>>
  readonly liveRows: number
  readonly expectedRows: number
  readonly ms: number
}

/** `delta-rlc demo`: concurrent disjoint DELETEs, file-level vs row-level conflict checking. */
export const demoCommand: Command = {
  name: 'demo',
  summary: 'Concurrent DELETEs of disjoint rows in the same files: file-level Delta vs delta-rlc.',
  usage: '[--writers N] [--rows N] [--dir DIR]',
  details: [
    'Creates a table with deletion vectors, appends --rows rows, then --writers transactions begin on',
    'the same snapshot, each deleting a disjoint set of keys that live in the same files, and commit',
    'one after the other. Runs once with file-level checking (every writer after the first aborts)',
    'and once with every row-level reconciliation on (all commit), and verifies the live row counts.',
  ].join('\n'),
  options: {
    writers: { type: 'string', value: 'N', help: 'concurrent writers (default 8, at most 1000)' },
    rows: { type: 'string', value: 'N', help: 'rows in the table (default 100000, a multiple of 1000)' },
    dir: {
      type: 'string',
      value: 'DIR',
      help: 'create the two tables under DIR and keep them (default: a temp dir, removed)',
    },
  },
  positionals: { min: 0, max: 0, names: 'no arguments' },
  async run(ctx, values) {
    const writers = integerOption(values, 'writers', 'demo') ?? 8
    const rows = integerOption(values, 'rows', 'demo') ?? 100_000
    if (writers < 1 || writers > 1000) throw new UsageError('--writers must be between 1 and 1000', 'demo')
    if (rows < 1000 || rows % 1000 !== 0)
      throw new UsageError('--rows must be a positive multiple of 1000', 'demo')
    const keep = stringOption(values, 'dir')
    const root = keep ?? (await mkdtemp(join(tmpdir(), 'delta-rlc-demo-')))
    try {
      if (!ctx.json) {
        ctx.print(
          `${ctx.out.paint('bold', 'delta-rlc demo')}: ${writers} concurrent DELETE writers on disjoint keys of one ${rows}-row table`,
        )
      }
      const runs: DemoRun[] = []
      for (const mode of ['file-level', 'row-level'] as const) {
        const progress = ctx.progress(mode, writers, 'commits')
        try {
          runs.push(await runDemo(join(root, mode), mode, writers, rows, (n) => progress.update(n)))
        } finally {
          progress.finish()
        }
      }
      if (ctx.json) {
        ctx.printJson({ writers, rows, tables: keep ? runs.map((r) => join(root, r.checking)) : null, runs })
        return
      }
      ctx.print('')
      ctx.print(
        renderTable(
          ['conflict checking', 'committed', 'aborted', 'live rows', 'abort codes', 'ms'],
          runs.map((r) => ({
            'conflict checking':
              r.checking === 'file-level' ? 'file-level (open-source Delta)' : 'row-level (delta-rlc)',
            committed: r.committed,
            aborted: r.aborted,
            'live rows': r.liveRows,
            'abort codes':
              Object.entries(r.abortCodes)
                .map(([k, v]) => `${k} x${v}`)
                .join(', ') || '-',
            ms: Math.round(r.ms),
          })),
          ctx.out,
        ),
      )
      ctx.print('')
      ctx.print(
        `${ctx.out.paint('green', 'verified')}: in both tables live rows = initial rows - rows deleted by the writers that committed.`,
      )
      if (keep) ctx.print(`tables kept under ${keep}`)
    } finally {
      if (!keep) await rm(root, { recursive: true, force: true })
    }
  },
}

async function runDemo(
  dir: string,
  checking: DemoRun['checking'],
  writers: number,
  rows: number,
  onCommit: (n: number) => void,
): Promise<DemoRun> {
  const table = await DeltaTable.create(
    dir,
    {
      schema: 'id long not null, customer string, amount double',
      properties: { 'delta.enableDeletionVectors': 'true' },
    },
    { conflicts: checking === 'row-level' ? 'all' : 'none' },
  )
  try {
    await table.append(
      Array.from({ length: rows }, (_, i) => ({
        id: BigInt(i),
        customer: `c${i % 997}`,
        amount: (i % 500) / 10,
      })),
    )
    const t0 = performance.now()
    const txns = await Promise.all(Array.from({ length: writers }, () => table.begin()))
    // Writer w deletes the ids congruent to w modulo 1000: disjoint rows, in the same files.
    await Promise.all(txns.map((t, w) => t.delete(`id % 1000 = ${w}`)))
    let committed = 0
    const abortCodes: Record<string, number> = {}
    for (const [i, t] of txns.entries()) {
      try {
        await t.commit()
        committed++
      } catch (err) {
        if (!isDeltaError(err)) throw err
        abortCodes[err.code] = (abortCodes[err.code] ?? 0) + 1
      }
      onCommit(i + 1)
    }
    const ms = performance.now() - t0
    const liveRows = await table.scan().count()
    const deletedPerWriter = rows / 1000
    const expectedRows = rows - committed * deletedPerWriter
    if (liveRows !== expectedRows) {
      throw new InternalError(`demo verification failed: ${liveRows} live rows, expected ${expectedRows}`)
    }
    return { checking, committed, aborted: writers - committed, abortCodes, liveRows, expectedRows, ms }
  } finally {
    await table.close()
  }
}
