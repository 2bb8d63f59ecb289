/**
 * Every public entry point refuses arguments of the wrong type with DELTA_INVALID_ARGUMENT naming
 * the argument, before any I/O and without touching the table; and a DELETE given a parsed
 * expression commits and records a readable predicate.
 */
import assert from 'node:assert/strict'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { DuckDBInstance } from '@duckdb/node-api'
import { InvalidArgumentError, InvalidPredicateError, isDeltaError } from '../../src/errors/index.js'
import { parseExpression, parsePredicate } from '../../src/expressions/parse-predicate.js'
import { parseDdlSchema } from '../../src/protocol/schema.js'
import { DeltaTable } from '../../src/table/delta-table.js'
import { createSnapshotView } from '../../src/table/sql-view.js'
import type { Transaction } from '../../src/table/transaction.js'

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

async function tempTable(): Promise<{ dir: string; table: DeltaTable }> {
  const d = await mkdtemp(join(tmpdir(), 'delta-rlc-args-'))
  roots.push(d)
  const dir = join(d, 't')
  const table = await DeltaTable.create(dir, {
    schema: 'id long not null, name string',
    properties: { 'delta.enableDeletionVectors': 'true' },
  })
  await table.append([
    { id: 1n, name: 'a' },
    { id: 2n, name: 'b' },
    { id: 5n, name: 'e' },
  ])
  return { dir, table }
}

/** Calls `run` and checks it fails with DELTA_INVALID_ARGUMENT naming `argument`. */
async function refuses(run: () => unknown, argument: string): Promise<void> {
  let error: unknown
  try {
    await run()
  } catch (err) {
    error = err
  }
  assert.ok(error instanceof InvalidArgumentError, `expected InvalidArgumentError, got ${String(error)}`)
  assert.equal(error.code, 'DELTA_INVALID_ARGUMENT')
  assert.equal(error.argument, argument, error.message)
  assert.ok(error.message.startsWith(argument), error.message)
}

type Case = readonly [name: string, argument: string, run: (t: DeltaTable) => unknown]

// Wrong types on purpose: the casts stand for JavaScript callers and untyped input.
// biome-ignore lint/suspicious/noExplicitAny: see above
const bad = (v: unknown): any => v

const TABLE_CASES: readonly Case[] = [
  ['delete(123)', 'where', (t) => t.delete(bad(123))],
  ['delete({})', 'where', (t) => t.delete(bad({}))],
  ['delete with a malformed expression node', 'where', (t) => t.delete(bad({ kind: 'comparison', op: '=' }))],
  ['delete with a column node of an empty path', 'where', (t) => t.delete(bad({ kind: 'column', path: [] }))],
  ['scan({ columns: "id" })', 'options.columns', (t) => t.scan({ columns: bad('id') })],
  ['scan({ columns: [1] })', 'options.columns[0]', (t) => t.scan({ columns: bad([1]) })],
  ['scan({ where: 5 })', 'options.where', (t) => t.scan({ where: bad(5) })],
  ['scan({ batchSize: 0 })', 'options.batchSize', (t) => t.scan({ batchSize: 0 })],
  ['scan({ version: "1" })', 'options.version', (t) => t.scan({ version: bad('1') })],
  ['scan(null)', 'options', (t) => t.scan(bad(null))],
  ['snapshot({ timestamp: {} })', 'options.timestamp', (t) => t.snapshot({ timestamp: bad({}) })],
  ['snapshot({ signal: "x" })', 'options.signal', (t) => t.snapshot({ signal: bad('x') })],
  ['snapshot("latest")', 'options', (t) => t.snapshot(bad('latest'))],
  [
    'begin({ isolationLevel: "Snapshot" })',
    'options.isolationLevel',
    (t) => t.begin(bad({ isolationLevel: 'Snapshot' })),
  ],
  ['append("rows")', 'rows', (t) => t.append(bad('rows'))],
  ['append([1])', 'rows[0]', (t) => t.append(bad([1]))],
  ['append([{...}, null])', 'rows[1]', (t) => t.append(bad([{ id: 9n }, null]))],
  [
    'append(rows, { targetFileSize: -1 })',
    'options.targetFileSize',
    (t) => t.append([], { targetFileSize: -1 }),
  ],
  ['update("id = 1")', 'options', (t) => t.update(bad('id = 1'))],
  ['update({ set: "name = 1" })', 'options.set', (t) => t.update(bad({ set: 'name = 1' }))],
  ['update({ set: { name: 1 } })', "options.set['name']", (t) => t.update(bad({ set: { name: 1 } }))],
  ['update({ where: 1, set })', 'options.where', (t) => t.update(bad({ where: 1, set: { name: "'x'" } }))],
  ['merge(rows, {})', 'options.on', (t) => t.merge([], bad({}))],
  ['merge({}, options)', 'sourceRows', (t) => t.merge(bad({}), { on: 'target.id = source.id' })],
  [
    'merge with whenMatched not an array',
    'options.whenMatched',
    (t) => t.merge([], bad({ on: 'target.id = source.id', whenMatched: { delete: true } })),
  ],
  [
    'merge with a clause condition of the wrong type',
    'options.whenMatched[0].if',
    (t) => t.merge([], bad({ on: 'target.id = source.id', whenMatched: [{ if: 3, delete: true }] })),
  ],
  ['optimize({ zOrderBy: "id" })', 'options.zOrderBy', (t) => t.optimize(bad({ zOrderBy: 'id' }))],
  [
    'optimize({ maxDeletedRowsRatio: 2 })',
    'options.maxDeletedRowsRatio',
    (t) => t.optimize({ maxDeletedRowsRatio: 2 }),
  ],
  [
    'vacuum({ retentionHours: "1" })',
    'options.retentionHours',
    (t) => t.vacuum(bad({ retentionHours: '1' })),
  ],
  ['vacuum({ dryRun: "yes" })', 'options.dryRun', (t) => t.vacuum(bad({ dryRun: 'yes' }))],
  ['history({ limit: 1.5 })', 'options.limit', (t) => t.history({ limit: 1.5 })],
  ['history({ limit: "1" })', 'options.limit', (t) => t.history(bad({ limit: '1' }))],
  ['checkpoint({ version: "1" })', 'options.version', (t) => t.checkpoint(bad({ version: '1' }))],
]

