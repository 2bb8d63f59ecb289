import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { InvalidTableError } from '../../../src/errors/index.js'
import {
  parseAction,
  parseCheckpointRow,
  parseCommitFile,
  serializeAction,
  serializeCommit,
} from '../../../src/protocol/action-json.js'
import { type Action, createAction } from '../../../src/protocol/actions.js'
import { GOLDEN_SKIP, goldenTables, logFileNames, readLogFile } from './golden-logs.js'

const ADD =
  '{"add":{"path":"part-0.parquet","partitionValues":{"p":"1","q":null},"size":765,"modificationTime":1697571663000,"dataChange":true,"stats":"{\\"numRecords\\":50}"}}'

function expectInvalid(fn: () => unknown, reason: string, messagePart?: string | RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof InvalidTableError, `expected InvalidTableError, got ${String(err)}`)
    assert.equal(err.reason, reason)
    if (typeof messagePart === 'string') assert.ok(err.message.includes(messagePart), err.message)
    else if (messagePart) assert.match(err.message, messagePart)
    return true
  })
}

describe('parseCommitFile', () => {
  it('types the fields of an add: bigints for longs, null partition values kept', () => {
    const [a] = parseCommitFile(ADD)
    assert.deepEqual(a, {
      add: {
        path: 'part-0.parquet',
        partitionValues: { p: '1', q: null },
        size: 765n,
        modificationTime: 1697571663000n,
        dataChange: true,
        stats: '{"numRecords":50}',
      },
    })
    assert.ok(Object.isFrozen(a) && Object.isFrozen((a as { add: object }).add))
  })

  it('keeps 64-bit integers above 2^53 exact through parse and serialize', () => {
    const line =
      '{"add":{"path":"f","partitionValues":{},"size":9007199254740993,"modificationTime":9223372036854775807,"dataChange":false,"deletionVector":{"storageType":"u","pathOrInlineDv":"ab^-aqEH.-t@S}K{vb[*k^","offset":1,"sizeInBytes":36,"cardinality":18014398509481985,"maxRowIndex":18014398509481984}}}'
    const [a] = parseCommitFile(line)
    assert.ok(a && 'add' in a)
    assert.equal(a.add.size, 9007199254740993n)
    assert.equal(a.add.modificationTime, 9223372036854775807n)
    assert.equal(a.add.deletionVector?.cardinality, 18014398509481985n)
    assert.equal(a.add.deletionVector?.offset, 1)
    assert.equal(serializeAction(a), line)
  })

  it('keeps big numbers in commitInfo fields it does not type: safe integers as numbers, larger as bigint', () => {
    const [a] = parseCommitFile(
      '{"commitInfo":{"timestamp":1,"engine":"x","n":12,"big":12345678901234567890,"f":1.5,"nested":{"xs":[1,99999999999999999]},"nothing":null}}',
    )
    assert.deepEqual(a, {
      commitInfo: {
        timestamp: 1n,
        engine: 'x',
        n: 12,
        big: 12345678901234567890n,
        f: 1.5,
        nested: { xs: [1, 99999999999999999n] },
        nothing: null,
      },
    })
  })

  it('types the known commitInfo fields and keeps every other field in its order', () => {
    const text =
      '{"commitInfo":{"inCommitTimestamp":1700000000001,"timestamp":1700000000000,"operation":"WRITE","operationParameters":{"mode":"Append","partitionBy":"[]"},"readVersion":4,"isolationLevel":"Serializable","isBlindAppend":true,"operationMetrics":{"numFiles":"1"},"engineInfo":"e","txnId":"t"}}'
    const [a] = parseCommitFile(text)
    assert.ok(a && 'commitInfo' in a)
    assert.equal(a.commitInfo.inCommitTimestamp, 1700000000001n)
    assert.equal(a.commitInfo.readVersion, 4n)
    assert.equal(a.commitInfo.isBlindAppend, true)
    assert.deepEqual(a.commitInfo.operationMetrics, { numFiles: '1' })
    assert.equal(serializeAction(a), text)
  })

  it('skips blank lines, CRLF endings and a byte order mark', () => {
    const actions = parseCommitFile(`\uFEFF${ADD}\r\n\n   \n{"txn":{"appId":"a","version":3}}\r\n`)
    assert.equal(actions.length, 2)
    assert.ok(actions[1] && 'txn' in actions[1])
  })

  it('ignores unknown action kinds and unknown fields', () => {
    const actions = parseCommitFile(
      '{"someFutureAction":{"x":1}}\n{"protocol":{"minReaderVersion":1,"minWriterVersion":2,"futureField":[1]}}',
    )
    assert.deepEqual(actions, [{ protocol: { minReaderVersion: 1, minWriterVersion: 2 } }])
  })

  it('treats explicit nulls of optional fields as absent', () => {
    const [a] = parseCommitFile(
      '{"add":{"path":"f","partitionValues":{},"size":1,"modificationTime":2,"dataChange":true,"stats":null,"tags":null,"deletionVector":null,"baseRowId":null}}',
    )
    assert.deepEqual(a, {
      add: { path: 'f', partitionValues: {}, size: 1n, modificationTime: 2n, dataChange: true },
    })
  })

  it('gives malformed-commit naming the line for text that is not JSON', () => {
    expectInvalid(
      () =>
        parseCommitFile(`${ADD}\n{"add":{"path":"f","partitionValu`, {
          path: '_delta_log/x.json',
          version: 3n,
        }),
      'malformed-commit',
      /line 2.*version 3|_delta_log\/x\.json line 2/,
    )
  })

  const malformed: [string, string, string][] = [
    [
      'wrong type',
      '{"add":{"path":"f","partitionValues":{},"size":"12","modificationTime":1,"dataChange":true}}',
      "'size'",
    ],
    [
      'missing required field',
      '{"add":{"path":"f","partitionValues":{},"size":1,"dataChange":true}}',
      "'modificationTime'",
    ],
    ['two action keys', `{"txn":{"appId":"a","version":1},"add":${ADD.slice(7, -1)}}`, 'two actions'],
    ['no action at all', '{}', 'no action'],
    ['not an object', '[1,2]', 'an array'],
    ['fractional long', '{"txn":{"appId":"a","version":1.5}}', "'version'"],
    ['long out of int64 range', '{"txn":{"appId":"a","version":9223372036854775808}}', '64-bit range'],
    [
      'int out of int32 range',
      '{"protocol":{"minReaderVersion":2147483648,"minWriterVersion":2}}',
      "'minReaderVersion'",
    ],
    [
      'bad DV storage type',
      '{"remove":{"path":"f","dataChange":true,"deletionVector":{"storageType":"x","pathOrInlineDv":"a","sizeInBytes":1,"cardinality":1}}}',
      "'storageType'",
    ],
    [
      'partition value not a string',
      '{"add":{"path":"f","partitionValues":{"p":1},"size":1,"modificationTime":1,"dataChange":true}}',
      "'partitionValues.p'",
    ],
    [
      'configuration value null',
      '{"metaData":{"id":"i","format":{"provider":"parquet"},"partitionColumns":[],"configuration":{"k":null}}}',
      "'configuration.k'",
    ],
    ['payload not an object', '{"add":5}', "'add'"],
    ['metaData without format', '{"metaData":{"id":"i","partitionColumns":[]}}', "'format'"],
  ]
  for (const [name, line, field] of malformed) {
    it(`gives malformed-action for ${name}, naming the field, file and line`, () => {
      expectInvalid(
        () => parseCommitFile(`\n${line}`, { path: 'p.json', version: 7n }),
        'malformed-action',
        field,
      )
      expectInvalid(
        () => parseCommitFile(`\n${line}`, { path: 'p.json', version: 7n }),
        'malformed-action',
        'p.json line 2',
      )
    })
  }

  it('carries path and version on the error', () => {
    try {
      parseCommitFile('{"add":{}}', { path: 'x.json', version: 12n })
      assert.fail('expected a throw')
    } catch (err) {
      assert.ok(err instanceof InvalidTableError)
      assert.equal(err.path, 'x.json')
      assert.equal(err.version, 12n)
    }
  })
})

