/**
 * Suite DRC of scenarios.md (DeleteReadConflictDataSkippingSuite, Case 1b: the delete/read
 * row-level refinement) through the real engine. The loser records one read (a scan, or the
 * manual API's file registration) and commits a manufactured file; the winner is a real DELETE.
 * With both data-skipping flags on, the loser conflicts only when a row the winner actually
 * removed matches its read; a deletion-vector re-add of the same path carries no new row.
 *
 * The unit records DRC-01..05 (`anyRemovedRowMatchesReadPredicate`) run as these races: a
 * conflict is the function's `true`, a commit its `false`.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Transaction } from '../../../src/table/transaction.js'
import {
  aborted,
  addsOf,
  assertReconciled,
  type Conflicts,
  commitActions,
  committed,
  createTable,
  FLAG,
  flags,
  liveFiles,
  liveIds,
  openTable,
  recordRead,
  removesOf,
  setTableProperties,
  settle,
  span,
  tableDir,
  tableT,
  writeFiles,
} from './harness.js'

const ON = flags(FLAG.skipping, FLAG.valueExact)
const LOSER_IDS = span(5000, 5005)

type Read = (txn: Transaction) => Promise<void>

/** A scan that reads exactly one file, as the records check. */
const scan =
  (where?: string): Read =>
  async (txn) => {
    const s = txn.scan(where === undefined ? {} : { where })
    assert.equal((await s.plan()).files.length, 1, 'the read registered exactly one file')
    await s.toArray()
  }
/** The manual API's read: the predicate plus every live file. */
const register =
  (where: string): Read =>
  (txn) =>
    recordRead(txn, where, 'all')

/**
 * The race: L reads, W runs `winnerDelete` fully, L commits one manufactured file.
 *
 * @returns the winner's version and actions, and L's outcome
 */
async function race(dir: string, conflicts: Conflicts, read: Read, winnerDelete: string) {
  const loser = await openTable(dir, conflicts)
  const winner = await openTable(dir, conflicts)
  const manufactured = await writeFiles(
    loser,
    LOSER_IDS.map((i) => ({ id: BigInt(i) })),
  )
  const txn = await loser.begin()
  await read(txn)
  const w = await winner.delete(winnerDelete)
  txn.stageActions(
    manufactured.map((add) => ({ add })),
    { operation: 'WRITE' },
  )
  const outcome = await settle(txn.commit())
  return { w, winnerActions: await commitActions(dir, w.version), outcome, table: winner }
}

/** One file holding ids 0..99, then deletion vectors enabled (the merge-on-read set-up). */
async function mergeOnReadTable(): Promise<string> {
  const dir = await tableT(100, 1, { dv: false })
  await setTableProperties(await openTable(dir), { 'delta.enableDeletionVectors': 'true' })
  return dir
}

/** One file holding the even ids 0..98, deletion vectors off. */
async function evenTable(): Promise<string> {
  const dir = await tableDir()
  const table = await createTable(dir, { schema: 'id long' })
  await table.append(
    span(0, 100)
      .filter((i) => i % 2 === 0)
      .map((i) => ({ id: BigInt(i) })),
  )
  assert.equal((await liveFiles(table)).length, 1)
  return dir
}

