/**
 * A conflict that a conflicts flag or a table property would have reconciled names it in the
 * hint, and only then: the flag is named after the same check passed with it on, deletion
 * vectors when both transactions changed the same file's rows on a table without them. A true
 * conflict names nothing. Each case runs two real transactions on a temp table, and checks that
 * the loser committed nothing.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { ConcurrentModificationError } from '../../src/errors/index.js'
import { DeltaTable } from '../../src/table/delta-table.js'
import type { Transaction } from '../../src/table/transaction.js'

const RERUN = 'This transaction was not committed; rerun it against the latest version of the table.'
const FLAG_KEYS = [
  'rowLevelConcurrency.enabled',
  'conflictDetection.dataSkipping.enabled',
  'conflictDetection.dataSkipping.valueExact.enabled',
  'conflictDetection.excludeNoDataChangeFiles.enabled',
  'optimize.conflictReconciliation.enabled',
  'optimize.conflictReconciliation.reverse.enabled',
  'merge.sourceKeyReadPredicate.enabled',
]

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

interface Case {
  readonly name: string
  /** `delta.enableDeletionVectors` of the table. */
  readonly dv: boolean
  readonly conflicts: 'all' | Readonly<Record<string, boolean>>
  /** Stages the losing transaction's operation. */
  readonly loser: (tx: Transaction) => Promise<unknown>
  /** Commits the winner, on the table, while the loser is open. */
  readonly winner: (table: DeltaTable) => Promise<unknown>
  readonly code: string
  /** Backquoted names the hint must carry; empty for "nothing named". */
  readonly named: readonly string[]
  /** A reason the message must give for a refused reconciliation. */
  readonly refused?: string
}

const deleteId = (id: number) => (tx: Transaction) => tx.delete(`id = ${id}`)
const winnerDeletes = (id: number) => (table: DeltaTable) => table.delete(`id = ${id}`)

const CASES: readonly Case[] = [
  {
    name: "disjoint deletes without deletion vectors under conflicts: 'all' name the table property",
    dv: false,
    conflicts: 'all',
    loser: deleteId(2),
    winner: winnerDeletes(1),
    code: 'DELTA_CONCURRENT_APPEND',
    named: ['delta.enableDeletionVectors=true'],
  },
  {
    name: 'disjoint deletes without deletion vectors and flags off name the property and the flag',
    dv: false,
    conflicts: {},
    loser: deleteId(2),
    winner: winnerDeletes(1),
    code: 'DELTA_CONCURRENT_APPEND',
    named: ['delta.enableDeletionVectors=true', 'rowLevelConcurrency.enabled'],
  },
  {
    name: 'disjoint deletes with deletion vectors and flags off name rowLevelConcurrency.enabled',
    dv: true,
    conflicts: {},
    loser: deleteId(2),
    winner: winnerDeletes(1),
    code: 'DELTA_CONCURRENT_APPEND',
    named: ['rowLevelConcurrency.enabled'],
  },
  {
    name: 'deletes of the same row with deletion vectors and flags off name nothing',
    dv: true,
    conflicts: {},
    loser: deleteId(1),
    winner: winnerDeletes(1),
    code: 'DELTA_CONCURRENT_APPEND',
    named: [],
  },
  {
    name: "deletes of the same row under conflicts: 'all' name nothing and say why the union was refused",
    dv: true,
    conflicts: 'all',
    loser: deleteId(1),
    winner: winnerDeletes(1),
    code: 'DELTA_CONCURRENT_DELETE_READ',
    named: [],
    refused: 'both transactions deleted the same 1 row(s)',
  },
  {
    name: 'an OPTIMIZE losing to a DELETE with Case 4a off names optimize.conflictReconciliation.enabled',
    dv: true,
    conflicts: {},
    loser: (tx) => tx.optimize(),
    winner: winnerDeletes(1),
    code: 'DELTA_CONCURRENT_DELETE_READ',
    named: ['optimize.conflictReconciliation.enabled'],
  },
  {
    name: 'a DELETE losing to an OPTIMIZE with Case 4b off names optimize.conflictReconciliation.reverse.enabled',
    dv: true,
    conflicts: {},
    loser: deleteId(1),
    winner: (table) => table.optimize(),
    code: 'DELTA_CONCURRENT_APPEND',
    named: ['optimize.conflictReconciliation.reverse.enabled'],
  },
]

