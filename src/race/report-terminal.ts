/**
 * The terminal summary of a race, at most 100 columns wide: a one-line headline, the totals (for
 * a `compare` race, the two runs side by side), a glossary of the names that occurred, notes on
 * numbers that look odd, the verifier's verdict, and with `detail` a table per writer and every
 * verifier check.
 */
import { appendAll, maxOf } from '../util/arrays.js'
import { glossaryLines, wrapText } from './glossary.js'
import { type RaceReport, type RaceRunReport, reportGlossary, reportHeadline, reportNotes } from './report.js'
import type { WriterStats } from './stats.js'

/** The widest line the terminal report prints. */
export const REPORT_WIDTH = 100

/** How much {@link renderTerminalReport} prints. */
export interface TerminalReportOptions {
  /**
   * Also print a table per writer and every verifier check (default true). The demo leaves them
   * to the HTML report.
   */
  readonly detail?: boolean | undefined
}

/**
 * Renders a race report as plain text (ASCII, fixed-width columns, no line over
 * {@link REPORT_WIDTH} columns).
 *
 * @param report - what {@link runRace} returned
 * @param options - how much to print
 * @returns the text, ending with a newline
 */
export function renderTerminalReport(report: RaceReport, options: TerminalReportOptions = {}): string {
  const detail = options.detail !== false
  const runs = report.runs
  const lines: string[] = []
  const first = runs[0]
  if (first === undefined) return `${report.ok ? 'RESULT: PASS' : 'RESULT: FAIL'}\n`
  const compared = report.compare && runs.length === 2
  lines.push(reportHeadline(report))
  appendAll(lines, wrap(setup(first))).push('')
  appendAll(lines, totalsTable(runs, compared)).push('')
  const glossary = glossaryLines(reportGlossary(report), REPORT_WIDTH)
  if (glossary.length > 0) appendAll(lines, glossary).push('')
  const notes = reportNotes(report)
  for (const n of notes) appendAll(lines, wrap(n, '  '))
  if (notes.length > 0) lines.push('')
  for (const run of runs) {
    appendAll(lines, detail ? runSection(run) : verdictSection(run, runs.length > 1))
    if (detail) lines.push('')
  }
  if (!detail) lines.push('')
  lines.push(report.ok ? 'RESULT: PASS' : 'RESULT: FAIL')
  return `${lines.join('\n')}\n`
}

function setup(run: RaceRunReport): string {
  const c = run.config
  const mix = new Map<string, number>()
  for (const w of c.writers) mix.set(w.kind, (mix.get(w.kind) ?? 0) + 1)
  const faults = Object.entries(c.faults)
    .filter(([, r]) => r > 0)
    .map(([k, r]) => `${k}=${r}`)
    .join(',')
  return [
    `${c.writers.length} writer processes (${[...mix].map(([k, n]) => `${k}=${n}`).join(', ')}) on ${c.overlap} keys`,
    c.isolation,
    `seed ${c.seed}`,
    `${(c.durationMs / 1000).toFixed(0)} s per run`,
    faults === '' ? 'no faults' : `faults ${faults}`,
    ...(c.storeLatencyMs === undefined ? [] : [`${c.storeLatencyMs} ms added per store request`]),
    ...(c.conflictRetries === undefined
      ? []
      : [`aborted operations run again up to ${c.conflictRetries} times`]),
  ].join(', ')
}

function totalsTable(runs: readonly RaceRunReport[], compared: boolean): string[] {
  const totals = runs.map((r) => r.stats.totals)
  const codes = [...new Set(totals.flatMap((t) => Object.keys(t.abortsByCode)))].sort()
  const cases = [...new Set(totals.flatMap((t) => Object.keys(t.reconciliationsByCase)))].sort()
  const row = (name: string, f: (w: WriterStats) => string) => [name, ...totals.map(f)]
  const rows = [
    row('attempts', (w) => String(w.attempts)),
    row('committed', (w) => String(w.commits + w.alreadyCommitted)),
    row('aborted', (w) => String(w.aborts)),
    ...codes.map((c) => row(`  ${c}`, (w) => String(w.abortsByCode[c] ?? 0))),
    row('conflicts reconciled', (w) => String(w.reconciliations)),
    ...cases.map((c) => row(`  ${c}`, (w) => String(w.reconciliationsByCase[c] ?? 0))),
    row('commits per second', (w) => w.commitsPerSecond.toFixed(1)),
    row('commit latency p50 ms', (w) => w.p50Ms.toFixed(0)),
    row('commit latency p99 ms', (w) => w.p99Ms.toFixed(0)),
    ['verifier', ...runs.map((r) => (r.verify === undefined ? '-' : r.verify.ok ? 'PASS' : 'FAIL'))],
  ]
  const title = compared ? '== side by side (same seeded workload)' : '== totals'
  return [title, ...table(['', ...runs.map((r) => r.label)], rows, 10, 1)]
}

