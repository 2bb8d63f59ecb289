/**
 * Case 2 (the deletion-vector union) against a MERGE loser whose matched target rows were not
 * all changed. A matched row left unchanged (a conditional WHEN MATCHED clause that did not
 * fire) still decided the MERGE's outcome: its existence kept the MERGE from inserting its source
 * row. A winner that deletes it changes what the MERGE would have done, so the union must not
 * commit the MERGE as it stands. Each test begins the loser's transaction and stages its MERGE,
 * commits the winner on the same snapshot, then commits the loser, and asserts the outcome and
 * the table's final rows against the serial order "winner; loser".
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { ConcurrentModificationError, isDeltaError } from '../../src/errors/index.js'
import type { MergeOptions } from '../../src/ops/merge-clauses.js'
import { DeltaTable } from '../../src/table/delta-table.js'

type Row = Record<string, unknown>

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

interface Race {
  readonly conflicts?: 'all' | Readonly<Record<string, boolean | number>>
  readonly properties?: Readonly<Record<string, string>>
  readonly loser: (tx: Awaited<ReturnType<DeltaTable['begin']>>) => Promise<unknown>
  readonly winner: (table: DeltaTable) => Promise<unknown>
}

interface Outcome {
  /** 'committed', or the loser's error code. */
  readonly outcome: string
  readonly message: string
  /** What the conflict's hint names as having reconciled it, if anything. */
  readonly remedy: string | undefined
  readonly kinds: readonly string[]
  /** value by id; an id seen twice is reported by the assertion in `valuesOf`. */
  readonly values: ReadonlyMap<number, number>
  readonly table: DeltaTable
}

/** Ids 1..100 with value 0, in one file; the loser's MERGE is staged, the winner commits, then the loser. */
async function race(setup: Race): Promise<Outcome> {
  const root = await mkdtemp(join(tmpdir(), 'delta-rlc-merge-case2-'))
  roots.push(root)
  const table = await DeltaTable.create(
    join(root, 't'),
    {
      schema: 'id long, value int',
      properties: { 'delta.enableDeletionVectors': 'true', ...setup.properties },
    },
    { autoCheckpoint: false, conflicts: setup.conflicts ?? 'all' },
  )
  await table.append(Array.from({ length: 100 }, (_, i) => ({ id: BigInt(i + 1), value: 0 })))
  const tx = await table.begin()
  await setup.loser(tx)
  await setup.winner(table)
  let outcome = 'committed'
  let message = ''
  let remedy: string | undefined
  let kinds: readonly string[] = []
  try {
    kinds = (await tx.commit()).reconciliations.map((r) => r.kind)
  } catch (err) {
    if (!isDeltaError(err)) throw err
    outcome = err.code
    message = err.message
    if (err instanceof ConcurrentModificationError) remedy = err.remedy
  }
  return { outcome, message, remedy, kinds, values: await valuesOf(table), table }
}

async function valuesOf(table: DeltaTable): Promise<Map<number, number>> {
  const values = new Map<number, number>()
  for (const r of await table.scan().toArray()) {
    const id = Number(r.id)
    assert.ok(!values.has(id), `id ${id} appears once`)
    values.set(id, Number(r.value))
  }
  return values
}

/** WHEN MATCHED AND source.value > target.value THEN UPDATE, WHEN NOT MATCHED THEN INSERT. */
function conditionalUpsert(
  rows: readonly [id: number, value: number][],
  extra: Partial<MergeOptions> = {},
): [Row[], MergeOptions] {
  return [
    rows.map(([id, value]) => ({ id: BigInt(id), value })),
    {
      on: 'target.id = source.id',
      whenMatched: [{ if: 'source.value > target.value', update: { value: 'source.value' } }],
      whenNotMatched: [{ insert: '*' }],
      ...extra,
    },
  ]
}

const REFUSED = /the winner deleted 1 target row\(s\) this MERGE matched and left in place/

/** The table as the serial order "winner; loser" leaves it: the loser's MERGE rerun after the winner. */
function assertSerial(
  values: ReadonlyMap<number, number>,
  expected: Readonly<Record<number, number | undefined>>,
) {
  for (const [id, v] of Object.entries(expected)) {
    assert.equal(values.get(Number(id)), v, `id ${id}`)
  }
}

