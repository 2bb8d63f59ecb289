/**
 * The reports of a real `compare` race. The HTML report, opened in headless Chromium: the
 * rendered DOM has the headline, the paragraph on file-level vs row-level, a glossary line per
 * name that occurred, a timeline row per writer and run, abort and reconciliation markers, and the
 * comparison chart with a scale per measure; the file references nothing outside itself. The
 * terminal report, short and detailed: the same headline first and no line over 100 columns.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { pathToFileURL } from 'node:url'
import { type RaceReport, renderHtmlReport, renderTerminalReport, runRace } from '../../src/race/index.js'
import { maxOf } from '../../src/util/arrays.js'

const CHROMIUM = ['chromium', 'chromium-browser'].find(
  (bin) => spawnSync(bin, ['--version'], { stdio: 'ignore' }).status === 0,
)
const SKIP = CHROMIUM === undefined ? 'chromium is not installed (apt-get install -y chromium)' : false

describe('race HTML report', () => {
  let root: string
  let report: RaceReport

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'delta-rlc-race-html-'))
    report = await runRace({
      location: join(root, 'table'),
      writers: { append: 1, delete: 2 },
      compare: true,
      seed: 8,
      // Bounded by operations, not time: a timed race on a loaded machine runs too few to test.
      opsPerWriter: 6,
      durationMs: 180_000,
      rows: 1000,
      initialFiles: 2,
    })
  })
  after(() => rm(root, { recursive: true, force: true }))

  /** The report as headless Chromium renders it: started once for the tests that read the DOM. */
  let dom: string | undefined
  function renderedDom(): string {
    if (dom === undefined) {
      const out = spawnSync(
        CHROMIUM as string,
        ['--headless', '--no-sandbox', '--disable-gpu', '--dump-dom', pathToFileURL(report.htmlPath!).href],
        { encoding: 'utf8', timeout: 60_000 },
      )
      assert.equal(out.status, 0, out.stderr)
      dom = out.stdout
    }
    return dom
  }

  it('is self-contained: no URL to fetch, no external resource', async () => {
    const html = await readFile(report.htmlPath!, 'utf8')
    assert.equal(html, renderHtmlReport(report))
    assert.doesNotMatch(html, /https?:\/\/|src=|href=|@import|url\(/i)
  })

  it('renders the timeline rows, the markers and the chart in headless Chromium', { skip: SKIP }, () => {
    const dom = renderedDom()
    const count = (re: RegExp) => (dom.match(re) ?? []).length
    const writers = report.runs[0]!.config.writers.length
    assert.equal(count(/<g class="timeline-row"/g), writers * report.runs.length)
    const [off, on] = report.runs
    assert.equal(count(/class="attempt committed"/g), off!.stats.totals.commits + on!.stats.totals.commits)
    assert.equal(count(/<path class="marker abort"/g), off!.stats.totals.aborts + on!.stats.totals.aborts)
    assert.ok(off!.stats.totals.aborts > 0, 'the file-level run has aborts to mark')
    assert.ok(count(/<circle class="marker reconcile"/g) > 0, 'reconciled commits are marked')
    assert.match(dom, /<svg id="comparison-chart"/)
    assert.equal(count(/<rect class="bar (file-level|row-level)"/g), 6)
    assert.match(dom, /data-series="file-level" data-metric="aborts"/)
    assert.match(dom, /class="verdict pass"/)
    // Each pair of bars has its own scale: the larger of the two fills the same height in every
    // pair, so the reconciliation bar cannot dwarf commits and aborts.
    assert.match(dom, /<svg id="comparison-chart" data-scale="per-measure"/)
    const heights = new Map<string, number[]>()
    for (const m of dom.matchAll(
      /data-metric="(\w+)" x="[\d.]+" y="[\d.]+" width="\d+" height="([\d.]+)"/g,
    )) {
      heights.set(m[1] as string, [...(heights.get(m[1] as string) ?? []), Number(m[2])])
    }
    const tallest = [...heights.values()].map((hs) => maxOf(hs, 0))
    assert.equal(tallest.length, 3)
    for (const t of tallest) assert.equal(t, tallest[0])
    assert.match(dom, /<p class="scale-note">Each pair of bars has its own scale/)
  })

  it('leads with the headline, explains file-level vs row-level and each name that occurred', {
    skip: SKIP,
  }, () => {
    const dom = renderedDom()
    const [off, on] = report.runs
    const a = off!.stats.totals
    const b = on!.stats.totals
    const headline = `file-level: ${a.aborts} of ${a.attempts} attempts aborted | row-level: ${b.aborts} of ${b.attempts} aborted, ${b.reconciliations} ${b.reconciliations === 1 ? 'conflict' : 'conflicts'} reconciled`
    assert.ok(dom.includes(`<p class="headline">${headline}</p>`), dom)
    assert.ok(dom.indexOf('class="headline"') < dom.indexOf('id="comparison-chart"'))
    assert.match(dom, /<p class="explainer">Delta writers commit optimistically.*File-level checking/)
    for (const kind of Object.keys(b.reconciliationsByCase)) {
      assert.match(
        dom,
        new RegExp(`<dt>${kind}</dt><dd>[^<]+ <span class="ref">docs/concepts.md#case-\\d</span></dd>`),
      )
    }
    const codes = Object.keys(a.abortsByCode)
    assert.ok(codes.length > 0, 'the file-level run aborted')
    for (const code of codes) assert.match(dom, new RegExp(`<dt>${code}</dt><dd>[^<]+ <span class="ref">`))
  })

  it('prints the same headline first in the terminal, and no line over 100 columns', () => {
    for (const detail of [false, true]) {
      const text = renderTerminalReport(report, { detail })
      const lines = text.split('\n')
      assert.match(
        lines[0] as string,
        /^file-level: \d+ of \d+ attempts aborted \| row-level: 0 of \d+ aborted/,
      )
      assert.match(text, /^What the names mean/m)
      for (const code of Object.keys(report.runs[0]!.stats.totals.abortsByCode))
        assert.match(text, new RegExp(`^ {2}${code} +[a-zA-Z]`, 'm'))
      assert.match(text, /^verifier.*: PASS/m)
      for (const l of lines) assert.ok(l.length <= 100, `${l.length} columns: ${l}`)
    }
  })
})
