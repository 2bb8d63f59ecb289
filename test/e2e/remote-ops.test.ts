/**
 * The operation suite on Azurite, through the public API on `az://` locations: create, append,
 * DELETE (deletion vectors and copy-on-write), UPDATE, MERGE, OPTIMIZE with its composition tags,
 * VACUUM and time travel, each checked against rows computed independently in plain JS and
 * against the log and objects read back from the container; then two writers on one table, as
 * two processes on two machines would be, reconciling disjoint deletes of one file (Case 2) and
 * aborting on the same row.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { resolveDvLocation } from '../../src/dv/index.js'
import { ConcurrentModificationError } from '../../src/errors/index.js'
import { parseCommitFile } from '../../src/protocol/action-json.js'
import type { Action, AddFile, DeletionVectorDescriptor } from '../../src/protocol/actions.js'
import { parseOptimizeSourceComposition } from '../../src/protocol/composition-tags.js'
import { commitFileName, LOG_DIR } from '../../src/protocol/log-files.js'
import { loadDeletionVector } from '../../src/scan/load-deletion-vector.js'
import type { ObjectStore } from '../../src/storage/index.js'
import { DeltaTable, type OpenOptions } from '../../src/table/delta-table.js'
import { azuriteBackend, type RemoteLocation } from '../helpers/remote-backends.js'
import {
  addsOf,
  assertSameRows,
  commitInfoOf,
  keyOf,
  type Row,
  readParquet,
  removesOf,
  SCHEMA,
  standardRow,
} from './ops-support.js'

const azurite = azuriteBackend()
const scratch: string[] = []

before(() => azurite.start())
after(async () => {
  await azurite.stop()
  await Promise.all(scratch.map((d) => rm(d, { recursive: true, force: true })))
})

const ids = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i)
const rowsOf = (list: number[]) => list.map(standardRow)

interface RemoteTable extends RemoteLocation {
  readonly table: DeltaTable
}

async function createRemoteTable(
  layout: { partitioned: boolean; dv: boolean },
  batches: readonly Row[][],
  openOptions: OpenOptions = {},
): Promise<RemoteTable> {
  const loc = azurite.fresh('ops')
  const table = await DeltaTable.create(
    loc.location,
    {
      schema: SCHEMA,
      partitionBy: layout.partitioned ? ['part'] : [],
      properties: { 'delta.enableDeletionVectors': String(layout.dv) },
    },
    { ...loc.openOptions, ...openOptions },
  )
  for (const batch of batches) await table.append(batch)
  return { ...loc, table }
}

async function commitActions(store: ObjectStore, version: bigint): Promise<Action[]> {
  const key = `${LOG_DIR}${commitFileName(version)}`
  return parseCommitFile(new TextDecoder().decode(await store.read(key)), { path: key, version })
}

async function exists(store: ObjectStore, key: string): Promise<boolean> {
  try {
    await store.head(key)
    return true
  } catch (err) {
    if ((err as { code?: string }).code === 'DELTA_FILE_NOT_FOUND') return false
    throw err
  }
}

function dvKey(dv: DeletionVectorDescriptor): string {
  const loc = resolveDvLocation(dv)
  assert.equal(loc.kind, 'relative', 'DVs we write live next to the table')
  return loc.kind === 'relative' ? loc.path : ''
}

/** A data file's rows in physical order, read from the container by an independent DuckDB. */
async function objectRows(store: ObjectStore, key: string, columns: readonly string[]): Promise<Row[]> {
  const dir = await mkdtemp(join(tmpdir(), 'delta-rlc-remote-ops-'))
  scratch.push(dir)
  const path = join(dir, 'file.parquet')
  await writeFile(path, await store.read(key))
  return readParquet(path, columns)
}

async function scan(table: DeltaTable, version?: bigint): Promise<Row[]> {
  return table.scan(version === undefined ? {} : { version }).toArray()
}

