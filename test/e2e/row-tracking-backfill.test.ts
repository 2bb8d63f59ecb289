/**
 * Enabling row tracking on an existing table (`alter.setProperties({ 'delta.enableRowTracking':
 * 'true' })`), as the protocol's backfill does it: the feature supported first (UPGRADE
 * PROTOCOL), then ROW TRACKING BACKFILL commits that give every file written before a `baseRowId`
 * and `defaultRowCommitVersion` (moving the high-water mark), then SET TBLPROPERTIES. Asserted on
 * the log and on the row ids a row-tracking scan reads, before and after an UPDATE.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { ConcurrentDeleteReadError, ProtocolChangedError } from '../../src/errors/index.js'
import { DeltaTable } from '../../src/table/delta-table.js'
import { type LogLine, logLines } from './ops-support.js'

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'delta-rlc-backfill-'))
  roots.push(d)
  return join(d, 't')
}

const range = (a: number, b: number) => Array.from({ length: b - a }, (_, i) => a + i)

/** A table of four files (ids 0..39, ten per append), one of them with a deletion vector. */
async function fourFiles(properties: Record<string, string> = {}): Promise<{ dir: string; t: DeltaTable }> {
  const dir = await tempDir()
  const t = await DeltaTable.create(dir, { schema: 'id long not null, v int', properties })
  for (let f = 0; f < 4; f++) await t.append(range(f * 10, f * 10 + 10).map((i) => ({ id: BigInt(i), v: i })))
  return { dir, t }
}

