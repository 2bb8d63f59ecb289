/**
 * Every public entry point refuses an option key it does not know with DELTA_INVALID_ARGUMENT,
 * naming the key and the nearest known one, before anything is written: a misspelt or
 * unsupported option must not be ignored while the call does something else.
 */
import assert from 'node:assert/strict'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { InvalidArgumentError } from '../../src/errors/index.js'
import { DeltaTable } from '../../src/table/delta-table.js'
import type { Transaction } from '../../src/table/transaction.js'

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

// Unknown keys on purpose: the casts stand for JavaScript callers and untyped input.
// biome-ignore lint/suspicious/noExplicitAny: see above
const bad = (v: unknown): any => v

/** Calls `run` and checks it fails naming `argument`, and `guess` as the nearest key. */
async function refuses(run: () => unknown, argument: string, guess: RegExp): Promise<void> {
  let error: unknown
  try {
    await run()
  } catch (err) {
    error = err
  }
  assert.ok(error instanceof InvalidArgumentError, `expected InvalidArgumentError, got ${String(error)}`)
  assert.equal(error.code, 'DELTA_INVALID_ARGUMENT')
  assert.equal(error.argument, argument, error.message)
  assert.ok(error.message.startsWith(`${argument} is not an option of`), error.message)
  assert.match(error.message, guess)
  assert.ok(error.hint?.includes('takes'), error.hint)
}

type Case = readonly [call: string, argument: string, guess: RegExp, run: (t: DeltaTable) => unknown]

const TABLE_CASES: readonly Case[] = [
  [
    'append',
    'options.modes',
    /did you mean 'mode'\?/,
    (t) => t.append([{ id: 9n }], bad({ modes: 'overwrite' })),
  ],
  [
    'append',
    'options.targetFilesize',
    /did you mean 'targetFileSize'\?/,
    (t) => t.append([], bad({ targetFilesize: 1 })),
  ],
  ['delete', 'options.signl', /did you mean 'signal'\?/, (t) => t.delete('id = 1', bad({ signl: 1 }))],
  [
    'update',
    'options.predicate',
    /nearest is/,
    (t) => t.update(bad({ set: { name: "'x'" }, predicate: 'id = 1' })),
  ],
  [
    'update',
    'options.were',
    /did you mean 'where'\?/,
    (t) => t.update(bad({ set: { name: "'x'" }, were: 'id = 1' })),
  ],
  [
    'merge',
    'options.whenNotMatchedInsert',
    /did you mean 'whenNotMatched'|nearest is 'whenNotMatched'/,
    (t) => t.merge([], bad({ on: 'target.id = source.id', whenNotMatchedInsert: [] })),
  ],
  [
    'a MERGE clause',
    'options.whenMatched[0].condition',
    /nearest is/,
    (t) =>
      t.merge([], bad({ on: 'target.id = source.id', whenMatched: [{ condition: 'true', delete: true }] })),
  ],
  [
    'a MERGE clause',
    'options.whenNotMatched[0].update',
    /did you mean 'insert'|nearest is 'insert'|nearest is 'if'/,
    (t) => t.merge([], bad({ on: 'target.id = source.id', whenNotMatched: [{ update: '*' }] })),
  ],
  ['optimize', 'options.zorderBy', /did you mean 'zOrderBy'\?/, (t) => t.optimize(bad({ zorderBy: ['id'] }))],
  [
    'vacuum',
    'options.retentionHour',
    /did you mean 'retentionHours'\?/,
    (t) => t.vacuum(bad({ retentionHour: 200 })),
  ],
  ['scan', 'options.limit', /nearest is/, (t) => t.scan(bad({ limit: 5 }))],
  ['scan', 'options.colums', /did you mean 'columns'\?/, (t) => t.scan(bad({ colums: ['id'] }))],
  [
    'snapshot',
    'options.versionAsOf',
    /did you mean 'version'|nearest is 'version'/,
    (t) => t.snapshot(bad({ versionAsOf: 0 })),
  ],
  [
    'begin',
    'options.isolation',
    /did you mean 'isolationLevel'|nearest is 'isolationLevel'/,
    (t) => t.begin(bad({ isolation: 'Serializable' })),
  ],
  ['history', 'options.limt', /did you mean 'limit'\?/, (t) => t.history(bad({ limt: 1 }))],
  [
    'checkpoint',
    'options.signal',
    /nearest is 'version'/,
    (t) => t.checkpoint(bad({ signal: AbortSignal.timeout(1000) })),
  ],
]

