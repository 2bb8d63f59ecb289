/**
 * The HTML report of a race: one self-contained file (inline CSS and SVG, no script, no
 * external URL) with a headline, a paragraph on file-level vs row-level checking, a glossary of the
 * names that occurred and, per run, a timeline of every attempt per writer (commits, aborts,
 * reconciliations and kills marked), the per-writer table and the verifier's checks, and for a
 * `compare` race a bar chart of the two runs side by side.
 */
import { maxOf } from '../util/arrays.js'
import { CONCEPTS_DOC, LEVELS_EXPLAINED } from './glossary.js'
import { type RaceReport, type RaceRunReport, reportGlossary, reportHeadline, reportNotes } from './report.js'
import type { TimelineEntry, WriterStats } from './stats.js'

const WIDTH = 1000
const LEFT = 110
const ROW = 24

/**
 * Renders a race report as a standalone HTML page.
 *
 * @param report - what {@link runRace} returned
 * @returns the HTML text
 */
export function renderHtmlReport(report: RaceReport): string {
  const first = report.runs[0]
  const title = first
    ? `delta-rlc race: ${first.config.writers.length} writers, ${first.config.overlap} keys, seed ${first.config.seed}`
    : 'delta-rlc race'
  const body: string[] = [`<h1>${esc(title)}</h1>`]
  const compared = report.compare && report.runs.length === 2
  if (first !== undefined) body.push(`<p class="headline">${esc(reportHeadline(report))}</p>`)
  body.push(
    `<p class="verdict ${report.ok ? 'pass' : 'fail'}">${report.ok ? 'PASS' : 'FAIL'}: ${report.runs.length} run(s), ${report.ok ? 'every verifier check passed' : 'see the failed checks below'}</p>`,
    `<p class="explainer">${esc(LEVELS_EXPLAINED)}</p>`,
  )
  if (compared) body.push(comparisonChart(report.runs))
  body.push(glossarySection(report))
  for (const run of report.runs) body.push(runSection(run))
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${esc(title)}</title>
<style>${CSS}</style>
</head>
<body>
${body.join('\n')}
</body>
</html>
`
}

const CSS = `
body { font-family: system-ui, sans-serif; margin: 24px; color: #222; }
h1 { font-size: 20px; } h2 { font-size: 17px; margin-top: 32px; } h3 { font-size: 15px; }
table { border-collapse: collapse; font-size: 13px; margin: 8px 0; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th:first-child, td:first-child, td.text { text-align: left; }
.verdict { font-weight: bold; padding: 6px 10px; display: inline-block; }
.verdict.pass { background: #e3f6e3; color: #185c18; } .verdict.fail { background: #fbe3e3; color: #8a1414; }
.check.fail td { background: #fbe3e3; }
svg text { font-size: 11px; fill: #333; }
.attempt.committed { fill: #4caf50; } .attempt.aborted { fill: #e53935; }
.attempt.already-committed { fill: #90a4ae; } .attempt.no-op { fill: #cfd8dc; } .attempt.killed { fill: #6a1b9a; }
.marker.abort { stroke: #b71c1c; stroke-width: 2; fill: none; }
.marker.reconcile { fill: #1e88e5; stroke: #fff; stroke-width: 1; }
.marker.kill { fill: #6a1b9a; }
.bar.file-level { fill: #ef9a9a; } .bar.row-level { fill: #64b5f6; }
.bar.commits { fill: #4caf50; } .bar.aborts { fill: #e53935; }
.headline { font-size: 17px; font-weight: bold; }
.explainer, .note, .scale-note { max-width: 900px; font-size: 14px; line-height: 1.4; }
.scale-note { color: #555; font-size: 12px; }
dl.glossary { font-size: 14px; max-width: 900px; }
dl.glossary dt { font-family: monospace; margin-top: 6px; }
dl.glossary dd { margin-left: 24px; }
.ref { color: #555; font-family: monospace; font-size: 12px; }
.legend span { display: inline-block; margin-right: 14px; font-size: 12px; }
.legend i { display: inline-block; width: 10px; height: 10px; margin-right: 4px; vertical-align: middle; }
`

function runSection(run: RaceRunReport): string {
  const s = run.stats
  const wall = ((s.endedAt - s.startedAt) / 1000).toFixed(1)
  return `<section class="run" data-label="${esc(run.label)}">
<h2>${esc(run.label)}: conflicts ${esc(run.config.conflictsLabel)}, ${s.totals.commits} commits, ${s.totals.aborts} aborts, ${s.totals.reconciliations} reconciliations in ${wall} s</h2>
<h3>Timeline of attempts per writer</h3>
<p class="legend"><span><i style="background:#4caf50"></i>committed</span><span><i style="background:#e53935"></i>aborted</span><span><i style="background:#1e88e5;border-radius:5px"></i>reconciled</span><span><i style="background:#6a1b9a"></i>killed (fault)</span><span><i style="background:#90a4ae"></i>found already committed</span></p>
${timeline(run)}
<h3>Per writer</h3>
${writerTable([...s.writers, s.totals])}
${verifySection(run)}
${crashSection(run)}
</section>`
}

function timeline(run: RaceRunReport): string {
  const entries = run.stats.timeline
  const writers = run.config.writers
  const span = maxOf(
    entries.map((e) => e.end),
    1,
  )
  const x = (t: number) => LEFT + (Math.max(0, t) / span) * (WIDTH - LEFT - 10)
  const height = writers.length * ROW + 30
  const rows: string[] = []
  for (const w of writers) {
    const y = w.index * ROW + 4
    const mine = entries.filter((e) => e.writer === w.index)
    const parts = mine.map((e) => attemptShape(e, x, y))
    rows.push(
      `<g class="timeline-row" data-writer="${w.index}"><text x="4" y="${y + 14}">w${w.index} ${esc(w.kind)}</text><line x1="${LEFT}" x2="${WIDTH - 10}" y1="${y + ROW / 2}" y2="${y + ROW / 2}" stroke="#eee"/>${parts.join('')}</g>`,
    )
  }
  const ticks: string[] = []
  const step = niceStep(span / 1000)
  for (let t = 0; t <= span / 1000; t += step) {
    const tx = x(t * 1000)
    ticks.push(
      `<line x1="${tx}" x2="${tx}" y1="0" y2="${height - 24}" stroke="#f3f3f3"/><text x="${tx}" y="${height - 8}" text-anchor="middle">${t.toFixed(step < 1 ? 1 : 0)} s</text>`,
    )
  }
  return `<svg class="timeline" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" role="img" aria-label="timeline of attempts">${ticks.join('')}${rows.join('\n')}</svg>`
}

function attemptShape(e: TimelineEntry, x: (t: number) => number, y: number): string {
  const x0 = x(e.start)
  const w = Math.max(1.5, x(e.end) - x0)
  const title = `w${e.writer} seq ${e.seq} ${e.kind}: ${e.outcome}${e.version === undefined ? '' : ` v${e.version}`}${e.code ? ` ${e.code}` : ''}${e.reconciliations.length ? ` reconciled by ${e.reconciliations.join(', ')}` : ''}`
  let out = `<rect class="attempt ${e.outcome}" x="${x0.toFixed(1)}" y="${y + 6}" width="${w.toFixed(1)}" height="${ROW - 12}"><title>${esc(title)}</title></rect>`
  const xe = x(e.end)
  const cy = y + ROW / 2
  if (e.outcome === 'aborted') {
    out += `<path class="marker abort" d="M${xe - 4} ${cy - 4}L${xe + 4} ${cy + 4}M${xe - 4} ${cy + 4}L${xe + 4} ${cy - 4}"><title>${esc(title)}</title></path>`
  } else if (e.outcome === 'killed') {
    out += `<path class="marker kill" d="M${xe} ${cy - 6}L${xe + 5} ${cy + 5}L${xe - 5} ${cy + 5}Z"><title>${esc(title)}</title></path>`
  }
  if (e.reconciliations.length > 0) {
    out += `<circle class="marker reconcile" cx="${xe.toFixed(1)}" cy="${cy}" r="4"><title>${esc(title)}</title></circle>`
  }
  return out
}

function writerTable(rows: readonly WriterStats[]): string {
  const head =
    '<tr><th>writer</th><th>kind</th><th>commits</th><th>aborts</th><th>aborts by code</th><th>reconciliations by case</th><th>lost races</th><th>op retries</th><th>kills</th><th>p50 ms</th><th>p99 ms</th></tr>'
  const body = rows
    .map(
      (w) =>
        `<tr><td>${w.writer < 0 ? 'total' : `w${w.writer}`}</td><td class="text">${esc(w.kind)}</td><td>${w.commits + w.alreadyCommitted}</td><td>${w.aborts}</td><td class="text">${esc(counts(w.abortsByCode))}</td><td class="text">${esc(counts(w.reconciliationsByCase))}</td><td>${w.retries}</td><td>${w.opRetries}</td><td>${w.kills}</td><td>${w.p50Ms.toFixed(0)}</td><td>${w.p99Ms.toFixed(0)}</td></tr>`,
    )
    .join('')
  return `<table class="writers">${head}${body}</table>`
}

function verifySection(run: RaceRunReport): string {
  const v = run.verify
  if (v === undefined) return '<p>Not verified.</p>'
  const checks = v.checks
    .map(
      (c) =>
        `<tr class="check ${c.ok ? 'ok' : 'fail'}"><td>${esc(c.name)}</td><td>${c.ok ? 'ok' : 'FAIL'}</td><td class="text">${esc(c.detail)}</td></tr>`,
    )
    .join('')
  const div =
    v.firstDivergence === undefined
      ? ''
      : `<p class="divergence"><b>First divergence</b> at version ${v.firstDivergence.version}: ${esc(v.firstDivergence.message)}</p>`
  return `<h3>Verifier: <span class="verdict ${v.ok ? 'pass' : 'fail'}">${v.ok ? 'PASS' : 'FAIL'}</span></h3>
<p>${v.committedOps} commits replayed on the model (${v.landedUnacknowledged} landed without acknowledgement), ${v.finalRows} rows at the end, ${v.contentChecks} full content checks. Conflict aborts: ${v.aborts.genuine} on a key the winner also touched, ${v.aborts.optimize} against OPTIMIZE, ${v.aborts['fact-unavailable']} where a deletion vector could not be loaded, ${v.aborts['no-shared-key']} with no shared key.</p>
<table class="checks"><tr><th>check</th><th>result</th><th>detail</th></tr>${checks}</table>${div}`
}

function crashSection(run: RaceRunReport): string {
  if (run.crashes.length === 0) return ''
  return `<h3>Writer crashes</h3><ul>${run.crashes
    .map(
      (c) =>
        `<li>w${c.writer}: ${esc(c.signal ?? `exit code ${c.code}`)} <pre>${esc(c.stderr ?? '')}</pre></li>`,
    )
    .join('')}</ul>`
}

function comparisonChart(runs: readonly RaceRunReport[]): string {
  const metrics: Array<[string, (w: WriterStats) => number]> = [
    ['commits', (w) => w.commits + w.alreadyCommitted],
    ['aborts', (w) => w.aborts],
    ['reconciliations', (w) => w.reconciliations],
  ]
  // Each measure gets its own scale: reconciliations count every winner a commit reconciled
  // against, so on one scale they dwarf commits and aborts and the comparison of interest (the
  // two runs on the same measure) disappears.
  const groupW = 220
  const barW = 70
  const h = 220
  const parts: string[] = []
  for (const [i, [name, f]] of metrics.entries()) {
    const gx = 60 + i * groupW
    const max = maxOf(
      runs.map((r) => f(r.stats.totals)),
      1,
    )
    for (const [j, r] of runs.entries()) {
      const value = f(r.stats.totals)
      const bh = (value / max) * (h - 60)
      const bx = gx + j * (barW + 10)
      parts.push(
        `<rect class="bar ${r.label.startsWith('file') ? 'file-level' : 'row-level'}" data-series="${esc(r.label)}" data-metric="${name}" x="${bx}" y="${h - 30 - bh}" width="${barW}" height="${bh}"><title>${esc(`${r.label} ${name}: ${value}`)}</title></rect><text x="${bx + barW / 2}" y="${h - 34 - bh}" text-anchor="middle">${value}</text>`,
      )
    }
    parts.push(`<text x="${gx + barW + 5}" y="${h - 12}" text-anchor="middle">${name}</text>`)
  }
  const legend = runs
    .map(
      (r, j) =>
        `<span><i style="background:${j === 0 ? '#ef9a9a' : '#64b5f6'}"></i>${esc(r.label)} (conflicts ${esc(r.config.conflictsLabel)})</span>`,
    )
    .join('')
  const rows = runs
    .map((r) => {
      const t = r.stats.totals
      return `<tr><td>${esc(r.label)}</td><td>${t.attempts}</td><td>${t.commits + t.alreadyCommitted}</td><td>${t.aborts}</td><td class="text">${esc(counts(t.abortsByCode))}</td><td>${t.reconciliations}</td><td class="text">${esc(counts(t.reconciliationsByCase))}</td><td>${t.commitsPerSecond.toFixed(1)}</td><td>${t.p50Ms.toFixed(0)}</td><td>${t.p99Ms.toFixed(0)}</td><td>${r.verify === undefined ? '-' : r.verify.ok ? 'PASS' : 'FAIL'}</td></tr>`
    })
    .join('')
  return `<section class="comparison">
<h2>Same seeded workload: file-level vs row-level conflict checking</h2>
<p class="legend">${legend}</p>
<svg id="comparison-chart" data-scale="per-measure" width="${60 + metrics.length * groupW}" height="${h}" role="img" aria-label="comparison chart">${parts.join('')}</svg>
<p class="scale-note">Each pair of bars has its own scale (the larger of the two fills the height): compare the two runs on one measure; the numbers above the bars are the counts.</p>
<table class="comparison-table"><tr><th>run</th><th>attempts</th><th>commits</th><th>aborts</th><th>aborts by code</th><th>conflicts reconciled</th><th>by case</th><th>commits/s</th><th>p50 ms</th><th>p99 ms</th><th>verifier</th></tr>${rows}</table>
</section>`
}

function glossarySection(report: RaceReport): string {
  const entries = reportGlossary(report)
  const notes = reportNotes(report)
  if (entries.length === 0 && notes.length === 0) return ''
  const items = entries
    .map(
      (e) =>
        `<dt>${esc(e.term)}</dt><dd>${esc(e.words)} <span class="ref">${esc(`${CONCEPTS_DOC}${e.anchor}`)}</span></dd>`,
    )
    .join('')
  return `<section class="glossary">
<h2>What the names mean</h2>
${entries.length === 0 ? '' : `<dl class="glossary">${items}</dl>`}
${notes.map((n) => `<p class="note">${esc(n)}</p>`).join('\n')}
</section>`
}

function counts(m: Readonly<Record<string, number>>): string {
  const e = Object.entries(m).sort(([x], [y]) => (x < y ? -1 : 1))
  return e.length === 0 ? '-' : e.map(([k, n]) => `${k} x${n}`).join(', ')
}

function niceStep(seconds: number): number {
  for (const s of [0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300]) if (seconds / s <= 12) return s
  return 600
}

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}
