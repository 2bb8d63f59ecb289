/**
 * End-to-end: a CLI MERGE or UPDATE stopped by SIGINT or SIGTERM after it staged data files
 * removes them again, says how many, exits 128 + the signal number, and leaves the table as it
 * was (version, rows, files on disk). The built CLI runs as a real process on a 250,000-row
 * table partitioned 40 ways, so the rewrite stages dozens of files over a second or more.
 */
import assert from 'node:assert/strict'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { DuckDBInstance } from '@duckdb/node-api'
import { DeltaTable } from '../../src/index.js'
import { createSnapshotView } from '../../src/subpaths/duckdb.js'
import { buildCli, type CliRun, startCli } from '../helpers/cli-build.js'

const TABLE_ROWS = 250_000
const SOURCE_ROWS = 200_000

type Run = CliRun

/** Data and deletion-vector files under the table root (the log excluded), sorted. */
async function storedFiles(table: string): Promise<string[]> {
  const entries = await readdir(table, { recursive: true })
  return entries
    .filter((f) => !f.startsWith('_delta_log') && (f.endsWith('.parquet') || f.endsWith('.bin')))
    .sort()
}

/** The table's version, row count, id sum and amount sum, read through the library. */
async function tableState(location: string): Promise<Record<string, bigint | number>> {
  const table = await DeltaTable.open(location)
  const instance = await DuckDBInstance.create(':memory:')
  const con = await instance.connect()
  try {
    const view = await createSnapshotView(con, table, { name: 't' })
    try {
      const [[rows, ids, amounts]] = (
        await con.runAndReadAll('SELECT count(*), sum(id), sum(amount) FROM t')
      ).getRows() as [[bigint, bigint, number]]
      return { version: view.version, rows: BigInt(rows), ids: BigInt(ids), amounts: Number(amounts) }
    } finally {
      await view.release()
    }
  } finally {
    con.closeSync()
    instance.closeSync()
    await table.close()
  }
}

/**
 * Runs the CLI, sends `signal` as soon as a data or DV file not among `before` appears, and
 * returns the run.
 */
async function stopOnceStaged(
  args: readonly string[],
  table: string,
  signal: NodeJS.Signals,
): Promise<{ run: Run; seen: number }> {
  const before = new Set(await storedFiles(table))
  const { child, done } = startCli(args)
  let seen = 0
  const deadline = Date.now() + 60_000
  while (seen === 0 && Date.now() < deadline && child.exitCode === null) {
    await new Promise((r) => setTimeout(r, 10))
    seen = (await storedFiles(table)).filter((f) => !before.has(f)).length
  }
  child.kill(signal)
  return { run: await done, seen }
}

describe('CLI MERGE and UPDATE stopped by a signal', () => {
  let work: string
  let table: string
  let source: string
  let state: Record<string, bigint | number>
  let files: string[]

  before(async () => {
    await buildCli()
    work = await mkdtemp(join(tmpdir(), 'delta-rlc-cli-interrupt-'))
    table = join(work, 't')
    const base = join(work, 'base.parquet')
    source = join(work, 'source.parquet')
    const instance = await DuckDBInstance.create(':memory:')
    const con = await instance.connect()
    try {
      await con.run(
        `COPY (SELECT i AS id, i % 40 AS p, i * 1.5 AS amount FROM range(1, ${TABLE_ROWS + 1}) t(i)) TO '${base}'`,
      )
      // Half the source matches target rows (updates), half is new (inserts).
      const first = TABLE_ROWS - SOURCE_ROWS / 2 + 1
      await con.run(
        `COPY (SELECT i AS id, i % 40 AS p, i * 2.5 AS amount FROM range(${first}, ${first + SOURCE_ROWS}) t(i)) TO '${source}'`,
      )
    } finally {
      con.closeSync()
      instance.closeSync()
    }
    // Copy-on-write: an UPDATE or MERGE rewrites every partition file it touches.
    const r = await startCli([
      'create',
      table,
      '--from',
      base,
      '--partition-by',
      'p',
      '--no-deletion-vectors',
    ]).done
    assert.equal(r.code, 0, r.stderr)
    state = await tableState(table)
    files = await storedFiles(table)
    assert.equal(state.rows, BigInt(TABLE_ROWS))
  })

  after(async () => {
    if (work) await rm(work, { recursive: true, force: true })
  })

  it('a MERGE of a 200,000-row source stopped by SIGINT after staging files exits 130, removes them and commits nothing', async () => {
    const { run, seen } = await stopOnceStaged(
      ['merge', table, source, '--on', 'target.id = source.id'],
      table,
      'SIGINT',
    )
    assert.ok(seen > 0, `the MERGE staged no file before it ended: ${run.stderr}`)
    assert.equal(run.code, 130, run.stderr)
    assert.match(
      run.stderr,
      /error\[DELTA_INTERRUPTED\]: Interrupted by SIGINT: removed [1-9]\d* staged data files?; nothing was committed/,
    )
    assert.equal(run.stdout, '')
    assert.deepEqual(await storedFiles(table), files)
    assert.deepEqual(await tableState(table), state)
  })

  it('an UPDATE of every row of a 250,000-row table stopped by SIGTERM after staging files exits 143, removes them and commits nothing', async () => {
    const { run, seen } = await stopOnceStaged(
      ['update', table, '--set', 'amount = amount + 1'],
      table,
      'SIGTERM',
    )
    assert.ok(seen > 0, `the UPDATE staged no file before it ended: ${run.stderr}`)
    assert.equal(run.code, 143, run.stderr)
    assert.match(
      run.stderr,
      /error\[DELTA_INTERRUPTED\]: Interrupted by SIGTERM: removed [1-9]\d* staged data files?; nothing was committed/,
    )
    assert.deepEqual(await storedFiles(table), files)
    assert.deepEqual(await tableState(table), state)
  })
})
