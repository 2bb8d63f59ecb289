/**
 * The HTML report of a real `compare` race, opened in headless Chromium: the rendered DOM has a
 * timeline row per writer and run, abort and reconciliation markers, and the comparison chart,
 * and the file references nothing outside itself.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { pathToFileURL } from 'node:url'
import { type RaceReport, renderHtmlReport, runRace } from '../../src/race/index.js'

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
      durationMs: 3000,
      rows: 1000,
      initialFiles: 2,
    })
  })
  after(() => rm(root, { recursive: true, force: true }))

  it('is self-contained: no URL to fetch, no external resource', async () => {
    const html = await readFile(report.htmlPath!, 'utf8')
    assert.equal(html, renderHtmlReport(report))
    assert.doesNotMatch(html, /https?:\/\/|src=|href=|@import|url\(/i)
  })

  it('renders the timeline rows, the markers and the chart in headless Chromium', { skip: SKIP }, () => {
    const out = spawnSync(
      CHROMIUM as string,
      ['--headless', '--no-sandbox', '--disable-gpu', '--dump-dom', pathToFileURL(report.htmlPath!).href],
      { encoding: 'utf8', timeout: 60_000 },
    )
    assert.equal(out.status, 0, out.stderr)
    const dom = out.stdout
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
  })
})
