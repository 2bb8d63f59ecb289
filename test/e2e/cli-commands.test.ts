/**
 * The `delta-rlc` command on real tables in temp dirs: every command, its JSON output, its exit
 * codes and its error reports. Commands run in this process (`runCliInProcess`, the same `runCli`
 * the binary calls); what belongs to the process itself -- the exit status the built binary ends
 * with, what it prints on stdout and stderr off a terminal -- is checked on the built CLI in
 * `dist/`, run as a subprocess (the create-and-scan round trip, every exit status and error report
 * of the table of cases, the main help, the table output off a terminal).
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { DuckDBInstance } from '@duckdb/node-api'
import { parse } from 'lossless-json'
import { buildCli, CLI, REPO_ROOT } from '../helpers/cli-build.js'
import { runCliInProcess } from '../helpers/cli-in-process.js'
import { GOLDEN_DIR, GOLDEN_SKIP } from '../helpers/golden.js'

const repoRoot = REPO_ROOT

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs the built CLI as a subprocess and waits for it. */
function binary(args: readonly string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: repoRoot,
      env: { ...process.env, NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => {
      stdout += d
    })
    child.stderr.on('data', (d) => {
      stderr += d
    })
    child.on('error', reject)
    child.on('close', (code) => resolveRun({ code: code ?? -1, stdout, stderr }))
  })
}

/** Runs the CLI in this process. */
function cli(args: readonly string[]): Promise<Run> {
  return runCliInProcess(args)
}

/** Runs the CLI with `--json` and parses stdout exactly (longs stay exact). */
async function cliJson(args: readonly string[], run = cli): Promise<Record<string, unknown>> {
  const r = await run([...args, '--json'])
  assert.equal(r.code, 0, `delta-rlc ${args.join(' ')} failed:\n${r.stderr}`)
  return parseExact(r.stdout) as Record<string, unknown>
}

function parseExact(text: string): unknown {
  return parse(text, null, (v: string) => (/^-?\d+$/.test(v) ? BigInt(v) : Number(v)))
}

function ids(rows: unknown): bigint[] {
  return (rows as Array<{ id: bigint }>).map((r) => r.id).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
}

let work: string

before(async () => {
  await buildCli()
  work = await mkdtemp(join(tmpdir(), 'delta-rlc-cli-'))
})

after(async () => {
  if (work) await rm(work, { recursive: true, force: true })
})

