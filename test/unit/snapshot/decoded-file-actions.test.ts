/**
 * The quick way from a decoded checkpoint row to its file action gives exactly what the action
 * reader gives, or leaves the row to it: over rows decoded with bigints (as the engine decodes
 * Parquet) and with numbers (as `JSON.parse` decodes a row's text), every optional field present
 * or null, and rows with a field of the wrong type, missing or out of range.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseCheckpointRow, serializeAction } from '../../../src/protocol/action-json.js'
import type { Action } from '../../../src/protocol/actions.js'
import type { DeferredCheckpointRow } from '../../../src/snapshot/checkpoint-parsed-rows.js'
import { decodedFileAction, NOT_DECODED } from '../../../src/snapshot/decoded-file-actions.js'
import { parseRowsInto } from '../../../src/snapshot/read-checkpoint.js'

const ctx = { path: '_delta_log/00000000000000000010.checkpoint.parquet', version: 10n }

/** The reader's answer: the action, or the error's reason and message. */
function readerAnswer(row: Record<string, unknown>): unknown {
  try {
    return { action: parseCheckpointRow(row, ctx) }
  } catch (err) {
    const e = err as { reason?: unknown; message?: string }
    return { reason: e.reason, message: e.message }
  }
}

/** Asserts the quick way agrees with the reader (or leaves the row to it); true when it took it. */
function assertAgrees(row: Record<string, unknown>, what: string): boolean {
  const quick = decodedFileAction(row)
  const reader = readerAnswer(row)
  if (quick === NOT_DECODED) return false
  assert.deepStrictEqual({ action: quick }, reader, what)
  assert.ok(Object.isFrozen(quick), `${what}: frozen`)
  const payload = Object.values(quick)[0] as Record<string, unknown>
  assert.ok(Object.isFrozen(payload), `${what}: payload frozen`)
  return true
}

const long = (n: number, asBigint: boolean): bigint | number => (asBigint ? BigInt(n) : n)

function addRow(i: number, asBigint: boolean): Record<string, unknown> {
  const dv =
    i % 4 === 0
      ? null
      : {
          storageType: ['u', 'i', 'p'][i % 3],
          pathOrInlineDv: `dv-${i}`,
          offset: i % 2 === 0 ? null : i,
          sizeInBytes: 40 + i,
          cardinality: long(i + 1, asBigint),
          maxRowIndex: i % 5 === 0 ? long(i * 10, asBigint) : null,
        }
  return {
    add: {
      path: `part=${i % 3}/f-${i}.parquet`,
      partitionValues: i % 2 === 0 ? {} : { part: String(i % 3), other: i % 7 === 0 ? null : 'x' },
      size: long(1000 + i, asBigint),
      modificationTime: long(1_700_000_000_000 + i, asBigint),
      dataChange: i % 2 === 0,
      stats: i % 3 === 0 ? null : `{"numRecords":${i}}`,
      tags: i % 5 === 0 ? { INSERTION_TIME: '1', empty: null } : i % 5 === 1 ? {} : null,
      deletionVector: dv,
      baseRowId: i % 6 === 0 ? long(i * 100, asBigint) : null,
      defaultRowCommitVersion: i % 6 === 0 ? long(i, asBigint) : null,
      clusteringProvider: i % 9 === 0 ? 'liquid' : null,
    },
  }
}

function removeRow(i: number, asBigint: boolean): Record<string, unknown> {
  return {
    remove: {
      path: `gone-${i}.parquet`,
      deletionTimestamp: i % 3 === 0 ? null : long(1_700_000_000_000 + i, asBigint),
      dataChange: i % 2 === 1,
      extendedFileMetadata: i % 4 === 0 ? null : i % 4 === 1,
      partitionValues: i % 3 === 1 ? null : { part: String(i) },
      size: i % 5 === 0 ? null : long(i, asBigint),
      tags: i % 7 === 0 ? { a: 'b' } : null,
      deletionVector:
        i % 2 === 0
          ? null
          : {
              storageType: 'u',
              pathOrInlineDv: 'ab',
              offset: 1,
              sizeInBytes: 3,
              cardinality: long(2, asBigint),
            },
      baseRowId: null,
      defaultRowCommitVersion: i % 8 === 0 ? long(5, asBigint) : null,
    },
  }
}

function withField(row: Record<string, unknown>, field: string, value: unknown): Record<string, unknown> {
  const [kind, payload] = Object.entries(row)[0] as [string, Record<string, unknown>]
  return { [kind]: { ...payload, [field]: value } }
}

