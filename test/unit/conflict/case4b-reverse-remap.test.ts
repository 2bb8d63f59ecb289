/**
 * Case 4b: a DML (loser) against a compaction OPTIMIZE (winner), at the action level
 * (scenarios.md OCR-09, OCR-12..16, the H1 guard of Appendix C item 8, and rlc-spec 9.5).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { ConflictCheckResult } from '../../../src/conflict/check-conflicts.js'
import { DEFAULT_CONFLICT_FLAGS } from '../../../src/conflict/flags.js'
import { planConflictFetches } from '../../../src/conflict/plan-fetches.js'
import type { TransactionInfo } from '../../../src/conflict/transaction-info.js'
import { initDeletionVectors } from '../../../src/dv/initialization.js'
import type { Action, AddFile, DeletionVectorDescriptor } from '../../../src/protocol/actions.js'
import {
  parseOptimizeSourceComposition,
  withRemappedComposition,
} from '../../../src/protocol/composition-tags.js'
import { compaction, dmlWinner, dvUpdate, output, rowsOf, source } from './compaction-fixture.js'
import {
  A,
  add,
  check,
  DV_PROTOCOL,
  DvStore,
  dvMeta,
  flagsWith,
  inlineDv,
  loser,
  meta,
  outcomeOf,
  removeOf,
  winner,
} from './factories.js'

await initDeletionVectors()

const ON = flagsWith({ optimizeReverseReconciliation: true })

function dmlLoser(
  sources: readonly AddFile[],
  actions: readonly Action[],
  operation = 'DELETE',
  where = 'id = 150',
) {
  return loser({
    metadata: dvMeta(),
    protocol: DV_PROTOCOL,
    files: sources,
    reads: [{ scan: where }],
    actions,
    operation,
  })
}

function optimizeWinner(version: bigint, actions: readonly Action[]) {
  return winner(version, actions, { operation: 'OPTIMIZE', blind: false })
}

function describeActions(r: ConflictCheckResult): string[] {
  if (r.kind !== 'ok') throw new TypeError(`expected ok, got ${r.error.message}`)
  return r.txn.actions.map((a) => {
    if ('add' in a)
      return `add ${a.add.path} dc=${a.add.dataChange} dv=${JSON.stringify(rowsOf(a.add.deletionVector))}`
    if ('remove' in a)
      return `remove ${a.remove.path} dc=${a.remove.dataChange} dv=${a.remove.deletionVector ? 'yes' : 'none'}`
    return Object.keys(a)[0]!
  })
}

describe('Case 4b remaps a losing DML onto the winning compaction (OCR)', () => {
  it('OCR-12 a losing DELETE id=150 is remapped onto the output', () => {
    const sources = [source(0), source(1), source(2)]
    const txn = dmlLoser(sources, dvUpdate(sources[1]!, inlineDv([50])))
    const result = check(txn, optimizeWinner(2n, compaction(sources)), ON)
    assert.deepEqual(describeActions(result), [
      'remove out.parquet dc=true dv=none',
      'add out.parquet dc=true dv=[150]',
    ])
    if (result.kind !== 'ok') return
    assert.deepEqual(
      result.reconciliations.map((x) => [x.kind, x.winnerOperation, x.detail.files, x.detail.rows]),
      [['case4b-reverse-remap', 'OPTIMIZE', ['s1.parquet'], 1]],
    )
    // The source read left the table whole: the next winner is checked against the output.
    assert.deepEqual([...result.txn.readFiles.keys()], ['out.parquet'])
    const reAdded = result.txn.actions[1]
    assert.ok(reAdded && 'add' in reAdded)
    assert.equal(JSON.parse(reAdded.add.stats!).numRecords, 300)
    assert.equal(JSON.parse(reAdded.add.stats!).tightBounds, false)
    assert.equal(result.newDeletionVectors[0]?.descriptor, reAdded.add.deletionVector)
  })

  it('OCR-12 with a read-time DV {0} on s1: the new deletion lands at 100 + (50 - 1)', () => {
    const store = new DvStore()
    const base = store.dv('base', [0])
    const sources = [source(0), source(1, base), source(2)]
    const txn = dmlLoser(sources, dvUpdate(sources[1]!, inlineDv([0, 50])))
    const w = optimizeWinner(2n, compaction(sources))
    assert.deepEqual(
      planConflictFetches(txn, w, ON).deletionVectors.map((d) => d.descriptor),
      [base],
    )
    const result = check(txn, w, ON, store.facts())
    assert.deepEqual(describeActions(result), [
      'remove out.parquet dc=true dv=none',
      'add out.parquet dc=true dv=[149]',
    ])
  })

  it('OCR-14 a losing UPDATE keeps its image file and remaps its DV', () => {
    const sources = [source(0), source(1), source(2)]
    const txn = dmlLoser(sources, dvUpdate(sources[1]!, inlineDv([50]), add('image.parquet')), 'UPDATE')
    const result = check(txn, optimizeWinner(2n, compaction(sources)), ON)
    assert.deepEqual(describeActions(result), [
      'add image.parquet dc=true dv=[]',
      'remove out.parquet dc=true dv=none',
      'add out.parquet dc=true dv=[150]',
    ])
  })

  it('a DML that touched a compacted source without deleting anything new is dropped as a no-op (decision 6)', () => {
    const store = new DvStore()
    const base = store.dv('base', [3])
    const sources = [source(0), source(1, base), source(2)]
    const txn = dmlLoser(sources, [...dvUpdate(sources[1]!, inlineDv([3])), A.add(add('other.parquet'))])
    const result = check(txn, optimizeWinner(2n, compaction(sources)), ON, store.facts())
    assert.deepEqual(describeActions(result), ['add other.parquet dc=true dv=[]'])
  })

  const aborts: readonly [
    string,
    (sources: AddFile[]) => Action[],
    ReturnType<typeof flagsWith>,
    RegExp | undefined,
  ][] = [
    ['OCR-09 reverse flag off', (s) => compaction(s), DEFAULT_CONFLICT_FLAGS, undefined],
    [
      'OCR-15 the OPTIMIZE recorded no composition',
      (s) => compaction(s, { tagged: false }),
      ON,
      /no usable composition/,
    ],
    [
      'OCR-16 a ZORDER winner (untagged)',
      (s) => compaction(s, { tagged: false }),
      ON,
      /no usable composition/,
    ],
    [
      'a winner that also adds a file no source was compacted into',
      (s) => [...compaction(s), A.add(add('stray.parquet', { dataChange: false }))],
      ON,
      /no source was compacted into/,
    ],
    [
      'a winner whose output changes data',
      (s) => compaction(s, { out: add('out.parquet', { stats: { numRecords: 300 } }) }),
      ON,
      /more than relocated/,
    ],
  ]
  for (const [id, winnerActions, flags, refused] of aborts) {
    it(`${id}: the DML aborts`, () => {
      const sources = [source(0), source(1), source(2)]
      const txn = dmlLoser(sources, dvUpdate(sources[1]!, inlineDv([50])))
      const result = check(txn, optimizeWinner(2n, winnerActions(sources)), flags)
      assert.equal(result.kind, 'conflict')
      if (result.kind === 'conflict' && refused) assert.match(result.error.reconcileRefused ?? '', refused)
    })
  }

  it('OCR-17 shape: a full-file delete of one source and a DV delete of another are both remapped', () => {
    // The catalogue expects an abort here (the reference implementation could only remap DVs);
    // a whole removal is remapped too, row by row, so nothing is blanket-marked or resurrected.
    const sources = [source(0), source(1), source(2)]
    const txn = dmlLoser(sources, [A.remove(removeOf(sources[0]!)), ...dvUpdate(sources[1]!, inlineDv([50]))])
    const result = check(txn, optimizeWinner(2n, compaction(sources)), ON)
    assert.equal(result.kind, 'ok')
    const out = result.kind === 'ok' ? result.txn.actions.flatMap((a) => ('add' in a ? [a.add] : [])) : []
    assert.deepEqual(rowsOf(out[0]?.deletionVector), [...Array.from({ length: 100 }, (_, i) => i), 150])
    if (result.kind === 'ok') {
      assert.deepEqual(result.reconciliations[0]?.detail, { files: ['s0.parquet', 's1.parquet'], rows: 101 })
      assert.ok(!result.txn.actions.some((a) => 'remove' in a && a.remove.path === 's0.parquet'))
    }
  })

  it('H1: a source the DML re-added without a deletion vector is not remapped', () => {
    const sources = [source(0), source(1), source(2)]
    const txn = dmlLoser(sources, [
      A.remove(removeOf(sources[0]!)),
      A.add(sources[0]!),
      ...dvUpdate(sources[1]!, inlineDv([50])),
    ])
    const result = check(txn, optimizeWinner(2n, compaction(sources)), ON)
    assert.equal(result.kind, 'conflict')
    if (result.kind === 'conflict')
      assert.match(
        result.error.reconcileRefused ?? '',
        /other than through a deletion vector or a whole removal/,
      )
  })

  it('a whole removal of a source whose tombstone a forward remap re-pointed deletes what was still live', () => {
    const store = new DvStore()
    const base = store.dv('base', [0])
    const grown = store.dv('grown', [0, 50])
    const capture = [source(0), source(1, base), source(2)]
    const tombstones = compaction(capture).map((a) => {
      if (!('remove' in a) || a.remove.path !== 's1.parquet') return a
      const run = parseOptimizeSourceComposition(a.remove, new Set(['out.parquet']))!
      return A.remove(withRemappedComposition({ ...a.remove, deletionVector: grown }, run))
    })
    const current = [source(0), source(1, grown), source(2)]
    const txn = dmlLoser(current, [A.remove(removeOf(current[1]!))])
    const result = check(txn, optimizeWinner(2n, tombstones), ON, store.facts())
    assert.equal(result.kind, 'ok')
    const out = result.kind === 'ok' ? result.txn.actions.flatMap((a) => ('add' in a ? [a.add] : [])) : []
    // s1 sits at [100, 199); row 50 (output 149) is the forward remap's, not this DML's.
    assert.deepEqual(
      rowsOf(out[0]?.deletionVector),
      Array.from({ length: 99 }, (_, i) => 100 + i).filter((r) => r !== 149),
    )
  })

  it('decision 10: the compaction read another DV of the source than the DML did', () => {
    const store = new DvStore()
    const sources = [source(0), source(1, store.dv('base', [0])), source(2)]
    const compacted = [source(0), source(1, store.dv('newer', [0, 1])), source(2)]
    const txn = dmlLoser(sources, dvUpdate(sources[1]!, inlineDv([0, 50])))
    const result = check(txn, optimizeWinner(2n, compaction(compacted)), ON, store.facts())
    assert.equal(result.kind, 'conflict')
    if (result.kind === 'conflict')
      assert.match(result.error.reconcileRefused ?? '', /another deletion vector/)
  })

  it('a DML that only read compacted sources is not helped: it aborts (delete/read once Case 3 drops the output)', () => {
    const sources = [source(0), source(1), source(2)]
    const other = add('other.parquet', { stats: { numRecords: 10 } })
    const txn = dmlLoser([...sources, other], dvUpdate(other, inlineDv([1])))
    const w = optimizeWinner(2n, compaction(sources))
    assert.equal(outcomeOf(check(txn, w, ON)), 'ConcurrentAppendError')
    const withCase3 = flagsWith({ optimizeReverseReconciliation: true, excludeNoDataChangeFiles: true })
    assert.equal(outcomeOf(check(txn, w, withCase3)), 'ConcurrentDeleteReadError')
  })

  it('deletion vectors disabled on the table: the gate is off', () => {
    const sources = [source(0), source(1), source(2)]
    const txn = loser({
      metadata: meta({ id: 'long' }, [], { 'delta.isolationLevel': 'Serializable' }),
      protocol: DV_PROTOCOL,
      files: sources,
      reads: [{ scan: 'id = 150' }],
      actions: dvUpdate(sources[1]!, inlineDv([50])),
      operation: 'DELETE',
    })
    assert.equal(check(txn, optimizeWinner(2n, compaction(sources)), ON).kind, 'conflict')
  })
})

describe('Case 4b across successive winners (rlc-spec 9.5)', () => {
  function afterFirstOptimize(): { txn: TransactionInfo; out: AddFile } {
    const sources = [source(0), source(1), source(2)]
    const txn = dmlLoser(sources, dvUpdate(sources[1]!, inlineDv([50])))
    const r = check(
      txn,
      optimizeWinner(2n, compaction(sources)),
      flagsWith({ optimizeReverseReconciliation: true, rowLevelConcurrency: true }),
    )
    assert.equal(r.kind, 'ok')
    return { txn: (r as { txn: TransactionInfo }).txn, out: output(sources) }
  }

  it('a second OPTIMIZE that compacts the output again remaps the DML once more', () => {
    const { txn, out } = afterFirstOptimize()
    const out2 = add('out2.parquet', { dataChange: false, stats: { numRecords: 310 } })
    const extra = add('late.parquet', { stats: { numRecords: 10 } })
    const w2 = optimizeWinner(3n, compaction([extra, out], { out: out2 }))
    const result = check(txn, w2, ON)
    // late.parquet's 10 rows come first, so row 150 of out lands at 160.
    assert.deepEqual(describeActions(result), [
      'remove out2.parquet dc=true dv=none',
      'add out2.parquet dc=true dv=[160]',
    ])
  })

  it('a DML winner on the output afterwards is handled by Case 2', () => {
    const { txn, out } = afterFirstOptimize()
    const store = new DvStore()
    const w2Dv: DeletionVectorDescriptor = store.dv('w2', [10])
    const w2 = dmlWinner(3n, dvUpdate(out, w2Dv))
    const result = check(
      txn,
      w2,
      flagsWith({ optimizeReverseReconciliation: true, rowLevelConcurrency: true }),
      store.facts(),
    )
    assert.deepEqual(describeActions(result), [
      'remove out.parquet dc=true dv=yes',
      'add out.parquet dc=true dv=[10,150]',
    ])
  })
})
