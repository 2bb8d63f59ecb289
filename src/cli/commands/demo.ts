import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DeltaTable, InternalError, isDeltaError } from '../../index.js'
import {
  comparisonHeadline,
  comparisonNotes,
  glossaryFor,
  glossaryLines,
  wrapText,
} from '../../race/glossary.js'
import { runRace } from '../../race/index.js'
import { REPORT_WIDTH, renderTerminalReport } from '../../race/report-terminal.js'
import { type Command, durationOption, integerOption, stringOption, UsageError } from '../command.js'
import { VerificationFailedError } from '../verification-failed-error.js'

/** What one run of the quick look measured. */
interface QuickRun {
  readonly checking: 'file-level' | 'row-level'
  readonly committed: number
  readonly aborted: number
  readonly abortCodes: Readonly<Record<string, number>>
  /** Reconciliations by case, summed over the commits. */
  readonly reconciliations: Readonly<Record<string, number>>
  readonly liveRows: number
  readonly expectedRows: number
  readonly ms: number
}

/**
 * The full race's writers: one process each. Two cores run seven processes for about a minute
 * in all (two runs of {@link FULL_SECONDS} plus table set-up, start-up and verification).
 */
const FULL_WRITERS = { append: 2, delete: 2, update: 1, merge: 1, optimize: 1 } as const
/** Seconds per run of the full race by default. */
const FULL_SECONDS = 15
/** Rows of the full race's initial table. */
const FULL_ROWS = 10_000

/**
 * `delta-rlc demo`: the quick look (concurrent DELETEs of disjoint rows in the same files, a
 * few seconds) or, with `--full`, the full race of writer processes that `npm run demo` runs.
 */
export const demoCommand: Command = {
  name: 'demo',
  summary: 'Quick look: concurrent DELETEs, file-level Delta vs delta-rlc; --full: the full race.',
  usage: '[--writers N] [--rows N] [--dir DIR] | --full [--duration TIME] [--dir DIR]',
  details: [
    'The quick look (seconds): creates a table, then --writers transactions begin on the same',
    'snapshot, each deletes different rows that share the same files, and they commit one after the',
    'other. Once with file-level conflict checking, as open-source Delta does (every writer after',
    'the first aborts), once with row-level reconciliation (all commit); the live rows are verified.',
    '',
    `The full race (--full, about a minute; npm run demo runs it): ${Object.values(FULL_WRITERS).reduce((a, b) => a + b, 0)} writer processes (append,`,
    'delete, update, merge, optimize) on one table for --duration per run, file-level then',
    'row-level on the same seeded workload; a verifier replays every commit on a model. Writes an',
    'HTML report. delta-rlc race <dir> --compare runs the same race with any writers and faults.',
  ].join('\n'),
  options: {
    full: { type: 'boolean', help: 'run the full race of writer processes (about a minute)' },
    writers: { type: 'string', value: 'N', help: 'quick look: concurrent writers (default 8, at most 1000)' },
    rows: {
      type: 'string',
      value: 'N',
      help: 'quick look: rows in the table (default 100000, a multiple of 1000)',
    },
    duration: {
      type: 'string',
      value: 'TIME',
      help: `full race: how long each run starts operations: 90, 30s or 2m (default ${FULL_SECONDS}s)`,
    },
    dir: {
      type: 'string',
      value: 'DIR',
      help: 'create the tables and reports under DIR and keep them (default: a temp dir)',
    },
  },
  positionals: { min: 0, max: 0, names: 'no arguments' },
  async run(ctx, values) {
    if (values.full === true) {
      for (const quickOnly of ['writers', 'rows']) {
        if (values[quickOnly] !== undefined)
          throw new UsageError(`--${quickOnly} is an option of the quick look, not of --full`, 'demo', {
            argument: quickOnly,
          })
      }
      await fullRace(ctx, values)
      return
    }
    if (values.duration !== undefined)
      throw new UsageError('--duration is an option of --full (the quick look is not timed)', 'demo', {
        argument: 'duration',
      })
    await quickLook(ctx, values)
  },
}

type Ctx = Parameters<Command['run']>[0]
type Values = Parameters<Command['run']>[1]

