/**
 * Case 2: same file, disjoint rows (scenarios.md suite RLC), at the action level with hand-made
 * deletion vectors. The table is one file `f.parquet` of 100 rows where physical row r holds id r.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import type { ConflictCheckResult } from '../../../src/conflict/check-conflicts.js'
import { DEFAULT_CONFLICT_FLAGS } from '../../../src/conflict/flags.js'
import { planConflictFetches } from '../../../src/conflict/plan-fetches.js'
import type { TransactionInfo } from '../../../src/conflict/transaction-info.js'
import { decodeInlineDv } from '../../../src/dv/descriptor.js'
import { initDeletionVectors } from '../../../src/dv/initialization.js'
import {
  type Action,
  type AddFile,
  createAction,
  createAddFile,
  type DeletionVectorDescriptor,
  type Metadata,
  type RemoveFile,
} from '../../../src/protocol/actions.js'
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

const ON = flagsWith({ rowLevelConcurrency: true })
const STATS = '{"numRecords":100,"minValues":{"id":0},"maxValues":{"id":99},"nullCount":{"id":0}}'
const WRITE_SERIALIZABLE = meta({ id: 'long' }, [], { 'delta.enableDeletionVectors': 'true' })

function file(
  dv: DeletionVectorDescriptor | undefined,
  o: { part?: Record<string, string>; baseRowId?: bigint } = {},
): AddFile {
  return createAddFile({
    ...add('f.parquet', { stats: STATS, part: o.part ?? {}, ...(dv ? { dv } : {}) }),
    ...(o.baseRowId !== undefined ? { baseRowId: o.baseRowId, defaultRowCommitVersion: 1n } : {}),
  })
}

/** A DV-based DML on `f.parquet`: remove(f, pre) + add(f, post) (+ an UPDATE image file). */
function dml(pre: AddFile, post: DeletionVectorDescriptor, image?: string): Action[] {
  const actions = [A.remove(removeOf(pre)), A.add(createAddFile({ ...pre, deletionVector: post }))]
  if (image !== undefined) actions.push(A.add(add(image, { part: pre.partitionValues })))
  return actions
}

interface Race {
  readonly metadata?: Metadata
  readonly base?: readonly number[]
  readonly loserDeletes: readonly number[]
  readonly loserImage?: string
  readonly loserOperation?: string
  readonly winnerDeletes: readonly number[]
  readonly winnerImage?: string
  readonly winnerOperation?: string
  readonly part?: Record<string, string>
  readonly baseRowId?: bigint
  readonly extraLoserActions?: readonly Action[]
}

/** Builds the loser and winner of a same-file race and checks them. */
function race(r: Race, flags = ON) {
  const store = new DvStore()
  const baseDv = r.base === undefined ? undefined : store.dv('base', r.base)
  const pre = file(baseDv, {
    ...(r.part ? { part: r.part } : {}),
    ...(r.baseRowId !== undefined ? { baseRowId: r.baseRowId } : {}),
  })
  const metadata = r.metadata ?? WRITE_SERIALIZABLE
  const loserDv = inlineDv([...(r.base ?? []), ...r.loserDeletes])
  const winnerDv = store.dv('winner', [...(r.base ?? []), ...r.winnerDeletes])
  const txn = loser({
    metadata,
    protocol: DV_PROTOCOL,
    files: [pre],
    reads: [{ scan: `id IN (${r.loserDeletes.join(', ')})` }],
    actions: [...dml(pre, loserDv, r.loserImage), ...(r.extraLoserActions ?? [])],
    operation: r.loserOperation ?? 'DELETE',
  })
  const w = winner(2n, dml(pre, winnerDv, r.winnerImage), {
    operation: r.winnerOperation ?? 'DELETE',
    blind: false,
  })
  const plan = planConflictFetches(txn, w, flags)
  return { txn, w, winnerDv, baseDv, plan, result: check(txn, w, flags, store.facts()) }
}

