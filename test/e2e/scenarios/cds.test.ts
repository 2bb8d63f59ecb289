/**
 * Suite CDS of scenarios.md (ConflictDataSkippingSuite, Case 1: conflict-time data skipping, stats
 * and value-exact tiers) through the real engine. The standard table is T(1000,10) without
 * deletion vectors (DELETEs rewrite copy-on-write) and with `delta.isolationLevel = Serializable`,
 * so that blind appends are conflict-checked. The loser is a DELETE whose read predicate is its
 * condition; the winner is a blind append.
 *
 * The unit records (CDS-08, -09, -13, -14, -15) run as races where an outcome can show the
 * property, and call the stats filter on the real files where only a count can.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { filterFilesByStats } from '../../../src/conflict/case1-data-skipping.js'
import { createReadMatcher } from '../../../src/conflict/read-matcher.js'
import { createReadPredicate } from '../../../src/conflict/transaction-info.js'
import { parsePredicate } from '../../../src/expressions/index.js'
import type { AddFile } from '../../../src/protocol/actions.js'
import { parseStats } from '../../../src/protocol/stats.js'
import type { DeltaTable } from '../../../src/table/delta-table.js'
import type { Transaction } from '../../../src/table/transaction.js'
import {
  aborted,
  addsOf,
  assertReconciled,
  type Conflicts,
  commitActions,
  commitStaged,
  committed,
  createTable,
  FLAG,
  flags,
  liveFiles,
  liveIds,
  openTable,
  recordRead,
  settle,
  span,
  tableDir,
  tableT,
  tombstone,
  withoutStats,
  writeFiles,
} from './harness.js'

const SERIALIZABLE = { 'delta.isolationLevel': 'Serializable' }
const SKIPPING = flags(FLAG.skipping)
const VALUE_EXACT = flags(FLAG.skipping, FLAG.valueExact)
const STANDARD = span(0, 1000)
const APPENDED = span(1000, 1100)
const EVEN_APPENDED = APPENDED.filter((i) => i % 2 === 0)

const rowsOf = (ids: readonly number[]) => ids.map((i) => ({ id: BigInt(i) }))

/** The standard table, with a loser handle carrying the record's flags and a flag-less winner. */
async function standard(
  loserFlags: Conflicts,
  noStats = false,
): Promise<{ dir: string; loser: DeltaTable; winner: DeltaTable }> {
  const dir = await tableT(1000, 10, {
    dv: false,
    properties: noStats ? { ...SERIALIZABLE, 'delta.dataSkippingNumIndexedCols': '0' } : SERIALIZABLE,
  })
  return { dir, loser: await openTable(dir, loserFlags), winner: await openTable(dir, 'none') }
}

