import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  chooseIsolationLevel,
  createReadPredicate,
  createTransactionInfo,
  withActions,
  withoutReadFiles,
} from '../../../src/conflict/transaction-info.js'
import { summarizeWinningCommit } from '../../../src/conflict/winning-commit.js'
import { initDeletionVectors } from '../../../src/dv/initialization.js'
import { InvalidArgumentError } from '../../../src/errors/index.js'
import type { Action } from '../../../src/protocol/actions.js'
import { A, add, inlineDv, LEGACY_PROTOCOL, meta, remove } from './factories.js'

// Table rows build deletion vectors while the suites are defined.
await initDeletionVectors()

const m = meta({ id: 'long' })

function info(
  actions: readonly Action[],
  reads: { predicates?: number; files?: number; whole?: boolean } = {},
) {
  return createTransactionInfo({
    readVersion: 3n,
    operation: 'WRITE',
    isolationLevel: 'WriteSerializable',
    readPredicates: Array.from({ length: reads.predicates ?? 0 }, () => createReadPredicate({})),
    readFiles: Array.from({ length: reads.files ?? 0 }, (_, i) => add(`r${i}`)),
    readWholeTable: reads.whole ?? false,
    actions,
    metadata: m,
    protocol: LEGACY_PROTOCOL,
  })
}

/** A change data file, as a DML on a table with change data feed enabled commits it. */
const CDC: Action = {
  cdc: {
    path: '_change_data/cdc-00000.c000.snappy.parquet',
    partitionValues: {},
    size: 10n,
    dataChange: false,
  },
}

describe('derived values of the losing transaction (rlc-spec 1.5)', () => {
  const rows: readonly [string, readonly Action[], Parameters<typeof info>[1], boolean, boolean][] = [
    ['only adds, no reads', [A.add(add('a'))], {}, true, true],
    ['an empty commit, no reads', [], {}, true, true],
    ['only adds after a predicate read', [A.add(add('a'))], { predicates: 1 }, false, true],
    ['only adds after scanning files', [A.add(add('a'))], { files: 1 }, false, true],
    ['only adds after a whole-table read', [A.add(add('a'))], { whole: true }, false, true],
    ['a remove', [A.add(add('a')), A.remove(remove('b'))], {}, false, false],
    ['an add with a deletion vector', [A.add(add('a', { dv: inlineDv([1]) }))], {}, true, false],
    ['metadata and adds (append-only still)', [A.metadata(m), A.add(add('a'))], {}, true, true],
    ['adds and a change data file', [A.add(add('a')), CDC], {}, false, false],
  ]
  for (const [what, actions, reads, blind, appendOnly] of rows) {
    it(`${what}: blind append ${blind}, append-only ${appendOnly}`, () => {
      const t = info(actions, reads)
      assert.equal(t.isBlindAppend, blind)
      assert.equal(t.isAppendOnly, appendOnly)
    })
  }

  it('metadataChanged follows the actions, and withActions recomputes it but keeps blind-append', () => {
    const t = info([A.add(add('a'))])
    assert.equal(t.metadataChanged, false)
    const t2 = withActions(t, [A.metadata(m), A.remove(remove('x'))])
    assert.equal(t2.metadataChanged, true)
    assert.equal(t2.isAppendOnly, false)
    assert.equal(t2.isBlindAppend, true)
    assert.equal(t.actions.length, 1)
    assert.ok(Object.isFrozen(t2))
  })

  it('withoutReadFiles drops paths and returns the same value when nothing changes', () => {
    const t = info([], { files: 2 })
    assert.equal(withoutReadFiles(t, ['nope']), t)
    const t2 = withoutReadFiles(t, ['r0'])
    assert.deepEqual([...t2.readFiles.keys()], ['r1'])
    assert.deepEqual([...t.readFiles.keys()], ['r0', 'r1'])
  })
})

