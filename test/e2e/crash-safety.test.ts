/**
 * Crash safety: writer processes are killed (SIGKILL) at random points of a commit -- before
 * and after data files, after the DV file, just before and just after the log put -- many
 * times over. Afterwards the table is readable at every version, every acknowledged commit is
 * present, no operation is applied twice, the rows equal a serial replay of the operations the
 * log holds, and the only unreferenced files are what VACUUM removes.
 *
 * DELTA_RLC_CRASH_KILLS sets the number of killed processes (default 200).
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtemp, readdir, rm, utimes } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { DeltaTable } from '../../src/table/delta-table.js'

const KILLS = Number(process.env.DELTA_RLC_CRASH_KILLS ?? 200)
const PHASES = ['before-data', 'after-data', 'after-dv', 'before-log', 'after-log'] as const
const workerSource = fileURLToPath(new URL('../helpers/crash-worker.ts', import.meta.url))
const loaderSource = fileURLToPath(new URL('../helpers/code-cache-loader.ts', import.meta.url))
// A killed writer restarts hundreds of times, so its start is made cheap, in three steps:
// - bundled once to plain JavaScript: skipping the TypeScript loader halves each start;
// - its packages go into the bundle too: resolving and loading the hundred-odd files of the
//   DuckDB API took a third of what was left. Left out are the native bindings, the WebAssembly
//   bitmap package (it finds its .wasm file beside itself) and Arrow (never loaded here);
// - it runs through code-cache-loader.ts with the compiled code a warm-up writer left: compiling
//   the bundle was half of what was left.
// It sits inside the repository so the packages left out resolve.
const buildDir = fileURLToPath(new URL(`../../.tmp/crash-worker-${process.pid}/`, import.meta.url))
const worker = join(buildDir, 'worker.cjs')
const loader = join(buildDir, 'loader.mjs')
const roots: string[] = [buildDir]
const TABLE = {
  schema: 'id long not null, seq int',
  properties: { 'delta.enableDeletionVectors': 'true', 'delta.checkpointInterval': '7' },
}
before(async () => {
  const common = { bundle: true, platform: 'node', target: 'node20', logLevel: 'error' } as const
  await Promise.all([
    build({
      ...common,
      entryPoints: [workerSource],
      format: 'cjs',
      outfile: worker,
      external: ['@duckdb/node-bindings', 'roaring-wasm', 'apache-arrow'],
    }),
    build({ ...common, entryPoints: [loaderSource], format: 'esm', outfile: loader }),
  ])
  // The warm-up writer appends and deletes on a table of its own, then writes the code cache.
  const warm = await mkdtemp(join(tmpdir(), 'delta-rlc-crash-warm-'))
  roots.push(warm)
  await (await DeltaTable.create(warm, TABLE)).close()
  const r = await runWorker([warm, 'warm-up', '0', '2', 'none', '1'], { DELTA_RLC_WRITE_CODE_CACHE: '1' })
  assert.deepEqual(r, {
    acks: [
      [0, 1n],
      [1, 2n],
    ],
    killed: false,
  })
})
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

function runWorker(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ acks: Array<[number, bigint]>; killed: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [loader, worker, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => {
      out += d
    })
    child.stderr.on('data', (d) => {
      err += d
    })
    child.on('error', reject)
    child.on('exit', (code, signal) => {
      const acks = out
        .split('\n')
        .filter((l) => l.startsWith('ACK '))
        .map((l) => {
          const [, s, v] = l.split(' ')
          return [Number(s), BigInt(v as string)] as [number, bigint]
        })
      if (signal === 'SIGKILL') resolve({ acks, killed: true })
      else if (code === 0) resolve({ acks, killed: false })
      else reject(new Error(`worker failed (${code}): ${err}`))
    })
  })
}

async function recordedSeq(table: DeltaTable, appId: string): Promise<number> {
  const v = (await table.snapshot()).setTransactions().get(appId)?.version
  return v === undefined ? -1 : Number(v)
}

/** Serial replay of operations 0..last (see crash-worker.ts). */
function replay(seqs: readonly number[]): number[] {
  const ids = new Set<number>()
  for (const seq of seqs) {
    if (seq % 2 === 0) for (let i = 0; i < 10; i++) ids.add(seq * 10 + i)
    else for (let i = 0; i < 5; i++) ids.delete((seq - 1) * 10 + i)
  }
  return [...ids].sort((a, b) => a - b)
}