describe('operations on Azurite', () => {
  it('create, append and time travel by version and by commit time', async () => {
    const batches = [rowsOf(ids(0, 10)), rowsOf(ids(10, 10)), rowsOf(ids(20, 10))]
    const t = await createRemoteTable({ partitioned: true, dv: true }, batches)
    try {
      assert.equal((await t.table.snapshot()).version, 3n)
      for (let v = 0; v <= 3; v++) {
        assertSameRows(await scan(t.table, BigInt(v)), batches.slice(0, v).flat(), `version ${v}`)
      }
      const history = await t.table.history()
      assert.deepEqual(
        history.map((h) => [h.version, h.operation]),
        [
          [3n, 'WRITE'],
          [2n, 'WRITE'],
          [1n, 'WRITE'],
          [0n, 'CREATE TABLE'],
        ],
      )
      // The container's own modification times decide timestamp travel. They have whole seconds,
      // so commits may share one; Delta then adjusts each commit to 1 ms after the one before.
      const times: number[] = []
      for (let v = 0n; v <= 3n; v++) {
        times.push((await t.store.head(`${LOG_DIR}${commitFileName(v)}`)).lastModified)
      }
      const adjusted: number[] = []
      for (const at of times) adjusted.push(Math.max(at, (adjusted.at(-1) ?? Number.NEGATIVE_INFINITY) + 1))
      const versionAt = (time: number) => adjusted.reduce((best, at, v) => (at <= time ? v : best), -1)
      for (const time of [...times, ...adjusted]) {
        const want = versionAt(time)
        assert.equal((await t.table.snapshot({ timestamp: time })).version, BigInt(want), `at ${time}`)
      }
      assert.deepEqual(
        adjusted.map(versionAt),
        [0, 1, 2, 3],
        'every commit is reachable by its adjusted time',
      )
      for (const outside of [(times[0] as number) - 60_000, (adjusted[3] as number) + 60_000]) {
        await assert.rejects(t.table.snapshot({ timestamp: outside }), { code: 'DELTA_VERSION_NOT_FOUND' })
      }
      for (const f of (await t.table.snapshot()).activeFiles()) {
        assert.ok(await exists(t.store, keyOf(f.path)), `${f.path} is in the container`)
        assert.match(f.path, /^part=\d\//, 'partition directories')
      }
      const other = await DeltaTable.open(t.location, t.openOptions)
      try {
        assertSameRows(await scan(other), batches.flat(), 'a second handle reads the same rows')
      } finally {
        await other.close()
      }
    } finally {
      await t.table.close()
    }
  })

  for (const dv of [true, false]) {
    const mode = dv ? 'deletion vectors' : 'copy-on-write'

    it(`DELETE with ${mode} removes exactly the matching rows`, async () => {
      const all = rowsOf(ids(0, 60))
      const t = await createRemoteTable({ partitioned: false, dv }, [all.slice(0, 30), all.slice(30)])
      try {
        const result = await t.table.delete('id % 7 = 0 AND id < 45')
        const expected = all.filter((r) => !(Number(r.id) % 7 === 0 && Number(r.id) < 45))
        assertSameRows(await scan(t.table), expected)
        assert.equal(result.metrics.numDeletedRows, all.length - expected.length)
        const actions = await commitActions(t.store, result.version)
        assert.equal(commitInfoOf(actions).operation, 'DELETE')
        const adds = addsOf(actions)
        assert.ok(removesOf(actions).length > 0, 'files left the snapshot')
        if (dv) {
          assert.ok(adds.length > 0 && adds.every((a) => a.deletionVector !== undefined))
          for (const a of adds) {
            const desc = a.deletionVector as DeletionVectorDescriptor
            assert.ok(await exists(t.store, dvKey(desc)), 'the DV file is in the container')
            const deleted = (await loadDeletionVector(t.table.engine, desc)).toArray()
            const rows = await objectRows(t.store, keyOf(a.path), ['id'])
            assert.deepEqual(
              deleted.map((p) => Number(rows[p]?.id)).every((id) => id % 7 === 0 && id < 45),
              true,
              'the DV names exactly deleted rows',
            )
          }
        } else {
          assert.ok(
            adds.every((a) => a.deletionVector === undefined),
            'rewritten, no DV',
          )
          for (const a of adds) {
            const rows = await objectRows(t.store, keyOf(a.path), ['id'])
            assert.ok(rows.every((r) => !(Number(r.id) % 7 === 0 && Number(r.id) < 45)))
          }
        }
        assertSameRows(await scan(t.table, result.version - 1n), all, 'the version before still reads')
      } finally {
        await t.table.close()
      }
    })

    it(`UPDATE with ${mode} rewrites exactly the matching rows`, async () => {
      const all = rowsOf(ids(0, 45))
      const t = await createRemoteTable({ partitioned: true, dv }, [all])
      try {
        const result = await t.table.update({
          where: 'part = 1 AND id < 30',
          set: { name: "'updated'", value: 'value * 2' },
        })
        const expected = all.map((r) =>
          r.part === 1 && Number(r.id) < 30
            ? { ...r, name: 'updated', value: r.value === null ? null : (r.value as number) * 2 }
            : r,
        )
        assertSameRows(await scan(t.table), expected)
        assert.equal(result.metrics.numUpdatedRows, 10)
        const adds = addsOf(await commitActions(t.store, result.version))
        assert.equal(
          adds.some((a) => a.deletionVector !== undefined),
          dv,
          dv ? 'old rows hidden by a DV' : 'files rewritten',
        )
      } finally {
        await t.table.close()
      }
    })
  }

  it('MERGE updates, deletes and inserts as a plain-JS merge does', async () => {
    const all = rowsOf(ids(0, 30))
    const t = await createRemoteTable({ partitioned: false, dv: true }, [all.slice(0, 15), all.slice(15)])
    try {
      const source: Row[] = [
        { id: 2n, value: 500 },
        { id: 3n, value: 7 },
        { id: 17n, value: 8 },
        { id: 100n, value: 9 },
        { id: 101n, value: 600 },
      ]
      const result = await t.table.merge(source, {
        on: 'target.id = source.id',
        whenMatched: [{ if: 'source.value > 100', delete: true }, { update: { value: 'source.value' } }],
        whenNotMatched: [
          {
            if: 'source.value < 100',
            insert: { id: 'source.id', name: "'new'", value: 'source.value', part: '0' },
          },
        ],
        whenNotMatchedBySource: [{ if: 'target.id >= 28', update: { name: "'orphan'" } }],
      })
      const byId = new Map(source.map((s) => [s.id as bigint, s]))
      const expected: Row[] = []
      for (const r of all) {
        const s = byId.get(r.id as bigint)
        if (s === undefined) expected.push(Number(r.id) >= 28 ? { ...r, name: 'orphan' } : r)
        else if ((s.value as number) <= 100) expected.push({ ...r, value: s.value })
      }
      expected.push({ id: 100n, name: 'new', value: 9, part: 0 })
      assertSameRows(await scan(t.table), expected)
      assert.equal(result.metrics.numTargetRowsDeleted, 1)
      assert.equal(result.metrics.numTargetRowsInserted, 1)
      assert.equal(result.metrics.numTargetRowsUpdated, 4)
    } finally {
      await t.table.close()
    }
  })

  it('OPTIMIZE compacts small files; each tombstone tags the offset of its live rows in the output', async () => {
    const batches = [0, 1, 2, 3, 4].map((b) => rowsOf(ids(b * 6, 6)))
    const t = await createRemoteTable({ partitioned: false, dv: true }, batches)
    try {
      await t.table.delete('id IN (1, 8, 13, 14, 27)')
      const before = await scan(t.table)
      const beforeSnap = await t.table.snapshot()
      const result = await t.table.optimize()
      assertSameRows(await scan(t.table), before)
      const actions = await commitActions(t.store, result.version)
      assert.equal(commitInfoOf(actions).operation, 'OPTIMIZE')
      const adds = addsOf(actions)
      const removes = removesOf(actions)
      assert.equal(adds.length, 1)
      assert.deepEqual(
        removes.map((r) => r.path).sort(),
        beforeSnap
          .activeFiles()
          .map((f) => f.path)
          .sort(),
      )
      const output = adds[0] as AddFile
      assert.equal(output.dataChange, false)
      const columns = ['id', 'name', 'value', 'part']
      const outRows = await objectRows(t.store, keyOf(output.path), columns)
      for (const r of removes) {
        const comp = parseOptimizeSourceComposition(r, new Set([output.path]))
        assert.ok(comp, `${r.path} carries composition tags`)
        let live = await objectRows(t.store, keyOf(r.path), columns)
        if (r.deletionVector !== undefined) {
          const deleted = new Set((await loadDeletionVector(t.table.engine, r.deletionVector)).toArray())
          live = live.filter((row) => !deleted.has(Number(row.__pos)))
        }
        const strip = (rows: Row[]) => rows.map(({ __pos, ...rest }) => rest)
        assert.deepEqual(
          strip(outRows.slice(comp.outputStart, comp.outputStart + comp.liveCount)),
          strip(live),
          `${r.path}: live rows at offset ${comp.outputStart}`,
        )
      }
    } finally {
      await t.table.close()
    }
  })

  it('VACUUM deletes from the container only what no retained version needs', async () => {
    const all = rowsOf(ids(0, 40))
    const t = await createRemoteTable({ partitioned: false, dv: false }, [all.slice(0, 20), all.slice(20)])
    try {
      const v2 = (await t.table.snapshot()).version
      await t.table.delete('id < 5')
      await t.table.optimize()
      const expected = all.filter((r) => Number(r.id) >= 5)
      const live = (await t.table.snapshot()).activeFiles().map((f) => keyOf(f.path))
      const dry = await t.table.vacuum({ retentionHours: 0, enforceRetentionDuration: false, dryRun: true })
      assert.ok(dry.files.length > 0)
      for (const key of dry.files) assert.ok(await exists(t.store, key), 'a dry run deletes nothing')
      assert.ok(
        dry.files.every((k) => !live.includes(k)),
        'no live file is listed',
      )
      const done = await t.table.vacuum({ retentionHours: 0, enforceRetentionDuration: false })
      assert.deepEqual([...done.files], [...dry.files])
      for (const key of done.files) assert.equal(await exists(t.store, key), false, `${key} is gone`)
      for (const key of live) assert.ok(await exists(t.store, key), `${key} stays`)
      assertSameRows(await scan(t.table), expected)
      await assert.rejects(scan(t.table, v2), { code: 'DELTA_FILE_NOT_FOUND' })
    } finally {
      await t.table.close()
    }
  })
})

describe('two writers on one Azurite table', () => {
  const flags = { 'rowLevelConcurrency.enabled': true }

  async function twoHandles() {
    const all = rowsOf(ids(0, 20))
    const t = await createRemoteTable({ partitioned: false, dv: true }, [all], { conflicts: flags })
    const other = await DeltaTable.open(t.location, { ...t.openOptions, conflicts: flags })
    return { all, t, other }
  }

  it('deletes of disjoint rows of one file both commit by DV union (Case 2)', async () => {
    const { all, t, other } = await twoHandles()
    try {
      const a = await t.table.begin()
      await a.delete('id = 3')
      const b = await other.begin()
      await b.delete('id = 11')
      const won = await a.commit()
      const reconciled = await b.commit()
      assert.equal(reconciled.version, won.version + 1n)
      assert.ok(reconciled.reconciliations.some((r) => r.kind === 'case2-dv-union'))
      const expected = all.filter((r) => r.id !== 3n && r.id !== 11n)
      const fresh = await DeltaTable.open(t.location, t.openOptions)
      try {
        assertSameRows(await scan(fresh), expected)
        const files = (await fresh.snapshot()).activeFiles()
        assert.equal(files.length, 1)
        assert.equal(files[0]?.deletionVector?.cardinality, 2n, 'one DV holding both deletes')
      } finally {
        await fresh.close()
      }
    } finally {
      await Promise.all([t.table.close(), other.close()])
    }
  })

  it('deletes of the same row: the second writer aborts with a typed conflict and commits nothing', async () => {
    const { all, t, other } = await twoHandles()
    try {
      const a = await t.table.begin()
      await a.delete('id = 5')
      const b = await other.begin()
      await b.delete('id = 5 OR id = 6')
      const won = await a.commit()
      // With DVs the winner re-adds the file the loser read, so the check that fires first is
      // the concurrent-append one, as in Spark; the reason names the shared row.
      await assert.rejects(b.commit(), (err: unknown) => {
        assert.ok(err instanceof ConcurrentModificationError, String(err))
        assert.match(err.message, /deleted the same 1 row/)
        return true
      })
      assert.equal((await other.snapshot()).version, won.version, 'no commit after the winner')
      assertSameRows(
        await scan(other),
        all.filter((r) => r.id !== 5n),
      )
    } finally {
      await Promise.all([t.table.close(), other.close()])
    }
  })
})