describe('serializeCommit', () => {
  it('round-trips every action kind', () => {
    const actions: Action[] = [
      createAction('commitInfo', { timestamp: 5n, operation: 'WRITE', custom: { a: [1, 2n ** 60n] } }),
      createAction('protocol', {
        minReaderVersion: 3,
        minWriterVersion: 7,
        readerFeatures: ['deletionVectors'],
        writerFeatures: ['deletionVectors'],
      }),
      createAction('metaData', {
        id: 'id',
        format: { provider: 'parquet', options: {} },
        schemaString: '{"type":"struct","fields":[]}',
        partitionColumns: ['p'],
        configuration: { 'delta.enableDeletionVectors': 'true' },
        createdTime: 1n,
      }),
      createAction('add', {
        path: 'p=a%20b/f.parquet',
        partitionValues: { p: null },
        size: 2n ** 62n,
        modificationTime: 3n,
        dataChange: true,
        tags: { t: 'v' },
        deletionVector: {
          storageType: 'i',
          pathOrInlineDv: 'wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L',
          sizeInBytes: 40,
          cardinality: 6n,
        },
        baseRowId: 10n,
        defaultRowCommitVersion: 2n,
        clusteringProvider: 'liquid',
      }),
      createAction('remove', {
        path: 'g',
        deletionTimestamp: 9n,
        dataChange: false,
        extendedFileMetadata: true,
        size: 4n,
      }),
      createAction('txn', { appId: 'app', version: 2n ** 63n - 1n, lastUpdated: 8n }),
      createAction('domainMetadata', {
        domain: 'delta.rowTracking',
        configuration: '{"rowIdHighWaterMark":9}',
        removed: false,
      }),
      createAction('checkpointMetadata', { version: 2n, tags: { k: null } }),
      createAction('sidecar', { path: 's.parquet', sizeInBytes: 9n, modificationTime: 1n }),
      createAction('cdc', {
        path: '_change_data/c.parquet',
        partitionValues: {},
        size: 1n,
        dataChange: false,
      }),
    ]
    const text = serializeCommit(actions)
    assert.equal(text.split('\n').length, actions.length + 1)
    assert.ok(text.endsWith('\n'))
    assert.deepEqual(parseCommitFile(text), actions)
  })

  it('writes fields in wire order and omits undefined optional fields', () => {
    const a = createAction('add', {
      dataChange: true,
      stats: undefined,
      modificationTime: 1n,
      size: 2n,
      partitionValues: {},
      path: 'f',
    })
    assert.equal(
      serializeAction(a),
      '{"add":{"path":"f","partitionValues":{},"size":2,"modificationTime":1,"dataChange":true}}',
    )
  })
})

