/**
 * Delta's file-level checker with every reconciliation off, on the scenarios of
 * OptimisticTransactionSuite (scenarios.md part 2: the `check(...)` table OTS-K; part 3: the
 * legacy tests OTS-L; part 4: OTS-D, OTS-F1, OTS-E1), expressed at the action level.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { type Action, type AddFile, createProtocol, type Metadata } from '../../../src/protocol/actions.js'
import {
  A,
  add,
  check,
  loser,
  meta,
  outcomeOf,
  type ReadSpec,
  remove,
  removeOf,
  winner,
} from './factories.js'

const SERIALIZABLE = { 'delta.isolationLevel': 'Serializable' }

interface Row {
  readonly id: string
  readonly metadata: Metadata
  readonly files?: readonly AddFile[]
  readonly reads?: readonly ReadSpec[]
  readonly readAppIds?: readonly string[]
  /** The winner's actions; `readsFirst` marks a winner that read before committing (not blind). */
  readonly winner: readonly Action[]
  readonly winnerReadsFirst?: boolean
  readonly winnerOperation?: string
  readonly loser: readonly Action[]
  readonly loserOperation?: string
  readonly expect: string
  readonly file?: string
}

function run(row: Row) {
  const txn = loser({
    metadata: row.metadata,
    files: row.files ?? [],
    reads: row.reads ?? [],
    readAppIds: row.readAppIds ?? [],
    actions: row.loser,
    operation: row.loserOperation ?? 'TRUNCATE',
  })
  const w = winner(2n, row.winner, {
    operation: row.winnerOperation ?? 'TRUNCATE',
    ...(row.winnerReadsFirst ? { blind: false } : {}),
  })
  return check(txn, w)
}

function runTable(rows: readonly Row[]): void {
  for (const row of rows) {
    it(`${row.id}: ${row.expect === 'ok' ? 'commits' : `aborts with ${row.expect}`}`, () => {
      const result = run(row)
      assert.equal(outcomeOf(result), row.expect)
      if (result.kind === 'conflict') {
        assert.equal(result.error.winnerVersion, 2n)
        if (row.file !== undefined) assert.equal(result.error.file, row.file)
        assert.ok(result.error.check?.startsWith('check'))
      } else {
        assert.deepEqual(result.reconciliations, [])
        assert.equal(result.txn.actions.length, row.loser.length)
      }
    })
  }
}

// === OTS part 2: the check(...) table ===

const empty = meta({ id: 'int' }, [], SERIALIZABLE)
const byX = meta({ x: 'int' }, ['x'], SERIALIZABLE)
const xa2 = add('a', { part: { x: '2' } })
const xa1 = add('a', { part: { x: '1' } })

describe('baseline check(...) table (OTS-K)', () => {
  runTable([
    {
      id: 'OTS-K01 append / append',
      metadata: empty,
      winner: [A.add(add('a'))],
      loser: [A.add(add('b'))],
      expect: 'ok',
    },
    {
      id: 'OTS-K02 disjoint txns',
      metadata: empty,
      readAppIds: ['t1'],
      winner: [A.txn('t2', 0n)],
      loser: [],
      expect: 'ok',
    },
    {
      id: 'OTS-K03 disjoint delete / read',
      metadata: byX,
      files: [xa2],
      reads: [{ scan: 'x = 1' }],
      winner: [A.remove(removeOf(xa2))],
      loser: [],
      expect: 'ok',
    },
    {
      id: 'OTS-K04 disjoint add / read',
      metadata: byX,
      reads: [{ scan: 'x = 1' }],
      winner: [A.add(xa2)],
      loser: [],
      expect: 'ok',
    },
    {
      id: 'OTS-K05 delete / delete',
      metadata: empty,
      winner: [A.remove(remove('a'))],
      loser: [A.remove(remove('a'))],
      expect: 'ConcurrentDeleteDeleteError',
      file: 'a',
    },
    {
      id: 'OTS-K06 add / read + write',
      metadata: byX,
      reads: [{ scan: 'x = 1' }],
      winner: [A.add(xa1)],
      loser: [A.add(add('b', { part: { x: '1' } }))],
      expect: 'ConcurrentAppendError',
      file: 'a',
    },
    {
      id: 'OTS-K07 add / read + no write',
      metadata: byX,
      reads: [{ scan: 'x = 1' }],
      winner: [A.add(xa1)],
      loser: [],
      expect: 'ok',
    },
    {
      id: 'OTS-K09 delete / read',
      metadata: byX,
      files: [xa1],
      reads: [{ scan: 'x = 1' }],
      winner: [A.remove(removeOf(xa1))],
      loser: [],
      expect: 'ConcurrentDeleteReadError',
      file: 'a',
    },
    {
      id: 'OTS-K10 schema change',
      metadata: empty,
      winner: [A.metadata(meta({ id: 'int', y: 'int' }, [], SERIALIZABLE))],
      loser: [],
      expect: 'MetadataChangedError',
    },
    {
      id: 'OTS-K11 conflicting txns',
      metadata: empty,
      readAppIds: ['t1'],
      winner: [A.txn('t1', 0n)],
      loser: [],
      expect: 'ConcurrentTransactionError',
    },
    {
      id: 'OTS-K12 upgrade / upgrade',
      metadata: empty,
      winner: [A.protocol(createProtocol({ minReaderVersion: 1, minWriterVersion: 3 }))],
      loser: [A.protocol(createProtocol({ minReaderVersion: 1, minWriterVersion: 3 }))],
      expect: 'ProtocolChangedError',
    },
    {
      id: 'OTS-K13 taint whole table',
      metadata: byX,
      files: [xa2],
      reads: [{ scan: 'x = 1' }, { wholeTable: true }],
      winner: [A.add(add('b', { part: { x: '3' } }))],
      loser: [A.add(add('c', { part: { x: '4' } }))],
      expect: 'ConcurrentAppendError',
      file: 'b',
    },
  ])
})

