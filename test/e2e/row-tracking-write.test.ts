/**
 * Writing to row-tracking tables: a table created with `delta.enableRowTracking=true` gets the
 * features and materialized column names; every commit gives its new files fresh row ids above
 * the table's high-water mark and its own version as their commit version, concurrent writers
 * included (the loser re-bases); removes and re-added files keep theirs. Operations that would copy
 * rows to new files keep their ids in the materialized columns (bin-pack OPTIMIZE, UPDATE, MERGE,
 * copy-on-write DELETE; Z-order OPTIMIZE in optimize-zorder-row-tracking.test.ts). The
 * Databricks-written fixture of `../shared/fixtures/row-tracking/` is appended to and deleted from
 * (on a copy).
 */
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { after, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { DuckDBInstance } from '@duckdb/node-api'
import { isDeltaError } from '../../src/errors/index.js'
import { type Action, isCommitInfo } from '../../src/protocol/actions.js'
import { parseStats } from '../../src/protocol/stats.js'
import { readCommit } from '../../src/snapshot/log-reader.js'
import { DeltaTable } from '../../src/table/delta-table.js'

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const FIXTURE = resolve(repoRoot, '../shared/fixtures/row-tracking/table_with_liquid_clustering')
const FIXTURE_SKIP = existsSync(join(FIXTURE, '_delta_log'))
  ? false
  : `row-tracking fixture not found at ${FIXTURE}`

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

async function tempDir(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'delta-rlc-row-tracking-write-'))
  roots.push(root)
  return root
}

async function createTracked(properties: Record<string, string> = {}): Promise<DeltaTable> {
  return DeltaTable.create(join(await tempDir(), 't'), {
    schema: 'id long not null, v string',
    properties: { 'delta.enableRowTracking': 'true', ...properties },
  })
}

async function fixtureCopy(): Promise<DeltaTable> {
  const dir = join(await tempDir(), 'table')
  await cp(FIXTURE, dir, { recursive: true })
  return DeltaTable.open(dir)
}

/** Rows as `id -> [_row_id, _row_commit_version]`. */
async function idsOf(table: DeltaTable): Promise<Map<bigint, [bigint, bigint]>> {
  const rows = await table.scan({ withRowTracking: true }).toArray()
  return new Map(rows.map((r) => [r.id as bigint, [r._row_id as bigint, r._row_commit_version as bigint]]))
}

/** The `delta.rowTracking` mark of the table's latest snapshot. */
async function markOf(table: DeltaTable): Promise<bigint | undefined> {
  const dm = (await table.snapshot()).state.domainMetadata.get('delta.rowTracking')
  if (dm === undefined) return undefined
  return BigInt(JSON.parse(dm.configuration).rowIdHighWaterMark)
}

/**
 * Checks the protocol's id invariants over the live files: every file has ids, the id ranges
 * `[baseRowId, baseRowId + numRecords)` are disjoint, and the mark covers the highest.
 */
async function checkIdRanges(table: DeltaTable): Promise<bigint> {
  const snap = await table.snapshot()
  const ranges = snap.activeFiles().map((f) => {
    assert.notEqual(f.baseRowId, undefined, `${f.path} has a baseRowId`)
    assert.notEqual(f.defaultRowCommitVersion, undefined, `${f.path} has a defaultRowCommitVersion`)
    const n = parseStats(f.stats)?.numRecords
    assert.notEqual(n, undefined)
    return [f.baseRowId as bigint, (f.baseRowId as bigint) + (n as bigint) - 1n] as const
  })
  ranges.sort((a, b) => (a[0] < b[0] ? -1 : 1))
  for (let i = 1; i < ranges.length; i++) {
    assert.ok((ranges[i] as readonly [bigint, bigint])[0] > (ranges[i - 1] as readonly [bigint, bigint])[1])
  }
  let max = -1n
  for (const [, last] of ranges) if (last > max) max = last
  assert.equal(await markOf(table), max)
  return max
}