describe('CDS: conflict-time data skipping (Case 1)', () => {
  const races: readonly {
    readonly id: string
    readonly name: string
    readonly flags: Conflicts
    readonly noStats?: boolean
    readonly where: string
    readonly appended: readonly number[]
    readonly expect: 'commit' | 'abort'
    /** The live ids after a commit. */
    readonly ids?: readonly number[]
  }[] = [
    {
      id: 'CDS-01',
      name: 'disjoint data ranges: added file is skipped, no conflict',
      flags: SKIPPING,
      where: 'id < 50',
      appended: APPENDED,
      expect: 'commit',
      ids: span(50, 1100),
    },
    {
      id: 'CDS-02',
      name: 'overlapping data ranges: added file matches the predicate, still conflicts',
      flags: SKIPPING,
      where: 'id >= 950',
      appended: APPENDED,
      expect: 'abort',
    },
    {
      id: 'CDS-03',
      name: 'feature disabled: disjoint data ranges still conflict',
      flags: 'none',
      where: 'id < 50',
      appended: APPENDED,
      expect: 'abort',
    },
    {
      id: 'CDS-04',
      name: 'missing stats: disjoint ranges still conflict (one-way safety)',
      flags: SKIPPING,
      noStats: true,
      where: 'id < 50',
      appended: APPENDED,
      expect: 'abort',
    },
    {
      id: 'CDS-10',
      name: 'value-exact: modulo predicate min/max cannot skip is reconciled by actual-value scan',
      flags: VALUE_EXACT,
      where: 'id % 2 = 1',
      appended: EVEN_APPENDED,
      expect: 'commit',
      ids: [...STANDARD, ...EVEN_APPENDED].filter((i) => i % 2 === 0),
    },
    {
      id: 'CDS-11',
      name: 'value-exact disabled: modulo predicate still conflicts (stats cannot skip)',
      flags: SKIPPING,
      where: 'id % 2 = 1',
      appended: EVEN_APPENDED,
      expect: 'abort',
    },
  ]
  for (const record of races) {
    it(`${record.id} ${record.name}`, async () => {
      const { dir, loser, winner } = await standard(record.flags, record.noStats)
      const txn = await loser.begin()
      await txn.delete(record.where)
      const w = await winner.append(rowsOf(record.appended))
      const [added] = addsOf(await commitActions(dir, w.version))
      assert.ok(added)
      if (record.noStats) assert.equal(parseStats(added.stats)?.minValues, undefined, 'no column stats')
      const outcome = await settle(txn.commit())
      if (record.expect === 'commit') {
        assertReconciled(committed(outcome), [
          {
            kind: 'case1-data-skipping',
            winnerVersion: w.version,
            winnerOperation: 'WRITE',
            files: [added.path],
          },
        ])
        assert.deepEqual(await liveIds(winner), record.ids)
      } else {
        const error = aborted(outcome, {
          code: 'DELTA_CONCURRENT_APPEND',
          check: 'checkAddedFilesThatShouldHaveBeenRead',
          winnerVersion: w.version,
        })
        assert.equal(error.file, added.path)
        assert.deepEqual(await liveIds(winner), [...STANDARD, ...record.appended])
      }
    })
  }

  it('CDS-06 empty read predicates on a non-blind-append txn: added file still conflicts', async () => {
    const { loser, winner } = await standard(SKIPPING)
    const existing = (await liveFiles(loser))[0]!
    const loserFile = withoutStats((await writeFiles(loser, rowsOf(span(3000, 3010))))[0]!)
    const txn = await loser.begin()
    const winnerFile = withoutStats((await writeFiles(winner, rowsOf(span(2000, 2010))))[0]!)
    const w = await commitStaged(winner, [{ add: winnerFile }], { operation: 'WRITE' })
    txn.stageActions([{ add: loserFile }, { remove: tombstone(existing) }], { operation: 'WRITE' })
    const error = aborted(await settle(txn.commit()), {
      code: 'DELTA_CONCURRENT_APPEND',
      winnerVersion: w.version,
      refused: 'none',
    })
    assert.equal(error.file, winnerFile.path)
    assert.deepEqual(await liveIds(winner), [...STANDARD, ...span(2000, 2010)])
  })

  /** The stats tier over the standard table's real files, for one list of reads. */
  async function statsSurvivors(reads: readonly (readonly string[])[]): Promise<number[]> {
    const { loser } = await standard('none')
    const files = await liveFiles(loser)
    assert.equal(files.length, 10)
    const snap = await loser.snapshot()
    const readPredicates = reads.map((conjuncts) =>
      conjuncts.length === 0
        ? createReadPredicate({})
        : createReadPredicate({ dataPredicate: parsePredicate(conjuncts.join(' AND ')) }),
    )
    const kept = filterFilesByStats(files, { readPredicates }, createReadMatcher(snap.metadata)).kept
    return kept.map((f: AddFile) => Number(parseStats(f.stats)?.minValues?.id)).sort((a, b) => a - b)
  }

  it('CDS-08 filterFilesByDataSkipping AND-combines predicates within one read', async () => {
    assert.deepEqual(await statsSurvivors([['id >= 200', 'id < 300']]), [200])
    assert.deepEqual(await statsSurvivors([['id >= 200']]), [200, 300, 400, 500, 600, 700, 800, 900])
  })

  it('CDS-09 filterFilesMatchingAnyReadPredicate OR-combines independent reads in one call', async () => {
    assert.deepEqual(await statsSurvivors([['id >= 200', 'id < 300'], ['id >= 800']]), [200, 800, 900])
    assert.deepEqual(
      await statsSurvivors([['id >= 200', 'id < 300'], []]),
      span(0, 10).map((i) => i * 100),
    )
  })
})