// === OTS part 3: the legacy tests ===

const P = meta({ part: 'string', year: 'int', value: 'int' }, ['part'], SERIALIZABLE)
const nested = meta({ a: 'string', b: 'string', value: 'int' }, ['a', 'b'], SERIALIZABLE)
const unpartitioned = meta({ value: 'int' }, [], SERIALIZABLE)
const p = (name: string, part: string) => add(`part=${part}/${name}`, { part: { part } })
const n = (a: string, b: string, name: string) => add(`a=${a}/b=${b}/${name}`, { part: { a, b } })
const A_P1 = p('A', '1')
const B_P1 = p('B', '1')
const C_P1 = p('C', '1')
const C_P2 = p('C', '2')
const D_P2 = p('D', '2')
const E_P3 = p('E', '3')
const F_P3 = p('F', '3')
const G_P4 = p('G', '4')
const A_1_1 = n('1', '1', 'a')
const B_1_2 = n('1', '2', 'b')
const C_2_1 = n('2', '1', 'c')
const D_3_1 = n('3', '1', 'd')
const noChange = (f: AddFile) => add(f.path, { part: f.partitionValues, dataChange: false })

describe('baseline legacy tests (OTS-L)', () => {
  runTable([
    {
      id: 'OTS-L01 block append against metadata change',
      metadata: unpartitioned,
      winner: [A.metadata(meta({ value: 'int', other: 'int' }, [], SERIALIZABLE))],
      loser: [A.add(add('a'))],
      expect: 'MetadataChangedError',
    },
    {
      id: 'OTS-L02 block read+append against append',
      metadata: unpartitioned,
      reads: [{ scan: undefined }],
      winner: [A.add(add('a'))],
      loser: [A.add(add('b'))],
      expect: 'ConcurrentAppendError',
    },
    {
      id: 'OTS-L03 allow blind-append against any data change',
      metadata: unpartitioned,
      files: [add('a')],
      winner: [A.remove(remove('a')), A.add(add('b'))],
      loser: [A.add(add('c'))],
      expect: 'ok',
    },
    {
      id: 'OTS-L04 allow read+append+delete against no data change',
      metadata: unpartitioned,
      files: [add('a')],
      reads: [{ scan: undefined }],
      winner: [],
      loser: [A.remove(remove('a')), A.add(add('b'))],
      expect: 'ok',
    },
    {
      id: 'OTS-L05 allow concurrent commit on disjoint partitions',
      metadata: P,
      files: [A_P1, E_P3],
      reads: [{ scan: "part = '3'" }],
      winner: [A.add(B_P1)],
      winnerReadsFirst: true,
      loser: [A.add(C_P2), A.remove(removeOf(E_P3))],
      expect: 'ok',
    },
    {
      id: 'OTS-L06 allow concurrent commit on disjoint partitions reading all partitions',
      metadata: P,
      files: [A_P1, D_P2],
      reads: [{ scan: "part IN ('1')" }],
      winner: [A.add(C_P2), A.remove(removeOf(D_P2))],
      winnerReadsFirst: true,
      loser: [A.add(E_P3), A.add(F_P3)],
      expect: 'ok',
    },
    {
      id: 'OTS-L07 block concurrent commit when read partition was appended to',
      metadata: P,
      files: [A_P1, D_P2, E_P3],
      reads: [{ scan: "part = '1'" }],
      winner: [A.add(B_P1)],
      winnerReadsFirst: true,
      loser: [A.add(C_P2), A.add(E_P3)],
      expect: 'ConcurrentAppendError',
      file: B_P1.path,
    },
    {
      id: 'OTS-L08 block concurrent commit on full table scan',
      metadata: P,
      files: [A_P1, D_P2],
      reads: [{ scan: undefined }, { scan: "part = '1'" }],
      winner: [A.add(C_P2), A.remove(removeOf(D_P2))],
      winnerReadsFirst: true,
      loser: [A.add(E_P3), A.add(F_P3)],
      expect: 'ConcurrentAppendError',
      file: C_P2.path,
    },
    {
      id: 'OTS-L09 allow concurrent adds to disjoint nested partitions',
      metadata: nested,
      files: [A_1_1],
      reads: [{ scan: "a = '1' AND b = '1'" }],
      winner: [A.add(B_1_2)],
      winnerReadsFirst: true,
      loser: [A.add(C_2_1)],
      expect: 'ok',
    },
    {
      id: 'OTS-L10 allow concurrent adds to same nested partitions when read is disjoint',
      metadata: nested,
      files: [A_1_1],
      reads: [{ scan: "a = '1' AND b = '1'" }],
      winner: [A.add(B_1_2)],
      winnerReadsFirst: true,
      loser: [A.add(n('1', '2', 'x'))],
      expect: 'ok',
    },
    {
      id: 'OTS-L11 allow concurrent add when lvl1 read is disjoint from lvl2 write',
      metadata: nested,
      files: [A_1_1, B_1_2],
      reads: [{ scan: "a = '1'" }],
      winner: [A.add(C_2_1)],
      winnerReadsFirst: true,
      loser: [A.add(D_3_1)],
      expect: 'ok',
    },
    {
      id: 'OTS-L13 block full table read against write in a nested partition',
      metadata: nested,
      files: [A_1_1],
      reads: [{ scan: undefined }],
      winner: [A.add(B_1_2)],
      winnerReadsFirst: true,
      loser: [A.add(C_2_1)],
      expect: 'ConcurrentAppendError',
    },
    {
      id: 'OTS-L15 block commit with concurrent removes on same file',
      metadata: nested,
      files: [B_1_2],
      reads: [{ scan: "a = '2'" }],
      winner: [A.remove(removeOf(B_1_2))],
      winnerReadsFirst: true,
      loser: [A.remove(removeOf(B_1_2))],
      expect: 'ConcurrentDeleteDeleteError',
      file: B_1_2.path,
    },
    {
      id: 'OTS-L16 delete-delete conflict when the winning remove has empty partition values',
      metadata: nested,
      files: [B_1_2],
      reads: [{ scan: "a = '2'" }],
      winner: [A.remove(remove(B_1_2.path, { part: {} }))],
      winnerReadsFirst: true,
      loser: [A.remove(removeOf(B_1_2))],
      expect: 'ConcurrentDeleteDeleteError',
      file: B_1_2.path,
    },
    {
      id: 'OTS-L18 block full table read against add in any partition',
      metadata: P,
      files: [A_P1, C_P2],
      reads: [{ scan: undefined }],
      winner: [A.remove(removeOf(C_P2)), A.add(B_P1)],
      winnerReadsFirst: true,
      loser: [A.add(D_P2)],
      expect: 'ConcurrentAppendError',
      file: B_P1.path,
    },
    {
      id: 'OTS-L19 block full table read against delete in any partition',
      metadata: P,
      files: [A_P1, C_P2],
      reads: [{ scan: undefined }],
      winner: [A.remove(removeOf(A_P1))],
      winnerReadsFirst: true,
      loser: [A.remove(removeOf(B_P1))],
      expect: 'ConcurrentDeleteReadError',
      file: A_P1.path,
    },
    {
      id: 'OTS-L20 block concurrent replaceWhere initial empty',
      metadata: P,
      files: [A_P1],
      reads: [{ scan: "part >= '2'" }],
      winner: [A.add(E_P3)],
      winnerReadsFirst: true,
      loser: [A.add(C_P2)],
      expect: 'ConcurrentAppendError',
      file: E_P3.path,
    },
    {
      id: 'OTS-L21 allow concurrent replaceWhere on disjoint partitions initial empty',
      metadata: P,
      files: [A_P1],
      reads: [{ scan: "part > '3'" }],
      winner: [A.add(C_P2)],
      winnerReadsFirst: true,
      loser: [A.add(G_P4)],
      expect: 'ok',
    },
    {
      id: 'OTS-L22 block concurrent replaceWhere not empty but conflicting predicate',
      metadata: P,
      files: [A_P1, G_P4],
      reads: [{ scan: "part >= '2'" }],
      winner: [A.remove(removeOf(A_P1)), A.add(C_P2)],
      winnerReadsFirst: true,
      loser: [A.remove(removeOf(G_P4)), A.add(E_P3)],
      expect: 'ConcurrentAppendError',
      file: C_P2.path,
    },
    {
      id: 'OTS-L23 block concurrent commit on read & add conflicting partitions',
      metadata: P,
      files: [A_P1],
      reads: [{ scan: "part = '1'" }],
      winner: [A.add(B_P1)],
      winnerReadsFirst: true,
      loser: [A.add(E_P3)],
      expect: 'ConcurrentAppendError',
    },
    {
      id: 'OTS-L24 block concurrent commit on read & delete conflicting partitions',
      metadata: P,
      files: [A_P1, B_P1],
      reads: [{ scan: "part = '1'" }],
      winner: [A.remove(removeOf(A_P1))],
      winnerReadsFirst: true,
      loser: [A.add(E_P3)],
      expect: 'ConcurrentDeleteReadError',
      file: A_P1.path,
    },
    {
      id: 'OTS-L25 block 2 concurrent replaceWhere transactions (append check first)',
      metadata: P,
      files: [A_P1],
      reads: [{ scan: "part = '1'" }],
      winner: [A.remove(removeOf(A_P1)), A.add(B_P1)],
      winnerReadsFirst: true,
      loser: [A.remove(removeOf(A_P1)), A.add(C_P1)],
      expect: 'ConcurrentAppendError',
      file: B_P1.path,
    },
    {
      id: 'OTS-L27 block concurrent full table scan after concurrent write completes',
      metadata: P,
      files: [A_P1, E_P3],
      reads: [{ scan: "part = '1'" }, { scan: undefined }],
      winner: [A.add(C_P2)],
      winnerReadsFirst: true,
      loser: [A.remove(removeOf(A_P1))],
      expect: 'ConcurrentAppendError',
    },
    {
      id: 'OTS-L28 a predicate mixing partition and data columns counts as a full scan',
      metadata: P,
      files: [A_P1, E_P3],
      reads: [{ scan: "part = '1' OR year > 2019" }],
      winner: [A.add(C_P2)],
      winnerReadsFirst: true,
      loser: [A.remove(removeOf(A_P1))],
      expect: 'ConcurrentAppendError',
      file: C_P2.path,
    },
    {
      id: 'OTS-L30 no data change: allow data rearrange when new files concurrently added',
      metadata: P,
      files: [A_P1, B_P1],
      reads: [{ scan: undefined }],
      winner: [A.add(E_P3)],
      winnerReadsFirst: true,
      loser: [
        A.remove(removeOf(A_P1, { dataChange: false })),
        A.remove(removeOf(B_P1, { dataChange: false })),
        A.add(noChange(C_P1)),
      ],
      loserOperation: 'Manual Update',
      expect: 'ok',
    },
    {
      id: 'OTS-L32 readWholeTable should block concurrent delete',
      metadata: P,
      files: [A_P1],
      reads: [{ wholeTable: true }],
      winner: [A.remove(removeOf(A_P1))],
      loser: [A.add(B_P1)],
      expect: 'ConcurrentDeleteReadError',
      file: A_P1.path,
    },
    {
      id: 'OTS-L33 allow concurrent set-txns with different app ids',
      metadata: unpartitioned,
      readAppIds: ['t1'],
      winner: [A.txn('t2', 1n)],
      loser: [],
      expect: 'ok',
    },
    {
      id: 'OTS-L34 block concurrent set-txns with the same app id',
      metadata: unpartitioned,
      readAppIds: ['t1'],
      winner: [A.txn('t1', 1n)],
      loser: [],
      expect: 'ConcurrentTransactionError',
    },
  ])
})

