/**
 * How `append`, `create --from` and `merge` take their input: standard input as `-`, a choice of
 * input columns, zone-less CSV times, and the messages for an empty input or a table path that
 * is a file; and `history --json`, which keeps what the terminal view shortens. Commands run
 * in-process through `runCli` (`runCliInProcess`) on real tables in a temp directory.
 */
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { DeltaTable } from '../../src/index.js'
import { runCliInProcess as cli } from '../helpers/cli-in-process.js'

/** The rows of a table as `show --format json` prints them, one object per row, sorted by id. */
async function rowsOf(table: string): Promise<Array<Record<string, unknown>>> {
  const r = await cli(['show', table, '--format', 'json'])
  assert.equal(r.code, 0, r.stderr)
  return r.stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .sort((a, b) => Number(a.id) - Number(b.id))
}

async function versionOf(table: string): Promise<bigint> {
  const t = await DeltaTable.open(table)
  try {
    return (await t.snapshot()).version
  } finally {
    await t.close()
  }
}

let dir: string
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'delta-rlc-cli-input-'))
})
after(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('standard input', () => {
  it('append t - --format csv appends the rows piped in', async () => {
    const table = join(dir, 'stdin-append')
    assert.equal((await cli(['create', table, '--schema', 'id long, name string'])).code, 0)
    const r = await cli(['append', table, '-', '--format', 'csv'], 'id,name\n1,a\n2,b\n')
    assert.equal(r.code, 0, r.stderr)
    assert.deepEqual(await rowsOf(table), [
      { id: 1, name: 'a' },
      { id: 2, name: 'b' },
    ])
  })

  it('append t - without --format is a usage error that reads nothing', async () => {
    const table = join(dir, 'stdin-no-format')
    assert.equal((await cli(['create', table, '--schema', 'id long'])).code, 0)
    const r = await cli(['append', table, '-'], 'id\n1\n')
    assert.equal(r.code, 1)
    assert.match(r.stderr, /Reading standard input \('-'\) needs --format json, csv or parquet/)
    assert.equal(await versionOf(table), 0n)
  })

  it('create --from - --format json infers the schema from standard input', async () => {
    const table = join(dir, 'stdin-create')
    const r = await cli(
      ['create', table, '--from', '-', '--format', 'json', '--json'],
      '{"id": 7, "name": "x"}\n{"id": 8, "name": "y"}\n',
    )
    assert.equal(r.code, 0, r.stderr)
    assert.deepEqual(await rowsOf(table), [
      { id: 7, name: 'x' },
      { id: 8, name: 'y' },
    ])
  })

  it('merge t - upserts the source rows piped in', async () => {
    const table = join(dir, 'stdin-merge')
    assert.equal((await cli(['create', table, '--schema', 'id long, name string'])).code, 0)
    assert.equal((await cli(['append', table, '-', '--format', 'csv'], 'id,name\n1,a\n2,b\n')).code, 0)
    const r = await cli(
      ['merge', table, '-', '--format', 'csv', '--on', 'target.id = source.id'],
      'id,name\n2,B\n3,c\n',
    )
    assert.equal(r.code, 0, r.stderr)
    assert.deepEqual(await rowsOf(table), [
      { id: 1, name: 'a' },
      { id: 2, name: 'B' },
      { id: 3, name: 'c' },
    ])
  })
})

describe('empty input', () => {
  for (const [name, content, format, message] of [
    ['empty.csv', '', 'csv', /The input file .*empty\.csv is empty: it has no header line, hence no columns/],
    ['blank.csv', '\n\n', 'csv', /The input file .*blank\.csv is empty/],
    ['empty.json', '', 'json', /The input file .*empty\.json is empty: it has no columns and no rows/],
  ] as const) {
    it(`append refuses ${name} as empty, naming no invented column`, async () => {
      const table = join(dir, `empty-${name.replace('.', '-')}`)
      assert.equal((await cli(['create', table, '--schema', 'id long'])).code, 0)
      const file = join(dir, name)
      await writeFile(file, content)
      const r = await cli(['append', table, file])
      assert.equal(r.code, 3)
      assert.match(r.stderr, message)
      assert.doesNotMatch(r.stderr, /column0|'json'/)
      assert.match(r.stderr, new RegExp(`hint: A ${format === 'csv' ? 'CSV' : 'JSON lines'} input`))
      assert.equal(await versionOf(table), 0n)
    })
  }

  it('create --from an empty CSV file creates no table', async () => {
    const file = join(dir, 'nothing.csv')
    await writeFile(file, '')
    const table = join(dir, 'empty-create')
    const r = await cli(['create', table, '--from', file])
    assert.equal(r.code, 3)
    assert.match(r.stderr, /is empty/)
    assert.equal(existsSync(table), false)
  })

  it('an empty standard input is refused as empty', async () => {
    const table = join(dir, 'empty-stdin')
    assert.equal((await cli(['create', table, '--schema', 'id long'])).code, 0)
    const r = await cli(['append', table, '-', '--format', 'json'], '')
    assert.equal(r.code, 3)
    assert.match(r.stderr, /The input on standard input is empty/)
  })
})

describe('create on a path that is a file', () => {
  it('says the path is a file, not a directory, and writes nothing', async () => {
    const file = join(dir, 'data.csv')
    await writeFile(file, 'id\n1\n')
    const r = await cli(['create', file, '--schema', 'id long'])
    assert.equal(r.code, 3)
    assert.match(r.stderr, /^error\[DELTA_INVALID_ARGUMENT\]: .*data\.csv is a file, not a directory/)
    assert.match(r.stderr, /hint: Give the path of a directory .*--from FILE/)
    assert.doesNotMatch(r.stderr, /disk is not full/)
    assert.equal(existsSync(join(file, '_delta_log')), false)
  })

  it('says so for a table path below a file too', async () => {
    const file = join(dir, 'plain-file')
    await writeFile(file, 'x')
    const r = await cli(['create', join(file, 'sub', 't'), '--schema', 'id long'])
    assert.equal(r.code, 3)
    assert.match(r.stderr, /plain-file is a file, so no table can be created under it/)
  })
})

describe('input columns the table lacks', () => {
  let csv: string
  before(async () => {
    csv = join(dir, 'wide.csv')
    await writeFile(csv, 'id,name,note\n1,a,x\n2,b,y\n')
  })

  it('are refused by default, with a hint naming --columns and --ignore-extra-columns', async () => {
    const table = join(dir, 'extra-refused')
    assert.equal((await cli(['create', table, '--schema', 'id long, name string'])).code, 0)
    const r = await cli(['append', table, csv])
    assert.equal(r.code, 3)
    assert.match(r.stderr, /Input column 'note' is not a column of the table/)
    assert.match(r.stderr, /--columns a,b.*--ignore-extra-columns/)
    assert.equal(await versionOf(table), 0n)
  })

  it('are left out with --ignore-extra-columns', async () => {
    const table = join(dir, 'extra-ignored')
    assert.equal((await cli(['create', table, '--schema', 'id long, name string'])).code, 0)
    const r = await cli(['append', table, csv, '--ignore-extra-columns'])
    assert.equal(r.code, 0, r.stderr)
    assert.deepEqual(await rowsOf(table), [
      { id: 1, name: 'a' },
      { id: 2, name: 'b' },
    ])
  })

  it('are left out when --columns names the ones to read', async () => {
    const table = join(dir, 'extra-chosen')
    assert.equal((await cli(['create', table, '--schema', 'id long, name string'])).code, 0)
    const r = await cli(['append', table, csv, '--columns', 'ID,name'])
    assert.equal(r.code, 0, r.stderr)
    assert.deepEqual(await rowsOf(table), [
      { id: 1, name: 'a' },
      { id: 2, name: 'b' },
    ])
    const bad = await cli(['append', table, csv, '--columns', 'id,nope'])
    assert.equal(bad.code, 3)
    assert.match(bad.stderr, /--columns names 'nope', which is not a column of/)
    assert.match(bad.stderr, /hint: The input has: id, name, note\./)
  })

  it('create --from --columns infers the table from the chosen columns only', async () => {
    const table = join(dir, 'create-chosen')
    const r = await cli(['create', table, '--from', csv, '--columns', 'id,note', '--json'])
    assert.equal(r.code, 0, r.stderr)
    assert.deepEqual(await rowsOf(table), [
      { id: 1, note: 'x' },
      { id: 2, note: 'y' },
    ])
  })
})

describe('CSV times without a zone', () => {
  let csv: string
  before(async () => {
    await mkdir(join(dir, 'times'), { recursive: true })
    csv = join(dir, 'times', 'events.csv')
    await writeFile(csv, 'id,at\n1,2024-01-02 03:04:05\n2,2024-02-03 04:05:06.5\n')
  })

  it('are inferred as timestamp read as UTC, without the timestampNtz feature, and the CLI says so', async () => {
    const table = join(dir, 'times-utc')
    const r = await cli(['create', table, '--from', csv])
    assert.equal(r.code, 0, r.stderr)
    assert.match(r.stdout, /\n {2}at +timestamp\n/)
    assert.match(
      r.stderr,
      /note: csv column 'at' holds times without a zone: inferred as timestamp, read as UTC/,
    )
    const t = await DeltaTable.open(table)
    const snap = await t.snapshot()
    await t.close()
    assert.equal(snap.schema.fields.find((f) => f.name === 'at')?.type, 'timestamp')
    assert.ok(!(snap.protocol.writerFeatures ?? []).includes('timestampNtz'))
    assert.deepEqual(await rowsOf(table), [
      { id: 1, at: '2024-01-02T03:04:05.000000Z' },
      { id: 2, at: '2024-02-03T04:05:06.500000Z' },
    ])
  })

  it('are inferred as timestamp_ntz with --timestamp-ntz', async () => {
    const table = join(dir, 'times-ntz')
    const r = await cli(['create', table, '--from', csv, '--timestamp-ntz'])
    assert.equal(r.code, 0, r.stderr)
    assert.doesNotMatch(r.stderr, /note:/)
    const t = await DeltaTable.open(table)
    const snap = await t.snapshot()
    await t.close()
    assert.equal(snap.schema.fields.find((f) => f.name === 'at')?.type, 'timestamp_ntz')
    assert.ok((snap.protocol.writerFeatures ?? []).includes('timestampNtz'))
  })
})

describe('history', () => {
  it('--json keeps every parameter and metric whole where the terminal view shortens them', async () => {
    const table = join(dir, 'history')
    const long = 'x'.repeat(200)
    const created = await cli([
      'create',
      table,
      '--schema',
      'id long',
      '--property',
      `delta.appendOnly=false`,
    ])
    assert.equal(created.code, 0, created.stderr)
    assert.equal((await cli(['append', table, '-', '--format', 'csv'], 'id\n1\n2\n3\n')).code, 0)
    const t = await DeltaTable.open(table)
    await t.update({ set: { id: 'id + 1' }, where: `'${long}' <> ''` })
    await t.close()
    const json = await cli(['history', table, '--json'])
    assert.equal(json.code, 0, json.stderr)
    const history = (
      JSON.parse(json.stdout) as {
        history: Array<{ operation: string; commitInfo: Record<string, Record<string, string>> }>
      }
    ).history
    const update = history.find((h) => h.operation === 'UPDATE')
    assert.ok(update?.commitInfo.operationParameters?.predicate?.includes(long), 'the predicate is whole')
    const write = history.find((h) => h.operation === 'WRITE')
    assert.equal(write?.commitInfo.operationMetrics?.numOutputRows, '3')
    const text = await cli(['history', table])
    assert.equal(text.code, 0, text.stderr)
    assert.ok(!text.stdout.includes(long), 'the terminal view shortens the long predicate')
  })
})
