/**
 * Snapshot load: logs of 1k, 10k and 100k commits, read without a checkpoint and with one near
 * the end (as `delta.checkpointInterval` = 10 leaves it: at most nine commits after it); and the
 * peak RSS of a fresh process opening a table of 100k live files from its checkpoint.
 *
 * Baselines, the practical floor for the same bytes: without a checkpoint, reading every commit
 * file (the same concurrency as the loader) and `JSON.parse` of each line; with one, DuckDB
 * reading the whole checkpoint into a materialized result plus the same for the commits after it.
 *
 * The log is written directly with the protocol serializer: commit 0 holds protocol, metadata and
 * an add; every later commit a `commitInfo` and an add with statistics, and every fourth one also
 * removes the file added two commits earlier (so replay sees tombstones too).
 */
import { execFile } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { createDefaultEngine } from '../src/engine-default/default-engine.js'
import { serializeCommit } from '../src/protocol/action-json.js'
import type { Action } from '../src/protocol/actions.js'
import { commitFileName } from '../src/protocol/log-files.js'
import { loadSnapshot } from '../src/snapshot/load-snapshot.js'
import { writeCheckpoint } from '../src/snapshot/write-checkpoint.js'
import { createLocalStore } from '../src/storage/local-store.js'
import { appendAll } from '../src/util/arrays.js'
import { mapLimit } from '../src/util/map-limit.js'
import { syntheticTableSetup } from '../test/helpers/synthetic-table.js'
import { type BenchResult, median, result, timeBoth, timeRuns, withTempDir } from './harness.js'

/** The loader's commit read concurrency, used by the baseline too. */
const READ_CONCURRENCY = 16

/**
 * Runs the snapshot-load benchmarks.
 *
 * @param quick - a small smoke run
 * @returns one row per log size and checkpoint mode
 */
export async function snapshotBenchmarks(quick: boolean): Promise<BenchResult[]> {
  const sizes = quick ? [300] : [1_000, 10_000, 100_000]
  const out: BenchResult[] = []
  for (const commits of sizes) {
    const runs = quick ? 1 : commits >= 100_000 ? 3 : 5
    await withTempDir('snapshot', async (root) => {
      const dir = join(root, 't')
      const t0 = performance.now()
      await writeSyntheticLog(dir, commits)
      const genMs = performance.now() - t0
      const engine = createDefaultEngine(createLocalStore(dir))
      const instance = await DuckDBInstance.create(':memory:', {
        autoinstall_known_extensions: 'false',
        autoload_known_extensions: 'false',
      })
      const con = await instance.connect()
      try {
        const logDir = join(dir, '_delta_log')
        let files = 0
        const load = async () => {
          files = (await loadSnapshot(engine, dir)).activeFiles().length
        }
        const [ours, floor] = await timeBoth(runs, load, () => parseCommits(logDir, 0), {
          warmup: quick ? 0 : 1,
        })
        const bytes = await readCommitBytes(logDir, 0)
        const parseOnly = await timeRuns(runs, async () => parseBytes(bytes))
        out.push(
          result(
            'snapshot.load',
            { commits, checkpoint: 'none' },
            ours,
            'read every commit file + JSON.parse per line',
            floor,
            {
              sizeParameter: 'commits',
              extra: {
                activeFiles: files,
                jsonParseOnlyMs: Math.round(median(parseOnly)),
                logGenerationMs: Math.round(genMs),
              },
            },
          ),
        )

        // A checkpoint where an interval of 10 leaves the last one, with the commits after it.
        const last = commits - 1
        const cpVersion = last - (last % 10)
        const cpSnap = await loadSnapshot(engine, dir, { version: cpVersion })
        const cp = await writeCheckpoint(engine, cpSnap)
        const cpPath = join(dir, cp.key)
        const [withCp, cpFloor] = await timeBoth(
          runs,
          load,
          async () => {
            await con.runAndReadAll(`SELECT * FROM read_parquet('${cpPath}')`)
            await parseCommits(logDir, cpVersion + 1)
          },
          { warmup: quick ? 0 : 1 },
        )
        out.push(
          result(
            'snapshot.load-checkpoint',
            { commits, checkpoint: `v${cpVersion}` },
            withCp,
            'duckdb read_parquet(checkpoint) materialized + JSON.parse of the commits after it',
            cpFloor,
            {
              sizeParameter: 'commits',
              extra: { activeFiles: files, checkpointActions: cp.size, checkpointBytes: cp.sizeInBytes },
            },
          ),
        )
      } finally {
        con.closeSync()
        instance.closeSync()
        await engine.close()
      }
    })
  }
  out.push(await openRss(quick ? 3_000 : 100_000, quick ? 1 : 3))
  return out
}

/**
 * `snapshot.open-rss`: the peak RSS of a process that opens a table of `files` live files from
 * its checkpoint (this process's own peak mixes every measurement before it), against a process
 * that only reads the same checkpoint with DuckDB into a materialized result. Each run is a
 * fresh child process (`snapshot-rss-child.ts`), load and floor alternating.
 */
