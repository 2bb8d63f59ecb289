/**
 * Opening and reading a table takes memory and time bounded by what is real, never by what a
 * hostile log claims (docs/troubleshooting.md, "Limits on hostile logs"). Each case writes the
 * hostile file into a real table, then opens and scans it in a child process with a 512 MiB heap,
 * so that an unbounded read fails the test (a heap abort, or a kill at the time limit) instead
 * of eating the machine. Each case asserts the typed error, or the fallback's true result, and
 * the child's peak resident memory.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdtemp, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it, type TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'
import { DuckDBInstance } from '@duckdb/node-api'
import { createInlineDescriptor, initDeletionVectors, RoaringBitmapArray } from '../../src/dv/index.js'
import { parseCommitFile, serializeCommit } from '../../src/protocol/action-json.js'
import type { AddFile } from '../../src/protocol/actions.js'
import { commitFileName, LOG_DIR } from '../../src/protocol/log-files.js'
import { fileRefWithDeletions } from '../../src/scan/data-file-refs.js'
import { DeltaTable } from '../../src/table/delta-table.js'

const WORKER = fileURLToPath(new URL('../helpers/hostile-read-worker.ts', import.meta.url))
/** The child's heap limit, in MiB. */
const HEAP_MB = 512
/** Peak resident memory allowed to the child: its heap, DuckDB and the runtime's own. */
const RSS_LIMIT_MB = 900
/** Wall time allowed to the child. */
const TIME_LIMIT_MS = 60_000
/**
 * Repeats of one add in the hostile checkpoint: as actions, more than the child's heap; as
 * Parquet, about 50 KB.
 */
const HOSTILE_CHECKPOINT_ROWS = 2_000_000
const MB = 1024 * 1024
/** The long commit line, in MiB: the 500 MiB case is measured by hand (docs/troubleshooting.md). */
const LONG_LINE_MB = 16

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

interface WorkerResult {
  readonly rows?: number
  readonly listed?: number
  readonly version?: string
  readonly code?: string
  readonly message?: string
  readonly path?: string
  readonly untyped?: string
  readonly maxRssMb: number
}

/** Opens, counts and scans the table in a child with a small heap. */
function readInChild(root: string): Promise<WorkerResult & { readonly ms: number }> {
  const started = Date.now()
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [`--max-old-space-size=${HEAP_MB}`, '--import', 'tsx', WORKER, root],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    )
    const timer = setTimeout(() => child.kill('SIGKILL'), TIME_LIMIT_MS)
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
      clearTimeout(timer)
      const line = out.trim().split('\n').at(-1) ?? ''
      if (code !== 0 || !line.startsWith('{')) {
        reject(new Error(`the reader died (exit ${code}, signal ${signal}): ${err.slice(-2000)}`))
        return
      }
      resolve({ ...(JSON.parse(line) as WorkerResult), ms: Date.now() - started })
    })
  })
}

function note(t: TestContext, what: string, r: { readonly ms: number; readonly maxRssMb: number }): void {
  t.diagnostic(`${what}: ${r.ms} ms, peak RSS ${r.maxRssMb} MiB`)
}

/** A table of `commits` one-row appends, checkpointed every two commits. */
async function smallTable(commits: number): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'delta-rlc-hostile-'))
  roots.push(root)
  const table = await DeltaTable.create(root, {
    schema: 'id long',
    properties: { 'delta.checkpointInterval': '2' },
  })
  try {
    for (let i = 0; i < commits; i++) await table.append([{ id: BigInt(i) }])
  } finally {
    await table.close()
  }
  return root
}

