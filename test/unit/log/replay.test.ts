import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { InternalError, InvalidTableError } from '../../../src/errors/index.js'
import { planLogSegment } from '../../../src/log/log-segment.js'
import { dvUniqueId, fileActionKey, type ReplayBatch, replayLog } from '../../../src/log/replay.js'
import { parseCommitFile } from '../../../src/protocol/action-json.js'
import {
  type Action,
  createAction,
  type DeletionVectorDescriptor,
  type Metadata,
  type Protocol,
} from '../../../src/protocol/actions.js'
import { parseStats } from '../../../src/protocol/stats.js'
import {
  GOLDEN_SKIP,
  goldenExpected,
  goldenTables,
  logListing,
  readLogFile,
} from '../protocol/golden-logs.js'

const PROTOCOL: Protocol = {
  minReaderVersion: 3,
  minWriterVersion: 7,
  readerFeatures: ['deletionVectors'],
  writerFeatures: ['deletionVectors'],
}
const META: Metadata = {
  id: 'm1',
  format: { provider: 'parquet', options: {} },
  schemaString: '{"type":"struct","fields":[]}',
  partitionColumns: [],
  configuration: {},
}
const dv = (id: string, offset?: number): DeletionVectorDescriptor => ({
  storageType: 'u',
  pathOrInlineDv: id,
  ...(offset === undefined ? {} : { offset }),
  sizeInBytes: 34,
  cardinality: 1n,
})
const add = (path: string, d?: DeletionVectorDescriptor): Action =>
  createAction('add', {
    path,
    partitionValues: {},
    size: 1n,
    modificationTime: 1n,
    dataChange: true,
    deletionVector: d,
  })
const remove = (path: string, d?: DeletionVectorDescriptor): Action =>
  createAction('remove', { path, dataChange: true, deletionTimestamp: 5n, deletionVector: d })
const base: Action[] = [createAction('protocol', PROTOCOL), createAction('metaData', META)]
const commit = (version: number, actions: Action[]): ReplayBatch => ({
  version: BigInt(version),
  actions,
  fromCheckpoint: false,
})

function activePaths(batches: ReplayBatch[]): string[] {
  return [...replayLog(batches).activeFiles.values()]
    .map((a) => `${a.path}${a.deletionVector ? `+${a.deletionVector.pathOrInlineDv}` : ''}`)
    .sort()
}

describe('file action keys', () => {
  it('are the path alone without a DV, and path plus DV unique id with one', () => {
    assert.equal(dvUniqueId(dv('abc')), 'uabc')
    assert.equal(dvUniqueId(dv('abc', 1)), 'uabc@1')
    assert.equal(fileActionKey('f'), 'f')
    assert.notEqual(fileActionKey('f', dv('abc', 1)), fileActionKey('f', dv('abc', 43)))
    assert.notEqual(fileActionKey('f', dv('abc', 1)), fileActionKey('f', dv('abc')))
    assert.notEqual(fileActionKey('f', dv('abc')), fileActionKey('f'))
  })
})