describe('row tracking on write', () => {
  it('create with delta.enableRowTracking writes protocol 3/7 with rowTracking, domainMetadata and the materialized column names', async () => {
    const table = await createTracked()
    try {
      const snap = await table.snapshot()
      assert.equal(snap.protocol.minReaderVersion, 3)
      assert.equal(snap.protocol.minWriterVersion, 7)
      for (const f of ['rowTracking', 'domainMetadata'])
        assert.ok(snap.protocol.writerFeatures?.includes(f), f)
      const config = snap.properties
      assert.match(
        config['delta.rowTracking.materializedRowIdColumnName'] ?? '',
        /^_row-id-col-[0-9a-f-]{36}$/,
      )
      assert.match(
        config['delta.rowTracking.materializedRowCommitVersionColumnName'] ?? '',
        /^_row-commit-version-col-[0-9a-f-]{36}$/,
      )
      assert.equal(await markOf(table), undefined)
    } finally {
      await table.close()
    }
  })

  it('create refuses a materialized column named like a data column, and tracking both enabled and suspended', async () => {
    const root = await tempDir()
    await assert.rejects(
      DeltaTable.create(join(root, 'a'), {
        schema: 'id long',
        properties: {
          'delta.enableRowTracking': 'true',
          'delta.rowTracking.materializedRowIdColumnName': 'ID',
        },
      }),
      (e) => isDeltaError(e, 'DELTA_INVALID_ARGUMENT') && /data column 'id'/.test(e.message),
    )
    await assert.rejects(
      DeltaTable.create(join(root, 'b'), {
        schema: 'id long',
        properties: { 'delta.enableRowTracking': 'true', 'delta.rowTrackingSuspended': 'true' },
      }),
      (e) => isDeltaError(e, 'DELTA_INVALID_ARGUMENT'),
    )
    assert.deepEqual(await readdir(root), [])
  })

  it('appends take ids above the mark and their own version; a DV delete keeps the ids of the other rows', async () => {
    const table = await createTracked()
    try {
      const v1 = await table.append([0, 1, 2].map((i) => ({ id: BigInt(i), v: 'a' })))
      const v2 = await table.append([3, 4].map((i) => ({ id: BigInt(i), v: 'b' })))
      assert.deepEqual(
        [...(await idsOf(table)).entries()].sort((a, b) => Number(a[0] - b[0])),
        [
          [0n, [0n, v1.version]],
          [1n, [1n, v1.version]],
          [2n, [2n, v1.version]],
          [3n, [3n, v2.version]],
          [4n, [4n, v2.version]],
        ],
      )
      assert.equal(await markOf(table), 4n)
      await table.delete('id = 1')
      const after = await idsOf(table)
      assert.deepEqual([...after.keys()].sort(), [0n, 2n, 3n, 4n])
      assert.deepEqual(after.get(2n), [2n, v1.version])
      assert.deepEqual(after.get(0n), [0n, v1.version])
      const snap = await table.snapshot()
      const dvFile = snap.activeFiles().find((f) => f.deletionVector !== undefined)
      assert.equal(dvFile?.baseRowId, 0n)
      assert.equal(dvFile?.defaultRowCommitVersion, v1.version)
      const removes = (await readCommitActions(table, snap.version)).flatMap((a) =>
        'remove' in a ? [a.remove] : [],
      )
      assert.equal(removes.length, 1)
      assert.equal(removes[0]?.baseRowId, 0n)
      assert.equal(removes[0]?.defaultRowCommitVersion, v1.version)
      assert.equal(await checkIdRanges(table), 4n)
    } finally {
      await table.close()
    }
  })

  it('two writers appending concurrently end with unique ids, contiguous per file, and a mark equal to the highest id', async () => {
    const table = await createTracked()
    const other = await DeltaTable.open(table.location)
    try {
      await table.append([{ id: -1n, v: 'seed' }])
      // Both read the same version; the second to commit loses the race and re-bases.
      const a = await table.begin()
      const b = await other.begin()
      await a.append([10n, 11n, 12n].map((id) => ({ id, v: 'a' })))
      await b.append([20n, 21n].map((id) => ({ id, v: 'b' })))
      const ca = await a.commit()
      const cb = await b.commit()
      assert.equal(cb.attempts, 2)
      assert.equal(cb.version, ca.version + 1n)
      // Then several writers at once, each appending a few times.
      const writers = [table, other]
      await Promise.all(
        writers.map(async (w, k) => {
          for (let i = 0; i < 3; i++) {
            await w.append(
              Array.from({ length: 1 + i }, (_, j) => ({ id: BigInt(100 * (k + 1) + 10 * i + j), v: 'c' })),
            )
          }
        }),
      )
      const ids = await idsOf(table)
      assert.equal(ids.size, 1 + 5 + 2 * (1 + 2 + 3))
      const rowIds = [...ids.values()].map(([rowId]) => rowId)
      assert.equal(new Set(rowIds).size, rowIds.length, 'row ids are unique')
      assert.deepEqual(ids.get(10n), [1n, ca.version])
      assert.deepEqual(ids.get(20n), [4n, cb.version])
      assert.deepEqual(ids.get(21n), [5n, cb.version])
      const max = await checkIdRanges(table)
      assert.equal(max, BigInt(ids.size - 1), 'no gaps: ids 0..n-1')
      // Every row's commit version is the version of the commit that added its file.
      const history = await table.history()
      const appendVersions = new Set(history.filter((h) => h.operation === 'WRITE').map((h) => h.version))
      for (const [, [, version]] of ids) assert.ok(appendVersions.has(version))
    } finally {
      await other.close()
      await table.close()
    }
  })

  it('commits on an enabled table say every row id was preserved; other tables carry no such tag', async () => {
    const table = await createTracked()
    const plain = await DeltaTable.create(join(await tempDir(), 'plain'), { schema: 'id long' })
    try {
      const { version } = await table.append([
        { id: 1n, v: 'a' },
        { id: 2n, v: 'b' },
      ])
      await table.delete('id = 1')
      for (const v of [version, version + 1n]) {
        assert.equal(await preservedTagOf(table, v), 'true', `version ${v}`)
      }
      const p = await plain.append([{ id: 1n }])
      assert.equal(await preservedTagOf(plain, p.version), undefined)
      assert.equal(
        (await readCommitActions(plain, p.version)).some((a) => 'domainMetadata' in a),
        false,
        'no row-tracking domain on a table without the feature',
      )
    } finally {
      await plain.close()
      await table.close()
    }
  })

  it('a table that only supports row tracking assigns ids to every new file, copies included', async () => {
    const table = await DeltaTable.create(join(await tempDir(), 't'), {
      schema: 'id long not null, v string',
      properties: { 'delta.feature.rowTracking': 'supported', 'delta.enableDeletionVectors': 'false' },
    })
    try {
      await table.append([
        { id: 1n, v: 'a' },
        { id: 2n, v: 'b' },
      ])
      await table.update({ set: { v: "'z'" }, where: 'id = 1' })
      await table.append([{ id: 3n, v: 'c' }])
      assert.deepEqual(
        (await table.scan().toArray())
          .map((r) => [r.id, r.v])
          .sort((a, b) => Number((a[0] as bigint) - (b[0] as bigint))),
        [
          [1n, 'z'],
          [2n, 'b'],
          [3n, 'c'],
        ],
      )
      // The rewritten file's rows took fresh ids 2..3 (ids are not stable on such a table), the
      // last append 4.
      assert.equal(await checkIdRanges(table), 4n)
    } finally {
      await table.close()
    }
  })

  it('bin-pack OPTIMIZE keeps every row id and commit version in the materialized columns, across two compactions', async () => {
    const table = await createTracked()
    try {
      for (let i = 0; i < 3; i++) {
        await table.append([0, 1, 2].map((j) => ({ id: BigInt(10 * i + j), v: `f${i}` })))
      }
      await table.delete('id = 11')
      const before = await idsOf(table)
      const optimized = await table.optimize()
      assert.equal(optimized.metrics.numAddedFiles, 1)
      assert.deepEqual(await idsOf(table), before)
      assert.equal(await preservedTagOf(table, optimized.version), 'true')
      const snap = await table.snapshot()
      const [out] = snap.activeFiles()
      // The output's own fresh ids are above every earlier id; its rows' stable ids are not those.
      assert.equal(out?.baseRowId, 9n)
      assert.equal(out?.defaultRowCommitVersion, optimized.version)
      const columns = await parquetColumns(table, out?.path as string)
      const config = snap.properties
      assert.deepEqual(columns, [
        'id',
        'v',
        config['delta.rowTracking.materializedRowIdColumnName'],
        config['delta.rowTracking.materializedRowCommitVersionColumnName'],
      ])
      // A new file and the compacted one compact again: materialized values where the source has
      // them, default ones elsewhere.
      const appended = await table.append([{ id: 99n, v: 'new' }])
      const expected = new Map(before)
      expected.set(99n, [17n, appended.version])
      assert.deepEqual(await idsOf(table), expected)
      await table.optimize()
      assert.deepEqual(await idsOf(table), expected)
      assert.equal((await table.snapshot()).activeFiles().length, 1)
      await checkIdRanges(table)
    } finally {
      await table.close()
    }
  })

  it('an OPTIMIZE that loses to an append keeps the stable ids and takes fresh ones above the winner', async () => {
    const table = await createTracked()
    const other = await DeltaTable.open(table.location)
    try {
      for (let i = 0; i < 3; i++) await table.append([{ id: BigInt(i), v: 'x' }])
      const before = await idsOf(table)
      const txn = await table.begin()
      await txn.optimize()
      const won = await other.append([
        { id: 50n, v: 'y' },
        { id: 51n, v: 'y' },
      ])
      const lost = await txn.commit()
      assert.equal(lost.attempts, 2)
      const expected = new Map(before)
      expected.set(50n, [3n, won.version])
      expected.set(51n, [4n, won.version])
      assert.deepEqual(await idsOf(table), expected)
      const output = (await table.snapshot())
        .activeFiles()
        .find((f) => f.defaultRowCommitVersion === lost.version)
      assert.equal(output?.baseRowId, 5n)
      assert.equal(await checkIdRanges(table), 7n)
    } finally {
      await other.close()
      await table.close()
    }
  })
})