// === OTS part 4 ===

describe('dynamic partition overwrite against concurrent changes (OTS-D1..D4)', () => {
  for (const column of ['part', 'partitionValues']) {
    const m = meta({ [column]: 'int', value: 'int' }, [column], SERIALIZABLE)
    const a = add('a', { part: { [column]: '0' } })
    const b = add('b', { part: { [column]: '1' } })
    const x = add('x', { part: { [column]: '0' } })
    const rows: readonly [string, Action, string][] = [
      [
        'OTS-D1 concurrent append in same partition',
        A.add(add('y', { part: { [column]: '0' } })),
        'ConcurrentAppendError',
      ],
      ['OTS-D2 concurrent append in different partition', A.add(add('y', { part: { [column]: '1' } })), 'ok'],
      ['OTS-D3 concurrent delete in same partition', A.remove(removeOf(a)), 'ConcurrentDeleteDeleteError'],
      ['OTS-D4 concurrent delete in different partition', A.remove(removeOf(b)), 'ok'],
    ]
    for (const [id, winnerAction, expected] of rows) {
      it(`${id} (partition column ${column}): ${expected}`, () => {
        const txn = loser({
          metadata: m,
          files: [a, b],
          reads: [{ predicateOnly: `${column} = 0` }],
          actions: [A.remove(removeOf(a)), A.add(x)],
          operation: 'Manual Update',
        })
        const result = check(txn, winner(2n, [winnerAction], { operation: 'Manual Update' }))
        assert.equal(outcomeOf(result), expected)
        if (result.kind === 'conflict') {
          assert.equal(result.error.winnerOperation, 'Manual Update')
          assert.equal(result.error.winnerVersion, 2n)
          assert.equal(result.error.file, expected === 'ConcurrentAppendError' ? 'y' : 'a')
        }
      })
    }
  }
})

