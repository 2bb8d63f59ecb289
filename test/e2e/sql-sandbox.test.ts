/**
 * The `sql` command's sandbox: one read-only query over the view runs; reading another file
 * (read_csv of /etc/passwd, glob), COPY TO, ATTACH, INSTALL, SET, a second statement and a
 * statement that is not a query are refused, and nothing is written; `sql ""` says what is
 * expected; `--unsafe` lifts the sandbox. The `delta-rlc/duckdb` subpath's lockDownConnection and
 * checkReadOnlyQuery do the same for a view an application hands to its users.
 */
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import {
  checkReadOnlyQuery,
  createDuckDbInstance,
  createSnapshotView,
  lockDownConnection,
} from '../../src/subpaths/duckdb.js'
import { DeltaTable } from '../../src/table/delta-table.js'
import { runCliInProcess } from '../helpers/cli-in-process.js'

let root: string
let dir: string

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'delta-rlc-sql-sandbox-'))
  dir = join(root, 't')
  const t = await DeltaTable.create(dir, { schema: 'id long, name string' })
  await t.append([
    { id: 1n, name: 'a' },
    { id: 2n, name: 'b' },
  ])
  await t.close()
})
after(() => rm(root, { recursive: true, force: true }))

describe('delta-rlc sql sandbox', () => {
  it('runs one query over the view', async () => {
    const r = await runCliInProcess(['sql', dir, 'SELECT count(*) AS n FROM t', '--format', 'csv'])
    assert.equal(r.code, 0, r.stderr)
    assert.match(r.stdout, /n\n2/)
  })

  const refused: ReadonlyArray<readonly [string, string, RegExp]> = [
    ['read_csv of another file', "SELECT * FROM read_csv('/etc/passwd')", /Permission|disabled/],
    ['glob outside the table', "SELECT * FROM glob('/etc/*')", /Permission|disabled/],
    ['COPY TO', "COPY (SELECT 1) TO '{OUT}'", /Permission|read-only query|COPY/],
    ['COPY TO inside the table', "COPY (SELECT * FROM t) TO '{TABLE}/x.csv'", /read-only query/],
    ['ATTACH', "ATTACH '{ROOT}/other.duckdb'", /Permission|read-only query/],
    ['INSTALL', 'INSTALL httpfs', /Permission|read-only query/],
    ['SET', 'SET enable_external_access = true', /read-only query|locked/],
    ['a second statement', 'SELECT 1; SELECT 2', /2 statements/],
    ['a statement that is not a query', 'CREATE TABLE x AS SELECT 1', /read-only query/],
  ]
  for (const [what, sql, why] of refused) {
    it(`refuses ${what}`, async () => {
      const out = join(root, `out-${what.replace(/\W/g, '_')}.csv`)
      const text = sql.replace('{OUT}', out).replace('{TABLE}', dir).replace('{ROOT}', root)
      const r = await runCliInProcess(['sql', dir, text])
      // An invalid argument: exit 3 today (exit codes are being unified to 1 for all of them).
      assert.ok(r.code === 1 || r.code === 3, `${what}: ${r.code} ${r.stdout} ${r.stderr}`)
      assert.match(r.stderr, /DELTA_INVALID_ARGUMENT/)
      assert.match(r.stderr, why)
      assert.doesNotMatch(r.stdout, /root:/, 'no line of /etc/passwd is printed')
      assert.ok(
        !existsSync(out) && !existsSync(join(dir, 'x.csv')) && !existsSync(join(root, 'other.duckdb')),
      )
    })
  }

  it('sql "" says what is expected', async () => {
    const r = await runCliInProcess(['sql', dir, '  '])
    assert.ok(r.code === 1 || r.code === 3, r.stderr)
    assert.match(r.stderr, /empty: give one SELECT statement over the view t/)
  })

  it('--unsafe lifts the sandbox and --help names it', async () => {
    const r = await runCliInProcess([
      'sql',
      dir,
      "SELECT count(*) AS n FROM read_csv('/etc/passwd', header=false)",
      '--unsafe',
      '--format',
      'csv',
    ])
    assert.equal(r.code, 0, r.stderr)
    const help = await runCliInProcess(['sql', '--help'])
    assert.match(help.stdout + help.stderr, /--unsafe/)
    assert.match(help.stdout + help.stderr, /enable_external_access=false/)
  })
})

describe('delta-rlc/duckdb sandbox helpers', () => {
  it('lock a connection down to the view’s directories and check a query', async () => {
    const table = await DeltaTable.open(dir)
    const instance = await createDuckDbInstance()
    const con = await instance.connect()
    try {
      const view = await createSnapshotView(con, table)
      await lockDownConnection(con, view.directories)
      await checkReadOnlyQuery(con, 'SELECT sum(id) FROM t')
      const rows = (await con.runAndReadAll('SELECT sum(id) AS s FROM t')).getRows()
      assert.equal(String(rows[0]?.[0]), '3')
      await assert.rejects(con.run("SELECT * FROM read_csv('/etc/passwd')"), /Permission|disabled/)
      await assert.rejects(con.run('SET lock_configuration = false'), /locked/)
      await assert.rejects(checkReadOnlyQuery(con, 'DROP VIEW t'), /read-only query/)
      await view.release()
    } finally {
      con.closeSync()
      instance.closeSync()
      await table.close()
    }
  })
})
