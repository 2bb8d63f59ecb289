/**
 * Overwrite (whole table, replaceWhere on partition and data columns, dynamic partition
 * overwrite) and RESTORE through the public API on local tables: the final rows, the commit's
 * actions as the log holds them, and the refusals (nothing committed).
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm, utimes } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { tableFromArrays } from 'apache-arrow'
import {
  ConcurrentModificationError,
  InvalidArgumentError,
  ReplaceWhereMismatchError,
  RestoreFilesMissingError,
  UnsupportedError,
} from '../../src/errors/index.js'
import type { Action } from '../../src/protocol/actions.js'
import { protocolForProperties, writerFeaturesOf } from '../../src/protocol/table-features.js'
import { DeltaTable } from '../../src/table/delta-table.js'
import { runCliInProcess } from '../helpers/cli-in-process.js'
import { logLines } from './ops-support.js'

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'delta-rlc-write-mode-'))
  roots.push(d)
  return join(d, 't')
}

type Row = { id: number; day: string; v: number }
const SCHEMA = 'id long not null, day string, v int'
const rowsOf = (ids: readonly number[], day: (i: number) => string, v = 0) =>
  ids.map((i) => ({ id: BigInt(i), day: day(i), v }))
const range = (a: number, b: number) => Array.from({ length: b - a }, (_, i) => a + i)
const dayOf = (i: number) => `d${i % 3}`

async function rows(t: DeltaTable, options: { version?: bigint } = {}): Promise<Row[]> {
  const out = await t.scan(options).toArray()
  return out
    .map((r) => ({ id: Number(r.id as bigint), day: r.day as string, v: r.v as number }))
    .sort((a, b) => a.id - b.id)
}

async function table(
  options: { partitioned?: boolean; dv?: boolean; properties?: Record<string, string> } = {},
): Promise<{ dir: string; t: DeltaTable }> {
  const dir = await tempDir()
  const t = await DeltaTable.create(dir, {
    schema: SCHEMA,
    partitionBy: options.partitioned ? ['day'] : [],
    properties: { 'delta.enableDeletionVectors': String(options.dv ?? true), ...options.properties },
  })
  // Two appends: ids 0..29 and 30..59, days d0/d1/d2 by id % 3.
  await t.append(rowsOf(range(0, 30), dayOf))
  await t.append(rowsOf(range(30, 60), dayOf))
  return { dir, t }
}

const expected = (ids: readonly number[], v = 0): Row[] =>
  ids.map((id) => ({ id, day: dayOf(id), v })).sort((a, b) => a.id - b.id)

describe('overwrite', () => {
  it('mode overwrite replaces every row in one WRITE commit with mode Overwrite', async () => {
    const { dir, t } = await table({ partitioned: true })
    try {
      const before = (await t.snapshot()).activeFiles().length
      const r = await t.append(rowsOf([100, 101], dayOf, 7), { mode: 'overwrite' })
      assert.equal(r.operation, 'WRITE')
      assert.deepEqual(await rows(t), expected([100, 101], 7))
      const lines = await logLines(dir, r.version)
      const info = lines.find((l) => l.commitInfo)!.commitInfo
      assert.equal(info.operationParameters.mode, 'Overwrite')
      assert.equal(info.operationParameters.partitionBy, '["day"]')
      assert.equal(info.isBlindAppend, false)
      assert.equal(lines.filter((l) => l.remove).length, before)
      assert.ok(lines.filter((l) => l.remove).every((l) => l.remove.dataChange === true))
      assert.equal(lines.filter((l) => l.add).length, 2)
      assert.equal(r.metrics.numRemovedFiles, before)
      assert.equal(r.metrics.numOutputRows, 2)
      // Time travel still reads the replaced rows.
      assert.equal((await rows(t, { version: r.version - 1n })).length, 60)
    } finally {
      await t.close()
    }
  })

  it('overwrite with no rows empties the table', async () => {
    const { t } = await table()
    try {
      await t.append([], { mode: 'overwrite' })
      assert.deepEqual(await rows(t), [])
    } finally {
      await t.close()
    }
  })

  it('replaceWhere on a partition column removes whole files of that partition and keeps the rest', async () => {
    const { dir, t } = await table({ partitioned: true })
    try {
      const r = await t.append(
        rowsOf([200, 203], () => 'd1', 5),
        {
          mode: 'overwrite',
          replaceWhere: "day = 'd1'",
        },
      )
      const kept = range(0, 60).filter((i) => dayOf(i) !== 'd1')
      assert.deepEqual(
        await rows(t),
        [...expected(kept), { id: 200, day: 'd1', v: 5 }, { id: 203, day: 'd1', v: 5 }].sort(
          (a, b) => a.id - b.id,
        ),
      )
      const lines = await logLines(dir, r.version)
      assert.equal(lines.find((l) => l.commitInfo)!.commitInfo.operationParameters.predicate, "day = 'd1'")
      // Whole files only: no deletion vector written.
      assert.ok(lines.filter((l) => l.add).every((l) => l.add.deletionVector === undefined))
      assert.ok(lines.filter((l) => l.remove).every((l) => l.remove.partitionValues.day === 'd1'))
    } finally {
      await t.close()
    }
  })

  for (const dv of [true, false]) {
    it(`replaceWhere on a data column removes the matching rows with ${dv ? 'deletion vectors' : 'copy-on-write'}`, async () => {
      const { dir, t } = await table({ dv })
      try {
        const r = await t.append(rowsOf([10, 11], dayOf, 9), {
          mode: 'overwrite',
          replaceWhere: 'id >= 10 AND id < 20',
        })
        const kept = range(0, 60).filter((i) => i < 10 || i >= 20)
        assert.deepEqual(
          await rows(t),
          [...expected(kept), { id: 10, day: 'd1', v: 9 }, { id: 11, day: 'd2', v: 9 }].sort(
            (a, b) => a.id - b.id,
          ),
        )
        assert.equal(r.metrics.numDeletedRows, 10)
        const lines = await logLines(dir, r.version)
        const withDv = lines.filter((l) => l.add?.deletionVector !== undefined)
        if (dv) {
          assert.equal(withDv.length, 1, 'the first file gets a deletion vector')
          assert.equal(withDv[0]!.add.deletionVector.cardinality, 10)
          assert.equal(r.metrics.numCopiedRows, 0)
        } else {
          assert.equal(withDv.length, 0)
          assert.equal(r.metrics.numCopiedRows, 20, 'the 20 other rows of the first file are copied')
        }
      } finally {
        await t.close()
      }
    })
  }

  it('replaceWhere refuses a new row outside the predicate, naming it, and commits nothing', async () => {
    const { t } = await table({ partitioned: true })
    try {
      const version = (await t.snapshot()).version
      await assert.rejects(
        t.append([...rowsOf([300], () => 'd1'), ...rowsOf([301], () => 'd2', 4)], {
          mode: 'overwrite',
          replaceWhere: "day = 'd1'",
        }),
        (err: unknown) => {
          assert.ok(err instanceof ReplaceWhereMismatchError)
          assert.equal(err.code, 'DELTA_REPLACE_WHERE_MISMATCH')
          assert.equal(err.predicate, "day = 'd1'")
          assert.equal(err.row.id, 301n)
          assert.equal(err.row.day, 'd2')
          assert.match(err.message, /id: 301/)
          return true
        },
      )
      // A NULL result is outside too.
      await assert.rejects(
        t.append([{ id: 302n, day: null, v: 1 }], { mode: 'overwrite', replaceWhere: "day = 'd1'" }),
        ReplaceWhereMismatchError,
      )
      assert.equal((await t.snapshot()).version, version)
      assert.deepEqual(await rows(t), expected(range(0, 60)))
    } finally {
      await t.close()
    }
  })

  it('dynamic partition overwrite replaces only the partitions the new rows land in', async () => {
    const { dir, t } = await table({ partitioned: true })
    try {
      const r = await t.append([...rowsOf([400], () => 'd0', 1), ...rowsOf([401], () => 'd9', 1)], {
        mode: 'overwrite',
        partitionOverwriteMode: 'dynamic',
      })
      const kept = range(0, 60).filter((i) => dayOf(i) !== 'd0')
      assert.deepEqual(
        await rows(t),
        [...expected(kept), { id: 400, day: 'd0', v: 1 }, { id: 401, day: 'd9', v: 1 }].sort(
          (a, b) => a.id - b.id,
        ),
      )
      const info = (await logLines(dir, r.version)).find((l) => l.commitInfo)!.commitInfo
      assert.equal(info.operationParameters.isDynamicPartitionOverwrite, 'true')
    } finally {
      await t.close()
    }
  })

  it('dynamic partition overwrite treats a NULL partition value as a partition of its own', async () => {
    const { t } = await table({ partitioned: true })
    try {
      await t.append([{ id: 61n, day: null, v: 0 }])
      await t.append([{ id: 62n, day: null, v: 6 }], { mode: 'overwrite', partitionOverwriteMode: 'dynamic' })
      const now = await rows(t)
      assert.deepEqual(
        now.filter((r) => r.day === null).map((r) => r.id),
        [62],
      )
      assert.equal(now.length, 61)
    } finally {
      await t.close()
    }
  })

  it('dynamic partition overwrite on an unpartitioned table replaces the whole table, as Delta does', async () => {
    const { t } = await table()
    try {
      await t.append(rowsOf([500], dayOf), { mode: 'overwrite', partitionOverwriteMode: 'dynamic' })
      assert.deepEqual(await rows(t), expected([500]))
    } finally {
      await t.close()
    }
  })

  it('Arrow input and appendFile overwrite in one commit across batches', async () => {
    const { dir, t } = await table({ partitioned: true })
    try {
      const arrow = tableFromArrays({
        id: BigInt64Array.from([600n, 601n]),
        day: ['d2', 'd2'],
        v: Int32Array.from([3, 3]),
      })
      await t.append(arrow, { mode: 'overwrite', partitionOverwriteMode: 'dynamic' })
      const kept = range(0, 60).filter((i) => dayOf(i) !== 'd2')
      const after = [...expected(kept), { id: 600, day: 'd2', v: 3 }, { id: 601, day: 'd2', v: 3 }]
      assert.deepEqual(
        await rows(t),
        after.sort((a, b) => a.id - b.id),
      )

      const input = join(dir, '..', 'in.jsonl')
      const { writeFile } = await import('node:fs/promises')
      await writeFile(
        input,
        ['{"id":700,"day":"d0","v":2}', '{"id":701,"day":"d0","v":2}', '{"id":702,"day":"d0","v":2}'].join(
          '\n',
        ),
      )
      const r = await t.appendFile(input, { mode: 'overwrite', replaceWhere: "day = 'd0'", batchRows: 1 })
      assert.equal(r.metrics.numOutputRows, 3)
      const now = await rows(t)
      assert.deepEqual(
        now.filter((x) => x.day === 'd0').map((x) => x.id),
        [700, 701, 702],
      )
      assert.equal(now.filter((x) => x.day === 'd1').length, 20)
      await assert.rejects(
        t.appendFile(input, { mode: 'overwrite', replaceWhere: "day = 'd1'" }),
        ReplaceWhereMismatchError,
      )
    } finally {
      await t.close()
    }
  })

  it('refuses invalid combinations with typed errors before writing', async () => {
    const { t } = await table({ partitioned: true })
    try {
      const version = (await t.snapshot()).version
      await assert.rejects(t.append([], { replaceWhere: 'id = 1' }), /applies to an overwrite only/)
      await assert.rejects(
        t.append([], { mode: 'overwrite', replaceWhere: 'id = 1', partitionOverwriteMode: 'dynamic' }),
        InvalidArgumentError,
      )
      await assert.rejects(
        t.append([], { mode: 'overwrite', replaceWhere: 'nope = 1' }),
        InvalidArgumentError,
      )
      await assert.rejects(t.append([], { mode: 'upsert' as never }), InvalidArgumentError)
      // A row that does not fit the schema (an overwrite cannot change it).
      await assert.rejects(t.append([{ id: 1n, extra: 1 }], { mode: 'overwrite' }), InvalidArgumentError)
      assert.equal((await t.snapshot()).version, version)
    } finally {
      await t.close()
    }
  })

  it('refuses an overwrite of an append-only table', async () => {
    const { t } = await table({ properties: { 'delta.appendOnly': 'true' } })
    try {
      await assert.rejects(t.append([], { mode: 'overwrite' }), UnsupportedError)
      assert.equal((await rows(t)).length, 60)
    } finally {
      await t.close()
    }
  })
})

describe('restore', () => {
  it('restores a version after a delete, an update and an optimize, with Delta metrics', async () => {
    const { dir, t } = await table()
    try {
      const v2 = (await t.snapshot()).version
      const at2 = await rows(t)
      await t.delete('id < 5')
      await t.update({ where: 'id >= 50', set: { v: '42' } })
      await t.optimize()
      await t.delete('id = 33')
      assert.notDeepEqual(await rows(t), at2)
      const sizeAt2 = (await t.snapshot({ version: v2 }))
        .activeFiles()
        .reduce((n, f) => n + Number(f.size), 0)
      const r = await t.restore({ version: v2 })
      assert.equal(r.operation, 'RESTORE')
      assert.deepEqual(await rows(t), at2)
      assert.equal(r.metrics.numOfFilesAfterRestore, 2)
      assert.equal(r.metrics.numRestoredFiles, 2)
      assert.equal(r.metrics.tableSizeAfterRestore, sizeAt2)
      assert.equal(r.metrics.restoredFilesSize, sizeAt2)
      assert.ok((r.metrics.numRemovedFiles ?? 0) >= 1)
      const lines = await logLines(dir, r.version)
      const info = lines.find((l) => l.commitInfo)!.commitInfo
      assert.equal(info.operation, 'RESTORE')
      assert.equal(info.operationParameters.version, String(v2))
      for (const k of [
        'numRestoredFiles',
        'restoredFilesSize',
        'numRemovedFiles',
        'removedFilesSize',
        'numOfFilesAfterRestore',
        'tableSizeAfterRestore',
      ]) {
        assert.ok(k in info.operationMetrics, k)
      }
      assert.ok(lines.some((l) => l.metaData))
      assert.ok(lines.filter((l) => l.add).every((l) => l.add.dataChange === true))
      const history = await t.history({ limit: 1 })
      assert.equal(history[0]!.operation, 'RESTORE')
    } finally {
      await t.close()
    }
  })

  it('restores a deletion-vector state: the file comes back with its older deletion vector', async () => {
    const { dir, t } = await table()
    try {
      await t.delete('id = 1')
      const v = (await t.snapshot()).version
      const atV = await rows(t)
      await t.delete('id = 2')
      const r = await t.restore({ version: v })
      assert.deepEqual(await rows(t), atV)
      const lines = await logLines(dir, r.version)
      const add = lines.find((l) => l.add)!.add
      const remove = lines.find((l) => l.remove)!.remove
      assert.equal(add.path, remove.path)
      assert.equal(add.deletionVector.cardinality, 1)
      assert.equal(remove.deletionVector.cardinality, 2)
    } finally {
      await t.close()
    }
  })

  it('restores to a timestamp', async () => {
    const { dir, t } = await table()
    try {
      const history = await t.history()
      const v2 = history.find((h) => h.version === 2n)!
      const at2 = await rows(t)
      await t.append(rowsOf([900], dayOf))
      await t.delete('id < 10')
      // The two later commits happened one and two seconds after version 2 (their files' times say
      // so), however fast this machine wrote them.
      for (const k of [1, 2]) {
        const at = new Date(Number(v2.timestamp) + 1000 * k)
        await utimes(join(dir, '_delta_log', `${String(2 + k).padStart(20, '0')}.json`), at, at)
      }
      await t.restore({ timestamp: new Date(v2.timestamp) })
      assert.deepEqual(await rows(t), at2)
    } finally {
      await t.close()
    }
  })

  it('refuses a version that is not older than the latest, and nonsense options', async () => {
    const { t } = await table()
    try {
      const latest = (await t.snapshot()).version
      await assert.rejects(t.restore({ version: latest }), InvalidArgumentError)
      await assert.rejects(t.restore({ version: latest + 5n }), /Cannot time travel|version/)
      await assert.rejects(t.restore({} as never), InvalidArgumentError)
      await assert.rejects(t.restore({ version: 1, timestamp: 0 }), InvalidArgumentError)
      assert.equal((await t.snapshot()).version, latest)
    } finally {
      await t.close()
    }
  })

  it('refuses to restore a version whose files were vacuumed, before committing, with a hint', async () => {
    const { t } = await table()
    try {
      const v2 = (await t.snapshot()).version
      await t.append(rowsOf(range(60, 70), dayOf), { mode: 'overwrite' })
      const vacuumed = await t.vacuum({ retentionHours: 0, enforceRetentionDuration: false })
      assert.equal(vacuumed.files.length, 2, 'the two files of version 2 are deleted')
      const latest = (await t.snapshot()).version
      await assert.rejects(t.restore({ version: v2 }), (err: unknown) => {
        assert.ok(err instanceof RestoreFilesMissingError)
        assert.equal(err.code, 'DELTA_RESTORE_FILES_MISSING')
        assert.equal(err.version, v2)
        assert.equal(err.missing.length, 2)
        assert.match(err.hint ?? '', /VACUUM/)
        return true
      })
      assert.equal((await t.snapshot()).version, latest)
      assert.deepEqual(await rows(t), expected(range(60, 70)))
    } finally {
      await t.close()
    }
  })

  it('refuses to restore a version whose deletion vector was vacuumed, naming the DV file', async () => {
    const { t } = await table()
    try {
      await t.delete('id = 1')
      const v3 = (await t.snapshot()).version
      const dvKey = (await t.snapshot()).activeFiles().find((f) => f.deletionVector)!.deletionVector!
      assert.equal(dvKey.storageType, 'u')
      await t.delete('id = 2')
      const vacuumed = await t.vacuum({ retentionHours: 0, enforceRetentionDuration: false })
      assert.ok(
        vacuumed.files.some((k) => k.startsWith('deletion_vector_')),
        'the first DV file is vacuumed',
      )
      await assert.rejects(t.restore({ version: v3 }), (err: unknown) => {
        assert.ok(err instanceof RestoreFilesMissingError)
        assert.equal(err.missing.length, 1)
        assert.match(err.missing[0]!, /^deletion_vector_.*\.bin$/)
        return true
      })
      assert.deepEqual(await rows(t), expected(range(3, 60).concat([0])))
    } finally {
      await t.close()
    }
  })

  it('a concurrent append aborts a RESTORE (it reads the whole table)', async () => {
    const { t } = await table()
    const other = await DeltaTable.open(t.location, { conflicts: 'all' })
    try {
      const txn = await t.begin()
      await txn.restore({ version: 1 })
      await other.append(rowsOf([999], dayOf))
      await assert.rejects(txn.commit(), ConcurrentModificationError)
      assert.equal((await rows(t)).length, 61)
    } finally {
      await other.close()
      await t.close()
    }
  })
})

/** Rows as `id -> [_row_id, _row_commit_version]`. */
async function rowIds(t: DeltaTable): Promise<Map<number, [bigint, bigint]>> {
  const out = await t.scan({ withRowTracking: true }).toArray()
  return new Map(
    out.map((r) => [Number(r.id as bigint), [r._row_id as bigint, r._row_commit_version as bigint]]),
  )
}