describe('protocol and metadata changes', () => {
  const m = meta({ x: 'int' }, ['x'], SERIALIZABLE)
  const p37 = createProtocol({
    minReaderVersion: 3,
    minWriterVersion: 7,
    readerFeatures: [],
    writerFeatures: [],
  })
  const txn = (protocolActions: readonly Action[] = []) =>
    loser({
      metadata: m,
      protocol: p37,
      actions: [A.add(add('test', { part: { x: '1' } })), ...protocolActions],
    })

  it('OTS-F1: a winner enabling a feature that is active at once aborts with ProtocolChangedError', () => {
    const upgraded = createProtocol({ ...p37, writerFeatures: ['materializePartitionColumns'] })
    const result = check(txn(), winner(2n, [A.protocol(upgraded)]))
    assert.equal(outcomeOf(result), 'ProtocolChangedError')
    assert.match(result.kind === 'conflict' ? result.error.message : '', /protocol was changed/)
  })

  const tolerated: readonly [string, Parameters<typeof createProtocol>[0]][] = [
    [
      'adds deletionVectors (inactive until the property is set)',
      { ...p37, readerFeatures: ['deletionVectors'], writerFeatures: ['deletionVectors'] },
    ],
    ['restates the read protocol', p37],
  ]
  for (const [what, next] of tolerated) {
    it(`a winner protocol that ${what} is adopted`, () => {
      const result = check(txn(), winner(2n, [A.protocol(createProtocol(next))]))
      assert.equal(result.kind, 'ok')
      if (result.kind === 'ok') assert.deepEqual(result.txn.protocol, createProtocol(next))
    })
  }

  const refused: readonly [string, Parameters<typeof createProtocol>[0]][] = [
    ['drops a feature', { minReaderVersion: 1, minWriterVersion: 2 }],
    [
      'adds an unreadable reader feature',
      { ...p37, readerFeatures: ['catalogManaged'], writerFeatures: ['catalogManaged'] },
    ],
    [
      'adds rowTracking, whose support alone obliges writers',
      { ...p37, writerFeatures: ['domainMetadata', 'rowTracking'] },
    ],
  ]
  for (const [what, next] of refused) {
    it(`a winner protocol that ${what} aborts with ProtocolChangedError`, () => {
      const base = createProtocol({ ...p37, writerFeatures: ['appendOnly'] })
      const t = loser({ metadata: m, protocol: what === 'drops a feature' ? base : p37, actions: [] })
      assert.equal(
        outcomeOf(check(t, winner(2n, [A.protocol(createProtocol(next))]))),
        'ProtocolChangedError',
      )
    })
  }

  it('a winner metaData identical to the read metadata is tolerated when the loser changes none', () => {
    const t = loser({ metadata: m, actions: [A.add(add('b', { part: { x: '1' } }))] })
    assert.equal(outcomeOf(check(t, winner(2n, [A.metadata(m)]))), 'ok')
  })

  it('an identical winner metaData still conflicts when the loser changes metadata too', () => {
    const t = loser({ metadata: m, actions: [A.metadata(m)] })
    assert.equal(outcomeOf(check(t, winner(2n, [A.metadata(m)]))), 'MetadataChangedError')
  })

  it('domain metadata written by both conflicts, except the row-tracking domain', () => {
    const t = loser({ metadata: m, actions: [A.domain('app.x'), A.domain('delta.rowTracking')] })
    assert.equal(outcomeOf(check(t, winner(2n, [A.domain('delta.rowTracking')]))), 'ok')
    assert.equal(outcomeOf(check(t, winner(2n, [A.domain('app.y')]))), 'ok')
    assert.equal(outcomeOf(check(t, winner(2n, [A.domain('app.x')]))), 'ConcurrentTransactionError')
  })
})

