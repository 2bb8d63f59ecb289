/**
 * `delta-rlc alter`: each action commits what the API does (checked on the table afterwards), and
 * a command line that does not fit the usage exits 1 before anything is committed.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { DeltaTable } from '../../src/table/delta-table.js'
import { runCliInProcess } from '../helpers/cli-in-process.js'

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

async function table(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'delta-rlc-cli-alter-'))
  roots.push(d)
  const dir = join(d, 't')
  const t = await DeltaTable.create(dir, { schema: 'id long not null, amount int' })
  await t.append([
    { id: 1n, amount: 5 },
    { id: 2n, amount: null },
  ])
  await t.close()
  return dir
}

async function cli(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return runCliInProcess(args)
}

describe('delta-rlc alter', () => {
  it('runs every action as one commit, with Delta operation names', async () => {
    const dir = await table()
    const steps: [string[], RegExp][] = [
      [['alter', dir, 'set-properties', 'delta.appendOnly=false', 'owner=data eng'], /SET TBLPROPERTIES/],
      [['alter', dir, 'unset-properties', 'owner'], /UNSET TBLPROPERTIES/],
      [['alter', dir, 'unset-properties', 'nope', '--if-exists'], /UNSET TBLPROPERTIES/],
      [['alter', dir, 'add-columns', 'country string', 'score double'], /ADD COLUMNS/],
      [['alter', dir, 'set-comment', 'amount', 'in cents'], /CHANGE COLUMN/],
      [['alter', dir, 'add-constraint', 'positive', 'amount > 0 OR amount IS NULL'], /ADD CONSTRAINT/],
      [['alter', dir, 'set-not-null', 'id'], /./],
      [['alter', dir, 'drop-constraint', 'positive'], /DROP CONSTRAINT/],
    ]
    for (const [args, out] of steps) {
      const r = await cli(args)
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`)
      assert.match(r.stdout, out)
    }
    const t = await DeltaTable.open(dir)
    try {
      const snap = await t.snapshot()
      assert.equal(snap.properties['delta.appendOnly'], 'false')
      assert.equal(snap.properties.owner, undefined)
      assert.equal(snap.properties['delta.constraints.positive'], undefined)
      assert.deepEqual(
        snap.schema.fields.map((f) => [f.name, f.metadata.comment ?? null]),
        [
          ['id', null],
          ['amount', 'in cents'],
          ['country', null],
          ['score', null],
        ],
      )
    } finally {
      await t.close()
    }
  })

  it('exits 1 on a usage error and 3 with the error code on a refused change, committing nothing', async () => {
    const dir = await table()
    const usage: [string[], RegExp][] = [
      [['alter', dir, 'rename-table', 'a', 'b'], /Unknown alter action 'rename-table'/],
      [['alter', dir, 'rename-column', 'id'], /rename-column takes COLUMN NEW_NAME/],
      [['alter', dir, 'add-constraint', 'only-a-name'], /add-constraint takes NAME EXPR/],
      [['alter', dir, 'set-properties', 'novalue'], /Expected KEY=VALUE/],
      [['alter', dir, 'set-not-null', 'id', '--if-exists'], /--if-exists applies to/],
      [['alter', dir], /./],
    ]
    for (const [args, err] of usage) {
      const r = await cli(args)
      assert.equal(r.code, 1, args.join(' '))
      assert.match(r.stderr, err)
    }
    const refused = await cli(['alter', dir, 'add-constraint', 'positive', 'amount > 0'])
    assert.equal(refused.code, 3)
    assert.match(refused.stderr, /DELTA_NEW_CHECK_CONSTRAINT_VIOLATION/)
    const unknown = await cli(['alter', dir, 'set-properties', 'delta.nope=1'])
    assert.equal(unknown.code, 3)
    assert.match(unknown.stderr, /DELTA_UNKNOWN_CONFIGURATION/)
    const t = await DeltaTable.open(dir)
    try {
      assert.equal((await t.snapshot()).version, 1n)
    } finally {
      await t.close()
    }
  })
})