describe('replayLog', () => {
  it('keeps added files and drops removed ones', () => {
    assert.deepEqual(
      activePaths([commit(0, [...base, add('a'), add('b')]), commit(1, [remove('a'), add('c')])]),
      ['b', 'c'],
    )
  })

  it('makes a re-added file live again and forgets its tombstone', () => {
    const state = replayLog([commit(0, [...base, add('a')]), commit(1, [remove('a')]), commit(2, [add('a')])])
    assert.deepEqual([...state.activeFiles.keys()], ['a'])
    assert.equal(state.tombstones.size, 0)
  })

  it('treats the same path with another DV as another logical file, in either order within a commit', () => {
    for (const order of ['add-first', 'remove-first']) {
      const update =
        order === 'add-first' ? [add('f', dv('dv1', 1)), remove('f')] : [remove('f'), add('f', dv('dv1', 1))]
      const state = replayLog([commit(0, [...base, add('f')]), commit(1, update)])
      assert.deepEqual([...state.activeFiles.keys()], [fileActionKey('f', dv('dv1', 1))], order)
      assert.deepEqual([...state.tombstones.keys()], ['f'], order)
    }
  })

  it('lets the later line win for the same key within one commit', () => {
    assert.deepEqual(activePaths([commit(0, [...base, add('f')]), commit(1, [remove('f'), add('f')])]), ['f'])
    assert.deepEqual(activePaths([commit(0, [...base, add('f')]), commit(1, [add('f'), remove('f')])]), [])
  })

  it('takes the latest protocol and metadata', () => {
    const p2: Protocol = { minReaderVersion: 1, minWriterVersion: 2 }
    const m2: Metadata = { ...META, id: 'm2' }
    const state = replayLog([
      commit(0, base),
      commit(1, [createAction('metaData', m2)]),
      commit(2, [createAction('protocol', p2)]),
    ])
    assert.equal(state.metadata.id, 'm2')
    assert.deepEqual(state.protocol, p2)
    assert.equal(state.version, 2n)
  })

  it('keeps the latest txn per application and drops removed domains', () => {
    const state = replayLog([
      commit(0, [
        ...base,
        createAction('txn', { appId: 'a', version: 5n }),
        createAction('txn', { appId: 'b', version: 1n }),
        createAction('domainMetadata', { domain: 'd1', configuration: '{"v":1}', removed: false }),
        createAction('domainMetadata', { domain: 'd2', configuration: '{}', removed: false }),
      ]),
      commit(1, [
        createAction('txn', { appId: 'a', version: 3n }),
        createAction('domainMetadata', { domain: 'd1', configuration: '{"v":2}', removed: false }),
        createAction('domainMetadata', { domain: 'd2', configuration: '{}', removed: true }),
      ]),
    ])
    assert.equal(state.setTransactions.get('a')?.version, 3n)
    assert.equal(state.setTransactions.get('b')?.version, 1n)
    assert.deepEqual([...state.domainMetadata.keys()], ['d1'])
    assert.equal(state.domainMetadata.get('d1')?.configuration, '{"v":2}')
  })

  it("exposes only the last commit's commitInfo", () => {
    const info = (op: string) => createAction('commitInfo', { operation: op })
    assert.equal(
      replayLog([commit(0, [info('CREATE'), ...base]), commit(1, [info('WRITE')])]).latestCommitInfo
        ?.operation,
      'WRITE',
    )
    assert.equal(
      replayLog([commit(0, [info('CREATE'), ...base]), commit(1, [add('x')])]).latestCommitInfo,
      undefined,
    )
  })

  it('starts from checkpoint batches and takes only commitInfo from the commit at the checkpoint version', () => {
    const checkpoint: ReplayBatch[] = [
      { version: 10n, actions: [...base, add('a')], fromCheckpoint: true },
      { version: 10n, actions: [add('b'), remove('old')], fromCheckpoint: true },
    ]
    const atCheckpoint = replayLog([
      ...checkpoint,
      commit(10, [createAction('commitInfo', { operation: 'DELETE' }), remove('a')]),
    ])
    assert.deepEqual([...atCheckpoint.activeFiles.keys()], ['a', 'b'])
    assert.equal(atCheckpoint.latestCommitInfo?.operation, 'DELETE')
    assert.equal(atCheckpoint.checkpointVersion, 10n)
    const later = replayLog([...checkpoint, commit(11, [remove('a')])])
    assert.deepEqual([...later.activeFiles.keys()], ['b'])
    assert.deepEqual([...later.tombstones.keys()], ['old', 'a'])
    assert.equal(later.version, 11n)
  })

  it('refuses a state without protocol or metadata', () => {
    const reason = (r: string) => (e: unknown) => e instanceof InvalidTableError && e.reason === r
    assert.throws(() => replayLog([commit(0, [createAction('metaData', META)])]), reason('missing-protocol'))
    assert.throws(
      () => replayLog([commit(0, [createAction('protocol', PROTOCOL)])]),
      reason('missing-metadata'),
    )
    assert.throws(() => replayLog([]), reason('missing-protocol'))
  })

  it('refuses batches out of order as a bug of the caller', () => {
    assert.throws(() => replayLog([commit(1, base), commit(0, [])]), InternalError)
    assert.throws(() => replayLog([commit(0, base), commit(0, [])]), InternalError)
    assert.throws(
      () => replayLog([commit(0, base), { version: 1n, actions: [], fromCheckpoint: true }]),
      InternalError,
    )
    assert.throws(() => replayLog([commit(5, base), commit(3, [])]), InternalError)
  })

  it('returns immutable state', () => {
    const state = replayLog([commit(0, [...base, add('a')])])
    assert.ok(Object.isFrozen(state))
    assert.equal(typeof (state.activeFiles as unknown as { set?: unknown }).set, 'undefined')
    assert.ok(!(state.activeFiles instanceof Map))
  })

  it('replays 100k adds and 50k removes correctly', () => {
    const adds: Action[] = []
    for (let i = 0; i < 100_000; i++) adds.push(add(`part-${i}.parquet`))
    const removes: Action[] = []
    for (let i = 0; i < 100_000; i += 2) removes.push(remove(`part-${i}.parquet`))
    const state = replayLog([commit(0, [...base, ...adds]), commit(1, removes)])
    assert.equal(state.activeFiles.size, 50_000)
    assert.equal(state.tombstones.size, 50_000)
    assert.ok(state.activeFiles.has('part-99999.parquet') && !state.activeFiles.has('part-99998.parquet'))
  })
})