const STATIC_CASES: readonly (readonly [string, string, RegExp, (dir: string) => unknown])[] = [
  [
    'create',
    'options.partitionedBy',
    /did you mean 'partitionBy'\?/,
    (d) => DeltaTable.create(`${d}-new`, bad({ schema: 'id long', partitionedBy: ['id'] })),
  ],
  [
    'open',
    'options.conflict',
    /did you mean 'conflicts'\?/,
    (d) => DeltaTable.open(d, bad({ conflict: 'all' })),
  ],
  [
    'open retry',
    'options.retry.maxAttempt',
    /did you mean 'maxAttempts'\?/,
    (d) => DeltaTable.open(d, bad({ retry: { maxAttempt: 3 } })),
  ],
  [
    'open engineOptions',
    'options.engineOptions.thread',
    /did you mean 'threads'\?/,
    (d) => DeltaTable.open(d, bad({ engineOptions: { thread: 1 } })),
  ],
  [
    'create openOptions',
    'openOptions.autocheckpoint',
    /did you mean 'autoCheckpoint'\?/,
    (d) => DeltaTable.create(`${d}-new`, { schema: 'id long' }, bad({ autocheckpoint: false })),
  ],
]

const TXN_CASES: readonly (readonly [string, string, RegExp, (x: Transaction) => unknown])[] = [
  [
    'txn.append',
    'options.replacewhere',
    /did you mean 'replaceWhere'\?/,
    (x) => x.append([], bad({ mode: 'overwrite', replacewhere: 'id = 1' })),
  ],
  // A transaction reads its own snapshot: time travel is not an option of its scan.
  ['txn.scan', 'options.version', /nearest is/, (x) => x.scan(bad({ version: 0n }))],
  [
    'txn.update',
    'options.signal',
    /nearest is/,
    (x) => x.update(bad({ set: { name: "'x'" }, signal: AbortSignal.timeout(1000) })),
  ],
  [
    'txn.stageActions',
    'options.operatio',
    /did you mean 'operation'\?/,
    (x) => x.stageActions([], bad({ operatio: 'X' })),
  ],
]

describe('unknown option keys at the public entry points', () => {
  let dir: string
  let table: DeltaTable
  before(async () => {
    const d = await mkdtemp(join(tmpdir(), 'delta-rlc-keys-'))
    roots.push(d)
    dir = join(d, 't')
    table = await DeltaTable.create(dir, {
      schema: 'id long not null, name string',
      properties: { 'delta.enableDeletionVectors': 'true' },
    })
    await table.append([
      { id: 1n, name: 'a' },
      { id: 2n, name: 'b' },
    ])
  })
  after(() => table.close())

  for (const [call, argument, guess, run] of TABLE_CASES) {
    it(`${call} refuses ${argument}`, () => refuses(() => run(table), argument, guess))
  }
  for (const [call, argument, guess, run] of STATIC_CASES) {
    it(`DeltaTable.${call} refuses ${argument}`, () => refuses(() => run(dir), argument, guess))
  }
  for (const [call, argument, guess, run] of TXN_CASES) {
    it(`${call} refuses ${argument}`, async () => {
      const txn = await table.begin()
      try {
        await refuses(() => run(txn), argument, guess)
      } finally {
        await txn.abort()
      }
    })
  }

  it('accepts every known key, and a key whose value is undefined', async () => {
    const rows = await table
      .scan({ where: 'id > 0', columns: ['id'], batchSize: 10, version: 1n, timestamp: undefined })
      .toArray()
    assert.deepEqual(
      rows.map((r) => r.id),
      [1n, 2n],
    )
    const result = await table.append([{ id: 3n, name: 'c' }], { targetFileSize: 1 << 20 })
    assert.equal(result.version, 2n)
    await table.update({ where: 'id = 3', set: { name: "'cc'" }, signal: undefined })
    assert.equal((await table.history({ limit: 1, signal: undefined }))[0]?.operation, 'UPDATE')
  })

  it('left the table as the accepted calls made it: append(rows, { mode }) appended nothing', async () => {
    const versions = (await readdir(join(dir, '_delta_log'))).filter((f) => f.endsWith('.json'))
    assert.equal(versions.length, 4)
    const rows = await table.scan().toArray()
    assert.deepEqual(rows.map((r) => [r.id, r.name]).sort(), [
      [1n, 'a'],
      [2n, 'b'],
      [3n, 'cc'],
    ])
  })
})
