/**
 * OPTIMIZE end to end. The central check (design decision 9): every output is read back with an
 * independent DuckDB, and each source's live rows (its rows in physical order minus its
 * deletion vector) must sit exactly at the `rowOffsetInTarget` its tombstone's tags record, in
 * order, with the runs tiling the output. Also: rows unchanged, `dataChange = false`, bins and
 * sizes, partition predicates, Z-order (sorted, no tags), a Spark-written table, OPTIMIZE's own
 * retry, and the tags used by the Case 4a / 4b reconciliations.
 */
import assert from 'node:assert/strict'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { isDeltaError } from '../../src/errors/index.js'
import { serializeCommit } from '../../src/protocol/action-json.js'
import type { AddFile, RemoveFile } from '../../src/protocol/actions.js'
import { parseOptimizeSourceComposition } from '../../src/protocol/composition-tags.js'
import { commitFileName, LOG_DIR } from '../../src/protocol/log-files.js'
import { DeltaTable } from '../../src/table/delta-table.js'
import { GOLDEN_SKIP, prepareGoldenTable } from '../helpers/golden.js'
import {
  addsOf,
  assertDuckDbReadsAdds,
  assertSameRows,
  closeHooked,
  commitActions,
  commitInfoOf,
  createTestTable,
  keyOf,
  LAYOUTS,
  latestVersion,
  listDataFiles,
  liveRowsOf,
  numRecords,
  openWithHook,
  type Row,
  readParquet,
  removesOf,
  scanRows,
  standardRow,
  type TestTable,
} from './ops-support.js'

/** Five appends of six rows (ids 0..29): many small files. */
const BATCHES = [0, 1, 2, 3, 4].map((b) => Array.from({ length: 6 }, (_, i) => standardRow(b * 6 + i)))

/** Data columns as stored in the files (partition columns are not). */
function fileColumns(partitioned: boolean): string[] {
  return partitioned ? ['id', 'name', 'value'] : ['id', 'name', 'value', 'part']
}

/**
 * Verifies one OPTIMIZE commit's composition tags against the bytes: each tagged source's live
 * rows are exactly the output rows at its offset, and the runs of one output tile it.
 *
 * @returns the number of tagged sources
 */
async function verifyCompositions(
  table: DeltaTable,
  dir: string,
  removes: readonly RemoveFile[],
  adds: readonly AddFile[],
  columns: readonly string[],
): Promise<number> {
  const outputs = new Set(adds.map((a) => a.path))
  const runs = new Map<string, { start: number; count: number }[]>()
  const outputRows = new Map<string, Row[]>()
  for (const a of adds) outputRows.set(a.path, await readParquet(join(dir, keyOf(a.path)), columns))
  let tagged = 0
  for (const r of removes) {
    const comp = parseOptimizeSourceComposition(r, outputs)
    assert.ok(comp, `the tombstone of ${r.path} carries parseable composition tags`)
    const live = await liveRowsOf(table, dir, r, columns)
    assert.equal(comp.liveCount, live.length, `${r.path}: live count`)
    const out = outputRows.get(comp.outputPath) as Row[]
    const slice = out.slice(comp.outputStart, comp.outputStart + comp.liveCount)
    assert.deepEqual(
      slice.map(({ __pos, ...rest }) => rest),
      live.map(({ __pos, ...rest }) => rest),
      `${r.path}: its live rows sit at offset ${comp.outputStart} of ${comp.outputPath}, in order`,
    )
    const list = runs.get(comp.outputPath) ?? []
    list.push({ start: comp.outputStart, count: comp.liveCount })
    runs.set(comp.outputPath, list)
    tagged++
  }
  for (const [path, list] of runs) {
    list.sort((a, b) => a.start - b.start)
    let next = 0
    for (const run of list) {
      assert.equal(run.start, next, `${path}: runs are contiguous`)
      next += run.count
    }
    assert.equal(next, (outputRows.get(path) as Row[]).length, `${path}: runs cover the output`)
  }
  return tagged
}