describe('conflict errors name the winner (OTS-E1)', () => {
  it('OTS-E1: the error carries the winning operation TRUNCATE, its version, the file and the check', () => {
    const m = meta({ x: 'int' }, ['x'], SERIALIZABLE)
    const txn = loser({
      metadata: m,
      reads: [{ scan: 'x = 1' }],
      actions: [A.add(add('b', { part: { x: '1' } }))],
    })
    const result = check(txn, winner(7n, [A.add(add('a', { part: { x: '1' } }))], { operation: 'TRUNCATE' }))
    assert.equal(result.kind, 'conflict')
    if (result.kind !== 'conflict') return
    assert.equal(result.error.code, 'DELTA_CONCURRENT_APPEND')
    assert.equal(result.error.winnerOperation, 'TRUNCATE')
    assert.equal(result.error.winnerVersion, 7n)
    assert.equal(result.error.file, 'a')
    assert.equal(result.error.check, 'checkAddedFilesThatShouldHaveBeenRead')
    assert.match(result.error.message, /version 7 \(TRUNCATE\).*Conflicting file: a/)
  })
})

describe('isolation levels decide which winner adds are checked', () => {
  const m = (level: string) => meta({ x: 'int' }, ['x'], { 'delta.isolationLevel': level })
  const cases: readonly [string, string, boolean, string][] = [
    ['WriteSerializable', 'blind append', true, 'ok'],
    ['WriteSerializable', 'non-blind add', false, 'ConcurrentAppendError'],
    ['Serializable', 'blind append', true, 'ConcurrentAppendError'],
  ]
  for (const [level, kind, blind, expected] of cases) {
    it(`${level}: a winner ${kind} into the read partition gives ${expected}`, () => {
      const txn = loser({
        metadata: m(level),
        reads: [{ scan: 'x = 1' }],
        actions: [A.remove(remove('old', { part: { x: '1' } }))],
        operation: 'DELETE',
      })
      const w = winner(2n, [A.add(add('a', { part: { x: '1' } }))], { blind })
      assert.equal(outcomeOf(check(txn, w)), expected)
    })
  }

  it('WriteSerializable with a loser metadata change checks blind appends too', () => {
    const mm = m('WriteSerializable')
    const txn = loser({
      metadata: mm,
      reads: [{ scan: 'x = 1' }],
      actions: [A.metadata(mm)],
      operation: 'DELETE',
    })
    const w = winner(2n, [A.add(add('a', { part: { x: '1' } }))], { blind: true })
    assert.equal(outcomeOf(check(txn, w)), 'ConcurrentAppendError')
  })
})