describe('overwrite and restore on a row-tracking table', () => {
  it('copied rows keep their ids, new rows take fresh ones, and RESTORE brings every id back', async () => {
    const { t } = await table({ dv: false, properties: { 'delta.enableRowTracking': 'true' } })
    try {
      const v2 = (await t.snapshot()).version
      const before = await rowIds(t)
      assert.equal(before.size, 60)
      const maxBefore = [...before.values()].reduce((m, [id]) => (id > m ? id : m), -1n)
      // Copy-on-write: the other 20 rows of the first file are copied with their ids.
      await t.append(rowsOf([10, 11], dayOf, 9), { mode: 'overwrite', replaceWhere: 'id >= 10 AND id < 20' })
      const after = await rowIds(t)
      for (const id of range(0, 60).filter((i) => i < 10 || i >= 20)) {
        assert.deepEqual(after.get(id), before.get(id), `row ${id} keeps its id and commit version`)
      }
      for (const id of [10, 11]) assert.ok(after.get(id)![0] > maxBefore, `new row ${id} takes a fresh id`)
      await t.append(rowsOf([100], dayOf), { mode: 'overwrite' })
      assert.ok((await rowIds(t)).get(100)![0] > maxBefore)
      await t.restore({ version: v2 })
      assert.deepEqual(await rowIds(t), before)
    } finally {
      await t.close()
    }
  })
})

