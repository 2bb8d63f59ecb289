/**
 * Reading stable row ids: `scan({ withRowTracking: true })` on tables whose logs and Parquet files
 * are made here by hand (DuckDB writes the files, the DV module encodes deletion vectors), so the
 * expected ids follow from the protocol alone: the materialized column where present and not
 * null, else `baseRowId` + physical position, and `defaultRowCommitVersion`.
 */
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { DuckDBInstance } from '@duckdb/node-api'
import { buildDvFile, createFileDescriptor, initDeletionVectors } from '../../src/dv/index.js'
import { RoaringBitmapArray } from '../../src/dv/roaring-bitmap-array.js'
import { isDeltaError, RowTrackingNotEnabledError } from '../../src/errors/index.js'
import { serializeCommit } from '../../src/protocol/action-json.js'
import type { Action } from '../../src/protocol/actions.js'
import { DeltaTable } from '../../src/table/delta-table.js'

const ROW_ID_COL = '_row-id-col-5b4e2c'
const VERSION_COL = '_row-commit-version-col-9d1f07'

/** One data file of a hand-made table. */
interface FileSpec {
  /** A DuckDB SELECT producing the file's rows (an `id` column, maybe the materialized ones). */
  readonly select: string
  readonly numRecords: number
  readonly baseRowId?: bigint
  readonly defaultRowCommitVersion?: bigint
  /** Physical positions a deletion vector deletes. */
  readonly deleted?: readonly number[]
}

let base: string
let duck: DuckDBInstance

before(async () => {
  base = await mkdtemp(join(tmpdir(), 'delta-rlc-row-tracking-'))
  duck = await DuckDBInstance.create(':memory:')
  await initDeletionVectors()
})
after(async () => {
  duck.closeSync()
  await rm(base, { recursive: true, force: true })
})

/**
 * Writes a one-commit table: protocol, metadata (row tracking per `configuration`), one add per
 * file with `numRecords` stats, the row-tracking fields given and DVs, and the domain mark.
 */
async function makeTable(
  files: readonly FileSpec[],
  opts: {
    configuration?: Record<string, string>
    writerFeatures?: string[]
    mark?: bigint
    /** The table's columns; `id long` by default. */
    columns?: readonly string[]
  } = {},
): Promise<string> {
  const dir = join(base, randomUUID())
  await mkdir(join(dir, '_delta_log'), { recursive: true })
  const con = await duck.connect()
  const dvUuid = randomUUID()
  const withDv = files.filter((f) => (f.deleted?.length ?? 0) > 0)
  const dvFile =
    withDv.length === 0
      ? undefined
      : buildDvFile(withDv.map((f) => RoaringBitmapArray.fromSorted([...(f.deleted ?? [])])))
  if (dvFile) await writeFile(join(dir, `deletion_vector_${dvUuid}.bin`), dvFile.bytes)
  const actions: Action[] = [
    { commitInfo: { timestamp: BigInt(Date.now()), operation: 'WRITE', txnId: randomUUID() } },
    {
      protocol: {
        minReaderVersion: 3,
        minWriterVersion: 7,
        readerFeatures: ['deletionVectors'],
        writerFeatures: opts.writerFeatures ?? ['deletionVectors', 'domainMetadata', 'rowTracking'],
      },
    },
    {
      metaData: {
        id: randomUUID(),
        format: { provider: 'parquet', options: {} },
        schemaString: JSON.stringify({
          type: 'struct',
          fields: (opts.columns ?? ['id']).map((name) => ({
            name,
            type: 'long',
            nullable: true,
            metadata: {},
          })),
        }),
        partitionColumns: [],
        configuration: opts.configuration ?? {
          'delta.enableDeletionVectors': 'true',
          'delta.enableRowTracking': 'true',
          'delta.rowTracking.materializedRowIdColumnName': ROW_ID_COL,
          'delta.rowTracking.materializedRowCommitVersionColumnName': VERSION_COL,
        },
        createdTime: BigInt(Date.now()),
      },
    },
  ]
  let k = 0
  for (const [i, f] of files.entries()) {
    const name = `part-${i}-${randomUUID()}.parquet`
    await con.run(`COPY (${f.select}) TO '${join(dir, name)}' (FORMAT parquet)`)
    const entry = (f.deleted?.length ?? 0) > 0 ? dvFile?.entries[k++] : undefined
    actions.push({
      add: {
        path: name,
        partitionValues: {},
        size: BigInt((await stat(join(dir, name))).size),
        modificationTime: BigInt(Date.now()),
        dataChange: true,
        stats: JSON.stringify({ numRecords: f.numRecords }),
        ...(entry
          ? {
              deletionVector: createFileDescriptor({
                uuid: dvUuid,
                offset: entry.offset,
                sizeInBytes: entry.sizeInBytes,
                cardinality: entry.cardinality,
              }),
            }
          : {}),
        ...(f.baseRowId === undefined ? {} : { baseRowId: f.baseRowId }),
        ...(f.defaultRowCommitVersion === undefined
          ? {}
          : { defaultRowCommitVersion: f.defaultRowCommitVersion }),
      },
    })
  }
  if (opts.mark !== undefined) {
    actions.push({
      domainMetadata: {
        domain: 'delta.rowTracking',
        configuration: `{"rowIdHighWaterMark":${opts.mark}}`,
        removed: false,
      },
    })
  }
  con.closeSync()
  await writeFile(join(dir, '_delta_log', '00000000000000000000.json'), serializeCommit(actions))
  return dir
}

