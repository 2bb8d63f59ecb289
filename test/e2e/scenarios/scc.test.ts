/**
 * Suite SCC of scenarios.md (SourceCompositionCaptureExecSuite, Case 4 write side) adapted to
 * this engine. Spark captures the composition with a physical operator over columnar batches;
 * here the DuckDB data plane writes each bin from its sources in bin order and, inside a source,
 * in `file_row_number` order, and reports where each source's live rows landed. What the records
 * protect is the same: each source's live rows sit contiguously at the recorded offset, and a
 * composition that cannot be trusted is not written. Every test reads the output back.
 */
import assert from 'node:assert/strict'
import { stat } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { DuckDBInstance } from '@duckdb/node-api'
import type { CompactionOutput } from '../../../src/engine/data-writer.js'
import { trustedCompositionTags } from '../../../src/ops/optimize.js'
import type { AddFile } from '../../../src/protocol/actions.js'
import { planCompositionTags } from '../../../src/protocol/composition-tags.js'
import { dataFileRefs } from '../../../src/scan/data-file-refs.js'
import type { DeltaTable } from '../../../src/table/delta-table.js'
import {
  addsOf,
  assertCompositionReadsBack,
  commitActions,
  commitStaged,
  compositionOf,
  createTable,
  FLAG,
  flags,
  liveFiles,
  liveIds,
  openTable,
  removesOf,
  sourcesAsRead,
  span,
  tableDir,
  tableT,
} from './harness.js'

const FORWARD = flags(FLAG.forward)

/** Runs OPTIMIZE and returns its commit's adds and removes. */
async function optimizeCommit(table: DeltaTable, dir: string, options: { zOrderBy?: string[] } = {}) {
  const r = await table.optimize(options)
  assert.ok(r.committed)
  const actions = await commitActions(dir, r.version)
  return { adds: addsOf(actions), removes: removesOf(actions) }
}

/** Two sources A (ids 0..5, physical row 3 deleted) and B (ids 10..13), deletion vectors on. */
async function splitSourceTable(): Promise<{ dir: string; table: DeltaTable; a: AddFile; b: AddFile }> {
  const dir = await tableDir()
  const table = await createTable(
    dir,
    { schema: 'id long', properties: { 'delta.enableDeletionVectors': 'true' } },
    FORWARD,
  )
  await table.append(span(0, 6).map((i) => ({ id: BigInt(i) })))
  await table.append(span(10, 14).map((i) => ({ id: BigInt(i) })))
  await table.delete('id = 3')
  const files = await liveFiles(table)
  const a = files.find((f) => f.deletionVector !== undefined)!
  const b = files.find((f) => f.deletionVector === undefined)!
  return { dir, table, a, b }
}