for (const layout of LAYOUTS) {
  describe(`OPTIMIZE compaction (${layout.name})`, () => {
    it('compacts each partition into one file, tags every source with its exact offset, keeps the rows', async () => {
      const t = await createTestTable(layout, BATCHES)
      try {
        // Deletions first: DVs (or rewritten files) on some sources, one batch gone whole.
        await t.table.delete('id IN (1, 2, 8, 13, 14, 21)')
        await t.table.delete('id >= 24')
        // Copy-on-write deletes merge their outputs: append again so there is something to compact.
        await t.table.append(Array.from({ length: 6 }, (_, i) => standardRow(30 + i)))
        const before = await t.table.snapshot()
        const rows = await scanRows(t.table)
        const result = await t.table.optimize()
        assertSameRows(await scanRows(t.table), rows)

        const actions = await commitActions(t.dir, result.version)
        const info = commitInfoOf(actions)
        assert.equal(info.operation, 'OPTIMIZE')
        assert.deepEqual(info.operationParameters, { predicate: '[]', zOrderBy: '[]', auto: 'false' })
        const adds = addsOf(actions)
        const removes = removesOf(actions)
        for (const a of [...adds, ...removes]) assert.equal(a.dataChange, false, `${a.path} changes no data`)
        assert.deepEqual(
          removes.map((r) => r.path).sort(),
          before
            .activeFiles()
            .map((f) => f.path)
            .sort(),
          'every small file is compacted',
        )
        assert.equal(adds.length, layout.partitioned ? 3 : 1, 'one output per partition')
        for (const r of removes) {
          const src = before.activeFiles().find((f) => f.path === r.path)
          assert.deepEqual(r.deletionVector, src?.deletionVector, 'the tombstone keeps the read-time DV')
        }
        const tagged = await verifyCompositions(
          t.table,
          t.dir,
          removes,
          adds,
          fileColumns(layout.partitioned),
        )
        assert.equal(tagged, removes.length)
        assert.equal(result.metrics.numTaggedSources, removes.length)
        assert.equal(result.metrics.numRemovedFiles, removes.length)
        assert.equal(result.metrics.numAddedFiles, adds.length)
        assert.equal(
          adds.reduce((n, a) => n + numRecords(a), 0),
          rows.length,
        )
        assert.ok((await t.table.snapshot()).activeFiles().every((f) => f.deletionVector === undefined))
        await assertDuckDbReadsAdds(t.dir, Number(result.version), Number(result.version))

        const again = await t.table.optimize()
        assert.equal(again.committed, false, 'nothing left to compact')
      } finally {
        await t.cleanup()
      }
    })
  })
}

describe('OPTIMIZE bins and selection', () => {
  it('purges the deleted rows of a single file with a deletion vector', async () => {
    const t = await createTestTable({ partitioned: false, dv: true }, [BATCHES[0] as Row[]])
    try {
      await t.table.delete('id = 3')
      const result = await t.table.optimize()
      const actions = await commitActions(t.dir, result.version)
      const [removed] = removesOf(actions)
      const [added] = addsOf(actions)
      assert.equal(removed?.deletionVector?.cardinality, 1n)
      assert.ok(added && added.deletionVector === undefined)
      assert.equal(numRecords(added), 5)
      await verifyCompositions(t.table, t.dir, removesOf(actions), addsOf(actions), fileColumns(false))
      assertSameRows(
        await scanRows(t.table),
        t.rows.filter((r) => r.id !== 3n),
      )
    } finally {
      await t.cleanup()
    }
  })

  it('a small target size packs the files into several bins, each source tagged with its own output', async () => {
    const t = await createTestTable({ partitioned: false, dv: false }, BATCHES)
    try {
      const files = (await t.table.snapshot()).activeFiles()
      const size = Math.max(...files.map((f) => Number(f.size)))
      const result = await t.table.optimize({ targetFileSize: 2 * size })
      const actions = await commitActions(t.dir, result.version)
      const adds = addsOf(actions)
      const removes = removesOf(actions)
      assert.ok(adds.length >= 2, `several outputs (${adds.length})`)
      assert.equal(result.metrics.numBatches, adds.length)
      for (const a of adds) assert.ok(numRecords(a) >= 6, 'no output of a single source without DV')
      assert.equal(
        await verifyCompositions(t.table, t.dir, removes, adds, fileColumns(false)),
        removes.length,
      )
      assertSameRows(await scanRows(t.table), t.rows)
    } finally {
      await t.cleanup()
    }
  })

  it('leaves files of at least minFileSize alone', async () => {
    const big = Array.from({ length: 200 }, (_, i) => standardRow(100 + i))
    const t = await createTestTable({ partitioned: false, dv: false }, [...BATCHES, big])
    try {
      const files = (await t.table.snapshot()).activeFiles()
      const largest = files.reduce((a, b) => (a.size > b.size ? a : b))
      const result = await t.table.optimize({ minFileSize: Number(largest.size) })
      const removes = removesOf(await commitActions(t.dir, result.version))
      assert.equal(removes.length, files.length - 1)
      assert.ok(!removes.some((r) => r.path === largest.path), 'the large file stays')
      assertSameRows(await scanRows(t.table), t.rows)
    } finally {
      await t.cleanup()
    }
  })

  it('a partition predicate compacts only the selected partitions', async () => {
    const t = await createTestTable({ partitioned: true, dv: true }, BATCHES)
    try {
      const result = await t.table.optimize({ where: 'part = 1' })
      const actions = await commitActions(t.dir, result.version)
      assert.ok(removesOf(actions).every((r) => r.partitionValues?.part === '1'))
      assert.equal(removesOf(actions).length, 5)
      assert.deepEqual(
        addsOf(actions).map((a) => a.partitionValues),
        [{ part: '1' }],
      )
      assert.equal(commitInfoOf(actions).operationParameters?.predicate, '["part = 1"]')
      assertSameRows(await scanRows(t.table), t.rows)
    } finally {
      await t.cleanup()
    }
  })

  const refusals: readonly { name: string; options: unknown }[] = [
    { name: 'a predicate over a data column', options: { where: 'id > 3' } },
    { name: 'a zero target size', options: { targetFileSize: 0 } },
    { name: 'an unknown Z-order column', options: { zOrderBy: ['nope'] } },
    { name: 'a partition column in zOrderBy', options: { zOrderBy: ['part'] } },
    { name: 'a Z-order column listed twice', options: { zOrderBy: ['id', 'ID'] } },
    { name: 'a deleted-rows ratio above 1', options: { maxDeletedRowsRatio: 2 } },
  ]
  for (const r of refusals) {
    it(`refuses ${r.name}`, async () => {
      const t = await createTestTable({ partitioned: true, dv: true }, BATCHES.slice(0, 2))
      try {
        const version = await latestVersion(t.table)
        await assert.rejects(
          () => t.table.optimize(r.options as never),
          (err) => isDeltaError(err, 'DELTA_INVALID_ARGUMENT'),
        )
        assert.equal(await latestVersion(t.table), version)
      } finally {
        await t.cleanup()
      }
    })
  }
})