async function crashLoop(dir: string, appId: string, kills: number, seed: number) {
  let rand = seed
  const next = () => {
    rand = (Math.imul(rand, 1103515245) + 12345) >>> 0
    return rand / 2 ** 32
  }
  const acked = new Map<number, bigint>()
  let killed = 0
  const table = await DeltaTable.open(dir)
  while (killed < kills) {
    const start = (await recordedSeq(table, appId)) + 1
    const phase = PHASES[Math.floor(next() * PHASES.length)] as string
    // Kill within the next few commits: each put kind happens about once per commit.
    const nth = 1 + Math.floor(next() * 3)
    const r = await runWorker([dir, appId, String(start), '6', phase, String(nth)])
    for (const [s, v] of r.acks) acked.set(s, v)
    if (r.killed) killed++
  }
  await table.close()
  return acked
}

describe('crash safety of commits', () => {
  it(`${KILLS} writer kills at random points of a commit leave a consistent table`, {
    timeout: 600_000,
  }, async () => {
    const root = await mkdtemp(join(tmpdir(), 'delta-rlc-crash-'))
    roots.push(root)
    const dirs = [join(root, 'a'), join(root, 'b')]
    for (const dir of dirs) await (await DeltaTable.create(dir, TABLE)).close()
    // Two tables side by side keep both cores busy.
    const acks = await Promise.all(dirs.map((d, i) => crashLoop(d, 'writer', Math.ceil(KILLS / 2), 17 + i)))

    for (const [i, dir] of dirs.entries()) {
      const table = await DeltaTable.open(dir)
      try {
        const snap = await table.snapshot()
        // Which operation each version holds, from the idempotency markers in the log, and the data
        // files any version references (one snapshot of each version serves both).
        const seqByVersion = new Map<bigint, number>()
        const referenced = new Set<string>()
        for (let v = 1n; v <= snap.version; v++) {
          const s = await table.snapshot({ version: v })
          for (const f of await s.files()) referenced.add(decodeURIComponent(f.path))
          const seq = Number(s.setTransactions().get('writer')?.version)
          const prev = v === 1n ? undefined : seqByVersion.get(v - 1n)
          assert.ok(
            prev === undefined || seq === prev + 1,
            `version ${v} applies op ${seq} right after op ${prev}`,
          )
          seqByVersion.set(v, seq)
          // Readable at every version.
          await table.scan({ version: v }).count()
        }
        const applied = [...seqByVersion.values()]
        assert.equal(new Set(applied).size, applied.length, 'no operation applied twice')
        for (const [seq, version] of acks[i] as Map<number, bigint>) {
          assert.equal(seqByVersion.get(version), seq, `acknowledged op ${seq} is version ${version}`)
        }
        const rows = (await table.scan({ columns: ['id'] }).toArray())
          .map((r) => Number(r.id as bigint))
          .sort((a, b) => a - b)
        assert.deepEqual(rows, replay(applied))

        // Unreferenced files are the leftovers of killed attempts; VACUUM removes exactly them.
        // (Version 0 creates the table and references no data file.)
        assert.deepEqual(await (await table.snapshot({ version: 0n })).files(), [])
        const onDisk = (await readdir(dir, { recursive: true }))
          .map((f) => relative(dir, join(dir, String(f))))
          .filter((f) => f.endsWith('.parquet') && !f.startsWith('_delta_log'))
        const orphans = onDisk.filter((f) => !referenced.has(f))
        assert.ok(onDisk.length > orphans.length)
        // Orphans are untracked files, which VACUUM keeps for an hour whatever the retention.
        const old = new Date(Date.now() - 2 * 3_600_000)
        for (const f of orphans) await utimes(join(dir, f), old, old)
        const vacuumed = await table.vacuum({ retentionHours: 0, enforceRetentionDuration: false })
        assert.deepEqual(
          vacuumed.files.filter((f) => f.endsWith('.parquet')).sort(),
          [...orphans].sort(),
          'VACUUM deletes exactly the data files no version references',
        )
        const left = (await readdir(dir, { recursive: true }))
          .map((f) => String(f))
          .filter((f) => f.endsWith('.parquet') && !f.startsWith('_delta_log'))
        const current = new Set((await snap.files()).map((f) => decodeURIComponent(f.path)))
        assert.deepEqual(left.sort(), [...current].sort(), 'after VACUUM only live data files remain')
        assert.deepEqual(
          (await table.scan({ columns: ['id'] }).toArray())
            .map((r) => Number(r.id as bigint))
            .sort((a, b) => a - b),
          rows,
        )
      } finally {
        await table.close()
      }
    }
  })
})