describe('DRC: delete/read row-level refinement (Case 1b)', () => {
  const dvDelete: readonly [string, string, boolean][] = [
    ['id < 5', 'a removed row matches', true],
    ['id < 10', 'every removed row matches', true],
    ['id >= 50', 'no removed row matches', false],
    ['id >= 10', 'the boundary row 10 was not removed', false],
  ]
  for (const [where, what, conflict] of dvDelete) {
    it(`DRC-01 anyRemovedRowMatchesReadPredicate: true only when a removed row matches (real DVs): read ${where}, ${what}`, async () => {
      const dir = await mergeOnReadTable()
      const { w, winnerActions, outcome, table } = await race(dir, ON, scan(where), 'id < 10')
      // The winner re-added the same path with a DV of rows 0..9.
      const [add] = addsOf(winnerActions)
      assert.equal(add?.path, removesOf(winnerActions)[0]?.path)
      assert.equal(Number(add?.deletionVector?.cardinality), 10)
      if (conflict) {
        aborted(outcome, { code: 'DELTA_CONCURRENT_DELETE_READ', winnerVersion: w.version })
      } else {
        assertReconciled(committed(outcome), [
          {
            kind: 'case1b-delete-read',
            winnerVersion: w.version,
            winnerOperation: 'DELETE',
            files: [add!.path],
          },
          {
            kind: 'case1b-delete-read',
            winnerVersion: w.version,
            winnerOperation: 'DELETE',
            files: [add!.path],
          },
        ])
        assert.deepEqual(await liveIds(table), [...span(10, 100), ...LOSER_IDS])
      }
    })
  }

  const wholeFile: readonly [string, boolean][] = [
    ['id < 5', true],
    ['id >= 200', false],
  ]
  for (const [where, conflict] of wholeFile) {
    it(`DRC-02 anyRemovedRowMatchesReadPredicate: full-file removal counts every pre-image row removed: read ${where}`, async () => {
      const dir = await tableT(100, 1, { dv: false })
      const { w, winnerActions, outcome, table } = await race(dir, ON, register(where), 'id >= 0')
      assert.equal(addsOf(winnerActions).length, 0, 'no post-image')
      if (conflict) aborted(outcome, { code: 'DELTA_CONCURRENT_DELETE_READ', winnerVersion: w.version })
      else {
        const r = committed(outcome)
        assert.deepEqual(
          r.reconciliations.map((x) => x.kind),
          ['case1b-delete-read'],
        )
        assert.deepEqual(await liveIds(table), LOSER_IDS)
      }
    })
  }

  it('DRC-04 anyRemovedRowMatchesReadPredicate: a read with no eligible filter conflicts', async () => {
    const dir = await tableT(100, 1, { dv: false })
    const { w, outcome } = await race(dir, ON, scan(), 'id >= 0')
    aborted(outcome, { code: 'DELTA_CONCURRENT_DELETE_READ', winnerVersion: w.version })
  })

  it('DRC-05 anyRemovedRowMatchesReadPredicate: unresolvable predicate falls back to conflict', async () => {
    const dir = await tableT(100, 1, { dv: false })
    const { w, outcome } = await race(dir, ON, register('does_not_exist = 1'), 'id >= 0')
    aborted(outcome, { code: 'DELTA_CONCURRENT_DELETE_READ', winnerVersion: w.version })
  })

  const evenFile: readonly [string, string, Conflicts, string, boolean][] = [
    [
      'DRC-06',
      'e2e: removed rows disjoint from the read predicate -> loser commits when enabled',
      ON,
      'id % 2 = 1',
      false,
    ],
    [
      'DRC-07',
      'e2e: removed rows match the read predicate -> loser still conflicts when enabled',
      ON,
      'id % 2 = 0',
      true,
    ],
    [
      'DRC-08',
      'e2e: feature disabled -> disjoint removed rows still conflict (path-keyed)',
      'none',
      'id % 2 = 1',
      true,
    ],
  ]
  for (const [id, name, conflicts, where, conflict] of evenFile) {
    it(`${id} ${name}`, async () => {
      const dir = await evenTable()
      const { w, winnerActions, outcome, table } = await race(dir, conflicts, scan(where), 'id >= 0')
      assert.equal(addsOf(winnerActions).length, 0, 'the winner removed the whole file')
      if (conflict) {
        const error = aborted(outcome, { code: 'DELTA_CONCURRENT_DELETE_READ', winnerVersion: w.version })
        assert.equal(error.file, removesOf(winnerActions)[0]?.path)
      } else {
        assertReconciled(committed(outcome), [
          {
            kind: 'case1b-delete-read',
            winnerVersion: w.version,
            winnerOperation: 'DELETE',
            files: [removesOf(winnerActions)[0]!.path],
          },
        ])
        assert.deepEqual(await liveIds(table), LOSER_IDS)
      }
    })
  }

  it('DRC-10 e2e MoR: reader disjoint from removed rows commits (add-arm re-add is not new data)', async () => {
    const dir = await mergeOnReadTable()
    const { w, outcome, table } = await race(dir, ON, scan('id >= 50'), 'id < 10')
    const r = committed(outcome)
    // Neither the added-files check (the re-add) nor the removed-vs-read check (rows 0..9) fired.
    assert.deepEqual(
      r.reconciliations.map((x) => [x.kind, x.winnerVersion]),
      [
        ['case1b-delete-read', w.version],
        ['case1b-delete-read', w.version],
      ],
    )
    assert.deepEqual(await liveIds(table), [...span(10, 100), ...LOSER_IDS])
  })
})