const STATIC_CASES: readonly (readonly [string, string, (dir: string) => unknown])[] = [
  ['open(42)', 'location', () => DeltaTable.open(bad(42))],
  [
    'open(dir, { retry: { maxAttempts: 0 } })',
    'options.retry.maxAttempts',
    (d) => DeltaTable.open(d, { retry: { maxAttempts: 0 } }),
  ],
  ['open(dir, { conflicts: 7 })', 'options.conflicts', (d) => DeltaTable.open(d, bad({ conflicts: 7 }))],
  [
    'open(dir, { autoCheckpoint: "no" })',
    'options.autoCheckpoint',
    (d) => DeltaTable.open(d, bad({ autoCheckpoint: 'no' })),
  ],
  ['create(dir, "id long")', 'options', (d) => DeltaTable.create(`${d}-new`, bad('id long'))],
  ['create(dir, { schema: 5 })', 'options.schema', (d) => DeltaTable.create(`${d}-new`, bad({ schema: 5 }))],
  [
    'create(dir, { partitionBy: "part" })',
    'options.partitionBy',
    (d) => DeltaTable.create(`${d}-new`, bad({ schema: 'id long', partitionBy: 'part' })),
  ],
  [
    'create(dir, { properties: { x: 1 } })',
    "options.properties['x']",
    (d) => DeltaTable.create(`${d}-new`, bad({ schema: 'id long', properties: { x: 1 } })),
  ],
  [
    'create(dir, schema, { retry: [] })',
    'openOptions.retry',
    (d) => DeltaTable.create(`${d}-new`, { schema: 'id long' }, bad({ retry: [] })),
  ],
]