describe('delta-rlc create and append', () => {
  it('infers the schema from JSON lines and keeps longs beyond 2^53 exact', async () => {
    const input = join(work, 'people.jsonl')
    await writeFile(
      input,
      [
        '{"id":9007199254740993,"name":"ada","score":1.5,"born":"1815-12-10","tags":["x","y"],"addr":{"city":"London","zip":1}}',
        '{"id":2,"name":null,"score":2,"born":"1906-12-09","tags":[],"addr":{"city":"NYC","zip":2}}',
      ].join('\n'),
    )
    const table = join(work, 'people')
    // The built binary: its JSON on stdout and exit status 0.
    const created = await cliJson(['create', table, '--from', input], binary)
    assert.equal(created.version, 1n)
    assert.equal(created.rowsAppended, 2n)
    const desc = await cliJson(['describe', table])
    const fields = (desc.schema as { fields: Array<{ name: string; type: unknown }> }).fields
    assert.deepEqual(
      fields.map((f) => [f.name, typeof f.type === 'string' ? f.type : (f.type as { type: string }).type]),
      [
        ['id', 'long'],
        ['name', 'string'],
        ['score', 'double'],
        ['born', 'date'],
        ['tags', 'array'],
        ['addr', 'struct'],
      ],
    )
    assert.deepEqual(desc.protocol, {
      minReaderVersion: 3n,
      minWriterVersion: 7n,
      readerFeatures: ['deletionVectors'],
      writerFeatures: ['deletionVectors'],
    })
    const scan = await cliJson(['scan', table], binary)
    assert.deepEqual(ids(scan.rows), [2n, 9007199254740993n])
    const ada = (scan.rows as Array<Record<string, unknown>>).find((r) => r.name === 'ada')
    assert.deepEqual(ada, {
      id: 9007199254740993n,
      name: 'ada',
      score: 1.5,
      born: '1815-12-10',
      tags: ['x', 'y'],
      addr: { city: 'London', zip: 1n },
    })
  })

  it('creates a partitioned table from DDL and appends CSV and Parquet in one commit each', async () => {
    const table = join(work, 'sales')
    const created = await cli([
      'create',
      table,
      '--schema',
      'id long not null, region string, amount decimal(10,2), day date',
      '--partition-by',
      'region',
      '--property',
      'delta.checkpointInterval=100',
    ])
    assert.equal(created.code, 0, created.stderr)
    assert.match(created.stdout, /created table .*sales \(version 0\)/)
    const csv = join(work, 'sales.csv')
    await writeFile(
      csv,
      'id,region,amount,day\n1,eu,10.50,2024-01-01\n2,us,3.25,2024-01-02\n3,eu,7.00,2024-01-03\n',
    )
    const parquet = join(work, 'sales.parquet')
    const duck = await DuckDBInstance.create(':memory:')
    const con = await duck.connect()
    await con.run(
      `COPY (SELECT (100 + i)::BIGINT AS id, CASE WHEN i % 2 = 0 THEN 'eu' ELSE 'us' END AS region, (i * 1.5)::DECIMAL(10,2) AS amount, DATE '2024-02-01' + i::INTEGER AS day FROM range(10) r(i)) TO '${parquet}' (FORMAT parquet)`,
    )
    con.closeSync()
    duck.closeSync()
    const a1 = await cliJson(['append', table, csv, '--batch-rows', '2'])
    assert.equal(a1.version, 1n)
    assert.equal(a1.inputRows, 3n)
    // Two batches of one transaction: one version, files from both.
    assert.equal((a1.metrics as Record<string, bigint>).numOutputRows, 3n)
    const a2 = await cliJson(['append', table, parquet])
    assert.equal(a2.version, 2n)
    const eu = await cliJson(['scan', table, '--where', "region = 'eu'", '--columns', 'id,amount'])
    assert.deepEqual(eu.columns, ['id', 'amount'])
    assert.deepEqual(ids(eu.rows), [1n, 3n, 100n, 102n, 104n, 106n, 108n])
    const one = (eu.rows as Array<Record<string, unknown>>).find((r) => r.id === 1n)
    assert.deepEqual(one, { id: 1n, amount: '10.50' })
    const desc = await cliJson(['describe', table])
    assert.deepEqual(desc.partitionColumns, ['region'])
    assert.equal(desc.rows, 13n)
    assert.equal((desc.properties as Record<string, string>)['delta.checkpointInterval'], '100')
  })

  it('refuses input columns the table does not have, and commits nothing', async () => {
    const table = join(work, 'strict')
    assert.equal((await cli(['create', table, '--schema', 'id long'])).code, 0)
    const bad = join(work, 'bad.jsonl')
    await writeFile(bad, '{"id":1,"extra":"x"}\n')
    const r = await cli(['append', table, bad])
    assert.equal(r.code, 3)
    assert.match(
      r.stderr,
      /^error\[DELTA_INVALID_ARGUMENT\]: Input column 'extra' is not a column of the table/m,
    )
    assert.match(r.stderr, /^hint: The table has: id/m)
    const h = await cliJson(['history', table])
    assert.equal((h.history as unknown[]).length, 1)
  })
})

