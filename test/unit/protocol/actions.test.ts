import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  type Action,
  actionKind,
  createAction,
  createAddFile,
  createMetadata,
  isAdd,
  isCdc,
  isCheckpointMetadata,
  isCommitInfo,
  isDomainMetadata,
  isMetadata,
  isProtocol,
  isRemove,
  isSetTransaction,
  isSidecar,
} from '../../../src/protocol/actions.js'

describe('action factories', () => {
  it('copy their input, drop undefined fields and freeze the result deeply', () => {
    const partitionValues: Record<string, string | null> = { p: '1' }
    const add = createAddFile({
      path: 'f',
      partitionValues,
      size: 1n,
      modificationTime: 2n,
      dataChange: true,
      stats: undefined,
      deletionVector: {
        storageType: 'u',
        pathOrInlineDv: 'x',
        offset: undefined,
        sizeInBytes: 1,
        cardinality: 1n,
      },
    })
    partitionValues.p = 'changed'
    assert.equal(add.partitionValues.p, '1')
    assert.ok(!('stats' in add))
    assert.ok(add.deletionVector && !('offset' in add.deletionVector))
    assert.ok(
      Object.isFrozen(add) && Object.isFrozen(add.partitionValues) && Object.isFrozen(add.deletionVector),
    )
    assert.throws(() => {
      ;(add as { path: string }).path = 'g'
    }, TypeError)
  })

  it('put metaData fields in wire order whatever the input order', () => {
    const m = createMetadata({
      configuration: {},
      partitionColumns: [],
      format: { options: {}, provider: 'parquet' },
      id: 'x',
    })
    assert.deepEqual(Object.keys(m), ['id', 'format', 'partitionColumns', 'configuration'])
    assert.deepEqual(Object.keys(m.format), ['provider', 'options'])
  })
})

describe('action guards and kinds', () => {
  const cases: [Action, string, (a: Action) => boolean][] = [
    [
      createAction('add', {
        path: 'f',
        partitionValues: {},
        size: 1n,
        modificationTime: 1n,
        dataChange: true,
      }),
      'add',
      isAdd,
    ],
    [createAction('remove', { path: 'f', dataChange: true }), 'remove', isRemove],
    [
      createAction('metaData', {
        id: 'i',
        format: { provider: 'parquet', options: {} },
        partitionColumns: [],
        configuration: {},
      }),
      'metaData',
      isMetadata,
    ],
    [createAction('protocol', { minReaderVersion: 1, minWriterVersion: 2 }), 'protocol', isProtocol],
    [createAction('commitInfo', { operation: 'WRITE' }), 'commitInfo', isCommitInfo],
    [createAction('txn', { appId: 'a', version: 1n }), 'txn', isSetTransaction],
    [
      createAction('domainMetadata', { domain: 'd', configuration: '{}', removed: false }),
      'domainMetadata',
      isDomainMetadata,
    ],
    [createAction('checkpointMetadata', { version: 1n }), 'checkpointMetadata', isCheckpointMetadata],
    [createAction('sidecar', { path: 's', sizeInBytes: 1n, modificationTime: 1n }), 'sidecar', isSidecar],
    [createAction('cdc', { path: 'c', partitionValues: {}, size: 1n, dataChange: false }), 'cdc', isCdc],
  ]
  const guards = cases.map(([, , g]) => g)
  for (const [action, kind, guard] of cases) {
    it(`recognize ${kind} and only ${kind}`, () => {
      assert.equal(actionKind(action), kind)
      assert.ok(guard(action))
      assert.equal(guards.filter((g) => g(action)).length, 1)
      assert.ok(Object.isFrozen(action))
    })
  }
})