describe('Case 2 and a MERGE that matched rows it left unchanged', () => {
  // Without Case 1 the winner's re-added file is the first conflict the checks meet.
  for (const [label, conflicts, code] of [
    ['every flag on', 'all', 'DELTA_CONCURRENT_DELETE_READ'],
    ['only Case 2 on', { 'rowLevelConcurrency.enabled': true }, 'DELTA_CONCURRENT_APPEND'],
  ] as const) {
    it(`a winner deleting a matched, unchanged row of the same file aborts the MERGE, which then inserts it (${label})`, async () => {
      const r = await race({
        conflicts,
        loser: (tx) =>
          tx.merge(
            ...conditionalUpsert([
              [5, 0],
              [7, 10],
            ]),
          ),
        winner: (t) => t.delete('id = 5'),
      })
      assert.equal(r.outcome, code, r.message)
      assert.match(r.message, REFUSED)
      // Only the winner committed.
      assert.equal(r.values.has(5), false)
      assert.equal(r.values.get(7), 0)
      assert.equal(r.values.size, 99)
      // Serially (winner; loser) id 5 is gone when the MERGE runs, so its source row is inserted.
      await r.table.merge(
        ...conditionalUpsert([
          [5, 0],
          [7, 10],
        ]),
      )
      const after = await valuesOf(r.table)
      assertSerial(after, { 5: 0, 7: 10 })
      assert.equal(after.size, 100)
    })
  }

  it('with every flag off, the abort names no flag for the lost-insert schedule, and Case 2 for a plain upsert', async () => {
    const lost = await race({
      conflicts: {},
      loser: (tx) =>
        tx.merge(
          ...conditionalUpsert([
            [5, 0],
            [7, 10],
          ]),
        ),
      winner: (t) => t.delete('id = 5'),
    })
    assert.equal(lost.outcome, 'DELTA_CONCURRENT_APPEND', lost.message)
    assert.equal(lost.remedy, undefined)
    const plain = await race({
      conflicts: {},
      loser: (tx) =>
        tx.merge(
          ...conditionalUpsert([
            [5, 9],
            [7, 10],
          ]),
        ),
      winner: (t) => t.delete('id = 50'),
    })
    assert.equal(plain.outcome, 'DELTA_CONCURRENT_APPEND', plain.message)
    assert.match(plain.remedy ?? '', /rowLevelConcurrency\.enabled/)
    assert.equal(plain.values.size, 99)
  })

  it('a plain upsert (every matched row changed) still reconciles through Case 2', async () => {
    const r = await race({
      loser: (tx) =>
        tx.merge(
          [5, 7, 500].map((id) => ({ id: BigInt(id), value: 3 })),
          {
            on: 'target.id = source.id',
            whenMatched: [{ update: { value: 'source.value' } }],
            whenNotMatched: [{ insert: '*' }],
          },
        ),
      winner: (t) => t.delete('id = 50'),
    })
    assert.equal(r.outcome, 'committed', r.message)
    assert.ok(r.kinds.includes('case2-dv-union'), r.kinds.join(', '))
    assertSerial(r.values, { 5: 3, 7: 3, 50: undefined, 500: 3 })
    assert.equal(r.values.size, 100)
  })

  it('a conditional upsert reconciles through Case 2 when the winner deletes a row it did not match', async () => {
    const r = await race({
      loser: (tx) =>
        tx.merge(
          ...conditionalUpsert([
            [5, 0],
            [7, 10],
            [500, 1],
          ]),
        ),
      winner: (t) => t.delete('id = 50'),
    })
    assert.equal(r.outcome, 'committed', r.message)
    assert.ok(r.kinds.includes('case2-dv-union'), r.kinds.join(', '))
    assertSerial(r.values, { 5: 0, 7: 10, 50: undefined, 500: 1 })
    assert.equal(r.values.size, 100)
  })

  it('a MERGE with only an insert and a NOT MATCHED BY SOURCE delete aborts when the winner deletes a row it matched', async () => {
    // The MERGE changes row 50 (NOT MATCHED BY SOURCE) and leaves matched row 5 in place; without
    // row 5 it would have inserted source row 5.
    const r = await race({
      loser: (tx) =>
        tx.merge([{ id: 5n, value: 9 }], {
          on: 'target.id = source.id',
          whenNotMatched: [{ insert: '*' }],
          whenNotMatchedBySource: [{ if: 'target.id = 50', delete: true }],
        }),
      winner: (t) => t.delete('id = 5'),
    })
    assert.equal(r.outcome, 'DELTA_CONCURRENT_DELETE_READ', r.message)
    assert.match(r.message, REFUSED)
    assertSerial(r.values, { 5: undefined, 50: 0 })
    assert.equal(r.values.size, 99)
  })

  it('a row a NOT MATCHED BY SOURCE condition left in place may be deleted by the winner: Case 2 reconciles', async () => {
    // Row 60 matched no source row and the clause's condition did not hold for it: its fate was
    // its own, so the winner deleting it changes nothing else the MERGE did (serially the same).
    const r = await race({
      loser: (tx) =>
        tx.merge(
          ...conditionalUpsert(
            [
              [5, 0],
              [7, 10],
            ],
            { whenNotMatchedBySource: [{ if: 'target.id = 50', delete: true }] },
          ),
        ),
      winner: (t) => t.delete('id = 60'),
    })
    assert.equal(r.outcome, 'committed', r.message)
    assert.ok(r.kinds.includes('case2-dv-union'), r.kinds.join(', '))
    assertSerial(r.values, { 5: 0, 7: 10, 50: undefined, 60: undefined })
    assert.equal(r.values.size, 98)
  })
})