describe('row tracking on write: UPDATE and copy-on-write DELETE keep row ids', () => {
  it('a copy-on-write DELETE copies the surviving rows with their ids and commit versions in the materialized columns', async () => {
    const table = await createTracked({ 'delta.enableDeletionVectors': 'false' })
    try {
      await table.append([1, 2, 3].map((i) => ({ id: BigInt(i), v: 'a' })))
      await table.append([4, 5].map((i) => ({ id: BigInt(i), v: 'b' })))
      const expected = await idsOf(table)
      const deleted = await table.delete('id = 2')
      assert.equal(deleted.metrics.numCopiedRows, 2)
      expected.delete(2n)
      assert.deepEqual(await idsOf(table), expected)
      assert.equal(await preservedTagOf(table, deleted.version), 'true')
      const snap = await table.snapshot()
      const copy = snap.activeFiles().find((f) => f.defaultRowCommitVersion === deleted.version)
      // The copy's own fresh ids (5..6) are not its rows' stable ids (0 and 2): those are read
      // from the materialized columns.
      assert.equal(copy?.baseRowId, 5n)
      assert.deepEqual(await parquetColumns(table, copy?.path as string), [
        'id',
        'v',
        snap.properties['delta.rowTracking.materializedRowIdColumnName'],
        snap.properties['delta.rowTracking.materializedRowCommitVersionColumnName'],
      ])
      // Copied again (from materialized values) and from the other file (from default values).
      await table.delete('id = 3 OR id = 4')
      expected.delete(3n)
      expected.delete(4n)
      assert.deepEqual(await idsOf(table), expected)
      await checkIdRanges(table)
    } finally {
      await table.close()
    }
  })

  for (const dvs of [true, false]) {
    it(`UPDATE ${dvs ? 'with deletion vectors' : 'copy-on-write'}: updated rows keep their ids and take the UPDATE's version, the others keep both`, async () => {
      const table = await createTracked({ 'delta.enableDeletionVectors': String(dvs) })
      try {
        await table.append([1, 2, 3].map((i) => ({ id: BigInt(i), v: 'a' })))
        await table.append([4, 5].map((i) => ({ id: BigInt(i), v: 'b' })))
        const expected = await idsOf(table)
        const first = await table.update({ set: { v: "'z'" }, where: 'id = 2 OR id = 4' })
        assert.equal(first.metrics.numUpdatedRows, 2)
        assert.equal(first.metrics.numCopiedRows, dvs ? 0 : 3)
        for (const id of [2n, 4n])
          expected.set(id, [(expected.get(id) as [bigint, bigint])[0], first.version])
        assert.deepEqual(await idsOf(table), expected)
        assert.equal(await preservedTagOf(table, first.version), 'true')
        // Again, over rows updated before (materialized id, NULL version) and untouched ones.
        const second = await table.update({ set: { v: "'y'" }, where: 'id = 1 OR id = 2' })
        for (const id of [1n, 2n])
          expected.set(id, [(expected.get(id) as [bigint, bigint])[0], second.version])
        assert.deepEqual(await idsOf(table), expected)
        const rows = await table.scan({ withRowTracking: true }).toArray()
        assert.deepEqual(
          rows.map((r) => [r.id, r.v]).sort((a, b) => Number((a[0] as bigint) - (b[0] as bigint))),
          [
            [1n, 'y'],
            [2n, 'y'],
            [3n, 'a'],
            [4n, 'z'],
            [5n, 'b'],
          ],
        )
        const rowIds = rows.map((r) => r._row_id)
        assert.equal(new Set(rowIds).size, rowIds.length, 'row ids are unique')
        await checkIdRanges(table)
      } finally {
        await table.close()
      }
    })
  }

  it('an UPDATE that moves rows to another partition keeps their ids', async () => {
    const table = await DeltaTable.create(join(await tempDir(), 't'), {
      schema: 'id long not null, p string',
      partitionBy: ['p'],
      properties: { 'delta.enableRowTracking': 'true', 'delta.enableDeletionVectors': 'false' },
    })
    try {
      await table.append([1, 2, 3].map((i) => ({ id: BigInt(i), p: 'x' })))
      const expected = await idsOf(table)
      const moved = await table.update({ set: { p: "'y'" }, where: 'id >= 2' })
      for (const id of [2n, 3n]) expected.set(id, [(expected.get(id) as [bigint, bigint])[0], moved.version])
      assert.deepEqual(await idsOf(table), expected)
      const byPartition = (await table.scan().toArray()).map((r) => `${r.id}:${r.p}`).sort()
      assert.deepEqual(byPartition, ['1:x', '2:y', '3:y'])
      await checkIdRanges(table)
    } finally {
      await table.close()
    }
  })

  it('an UPDATE that loses to an append takes the version it commits at for its updated rows', async () => {
    const table = await createTracked({ 'delta.enableDeletionVectors': 'false' })
    const other = await DeltaTable.open(table.location)
    try {
      await table.append([1, 2].map((i) => ({ id: BigInt(i), v: 'a' })))
      const expected = await idsOf(table)
      const txn = await table.begin()
      await txn.update({ set: { v: "'z'" }, where: 'id = 1' })
      const won = await other.append([{ id: 50n, v: 'w' }])
      const lost = await txn.commit()
      assert.equal(lost.attempts, 2)
      assert.equal(lost.version, won.version + 1n)
      expected.set(1n, [(expected.get(1n) as [bigint, bigint])[0], lost.version])
      expected.set(50n, [2n, won.version])
      assert.deepEqual(await idsOf(table), expected)
      await checkIdRanges(table)
    } finally {
      await other.close()
      await table.close()
    }
  })
})