describe('golden table replay from JSON commits', { skip: GOLDEN_SKIP }, () => {
  function replayTable(table: string, targetVersion?: bigint) {
    const segment = planLogSegment(
      logListing(table).filter((f) => /^_delta_log\/\d{20}\.json$/.test(f.key)),
      { targetVersion },
    )
    return replayLog(
      segment.commits.map((c) => ({
        version: c.version,
        actions: parseCommitFile(readLogFile(table, c.file.key.slice('_delta_log/'.length)), {
          version: c.version,
        }),
        fromCheckpoint: false,
      })),
    )
  }

  it('match the live-file facts of expected.json for every readable table', () => {
    const expected = goldenExpected() as Record<
      string,
      { latestVersion: number | null; activeFiles?: string[]; logStats?: Record<string, number | null> }
    >
    let checked = 0
    for (const table of goldenTables()) {
      const exp = expected[table]
      if (!exp || exp.latestVersion === null) continue
      const state = replayTable(table)
      const files = [...state.activeFiles.values()]
      assert.equal(state.version, BigInt(exp.latestVersion), table)
      const stats = exp.logStats ?? {}
      if (stats.numActiveFiles != null)
        assert.equal(files.length, stats.numActiveFiles, `${table} active files`)
      if (exp.activeFiles)
        assert.deepEqual(files.map((f) => f.path).sort(), [...exp.activeFiles].sort(), table)
      if (stats.numFilesWithDV != null) {
        assert.equal(
          files.filter((f) => f.deletionVector).length,
          stats.numFilesWithDV,
          `${table} files with DV`,
        )
      }
      if (stats.sumDvCardinality != null) {
        const sum = files.reduce((s, f) => s + (f.deletionVector?.cardinality ?? 0n), 0n)
        assert.equal(sum, BigInt(stats.sumDvCardinality), `${table} DV cardinality`)
      }
      if (stats.sumNumRecords != null) {
        const sum = files.reduce((s, f) => s + (parseStats(f.stats)?.numRecords ?? 0n), 0n)
        assert.equal(sum, BigInt(stats.sumNumRecords), `${table} numRecords`)
      }
      checked++
    }
    assert.ok(checked >= 25, `checked ${checked} tables`)
  })

  it('follow the DV chain of log-replay-dv-key-cases: one live file, the old DVs as tombstones', () => {
    const state = replayTable('log-replay-dv-key-cases')
    const [live] = [...state.activeFiles.values()]
    assert.equal(state.activeFiles.size, 1)
    assert.equal(live?.deletionVector?.cardinality, 3n)
    assert.deepEqual(
      [...state.tombstones.values()].map((r) => r.deletionVector?.pathOrInlineDv ?? null).sort(),
      [null, 'h{&8fAg]=QYJvl-}c!yH', 'j=hZPftg7qJYIw^L+Oz9'].sort(),
    )
    assert.equal(state.latestCommitInfo?.operation, 'DELETE')
  })

  it('take the latest schema and protocol of log-replay-latest-metadata-protocol', () => {
    const state = replayTable('log-replay-latest-metadata-protocol')
    assert.deepEqual(state.protocol, {
      minReaderVersion: 3,
      minWriterVersion: 7,
      readerFeatures: [],
      writerFeatures: ['appendOnly', 'invariants'],
    })
    assert.ok(state.metadata.schemaString?.includes('"col2"'))
    assert.ok(
      !replayTable('log-replay-latest-metadata-protocol', 0n).metadata.schemaString?.includes('"col2"'),
    )
  })

  it('follow remove and re-add across commits at every version', () => {
    const expectedFiles = [['foo'], [], ['foo'], ['bar', 'foo']]
    expectedFiles.forEach((paths, v) => {
      const state = replayTable('delete-re-add-same-file-different-transactions', BigInt(v))
      assert.deepEqual([...state.activeFiles.values()].map((f) => f.path).sort(), paths, `version ${v}`)
    })
    const foo = replayTable('delete-re-add-same-file-different-transactions').activeFiles.get('foo')
    assert.equal(foo?.modificationTime, 1700000000000n)
  })
})