describe('a hostile log', () => {
  it('a _last_checkpoint naming 5*10^7 or 10^12 parts falls back to the listing', async (t) => {
    const root = await smallTable(4)
    const hint = join(root, '_delta_log', '_last_checkpoint')
    // 10^12 parts was an untyped RangeError at once: it is checked in this process.
    await writeFile(hint, JSON.stringify({ version: 4, size: 3, parts: 1e12, sizeInBytes: 1000 }))
    const table = await DeltaTable.open(root)
    try {
      assert.equal((await table.snapshot()).version, 4n)
      assert.equal(await table.scan().count(), 4)
    } finally {
      await table.close()
    }
    // 5*10^7 parts was a heap abort after 40 s: in a child with a small heap.
    await writeFile(hint, JSON.stringify({ version: 4, size: 3, parts: 50_000_000, sizeInBytes: 1000 }))
    const r = await readInChild(root)
    note(t, 'parts 50000000', r)
    assert.equal(r.untyped, undefined, r.untyped)
    assert.equal(r.code, undefined, r.message)
    assert.deepEqual([r.version, r.rows, r.listed], ['4', 4, 4])
    assert.ok(r.maxRssMb < RSS_LIMIT_MB, `peak RSS ${r.maxRssMb} MiB`)
  })

  it('a checkpoint of one add repeated 2*10^6 times, far too many rows for its bytes, is refused', async (t) => {
    const root = await smallTable(4)
    const log = join(root, '_delta_log')
    const checkpoint = join(log, '00000000000000000004.checkpoint.parquet')
    // One add of the real checkpoint, repeated, beside its protocol and metadata rows:
    // Parquet's dictionary and run-length encodings hold the repeats in a few bytes each.
    const db = await DuckDBInstance.create(':memory:')
    const con = await db.connect()
    try {
      const src = `read_parquet('${checkpoint}')`
      const add =
        "{'path': add.path, 'partitionValues': add.partitionValues, 'size': add.size, " +
        "'modificationTime': add.modificationTime, 'dataChange': false}"
      await con.run(`CREATE TABLE one AS SELECT ${add} AS add FROM ${src} WHERE add IS NOT NULL LIMIT 1`)
      await con.run(
        `COPY (SELECT protocol, metaData, NULL AS add FROM ${src} WHERE add IS NULL UNION ALL BY NAME ` +
          `SELECT one.add FROM one, range(${HOSTILE_CHECKPOINT_ROWS})) TO '${checkpoint}.tmp' (FORMAT parquet, COMPRESSION zstd)`,
      )
    } finally {
      con.closeSync()
      db.closeSync()
    }
    await rename(`${checkpoint}.tmp`, checkpoint)
    const bytes = (await stat(checkpoint)).size
    t.diagnostic(`hostile checkpoint: ${HOSTILE_CHECKPOINT_ROWS} repeats in ${bytes} bytes`)
    // Without the commits before it, the checkpoint is the only way to the table's state.
    for (const name of await readdir(log)) {
      if (/^0{19}[0-3]\.json$/.test(name)) await rm(join(log, name))
    }
    const r = await readInChild(root)
    note(t, 'hostile checkpoint', r)
    assert.equal(r.untyped, undefined, r.untyped)
    assert.equal(r.code, 'DELTA_INVALID_TABLE', r.message)
    assert.match(r.message ?? '', /00000000000000000004\.checkpoint\.parquet/)
    assert.match(r.message ?? '', new RegExp(`${HOSTILE_CHECKPOINT_ROWS + 2} rows in ${bytes} bytes`))
    assert.ok(r.maxRssMb < RSS_LIMIT_MB, `peak RSS ${r.maxRssMb} MiB`)
  })

  it('an inline DV of 10^9 positions on a 3-row file with no row count in its stats is refused', async (t) => {
    await initDeletionVectors()
    const root = await mkdtemp(join(tmpdir(), 'delta-rlc-hostile-'))
    roots.push(root)
    const table = await DeltaTable.create(root, {
      schema: 'id long not null',
      properties: { 'delta.enableDeletionVectors': 'true' },
    })
    try {
      await table.append([{ id: 0n }, { id: 1n }, { id: 2n }])
    } finally {
      await table.close()
    }
    const text = await readFile(join(root, LOG_DIR, commitFileName(1n)), 'utf8')
    const add = parseCommitFile(text).flatMap((a) => ('add' in a ? [a.add] : []))[0] as AddFile
    // Runs make 10^9 positions a small bitmap; the stats, which could give the lie away, are
    // left out.
    const bitmap = RoaringBitmapArray.fromRange(0, 1_000_000_000)
    const deletionVector = createInlineDescriptor(bitmap)
    bitmap.dispose()
    t.diagnostic(`inline DV: ${deletionVector.pathOrInlineDv.length} characters`)
    const { stats: _, ...withoutStats } = add
    const now = BigInt(Date.now())
    await writeFile(
      join(root, LOG_DIR, commitFileName(2n)),
      serializeCommit([
        { commitInfo: { timestamp: now, operation: 'DELETE', txnId: randomUUID() } },
        { remove: { path: add.path, deletionTimestamp: now, dataChange: true, size: add.size } },
        { add: { ...withoutStats, deletionVector, dataChange: true } },
      ]),
    )
    const r = await readInChild(root)
    note(t, 'hostile DV', r)
    assert.equal(r.untyped, undefined, r.untyped)
    assert.equal(r.code, 'DELTA_INVALID_DELETION_VECTOR', r.message)
    assert.ok(r.message?.includes(add.path), r.message)
    assert.match(r.message ?? '', /deletes row position 999999999, but the file has 3 rows/)
    assert.ok(r.maxRssMb < RSS_LIMIT_MB, `peak RSS ${r.maxRssMb} MiB`)
  })

  it('a data file reference carries its DV as a set and lists its positions only when read', async () => {
    await initDeletionVectors()
    const set = RoaringBitmapArray.fromSorted([1, 5, 9])
    const ref = fileRefWithDeletions({ key: 'a.parquet', partitionValues: {} }, set)
    assert.equal(ref.deletedRowSet, set)
    // A data plane that only knows the list still gets every position.
    assert.deepEqual(Array.from(ref.deletedRows ?? []), [1, 5, 9])
    assert.deepEqual(Array.from({ ...ref }.deletedRows ?? []), [1, 5, 9])
    const none = fileRefWithDeletions({ key: 'b.parquet', partitionValues: {} }, undefined)
    assert.equal(none.deletedRows, undefined)
    assert.equal(none.deletedRowSet, undefined)
  })

  it('a commit with one 16 MiB line is read at a small multiple of the line', async (t) => {
    const root = await smallTable(1)
    const before = await readInChild(root)
    note(t, 'without the line', before)
    // The commit's only line: a commitInfo with one long string.
    const fh = await open(join(root, LOG_DIR, commitFileName(2n)), 'wx')
    try {
      await fh.write('{"commitInfo":{"timestamp":1700000000000,"operation":"WRITE","note":"')
      await fh.write(Buffer.alloc(LONG_LINE_MB * MB, 0x78))
      await fh.write('"}}\n')
    } finally {
      await fh.close()
    }
    const r = await readInChild(root)
    note(t, `a ${LONG_LINE_MB} MiB line`, r)
    assert.equal(r.untyped, undefined, r.untyped)
    assert.equal(r.code, undefined, r.message)
    assert.deepEqual([r.version, r.rows], ['2', 1])
    // Each snapshot load holds the file's bytes, the decoded line and the parsed value at once
    // (3x), and the open table keeps one snapshot while the scans load theirs (4x to 6x
    // measured); the margin is for the garbage collector's timing.
    const grew = r.maxRssMb - before.maxRssMb
    assert.ok(grew <= 8 * LONG_LINE_MB, `peak RSS grew by ${grew} MiB for a ${LONG_LINE_MB} MiB line`)
  })
})
