/**
 * Files a transaction writes before its commit (data files, DV files, copy-on-write outputs) are
 * removed when the commit does not land, for every operation, and the ones a reconcile made
 * useless are removed when it does: after each scenario every data or DV file in the table
 * directory is one some version of the log refers to.
 */
import assert from 'node:assert/strict'
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { resolveDvLocation } from '../../src/dv/index.js'
import { isDeltaError } from '../../src/errors/index.js'
import { LOG_DIR, parseLogFileName } from '../../src/protocol/log-files.js'
import { createFaultyStore, createLocalStore } from '../../src/storage/index.js'
import { DeltaTable } from '../../src/table/delta-table.js'
import type { Transaction } from '../../src/table/transaction.js'
import {
  assertSameRows,
  commitActions,
  createTestTable,
  keyOf,
  listDataFiles,
  type Row,
  scanRows,
  standardRow,
  type TestTable,
} from './ops-support.js'

const BATCHES: Row[][] = [
  Array.from({ length: 12 }, (_, i) => standardRow(i)),
  Array.from({ length: 12 }, (_, i) => standardRow(100 + i)),
]
const ALL_ROWS = BATCHES.flat()

/** Keys of every data and DV file any commit of the log adds or removes. */
async function keysInLog(dir: string): Promise<Set<string>> {
  const keys = new Set<string>()
  for (const name of await readdir(join(dir, LOG_DIR))) {
    const parsed = parseLogFileName(name)
    if (parsed?.type !== 'commit') continue
    for (const a of await commitActions(dir, parsed.version)) {
      const f = 'add' in a ? a.add : 'remove' in a ? a.remove : undefined
      if (f === undefined) continue
      keys.add(keyOf(f.path))
      const dv = f.deletionVector
      if (dv?.storageType === 'u') {
        const loc = resolveDvLocation(dv)
        if (loc.kind === 'relative') keys.add(loc.path)
      }
    }
  }
  return keys
}

/** Data and DV files in the table directory that no commit refers to. */
async function orphans(dir: string): Promise<string[]> {
  const known = await keysInLog(dir)
  return (await listDataFiles(dir)).filter((k) => !known.has(k))
}

/** Each operation, staged in a transaction so that something is written before the commit. */
const OPERATIONS: ReadonlyArray<{
  readonly name: string
  readonly dv: boolean
  readonly stage: (txn: Transaction) => Promise<unknown>
}> = [
  { name: 'append', dv: true, stage: (txn) => txn.append([standardRow(500), standardRow(501)]) },
  { name: 'DELETE with a deletion vector', dv: true, stage: (txn) => txn.delete('id = 3') },
  { name: 'DELETE copy-on-write', dv: false, stage: (txn) => txn.delete('id = 3') },
  { name: 'UPDATE', dv: true, stage: (txn) => txn.update({ where: 'id = 4', set: { name: "'u'" } }) },
  {
    name: 'MERGE',
    dv: true,
    stage: (txn) =>
      txn.merge([{ ...standardRow(5), name: 'm' }, standardRow(600)], {
        on: 'target.id = source.id',
        whenMatched: [{ update: '*' }],
        whenNotMatched: [{ insert: '*' }],
      }),
  },
  { name: 'OPTIMIZE', dv: true, stage: (txn) => txn.optimize() },
]

async function withTable(dv: boolean, fn: (t: TestTable) => Promise<void>): Promise<void> {
  const t = await createTestTable({ partitioned: false, dv }, BATCHES)
  try {
    await fn(t)
  } finally {
    await t.cleanup()
  }
}