describe('delta-rlc DML, time travel and maintenance', () => {
  let table: string
  before(async () => {
    table = join(work, 'orders')
    const input = join(work, 'orders.jsonl')
    await writeFile(
      input,
      Array.from({ length: 20 }, (_, i) => JSON.stringify({ id: i, customer: `c${i % 4}`, qty: i })).join(
        '\n',
      ),
    )
    const r = await cli(['create', table, '--from', input])
    assert.equal(r.code, 0, r.stderr)
  })

  it('deletes with a deletion vector and reports the DV share', async () => {
    const del = await cliJson(['delete', table, '--where', "customer = 'c1'", '--conflicts', 'all'])
    assert.equal(del.operation, 'DELETE')
    assert.equal((del.metrics as Record<string, bigint>).numDeletedRows, 5n)
    assert.equal((del.metrics as Record<string, bigint>).numDeletionVectorsAdded, 1n)
    const desc = await cliJson(['describe', table])
    assert.equal(desc.rows, 15n)
    assert.equal(desc.rowsDeletedByDeletionVectors, 5n)
    assert.equal(desc.deletedRowShare, 0.25)
    const human = await cli(['describe', table])
    assert.match(human.stdout, /deleted by DVs\s+5 \(25\.00%\) in 1 file/)
  })

  it('updates with --set and merges a file with conditional clauses', async () => {
    // id 1 is gone (customer c1 was deleted): ids 0 and 2 are updated.
    const up = await cliJson(['update', table, '--set', 'qty = qty * 10', '--where', 'id < 3'])
    assert.equal((up.metrics as Record<string, bigint>).numUpdatedRows, 2n)
    const source = join(work, 'changes.csv')
    await writeFile(source, 'id,customer,qty,op\n0,c0,1000,U\n2,c2,0,D\n100,c9,7,I\n')
    const merged = await cliJson([
      'merge',
      table,
      source,
      '--on',
      'target.id = source.id',
      '--when-matched',
      "and source.op = 'D' then delete",
      '--when-matched',
      'update set qty = source.qty',
      '--when-not-matched',
      'insert set id = source.id, customer = source.customer, qty = source.qty',
    ])
    assert.equal(merged.operation, 'MERGE')
    const rows = (await cliJson(['scan', table, '--where', 'id IN (0, 1, 2, 100)'])).rows as Array<
      Record<string, unknown>
    >
    const byId = new Map(rows.map((r) => [r.id, r.qty]))
    assert.deepEqual(
      [...byId.entries()].sort((a, b) => Number(a[0]) - Number(b[0])),
      [
        [0n, 1000n],
        [100n, 7n],
      ],
    )
  })

  it('reads old versions with --version and --timestamp, and lists the history newest first', async () => {
    const v1 = await cliJson(['scan', table, '--version', '1'])
    assert.equal((v1.rows as unknown[]).length, 20)
    assert.equal(v1.version, 1n)
    const hist = await cliJson(['history', table])
    const ops = (hist.history as Array<{ version: bigint; operation: string; timestamp: string }>).map(
      (h) => [h.version, h.operation],
    )
    assert.deepEqual(ops, [
      [4n, 'MERGE'],
      [3n, 'UPDATE'],
      [2n, 'DELETE'],
      [1n, 'WRITE'],
      [0n, 'CREATE TABLE'],
    ])
    // Between two commits made by separate processes, whichever clock dates them.
    const t = (v: bigint) =>
      Date.parse(
        (hist.history as Array<{ version: bigint; timestamp: string }>).find((h) => h.version === v)!
          .timestamp,
      )
    const between = new Date((t(3n) + t(4n)) / 2).toISOString()
    const byTime = await cliJson(['scan', table, '--timestamp', between, '--limit', '3'])
    assert.equal(byTime.version, 3n)
    assert.equal((byTime.rows as unknown[]).length, 3)
    const early = await cli(['scan', table, '--timestamp', '2000-01-01T00:00:00Z'])
    assert.equal(early.code, 3)
    assert.match(early.stderr, /^error\[DELTA_VERSION_NOT_FOUND\]/)
    const limited = await cli(['history', table, '--limit', '2'])
    assert.equal(limited.stdout.trim().split('\n').length, 4)
  })

  it('runs a DuckDB query over the live rows only', async () => {
    const q = await cliJson(['sql', table, 'SELECT count(*) AS n, sum(qty) AS total FROM t'])
    const live = (await cliJson(['scan', table])).rows as Array<{ qty: bigint }>
    assert.deepEqual(q.rows, [{ n: BigInt(live.length), total: live.reduce((s, r) => s + r.qty, 0n) }])
    const old = await cliJson(['sql', table, 'SELECT count(*) AS n FROM t', '--version', '1'])
    assert.deepEqual(old.rows, [{ n: 20n }])
    const csv = await cli([
      'sql',
      table,
      "SELECT customer, count(*) AS n FROM t WHERE customer = 'c0' GROUP BY 1",
      '--format',
      'csv',
    ])
    assert.equal(csv.stdout, 'customer,n\nc0,5\n')
    const bad = await cli(['sql', table, 'SELECT nope FROM t'])
    assert.equal(bad.code, 3)
    assert.match(bad.stderr, /error\[DELTA_INVALID_ARGUMENT\]: DuckDB rejected the query/)
  })

  it('creates tables with deletion vectors unless --no-deletion-vectors opts out', async () => {
    for (const [name, flags, expected] of [
      ['dv-default', [], 'true'],
      ['dv-off', ['--no-deletion-vectors'], 'false'],
    ] as const) {
      const t = join(work, name)
      const created = await cli(['create', t, '--schema', 'id long', ...flags])
      assert.equal(created.code, 0, created.stderr)
      const described = await cliJson(['describe', t])
      const properties = described.properties as Record<string, string>
      assert.equal(properties['delta.enableDeletionVectors'], expected, name)
      const features = (described.protocol as { writerFeatures?: string[] }).writerFeatures ?? []
      assert.equal(features.includes('deletionVectors'), expected === 'true', name)
    }
  })

  it('writes timestamps in sql output as show writes them', async () => {
    const stamped = join(work, 'stamped')
    const created = await cli(['create', stamped, '--schema', 'at timestamp, wall timestamp_ntz'])
    assert.equal(created.code, 0, created.stderr)
    const csv = join(work, 'stamped.csv')
    await writeFile(csv, 'at,wall\n2024-01-02T03:04:05.123456Z,1969-12-31 23:59:59.5\n')
    const appended = await cli(['append', stamped, csv])
    assert.equal(appended.code, 0, appended.stderr)
    const expected = [{ at: '2024-01-02T03:04:05.123456Z', wall: '1969-12-31T23:59:59.500000' }]
    assert.deepEqual((await cliJson(['scan', stamped])).rows, expected)
    assert.deepEqual((await cliJson(['sql', stamped, 'SELECT "at", wall FROM t'])).rows, expected)
    const table = await cli(['sql', stamped, 'SELECT "at", wall FROM t'])
    assert.match(table.stdout, /2024-01-02T03:04:05\.123456Z\s+1969-12-31T23:59:59\.500000/)
  })

  it('compacts, checkpoints and vacuums', async () => {
    const before = await cliJson(['describe', table])
    const opt = await cliJson(['optimize', table, '--target-size', '64MB'])
    assert.equal(opt.operation, 'OPTIMIZE')
    assert.equal(opt.filesAfter, 1n)
    const after = await cliJson(['describe', table])
    assert.equal(after.rows, before.rows)
    assert.equal(after.rowsDeletedByDeletionVectors, 0n)
    const cp = await cliJson(['checkpoint', table])
    assert.equal(cp.version, opt.version)
    assert.ok(
      (await readdir(join(table, '_delta_log'))).includes(
        `${String(cp.version).padStart(20, '0')}.checkpoint.parquet`,
      ),
    )
    const dry = await cliJson(['vacuum', table, '--retention-hours', '0', '--force', '--dry-run'])
    assert.equal(dry.dryRun, true)
    assert.ok((dry.files as string[]).length > 0)
    const refused = await cli(['vacuum', table, '--retention-hours', '0'])
    assert.equal(refused.code, 3)
    const done = await cliJson(['vacuum', table, '--retention-hours', '0', '--force'])
    assert.deepEqual(done.files, dry.files)
    const rows = await cliJson(['scan', table])
    assert.equal(BigInt((rows.rows as unknown[]).length), after.rows)
  })
})