async function quickLook(ctx: Ctx, values: Values): Promise<void> {
  const writers = integerOption(values, 'writers', 'demo') ?? 8
  const rows = integerOption(values, 'rows', 'demo') ?? 100_000
  if (writers < 1 || writers > 1000) throw new UsageError('--writers must be between 1 and 1000', 'demo')
  if (rows < 1000 || rows % 1000 !== 0)
    throw new UsageError('--rows must be a positive multiple of 1000', 'demo')
  const keep = stringOption(values, 'dir')
  const root = keep ?? (await mkdtemp(join(tmpdir(), 'delta-rlc-demo-')))
  try {
    if (!ctx.json) {
      printWrapped(
        ctx,
        `${ctx.out.paint('bold', 'delta-rlc demo')} (the quick look): ${writers} transactions begin on one ${rows}-row table; each deletes different rows that share the same files; they commit one after the other.`,
      )
    }
    const runs: QuickRun[] = []
    for (const mode of ['file-level', 'row-level'] as const) {
      const progress = ctx.progress(mode, writers, 'commits')
      try {
        runs.push(await runQuick(join(root, mode), mode, writers, rows, (n) => progress.update(n)))
      } finally {
        progress.finish()
      }
    }
    if (ctx.json) {
      ctx.printJson({ writers, rows, tables: keep ? runs.map((r) => join(root, r.checking)) : null, runs })
      return
    }
    printQuickReport(ctx, runs, rows / 1000)
    if (keep) ctx.print(`tables kept under ${keep}`)
  } finally {
    if (!keep) await rm(root, { recursive: true, force: true })
  }
}

function printQuickReport(ctx: Ctx, runs: readonly QuickRun[], deletedPerWriter: number): void {
  const [off, on] = runs as [QuickRun, QuickRun]
  const figures = (r: QuickRun) => ({
    attempts: r.committed + r.aborted,
    commits: r.committed,
    aborts: r.aborted,
    reconciliations: sum(r.reconciliations),
  })
  ctx.print('')
  ctx.print(ctx.out.paint('bold', comparisonHeadline(figures(off), figures(on), 'deletes')))
  ctx.print('')
  const codes = [...new Set(runs.flatMap((r) => Object.keys(r.abortCodes)))].sort()
  const cases = [...new Set(runs.flatMap((r) => Object.keys(r.reconciliations)))].sort()
  const rows: [string, string, string][] = [
    ['deletes committed', String(off.committed), String(on.committed)],
    ['deletes aborted', String(off.aborted), String(on.aborted)],
    ...codes.map((c): [string, string, string] => [
      `  ${c}`,
      String(off.abortCodes[c] ?? 0),
      String(on.abortCodes[c] ?? 0),
    ]),
    ['conflicts reconciled', String(sum(off.reconciliations)), String(sum(on.reconciliations))],
    ...cases.map((c): [string, string, string] => [
      `  ${c}`,
      String(off.reconciliations[c] ?? 0),
      String(on.reconciliations[c] ?? 0),
    ]),
    ['live rows afterwards', String(off.liveRows), String(on.liveRows)],
    ['time ms', String(Math.round(off.ms)), String(Math.round(on.ms))],
  ]
  let w0 = 0
  let w = 'file-level'.length
  for (const [name, a, b] of rows) {
    w0 = Math.max(w0, name.length)
    w = Math.max(w, a.length, b.length)
  }
  ctx.print(`  ${''.padEnd(w0)}  ${'file-level'.padStart(w)}  ${'row-level'.padStart(w)}`)
  for (const [name, a, b] of rows) ctx.print(`  ${name.padEnd(w0)}  ${a.padStart(w)}  ${b.padStart(w)}`)
  ctx.print('')
  const glossary = glossaryLines(
    glossaryFor(
      runs.flatMap((r) => Object.keys(r.reconciliations)),
      runs.flatMap((r) => Object.keys(r.abortCodes)),
    ),
    REPORT_WIDTH,
  )
  for (const line of glossary) ctx.print(line)
  const notes = comparisonNotes(figures(on))
  if (glossary.length > 0 && notes.length > 0) ctx.print('')
  for (const n of notes) printWrapped(ctx, n, '  ')
  ctx.print('')
  const proof = runs
    .map(
      (r) =>
        `${r.liveRows} = ${r.liveRows + r.committed * deletedPerWriter} - ${r.committed} x ${deletedPerWriter}`,
    )
    .join(' and ')
  printWrapped(
    ctx,
    `${ctx.out.paint('green', 'verifier: PASS')}: in both tables the live rows are the initial rows minus ${deletedPerWriter} per delete that committed (${proof}).`,
    '  ',
  )
  ctx.print('')
  printWrapped(
    ctx,
    'The full race of writer processes (about a minute): delta-rlc demo --full, or npm run demo.',
  )
}

