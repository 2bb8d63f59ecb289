/**
 * Case 4a: a compaction OPTIMIZE (loser) against a DML (winner), at the action level
 * (scenarios.md OCR-01..08, the decisions 6 and 10 of design/README.md, and successive winners on
 * one source, which compose through the re-pointed tombstone's `remappedCompactionInfo`).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { ConflictCheckResult } from '../../../src/conflict/check-conflicts.js'
import { DEFAULT_CONFLICT_FLAGS } from '../../../src/conflict/flags.js'
import { planConflictFetches } from '../../../src/conflict/plan-fetches.js'
import type { TransactionInfo } from '../../../src/conflict/transaction-info.js'
import { initDeletionVectors } from '../../../src/dv/initialization.js'
import type { AddFile, RemoveFile } from '../../../src/protocol/actions.js'
import {
  parseOptimizeSourceComposition,
  REMAPPED_COMPACTION_INFO_TAG,
} from '../../../src/protocol/composition-tags.js'
import {
  compaction,
  dmlWinner,
  dvUpdate,
  optimizeLoser,
  output,
  rowsOf,
  source,
} from './compaction-fixture.js'
import { A, add, check, DvStore, flagsWith, inlineDv, outcomeOf, removeOf } from './factories.js'

await initDeletionVectors()

const ON = flagsWith({ optimizeReconciliation: true })

function adds(r: ConflictCheckResult): AddFile[] {
  if (r.kind !== 'ok') throw new TypeError(`expected ok, got ${r.error.message}`)
  return r.txn.actions.flatMap((a) => ('add' in a ? [a.add] : []))
}
function removes(r: ConflictCheckResult): RemoveFile[] {
  if (r.kind !== 'ok') throw new TypeError('expected ok')
  return r.txn.actions.flatMap((a) => ('remove' in a ? [a.remove] : []))
}

interface Race {
  /** Read-time DV of s1 (as committed before OPTIMIZE read it). */
  readonly s1Base?: readonly number[]
  /** The winner's deletion: [source index, physical rows newly deleted]. */
  readonly winnerDeletes: readonly [number, readonly number[]]
  readonly winnerImage?: boolean
  readonly tagged?: boolean
}

function race(r: Race, flags = ON) {
  const store = new DvStore()
  const base = r.s1Base ? store.dv('base', r.s1Base) : undefined
  const sources = [source(0), source(1, base), source(2)]
  const txn = optimizeLoser(sources, compaction(sources, { tagged: r.tagged ?? true }))
  const [k, rows] = r.winnerDeletes
  const target = sources[k]!
  const pre = k === 1 ? (r.s1Base ?? []) : []
  const post = store.dv('winner', [...pre, ...rows])
  const w = dmlWinner(
    2n,
    dvUpdate(target, post, r.winnerImage ? add('image.parquet') : undefined),
    r.winnerImage ? 'UPDATE' : 'DELETE',
  )
  return {
    txn,
    w,
    post,
    store,
    result: check(txn, w, flags, store.facts()),
    plan: planConflictFetches(txn, w, flags),
  }
}