function runSection(run: RaceRunReport): string[] {
  const s = run.stats
  const wall = ((s.endedAt - s.startedAt) / 1000).toFixed(1)
  const out = [`== ${run.label} run (conflicts ${run.config.conflictsLabel}), ${wall} s`]
  appendAll(out, wrap(`table ${run.config.location}`, '  '))
  const faults = s.totals.kills + s.totals.opRetries > 0
  const header = ['writer', 'kind', 'committed', 'aborted', 'reconciled', 'lost races', 'p50 ms', 'p99 ms']
  if (faults) header.push('kills', 'op retries')
  const rows = [...s.writers, s.totals].map((w) => {
    const r = [
      w.writer < 0 ? 'total' : `w${w.writer}`,
      w.kind,
      String(w.commits + w.alreadyCommitted),
      String(w.aborts),
      String(w.reconciliations),
      String(w.retries),
      w.p50Ms.toFixed(0),
      w.p99Ms.toFixed(0),
    ]
    if (faults) r.push(String(w.kills), String(w.opRetries))
    return r
  })
  appendAll(out, table(header, rows, 6, 2))
  appendAll(
    out,
    wrap(
      `lost races: a commit found its version taken, checked the winning commits and tried the next version${faults ? '; op retries: operations tried again after a fault' : ''}`,
      '  ',
    ),
  )
  if (run.restarts > 0) out.push(`  writer restarts after kill -9: ${run.restarts}`)
  for (const c of run.crashes) {
    appendAll(
      out,
      wrap(
        `CRASH: writer ${c.writer} exited with ${c.signal ?? `code ${c.code}`}: ${(c.stderr ?? '').trim()}`,
        '  ',
      ),
    )
  }
  const v = run.verify
  if (v !== undefined) {
    appendAll(out, wrap(verifierLine(run), '  '))
    for (const c of v.checks)
      appendAll(out, wrap(`  [${c.ok ? 'ok' : 'FAIL'}] ${c.name}: ${c.detail}`, '      '))
    if (v.firstDivergence !== undefined)
      appendAll(out, wrap(`  first divergence: ${v.firstDivergence.message}`, '    '))
    const a = v.aborts
    if (a.genuine + a.optimize + a['fact-unavailable'] + a['no-shared-key'] > 0) {
      appendAll(
        out,
        wrap(
          `  conflict aborts: ${a.genuine} on a key the winner also touched, ${a.optimize} against OPTIMIZE, ${a['fact-unavailable']} where a deletion vector could not be loaded, ${a['no-shared-key']} with no shared key`,
          '    ',
        ),
      )
    }
  }
  return out
}

/** The short form of a run's verification: the verdict, and what failed if anything did. */
function verdictSection(run: RaceRunReport, named: boolean): string[] {
  const out: string[] = []
  const v = run.verify
  for (const c of run.crashes) {
    const why = (c.stderr ?? '').trim().split('\n')[0] ?? ''
    appendAll(
      out,
      wrap(`CRASH: ${run.label} writer ${c.writer} exited with ${c.signal ?? `code ${c.code}`}: ${why}`),
    )
  }
  if (v === undefined) {
    out.push(`verifier${named ? ` (${run.label})` : ''}: not run`)
    return out
  }
  appendAll(out, wrap(verifierLine(run, named), '  '))
  for (const c of v.checks.filter((x) => !x.ok))
    appendAll(out, wrap(`  FAILED ${c.name}: ${c.detail}`, '    '))
  if (v.firstDivergence !== undefined)
    appendAll(out, wrap(`  first divergence: ${v.firstDivergence.message}`, '    '))
  return out
}

function verifierLine(run: RaceRunReport, named = false): string {
  const v = run.verify
  if (v === undefined) return 'verifier: not run'
  const who = named ? ` (${run.label})` : ''
  const unacked = v.landedUnacknowledged > 0 ? `, ${v.landedUnacknowledged} of them unacknowledged` : ''
  const checks = v.ok
    ? `all ${v.checks.length} checks passed`
    : `${v.checks.filter((c) => !c.ok).length} of ${v.checks.length} checks failed`
  return `verifier${who}: ${v.ok ? 'PASS' : 'FAIL'} in ${(v.durationMs / 1000).toFixed(1)} s: ${v.committedOps} commits replayed on a model of the table${unacked}, ${v.finalRows} rows, ${checks}`
}

/** Wraps one line to the report width. */
function wrap(text: string, indent = ''): string[] {
  return wrapText(text, REPORT_WIDTH, indent)
}

/**
 * A fixed-width table with two leading spaces: the first `textColumns` columns are left-aligned,
 * the rest (counts) right-aligned.
 */
function table(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  minWidth: number,
  textColumns: number,
): string[] {
  const widths = header.map((h, i) =>
    maxOf(
      rows.map((r) => (r[i] ?? '').length),
      i === 0 ? h.length : Math.max(minWidth, h.length),
    ),
  )
  const fmt = (cells: readonly string[]) =>
    `  ${cells
      .map((c, i) => (i >= textColumns ? c.padStart(widths[i] ?? minWidth) : c.padEnd(widths[i] ?? minWidth)))
      .join('  ')
      .trimEnd()}`
  return [fmt(header), ...rows.map(fmt)]
}