describe('decoded checkpoint file actions', () => {
  it('are the actions the reader gives, for adds and removes decoded with bigints or numbers', () => {
    let taken = 0
    for (let i = 0; i < 200; i++) {
      for (const asBigint of [true, false]) {
        if (assertAgrees(addRow(i, asBigint), `add ${i} ${asBigint}`)) taken++
        if (assertAgrees(removeRow(i, asBigint), `remove ${i} ${asBigint}`)) taken++
      }
    }
    assert.equal(taken, 800, 'every well-typed row takes the quick way')
  })

  it('share one frozen map among the files that have the same partition values', () => {
    const values = { part: '1' }
    const a = decodedFileAction(withField(addRow(1, true), 'partitionValues', values))
    const b = decodedFileAction(withField(addRow(3, true), 'partitionValues', { part: '1' }))
    assert.ok(a !== NOT_DECODED && b !== NOT_DECODED && 'add' in a && 'add' in b)
    assert.equal(a.add.partitionValues, b.add.partitionValues)
    assert.notEqual(a.add.partitionValues, values, 'a frozen copy, not the engine object')
    assert.ok(Object.isFrozen(a.add.partitionValues))
  })

  it('read from JSON text keep every 64-bit integer exact, beyond 2^53 too', () => {
    const big = 2n ** 53n + 1n
    const actions: Action[] = [
      { add: { path: 'a.parquet', partitionValues: {}, size: big, modificationTime: 1n, dataChange: true } },
      {
        add: {
          path: 'b.parquet',
          partitionValues: { p: null },
          size: 5n,
          modificationTime: 2n ** 62n,
          dataChange: false,
          deletionVector: {
            storageType: 'u',
            pathOrInlineDv: 'ab',
            offset: 1,
            sizeInBytes: 3,
            cardinality: big,
          },
          baseRowId: -(2n ** 63n),
        },
      },
      {
        remove: {
          path: 'c.parquet',
          deletionTimestamp: 1_700_000_000_000n,
          dataChange: true,
          size: 2n ** 63n - 1n,
        },
      },
      { remove: { path: 'd.parquet', dataChange: false, size: 12n } },
    ]
    const out: Action[] = []
    const deferred: DeferredCheckpointRow[] = []
    parseRowsInto(out, actions.map(serializeAction), ctx, deferred)
    assert.deepStrictEqual(out, actions)
    assert.equal(deferred.length, 0)
  })

  it('leave every other row to the reader, which accepts or refuses it with its own message', () => {
    const odd: Array<[string, Record<string, unknown>]> = [
      ['no path', withField(addRow(1, true), 'path', null)],
      ['a numeric path', withField(addRow(1, true), 'path', 7)],
      ['no partition values', withField(addRow(1, true), 'partitionValues', null)],
      ['a partition value that is a number', withField(addRow(1, true), 'partitionValues', { p: 1 })],
      ['an undefined partition value', withField(addRow(1, true), 'partitionValues', { p: undefined })],
      ['partition values as a Map', withField(addRow(1, true), 'partitionValues', new Map([['p', 'v']]))],
      ['partition values as entries', withField(addRow(1, true), 'partitionValues', [['p', 'v']])],
      ['a size as text', withField(addRow(1, true), 'size', '12')],
      ['a size beyond 64 bits', withField(addRow(1, true), 'size', 2n ** 64n)],
      ['a size beyond 2^53 as a number', withField(addRow(1, false), 'size', 2 ** 60)],
      ['a fractional size', withField(addRow(1, false), 'size', 1.5)],
      ['no modification time', withField(addRow(1, true), 'modificationTime', null)],
      ['dataChange as text', withField(addRow(1, true), 'dataChange', 'true')],
      ['numeric stats', withField(addRow(1, true), 'stats', 3)],
      ['tags as text', withField(addRow(1, true), 'tags', 'x')],
      [
        'a bad DV storage type',
        withField(addRow(1, true), 'deletionVector', {
          storageType: 'x',
          pathOrInlineDv: 'a',
          sizeInBytes: 1,
          cardinality: 1n,
        }),
      ],
      [
        'an all-null DV',
        withField(addRow(1, true), 'deletionVector', {
          storageType: null,
          pathOrInlineDv: null,
          offset: null,
          sizeInBytes: null,
          cardinality: null,
          maxRowIndex: null,
        }),
      ],
      [
        'a DV without cardinality',
        withField(addRow(1, true), 'deletionVector', {
          storageType: 'u',
          pathOrInlineDv: 'a',
          sizeInBytes: 1,
        }),
      ],
      [
        'a DV offset of -0',
        withField(addRow(1, true), 'deletionVector', {
          storageType: 'u',
          pathOrInlineDv: 'a',
          offset: -0,
          sizeInBytes: 1,
          cardinality: 1n,
        }),
      ],
      [
        'a DV size beyond 32 bits',
        withField(addRow(1, true), 'deletionVector', {
          storageType: 'u',
          pathOrInlineDv: 'a',
          sizeInBytes: 2 ** 31,
          cardinality: 1n,
        }),
      ],
      ['a numeric clustering provider', withField(addRow(1, true), 'clusteringProvider', 1)],
      ['a remove without dataChange', withField(removeRow(1, true), 'dataChange', null)],
      [
        'a remove with extendedFileMetadata as text',
        withField(removeRow(1, true), 'extendedFileMetadata', 'yes'),
      ],
      ['a remove with a size as text', withField(removeRow(1, true), 'size', '3')],
      ['two actions', { ...addRow(1, true), ...removeRow(2, true) }],
      ['an add and a null remove', { ...addRow(1, true), remove: null }],
      ['a metaData row', { metaData: { id: 'x' } }],
      ['an add that is not an object', { add: 'x' }],
      ['an empty row', {}],
    ]
    for (const [what, row] of odd) {
      assert.equal(decodedFileAction(row), NOT_DECODED, what)
      // The reader still answers for it (an action or its own error), exactly as before.
      readerAnswer(row)
    }
  })
})