function addOf(result: ConflictCheckResult, path = 'f.parquet'): AddFile {
  assert.equal(result.kind, 'ok')
  if (result.kind !== 'ok') throw new TypeError('unreachable')
  const found = result.txn.actions.flatMap((a) => ('add' in a && a.add.path === path ? [a.add] : []))
  assert.equal(found.length, 1)
  return found[0]!
}

function removeOfResult(result: ConflictCheckResult, path = 'f.parquet'): RemoveFile {
  if (result.kind !== 'ok') throw new TypeError('expected ok')
  const found = result.txn.actions.flatMap((a) => ('remove' in a && a.remove.path === path ? [a.remove] : []))
  assert.equal(found.length, 1)
  return found[0]!
}

function positions(dv: DeletionVectorDescriptor | undefined): number[] {
  assert.ok(dv)
  return decodeInlineDv(dv).toArray()
}

describe('Case 2 reconciles disjoint deletes on the same file (RLC)', () => {
  const commits: readonly [string, Race, number[]][] = [
    ['RLC-01 disjoint DELETEs', { loserDeletes: [10], winnerDeletes: [20] }, [10, 20]],
    [
      'RLC-02 disjoint DELETEs on a file with a base DV {5}',
      { base: [5], loserDeletes: [10], winnerDeletes: [20] },
      [5, 10, 20],
    ],
    [
      'RLC-09 disjoint MERGE matched-deletes',
      { loserDeletes: [10], winnerDeletes: [20], loserOperation: 'MERGE', winnerOperation: 'MERGE' },
      [10, 20],
    ],
    [
      'RLC-16 disjoint DELETEs on a partitioned table',
      {
        loserDeletes: [10],
        winnerDeletes: [20],
        part: { p: '0' },
        metadata: meta({ id: 'long', p: 'int' }, ['p'], { 'delta.enableDeletionVectors': 'true' }),
      },
      [10, 20],
    ],
    [
      'RLC-19 Serializable: a MERGE that scanned the file reconciles against a DELETE',
      { loserDeletes: [10], winnerDeletes: [20], loserOperation: 'MERGE', metadata: dvMeta() },
      [10, 20],
    ],
  ]
  for (const [id, r, expected] of commits) {
    it(`${id}: the loser commits the union (cardinality ${expected.length})`, () => {
      const { result, winnerDv, txn, w } = race(r)
      assert.equal(outcomeOf(result), 'ok')
      const merged = addOf(result)
      assert.deepEqual(positions(merged.deletionVector), expected)
      assert.equal(merged.deletionVector?.cardinality, BigInt(expected.length))
      assert.equal(merged.dataChange, true)
      assert.equal(JSON.parse(merged.stats ?? '{}').tightBounds, false)
      assert.equal(JSON.parse(merged.stats ?? '{}').numRecords, 100)
      assert.deepEqual(merged.partitionValues, r.part ?? {})
      // The tombstone now removes the winner's post-image, the live (path, DV) after the winner.
      const tomb = removeOfResult(result)
      assert.deepEqual(tomb.deletionVector, winnerDv)
      assert.equal(tomb.dataChange, true)
      assert.equal(tomb.deletionTimestamp, 10n)
      if (result.kind !== 'ok') return
      // The next winner is checked against the file as this one left it.
      assert.equal(result.txn.readFiles.get('f.parquet'), w.addedFilesByPath.get('f.parquet'))
      assert.deepEqual(result.txn.readFiles.get('f.parquet')?.deletionVector, winnerDv)
      assert.equal(txn.readFiles.has('f.parquet'), true)
      assert.deepEqual(
        result.reconciliations.map((x) => [x.kind, x.winnerVersion, x.detail.files, x.detail.rows]),
        [['case2-dv-union', 2n, ['f.parquet'], 1]],
      )
      assert.equal(result.newDeletionVectors.length, 1)
      assert.deepEqual(result.newDeletionVectors[0]?.bitmap.toArray(), expected)
      assert.equal(result.newDeletionVectors[0]?.descriptor, merged.deletionVector)
    })
  }

  const aborts: readonly [string, Race, ReturnType<typeof flagsWith>, RegExp | undefined][] = [
    ['RLC-04 overlapping DELETEs', { loserDeletes: [10], winnerDeletes: [10] }, ON, /same 1 row/],
    ['RLC-05 flag off', { loserDeletes: [10], winnerDeletes: [20] }, DEFAULT_CONFLICT_FLAGS, undefined],
    [
      'RLC-06 deletion vectors disabled on the table',
      {
        loserDeletes: [10],
        winnerDeletes: [20],
        metadata: meta({ id: 'long' }, [], { 'delta.enableDeletionVectors': 'false' }),
      },
      ON,
      undefined,
    ],
    [
      'RLC-07 the winner UPDATE writes an image file',
      { loserDeletes: [10], winnerDeletes: [20], winnerImage: 'image.parquet', winnerOperation: 'UPDATE' },
      ON,
      undefined,
    ],
    [
      'RLC-08 UPDATE vs UPDATE of the same row',
      {
        loserDeletes: [20],
        loserImage: 'mine.parquet',
        loserOperation: 'UPDATE',
        winnerDeletes: [20],
        winnerImage: 'theirs.parquet',
        winnerOperation: 'UPDATE',
      },
      ON,
      /same 1 row/,
    ],
    [
      'RLC-11 overlapping MERGE matched-deletes',
      { loserDeletes: [10], winnerDeletes: [10], loserOperation: 'MERGE', winnerOperation: 'MERGE' },
      ON,
      /same 1 row/,
    ],
    [
      'RLC-12 the winner MERGE matched-update writes an image file',
      { loserDeletes: [10], winnerDeletes: [20], winnerImage: 'image.parquet', winnerOperation: 'MERGE' },
      ON,
      undefined,
    ],
  ]
  for (const [id, r, flags, refused] of aborts) {
    it(`${id}: the loser aborts`, () => {
      const { result } = race(r, flags)
      assert.equal(result.kind, 'conflict')
      if (result.kind !== 'conflict') return
      if (refused !== undefined) {
        assert.match(result.error.reconcileRefused ?? '', refused)
        assert.equal(result.error.file, 'f.parquet')
      } else if (r.winnerImage !== undefined && flags === ON) {
        // The same-file DVs merged; the image file is what the loser cannot prove disjoint.
        assert.equal(result.error.code, 'DELTA_CONCURRENT_APPEND')
        assert.equal(result.error.file, r.winnerImage)
      }
    })
  }

  it('RLC-17 row tracking: the merged add keeps its base row id and the tombstone copies the winner', () => {
    const { result } = race({ loserDeletes: [10], winnerDeletes: [20], baseRowId: 500n })
    const merged = addOf(result)
    assert.equal(merged.baseRowId, 500n)
    assert.equal(merged.defaultRowCommitVersion, 1n)
    assert.equal(removeOfResult(result).baseRowId, 500n)
  })

  it("RLC-18 change data feed: the loser's CDC file stays as written", () => {
    const cdc = createAction('cdc', {
      path: '_change_data/cdc-1.parquet',
      partitionValues: {},
      size: 10n,
      dataChange: false,
    })
    const { result } = race({ loserDeletes: [10], winnerDeletes: [20], extraLoserActions: [cdc] })
    assert.equal(result.kind, 'ok')
    if (result.kind === 'ok') assert.equal(result.txn.actions[2], cdc)
  })

  it('plans the file-backed deletion vectors it compares, and nothing with the flag off', () => {
    const { plan, winnerDv, baseDv } = race({ base: [5], loserDeletes: [10], winnerDeletes: [20] })
    assert.deepEqual(
      plan.deletionVectors
        .map((d) => d.descriptor)
        .sort((a, b) => a.pathOrInlineDv.localeCompare(b.pathOrInlineDv)),
      [baseDv, winnerDv],
    )
    assert.deepEqual(
      race({ base: [5], loserDeletes: [10], winnerDeletes: [20] }, DEFAULT_CONFLICT_FLAGS).plan,
      {
        deletionVectors: [],
        rowQueries: [],
      },
    )
  })
})