describe('OPTIMIZE ZORDER', () => {
  /** Ids shuffled across appends so that no file is sorted by id. */
  const shuffled = [0, 1, 2, 3].map((b) =>
    Array.from({ length: 10 }, (_, i) => {
      const id = (i * 7 + b * 13) % 40
      return { ...standardRow(id), value: ((id * 17) % 11) + 0.5 }
    }),
  )

  it('by one column sorts the rows by it, writes no composition tags, keeps the rows', async () => {
    const t = await createTestTable({ partitioned: false, dv: true }, shuffled)
    try {
      await t.table.delete('id = 5')
      const rows = await scanRows(t.table)
      const result = await t.table.optimize({ zOrderBy: ['id'] })
      const actions = await commitActions(t.dir, result.version)
      assert.equal(commitInfoOf(actions).operationParameters?.zOrderBy, '["id"]')
      const removes = removesOf(actions)
      assert.equal(removes.length, 4)
      for (const r of removes) {
        assert.equal(r.dataChange, false)
        assert.equal(r.tags?.compactedInto, undefined, 'ZORDER writes no tags')
      }
      const adds = addsOf(actions)
      assert.equal(adds.length, 1)
      const out = await readParquet(join(t.dir, keyOf(adds[0]!.path)), ['id'])
      const ids = out.map((r) => r.id as bigint)
      assert.deepEqual(
        ids,
        [...ids].sort((a, b) => (a < b ? -1 : 1)),
      )
      assertSameRows(await scanRows(t.table), rows)
      await assertDuckDbReadsAdds(t.dir, Number(result.version), Number(result.version))
    } finally {
      await t.cleanup()
    }
  })

  it('by two columns rewrites every file of each partition and keeps the rows', async () => {
    const t = await createTestTable({ partitioned: true, dv: false }, shuffled)
    try {
      const before = (await t.table.snapshot()).activeFiles().length
      const result = await t.table.optimize({ zOrderBy: ['value', 'id'] })
      const actions = await commitActions(t.dir, result.version)
      assert.equal(removesOf(actions).length, before)
      assert.equal(addsOf(actions).length, 3)
      assert.ok(removesOf(actions).every((r) => r.tags === undefined))
      assertSameRows(await scanRows(t.table), t.rows)
    } finally {
      await t.cleanup()
    }
  })
})

describe('OPTIMIZE on a Spark-written table', { skip: GOLDEN_SKIP }, () => {
  it('compacts dv-partitioned-with-checkpoint with exact offsets and unchanged rows', async () => {
    const golden = await prepareGoldenTable('dv-partitioned-with-checkpoint')
    const table = await DeltaTable.open(golden.dir, { autoCheckpoint: false })
    try {
      const rows = await scanRows(table)
      assert.equal(rows.length, 35)
      const result = await table.optimize()
      const actions = await commitActions(golden.dir, result.version)
      const removes = removesOf(actions)
      assert.ok(
        removes.some((r) => r.deletionVector !== undefined),
        'some sources had DVs',
      )
      const tagged = await verifyCompositions(table, golden.dir, removes, addsOf(actions), ['col1', 'col2'])
      assert.equal(tagged, removes.length)
      assertSameRows(await scanRows(table), rows)
      await assertDuckDbReadsAdds(golden.dir, Number(result.version), Number(result.version))
    } finally {
      await table.close()
      await golden.cleanup()
    }
  })
})