describe('staged files are removed when the commit does not land', () => {
  for (const op of OPERATIONS) {
    it(`${op.name}: a failing commit put leaves no new file behind`, async () => {
      await withTable(op.dv, async (t) => {
        const store = createFaultyStore(createLocalStore(t.dir), {
          faults: [{ methods: 'put', match: '_delta_log/*.json', nth: 1 }],
        })
        const failing = await DeltaTable.open(t.dir, { storage: store, autoCheckpoint: false })
        try {
          const txn = await failing.begin()
          const before = await listDataFiles(t.dir)
          await op.stage(txn)
          assert.ok((await listDataFiles(t.dir)).length > before.length, 'the operation wrote files')
          await assert.rejects(txn.commit(), (err) => isDeltaError(err, 'DELTA_STORAGE_ERROR'))
          assert.deepEqual(await listDataFiles(t.dir), before, 'what the operation wrote is gone')
          assert.deepEqual(await orphans(t.dir), [])
        } finally {
          await failing.close()
        }
        assertSameRows(await scanRows(t.table), ALL_ROWS)
      })
    })
  }

  it('a commit whose outcome is unknown keeps its files: it had landed, and the table reads whole', async () => {
    await withTable(true, async (t) => {
      const store = createFaultyStore(createLocalStore(t.dir), {
        faults: [
          { methods: 'put', match: '_delta_log/*.json', nth: 1, effect: 'ambiguous' },
          { methods: 'read', match: '_delta_log/00000000000000000003.json', rate: 1, retryable: true },
        ],
      })
      const uncertain = await DeltaTable.open(t.dir, { storage: store, autoCheckpoint: false })
      try {
        const txn = await uncertain.begin()
        await txn.delete('id = 3')
        await assert.rejects(txn.commit(), (err) => isDeltaError(err, 'DELTA_COMMIT_STATE_UNKNOWN'))
        await txn.abort()
      } finally {
        await uncertain.close()
      }
      assert.deepEqual(await orphans(t.dir), [], 'every file the landed commit names is there')
      assert.equal((await t.table.snapshot()).version, 3n, 'the DELETE landed')
      assertSameRows(
        await scanRows(t.table),
        ALL_ROWS.filter((r) => r.id !== 3n),
      )
    })
  })

  it('DELETE: a conflicting concurrent DELETE of the same row aborts it and removes its DV file', async () => {
    await withTable(true, async (t) => {
      const loser = await t.table.begin()
      await loser.delete('id = 3')
      const winner = await t.table.begin()
      await winner.delete('id = 3')
      await winner.commit()
      assert.equal((await orphans(t.dir)).length, 1, "the loser's staged DV file is not in the log yet")
      await assert.rejects(
        loser.commit(),
        (err) => isDeltaError(err) && err.code.startsWith('DELTA_CONCURRENT'),
      )
      assert.deepEqual(await orphans(t.dir), [])
      assertSameRows(
        await scanRows(t.table),
        ALL_ROWS.filter((r) => r.id !== 3n),
      )
    })
  })

  it('DELETE copy-on-write: a conflict removes the rewritten file it staged', async () => {
    await withTable(false, async (t) => {
      const loser = await t.table.begin()
      await loser.delete('id = 3')
      await t.table.delete('id = 4')
      await assert.rejects(
        loser.commit(),
        (err) => isDeltaError(err) && err.code.startsWith('DELTA_CONCURRENT'),
      )
      assert.deepEqual(await orphans(t.dir), [])
      assertSameRows(
        await scanRows(t.table),
        ALL_ROWS.filter((r) => r.id !== 4n),
      )
    })
  })

  it('abort() before commit removes what the staged operations wrote, and the table is unchanged', async () => {
    await withTable(true, async (t) => {
      const before = await listDataFiles(t.dir)
      const txn = await t.table.begin()
      await txn.append([standardRow(700)])
      await txn.append([standardRow(701)])
      assert.equal((await listDataFiles(t.dir)).length, before.length + 2, 'two data files')
      await txn.abort()
      await txn.abort()
      assert.deepEqual(await listDataFiles(t.dir), before)
      await assert.rejects(txn.commit(), (err) => isDeltaError(err, 'DELTA_INVALID_ARGUMENT'))
      assertSameRows(await scanRows(t.table), ALL_ROWS)
    })
  })

  it('a DELETE refused after an append in one transaction removes what it wrote at once', async () => {
    await withTable(true, async (t) => {
      const before = await listDataFiles(t.dir)
      const txn = await t.table.begin()
      await txn.append([standardRow(700)])
      const withAppend = await listDataFiles(t.dir)
      await assert.rejects(txn.delete('id = 2'), (err) => isDeltaError(err, 'DELTA_UNSUPPORTED'))
      assert.deepEqual(await listDataFiles(t.dir), withAppend, "the DELETE's DV file is gone")
      await txn.abort()
      assert.deepEqual(await listDataFiles(t.dir), before)
    })
  })

  it('abort() after a successful commit keeps the committed files', async () => {
    await withTable(true, async (t) => {
      const txn = await t.table.begin()
      await txn.delete('id = 2')
      await txn.commit()
      const after = await listDataFiles(t.dir)
      await txn.abort()
      assert.deepEqual(await listDataFiles(t.dir), after)
      assertSameRows(
        await scanRows(t.table),
        ALL_ROWS.filter((r) => r.id !== 2n),
      )
    })
  })
})

describe('staged files a reconcile supersedes are removed once the commit lands', () => {
  it('Case 2 rewrites the DELETE DV inline: the staged DV file is gone and the table reads right', async () => {
    const t = await createTestTable({ partitioned: false, dv: true }, BATCHES, { conflicts: 'all' })
    try {
      const loser = await t.table.begin()
      await loser.delete('id = 3')
      const staged = await orphans(t.dir)
      assert.equal(staged.length, 1, 'the loser staged one DV file')
      await t.table.delete('id = 5')
      const result = await loser.commit()
      assert.deepEqual(
        result.reconciliations.map((r) => r.kind),
        ['case2-dv-union'],
      )
      const dvs = (await commitActions(t.dir, result.version)).flatMap((a) =>
        'add' in a && a.add.deletionVector ? [a.add.deletionVector.storageType] : [],
      )
      assert.deepEqual(dvs, ['i'], 'the committed DV is inline')
      assert.deepEqual(await listDataFiles(t.dir).then((ks) => ks.filter((k) => staged.includes(k))), [])
      assert.deepEqual(await orphans(t.dir), [])
      assertSameRows(
        await scanRows(t.table),
        ALL_ROWS.filter((r) => r.id !== 3n && r.id !== 5n),
      )
    } finally {
      await t.cleanup()
    }
  })
})
