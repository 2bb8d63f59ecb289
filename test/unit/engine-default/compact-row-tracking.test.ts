/**
 * Compaction and rewrites that preserve row tracking: each output carries every row's stable row id and row
 * commit version in the two materialized columns, from its source's materialized values where
 * present and not null, else from the source's `baseRowId` + physical position and
 * `defaultRowCommitVersion` (rows a deletion vector hides keep their positions' ids out). A
 * rewrite of updated rows writes their commit version NULL.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { DataFileRef, RowTrackingColumns } from '../../../src/engine/data-plane.js'
import type { WrittenFile } from '../../../src/engine/data-writer.js'
import { InvalidArgumentError } from '../../../src/errors/index.js'
import { parseExpression, parsePredicate } from '../../../src/expressions/parse-predicate.js'
import { listKeys, readFileRows, schemaOf, targetOf, type WriterEnv, writerEnv } from './writer-helpers.js'

const ROW_ID = '_row-id-col-test'
const VERSION = '_row-commit-version-col-test'
const TRACKING: RowTrackingColumns = {
  materializedRowIdColumn: ROW_ID,
  materializedRowCommitVersionColumn: VERSION,
}
const schema = schemaOf({ name: 'id', type: 'long', nullable: false }, { name: 'v', type: 'string' })
const target = targetOf(schema)
/** The table's columns and the two hidden ones, to read outputs back. */
const withHidden = schemaOf(
  { name: 'id', type: 'long', nullable: false },
  { name: 'v', type: 'string' },
  { name: ROW_ID, type: 'long' },
  { name: VERSION, type: 'long' },
)

let env: WriterEnv
let a: WrittenFile
let b: WrittenFile

before(async () => {
  env = await writerEnv()
  ;[a] = (await env.writer.writeRows({
    rows: [0, 1, 2].map((i) => ({ id: BigInt(i), v: `a${i}` })),
    target,
  })) as [WrittenFile]
  ;[b] = (await env.writer.writeRows({
    rows: [10, 11].map((i) => ({ id: BigInt(i), v: `b${i}` })),
    target,
  })) as [WrittenFile]
})
after(() => env.close())

function ref(
  f: WrittenFile,
  fields: { baseRowId?: bigint; defaultRowCommitVersion?: bigint; deletedRows?: number[] },
): DataFileRef {
  return { key: f.key, partitionValues: {}, ...fields }
}

async function hiddenOf(f: WrittenFile | null): Promise<[unknown, unknown, unknown][]> {
  assert.ok(f)
  const back = await readFileRows(env.store, f.key, withHidden)
  return back.rows.map((r) => [r.id, r[ROW_ID], r[VERSION]])
}

describe('compaction preserving row tracking', () => {
  it('writes default ids of plain sources, then keeps materialized ones when the output is compacted again', async () => {
    const [first] = await env.writer.compact({
      bins: [
        [
          ref(a, { baseRowId: 100n, defaultRowCommitVersion: 4n, deletedRows: [1] }),
          ref(b, { baseRowId: 7n, defaultRowCommitVersion: 2n }),
        ],
      ],
      target,
      rowTracking: TRACKING,
    })
    assert.deepEqual(await hiddenOf(first?.file ?? null), [
      [0n, 100n, 4n],
      [2n, 102n, 4n],
      [10n, 7n, 2n],
      [11n, 8n, 2n],
    ])
    // The output, as a source with fresh ids of its own, and a DV over its second row.
    const [again] = await env.writer.compact({
      bins: [
        [ref(first?.file as WrittenFile, { baseRowId: 50n, defaultRowCommitVersion: 9n, deletedRows: [1] })],
      ],
      target,
      rowTracking: TRACKING,
    })
    assert.deepEqual(await hiddenOf(again?.file ?? null), [
      [0n, 100n, 4n],
      [10n, 7n, 2n],
      [11n, 8n, 2n],
    ])
  })

  it('without the option writes no hidden column', async () => {
    const [out] = await env.writer.compact({ bins: [[ref(b, {})]], target })
    assert.ok(out?.file)
    assert.deepEqual((await readFileRows(env.store, out.file.key, schema)).columns, ['id', 'v'])
  })

  it('refuses sources without row-tracking fields, a missing name, and a name of a data column, writing nothing', async () => {
    const keys = await listKeys(env.store)
    const cases: [string, Parameters<typeof env.writer.compact>[0]][] = [
      ['no baseRowId', { bins: [[ref(a, { defaultRowCommitVersion: 1n })]], target, rowTracking: TRACKING }],
      [
        'one name',
        {
          bins: [[ref(a, { baseRowId: 0n, defaultRowCommitVersion: 1n })]],
          target,
          rowTracking: { materializedRowIdColumn: ROW_ID },
        },
      ],
      [
        'a data column',
        {
          bins: [[ref(a, { baseRowId: 0n, defaultRowCommitVersion: 1n })]],
          target,
          rowTracking: { materializedRowIdColumn: 'V', materializedRowCommitVersionColumn: VERSION },
        },
      ],
    ]
    for (const [name, request] of cases) {
      await assert.rejects(env.writer.compact(request), InvalidArgumentError, name)
    }
    assert.deepEqual(await listKeys(env.store), keys)
  })
})