describe('Case 2 never assumes that deletion vectors only grow (decision 10)', () => {
  function twoSided(o: {
    loserPre: DeletionVectorDescriptor | undefined
    loserPost: DeletionVectorDescriptor
    winnerPre: DeletionVectorDescriptor | undefined
    winnerPost: DeletionVectorDescriptor
    facts: DvStore
  }) {
    const pre = file(o.loserPre)
    const txn = loser({
      metadata: WRITE_SERIALIZABLE,
      protocol: DV_PROTOCOL,
      files: [pre],
      reads: [{ scan: 'id = 10' }],
      actions: dml(pre, o.loserPost),
      operation: 'DELETE',
    })
    const w = winner(2n, dml(file(o.winnerPre), o.winnerPost), { operation: 'RESTORE', blind: false })
    return check(txn, w, ON, o.facts.facts())
  }

  it('refuses when the winner shrank the deletion vector (its post-image lacks read-time rows)', () => {
    const s = new DvStore()
    const base = s.dv('base', [5, 6])
    const result = twoSided({
      loserPre: base,
      loserPost: inlineDv([5, 6, 10]),
      winnerPre: base,
      winnerPost: s.dv('w', [20]),
      facts: s,
    })
    assert.equal(result.kind, 'conflict')
    if (result.kind === 'conflict') assert.match(result.error.reconcileRefused ?? '', /restored/)
  })

  it("refuses when the winner's pre-image is another deletion vector than the one the loser read", () => {
    const s = new DvStore()
    const result = twoSided({
      loserPre: s.dv('base', [5]),
      loserPost: inlineDv([5, 10]),
      winnerPre: s.dv('other', [5]),
      winnerPost: s.dv('w', [5, 20]),
      facts: s,
    })
    assert.equal(result.kind, 'conflict')
    if (result.kind === 'conflict') assert.match(result.error.reconcileRefused ?? '', /pre-image/)
  })

  it('refuses when a file-backed deletion vector was not loaded', () => {
    const s = new DvStore()
    const base = s.dv('base', [5])
    const missing = new DvStore().dv('notloaded', [5, 20])
    const result = twoSided({
      loserPre: base,
      loserPost: inlineDv([5, 10]),
      winnerPre: base,
      winnerPost: missing,
      facts: s,
    })
    assert.equal(result.kind, 'conflict')
    if (result.kind === 'conflict') assert.match(result.error.reconcileRefused ?? '', /not loaded/)
  })

  it('refuses a loaded bitmap whose cardinality differs from its descriptor', () => {
    const s = new DvStore()
    const w = s.dv('w', [20])
    const lying: DeletionVectorDescriptor = { ...w, cardinality: 2n }
    const result = twoSided({
      loserPre: undefined,
      loserPost: inlineDv([10]),
      winnerPre: undefined,
      winnerPost: lying,
      facts: s,
    })
    assert.equal(result.kind, 'conflict')
  })
})