describe('Case 4a remaps a winner DML onto the losing compaction (OCR)', () => {
  const commits: readonly [string, Race, number[]][] = [
    ['OCR-01 DELETE id=150 (row 50 of s1)', { winnerDeletes: [1, [50]] }, [150]],
    [
      'OCR-02 DELETE id=150 when s1 already had DV {0}: lands at 100 + (50 - 1)',
      { s1Base: [0], winnerDeletes: [1, [50]] },
      [149],
    ],
    [
      'OCR-03 DELETE id=250 in DV-free s2 after s1 lost a row: 199 + 50',
      { s1Base: [0], winnerDeletes: [2, [50]] },
      [249],
    ],
    [
      'OCR-05 UPDATE id=150 (DV on s1 plus an image file)',
      { winnerDeletes: [1, [50]], winnerImage: true },
      [150],
    ],
    ['several rows of s0, including the first and the last', { winnerDeletes: [0, [0, 7, 99]] }, [0, 7, 99]],
  ]
  for (const [id, r, expected] of commits) {
    it(`${id}: both commit, the output carries DV ${JSON.stringify(expected)}`, () => {
      const { result, post, w, txn } = race(r)
      assert.equal(outcomeOf(result), 'ok')
      const out = adds(result)
      assert.equal(out.length, 1)
      assert.deepEqual(rowsOf(out[0]!.deletionVector), expected)
      assert.equal(out[0]!.dataChange, false)
      assert.equal(JSON.parse(out[0]!.stats!).tightBounds, false)
      // F2: every remove of the reconciled OPTIMIZE stays dataChange=false.
      const tombs = removes(result)
      assert.equal(tombs.length, 3)
      assert.ok(tombs.every((t) => t.dataChange === false))
      const target = tombs.find((t) => t.path === `s${r.winnerDeletes[0]}.parquet`)!
      assert.deepEqual(target.deletionVector, post)
      assert.equal(target.tags?.compactedInto, undefined)
      if (result.kind !== 'ok') return
      assert.deepEqual(
        result.reconciliations.map((x) => [
          x.kind,
          x.winnerVersion,
          x.winnerOperation,
          x.detail.files,
          x.detail.rows,
        ]),
        [['case4a-forward-remap', 2n, w.operation, [target.path], expected.length]],
      )
      // The re-pointed tombstone keeps the source's run, ranked against the read-time DV.
      const outputs = new Set(['out.parquet'])
      const before = txn.actions
        .flatMap((a) => ('remove' in a ? [a.remove] : []))
        .find((t) => t.path === target.path)!
      assert.deepEqual(
        parseOptimizeSourceComposition(target, outputs),
        parseOptimizeSourceComposition(before, outputs),
      )
      assert.ok(target.tags?.[REMAPPED_COMPACTION_INFO_TAG] !== undefined)
      // The source stays read, as the winner left it: a later winner is checked against it.
      assert.equal(result.txn.readFiles.get(target.path), w.addedFilesByPath.get(target.path))
      assert.equal(result.newDeletionVectors.length, 1)
      assert.equal(result.newDeletionVectors[0]!.dataFilePath, 'out.parquet')
    })
  }

  const aborts: readonly [string, Race, ReturnType<typeof flagsWith>][] = [
    ['OCR-07 a ZORDER loser writes no composition tag', { winnerDeletes: [1, [50]], tagged: false }, ON],
    ['OCR-08 a repartition loser writes no composition tag', { winnerDeletes: [1, [50]], tagged: false }, ON],
    ['the forward flag off', { winnerDeletes: [1, [50]] }, DEFAULT_CONFLICT_FLAGS],
  ]
  for (const [id, r, flags] of aborts) {
    it(`${id}: the OPTIMIZE aborts`, () => {
      const { result } = race(r, flags)
      assert.equal(outcomeOf(result), 'ConcurrentDeleteReadError')
    })
  }

  it('plans the read-time DV and the winner DV of the shared source', () => {
    const { plan, post, store } = race({ s1Base: [0], winnerDeletes: [1, [50]] })
    assert.deepEqual(
      plan.deletionVectors.map((d) => d.key).sort(),
      [...store.facts().deletionVectors.keys()].sort(),
    )
    assert.ok(plan.deletionVectors.some((d) => d.descriptor === post))
  })
})

