/**
 * The CLI's `append` at real input sizes: a million-row input lands whole, and one whose last
 * row holds a bad value (CSV and JSON lines) or that is stopped by SIGINT commits nothing and
 * leaves no staged data file behind. DuckDB used to end its result stream early on a bad value
 * deep in a file without an error, which committed a prefix of the input.
 *
 * One table serves every test, in order: its version and rows must stay those of the good
 * append through every failure after it.
 */
import assert from 'node:assert/strict'
import { mkdtemp, readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { DuckDBInstance } from '@duckdb/node-api'
import { DeltaTable } from '../../src/index.js'
import { createSnapshotView } from '../../src/subpaths/duckdb.js'
import { buildCli, type CliRun, startCli } from '../helpers/cli-build.js'

const ROWS = 1_000_000

type Run = CliRun

function cli(args: readonly string[]): Promise<Run> {
  return startCli(args).done
}

/** Whether the process has `path` open (Linux: its descriptors under /proc). */
async function holdsOpen(pid: number, path: string): Promise<boolean> {
  try {
    const fds = await readdir(`/proc/${pid}/fd`)
    const targets = await Promise.all(fds.map((fd) => readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')))
    return targets.includes(path)
  } catch {
    return false
  }
}

async function dataFiles(table: string): Promise<string[]> {
  return (await readdir(table)).filter((f) => f.endsWith('.parquet')).sort()
}

/** The table's version, row count and sum of ids, read through the library. */
async function tableState(location: string): Promise<{ version: bigint; rows: bigint; idSum: bigint }> {
  const table = await DeltaTable.open(location)
  const instance = await DuckDBInstance.create(':memory:')
  const con = await instance.connect()
  try {
    const view = await createSnapshotView(con, table, { name: 't' })
    try {
      const [[rows, idSum]] = (
        await con.runAndReadAll('SELECT count(*), coalesce(sum(id), 0) FROM t')
      ).getRows() as [[bigint, bigint]]
      return { version: view.version, rows: BigInt(rows), idSum: BigInt(idSum) }
    } finally {
      await view.release()
    }
  } finally {
    con.closeSync()
    instance.closeSync()
    await table.close()
  }
}

describe('CLI append of million-row inputs', () => {
  let work: string
  let table: string
  let goodCsv: string
  let badCsv: string
  let badJson: string

  before(async () => {
    await buildCli()
    work = await mkdtemp(join(tmpdir(), 'delta-rlc-cli-input-'))
    table = join(work, 't')
    goodCsv = join(work, 'good.csv')
    badCsv = join(work, 'bad.csv')
    badJson = join(work, 'bad.jsonl')
    const instance = await DuckDBInstance.create(':memory:')
    const con = await instance.connect()
    try {
      await con.run(
        `COPY (SELECT i AS id, i * 1.5 AS amount FROM range(1, ${ROWS + 1}) t(i)) TO '${goodCsv}' (HEADER)`,
      )
      await con.run(
        `COPY (SELECT i AS id, i * 1.5 AS amount FROM range(1, ${ROWS}) t(i)) TO '${badJson}' (FORMAT json)`,
      )
    } finally {
      con.closeSync()
      instance.closeSync()
    }
    // The bad files are the good ones with a last row whose amount is not a number.
    const csv = await readFile(goodCsv, 'utf8')
    await writeFile(badCsv, `${csv.slice(0, csv.lastIndexOf('\n', csv.length - 2) + 1)}${ROWS},abc\n`)
    await writeFile(badJson, `{"id":${ROWS},"amount":"abc"}\n`, { flag: 'a' })
    const created = await cli(['create', table, '--schema', 'id long, amount double'])
    assert.equal(created.code, 0, created.stderr)
  })

  after(async () => {
    if (work) await rm(work, { recursive: true, force: true })
  })

  const expected = { version: 1n, rows: BigInt(ROWS), idSum: (BigInt(ROWS) * BigInt(ROWS + 1)) / 2n }

  it('appends a good 1,000,000-row CSV exactly', async () => {
    const r = await cli(['append', table, goodCsv, '--json'])
    assert.equal(r.code, 0, r.stderr)
    assert.match(r.stdout, /"numOutputRows": 1000000/)
    assert.deepEqual(await tableState(table), expected)
  })

  it('refuses a 1,000,000-row CSV whose last row has a bad value, naming its line and column', async () => {
    const files = await dataFiles(table)
    const r = await cli(['append', table, badCsv])
    assert.equal(r.code, 3, r.stderr)
    assert.match(r.stderr, /DELTA_INVALID_ARGUMENT/)
    assert.match(r.stderr, /line 1000001 \(row 1000000\), column 'amount'/)
    assert.match(r.stderr, /'abc' is not a double/)
    assert.deepEqual(await tableState(table), expected)
    assert.deepEqual(await dataFiles(table), files)
  })

  it('refuses a 1,000,000-line JSON lines file whose last line has a bad value, naming its line and column', async () => {
    const files = await dataFiles(table)
    const r = await cli(['append', table, badJson])
    assert.equal(r.code, 3, r.stderr)
    assert.match(r.stderr, /DELTA_INVALID_ARGUMENT/)
    assert.match(r.stderr, /line 1000000 \(row 1000000\), column 'amount'/)
    assert.deepEqual(await tableState(table), expected)
    assert.deepEqual(await dataFiles(table), files)
  })

  it('create --from a 1,000,000-row CSV whose last row has a bad value creates no table', async () => {
    const location = join(work, 'never')
    const r = await cli(['create', location, '--from', badCsv])
    assert.equal(r.code, 3, r.stderr)
    assert.match(r.stderr, /line 1000001 \(row 1000000\), column 'amount'/)
    await assert.rejects(readdir(location), { code: 'ENOENT' })
  })

  it('stops on SIGINT while the input is read into its one write: exit 130, nothing committed, no file left', async () => {
    const files = await dataFiles(table)
    const { child, done } = startCli(['append', table, goodCsv, '--batch-rows', '50000'])
    // The whole input is one write that stores its files only at its end, so the signal is sent
    // while the process reads the input: DuckDB holds the file open while it reads it, for
    // seconds, where a first look at its columns holds it a moment.
    let reading = false
    let openSince: number | undefined
    const deadline = Date.now() + 60_000
    while (!reading && Date.now() < deadline && child.exitCode === null) {
      await new Promise((r) => setTimeout(r, 25))
      const open = await holdsOpen(child.pid as number, goodCsv)
      openSince = open ? (openSince ?? Date.now()) : undefined
      reading = openSince !== undefined && Date.now() - openSince >= 300
    }
    assert.ok(reading, 'the append ended before it was seen reading its input')
    child.kill('SIGINT')
    const r = await done
    assert.equal(r.code, 130, r.stderr)
    assert.match(
      r.stderr,
      /DELTA_INTERRUPTED\]: Interrupted by SIGINT: removed \d+ staged data files?; nothing was committed/,
    )
    assert.deepEqual(await dataFiles(table), files)
    assert.deepEqual(await tableState(table), expected)
  })
})