async function withTable<T>(dir: string, fn: (t: DeltaTable) => Promise<T>): Promise<T> {
  const table = await DeltaTable.open(dir)
  try {
    return await fn(table)
  } finally {
    await table.close()
  }
}

/** Rows as [id, _row_id, _row_commit_version], by id. */
async function tracked(table: DeltaTable, where?: string): Promise<[bigint, bigint, bigint][]> {
  const rows = await table.scan({ withRowTracking: true, where }).toArray()
  return rows
    .map(
      (r) =>
        [r.id as bigint, r._row_id as bigint, r._row_commit_version as bigint] as [bigint, bigint, bigint],
    )
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
}

describe('row tracking on read', () => {
  it('reads the materialized row id and commit version where not null, the default ones elsewhere', async () => {
    const dir = await makeTable(
      [
        {
          // Positions 0..5; materialized ids at 0, 2, 5; materialized versions at 0 and 3.
          select:
            `SELECT i::BIGINT AS id, ` +
            `CASE WHEN i IN (0, 2, 5) THEN (100 + i)::BIGINT END AS "${ROW_ID_COL}", ` +
            `CASE WHEN i IN (0, 3) THEN 2::BIGINT END AS "${VERSION_COL}" FROM range(6) t(i) ORDER BY i`,
          numRecords: 6,
          baseRowId: 10n,
          defaultRowCommitVersion: 4n,
        },
        {
          // A file without the materialized columns at all.
          select: 'SELECT (6 + i)::BIGINT AS id FROM range(3) t(i) ORDER BY i',
          numRecords: 3,
          baseRowId: 16n,
          defaultRowCommitVersion: 5n,
        },
      ],
      { mark: 18n },
    )
    await withTable(dir, async (t) => {
      assert.deepEqual(await tracked(t), [
        [0n, 100n, 2n],
        [1n, 11n, 4n],
        [2n, 102n, 4n],
        [3n, 13n, 2n],
        [4n, 14n, 4n],
        [5n, 105n, 4n],
        [6n, 16n, 5n],
        [7n, 17n, 5n],
        [8n, 18n, 5n],
      ])
      // A predicate and a projection keep the ids of the rows they keep.
      const some = await t.scan({ withRowTracking: true, where: 'id >= 5', columns: [] }).toArray()
      assert.deepEqual(
        some.map((r) => Object.keys(r).join(',')),
        [
          '_row_id,_row_commit_version',
          '_row_id,_row_commit_version',
          '_row_id,_row_commit_version',
          '_row_id,_row_commit_version',
        ],
      )
      assert.deepEqual(some.map((r) => r._row_id as bigint).sort(), [105n, 16n, 17n, 18n].sort())
      // Without the option the rows are what they always were: no hidden column leaks.
      const plain = await t.scan({ where: 'id = 0' }).toArray()
      assert.deepEqual(plain, [{ id: 0n }])
    })
  })

  it('rows a deletion vector hides still count: the other rows keep their ids', async () => {
    const dir = await makeTable(
      [
        {
          select: 'SELECT i::BIGINT AS id FROM range(10) t(i) ORDER BY i',
          numRecords: 10,
          baseRowId: 1000n,
          defaultRowCommitVersion: 0n,
          deleted: [0, 3, 4],
        },
        {
          select: 'SELECT (10 + i)::BIGINT AS id FROM range(4) t(i) ORDER BY i',
          numRecords: 4,
          baseRowId: 1010n,
          defaultRowCommitVersion: 1n,
          deleted: [2],
        },
      ],
      { mark: 1013n },
    )
    await withTable(dir, async (t) => {
      const rows = await tracked(t)
      assert.deepEqual(
        rows.map(([id]) => Number(id)),
        [1, 2, 5, 6, 7, 8, 9, 10, 11, 13],
      )
      for (const [id, rowId, version] of rows) {
        assert.equal(rowId, 1000n + id, `row ${id}`)
        assert.equal(version, id < 10n ? 0n : 1n)
      }
      // Arrow output carries the same values as Int64 columns.
      const arrow = await t.scan({ withRowTracking: true, where: 'id > 8' }).toArrow()
      const { Type } = await import('apache-arrow')
      assert.equal(arrow.schema.fields.find((f) => f.name === '_row_id')?.type.typeId, Type.Int)
      assert.equal(String(arrow.schema.fields.find((f) => f.name === '_row_commit_version')?.type), 'Int64')
      assert.equal(String(arrow.schema.fields.find((f) => f.name === '_row_id')?.type), 'Int64')
      const ids = arrow.getChild('id')?.toArray() as BigInt64Array
      const rowIds = arrow.getChild('_row_id')?.toArray() as BigInt64Array
      assert.deepEqual(
        [...ids].map((id, i) => [id, rowIds[i]]).sort((a, b) => Number((a[0] as bigint) - (b[0] as bigint))),
        [
          [9n, 1009n],
          [10n, 1010n],
          [11n, 1011n],
          [13n, 1013n],
        ],
      )
      let batches = 0
      for await (const b of t.scan({ withRowTracking: true }).batches({ format: 'arrow' })) {
        batches++
        assert.deepEqual(
          b.schema.fields.map((f) => `${f.name}:${f.type}`),
          ['id:Int64', '_row_id:Int64', '_row_commit_version:Int64'],
        )
      }
      assert.ok(batches > 0)
    })
  })

  it('ids of a 100,000-row file run from baseRowId without a gap, exactly past 2^53', async () => {
    const n = 100_000
    const baseRowId = 2n ** 53n - 50_000n
    const dir = await makeTable(
      [
        {
          select: `SELECT i::BIGINT AS id FROM range(${n}) t(i) ORDER BY i`,
          numRecords: n,
          baseRowId,
          defaultRowCommitVersion: 3n,
        },
      ],
      { mark: baseRowId + BigInt(n) - 1n },
    )
    await withTable(dir, async (t) => {
      let count = 0
      let min: bigint | undefined
      let max: bigint | undefined
      const distinct = new Set<bigint>()
      for await (const batch of t.scan({ withRowTracking: true, batchSize: 8192 })) {
        for (const r of batch) {
          const id = r._row_id as bigint
          assert.equal(id, baseRowId + (r.id as bigint))
          assert.equal(r._row_commit_version, 3n)
          count++
          distinct.add(id)
          if (min === undefined || id < min) min = id
          if (max === undefined || id > max) max = id
        }
      }
      assert.equal(count, n)
      assert.equal(await t.scan({ withRowTracking: true }).count(), n)
      assert.equal(min, baseRowId)
      assert.equal(max, baseRowId + BigInt(n) - 1n)
      assert.equal(distinct.size, n)
    })
  })

  it('a table without row tracking refuses the option with RowTrackingNotEnabledError', async () => {
    const plain = await makeTable([{ select: 'SELECT 1::BIGINT AS id', numRecords: 1 }], {
      configuration: { 'delta.enableDeletionVectors': 'true' },
      writerFeatures: ['deletionVectors'],
    })
    const supportedOnly = await makeTable(
      [{ select: 'SELECT 1::BIGINT AS id', numRecords: 1, baseRowId: 0n }],
      {
        configuration: { 'delta.enableDeletionVectors': 'true' },
        mark: 0n,
      },
    )
    for (const [dir, reason] of [
      [plain, 'not-supported'],
      [supportedOnly, 'not-enabled'],
    ] as const) {
      await withTable(dir, async (t) => {
        const check = (e: unknown): boolean => {
          assert.ok(e instanceof RowTrackingNotEnabledError)
          assert.ok(isDeltaError(e, 'DELTA_ROW_TRACKING_NOT_ENABLED'))
          assert.equal(e.reason, reason)
          assert.match(e.hint ?? '', /delta\.enableRowTracking/)
          return true
        }
        await assert.rejects(t.scan({ withRowTracking: true }).toArray(), check)
        await assert.rejects(t.scan({ withRowTracking: true }).toArrow(), check)
        await assert.rejects(t.scan({ withRowTracking: true }).count(), check)
        // The option off (or false) reads as always.
        assert.deepEqual(await t.scan({ withRowTracking: false }).toArray(), [{ id: 1n }])
        assert.deepEqual(await t.scan().toArray(), [{ id: 1n }])
      })
    }
    await withTable(plain, async (t) => {
      const txn = await t.begin()
      try {
        await assert.rejects(txn.scan({ withRowTracking: true }).toArray(), RowTrackingNotEnabledError)
      } finally {
        await txn.abort()
      }
    })
  })

  it('a file of an enabled table without baseRowId is refused, not given made-up ids', async () => {
    const dir = await makeTable([
      { select: 'SELECT 1::BIGINT AS id', numRecords: 1, baseRowId: 0n, defaultRowCommitVersion: 0n },
      { select: 'SELECT 2::BIGINT AS id', numRecords: 1, defaultRowCommitVersion: 0n },
    ])
    await withTable(dir, async (t) => {
      await assert.rejects(t.scan({ withRowTracking: true }).toArray(), {
        code: 'DELTA_INVALID_TABLE',
        message: /has no baseRowId/,
      })
    })
  })

  it('refuses a table column named _row_id, and a materialized column named like a data column', async () => {
    const clash = await makeTable(
      [
        {
          select: 'SELECT 1::BIGINT AS id, 2::BIGINT AS _row_id',
          numRecords: 1,
          baseRowId: 0n,
          defaultRowCommitVersion: 0n,
        },
      ],
      { columns: ['id', '_row_id'] },
    )
    await withTable(clash, async (t) => {
      await assert.rejects(t.scan({ withRowTracking: true }).toArray(), {
        code: 'DELTA_INVALID_ARGUMENT',
        message: /_row_id/,
      })
      assert.deepEqual(await t.scan().toArray(), [{ id: 1n, _row_id: 2n }])
    })
    const dataColumn = await makeTable(
      [{ select: 'SELECT 1::BIGINT AS id', numRecords: 1, baseRowId: 0n, defaultRowCommitVersion: 0n }],
      {
        configuration: {
          'delta.enableRowTracking': 'true',
          'delta.rowTracking.materializedRowIdColumnName': 'id',
        },
      },
    )
    await withTable(dataColumn, async (t) => {
      await assert.rejects(t.scan({ withRowTracking: true }).toArray(), {
        code: 'DELTA_INVALID_TABLE',
        message: /materialized row-tracking column 'id'/,
      })
    })
  })

  it('refuses a non-boolean option value', async () => {
    const dir = await makeTable([
      { select: 'SELECT 1::BIGINT AS id', numRecords: 1, baseRowId: 0n, defaultRowCommitVersion: 0n },
    ])
    await withTable(dir, async (t) => {
      assert.throws(() => t.scan({ withRowTracking: 'yes' as never }), { code: 'DELTA_INVALID_ARGUMENT' })
    })
  })
})