async function openRss(files: number, runs: number): Promise<BenchResult> {
  return withTempDir('snapshot-rss', async (root) => {
    const dir = join(root, 't')
    const logDir = join(dir, '_delta_log')
    await mkdir(logDir, { recursive: true })
    const now = BigInt(Date.now())
    const actions: Action[] = [...syntheticTableSetup(now)]
    for (let v = 0; v < files; v++) actions.push({ add: fileAction(v, now) })
    await writeFile(join(logDir, commitFileName(0n)), serializeCommit(actions))
    const engine = createDefaultEngine(createLocalStore(dir))
    try {
      await writeCheckpoint(engine, await loadSnapshot(engine, dir))
    } finally {
      await engine.close()
    }
    const load: ChildMeasure[] = []
    const floor: ChildMeasure[] = []
    for (let i = 0; i < runs; i++) {
      load.push(await measureInChild(dir, 'load'))
      floor.push(await measureInChild(dir, 'floor'))
    }
    return result(
      'snapshot.open-rss',
      { activeFiles: files },
      load.map((m) => m.ms),
      'a fresh process: duckdb read_parquet(checkpoint) materialized',
      floor.map((m) => m.ms),
      {
        extra: {
          childPeakRssMiB: median(load.map((m) => m.peakRssMiB)),
          childRssBeforeMiB: median(load.map((m) => m.rssBeforeMiB)),
          floorPeakRssMiB: median(floor.map((m) => m.peakRssMiB)),
        },
      },
    )
  })
}

interface ChildMeasure {
  readonly ms: number
  readonly peakRssMiB: number
  readonly rssBeforeMiB: number
}

function measureInChild(dir: string, mode: 'load' | 'floor'): Promise<ChildMeasure> {
  const child = join(import.meta.dirname, 'snapshot-rss-child.ts')
  return new Promise((resolveRun, reject) => {
    execFile(
      process.execPath,
      [...process.execArgv, child, dir, mode],
      { maxBuffer: 1 << 20 },
      (err, stdout) => {
        if (err) reject(err)
        else resolveRun(JSON.parse(stdout.trim().split('\n').pop() as string) as ChildMeasure)
      },
    )
  })
}

/**
 * Writes a log of `commits` versions (0 .. commits-1) under `dir/_delta_log`.
 *
 * @param dir - the table directory
 * @param commits - number of commits
 */
export async function writeSyntheticLog(dir: string, commits: number): Promise<void> {
  const logDir = join(dir, '_delta_log')
  await mkdir(logDir, { recursive: true })
  await writeSyntheticCommits((name, body) => writeFile(join(logDir, name), body), 0, commits, commits)
}

/**
 * Writes versions `from` .. `to - 1` of a synthetic log of `commits` versions, each through
 * `put` (a commit file name and its body), 64 at a time. Commit 0 creates the table (the schema
 * of `test/helpers/synthetic-table.ts`); every later commit adds a file with statistics, and every
 * fourth also removes the file added two commits earlier.
 *
 * @param put - writes one commit file of `_delta_log/`
 * @param from - the first version written
 * @param to - one past the last version written
 * @param commits - the length of the whole log (commit timestamps are spaced 1 s apart, the
 *   last one now)
 */
export async function writeSyntheticCommits(
  put: (name: string, body: string) => Promise<unknown>,
  from: number,
  to: number,
  commits: number,
): Promise<void> {
  const now = BigInt(Date.now())
  const versions = Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i)
  await mapLimit(versions, 64, async (v) => {
    const actions: Action[] = [
      {
        commitInfo: {
          timestamp: now - BigInt((commits - v) * 1000),
          operation: 'WRITE',
          operationParameters: { mode: 'Append' },
          readVersion: BigInt(Math.max(0, v - 1)),
          isolationLevel: 'Serializable',
          isBlindAppend: true,
          engineInfo: 'delta-rlc-bench',
          txnId: randomUUID(),
        },
      },
    ]
    if (v === 0) appendAll(actions, syntheticTableSetup(now))
    actions.push({ add: fileAction(v, now) })
    if (v >= 2 && v % 4 === 0) {
      const { stats: _stats, modificationTime: _m, ...gone } = fileAction(v - 2, now)
      actions.push({ remove: { ...gone, deletionTimestamp: now, extendedFileMetadata: true } })
    }
    await put(commitFileName(BigInt(v)), serializeCommit(actions))
  })
}

function fileAction(v: number, now: bigint) {
  const start = v * 1000
  return {
    path: `part-${String(v).padStart(5, '0')}-${uuidFor(v)}.c000.snappy.parquet`,
    partitionValues: {},
    size: 12_345n,
    modificationTime: now,
    dataChange: true,
    stats: JSON.stringify({
      numRecords: 1000,
      minValues: { id: start, value: start * 0.5, name: 'n0', part: v % 4 },
      maxValues: { id: start + 999, value: (start + 999) * 0.5, name: 'n999', part: v % 4 },
      nullCount: { id: 0, value: 0, name: 0, part: 0 },
    }),
  }
}

/** A stable UUID-shaped text per version, so an add and its later remove name the same path. */
function uuidFor(v: number): string {
  const hex = v.toString(16).padStart(12, '0')
  return `00000000-0000-4000-8000-${hex}`
}

async function commitNames(logDir: string, from: number): Promise<string[]> {
  return (await readdir(logDir))
    .filter((n) => /^\d{20}\.json$/.test(n) && Number(n.slice(0, 20)) >= from)
    .sort()
}

async function readCommitBytes(logDir: string, from: number): Promise<Buffer[]> {
  const names = await commitNames(logDir, from)
  return mapLimit(names, READ_CONCURRENCY, (n) => readFile(join(logDir, n)))
}

async function parseCommits(logDir: string, from: number): Promise<number> {
  const names = await commitNames(logDir, from)
  const counts = await mapLimit(names, READ_CONCURRENCY, async (n) =>
    parseBytes([await readFile(join(logDir, n))]),
  )
  return counts.reduce((a, b) => a + b, 0)
}

function parseBytes(files: readonly Buffer[]): number {
  let n = 0
  for (const b of files) {
    for (const line of b.toString('utf8').split('\n')) {
      if (line !== '') {
        JSON.parse(line)
        n++
      }
    }
  }
  return n
}
