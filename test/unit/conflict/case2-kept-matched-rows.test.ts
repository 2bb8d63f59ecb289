/**
 * Case 2 and a MERGE loser with an insert clause: the target rows it matched and left in place
 * count as its own rows in the overlap test. The table is one file `f.parquet` of 100 rows where
 * physical row r holds id r.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  combineKeptMatchedRows,
  type KeptMatchedRows,
  keptMatchedRows,
} from '../../../src/conflict/kept-matched-rows.js'
import { createTransactionInfo } from '../../../src/conflict/transaction-info.js'
import { initDeletionVectors } from '../../../src/dv/initialization.js'
import {
  type Action,
  type AddFile,
  createAddFile,
  type DeletionVectorDescriptor,
} from '../../../src/protocol/actions.js'
import {
  A,
  add,
  check,
  DV_PROTOCOL,
  DvStore,
  flagsWith,
  inlineDv,
  loser,
  meta,
  removeOf,
  winner,
} from './factories.js'

await initDeletionVectors()

const ON = flagsWith({ rowLevelConcurrency: true })
const STATS = '{"numRecords":100,"minValues":{"id":0},"maxValues":{"id":99},"nullCount":{"id":0}}'
const METADATA = meta({ id: 'long' }, [], { 'delta.enableDeletionVectors': 'true' })

function file(dv?: DeletionVectorDescriptor): AddFile {
  return createAddFile(add('f.parquet', { stats: STATS, ...(dv ? { dv } : {}) }))
}

function dml(pre: AddFile, post: DeletionVectorDescriptor): Action[] {
  return [A.remove(removeOf(pre)), A.add(createAddFile({ ...pre, deletionVector: post }))]
}

/** A MERGE on `f.parquet` that deleted `loserDeletes` against a DELETE of `winnerDeletes`. */
function race(o: {
  readonly base?: readonly number[]
  readonly loserDeletes: readonly number[]
  readonly winnerDeletes: readonly number[]
  readonly kept: KeptMatchedRows | undefined
}) {
  const store = new DvStore()
  const baseDv = o.base === undefined ? undefined : store.dv('base', o.base)
  const pre = file(baseDv)
  const described = loser({
    metadata: METADATA,
    protocol: DV_PROTOCOL,
    files: [pre],
    reads: [{ scan: undefined }],
    actions: dml(pre, inlineDv([...(o.base ?? []), ...o.loserDeletes])),
    operation: 'MERGE',
  })
  const txn = createTransactionInfo({
    ...described,
    readFiles: described.readFiles.values(),
    keptMatchedRows: o.kept,
  })
  const w = winner(2n, dml(pre, store.dv('winner', [...(o.base ?? []), ...o.winnerDeletes])), {
    operation: 'DELETE',
    blind: false,
  })
  return check(txn, w, ON, store.facts())
}

describe('Case 2 counts the rows a MERGE matched and left in place as its own', () => {
  it('refuses when the winner deleted a matched row the MERGE left in place', () => {
    const result = race({
      loserDeletes: [7],
      winnerDeletes: [5],
      kept: keptMatchedRows([['f.parquet', [5]]]),
    })
    assert.equal(result.kind, 'conflict')
    if (result.kind !== 'conflict') return
    assert.equal(result.error.file, 'f.parquet')
    assert.match(
      result.error.reconcileRefused ?? '',
      /deleted 1 target row\(s\) this MERGE matched and left in place/,
    )
  })

  it('reconciles when the winner deleted another row than those the MERGE matched', () => {
    const result = race({
      loserDeletes: [7],
      winnerDeletes: [50],
      kept: keptMatchedRows([['f.parquet', [5]]]),
    })
    assert.equal(result.kind, 'ok')
    if (result.kind !== 'ok') return
    assert.deepEqual(
      result.reconciliations.map((r) => r.kind),
      ['case2-dv-union'],
    )
    assert.deepEqual(result.newDeletionVectors[0]?.bitmap.toArray(), [7, 50])
  })

  it('reconciles a matched row that was already deleted when the MERGE read the file', () => {
    // Position 5 in the read-time DV: the winner did not newly delete it.
    const result = race({
      base: [5],
      loserDeletes: [7],
      winnerDeletes: [50],
      kept: keptMatchedRows([['f.parquet', [5]]]),
    })
    assert.equal(result.kind, 'ok')
  })

  it('refuses a file whose matched rows the record does not know (deletions moved by a relocation)', () => {
    const result = race({
      loserDeletes: [7],
      winnerDeletes: [50],
      kept: keptMatchedRows([['g.parquet', [5]]]),
    })
    assert.equal(result.kind, 'conflict')
    if (result.kind !== 'conflict') return
    assert.match(result.error.reconcileRefused ?? '', /matched in this file are not known/)
  })

  it('reconciles as before without a record (every matched row was changed)', () => {
    const result = race({ loserDeletes: [7], winnerDeletes: [5], kept: undefined })
    assert.equal(result.kind, 'ok')
  })
})

describe('the record of the rows a MERGE matched and left in place', () => {
  it('is absent when no file has such a row, and sorts the positions', () => {
    assert.equal(keptMatchedRows([['f.parquet', []]]), undefined)
    const r = keptMatchedRows([
      ['f.parquet', [9, 3, 200]],
      ['g.parquet', []],
    ])
    assert.deepEqual([...(r?.files.get('f.parquet') ?? [])], [3, 9, 200])
    assert.deepEqual([...(r?.files.get('g.parquet') ?? [1])], [])
  })

  it("combines several operations' records, keeping every path and position once", () => {
    const a = keptMatchedRows([['f.parquet', [3, 9]]])
    const b = keptMatchedRows([
      ['f.parquet', [9, 4]],
      ['g.parquet', [1]],
    ])
    assert.equal(combineKeptMatchedRows([undefined, a]), a)
    assert.equal(combineKeptMatchedRows([undefined, undefined]), undefined)
    const both = combineKeptMatchedRows([a, undefined, b])
    assert.deepEqual([...(both?.files.get('f.parquet') ?? [])], [3, 4, 9])
    assert.deepEqual([...(both?.files.get('g.parquet') ?? [])], [1])
  })
})
