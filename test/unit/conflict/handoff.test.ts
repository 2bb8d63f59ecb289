/**
 * The contract between the pure checker and the commit loop: the fetch plan, the deletion vectors
 * a reconcile creates and how the loop swaps them for written files, the fail-safe around the
 * row-level phases, and the immutability of every input.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { checkConflicts } from '../../../src/conflict/check-conflicts.js'
import {
  dvUniqueId,
  newDeletionVectorsInUse,
  replaceDeletionVectorDescriptors,
} from '../../../src/conflict/deletion-vectors.js'
import { DEFAULT_CONFLICT_FLAGS, parseConflictFlags } from '../../../src/conflict/flags.js'
import { failSafe, invalidRewrite, type PhaseOutcome } from '../../../src/conflict/phase.js'
import { planConflictFetches } from '../../../src/conflict/plan-fetches.js'
import { type TransactionInfo, withActions } from '../../../src/conflict/transaction-info.js'
import { initDeletionVectors } from '../../../src/dv/initialization.js'
import { InternalError } from '../../../src/errors/index.js'
import type { Action, AddFile, DeletionVectorDescriptor } from '../../../src/protocol/actions.js'
import { compaction, dmlWinner, dvUpdate, optimizeLoser, source } from './compaction-fixture.js'
import { A, add, check, DV_PROTOCOL, DvStore, flagsWith, inlineDv, loser, meta, remove } from './factories.js'

await initDeletionVectors()

const RLC = flagsWith({ rowLevelConcurrency: true })
const m = meta({ id: 'long' }, [], { 'delta.enableDeletionVectors': 'true' })
const file = add('f.parquet', { stats: { numRecords: 100, min: { id: 0 }, max: { id: 99 } } })

function deleteLoser(rows: readonly number[]): TransactionInfo {
  return loser({
    metadata: m,
    protocol: DV_PROTOCOL,
    files: [file],
    reads: [{ scan: 'id >= 0' }],
    actions: dvUpdate(file, inlineDv(rows)),
    operation: 'DELETE',
  })
}

describe('the deletion vectors a reconcile creates', () => {
  it('are inline in the actions; the loop may write them and swap the descriptors, and N-way checks go on', () => {
    const store = new DvStore()
    const w1Dv = store.dv('w1', [20])
    const r1 = check(deleteLoser([10]), dmlWinner(2n, dvUpdate(file, w1Dv)), RLC, store.facts())
    assert.equal(r1.kind, 'ok')
    if (r1.kind !== 'ok') return
    const created = r1.newDeletionVectors
    assert.equal(created[0]?.descriptor.storageType, 'i')

    // The loop writes the bitmap to a DV file and swaps the inline descriptor for the file's.
    const written = store.dv('written', created[0]!.bitmap.toArray())
    const txn = replaceDeletionVectorDescriptors(
      r1.txn,
      new Map([[dvUniqueId(created[0]!.descriptor)!, written]]),
    )
    const merged = txn.actions.flatMap((a) => ('add' in a ? [a.add] : []))[0]!
    assert.equal(merged.deletionVector, written)
    assert.deepEqual(newDeletionVectorsInUse(txn, created), [])
    assert.deepEqual(newDeletionVectorsInUse(r1.txn, created), created)

    // A later winner: the plan asks for the written file, and the check composes on top of it.
    const w2 = dmlWinner(3n, dvUpdate({ ...file, deletionVector: w1Dv }, store.dv('w2', [20, 30])))
    const plan = planConflictFetches(txn, w2, RLC)
    assert.ok(plan.deletionVectors.some((d) => d.descriptor === written))
    const r2 = checkConflicts(txn, w2, RLC, store.facts())
    assert.equal(r2.kind, 'ok')
    if (r2.kind !== 'ok') return
    assert.deepEqual(r2.newDeletionVectors[0]?.bitmap.toArray(), [10, 20, 30])
    // The first written file is no longer referenced: the loop deletes it (decision 7).
    assert.deepEqual(
      newDeletionVectorsInUse(r2.txn, [...created, ...r2.newDeletionVectors]),
      r2.newDeletionVectors,
    )
  })
})

describe('the fetch plan', () => {
  it('is empty with every flag off, even where every reconciliation could apply', () => {
    const store = new DvStore()
    const sources = [source(0), source(1, store.dv('base', [0])), source(2)]
    const pairs = [
      [deleteLoser([10]), dmlWinner(2n, dvUpdate(file, store.dv('w', [20])))],
      [optimizeLoser(sources), dmlWinner(2n, dvUpdate(sources[1]!, store.dv('w1', [0, 50])))],
      [
        loser({
          metadata: m,
          protocol: DV_PROTOCOL,
          files: sources,
          reads: [{ scan: 'id = 150' }],
          actions: dvUpdate(sources[1]!, inlineDv([0, 50])),
          operation: 'DELETE',
        }),
        dmlWinner(2n, compaction(sources)),
      ],
    ] as const
    for (const [txn, w] of pairs) {
      assert.deepEqual(planConflictFetches(txn, w, DEFAULT_CONFLICT_FLAGS), {
        deletionVectors: [],
        rowQueries: [],
      })
      assert.ok(planConflictFetches(txn, w, parseConflictFlags('all')).deletionVectors.length > 0)
    }
  })
})

describe('the fail-safe around the row-level phases', () => {
  const txn = deleteLoser([10])

  it('turns a phase that throws into "unchanged" with the reason', () => {
    const outcome = failSafe(txn, 'the test phase', () => {
      throw new InternalError('boom')
    })
    assert.equal(outcome.txn, txn)
    assert.deepEqual(outcome.resolvedPaths, [])
    assert.match(outcome.refusals.get('*') ?? '', /the test phase failed .*boom/)
  })

  const broken: readonly [string, readonly Action[], RegExp][] = [
    ['a file added twice', [A.add(add('a')), A.add(add('a'))], /twice/],
    ['a file removed twice', [A.remove(remove('a')), A.remove(remove('a'))], /twice/],
    ['a logical file both added and removed', [A.add(add('a')), A.remove(remove('a'))], /same file a/],
    ['mixed dataChange', [A.add(add('a')), A.remove(remove('b', { dataChange: false }))], /dataChange/],
  ]
  for (const [what, actions, reason] of broken) {
    it(`drops a rewrite with ${what}`, () => {
      assert.match(invalidRewrite(actions) ?? '', reason)
      const bad: PhaseOutcome = {
        txn: withActions(txn, actions),
        resolvedPaths: ['a'],
        reconciliation: undefined,
        newDeletionVectors: [],
        refusals: new Map(),
      }
      const outcome = failSafe(txn, 'the test phase', () => bad)
      assert.equal(outcome.txn, txn)
      assert.deepEqual(outcome.resolvedPaths, [])
    })
  }

  it('accepts the same path with two deletion vectors (a DV update)', () => {
    const withDv: AddFile = { ...add('a'), deletionVector: inlineDv([1]) as DeletionVectorDescriptor }
    assert.equal(invalidRewrite([A.remove(remove('a')), A.add(withDv)]), undefined)
  })
})

describe('inputs are never modified', () => {
  it('a reconciling check leaves the transaction, the winner and the facts as they were', () => {
    const store = new DvStore()
    const txn = deleteLoser([10])
    const w = dmlWinner(2n, dvUpdate(file, store.dv('w', [20])))
    const facts = store.facts()
    const before = {
      actions: [...txn.actions],
      readFiles: [...txn.readFiles.keys()],
      dvs: facts.deletionVectors.size,
    }
    const result = check(txn, w, RLC, facts)
    assert.equal(result.kind, 'ok')
    assert.deepEqual([...txn.actions], before.actions)
    assert.deepEqual([...txn.readFiles.keys()], before.readFiles)
    assert.equal(facts.deletionVectors.size, before.dvs)
    assert.ok(Object.isFrozen(txn) && Object.isFrozen(txn.actions) && Object.isFrozen(w))
    if (result.kind === 'ok') {
      assert.ok(Object.isFrozen(result.txn) && Object.isFrozen(result.txn.actions))
      assert.ok(result.txn.actions.every((a) => Object.isFrozen(a) && Object.isFrozen(Object.values(a)[0])))
    }
  })
})
