/**
 * The benchmark suite keeps working: `npm run bench -- --quick` runs every suite (each in its own
 * process) and every suite produces rows whose figures are finite numbers. Nothing about speed
 * is asserted.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { describe, it } from 'node:test'
import type { BenchResult } from '../../bench/harness.js'

const repoRoot = resolve(import.meta.dirname, '../..')

/** Every suite, and the name prefix of its rows; each must report at least one row. */
const EXPECTED_SUITES: ReadonlyArray<readonly [suite: string, rowPrefix: string]> = [
  ['contention', 'contention.goodput'],
  ['contention-latency', 'contention.goodput-latency'],
  ['snapshot', 'snapshot.'],
  ['scan', 'scan.'],
  ['write', 'write.'],
  ['dml', 'dml.'],
  ['commit', 'commit.'],
  ['conflict', 'conflict.'],
]

describe('benchmark smoke run', () => {
  it('npm run bench -- --quick gives every suite rows with finite figures', {
    timeout: 300_000,
  }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'delta-rlc-bench-quick-'))
    try {
      const out = join(dir, 'latest.json')
      const { code, output } = await run(['run', 'bench', '--', '--quick', `--out=${out}`])
      assert.equal(code, 0, `the quick run failed:\n${output.slice(-4000)}`)

      const suiteRows = new Map<string, number>()
      for (const m of output.matchAll(/^suite (\S+): (\d+) rows/gm))
        suiteRows.set(m[1] as string, Number(m[2]))
      for (const [name] of EXPECTED_SUITES) {
        assert.ok((suiteRows.get(name) ?? 0) > 0, `suite ${name} produced no row:\n${output.slice(-4000)}`)
      }

      const saved = JSON.parse(await readFile(out, 'utf8')) as { quick: boolean; results: BenchResult[] }
      assert.equal(saved.quick, true)
      const total = [...suiteRows.values()].reduce((a, b) => a + b, 0)
      assert.equal(saved.results.length, total)
      for (const [name, prefix] of EXPECTED_SUITES) {
        assert.ok(
          saved.results.some((r) => r.name.startsWith(prefix)),
          `no saved row of suite ${name}`,
        )
      }
      for (const r of saved.results) {
        const label = `${r.name} ${JSON.stringify(r.parameters)}`
        for (const field of [
          'medianMs',
          'minMs',
          'maxMs',
          'baselineMedianMs',
          'ratio',
          'peakRssMiB',
        ] as const) {
          assert.ok(Number.isFinite(r[field]), `${label}: ${field} is ${r[field]}`)
        }
        assert.ok(r.minMs <= r.medianMs && r.medianMs <= r.maxMs, `${label}: min <= median <= max`)
        assert.ok(r.baseline.length > 0, `${label}: names its baseline`)
        for (const [k, v] of Object.entries(r.extra)) {
          if (typeof v === 'number') assert.ok(Number.isFinite(v), `${label}: extra ${k} is ${v}`)
        }
      }
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})

function run(args: readonly string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolveRun) => {
    const child = spawn('npm', args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8')
    })
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8')
    })
    child.once('exit', (code) => resolveRun({ code, output }))
  })
}
