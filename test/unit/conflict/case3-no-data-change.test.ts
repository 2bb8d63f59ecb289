/**
 * Case 3: `dataChange = false` winner files against loser reads (scenarios.md OTS part 1; OTS-3d
 * and OTS-3e follow the seed's test list).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Action } from '../../../src/protocol/actions.js'
import {
  A,
  add,
  check,
  flagsWith,
  loser,
  meta,
  outcomeOf,
  type ReadSpec,
  removeOf,
  winner,
} from './factories.js'

const SERIALIZABLE = { 'delta.isolationLevel': 'Serializable' }
const P = meta({ part: 'int', value: 'int' }, ['part'], SERIALIZABLE)
const U = meta({ id: 'int', value: 'int' }, [], SERIALIZABLE)
const aP = add('a', { part: { part: '0' } })
const bP = add('b', { part: { part: '1' } })
const xP = add('x', { part: { part: '0' } })
const aU = add('a')
const bU = add('b')
const xU = add('x')
const optimizeOutput = add('y', { part: { part: '0' }, dataChange: false })

interface Row {
  readonly id: string
  readonly flag: boolean
  readonly table: 'P' | 'U'
  readonly reads: readonly ReadSpec[]
  readonly winner: readonly Action[]
  readonly loser: readonly Action[]
  readonly expect: string
  /** The paths Case 3 reports as the ones whose conflict it averted. */
  readonly averted?: readonly string[]
}

const rows: readonly Row[] = [
  {
    id: 'OTS-3a-on: dataChange=false add vs a partition reader, flag on',
    flag: true,
    table: 'P',
    reads: [{ predicateOnly: 'part = 0' }],
    winner: [A.add(optimizeOutput)],
    loser: [A.remove(removeOf(aP)), A.add(xP)],
    expect: 'ok',
    averted: ['y'],
  },
  {
    id: 'OTS-3a-off: the same with the flag off',
    flag: false,
    table: 'P',
    reads: [{ predicateOnly: 'part = 0' }],
    winner: [A.add(optimizeOutput)],
    loser: [A.remove(removeOf(aP)), A.add(xP)],
    expect: 'ConcurrentAppendError',
  },
  {
    id: 'OTS-3b: a dataChange=true append still conflicts',
    flag: true,
    table: 'P',
    reads: [{ predicateOnly: 'part = 0' }],
    winner: [A.add(add('z', { part: { part: '0' } }))],
    loser: [A.remove(removeOf(aP)), A.add(xP)],
    expect: 'ConcurrentAppendError',
  },
  {
    id: 'OTS-3c: full OPTIMIZE vs an insert-only reader with only a predicate',
    flag: true,
    table: 'P',
    reads: [{ predicateOnly: 'part = 0' }],
    winner: [A.add(optimizeOutput), A.remove(removeOf(aP, { dataChange: false }))],
    loser: [A.add(xP)],
    expect: 'ok',
    averted: ['y'],
  },
  {
    id: 'OTS-3d: full OPTIMIZE vs a full-scan append-only reader',
    flag: true,
    table: 'P',
    reads: [{ scan: undefined }],
    winner: [A.add(optimizeOutput), A.remove(removeOf(aP, { dataChange: false }))],
    loser: [A.add(xP)],
    expect: 'ok',
    averted: ['y', 'a'],
  },
  {
    id: 'OTS-3d-off: the same with the flag off',
    flag: false,
    table: 'P',
    reads: [{ scan: undefined }],
    winner: [A.add(optimizeOutput), A.remove(removeOf(aP, { dataChange: false }))],
    loser: [A.add(xP)],
    expect: 'ConcurrentAppendError',
  },
  {
    id: 'OTS-3e: full OPTIMIZE vs a DELETE loser still raises delete/read',
    flag: true,
    table: 'P',
    reads: [{ scan: undefined }],
    winner: [A.add(optimizeOutput), A.remove(removeOf(aP, { dataChange: false }))],
    loser: [A.remove(removeOf(bP))],
    expect: 'ConcurrentDeleteReadError',
  },
  {
    id: 'OTS-3f: a genuine delete vs an append-only full-scan reader',
    flag: true,
    table: 'U',
    reads: [{ scan: undefined }],
    winner: [A.remove(removeOf(aU))],
    loser: [A.add(xU)],
    expect: 'ConcurrentDeleteReadError',
  },
  {
    id: 'whole-table append-only reader vs a relocation: only the dataChange=false remove is dropped',
    flag: true,
    table: 'U',
    reads: [{ wholeTable: true }],
    winner: [A.remove(removeOf(aU, { dataChange: false })), A.add(add('c', { dataChange: false }))],
    loser: [A.add(xU)],
    expect: 'ok',
    averted: ['c', 'a'],
  },
]

describe('Case 3: no-data-change files (OTS part 1)', () => {
  for (const row of rows) {
    it(`${row.id} -> ${row.expect}`, () => {
      const m = row.table === 'P' ? P : U
      const files = row.table === 'P' ? [aP, bP] : [aU, bU]
      const txn = loser({
        metadata: m,
        files,
        reads: row.reads,
        actions: row.loser,
        operation: 'Manual Update',
      })
      const result = check(
        txn,
        winner(2n, row.winner, { operation: 'OPTIMIZE' }),
        flagsWith({ excludeNoDataChangeFiles: row.flag }),
      )
      assert.equal(outcomeOf(result), row.expect)
      if (result.kind === 'ok') {
        // Case 3 never rewrites the loser.
        assert.equal(result.txn.actions, txn.actions)
        const files = result.reconciliations.flatMap((r) => {
          assert.equal(r.kind, 'case3-no-data-change')
          assert.equal(r.winnerOperation, 'OPTIMIZE')
          return r.detail.files ?? []
        })
        assert.deepEqual(files, row.averted ?? [])
      }
    })
  }
})