describe('Case 4a safety rules', () => {
  it('successive winners on the same source compose: the second one is remapped too', () => {
    const { result, store, post } = race({ winnerDeletes: [1, [50]] })
    const txn = (result as { txn: TransactionInfo }).txn
    const s1AfterW1 = { ...source(1), deletionVector: post }
    const w2Dv = store.dv('w2', [50, 60])
    const second = check(txn, dmlWinner(3n, dvUpdate(s1AfterW1, w2Dv)), ON, store.facts())
    assert.equal(outcomeOf(second), 'ok')
    assert.deepEqual(rowsOf(adds(second)[0]!.deletionVector), [150, 160])
    const tomb = removes(second).find((t) => t.path === 's1.parquet')!
    assert.deepEqual(tomb.deletionVector, w2Dv)
    assert.deepEqual(
      parseOptimizeSourceComposition(tomb, new Set(['out.parquet']))?.readDeletionVector,
      undefined,
    )
    if (second.kind === 'ok') assert.equal(second.reconciliations[0]?.detail.rows, 1)
  })

  it('successive winners rank rows against the read-time DV, not the previous winner', () => {
    // s1 had {0} when OPTIMIZE read it: rows 50 and 60 land at 100 + 49 and 100 + 59. Ranked
    // against the first winner's {0, 50}, row 60 would land one row too early, at 158.
    const { result, store, post } = race({ s1Base: [0], winnerDeletes: [1, [50]] })
    const txn = (result as { txn: TransactionInfo }).txn
    const s1AfterW1 = { ...source(1), deletionVector: post }
    const second = check(
      txn,
      dmlWinner(3n, dvUpdate(s1AfterW1, store.dv('w2', [0, 50, 60]))),
      ON,
      store.facts(),
    )
    assert.deepEqual(rowsOf(adds(second)[0]!.deletionVector), [149, 159])
    const tomb = removes(second).find((t) => t.path === 's1.parquet')!
    assert.equal(
      parseOptimizeSourceComposition(
        tomb,
        new Set(['out.parquet']),
      )?.readDeletionVector?.pathOrInlineDv.startsWith('base'),
      true,
    )
  })

  it("a second winner whose pre-image is the read-time DV, not the re-pointed tombstone's, aborts", () => {
    const { result, store } = race({ winnerDeletes: [1, [50]] })
    const txn = (result as { txn: TransactionInfo }).txn
    const second = check(txn, dmlWinner(3n, dvUpdate(source(1), store.dv('w2', [60]))), ON, store.facts())
    assert.equal(second.kind, 'conflict')
    if (second.kind === 'conflict') assert.match(second.error.reconcileRefused ?? '', /pre-image/)
  })

  it('a re-pointed tombstone whose read-time DV the loop did not load makes the remap refuse', () => {
    const { result, store, post } = race({ s1Base: [0], winnerDeletes: [1, [50]] })
    const txn = (result as { txn: TransactionInfo }).txn
    const w2 = dmlWinner(3n, dvUpdate({ ...source(1), deletionVector: post }, store.dv('w2', [0, 50, 60])))
    const facts = store.facts()
    const withoutBase = new Map([...facts.deletionVectors].filter(([k]) => !k.startsWith('ubase')))
    const second = check(txn, w2, ON, { deletionVectors: withoutBase, rowMatches: new Map() })
    assert.equal(second.kind, 'conflict')
    if (second.kind === 'conflict') assert.match(second.error.reconcileRefused ?? '', /not loaded/)
    const plan = planConflictFetches(txn, w2, ON)
    assert.ok(plan.deletionVectors.some((d) => d.key.startsWith('ubase')))
  })

  it('different sources across successive winners compose on the same output', () => {
    const { result, store } = race({ winnerDeletes: [1, [50]] })
    const txn = (result as { txn: TransactionInfo }).txn
    const w2 = dmlWinner(3n, dvUpdate(source(2), store.dv('w2', [0, 50])))
    const second = check(txn, w2, ON, store.facts())
    assert.deepEqual(rowsOf(adds(second)[0]!.deletionVector), [150, 200, 250])
  })

  it('decision 6: a winner that re-adds a source with no new deletion reconciles as a no-op', () => {
    const store = new DvStore()
    const base = store.dv('base', [0])
    const sources = [source(0), source(1, base), source(2)]
    const txn = optimizeLoser(sources)
    const same = store.dv('rewritten', [0])
    const result = check(txn, dmlWinner(2n, dvUpdate(sources[1]!, same)), ON, store.facts())
    assert.equal(outcomeOf(result), 'ok')
    assert.equal(adds(result)[0]!.deletionVector, undefined)
    assert.deepEqual(removes(result).find((t) => t.path === 's1.parquet')?.deletionVector, same)
    if (result.kind === 'ok') assert.equal(result.reconciliations[0]?.detail.rows, 0)
  })

  it('decision 10: a winner whose post-image lacks read-time deletions (a restore) aborts', () => {
    const store = new DvStore()
    const base = store.dv('base', [0, 1])
    const sources = [source(0), source(1, base), source(2)]
    const result = check(
      optimizeLoser(sources),
      dmlWinner(2n, dvUpdate(sources[1]!, store.dv('w', [1, 50]))),
      ON,
      store.facts(),
    )
    assert.equal(result.kind, 'conflict')
    if (result.kind === 'conflict') assert.match(result.error.reconcileRefused ?? '', /restored/)
  })

  it("decision 10: a winner whose pre-image is not the compaction's read-time DV aborts", () => {
    const store = new DvStore()
    const sources = [source(0), source(1, store.dv('base', [0])), source(2)]
    const winnerPre = source(1, store.dv('other', [0]))
    const result = check(
      optimizeLoser(sources),
      dmlWinner(2n, dvUpdate(winnerPre, store.dv('w', [0, 50]))),
      ON,
      store.facts(),
    )
    assert.equal(result.kind, 'conflict')
    if (result.kind === 'conflict') assert.match(result.error.reconcileRefused ?? '', /pre-image/)
  })

  it('a winner that removes a source whole: the rest of its run is deleted in the output', () => {
    const store = new DvStore()
    const sources = [source(0), source(1, store.dv('base', [0, 1])), source(2)]
    const txn = optimizeLoser(sources)
    // s1 sits at [100, 198): its 98 rows live at compaction time all leave.
    const result = check(txn, dmlWinner(2n, [A.remove(removeOf(sources[1]!))]), ON, store.facts())
    assert.equal(outcomeOf(result), 'ok')
    assert.deepEqual(
      rowsOf(adds(result)[0]!.deletionVector),
      Array.from({ length: 98 }, (_, i) => 100 + i),
    )
    const before = txn.actions.flatMap((a) => ('remove' in a ? [a.remove] : []))
    assert.deepEqual(removes(result), before, 'the tombstones are unchanged')
    if (result.kind === 'ok') {
      assert.deepEqual(result.reconciliations[0]?.detail, { files: ['s1.parquet'], rows: 98 })
      assert.equal(result.txn.readFiles.has('s1.parquet'), false)
    }
  })

  it('a whole removal after an earlier winner on the same source deletes only what was still live', () => {
    const { result, store, post } = race({ s1Base: [0], winnerDeletes: [1, [50]] })
    const txn = (result as { txn: TransactionInfo }).txn
    const gone = check(
      txn,
      dmlWinner(3n, [A.remove(removeOf({ ...source(1), deletionVector: post }))]),
      ON,
      store.facts(),
    )
    // s1 holds physical rows 1..99 at [100, 199); row 50 was remapped already (output row 149).
    assert.deepEqual(
      rowsOf(adds(gone)[0]!.deletionVector),
      Array.from({ length: 99 }, (_, i) => 100 + i),
    )
    if (gone.kind === 'ok') assert.equal(gone.reconciliations[0]?.detail.rows, 98)
  })

  it('a whole removal whose pre-image is not the compaction read aborts', () => {
    const store = new DvStore()
    const sources = [source(0), source(1, store.dv('base', [0])), source(2)]
    const w = dmlWinner(2n, [A.remove(removeOf(source(1, store.dv('other', [0]))))])
    const result = check(optimizeLoser(sources), w, ON, store.facts())
    assert.equal(result.kind, 'conflict')
    if (result.kind === 'conflict') assert.match(result.error.reconcileRefused ?? '', /pre-image/)
  })

  it('a winner that relocates a source (another compaction, dataChange=false) is not remapped', () => {
    const sources = [source(0), source(1), source(2)]
    const other = compaction([sources[1]!], { out: output([sources[1]!], 'other.parquet') })
    const result = check(optimizeLoser(sources), dmlWinner(2n, other, 'OPTIMIZE'), ON)
    assert.equal(result.kind, 'conflict')
    if (result.kind === 'conflict')
      assert.match(result.error.reconcileRefused ?? '', /without deleting its rows/)
  })

  it('a run that overflows its output aborts; a run that fits is remapped', () => {
    const sources = [source(0), source(1), source(2)]
    const tooSmall = { ...output(sources), stats: '{"numRecords":250}' }
    const store = new DvStore()
    const txn = () => optimizeLoser(sources, compaction(sources, { out: tooSmall }))
    // s1 sits at [100, 200): it fits a 250-row output.
    const fits = check(txn(), dmlWinner(2n, dvUpdate(sources[1]!, store.dv('w1', [50]))), ON, store.facts())
    assert.deepEqual(rowsOf(adds(fits)[0]!.deletionVector), [150])
    // s2 claims [200, 300): it does not.
    const overflow = check(
      txn(),
      dmlWinner(2n, dvUpdate(sources[2]!, store.dv('w2', [60]))),
      ON,
      store.facts(),
    )
    assert.equal(overflow.kind, 'conflict')
    if (overflow.kind === 'conflict') assert.match(overflow.error.reconcileRefused ?? '', /overflows/)
  })

  it('a deleted row beyond the run the tag records aborts', () => {
    const sources = [source(0), source(1, undefined, 50), source(2)]
    const store = new DvStore()
    const w = dmlWinner(2n, dvUpdate(sources[1]!, store.dv('w', [70])))
    const result = check(optimizeLoser(sources), w, ON, store.facts())
    assert.equal(result.kind, 'conflict')
    if (result.kind === 'conflict') assert.match(result.error.reconcileRefused ?? '', /outside/)
  })

  it('a deletion vector the loop did not load makes the remap refuse', () => {
    const store = new DvStore()
    const sources = [source(0), source(1), source(2)]
    const w = dmlWinner(2n, dvUpdate(sources[1]!, store.dv('w', [50])))
    const result = check(optimizeLoser(sources), w, ON, { deletionVectors: new Map(), rowMatches: new Map() })
    assert.equal(result.kind, 'conflict')
    if (result.kind === 'conflict') assert.match(result.error.reconcileRefused ?? '', /not loaded/)
  })

  it('two outputs: each gets its own deletion vector', () => {
    const store = new DvStore()
    const sources = [source(0), source(1), source(2)]
    const outA = output([sources[0]!, sources[1]!], 'outA.parquet')
    const outB = output([sources[2]!], 'outB.parquet')
    const actions = [
      ...compaction([sources[0]!, sources[1]!], { out: outA }),
      ...compaction([sources[2]!], { out: outB }),
    ]
    let txn = optimizeLoser(sources, actions)
    const r1 = check(txn, dmlWinner(2n, dvUpdate(sources[1]!, store.dv('w1', [5]))), ON, store.facts())
    txn = (r1 as { txn: TransactionInfo }).txn
    const r2 = check(txn, dmlWinner(3n, dvUpdate(sources[2]!, store.dv('w2', [7]))), ON, store.facts())
    const byPath = new Map(adds(r2).map((f) => [f.path, rowsOf(f.deletionVector)]))
    assert.deepEqual(byPath.get('outA.parquet'), [105])
    assert.deepEqual(byPath.get('outB.parquet'), [7])
  })

  it('an inline deletion vector from the winner needs no fetch', () => {
    const sources = [source(0), source(1), source(2)]
    const w = dmlWinner(2n, dvUpdate(sources[1]!, inlineDv([50])))
    const txn = optimizeLoser(sources)
    assert.deepEqual(planConflictFetches(txn, w, ON).deletionVectors, [])
    assert.deepEqual(rowsOf(adds(check(txn, w, ON))[0]!.deletionVector), [150])
  })
})