describe('SCC: the composition capture of compaction (Case 4, write side)', () => {
  it('SCC-01 columnar path folds one run per source file across batches, in write order', async () => {
    // A's live rows come in two pieces around its deleted row (the "batches" A3, A2): they form
    // one run of 5, followed or preceded by B's run of 4.
    const { dir, table, a, b } = await splitSourceTable()
    const asRead = await sourcesAsRead(table, dir)
    assert.deepEqual(asRead.get(a.path), [0, 1, 2, 4, 5])
    const { adds, removes } = await optimizeCommit(table, dir)
    assert.equal(adds.length, 1)
    const runs = await assertCompositionReadsBack(dir, removes, adds[0]!, asRead)
    assert.deepEqual(
      runs.map((r) => [r.path === a.path ? 'A' : r.path === b.path ? 'B' : '?', r.live]).sort(),
      [
        ['A', 5],
        ['B', 4],
      ],
    )
    assert.equal(runs.find((r) => r.path === a.path)?.physical, 6)
    assert.deepEqual(await liveIds(table), [0, 1, 2, 4, 5, 10, 11, 12, 13])
  })

  it('SCC-02 interleaved source batches surface as separate runs (the mixed shape the gate rejects)', async () => {
    const { table, a, b } = await splitSourceTable()
    const bin = [a, b]
    const refs = await dataFileRefs(table.engine, bin)
    const output = {
      key: 'out.parquet',
      path: 'out.parquet',
      size: 1,
      partitionValues: {},
      stats: '{"numRecords":9}',
      numRecords: 9,
    }
    const report = (runs: readonly (readonly [number, number])[]): CompactionOutput => {
      let offset = 0
      return {
        file: output,
        sources: runs.map(([source, rowCount]) => {
          const entry = {
            key: refs[source]!.key,
            rowOffsetInTarget: offset,
            rowCount,
            physicalRowCount: source === 0 ? 6 : 4,
          }
          offset += rowCount
          return entry
        }),
      }
    }
    // Contiguous runs (A,5), (B,4) are trusted; the interleaved (A,3), (B,4), (A,2) are not.
    assert.notEqual(
      trustedCompositionTags(
        report([
          [0, 5],
          [1, 4],
        ]),
        bin,
        refs,
      ),
      undefined,
    )
    assert.equal(
      trustedCompositionTags(
        report([
          [0, 3],
          [1, 4],
          [0, 2],
        ]),
        bin,
        refs,
      ),
      undefined,
    )
    assert.equal(planCompositionTags(output.path, [a, b, a]), undefined, 'a source in two runs is refused')
  })

  it('SCC-03 supportsColumnar mirrors the child so the operator stays columnar-transparent', {
    skip: 'no counterpart: the DuckDB data plane has no columnar or row execution modes to mirror',
  }, () => {})

  it('SCC-04 compaction OPTIMIZE tags each multi-row-group source as one contiguous run', async () => {
    // DuckDB writes row groups of at least 2048 rows, so the sources are twice the record's
    // (6000 and 4000 rows, 3 and 2 row groups); another writer produces them, as Spark does in
    // the record, and the engine's two DuckDB threads are the hostile reader.
    const dir = await tableDir()
    const table = await createTable(
      dir,
      { schema: 'id long', properties: { 'delta.enableDeletionVectors': 'true' } },
      FORWARD,
    )
    const instance = await DuckDBInstance.create(':memory:', {
      autoinstall_known_extensions: 'false',
      autoload_known_extensions: 'false',
    })
    const con = await instance.connect()
    const adds: AddFile[] = []
    try {
      for (const [name, from, to] of [
        ['source-1.parquet', 0, 6000],
        ['source-2.parquet', 6000, 10_000],
      ] as const) {
        const file = join(dir, name)
        await con.run(
          `COPY (SELECT range::BIGINT AS id FROM range(${from}, ${to})) TO '${file}' (FORMAT parquet, ROW_GROUP_SIZE 2048)`,
        )
        const groups = await con.runAndReadAll(
          `SELECT count(DISTINCT row_group_id) FROM parquet_metadata('${file}')`,
        )
        assert.ok(Number(groups.getRows()[0]?.[0]) > 1, `${name} has several row groups`)
        adds.push({
          path: name,
          partitionValues: {},
          size: BigInt((await stat(file)).size),
          modificationTime: BigInt(Date.now()),
          dataChange: true,
          stats: JSON.stringify({
            numRecords: to - from,
            minValues: { id: from },
            maxValues: { id: to - 1 },
            nullCount: { id: 0 },
          }),
        })
      }
    } finally {
      con.closeSync()
      instance.closeSync()
    }
    await commitStaged(
      table,
      adds.map((add) => ({ add })),
      { operation: 'WRITE' },
    )
    const asRead = await sourcesAsRead(table, dir)
    const { adds: outputs, removes } = await optimizeCommit(table, dir)
    assert.equal(outputs.length, 1)
    assert.equal(removes.length, 2)
    for (const r of removes) assert.deepEqual(compositionOf(r)?.into, [outputs[0]!.path])
    const runs = await assertCompositionReadsBack(dir, removes, outputs[0]!, asRead)
    assert.equal(runs[0]!.offset, 0)
    assert.equal(runs[1]!.offset, runs[0]!.offset + runs[0]!.physical)
    assert.equal(runs[0]!.physical + runs[1]!.physical, 10_000)
    assert.deepEqual(runs.map((r) => r.physical).sort(), [4000, 6000])
    assert.deepEqual(await liveIds(table), span(0, 10_000))
  })

  it('SCC-05 a source without row-count stats fails the gate -> untagged tombstones (aborts as today)', async () => {
    const dir = await tableT(4000, 2, { withoutStats: true })
    const table = await openTable(dir, FORWARD)
    assert.ok((await liveFiles(table)).every((f) => f.stats === undefined))
    const { adds, removes } = await optimizeCommit(table, dir)
    assert.equal(adds.length, 1)
    assert.equal(removes.length, 2)
    assert.ok(
      removes.every((r) => r.tags?.compactedInto === undefined && r.tags?.compactionInfo === undefined),
    )
    assert.deepEqual(await liveIds(table), span(0, 4000))
  })

  it('SCC-06 repartition OPTIMIZE writes no composition tags (capture is coalesce-only)', {
    skip: 'no counterpart: OPTIMIZE has no repartition path, every bin is written from its sources in order',
  }, () => {})

  it('SCC-07 ZORDER OPTIMIZE writes no composition tags (rows are z-ordered, not contiguous)', async () => {
    const dir = await tableT(4000, 2)
    const table = await openTable(dir, FORWARD)
    const { adds, removes } = await optimizeCommit(table, dir, { zOrderBy: ['id'] })
    assert.ok(adds.length >= 1 && removes.length >= 1)
    assert.ok(removes.every((r) => compositionOf(r) === undefined && r.tags?.compactedInto === undefined))
    assert.deepEqual(await liveIds(table), span(0, 4000))
  })

  it('SCC-08 CLUSTER BY OPTIMIZE writes no composition tags (clustering permutes rows)', async () => {
    const dir = await tableDir()
    const table = await createTable(dir, {
      schema: 'id long, x int',
      clusterBy: ['x'],
      properties: { 'delta.enableDeletionVectors': 'true' },
    })
    for (let k = 0; k < 2; k++) {
      await table.append(span(k * 2000, (k + 1) * 2000).map((i) => ({ id: BigInt(i), x: (i * 37) % 101 })))
    }
    const { adds, removes } = await optimizeCommit(table, dir)
    assert.ok(adds.length >= 1 && removes.length === 2)
    assert.ok(removes.every((r) => compositionOf(r) === undefined && r.tags?.compactedInto === undefined))
    assert.ok(adds.every((a) => a.clusteringProvider !== undefined))
    assert.deepEqual(await liveIds(table), span(0, 4000))
  })
})