describe('Case 2 across successive winners (N-way)', () => {
  function threeWay(winner2Deletes: readonly number[]) {
    const s = new DvStore()
    const pre = file(undefined)
    let txn: TransactionInfo = loser({
      metadata: WRITE_SERIALIZABLE,
      protocol: DV_PROTOCOL,
      files: [pre],
      reads: [{ scan: 'id = 10' }],
      actions: dml(pre, inlineDv([10])),
      operation: 'DELETE',
    })
    const w1Dv = s.dv('w1', [20])
    const w1 = winner(2n, dml(pre, w1Dv), { operation: 'DELETE', blind: false })
    const r1 = check(txn, w1, ON, s.facts())
    assert.equal(r1.kind, 'ok')
    if (r1.kind !== 'ok') throw new TypeError('unreachable')
    txn = r1.txn
    // The second winner started from the first winner's state: its pre-image is w1's DV.
    const w2 = winner(3n, dml(file(w1Dv), s.dv('w2', [20, ...winner2Deletes])), {
      operation: 'DELETE',
      blind: false,
    })
    return { first: r1, second: check(txn, w2, ON, s.facts()), w2 }
  }

  it('RLC-14 three disjoint DELETEs: the loser reconciles with both winners (cardinality 3)', () => {
    const { first, second } = threeWay([30])
    assert.deepEqual(positions(addOf(first).deletionVector), [10, 20])
    assert.deepEqual(positions(addOf(second).deletionVector), [10, 20, 30])
    assert.equal(removeOfResult(second).deletionVector?.pathOrInlineDv.startsWith('w2'), true)
  })

  it('a loser that reconciled with W1 still aborts on a W2 that deletes its row', () => {
    const { second } = threeWay([10])
    assert.equal(second.kind, 'conflict')
    if (second.kind === 'conflict') assert.match(second.error.reconcileRefused ?? '', /same 1 row/)
  })
})