const TXN_CASES: readonly (readonly [string, string, (t: Transaction) => unknown])[] = [
  ['txn.delete(123)', 'where', (x) => x.delete(bad(123))],
  ['txn.scan({ columns: "id" })', 'options.columns', (x) => x.scan({ columns: bad('id') })],
  ['txn.append({})', 'rows', (x) => x.append(bad({}))],
  ['txn.update({ set: null })', 'options.set', (x) => x.update(bad({ set: null }))],
  ['txn.merge(rows, { on: 1 })', 'options.on', (x) => x.merge([], bad({ on: 1 }))],
  ['txn.optimize({ targetFileSize: 0 })', 'options.targetFileSize', (x) => x.optimize({ targetFileSize: 0 })],
  ['txn.setTransaction("", 1)', 'appId', (x) => x.setTransaction('', 1)],
  ['txn.setTransaction("app", 1.5)', 'version', (x) => x.setTransaction('app', 1.5)],
  ['txn.setTransaction("app", "1")', 'version', (x) => x.setTransaction('app', bad('1'))],
  ['txn.readAppTransaction(7)', 'appId', (x) => x.readAppTransaction(bad(7))],
  ['txn.stageActions({})', 'actions', (x) => x.stageActions(bad({}))],
  ['txn.stageActions([null])', 'actions[0]', (x) => x.stageActions(bad([null]))],
  [
    'txn.stageActions([], { operation: 1 })',
    'options.operation',
    (x) => x.stageActions([], bad({ operation: 1 })),
  ],
]

describe('wrong argument types at the public entry points', () => {
  let dir: string
  let table: DeltaTable
  before(async () => {
    ;({ dir, table } = await tempTable())
  })
  after(() => table.close())

  for (const [name, argument, run] of TABLE_CASES) {
    it(`table.${name} is refused naming ${argument}`, () => refuses(() => run(table), argument))
  }
  for (const [name, argument, run] of STATIC_CASES) {
    it(`DeltaTable.${name} is refused naming ${argument}`, () => refuses(() => run(dir), argument))
  }
  for (const [name, argument, run] of TXN_CASES) {
    it(`${name} is refused naming ${argument}`, async () => {
      const txn = await table.begin()
      await refuses(() => run(txn), argument)
    })
  }

  it('parsePredicate, parseExpression and parseDdlSchema refuse values that are not text', async () => {
    await refuses(() => parsePredicate(bad(5)), 'text')
    await refuses(() => parseExpression(bad(null)), 'text')
    await refuses(() => parseDdlSchema(bad({ id: 'long' })), 'schema')
  })

  it('createSnapshotView refuses a missing connection, a non-table and options of the wrong type', async () => {
    const instance = await DuckDBInstance.create(':memory:')
    const con = await instance.connect()
    try {
      await refuses(() => createSnapshotView(bad(null), table), 'connection')
      await refuses(() => createSnapshotView(con, bad({})), 'table')
      await refuses(() => createSnapshotView(con, table, bad('v')), 'options')
      await refuses(() => createSnapshotView(con, table, bad({ version: 'latest' })), 'options.version')
    } finally {
      con.closeSync()
      instance.closeSync()
    }
  })

  it('leaves the table as it was: no commit, the same rows', async () => {
    const versions = (await readdir(join(dir, '_delta_log'))).filter((f) => f.endsWith('.json'))
    assert.equal(versions.length, 2)
    const rows = await table.scan({ columns: ['id'] }).toArray()
    assert.deepEqual(
      rows.map((r) => r.id),
      [1n, 2n, 5n],
    )
  })

  it('refuses an expression tree deeper than the limit with DELTA_INVALID_PREDICATE', async () => {
    let where: unknown = {
      kind: 'comparison',
      op: '=',
      left: { kind: 'column', path: ['id'] },
      right: { kind: 'literal', type: 'long', value: 1n },
    }
    for (let i = 0; i < 100_000; i++) where = { kind: 'not', operand: where }
    await assert.rejects(
      () => table.delete(bad(where)),
      (err: unknown) => err instanceof InvalidPredicateError && isDeltaError(err, 'DELTA_INVALID_PREDICATE'),
    )
  })
})

describe('DELETE with a parsed expression', () => {
  it('commits through a transaction and records the predicate as readable text in history', async () => {
    const { table } = await tempTable()
    try {
      const txn = await table.begin()
      const metrics = await txn.delete(parsePredicate("id = 5 OR name = 'a'"))
      assert.equal(metrics.numDeletedRows, 2)
      const result = await txn.commit()
      assert.equal(result.version, 2n)
      const rows = await table.scan().toArray()
      assert.deepEqual(rows, [{ id: 2n, name: 'b' }])
      const [entry] = await table.history({ limit: 1 })
      assert.equal(entry?.operation, 'DELETE')
      assert.equal(entry?.commitInfo?.operationParameters?.predicate, `["id = 5 OR name = 'a'"]`)
      // The one-call form takes an expression too.
      await table.delete(parsePredicate('id = 2'))
      assert.equal(await table.scan().count(), 0)
    } finally {
      await table.close()
    }
  })
})