describe('chooseIsolationLevel (rlc-spec 1.7)', () => {
  const dataFalse = [A.remove(remove('a', { dataChange: false })), A.add(add('b', { dataChange: false }))]
  const rows: readonly [string, readonly Action[], Record<string, string>, string, string][] = [
    ['OPTIMIZE (all dataChange=false) under the default', dataFalse, {}, 'OPTIMIZE', 'SnapshotIsolation'],
    [
      'a data-changing op with dataChange=false files under WriteSerializable',
      dataFalse,
      {},
      'DELETE',
      'WriteSerializable',
    ],
    [
      'the same under Serializable',
      dataFalse,
      { 'delta.isolationLevel': 'Serializable' },
      'DELETE',
      'SnapshotIsolation',
    ],
    ['an empty commit', [], { 'delta.isolationLevel': 'Serializable' }, 'TRUNCATE', 'SnapshotIsolation'],
    ['a DELETE', [A.remove(remove('a'))], {}, 'DELETE', 'WriteSerializable'],
    ['a DELETE with its change data file', [A.remove(remove('a')), CDC], {}, 'DELETE', 'WriteSerializable'],
    [
      'dataChange=false files plus a change data file (Delta: a cdc action never changes data)',
      [...dataFalse, CDC],
      { 'delta.isolationLevel': 'Serializable' },
      'DELETE',
      'SnapshotIsolation',
    ],
    [
      'a DELETE on a Serializable table',
      [A.remove(remove('a'))],
      { 'delta.isolationLevel': 'serializable' },
      'DELETE',
      'Serializable',
    ],
    [
      'dataChange=false files plus the row-tracking domain',
      [...dataFalse, A.domain('delta.rowTracking')],
      {},
      'OPTIMIZE',
      'SnapshotIsolation',
    ],
    [
      'dataChange=false files plus another domain',
      [...dataFalse, A.domain('app')],
      {},
      'OPTIMIZE',
      'WriteSerializable',
    ],
    [
      'dataChange=false files plus metadata',
      [...dataFalse, A.metadata(m)],
      {},
      'OPTIMIZE',
      'WriteSerializable',
    ],
    ['commitInfo is ignored', [...dataFalse, A.commitInfo('OPTIMIZE')], {}, 'OPTIMIZE', 'SnapshotIsolation'],
  ]
  for (const [what, actions, configuration, operation, expected] of rows) {
    it(`${what} -> ${expected}`, () => {
      assert.equal(chooseIsolationLevel({ actions, configuration, operation }), expected)
    })
  }

  it('rejects an unknown delta.isolationLevel', () => {
    assert.throws(
      () =>
        chooseIsolationLevel({
          actions: [],
          configuration: { 'delta.isolationLevel': 'Snapshot' },
          operation: 'WRITE',
        }),
      InvalidArgumentError,
    )
  })
})

describe('summarizeWinningCommit (rlc-spec 1.6)', () => {
  it('splits adds by blind append and finds the deletion-vector updates', () => {
    const dv = inlineDv([3])
    const s = summarizeWinningCommit(5n, [
      A.commitInfo('DELETE', false),
      A.remove(remove('p')),
      A.add(add('p', { dv })),
      A.remove(remove('gone')),
      A.add(add('image')),
      A.txn('app', 1n),
    ])
    assert.equal(s.version, 5n)
    assert.equal(s.operation, 'DELETE')
    assert.equal(s.isBlindAppend, false)
    assert.deepEqual(
      s.changedDataAddedFiles.map((f) => f.path),
      ['p', 'image'],
    )
    assert.deepEqual(s.blindAppendAddedFiles, [])
    assert.deepEqual([...s.dvUpdates.keys()], ['p'])
    assert.equal(s.dvUpdates.get('p')?.deletionVector, dv)
    assert.equal(s.dvUpdatePreImages.get('p')?.path, 'p')
    assert.deepEqual([...s.removedPaths], ['p', 'gone'])
    assert.equal(s.onlyAddFiles, false)
    assert.equal(s.appLevelTransactions.length, 1)
  })

  it('classifies every add of a blind append as blind', () => {
    const s = summarizeWinningCommit(1n, [A.commitInfo('WRITE', true), A.add(add('a'))])
    assert.deepEqual(
      s.blindAppendAddedFiles.map((f) => f.path),
      ['a'],
    )
    assert.deepEqual(s.changedDataAddedFiles, [])
    assert.equal(s.onlyAddFiles, true)
  })

  it('leaves ambiguous paths (re-added twice, or removed twice) out of the DV-update map', () => {
    const s = summarizeWinningCommit(1n, [
      A.remove(remove('p')),
      A.add(add('p', { dv: inlineDv([1]) })),
      A.add(add('p', { dv: inlineDv([2]) })),
      A.remove(remove('q')),
      A.remove(remove('q')),
      A.add(add('q', { dv: inlineDv([1]) })),
      A.remove(remove('r')),
      A.add(add('r')),
    ])
    assert.equal(s.dvUpdates.size, 0)
    assert.equal(s.operation, undefined)
    assert.equal(s.isBlindAppend, undefined)
  })
})