describe('rewrite preserving row tracking', () => {
  it('copies keep both values; updated rows keep their id with a NULL commit version', async () => {
    const sources = [
      ref(a, { baseRowId: 100n, defaultRowCommitVersion: 4n, deletedRows: [0] }),
      ref(b, { baseRowId: 7n, defaultRowCommitVersion: 2n }),
    ]
    const [copy] = await env.writer.rewrite({
      sources,
      positions: new Map([[a.key, [1]]]),
      positionsMode: 'exclude',
      target,
      rowTracking: TRACKING,
    })
    const copied = (await hiddenOf(copy ?? null)).sort((x, y) => Number((x[0] as bigint) - (y[0] as bigint)))
    assert.deepEqual(copied, [
      [2n, 102n, 4n],
      [10n, 7n, 2n],
      [11n, 8n, 2n],
    ])
    // The copy as a source: its materialized ids win over its own baseRowId.
    const [image] = await env.writer.rewrite({
      sources: [ref(copy as WrittenFile, { baseRowId: 500n, defaultRowCommitVersion: 9n })],
      where: parsePredicate('id > 5'),
      set: { v: parseExpression("'z'") },
      target,
      rowTracking: { ...TRACKING, updated: true },
    })
    const updated = (await hiddenOf(image ?? null)).sort((x, y) =>
      Number((x[0] as bigint) - (y[0] as bigint)),
    )
    assert.deepEqual(updated, [
      [10n, 7n, null],
      [11n, 8n, null],
    ])
  })

  it('refuses sources without row-tracking fields, writing nothing', async () => {
    const keys = await listKeys(env.store)
    await assert.rejects(
      env.writer.rewrite({ sources: [ref(a, { baseRowId: 0n })], target, rowTracking: TRACKING }),
      (e) => e instanceof InvalidArgumentError && /no baseRowId or defaultRowCommitVersion/.test(e.message),
    )
    assert.deepEqual(await listKeys(env.store), keys)
  })
})

describe('row writes preserving row tracking', () => {
  it('writes each row its given id (null for a fresh one) and a NULL commit version', async () => {
    const [file] = await env.writer.writeRows({
      rows: [1, 2, 3].map((i) => ({ id: BigInt(i), v: `w${i}` })),
      target,
      rowTracking: TRACKING,
      rowIds: [40n, null, 7n],
    })
    assert.deepEqual(await hiddenOf(file ?? null), [
      [1n, 40n, null],
      [2n, null, null],
      [3n, 7n, null],
    ])
  })

  it('refuses ids without rowTracking, of the wrong count, or of the wrong type, writing nothing', async () => {
    const keys = await listKeys(env.store)
    const rows = [{ id: 1n, v: 'x' }]
    const cases: [string, Parameters<typeof env.writer.writeRows>[0]][] = [
      ['no rowTracking', { rows, target, rowIds: [1n] }],
      ['two ids for one row', { rows, target, rowTracking: TRACKING, rowIds: [1n, 2n] }],
      ['a number', { rows, target, rowTracking: TRACKING, rowIds: [1 as unknown as bigint] }],
    ]
    for (const [name, request] of cases) {
      await assert.rejects(env.writer.writeRows(request), InvalidArgumentError, name)
    }
    assert.deepEqual(await listKeys(env.store), keys)
  })
})
