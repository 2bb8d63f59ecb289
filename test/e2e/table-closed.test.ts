/**
 * Every method of a closed table fails with DELTA_TABLE_CLOSED, never DELTA_INTERNAL: the table
 * below lists each public method of `DeltaTable` with a call that would succeed on an open
 * table, and a check makes sure the list misses none.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { isDeltaError, TableClosedError } from '../../src/errors/index.js'
import { DeltaTable } from '../../src/table/delta-table.js'

let root: string
let dir: string
let csv: string

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'delta-rlc-closed-'))
  dir = join(root, 't')
  csv = join(root, 'in.csv')
  await writeFile(csv, 'id,name\n10,x\n')
  table0 = await createTable(dir)
  await table0.close()
})
after(() => rm(root, { recursive: true, force: true }))

let table0: DeltaTable

async function createTable(at: string): Promise<DeltaTable> {
  const table = await DeltaTable.create(at, {
    schema: 'id long, name string',
    properties: { 'delta.enableChangeDataFeed': 'true' },
  })
  await table.append([
    { id: 1n, name: 'a' },
    { id: 2n, name: 'b' },
  ])
  return table
}

/** One call of each public method (instance methods and getters), as on an open table. */
const CALLS: Readonly<Record<string, (t: DeltaTable) => unknown>> = {
  snapshot: (t) => t.snapshot(),
  begin: (t) => t.begin(),
  append: (t) => t.append([{ id: 3n, name: 'c' }]),
  appendFile: (t) => t.appendFile(csv),
  delete: (t) => t.delete('id = 1'),
  update: (t) => t.update({ where: 'id = 2', set: { name: "'z'" } }),
  merge: (t) =>
    t.merge([{ id: 2n, name: 'm' }], {
      on: 'target.id = source.id',
      whenMatched: [{ update: '*' }],
      whenNotMatched: [{ insert: '*' }],
    }),
  optimize: (t) => t.optimize(),
  alter: (t) => t.alter.setProperties({ 'user.k': 'v' }),
  restore: (t) => t.restore({ version: 0n }),
  vacuum: (t) => t.vacuum(),
  scan: (t) => t.scan().toArray(),
  changes: (t) => t.changes({ startingVersion: 0n }),
  history: (t) => t.history(),
  checkpoint: (t) => t.checkpoint(),
  cleanupMetadata: (t) => t.cleanupMetadata({ dryRun: true }),
  fsck: (t) => t.fsck(),
}

/** What a call gives: a promise is awaited, a returned iterable (a change feed) is iterated. */
async function settle(result: unknown): Promise<void> {
  const value = await result
  if (value !== null && typeof value === 'object' && Symbol.asyncIterator in value) {
    for await (const _ of value as AsyncIterable<unknown>) break
  }
}

function isClosedError(err: unknown): boolean {
  assert.ok(err instanceof TableClosedError, `expected TableClosedError, got ${String(err)}`)
  assert.equal(err.code, 'DELTA_TABLE_CLOSED')
  assert.ok(isDeltaError(err, 'DELTA_TABLE_CLOSED'))
  assert.match(err.message, /closed/)
  assert.ok(err.hint !== undefined)
  return true
}

describe('a closed table', () => {
  it('the table of calls covers every public method of DeltaTable', () => {
    const methods = Object.getOwnPropertyNames(DeltaTable.prototype).filter(
      (n) => n !== 'constructor' && n !== 'close',
    )
    assert.deepEqual([...methods].sort(), Object.keys(CALLS).sort())
  })

  it('every call of the table succeeds on an open table', async () => {
    const table = await createTable(join(root, 'open'))
    try {
      for (const [name, call] of Object.entries(CALLS)) {
        await assert.doesNotReject(async () => settle(call(table)), name)
      }
    } finally {
      await table.close()
    }
  })

  for (const [name, call] of Object.entries(CALLS)) {
    it(`${name} fails with DELTA_TABLE_CLOSED`, async () => {
      const table = await DeltaTable.open(dir)
      await table.close()
      await assert.rejects(async () => settle(call(table)), isClosedError)
    })
  }

  it('close() twice is fine, and the data is untouched', async () => {
    const table = await DeltaTable.open(dir)
    await table.close()
    await table.close()
    const again = await DeltaTable.open(dir)
    try {
      assert.equal(await again.scan().count(), 2)
      assert.equal((await again.snapshot()).version, 1n)
    } finally {
      await again.close()
    }
  })

  it('a scan, a change feed and a transaction made before close() fail with DELTA_TABLE_CLOSED after it', async () => {
    const table = await DeltaTable.open(dir)
    const scan = table.scan()
    const changes = table.changes({ startingVersion: 0n })
    const txn = await table.begin()
    await table.close()
    await assert.rejects(() => scan.toArray(), isClosedError)
    await assert.rejects(() => scan.count(), isClosedError)
    await assert.rejects(() => settle(changes), isClosedError)
    await assert.rejects(async () => {
      await txn.append([{ id: 9n, name: 'late' }])
      await txn.commit()
    }, isClosedError)
  })

  it('a table on a caller-owned engine refuses after close() too, and leaves the engine usable', async () => {
    const owner = await DeltaTable.open(dir)
    try {
      const table = await DeltaTable.open(dir, { engine: owner.engine })
      await table.close()
      await assert.rejects(async () => table.scan().toArray(), isClosedError)
      assert.equal((await owner.scan().toArray()).length, 2)
    } finally {
      await owner.close()
    }
  })
})