describe('CDS: the value-exact scan, as races against real winner files', () => {
  /**
   * A Serializable table with no rows; L records `read` (a scan), appends one row of its own
   * (so it is not a blind append), and commits after W added `winnerFiles` in one commit.
   */
  async function race(
    loserFlags: Conflicts,
    read: (txn: Transaction) => Promise<unknown>,
    winnerRows: readonly (readonly number[])[],
  ) {
    const dir = await tableDir()
    await createTable(dir, { schema: 'id long', properties: SERIALIZABLE })
    const loser = await openTable(dir, loserFlags)
    const winner = await openTable(dir, 'none')
    const txn = await loser.begin()
    await read(txn)
    await txn.append(rowsOf([5001]))
    const files: AddFile[] = []
    for (const ids of winnerRows) files.push(...(await writeFiles(winner, rowsOf(ids))))
    assert.equal(files.length, winnerRows.length)
    const w = await commitStaged(
      winner,
      files.map((add) => ({ add })),
      { operation: 'WRITE' },
    )
    return { w, files, outcome: await settle(txn.commit()), table: winner }
  }
  const EVENS = span(0, 100).filter((i) => i % 2 === 0)
  const ODDS = span(0, 100).filter((i) => i % 2 === 1)
  const scan = (where?: string) => (txn: Transaction) =>
    txn.scan(where === undefined ? {} : { where }).toArray()

  const oneFile: readonly [string, Conflicts, string | undefined, 'commit' | 'abort'][] = [
    ['a value-exact read of odd ids drops the all-even file', VALUE_EXACT, 'id % 2 = 1', 'commit'],
    ['a value-exact read of even ids keeps it', VALUE_EXACT, 'id % 2 = 0', 'abort'],
    ['the stats tier alone keeps it (stats cannot resolve a modulo)', SKIPPING, 'id % 2 = 1', 'abort'],
    ['a value-exact check with an empty read keeps it', VALUE_EXACT, undefined, 'abort'],
  ]
  for (const [what, loserFlags, where, expect] of oneFile) {
    it(`CDS-13 filterFilesByValueExactScan drops a file whose rows never match, keeps one that does: ${what}`, async () => {
      const { w, files, outcome } = await race(loserFlags, scan(where), [EVENS])
      if (expect === 'commit') {
        assertReconciled(committed(outcome), [
          {
            kind: 'case1-data-skipping',
            winnerVersion: w.version,
            winnerOperation: 'WRITE',
            files: [files[0]!.path],
          },
        ])
      } else {
        const error = aborted(outcome, { code: 'DELTA_CONCURRENT_APPEND', winnerVersion: w.version })
        assert.equal(error.file, files[0]!.path)
      }
    })
  }

  const twoFiles: readonly [string, string, 'commit' | 'abort'][] = [
    ['odd ids: both kept', 'id % 2 = 1', 'abort'],
    ['even ids: both kept', 'id % 2 = 0', 'abort'],
    ['an impossible predicate: both dropped', 'id % 2 = 5', 'commit'],
  ]
  for (const [what, where, expect] of twoFiles) {
    it(`CDS-14 filterFilesByValueExactScan keeps all candidates if any matches, drops all if none do: ${what}`, async () => {
      const { w, files, outcome, table } = await race(VALUE_EXACT, scan(where), [ODDS, EVENS])
      if (expect === 'commit') {
        assertReconciled(committed(outcome), [
          {
            kind: 'case1-data-skipping',
            winnerVersion: w.version,
            winnerOperation: 'WRITE',
            files: files.map((f) => f.path),
          },
        ])
        assert.deepEqual(await liveIds(table), [...span(0, 100), 5001])
      } else {
        const error = aborted(outcome, { code: 'DELTA_CONCURRENT_APPEND', winnerVersion: w.version })
        // One existence question for the whole set: the file without a matching row is kept too.
        assert.ok(files.some((f) => f.path === error.file))
      }
    })
  }

  it('CDS-15 filterFilesByValueExactScan keeps all files when a predicate is unresolvable (fail-safe)', async () => {
    const { loser } = await standard('none')
    const files = await liveFiles(loser)
    const snap = await loser.snapshot()
    const readPredicates = [createReadPredicate({ dataPredicate: parsePredicate('does_not_exist = 1') })]
    assert.equal(
      filterFilesByStats(files, { readPredicates }, createReadMatcher(snap.metadata)).kept.length,
      10,
    )
    // Through the commit loop: the row question fails in the data plane, the fact stays unknown,
    // and the ten winner files are kept.
    const tenFiles = span(0, 10).map((k) => span(2000 + 10 * k, 2010 + 10 * k))
    const { w, outcome } = await race(
      VALUE_EXACT,
      (txn) => recordRead(txn, 'does_not_exist = 1', 'none'),
      tenFiles,
    )
    aborted(outcome, { code: 'DELTA_CONCURRENT_APPEND', winnerVersion: w.version })
  })
})