describe('parseAction on decoded values', () => {
  it('accepts safe-integer numbers and bigints for long fields', () => {
    const a = parseAction({ txn: { appId: 'a', version: 5, lastUpdated: 2n ** 60n } })
    assert.deepEqual(a, { txn: { appId: 'a', version: 5n, lastUpdated: 2n ** 60n } })
  })

  it('refuses a long that JSON.parse already rounded', () => {
    expectInvalid(
      () => parseAction({ txn: { appId: 'a', version: 2 ** 53 + 2 } }),
      'malformed-action',
      'precision',
    )
  })

  it('returns undefined for an object with only an unknown action kind', () => {
    assert.equal(parseAction({ newKind: { a: 1 } }), undefined)
  })

  it('gives the same result as the lossless path for plain JSON.parse input', () => {
    assert.deepEqual(parseAction(JSON.parse(ADD)), parseCommitFile(ADD)[0])
  })
})

describe('parseCheckpointRow', () => {
  it('reads a row with one non-null column, integers as bigint/number/strings and maps as entries', () => {
    const row = {
      txn: null,
      add: {
        path: 'f',
        partitionValues: new Map([['p', null]]),
        size: 10n,
        modificationTime: '1697571663000',
        dataChange: false,
        tags: [{ key: 't', value: 'v' }],
        deletionVector: {
          storageType: null,
          pathOrInlineDv: null,
          offset: null,
          sizeInBytes: null,
          cardinality: null,
        },
        stats: '{"numRecords":1}',
        partitionValues_parsed: { p: null },
      },
      remove: null,
      metaData: null,
      protocol: null,
      domainMetadata: null,
    }
    assert.deepEqual(parseCheckpointRow(row, { path: 'cp.parquet', version: 10n }), {
      add: {
        path: 'f',
        partitionValues: { p: null },
        size: 10n,
        modificationTime: 1697571663000n,
        dataChange: false,
        stats: '{"numRecords":1}',
        tags: { t: 'v' },
      },
    })
  })

  it('returns undefined for a row whose columns are all null', () => {
    assert.equal(
      parseCheckpointRow({ add: null, remove: null, metaData: { id: null, format: null } }),
      undefined,
    )
  })

  it('refuses a row with two non-null actions', () => {
    expectInvalid(
      () =>
        parseCheckpointRow({
          txn: { appId: 'a', version: 1 },
          domainMetadata: { domain: 'd', configuration: '', removed: false },
        }),
      'malformed-action',
      'two actions',
    )
  })

  it('reads protocol lists and metadata maps as a Parquet decoder returns them', () => {
    const a = parseCheckpointRow({
      metaData: {
        id: 'i',
        format: { provider: 'parquet', options: [] },
        schemaString: '{}',
        partitionColumns: ['p'],
        configuration: [['delta.appendOnly', 'true']],
        createdTime: 5,
      },
    })
    assert.deepEqual(a, {
      metaData: {
        id: 'i',
        format: { provider: 'parquet', options: {} },
        schemaString: '{}',
        partitionColumns: ['p'],
        configuration: { 'delta.appendOnly': 'true' },
        createdTime: 5n,
      },
    })
  })
})