describe('row tracking on write: MERGE', () => {
  for (const dvs of [true, false]) {
    it(`MERGE ${dvs ? 'with deletion vectors' : 'copy-on-write'}: updated rows keep their ids, inserted rows take fresh ones, deleted rows leave`, async () => {
      const table = await createTracked({ 'delta.enableDeletionVectors': String(dvs) })
      try {
        await table.append([1, 2, 3].map((i) => ({ id: BigInt(i), v: 'a' })))
        await table.append([4, 5].map((i) => ({ id: BigInt(i), v: 'b' })))
        const expected = await idsOf(table)
        const merged = await table.merge(
          [
            { id: 2n, v: 'm' },
            { id: 3n, v: 'gone' },
            { id: 5n, v: 'm' },
            { id: 6n, v: 'new' },
            { id: 7n, v: 'new' },
          ],
          {
            on: 'target.id = source.id',
            whenMatched: [{ if: "source.v = 'gone'", delete: true }, { update: '*' }],
            whenNotMatched: [{ insert: '*' }],
            whenNotMatchedBySource: [{ if: 'target.id = 4', update: { v: "'nmbs'" } }],
          },
        )
        assert.equal(merged.metrics.numTargetRowsInserted, 2)
        assert.equal(merged.metrics.numTargetRowsUpdated, 3)
        assert.equal(merged.metrics.numTargetRowsDeleted, 1)
        assert.equal(await preservedTagOf(table, merged.version), 'true')
        expected.delete(3n)
        for (const id of [2n, 4n, 5n])
          expected.set(id, [(expected.get(id) as [bigint, bigint])[0], merged.version])
        const after = await idsOf(table)
        // The inserted rows' ids are fresh: the new file's baseRowId plus their position in it.
        const snap = await table.snapshot()
        const output = snap
          .activeFiles()
          .find((f) => f.defaultRowCommitVersion === merged.version && parseStats(f.stats)?.numRecords === 5n)
        assert.ok(output, 'one new file holds the updated and the inserted rows')
        const hidden = await materializedOf(table, output.path)
        assert.deepEqual(
          hidden.map(([id, rowId, version]) => [id, rowId, version]),
          [
            // Matched images, then NOT MATCHED BY SOURCE images, then inserts.
            [2n, expected.get(2n)?.[0], null],
            [5n, expected.get(5n)?.[0], null],
            [4n, expected.get(4n)?.[0], null],
            [6n, null, null],
            [7n, null, null],
          ],
        )
        const base = output.baseRowId as bigint
        expected.set(6n, [base + 3n, merged.version])
        expected.set(7n, [base + 4n, merged.version])
        assert.deepEqual(after, expected)
        assert.ok(base > 4n, 'above every earlier id')
        const rowIds = [...after.values()].map(([rowId]) => rowId)
        assert.equal(new Set(rowIds).size, rowIds.length, 'row ids are unique')
        await checkIdRanges(table)
      } finally {
        await table.close()
      }
    })
  }
})

