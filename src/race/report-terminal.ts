/**
 * The terminal summary of a race: per writer and in total, commits, aborts by error code,
 * reconciliations by case, retries and latency percentiles; the verifier's verdict; and, for a
 * `compare` race, the two runs side by side.
 */
import { appendAll, maxOf } from '../util/arrays.js'
import type { RaceReport, RaceRunReport } from './report.js'
import type { WriterStats } from './stats.js'

/**
 * Renders a race report as plain text (ASCII, fixed-width columns).
 *
 * @param report - what {@link runRace} returned
 * @returns the text, ending with a newline
 */
export function renderTerminalReport(report: RaceReport): string {
  const lines: string[] = []
  const first = report.runs[0]
  if (first !== undefined) lines.push(headline(first), '')
  for (const run of report.runs) appendAll(lines, runSection(run)).push('')
  if (report.compare && report.runs.length === 2) appendAll(lines, sideBySide(report.runs)).push('')
  lines.push(report.ok ? 'RESULT: PASS' : 'RESULT: FAIL')
  return `${lines.join('\n')}\n`
}

function headline(run: RaceRunReport): string {
  const c = run.config
  const mix = new Map<string, number>()
  for (const w of c.writers) mix.set(w.kind, (mix.get(w.kind) ?? 0) + 1)
  const faults = Object.entries(c.faults)
    .filter(([, r]) => r > 0)
    .map(([k, r]) => `${k}=${r}`)
    .join(',')
  return [
    `delta-rlc race: ${c.writers.length} writers (${[...mix].map(([k, n]) => `${k}=${n}`).join(', ')})`,
    `keys ${c.overlap}`,
    c.isolation,
    `seed ${c.seed}`,
    `${(c.durationMs / 1000).toFixed(0)} s`,
    faults === '' ? 'no faults' : `faults ${faults}`,
  ].join(' | ')
}

function runSection(run: RaceRunReport): string[] {
  const s = run.stats
  const wall = ((s.endedAt - s.startedAt) / 1000).toFixed(1)
  const out = [
    `== ${run.label} (conflicts ${run.config.conflictsLabel}), ${wall} s, table ${run.config.location}`,
  ]
  const header = [
    'writer',
    'kind',
    'commits',
    'aborts',
    'retries',
    'kills',
    'p50 ms',
    'p99 ms',
    'reconciliations',
    'aborts by code',
  ]
  const rows = [...s.writers, s.totals].map((w) => [
    w.writer < 0 ? 'total' : `w${w.writer}`,
    w.kind,
    String(w.commits + w.alreadyCommitted),
    String(w.aborts),
    `${w.retries}/${w.opRetries}`,
    String(w.kills),
    w.p50Ms.toFixed(0),
    w.p99Ms.toFixed(0),
    counts(w.reconciliationsByCase),
    counts(w.abortsByCode),
  ])
  appendAll(out, table(header, rows, 8))
  out.push('  (retries: lost commit races checked and retried / operations tried again after a fault)')
  if (run.restarts > 0) out.push(`  writer restarts after kill -9: ${run.restarts}`)
  for (const c of run.crashes) {
    out.push(
      `  CRASH: writer ${c.writer} exited with ${c.signal ?? `code ${c.code}`}: ${(c.stderr ?? '').trim()}`,
    )
  }
  const v = run.verify
  if (v !== undefined) {
    out.push(
      `  verifier: ${v.ok ? 'PASS' : 'FAIL'}: ${v.committedOps} commits replayed (${v.landedUnacknowledged} landed unacknowledged), ${v.finalRows} rows, ${v.contentChecks} content checks, ${(v.durationMs / 1000).toFixed(1)} s`,
    )
    for (const c of v.checks) out.push(`    [${c.ok ? 'ok' : 'FAIL'}] ${c.name}: ${c.detail}`)
    if (v.firstDivergence !== undefined) out.push(`    first divergence: ${v.firstDivergence.message}`)
    const a = v.aborts
    if (a.genuine + a.optimize + a['fact-unavailable'] + a['no-shared-key'] > 0) {
      out.push(
        `    conflict aborts: ${a.genuine} on a key the winner also touched, ${a.optimize} against OPTIMIZE, ${a['fact-unavailable']} where a deletion vector could not be loaded, ${a['no-shared-key']} with no shared key`,
      )
    }
  }
  return out
}

function sideBySide(runs: readonly RaceRunReport[]): string[] {
  const [off, on] = runs as [RaceRunReport, RaceRunReport]
  const a = off.stats.totals
  const b = on.stats.totals
  const codes = [...new Set([...Object.keys(a.abortsByCode), ...Object.keys(b.abortsByCode)])].sort()
  const cases = [
    ...new Set([...Object.keys(a.reconciliationsByCase), ...Object.keys(b.reconciliationsByCase)]),
  ].sort()
  const row = (name: string, f: (w: WriterStats) => string) => [name, f(a), f(b)]
  const rows = [
    row('commits', (w) => String(w.commits + w.alreadyCommitted)),
    row('aborts', (w) => String(w.aborts)),
    ...codes.map((c) => row(`  ${c}`, (w) => String(w.abortsByCode[c] ?? 0))),
    row('reconciliations', (w) => String(w.reconciliations)),
    ...cases.map((c) => row(`  ${c}`, (w) => String(w.reconciliationsByCase[c] ?? 0))),
    row('commits/s', (w) => w.commitsPerSecond.toFixed(1)),
    row('p50 latency ms', (w) => w.p50Ms.toFixed(0)),
    row('p99 latency ms', (w) => w.p99Ms.toFixed(0)),
    [
      'verifier',
      off.verify === undefined ? '-' : off.verify.ok ? 'PASS' : 'FAIL',
      on.verify === undefined ? '-' : on.verify.ok ? 'PASS' : 'FAIL',
    ],
  ]
  return ['== side by side (same seeded workload)', ...table(['', off.label, on.label], rows, 14)]
}

function counts(m: Readonly<Record<string, number>>): string {
  const e = Object.entries(m).sort(([x], [y]) => (x < y ? -1 : 1))
  return e.length === 0 ? '-' : e.map(([k, n]) => `${k} x${n}`).join(', ')
}

function table(header: readonly string[], rows: readonly (readonly string[])[], minWidth: number): string[] {
  const widths = header.map((h, i) =>
    maxOf(
      rows.map((r) => (r[i] ?? '').length),
      Math.max(minWidth, h.length),
    ),
  )
  // The last column is free text: it is not padded.
  const fmt = (cells: readonly string[]) =>
    `  ${cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? minWidth)))
      .join('  ')
      .trimEnd()}`
  return [fmt(header), ...rows.map(fmt)]
}