describe('Case 2 property: the union equals the serial application', () => {
  const rows = fc.uniqueArray(fc.integer({ min: 0, max: 63 }), { maxLength: 12 })

  it('reconciles exactly when the new deletions are disjoint, to base + winner + loser', () => {
    fc.assert(
      fc.property(rows, rows, rows, (base, winnerNew, loserNew) => {
        const s = new DvStore()
        const baseDv = base.length > 0 ? s.dv('base', base) : undefined
        const wd = [...new Set([...base, ...winnerNew])]
        const c = [...new Set([...base, ...loserNew])]
        if (c.length === base.length) return // the loser deleted nothing new: not a DV update
        const pre = file(baseDv)
        const txn = loser({
          metadata: WRITE_SERIALIZABLE,
          protocol: DV_PROTOCOL,
          files: [pre],
          reads: [{ scan: 'id >= 0' }],
          actions: dml(pre, inlineDv(c)),
          operation: 'DELETE',
        })
        const w = winner(2n, dml(pre, s.dv('w', wd)), { operation: 'DELETE', blind: false })
        const result = check(txn, w, ON, s.facts())
        const overlap = wd.filter((i) => c.includes(i) && !base.includes(i))
        if (overlap.length > 0) {
          assert.equal(result.kind, 'conflict')
          return
        }
        assert.equal(result.kind, 'ok')
        const serial = [...new Set([...base, ...winnerNew, ...loserNew])].sort((a, b) => a - b)
        assert.deepEqual(positions(addOf(result).deletionVector), serial)
      }),
      { numRuns: 200 },
    )
  })

  it('across two successive winners the result does not depend on which winner came first', () => {
    fc.assert(
      fc.property(rows, rows, rows, (w1New, w2New, loserNew) => {
        if (loserNew.length === 0) return
        const outcome = (first: readonly number[], second: readonly number[]) => {
          const s = new DvStore()
          const pre = file(undefined)
          let txn = loser({
            metadata: WRITE_SERIALIZABLE,
            protocol: DV_PROTOCOL,
            files: [pre],
            reads: [{ scan: 'id >= 0' }],
            actions: dml(pre, inlineDv(loserNew)),
            operation: 'DELETE',
          })
          const d1 = s.dv('w1', first)
          const wins = [
            winner(2n, dml(pre, d1), { operation: 'DELETE', blind: false }),
            winner(
              3n,
              dml(file(first.length > 0 ? d1 : undefined), s.dv('w2', [...new Set([...first, ...second])])),
              {
                operation: 'DELETE',
                blind: false,
              },
            ),
          ]
          for (const w of wins) {
            if (w.dvUpdates.size === 0) continue
            const r = check(txn, w, ON, s.facts())
            if (r.kind === 'conflict') return 'conflict'
            txn = r.txn
          }
          const merged = txn.actions.flatMap((a) => ('add' in a ? [a.add] : []))[0]
          return positions(merged?.deletionVector).join(',')
        }
        const all = [...new Set([...w1New, ...w2New])]
        const expectConflict = loserNew.some((i) => all.includes(i))
        const a = outcome(w1New, w2New)
        const b = outcome(w2New, w1New)
        if (expectConflict) {
          assert.equal(a, 'conflict')
          assert.equal(b, 'conflict')
        } else {
          assert.equal(a, b)
          assert.equal(a, [...new Set([...all, ...loserNew])].sort((x, y) => x - y).join(','))
        }
      }),
      { numRuns: 150 },
    )
  })
})