describe('row tracking on write: the Databricks fixture', { skip: FIXTURE_SKIP }, () => {
  it('appends get ids 10.. and the append version; old rows keep theirs; a DV delete keeps the others', async () => {
    const table = await fixtureCopy()
    try {
      const appended = await table.append([{ id: 10n }, { id: 11n }, { id: 12n }])
      assert.equal(appended.version, 1n)
      const ids = await idsOf(table)
      for (let i = 0n; i < 10n; i++) assert.deepEqual(ids.get(i), [i, 0n])
      for (const id of [10n, 11n, 12n]) assert.deepEqual(ids.get(id), [id, 1n])
      assert.equal(await markOf(table), 12n)
      // The appended rows share one file: deleting the middle one marks it in a DV.
      await table.delete('id = 11')
      const after = await idsOf(table)
      assert.equal(after.has(11n), false)
      assert.deepEqual(after.get(10n), [10n, 1n])
      assert.deepEqual(after.get(12n), [12n, 1n])
      for (let i = 0n; i < 10n; i++) assert.deepEqual(after.get(i), [i, 0n])
      assert.equal(await checkIdRanges(table), 12n)
      // VACUUM moves no row: it runs on the table (nothing is old enough to go).
      const vacuumed = await table.vacuum()
      assert.deepEqual(vacuumed.files, [])
    } finally {
      await table.close()
    }
  })
})

