/**
 * A blank or whitespace-only predicate is refused with DELTA_INVALID_ARGUMENT everywhere a
 * predicate is taken, and nothing is changed: it is almost always a caller's bug (an unset
 * variable, an empty form field), and taking it for "every row" used to delete or update the
 * whole table. Every row stays available as `delete()` with no argument and as `'true'`.
 *
 * The CLI refuses `--where ""` as a malformed argument (exit 1), as it does a predicate that
 * does not parse and a schema DDL that does not parse.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { isDeltaError, parsePredicate } from '../../src/index.js'
import { DeltaTable } from '../../src/table/delta-table.js'
import { runCliInProcess } from '../helpers/cli-in-process.js'

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

async function fresh(): Promise<{ root: string; location: string; table: DeltaTable }> {
  const root = await mkdtemp(join(tmpdir(), 'delta-rlc-blank-'))
  roots.push(root)
  const location = join(root, 't')
  const table = await DeltaTable.create(location, { schema: 'id long, v string' })
  await table.append([
    { id: 1n, v: 'a' },
    { id: 2n, v: 'b' },
  ])
  return { root, location, table }
}

const BLANKS = ['', '   ', '\n\t'] as const

function blankRefusal(argument: RegExp) {
  return (err: unknown) => {
    assert.ok(isDeltaError(err, 'DELTA_INVALID_ARGUMENT'), String(err))
    assert.match((err as { argument?: string }).argument ?? '', argument)
    assert.match((err as Error).message, /is (empty|blank)/)
    return true
  }
}

describe('a blank predicate is refused everywhere', () => {
  it('delete, update, merge on and clause conditions, optimize, replaceWhere, scan, a transaction, parsePredicate', async () => {
    const { root, table } = await fresh()
    try {
      for (const blank of BLANKS) {
        await assert.rejects(table.delete(blank), blankRefusal(/^where$/))
        await assert.rejects(table.update({ where: blank, set: { v: "'x'" } }), blankRefusal(/where/))
        await assert.rejects(
          table.merge([{ id: 1n, v: 'z' }], { on: blank, whenMatched: [{ update: '*' }] }),
          blankRefusal(/on/),
        )
        await assert.rejects(
          table.merge([{ id: 1n, v: 'z' }], {
            on: 'target.id = source.id',
            whenMatched: [{ if: blank, update: '*' }],
          }),
          blankRefusal(/if/),
        )
        await assert.rejects(
          table.merge([{ id: 9n, v: 'z' }], {
            on: 'target.id = source.id',
            whenNotMatched: [{ if: blank, insert: '*' }],
          }),
          blankRefusal(/if/),
        )
        await assert.rejects(table.optimize({ where: blank }), blankRefusal(/where/))
        await assert.rejects(
          table.append([{ id: 3n, v: 'c' }], { mode: 'overwrite', replaceWhere: blank }),
          blankRefusal(/replaceWhere/),
        )
        const file = join(root, 'in.csv')
        await writeFile(file, 'id,v\n3,c\n')
        await assert.rejects(
          table.appendFile(file, { mode: 'overwrite', replaceWhere: blank }),
          blankRefusal(/replaceWhere/),
        )
        await assert.rejects(async () => table.scan({ where: blank }).toArray(), blankRefusal(/where/))
        const txn = await table.begin()
        await assert.rejects(txn.delete(blank), blankRefusal(/where/))
        await txn.abort()
        assert.throws(() => parsePredicate(blank), blankRefusal(/predicate/))
      }
      assert.equal((await table.history()).length, 2, 'nothing was committed')
      assert.equal(await table.scan().count(), 2)
    } finally {
      await table.close()
    }
  })

  it("every row is delete() with no argument, or 'true'", async () => {
    for (const all of [undefined, 'true']) {
      const { table } = await fresh()
      try {
        await table.delete(all)
        assert.equal(await table.scan().count(), 0)
      } finally {
        await table.close()
      }
    }
  })
})

describe('the CLI refuses malformed arguments with exit 1', () => {
  it('--where "" for delete, update, scan and optimize; nothing changes', async () => {
    const { location, table } = await fresh()
    await table.close()
    for (const blank of ['', '  ']) {
      for (const args of [
        ['delete', location, '--where', blank],
        ['update', location, '--set', "v = 'x'", '--where', blank],
        ['scan', location, '--where', blank],
        ['optimize', location, '--where', blank],
        [
          'append',
          location,
          join(location, '..', 'none.csv'),
          '--mode',
          'overwrite',
          '--replace-where',
          blank,
        ],
      ]) {
        const r = await runCliInProcess(args)
        assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`)
        assert.match(r.stderr, /^error\[DELTA_INVALID_ARGUMENT\]: --(where|replace-where)/, args.join(' '))
      }
    }
    const reopened = await DeltaTable.open(location)
    try {
      assert.equal((await reopened.history()).length, 2)
      assert.equal(await reopened.scan().count(), 2)
    } finally {
      await reopened.close()
    }
  })

  it('a predicate that does not parse, and schema DDL that does not parse', async () => {
    const { root, location, table } = await fresh()
    await table.close()
    const cases: [string[], RegExp][] = [
      [['delete', location, '--where', 'id = = 1'], /^error\[DELTA_INVALID_PREDICATE\]/],
      [['scan', location, '--where', 'id >'], /^error\[DELTA_INVALID_PREDICATE\]/],
      [['update', location, '--set', 'v = (', '--where', 'id = 1'], /^error\[DELTA_INVALID_PREDICATE\]/],
      [
        ['create', join(root, 'bad'), '--schema', 'id lon g'],
        /^error\[DELTA_INVALID_ARGUMENT\]: Invalid schema/,
      ],
      [['alter', location, 'add-columns', 'x notatype'], /^error\[DELTA_INVALID_ARGUMENT\]: Invalid schema/],
    ]
    for (const [args, stderr] of cases) {
      const r = await runCliInProcess(args)
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`)
      assert.match(r.stderr, stderr, args.join(' '))
    }
  })
})