describe('enabling row tracking on an existing table', () => {
  it('supports the feature, backfills every file in batches, then sets the property; ids stay through an UPDATE', async () => {
    const { dir, t } = await fourFiles()
    try {
      await t.delete('id = 15')
      const before = (await t.snapshot()).version
      const result = await t.alter.setProperties(
        { 'delta.enableRowTracking': 'true' },
        { backfillFilesPerCommit: 3 },
      )
      const ops: string[] = []
      for (let v = before + 1n; v <= result.version; v++) {
        ops.push((await logLines(dir, v)).find((l) => l.commitInfo)?.commitInfo.operation)
      }
      assert.deepEqual(ops, [
        'UPGRADE PROTOCOL',
        'ROW TRACKING BACKFILL',
        'ROW TRACKING BACKFILL',
        'SET TBLPROPERTIES',
      ])
      const upgrade = await logLines(dir, before + 1n)
      const protocol = upgrade.find((l) => l.protocol)?.protocol
      assert.ok(protocol.writerFeatures.includes('rowTracking'))
      assert.ok(protocol.writerFeatures.includes('domainMetadata'))
      assert.ok(protocol.writerFeatures.includes('deletionVectors'))
      // The batches: 3 files, then 1; each recommitted unchanged, with dataChange false.
      const batch1 = await logLines(dir, before + 2n)
      const batch2 = await logLines(dir, before + 3n)
      assert.equal(batch1.find((l) => l.commitInfo)?.commitInfo.operationParameters.batchId, '0')
      assert.equal(batch2.find((l) => l.commitInfo)?.commitInfo.operationParameters.batchId, '1')
      const adds = [...batch1, ...batch2].filter((l) => l.add).map((l) => l.add)
      assert.equal(adds.length, 4)
      assert.ok(adds.every((a) => a.dataChange === false))
      // Fresh, contiguous, disjoint ranges: one id per physical row (the deleted one included).
      const ranges = adds
        .map((a) => ({ base: a.baseRowId as number, n: JSON.parse(a.stats).numRecords as number }))
        .sort((a, b) => a.base - b.base)
      assert.deepEqual(
        ranges.map((r) => [r.base, r.n]),
        [
          [0, 10],
          [10, 10],
          [20, 10],
          [30, 10],
        ],
      )
      assert.deepEqual(
        adds.map((a) => a.defaultRowCommitVersion).sort(),
        [before + 2n, before + 2n, before + 2n, before + 3n].map(Number),
      )
      const mark = (lines: LogLine[]) =>
        JSON.parse(
          lines.find((l) => l.domainMetadata?.domain === 'delta.rowTracking')?.domainMetadata.configuration,
        ).rowIdHighWaterMark
      assert.equal(mark(batch1), 29)
      assert.equal(mark(batch2), 39)
      // The deletion vector travelled with its file.
      assert.equal(adds.filter((a) => a.deletionVector !== undefined).length, 1)
      const set = await logLines(dir, result.version)
      const config = set.find((l) => l.metaData)?.metaData.configuration
      assert.equal(config['delta.enableRowTracking'], 'true')
      assert.match(config['delta.rowTracking.materializedRowIdColumnName'], /^_row-id-col-/)

      const read = async () =>
        new Map(
          (await t.scan({ withRowTracking: true }).toArray()).map((r) => [
            Number(r.id as bigint),
            r._row_id as bigint,
          ]),
        )
      const ids = await read()
      assert.equal(ids.size, 39)
      assert.equal(new Set(ids.values()).size, 39)
      const byId = [...ids.entries()].sort((a, b) => a[0] - b[0])
      // Each file's rows take its range in physical order: id - position is the file's base.
      const bases = new Map<number, bigint>()
      for (const [id, rowId] of byId) {
        const base = rowId - BigInt(id % 10)
        assert.equal(bases.get(Math.floor(id / 10)) ?? base, base)
        bases.set(Math.floor(id / 10), base)
      }
      assert.deepEqual(
        [...bases.values()].map(Number).sort((a, b) => a - b),
        ranges.map((r) => r.base),
      )
      await t.update({ set: { v: 'v + 100' }, where: 'id < 5 OR id = 33' })
      const after = await read()
      assert.deepEqual(
        [...after.entries()].sort((a, b) => a[0] - b[0]),
        byId,
      )
      const rows = await t.scan({ where: 'id = 33' }).toArray()
      assert.deepEqual(rows, [{ id: 33n, v: 133 }])
    } finally {
      await t.close()
    }
  })

  it('backfills in one commit by default; setting the property again only sets it', async () => {
    const { dir, t } = await fourFiles({ 'delta.enableDeletionVectors': 'false' })
    try {
      const before = (await t.snapshot()).version
      const r = await t.alter.setProperties({ 'delta.enableRowTracking': 'true', team: 'x' })
      assert.equal(r.version, before + 3n)
      const again = await t.alter.setProperties({ 'delta.enableRowTracking': 'true' })
      assert.equal(again.version, r.version + 1n)
      assert.equal(
        (await logLines(dir, again.version)).find((l) => l.commitInfo)?.commitInfo.operation,
        'SET TBLPROPERTIES',
      )
      const ids = (await t.scan({ withRowTracking: true }).toArray()).map((x) => x._row_id as bigint)
      assert.equal(new Set(ids).size, 40)
    } finally {
      await t.close()
    }
  })

  it('a backfill batch aborts against a concurrent DELETE of one of its files, and is tried again', async () => {
    const { t } = await fourFiles()
    const other = await DeltaTable.open(t.location)
    try {
      await t.alter.setProperties({ 'delta.feature.rowTracking': 'supported' })
      // A backfill staged before a concurrent DELETE rewrites one of its files commits nothing.
      const txn = await t.begin()
      await txn.stage(async (ctx) => {
        const { buildRowTrackingBackfill } = await import('../../src/ops/row-tracking-backfill.js')
        return buildRowTrackingBackfill(ctx, 0)
      })
      await other.delete('id = 3')
      await assert.rejects(txn.commit(), ConcurrentDeleteReadError)
      await t.alter.setProperties({ 'delta.enableRowTracking': 'true' })
      const rows = await t.scan({ withRowTracking: true }).toArray()
      assert.equal(rows.length, 39)
      assert.ok(!rows.some((r) => r.id === 3n))
      assert.equal(new Set(rows.map((r) => r._row_id)).size, 39)
    } finally {
      await other.close()
      await t.close()
    }
  })

  it('a DELETE begun before row tracking was turned on aborts with DELTA_PROTOCOL_CHANGED, flags off and on', async () => {
    for (const conflicts of ['none', 'all'] as const) {
      const { t } = await fourFiles()
      const writer = await DeltaTable.open(t.location, { conflicts })
      try {
        const txn = await writer.begin()
        await txn.delete('id = 3')
        await t.alter.setProperties({ 'delta.enableRowTracking': 'true' })
        await assert.rejects(txn.commit(), (e: unknown) => e instanceof ProtocolChangedError)
        const rows = await t.scan({ withRowTracking: true }).toArray()
        assert.equal(rows.length, 40)
        assert.equal(new Set(rows.map((r) => r._row_id)).size, 40)
      } finally {
        await writer.close()
        await t.close()
      }
    }
  })
})