describe('restore and the protocol', () => {
  it('sets the metadata back but keeps a protocol upgraded since', async () => {
    const { dir, t } = await table({ dv: false })
    try {
      const v2 = await t.snapshot()
      // Enable deletion vectors: a metadata commit with the protocol it needs.
      const configuration = { ...v2.metadata.configuration, 'delta.enableDeletionVectors': 'true' }
      // The upgrade keeps the features the legacy protocol implied, as Delta's does.
      const needed = protocolForProperties(configuration, v2.schema)
      const protocol = {
        ...needed,
        writerFeatures: [...writerFeaturesOf(v2.protocol), ...(needed.writerFeatures ?? [])],
      }
      assert.equal(protocol.minWriterVersion, 7)
      const txn = await t.begin()
      const actions: Action[] = [{ protocol }, { metaData: { ...v2.metadata, configuration } }]
      txn.stageActions(actions, { operation: 'SET TBLPROPERTIES', changesData: false })
      await txn.commit()
      await t.delete('id = 4')
      const upgraded = (await t.snapshot()).protocol
      const r = await t.restore({ version: v2.version })
      const now = await t.snapshot()
      assert.deepEqual(now.protocol, upgraded)
      assert.equal(now.properties['delta.enableDeletionVectors'], 'false')
      assert.deepEqual(await rows(t), expected(range(0, 60)))
      const lines = await logLines(dir, r.version)
      assert.equal(lines.filter((l) => l.protocol).length, 0, 'no protocol action: nothing to upgrade')
    } finally {
      await t.close()
    }
  })
})