describe('golden table logs', { skip: GOLDEN_SKIP }, () => {
  it('parses every JSON commit and JSON checkpoint, and re-serializes to equal values', () => {
    let files = 0
    for (const table of goldenTables()) {
      for (const name of logFileNames(table)) {
        if (!/^\d{20}\.(json|checkpoint\.[0-9a-f-]{36}\.json)$/.test(name)) continue
        const text = readLogFile(table, name)
        const actions = parseCommitFile(text, { path: `${table}/${name}` })
        assert.ok(actions.length > 0, `${table}/${name} has actions`)
        assert.deepEqual(parseCommitFile(serializeCommit(actions)), actions, `${table}/${name}`)
        // The fast path (no long digit run) and the lossless path agree line by line.
        for (const line of text.split('\n').filter((l) => l.trim() !== '')) {
          assert.deepEqual(parseAction(JSON.parse(line)), parseCommitFile(line)[0], `${table}/${name}`)
        }
        files++
      }
    }
    assert.ok(files > 100, `parsed ${files} files`)
  })

  it('keeps a DV update as a new add listed before the remove of the old DV', () => {
    const actions = parseCommitFile(readLogFile('log-replay-dv-key-cases', '00000000000000000002.json'))
    const kinds = actions.map((a) => Object.keys(a)[0])
    assert.deepEqual(kinds, ['commitInfo', 'add', 'remove'])
    const [, add, remove] = actions
    assert.ok(add && 'add' in add && remove && 'remove' in remove)
    assert.equal(add.add.deletionVector?.cardinality, 2n)
    assert.equal(remove.remove.deletionVector?.pathOrInlineDv, 'h{&8fAg]=QYJvl-}c!yH')
  })
})
