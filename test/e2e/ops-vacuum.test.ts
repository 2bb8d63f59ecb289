/**
 * VACUUM end to end: the retention window (the table's and an explicit one, with its safety
 * check), dry runs, deletion-vector files kept while a live or retained file references them,
 * time travel inside the window, and the paths VACUUM never touches.
 */
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { describe, it } from 'node:test'
import { isDeltaError } from '../../src/errors/index.js'
import { commitKey } from '../../src/protocol/log-files.js'
import { DeltaTable } from '../../src/table/delta-table.js'
import {
  assertSameRows,
  createTestTable,
  latestVersion,
  listDataFiles,
  listFiles,
  liveKeys,
  type Row,
  scanRows,
  standardRow,
  type TestTable,
} from './ops-support.js'
import { committed, idsOf, liveIds, openTable, settle, span, tableT } from './scenarios/harness.js'

const A = Array.from({ length: 6 }, (_, i) => standardRow(i))
const B = Array.from({ length: 6 }, (_, i) => standardRow(6 + i))

/** v1, v2 appends; v3 a DV delete; v4 a DV update; v5 OPTIMIZE: one live file, five removed. */
async function historyTable(): Promise<{ t: TestTable; versions: Row[][] }> {
  const t = await createTestTable({ partitioned: false, dv: true }, [A, B])
  const versions: Row[][] = [[], A, [...A, ...B]]
  await t.table.delete('id = 1')
  versions.push(versions[2]!.filter((r) => r.id !== 1n))
  await t.table.update({ where: 'id = 7', set: { name: "'seven'" } })
  versions.push(versions[3]!.map((r) => (r.id === 7n ? { ...r, name: 'seven' } : r)))
  await t.table.optimize()
  versions.push(versions[4]!)
  return { t, versions }
}

async function age(dir: string, key: string, hours: number): Promise<void> {
  const t = new Date(Date.now() - hours * 3_600_000)
  await utimes(join(dir, key), t, t)
}

async function plant(dir: string, key: string, hoursOld: number): Promise<void> {
  await mkdir(dirname(join(dir, key)), { recursive: true })
  await writeFile(join(dir, key), 'x')
  await age(dir, key, hoursOld)
}