describe('delta-rlc append --mode overwrite and delta-rlc restore', () => {
  it('overwrites with --replace-where, refuses a row outside it, and restores the version before', async () => {
    const { dir, t } = await table({ partitioned: true })
    const before = await rows(t)
    const v2 = (await t.snapshot()).version
    await t.close()
    const input = join(dir, '..', 'd0.jsonl')
    const { writeFile } = await import('node:fs/promises')
    await writeFile(input, '{"id":800,"day":"d0","v":8}\n{"id":801,"day":"d0","v":8}\n')
    const ok = await runCliInProcess([
      'append',
      dir,
      input,
      '--mode',
      'overwrite',
      '--replace-where',
      "day = 'd0'",
      '--json',
    ])
    assert.equal(ok.code, 0, ok.stderr)
    const json = JSON.parse(ok.stdout) as { operation: string; metrics: Record<string, number> }
    assert.equal(json.operation, 'WRITE')
    assert.equal(json.metrics.numOutputRows, 2)
    const outside = await runCliInProcess([
      'append',
      dir,
      input,
      '--mode',
      'overwrite',
      '--replace-where',
      "day = 'd1'",
    ])
    assert.equal(outside.code, 3)
    assert.match(outside.stderr, /does not match replaceWhere/)
    assert.match(outside.stderr, /DELTA_REPLACE_WHERE_MISMATCH/)
    const usage = await runCliInProcess(['append', dir, input, '--replace-where', "day = 'd1'"])
    assert.equal(usage.code, 1)
    assert.match(usage.stderr, /needs --mode overwrite/)

    const t2 = await DeltaTable.open(dir)
    try {
      const now = await rows(t2)
      assert.deepEqual(
        now.filter((r) => r.day === 'd0').map((r) => r.id),
        [800, 801],
      )
      assert.equal(now.length, 42)
    } finally {
      await t2.close()
    }
    const restored = await runCliInProcess(['restore', dir, '--version', String(v2)])
    assert.equal(restored.code, 0, restored.stderr)
    assert.match(restored.stdout, /committed RESTORE as version 4/)
    const missing = await runCliInProcess(['restore', dir])
    assert.equal(missing.code, 1)
    assert.match(missing.stderr, /restore needs --version N or --timestamp TIME/)
    const t3 = await DeltaTable.open(dir)
    try {
      assert.deepEqual(await rows(t3), before)
    } finally {
      await t3.close()
    }
  })
})