/** The `delta.rowTracking.preserved` tag of one commit's commitInfo. */
async function preservedTagOf(table: DeltaTable, version: bigint): Promise<unknown> {
  const info = (await readCommitActions(table, version)).find(isCommitInfo)?.commitInfo
  const tags = info?.tags as Readonly<Record<string, unknown>> | undefined
  return tags?.['delta.rowTracking.preserved']
}

/** The column names of one data file, as its Parquet schema has them. */
async function parquetColumns(table: DeltaTable, path: string): Promise<string[]> {
  const duck = await DuckDBInstance.create(':memory:')
  try {
    const con = await duck.connect()
    const rows = (
      await con.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${join(table.location, path)}')`)
    ).getRows()
    return rows.map((r) => String(r[0]))
  } finally {
    duck.closeSync()
  }
}

/**
 * The data column `id` and the two materialized row-tracking columns of one data file, by
 * physical position.
 */
async function materializedOf(table: DeltaTable, path: string): Promise<[unknown, unknown, unknown][]> {
  const config = (await table.snapshot()).properties
  const duck = await DuckDBInstance.create(':memory:')
  try {
    const con = await duck.connect()
    const rows = (
      await con.runAndReadAll(
        `SELECT id, "${config['delta.rowTracking.materializedRowIdColumnName']}", ` +
          `"${config['delta.rowTracking.materializedRowCommitVersionColumnName']}" ` +
          `FROM read_parquet('${join(table.location, path)}', file_row_number = true) ORDER BY file_row_number`,
      )
    ).getRows()
    return rows.map((r) => [r[0], r[1], r[2]])
  } finally {
    duck.closeSync()
  }
}

/** The actions of one commit file, as the log holds them. */
async function readCommitActions(table: DeltaTable, version: bigint): Promise<readonly Action[]> {
  const actions = await readCommit(table.engine, version)
  assert.ok(actions, `commit ${version} exists`)
  return actions
}