// === Concurrency: OPTIMIZE's retry, and its tags feeding Cases 4a / 4b ===

/** Commits a table-property change as the next version, as another writer would. */
async function commitPropertyChange(t: TestTable): Promise<void> {
  const snap = await t.table.snapshot()
  const metadata = {
    ...snap.metadata,
    configuration: { ...snap.metadata.configuration, 'delta.logRetentionDuration': 'interval 60 days' },
  }
  const body = serializeCommit([
    {
      commitInfo: { timestamp: BigInt(Date.now()), operation: 'SET TBLPROPERTIES', operationParameters: {} },
    },
    { metaData: metadata },
  ])
  await writeFile(join(t.dir, LOG_DIR, commitFileName(snap.version + 1n)), body, { flag: 'wx' })
}

async function withHook<T>(
  t: TestTable,
  hook: () => Promise<unknown>,
  flags: Readonly<Record<string, boolean>>,
  fn: (table: DeltaTable) => Promise<T>,
): Promise<T> {
  const table = await openWithHook(t.dir, 'compact', hook, { conflicts: flags })
  try {
    return await fn(table)
  } finally {
    await closeHooked(table)
  }
}

describe('OPTIMIZE under concurrency', () => {
  it('retries after a conflicting metadata change while all its sources are still live', async () => {
    const t = await createTestTable({ partitioned: false, dv: true }, BATCHES)
    try {
      const result = await withHook(
        t,
        () => commitPropertyChange(t),
        {},
        (table) => table.optimize(),
      )
      assert.equal(result.operation, 'OPTIMIZE')
      const actions = await commitActions(t.dir, result.version)
      assert.equal(removesOf(actions).length, 5)
      assert.equal(result.version, 7n, 'landed after the metadata change')
      assert.equal((await t.table.snapshot()).activeFiles().length, 1)
      assertSameRows(await scanRows(t.table), t.rows)
    } finally {
      await t.cleanup()
    }
  })

  it('gives up when a concurrent DELETE changed a source, and deletes its outputs (flags off)', async () => {
    const t = await createTestTable({ partitioned: false, dv: true }, BATCHES)
    try {
      const before = await latestVersion(t.table)
      await assert.rejects(
        () =>
          withHook(
            t,
            () => t.table.delete('id = 3'),
            {},
            (table) => table.optimize(),
          ),
        (err) => isDeltaError(err) && err.code.startsWith('DELTA_CONCURRENT'),
      )
      assert.equal(await latestVersion(t.table), before + 1n, 'only the DELETE landed')
      const removed = (await t.table.snapshot()).activeFiles().map((f) => f.path)
      assert.equal(removed.length, 5, 'the sources are still the live files')
      const orphans = (await listDataFiles(t.dir))
        .filter((k) => k.endsWith('.parquet'))
        .filter((k) => !removed.some((p) => keyOf(p) === k))
      assert.deepEqual(orphans, [], 'no output file is left behind')
      assertSameRows(
        await scanRows(t.table),
        t.rows.filter((r) => r.id !== 3n),
      )
    } finally {
      await t.cleanup()
    }
  })

  it('reconciles with a concurrent DV delete through its tags (Case 4a)', async () => {
    const t = await createTestTable({ partitioned: false, dv: true }, BATCHES)
    try {
      const result = await withHook(
        t,
        () => t.table.delete('id = 3 OR id = 20'),
        { 'optimize.conflictReconciliation.enabled': true },
        (table) => table.optimize(),
      )
      assert.ok(result.reconciliations.some((r) => r.kind === 'case4a-forward-remap'))
      assertSameRows(
        await scanRows(t.table),
        t.rows.filter((r) => r.id !== 3n && r.id !== 20n),
      )
    } finally {
      await t.cleanup()
    }
  })

  it('lets a DML that lost to it remap its deletions onto the output (Case 4b)', async () => {
    const t = await createTestTable({ partitioned: false, dv: true }, BATCHES, {
      conflicts: { 'optimize.conflictReconciliation.reverse.enabled': true },
    })
    try {
      const loser = await t.table.begin()
      await loser.delete('id = 4')
      await t.table.optimize()
      const result = await loser.commit()
      assert.ok(result.reconciliations.some((r) => r.kind === 'case4b-reverse-remap'))
      assertSameRows(
        await scanRows(t.table),
        t.rows.filter((r) => r.id !== 4n),
      )
    } finally {
      await t.cleanup()
    }
  })
})