describe('delta-rlc output formats', () => {
  let table: string
  before(async () => {
    table = join(work, 'fmt')
    const input = join(work, 'fmt.jsonl')
    await writeFile(input, '{"id":1,"note":"a, \\"quoted\\" note"}\n{"id":22,"note":null}\n')
    assert.equal((await cli(['create', table, '--from', input])).code, 0)
  })

  it('prints an aligned table without escape codes off a terminal', async () => {
    // The built binary with stdout a pipe and NO_COLOR unset: no colours all the same.
    const r = await binary(['show', table], { NO_COLOR: '' })
    assert.equal(r.code, 0)
    assert.doesNotMatch(r.stdout, /\u001b\[/)
    const lines = r.stdout.trimEnd().split('\n')
    assert.deepEqual(lines.slice(0, 4), [
      'id  note',
      '--  ----------------',
      ' 1  a, "quoted" note',
      '22  NULL',
    ])
    assert.equal(lines[4], '(2 rows, version 1)')
  })

  it('prints RFC 4180 CSV and JSON lines', async () => {
    const csv = await cli(['scan', table, '--format', 'csv'])
    assert.equal(csv.stdout, 'id,note\n1,"a, ""quoted"" note"\n22,\n')
    const jl = await cli(['scan', table, '--format', 'json'])
    assert.deepEqual(
      jl.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
      [
        { id: 1, note: 'a, "quoted" note' },
        { id: 22, note: null },
      ],
    )
  })
})

describe('delta-rlc errors and exit codes', () => {
  // `binary`: the case runs on the built CLI, so that each exit status the process ends with is
  // seen once; the rest are the same `runCli` in this process.
  const cases: Array<{ name: string; args: string[]; code: number; stderr: RegExp; binary?: true }> = [
    { name: 'no command', args: [], code: 1, stderr: /^$/, binary: true },
    {
      name: 'unknown command',
      args: ['frobnicate'],
      code: 1,
      stderr: /error\[DELTA_INVALID_ARGUMENT\]: Unknown command 'frobnicate'/,
    },
    {
      name: 'unknown option',
      args: ['scan', 'x', '--bogus'],
      code: 1,
      stderr: /Unknown option '--bogus'\n.*\nusage: delta-rlc scan <table>/,
      binary: true,
    },
    { name: 'missing argument', args: ['scan'], code: 1, stderr: /'scan' takes 1 argument/ },
    { name: 'delete without --where', args: ['delete', 'x'], code: 1, stderr: /delete needs --where/ },
    {
      name: 'bad size',
      args: ['optimize', 'x', '--target-size', 'huge'],
      code: 1,
      stderr: /--target-size needs a size/,
    },
    {
      name: 'bad --format',
      args: ['scan', 'x', '--format', 'xml'],
      code: 1,
      stderr: /--format must be table, json or csv/,
    },
    {
      name: 'missing table',
      args: ['describe', '/nonexistent/delta-rlc-table'],
      code: 3,
      stderr: /^error\[DELTA_TABLE_NOT_FOUND\]: No Delta table at .*\nhint: Check the location/,
      binary: true,
    },
  ]
  for (const c of cases) {
    it(`exits ${c.code} for ${c.name}`, async () => {
      const r = await (c.binary ? binary : cli)(c.args)
      assert.equal(r.code, c.code, r.stderr)
      assert.match(r.stderr, c.stderr)
    })
  }

  it('reports a bad predicate with its position, and as JSON on stderr with --json', async () => {
    const table = join(work, 'err')
    assert.equal((await cli(['create', table, '--schema', 'id long'])).code, 0)
    const r = await cli(['delete', table, '--where', 'id = = 1'])
    // A predicate that does not parse is a malformed argument.
    assert.equal(r.code, 1)
    assert.match(r.stderr, /^error\[DELTA_INVALID_PREDICATE\]: .*\n {2}id = = 1\n {7}\^/)
    const j = await cli(['delete', table, '--where', 'nope = 1', '--json'])
    assert.equal(j.code, 3)
    assert.equal(j.stdout, '')
    const err = JSON.parse(j.stderr) as { error: Record<string, unknown> }
    assert.equal(err.error.code, 'DELTA_INVALID_ARGUMENT')
    assert.equal(err.error.exitCode, 3)
    assert.match(String(err.error.message), /Unknown column 'nope'/)
    assert.match(String(err.error.hint), /The table has: id/)
  })

  it('prints the cause chain with --verbose', async () => {
    const table = join(work, 'verbose')
    assert.equal((await cli(['create', table, '--schema', 'id long'])).code, 0)
    const bad = join(work, 'broken.parquet')
    await writeFile(bad, 'not parquet at all')
    const quiet = await cli(['append', table, bad])
    assert.equal(quiet.code, 3)
    assert.doesNotMatch(quiet.stderr, /caused by/)
    const loud = await cli(['append', table, bad, '--verbose'])
    assert.match(loud.stderr, /^error\[DELTA_INVALID_ARGUMENT\]: DuckDB cannot read/m)
    assert.match(loud.stderr, /^caused by: .*Error: /m)
  })

  it('rejects an unknown --conflicts flag as a usage error (exit 1) with the list of valid keys', async () => {
    const r = await cli(['delete', join(work, 'verbose'), '--where', 'id = 1', '--conflicts', 'rowLevel'])
    assert.equal(r.code, 1)
    assert.match(r.stderr, /Unknown --conflicts flag 'rowLevel'/)
    assert.match(r.stderr, /hint: Use all, none, or a comma list of flag keys .*rowLevelConcurrency\.enabled/)
  })
})

describe('delta-rlc --help', () => {
  const commands = [
    'create',
    'append',
    'delete',
    'update',
    'merge',
    'optimize',
    'vacuum',
    'history',
    'scan',
    'show',
    'describe',
    'checkpoint',
    'sql',
    'race',
    'demo',
  ]
  it('lists every command in the main help', async () => {
    const r = await binary(['--help'])
    assert.equal(r.code, 0)
    for (const c of commands.filter((c) => c !== 'show'))
      assert.match(r.stdout, new RegExp(`^  ${c}\\b`, 'm'))
  })
  for (const c of commands) {
    it(`prints the usage of ${c} and exits 0`, async () => {
      const r = await cli([c, '--help'])
      assert.equal(r.code, 0)
      assert.match(r.stdout, new RegExp(`^usage: delta-rlc ${c === 'show' ? 'scan' : c} `))
      assert.match(r.stdout, /--json/)
    })
  }
})

describe('delta-rlc demo', () => {
  it('shows file-level Delta aborting where row-level reconciliation commits every writer', async () => {
    const r = await cliJson(['demo', '--writers', '3', '--rows', '3000'])
    const runs = r.runs as Array<Record<string, unknown>>
    assert.deepEqual(
      runs.map((x) => [x.checking, x.committed, x.aborted, x.liveRows]),
      [
        ['file-level', 1n, 2n, 2997n],
        ['row-level', 3n, 0n, 2991n],
      ],
    )
  })
})

describe('delta-rlc race', () => {
  it('races writer processes on a new table and passes the verifier', async () => {
    const dir = join(work, 'race')
    const report = await cliJson([
      'race',
      dir,
      '--duration',
      '2',
      '--rows',
      '1000',
      '--writers',
      'delete=2,append=1',
      '--seed',
      '7',
    ])
    assert.equal(report.ok, true)
    const run = (report.runs as Array<Record<string, unknown>>)[0] as Record<string, unknown>
    assert.equal((run.verify as { ok: boolean }).ok, true)
    assert.ok(existsSync(join(`${dir}.race`, 'report.html')))
    const again = await cli(['race', dir, '--verify-events', String(run.eventsPath)])
    assert.equal(again.code, 0, again.stderr)
    assert.match(again.stdout, /^PASS: \d+ committed operations replayed/)
  })

  it('rejects an unknown writer kind as a usage error (exit status 1) before creating anything', async () => {
    const r = await cli(['race', join(work, 'race-bad'), '--writers', 'teleport=1'])
    assert.equal(r.code, 1)
    assert.match(r.stderr, /Unknown writer kind 'teleport'/)
    assert.equal(existsSync(join(work, 'race-bad')), false)
  })
})

describe('delta-rlc on Spark-written tables', { skip: GOLDEN_SKIP }, () => {
  const golden = (name: string) => join(GOLDEN_DIR as string, name)

  it('describes a partitioned DV table with its checkpoint, features and DV share', async () => {
    const d = await cliJson(['describe', golden('dv-partitioned-with-checkpoint')])
    assert.equal(d.version, 15n)
    assert.equal(d.rows, 35n)
    assert.equal(d.files, 15n)
    assert.equal(d.rowsDeletedByDeletionVectors, 2n)
    assert.deepEqual(d.partitionColumns, ['part'])
    assert.ok(((d.protocol as { readerFeatures: string[] }).readerFeatures ?? []).includes('deletionVectors'))
  })

  it('queries live rows with SQL, also under column mapping', async () => {
    for (const [table, sql, n] of [
      ['dv-partitioned-with-checkpoint', 'SELECT count(*) AS n FROM t WHERE part >= 7', 12n],
      ['dv-partitioned-with-checkpoint', 'SELECT count(*) AS n FROM t', 35n],
      ['dv-with-columnmapping', 'SELECT count(*) AS n FROM t WHERE part = 0', 2n],
    ] as const) {
      const r = await cliJson(['sql', golden(table), sql])
      assert.deepEqual(r.rows, [{ n }], `${table}: ${sql}`)
    }
    const cm = await cliJson([
      'sql',
      golden('dv-with-columnmapping'),
      'SELECT part, col1, col2 FROM t ORDER BY col1 LIMIT 1',
    ])
    assert.deepEqual(cm.columns, ['part', 'col1', 'col2'])
  })

  it('scans an old version of a Spark table', async () => {
    const r = await cliJson(['scan', golden('dv-partitioned-with-checkpoint'), '--version', '0'])
    assert.equal((r.rows as unknown[]).length, 50)
  })
})