describe('VACUUM', () => {
  it('keeps every recently removed file under the default retention of 7 days', async () => {
    const { t, versions } = await historyTable()
    try {
      const files = await listDataFiles(t.dir)
      const result = await t.table.vacuum()
      assert.deepEqual(result.files, [])
      assert.equal(result.operation, 'VACUUM')
      assert.equal(result.committed, false)
      assert.equal(result.metrics.numDeletedFiles, 0)
      assert.deepEqual(await listDataFiles(t.dir), files)
      for (let v = 1; v <= 5; v++)
        assertSameRows(await scanRows(t.table, BigInt(v)), versions[v]!, `version ${v}`)
    } finally {
      await t.cleanup()
    }
  })

  it('refuses a retention below the table setting unless enforceRetentionDuration is false', async () => {
    const { t } = await historyTable()
    try {
      const files = await listDataFiles(t.dir)
      await assert.rejects(
        () => t.table.vacuum({ retentionHours: 1 }),
        (err) =>
          isDeltaError(err, 'DELTA_INVALID_ARGUMENT') && /deletedFileRetentionDuration/.test(err.message),
      )
      for (const bad of [-1, Number.NaN, '24' as unknown as number]) {
        await assert.rejects(
          () => t.table.vacuum({ retentionHours: bad, enforceRetentionDuration: false }),
          (err) => isDeltaError(err, 'DELTA_INVALID_ARGUMENT'),
        )
      }
      assert.deepEqual(await listDataFiles(t.dir), files)
    } finally {
      await t.cleanup()
    }
  })

  it('a dry run lists exactly the files no live version needs and deletes nothing', async () => {
    const { t } = await historyTable()
    try {
      const files = await listDataFiles(t.dir)
      const live = await liveKeys(t.table)
      const result = await t.table.vacuum({
        retentionHours: 0,
        enforceRetentionDuration: false,
        dryRun: true,
      })
      assert.deepEqual(
        [...result.files],
        files.filter((k) => !live.includes(k)),
      )
      assert.ok(
        result.files.some((k) => k.startsWith('deletion_vector_')),
        'unreferenced DV files are listed',
      )
      assert.equal(result.metrics.numFilesToDelete, result.files.length)
      assert.deepEqual(await listDataFiles(t.dir), files, 'nothing deleted')
    } finally {
      await t.cleanup()
    }
  })

  it('with zero retention deletes them: the latest version reads, older ones do not', async () => {
    const { t, versions } = await historyTable()
    try {
      const live = await liveKeys(t.table)
      const result = await t.table.vacuum({ retentionHours: 0, enforceRetentionDuration: false })
      assert.ok(result.files.length > 0)
      assert.deepEqual(await listDataFiles(t.dir), live)
      assertSameRows(await scanRows(t.table), versions[5]!)
      await assert.rejects(() => scanRows(t.table, 2n))
    } finally {
      await t.cleanup()
    }
  })

  it('keeps a deletion-vector file while a live file references it, and drops it once replaced', async () => {
    const t = await createTestTable({ partitioned: false, dv: true }, [A])
    try {
      await t.table.delete('id = 1')
      const first = (await liveKeys(t.table)).find((k) => k.startsWith('deletion_vector_'))
      assert.ok(first)
      const none = await t.table.vacuum({ retentionHours: 0, enforceRetentionDuration: false })
      assert.deepEqual(none.files, [], 'the data file and its DV are live')
      await t.table.delete('id = 2')
      const result = await t.table.vacuum({ retentionHours: 0, enforceRetentionDuration: false })
      assert.deepEqual(result.files, [first], 'only the replaced DV file goes')
      assert.deepEqual(await listDataFiles(t.dir), await liveKeys(t.table))
      assertSameRows(
        await scanRows(t.table),
        A.filter((r) => r.id !== 1n && r.id !== 2n),
      )
    } finally {
      await t.cleanup()
    }
  })

  it('inside the retention window keeps removed files (time travel works) and deletes only old orphans', async () => {
    const { t, versions } = await historyTable()
    try {
      await plant(t.dir, 'old-orphan.parquet', 2)
      await plant(t.dir, 'fresh-orphan.parquet', 0)
      const result = await t.table.vacuum({ retentionHours: 1, enforceRetentionDuration: false })
      assert.deepEqual(result.files, ['old-orphan.parquet'])
      assert.ok(
        existsSync(join(t.dir, 'fresh-orphan.parquet')),
        'a file younger than the window may be in flight',
      )
      for (let v = 1; v <= 5; v++)
        assertSameRows(await scanRows(t.table, BigInt(v)), versions[v]!, `version ${v}`)
    } finally {
      await t.cleanup()
    }
  })

  it("honours the table's delta.deletedFileRetentionDuration", async () => {
    const base = await mkdtemp(join(tmpdir(), 'delta-rlc-ops-'))
    const dir = join(base, 'table')
    const table = await DeltaTable.create(dir, {
      schema: 'id long not null',
      properties: { 'delta.deletedFileRetentionDuration': 'interval 1 hours' },
    })
    try {
      await table.append([{ id: 1n }])
      await plant(dir, 'two-hours.parquet', 2)
      await plant(dir, 'half-hour.parquet', 0.5)
      const result = await table.vacuum()
      assert.deepEqual(result.files, ['two-hours.parquet'])
      await assert.rejects(
        () => table.vacuum({ retentionHours: 0.5 }),
        (err) => isDeltaError(err, 'DELTA_INVALID_ARGUMENT'),
      )
    } finally {
      await table.close()
      await rm(base, { recursive: true, force: true })
    }
  })

  it('never touches the log or hidden paths, but does clean partition directories and _change_data', async () => {
    const t = await createTestTable({ partitioned: true, dv: false }, [A])
    try {
      const hidden = ['_delta_log/junk.json', '_tmp/x.parquet', '.hidden/x.parquet', 'part=0/.x.parquet.crc']
      const visible = ['part=1/orphan.parquet', '_change_data/cdc.parquet', 'orphan.bin']
      for (const k of [...hidden, ...visible]) await plant(t.dir, k, 48)
      const before = await listFiles(t.dir)
      const version = await latestVersion(t.table)
      const result = await t.table.vacuum({ retentionHours: 24, enforceRetentionDuration: false })
      assert.deepEqual([...result.files], [...visible].sort())
      for (const k of hidden) assert.ok(existsSync(join(t.dir, k)), `${k} is kept`)
      assert.deepEqual(
        (await listFiles(t.dir)).filter((k) => !k.startsWith('_delta_log/0')),
        before.filter((k) => !visible.includes(k) && !k.startsWith('_delta_log/0')),
      )
      assert.equal(await latestVersion(t.table), version + 2n, 'VACUUM writes its START and END only')
      assert.deepEqual(
        (await t.table.history({ limit: 2 })).map((h) => h.operation),
        ['VACUUM END', 'VACUUM START'],
      )
      assertSameRows(await scanRows(t.table), A)
    } finally {
      await t.cleanup()
    }
  })
})

describe('VACUUM and re-pointed compaction tombstones', () => {
  it('keeps the read-time DV a retained remappedCompactionInfo tag names, after the tombstone that removed it expired', async () => {
    const dir = await tableT(300, 3)
    const loser = await openTable(dir, 'all')
    const winner = await openTable(dir, 'all')
    await winner.delete('id >= 100 AND id < 105')
    const dvFiles = async () => (await readdir(dir)).filter((f) => f.startsWith('deletion_vector_'))
    const [readDv] = await dvFiles()
    assert.ok(readDv)
    const txn = await loser.begin()
    await txn.optimize()
    const w1 = await winner.delete('id = 150')
    const r = committed(await settle(txn.commit()))
    assert.equal(r.reconciliations[0]?.kind, 'case4a-forward-remap')
    // The winner's tombstone of (source, read-time DV) and the DV file itself are two hours old;
    // the OPTIMIZE's re-pointed tombstone, which names that DV in its tag, is fresh.
    const key = join(dir, commitKey(w1.version))
    const hoursAgo = BigInt(Date.now() - 2 * 3_600_000)
    const lines = (await readFile(key, 'utf8')).split('\n').filter((l) => l !== '')
    await writeFile(
      key,
      `${lines
        .map((l) => {
          const a = JSON.parse(l) as { remove?: { deletionTimestamp?: number } }
          if (a.remove) a.remove.deletionTimestamp = Number(hoursAgo)
          return JSON.stringify(a)
        })
        .join('\n')}\n`,
    )
    await age(dir, readDv, 2)
    const fresh = await openTable(dir, 'all')
    const result = await fresh.vacuum({ retentionHours: 1, enforceRetentionDuration: false })
    assert.ok(!result.files.includes(readDv), 'the read-time DV stays')
    assert.ok((await dvFiles()).includes(readDv))
    assert.deepEqual(await liveIds(fresh), idsOf(span(0, 300), [...span(100, 105), 150]))
    await Promise.all([loser.close(), winner.close(), fresh.close()])
  })
})