async function runQuick(
  dir: string,
  checking: QuickRun['checking'],
  writers: number,
  rows: number,
  onCommit: (n: number) => void,
): Promise<QuickRun> {
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
    const reconciliations: Record<string, number> = {}
    for (const [i, t] of txns.entries()) {
      try {
        const result = await t.commit()
        committed++
        for (const r of result.reconciliations) reconciliations[r.kind] = (reconciliations[r.kind] ?? 0) + 1
      } catch (err) {
        if (!isDeltaError(err)) throw err
        abortCodes[err.code] = (abortCodes[err.code] ?? 0) + 1
      }
      onCommit(i + 1)
    }
    const ms = performance.now() - t0
    const liveRows = await table.scan().count()
    const expectedRows = rows - committed * (rows / 1000)
    if (liveRows !== expectedRows) {
      throw new InternalError(`demo verification failed: ${liveRows} live rows, expected ${expectedRows}`)
    }
    return {
      checking,
      committed,
      aborted: writers - committed,
      abortCodes,
      reconciliations,
      liveRows,
      expectedRows,
      ms,
    }
  } finally {
    await table.close()
  }
}

async function fullRace(ctx: Ctx, values: Values): Promise<void> {
  const seconds = durationOption(values, 'duration', 'demo') ?? FULL_SECONDS
  if (!(seconds > 0)) throw new UsageError('--duration must be more than 0', 'demo', { argument: 'duration' })
  const keep = stringOption(values, 'dir')
  const root = keep ?? (await mkdtemp(join(tmpdir(), 'delta-rlc-demo-')))
  const writerCount = Object.values(FULL_WRITERS).reduce((a, b) => a + b, 0)
  if (!ctx.json) {
    printWrapped(
      ctx,
      `${ctx.out.paint('bold', 'delta-rlc demo --full')} (the full race): ${writerCount} writer processes (2 append, 2 delete, 1 update, 1 merge, 1 optimize) on different rows of one table, ${seconds} s with file-level conflict checking (as open-source Delta), then ${seconds} s with row-level reconciliation, on the same seeded workload. A verifier replays every commit on a model afterwards.`,
    )
    ctx.print('')
  }
  const t0 = Date.now()
  const report = await runRace(
    {
      location: join(root, 'orders'),
      writers: FULL_WRITERS,
      overlap: 'disjoint',
      conflicts: 'all',
      compare: true,
      seed: 1,
      rows: FULL_ROWS,
      durationMs: Math.round(seconds * 1000),
    },
    {
      log: (line) => {
        if (ctx.json) return
        const at = `${((Date.now() - t0) / 1000).toFixed(0).padStart(4)} s  `
        for (const [i, l] of wrapText(line, REPORT_WIDTH - at.length).entries())
          ctx.io.stderr.write(`${i === 0 ? at : ' '.repeat(at.length)}${l}\n`)
      },
    },
  )
  if (ctx.json) ctx.printJson(report)
  else {
    ctx.print('')
    ctx.io.stdout.write(renderTerminalReport(report, { detail: false }))
    ctx.print('')
    printWrapped(ctx, `Per-writer timelines and every verifier check: ${report.htmlPath}`, '  ')
    printWrapped(
      ctx,
      `Tables and event logs: ${root}${keep ? '' : ' (a temp dir; --dir DIR to choose)'}`,
      '  ',
    )
  }
  if (!report.ok)
    throw new VerificationFailedError(
      'the demo race',
      [
        ...new Set(
          report.runs.flatMap((r) => (r.verify?.checks ?? []).filter((c) => !c.ok).map((c) => c.name)),
        ),
      ],
      report.jsonPath ?? root,
    )
}

/** Prints a paragraph wrapped to the report width. */
function printWrapped(ctx: Ctx, text: string, indent = ''): void {
  for (const line of wrapText(text, REPORT_WIDTH, indent)) ctx.print(line)
}

function sum(m: Readonly<Record<string, number>>): number {
  let n = 0
  for (const v of Object.values(m)) n += v
  return n
}