/** A table of ids 1..6 in two files (1-3 and 4-6). */
async function twoFileTable(c: Case): Promise<DeltaTable> {
  const root = await mkdtemp(join(tmpdir(), 'delta-rlc-conflict-remedies-'))
  roots.push(root)
  const table = await DeltaTable.create(
    join(root, 't'),
    { schema: 'id long not null', properties: { 'delta.enableDeletionVectors': String(c.dv) } },
    { conflicts: c.conflicts },
  )
  await table.append([{ id: 1n }, { id: 2n }, { id: 3n }])
  await table.append([{ id: 4n }, { id: 5n }, { id: 6n }])
  return table
}

async function ids(table: DeltaTable): Promise<bigint[]> {
  return (await table.scan().toArray()).map((r) => r.id as bigint).sort((a, b) => Number(a - b))
}

describe('conflict hints name what would reconcile', () => {
  for (const c of CASES) {
    it(c.name, async () => {
      const table = await twoFileTable(c)
      try {
        const tx = await table.begin()
        await c.loser(tx)
        await c.winner(table)
        const before = await table.snapshot()
        const rowsBefore = await ids(table)
        const err = await tx.commit().then(
          () => assert.fail('the loser committed'),
          (e: unknown) => e,
        )
        assert.ok(err instanceof ConcurrentModificationError, String(err))
        assert.equal(err.code, c.code, err.message)
        const hint = err.hint ?? ''
        assert.ok(hint.startsWith(RERUN), hint)
        if (c.named.length === 0) {
          assert.equal(hint, RERUN)
          assert.equal(err.remedy, undefined)
        }
        for (const name of c.named) assert.ok(hint.includes(`\`${name}\``), `${name} not in: ${hint}`)
        // Nothing it would not help: no other flag, no property unless expected.
        for (const key of FLAG_KEYS) {
          if (!c.named.includes(key)) assert.ok(!hint.includes(`\`${key}\``), `${key} in: ${hint}`)
        }
        if (!c.named.includes('delta.enableDeletionVectors=true')) {
          assert.ok(!hint.includes('delta.enableDeletionVectors'), hint)
        }
        if (c.refused !== undefined) assert.ok(err.message.includes(c.refused), err.message)
        // The loser committed nothing: the version and the rows are the winner's.
        assert.equal((await table.snapshot()).version, before.version)
        assert.deepEqual(await ids(table), rowsBefore)
      } finally {
        await table.close()
      }
    })
  }
})

describe('explainConflicts: false', () => {
  it('aborts with the bare file-level hint: nothing named, no remedy, nothing committed', async () => {
    const root = await mkdtemp(join(tmpdir(), 'delta-rlc-conflict-remedies-'))
    roots.push(root)
    const location = join(root, 't')
    const created = await DeltaTable.create(location, {
      schema: 'id long not null',
      properties: { 'delta.enableDeletionVectors': 'true' },
    })
    await created.append([{ id: 1n }, { id: 2n }, { id: 3n }])
    await created.close()
    const table = await DeltaTable.open(location, { conflicts: {}, explainConflicts: false })
    try {
      const tx = await table.begin()
      await tx.delete('id = 2')
      await table.delete('id = 1')
      const err = await tx.commit().then(
        () => assert.fail('the loser committed'),
        (e: unknown) => e,
      )
      assert.ok(err instanceof ConcurrentModificationError, String(err))
      assert.equal(err.code, 'DELTA_CONCURRENT_APPEND')
      assert.equal(err.hint, RERUN)
      assert.equal(err.remedy, undefined)
      assert.deepEqual(await ids(table), [2n, 3n])
    } finally {
      await table.close()
    }
  })

  it('is checked like every open option', async () => {
    await assert.rejects(
      DeltaTable.open('/nonexistent', { explainConflicts: 'no' as unknown as boolean }),
      (e: unknown) => e instanceof Error && 'code' in e && e.code === 'DELTA_INVALID_ARGUMENT',
    )
  })
})
