/**
 * Suite OCR of scenarios.md (OptimizeConflictReconciliationSuite: Case 4a forward remap, Case 4b
 * reverse remap, the composition capture and its tag parser) through the real engine, on
 * T(300,3) with deletion vectors: files [0,100), [100,200), [200,300).
 *
 * The catalogue's arithmetic assumes the sources sit in the output in file order; OPTIMIZE here
 * orders a bin by size then path, so the checks read each source's offset from its tags and read
 * the output back instead of assuming the order.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { buildOptimize, type OptimizeOptions } from '../../../src/ops/optimize.js'
import type { AddFile, RemoveFile } from '../../../src/protocol/actions.js'
import { parseOptimizeSourceComposition } from '../../../src/protocol/composition-tags.js'
import { parseStats } from '../../../src/protocol/stats.js'
import { checkCompactionOffsets } from '../../../src/race/verify-compaction.js'
import { createLocalStore } from '../../../src/storage/index.js'
import type { DeltaTable } from '../../../src/table/delta-table.js'
import type { CommitResult } from '../../../src/txn/commit-result.js'
import {
  aborted,
  addsOf,
  assertCompositionReadsBack,
  assertReconciled,
  type Conflicts,
  commitActions,
  commitStaged,
  committed,
  compositionOf,
  createTable,
  dvCards,
  FLAG,
  flags,
  idsOf,
  liveFiles,
  liveIds,
  liveIdsInOrder,
  type Op,
  type Outcome,
  openTable,
  parquetFiles,
  physicalIds,
  preCommitHookStore,
  removesOf,
  run,
  s1,
  settle,
  sourcesAsRead,
  span,
  tableDir,
  tableT,
} from './harness.js'

const FORWARD = flags(FLAG.forward)
const REVERSE = flags(FLAG.reverse)
const ALL = span(0, 300)
const NO_COMPOSITION = /no usable composition/

const del =
  (id: number): Op =>
  (t) =>
    t.delete(`id = ${id}`)
const optimize =
  (options: OptimizeOptions = {}): Op =>
  (t) =>
    t.optimize(options)
const moveUp =
  (id: number): Op =>
  (t) =>
    t.update({ where: `id = ${id}`, set: { id: 'id + 1000' } })

/** T(300,3) (or its partitioned variant) with two handles carrying each side's flags. */
async function base(
  loserFlags: Conflicts,
  winnerFlags: Conflicts,
  options: { partitioned?: boolean; withoutStats?: boolean } = {},
): Promise<{ dir: string; loser: DeltaTable; winner: DeltaTable }> {
  const dir = await tableT(300, 3, {
    ...(options.partitioned ? { partition: { column: 'part', value: 0 } } : {}),
    ...(options.withoutStats ? { withoutStats: true } : {}),
  })
  const loser = await openTable(dir, loserFlags)
  const winner = await openTable(dir, winnerFlags)
  assert.equal((await liveFiles(loser)).length, 3)
  return { dir, loser, winner }
}

/** The live file holding `id` (found from its stats, or from its rows when it has none). */
async function fileHolding(table: DeltaTable, dir: string, id: number): Promise<AddFile> {
  for (const f of await liveFiles(table)) {
    const stats = parseStats(f.stats)
    const min = stats?.minValues?.id
    if (min !== undefined) {
      if (Number(min) <= id && id <= Number(stats?.maxValues?.id)) return f
    } else if ((await physicalIds(dir, f.path)).includes(id)) return f
  }
  return assert.fail(`no live file holds id ${id}`)
}

/**
 * Schedule S3: OPTIMIZE (the loser) runs through `DeltaTable.optimize`, whose own retry is part
 * of the schedule; the winner commits just before the loser's first commit attempt.
 */
async function s3(
  dir: string,
  loserFlags: Conflicts,
  options: OptimizeOptions,
  winner: () => Promise<CommitResult>,
): Promise<{ readonly winner: CommitResult | undefined; readonly loser: Outcome }> {
  let w: CommitResult | undefined
  const store = preCommitHookStore(createLocalStore(dir), async () => {
    w = await winner()
  })
  const loser = await openTable(dir, loserFlags, store)
  const outcome = await settle(loser.optimize(options))
  return { winner: w, loser: outcome }
}

/** An OPTIMIZE whose tombstones carry no composition tags, as an engine without the capture writes it. */
async function untaggedOptimize(table: DeltaTable): Promise<CommitResult> {
  const staging = await table.begin()
  const op = await staging.stage((ctx) => buildOptimize(ctx, {}))
  const actions = op.actions.map((a) => {
    if (!('remove' in a)) return a
    const { tags: _tags, ...rest } = a.remove
    return { remove: rest }
  })
  assert.ok(actions.some((a) => 'remove' in a))
  return commitStaged(table, actions, { operation: 'OPTIMIZE', changesData: false })
}

describe('OCR: forward remap, OPTIMIZE loses to DML (Case 4a)', () => {
  const forward: readonly {
    readonly id: string
    readonly name: string
    readonly before?: number
    readonly winner: Op
    readonly winnerId: number
    readonly winnerOperation: string
    readonly ids: readonly number[]
  }[] = [
    {
      id: 'OCR-01',
      name: 'compaction OPTIMIZE (loser) reconciles a concurrent DELETE by remapping the DV',
      winner: del(150),
      winnerId: 150,
      winnerOperation: 'DELETE',
      ids: idsOf(ALL, [150]),
    },
    {
      id: 'OCR-02',
      name: 'compaction OPTIMIZE (loser) reconciles a DELETE when the source already has a DV',
      before: 100,
      winner: del(150),
      winnerId: 150,
      winnerOperation: 'DELETE',
      ids: idsOf(ALL, [100, 150]),
    },
    {
      id: 'OCR-03',
      name: 'reconciliation remaps a delete to a non-DV file in a bin that also holds a DV file',
      before: 100,
      winner: del(250),
      winnerId: 250,
      winnerOperation: 'DELETE',
      ids: idsOf(ALL, [100, 250]),
    },
    {
      id: 'OCR-05',
      name: 'compaction OPTIMIZE (loser) reconciles a concurrent UPDATE by remapping the DV',
      winner: moveUp(150),
      winnerId: 150,
      winnerOperation: 'UPDATE',
      ids: idsOf(ALL, [150], [1150]),
    },
  ]
  for (const record of forward) {
    it(`${record.id} ${record.name}`, async () => {
      const { dir, loser, winner } = await base(FORWARD, FORWARD)
      if (record.before !== undefined) {
        await run(winner, del(record.before))
        assert.deepEqual(await dvCards(winner), [1])
      }
      const touched = await fileHolding(winner, dir, record.winnerId)
      const asRead = await sourcesAsRead(loser, dir)
      const result = await s1([loser, optimize()], [winner, record.winner])
      const r = committed(result.loser)
      assertReconciled(r, [
        {
          kind: 'case4a-forward-remap',
          winnerVersion: result.winner.version,
          winnerOperation: record.winnerOperation,
          files: [touched.path],
          rows: 1,
        },
      ])
      assert.deepEqual(await liveIds(loser), record.ids)
      // The compacted output carries the remapped DV (a plain retry would leave none); an
      // UPDATE winner's image file has no DV.
      assert.deepEqual(await dvCards(loser), [1])
      const live = await liveFiles(loser)
      assert.equal(live.length, record.winnerOperation === 'UPDATE' ? 2 : 1)

      const actions = await commitActions(dir, r.version)
      const removes = removesOf(actions)
      const [output] = addsOf(actions)
      assert.ok(output)
      assert.equal(removes.length, 3)
      // F2: the reconciled commit does not mix dataChange values.
      assert.ok(removes.every((x) => !x.dataChange) && addsOf(actions).every((x) => !x.dataChange))
      // The remapped source's tombstone removes the winner's post-image; the others keep their tags.
      const remapped = removes.find((x) => x.path === touched.path)!
      assert.equal(compositionOf(remapped), undefined)
      const earlier =
        record.before !== undefined && Math.floor(record.before / 100) === Math.floor(record.winnerId / 100)
      assert.equal(Number(remapped.deletionVector?.cardinality), earlier ? 2 : 1)
      const others = removes.filter((x) => x.path !== touched.path)
      for (const x of others) assert.deepEqual(compositionOf(x)?.into, [output.path])
      // Every output row except the winner's is a live row of the sources as read.
      const expected = [...asRead.values()].flat().filter((id) => id !== record.winnerId)
      assert.deepEqual(
        (await liveIdsInOrder(loser, dir, output)).sort((a, b) => a - b),
        expected.sort((a, b) => a - b),
      )
    })
  }

  it('OCR-07 reclustering (ZORDER) OPTIMIZE loser is not reconciled and aborts', async () => {
    const { dir } = await base(FORWARD, 'none')
    const inline = await openTable(dir, 'none')
    const result = await s3(dir, FORWARD, { zOrderBy: ['id'] }, () => run(inline, del(150)))
    assert.ok(result.winner?.committed)
    aborted(result.loser, { winnerVersion: result.winner.version, refused: NO_COMPOSITION })
    assert.deepEqual(await liveIds(inline), idsOf(ALL, [150]))
    // The retry ran and gave up: the outputs it wrote were deleted again.
    assert.equal((await parquetFiles(dir)).length, 3)
  })

  it('OCR-08 an OPTIMIZE loser whose capture fails the trust gate (no row counts) is not reconciled and aborts', async () => {
    // The repartition path has no counterpart here: every compaction reads its sources in order.
    // What the record protects is "no trustworthy capture, no tag, no reconcile"; sources
    // without row-count statistics are this engine's way to fail the capture's gate.
    const { dir } = await base(FORWARD, FORWARD, { withoutStats: true })
    const inline = await openTable(dir, FORWARD)
    const result = await s3(dir, FORWARD, {}, () => run(inline, del(150)))
    assert.ok(result.winner?.committed)
    aborted(result.loser, { winnerVersion: result.winner.version, refused: NO_COMPOSITION })
    assert.deepEqual(await liveIds(inline), idsOf(ALL, [150]))
    assert.equal((await parquetFiles(dir)).length, 3)
  })

  it('a compaction loser whose source a winner deleted whole remaps every remaining row of it', async () => {
    // Not a catalogue record (the reference implementation aborts here). Every flag on, so the
    // reverse phase also looks at the pair.
    const { dir, loser, winner } = await base('all', 'all')
    const middle = await fileHolding(loser, dir, 150)
    const result = await s1([loser, optimize()], [winner, (t) => t.delete('id >= 100 AND id < 200')])
    assert.ok(!addsOf(await commitActions(dir, result.winner.version)).some((a) => a.path === middle.path))
    const r = committed(result.loser)
    assertReconciled(r, [
      {
        kind: 'case4a-forward-remap',
        winnerVersion: result.winner.version,
        winnerOperation: 'DELETE',
        files: [middle.path],
        rows: 100,
      },
    ])
    assert.deepEqual(await liveIds(loser), idsOf(ALL, span(100, 200)))
    assert.equal((await liveFiles(loser)).length, 1)
    assert.deepEqual(await dvCards(loser), [100])
  })

  it('a DML that deletes a compacted source whole and loses to the OPTIMIZE is remapped', async () => {
    const { dir, loser, winner } = await base('all', 'all')
    const middle = await fileHolding(loser, dir, 150)
    const result = await s1(
      [loser, (t) => t.delete('id >= 100 AND id < 200 OR id = 5')],
      [winner, optimize()],
    )
    const r = committed(result.loser)
    assertReconciled(r, [
      {
        kind: 'case4b-reverse-remap',
        winnerVersion: result.winner.version,
        winnerOperation: 'OPTIMIZE',
        rows: 101,
      },
    ])
    assert.ok(r.reconciliations[0]?.detail.files?.includes(middle.path))
    assert.deepEqual(await liveIds(loser), idsOf(ALL, [...span(100, 200), 5]))
    assert.equal((await liveFiles(loser)).length, 1)
    assert.deepEqual(await dvCards(loser), [101])
  })

  it('successive winners on one source compose, and a DML losing to that OPTIMIZE is remapped through the re-pointed tombstone', async () => {
    // Replaces design decision 4 (abort the second winner by rule). The middle file has a
    // read-time DV ({0..4}), so a remap that ranked rows against a winner's DV instead of the
    // read-time one would delete the wrong ids.
    const { dir, loser, winner } = await base('all', 'all')
    await winner.delete('id >= 100 AND id < 105')
    const middle = await fileHolding(loser, dir, 150)
    const first = await liveFiles(loser)
    const txn = await loser.begin()
    await txn.optimize()
    const w1 = await winner.delete('id = 150')
    const w2 = await winner.delete('id = 50 OR id = 160')
    const late = await winner.begin()
    await late.delete('id = 170')
    const r = committed(await settle(txn.commit()))
    const low = first.find((f) => f.path !== middle.path && Number(parseStats(f.stats)?.minValues?.id) === 0)!
    assertReconciled(r, [
      {
        kind: 'case4a-forward-remap',
        winnerVersion: w1.version,
        winnerOperation: 'DELETE',
        files: [middle.path],
        rows: 1,
      },
      {
        kind: 'case4a-forward-remap',
        winnerVersion: w2.version,
        winnerOperation: 'DELETE',
        files: [middle.path, low.path],
        rows: 2,
      },
    ])
    const tombstones = removesOf(await commitActions(dir, r.version))
    const output = addsOf(await commitActions(dir, r.version))[0]!
    const repointed = tombstones.find((t) => t.path === middle.path)!
    assert.equal(
      compositionOf(repointed),
      undefined,
      'the standard tags are gone from the re-pointed tombstone',
    )
    const run = parseOptimizeSourceComposition(repointed, new Set([output.path]))
    assert.equal(run?.liveCount, 95)
    assert.equal(Number(run?.readDeletionVector?.cardinality), 5)
    assert.equal(Number(repointed.deletionVector?.cardinality), 7)
    const offsets = await checkCompactionOffsets(loser, [Number(r.version)])
    assert.deepEqual(offsets, { sources: 3 })

    const l = committed(await settle(late.commit()))
    assertReconciled(l, [
      {
        kind: 'case4b-reverse-remap',
        winnerVersion: r.version,
        winnerOperation: 'OPTIMIZE',
        files: [middle.path],
        rows: 1,
      },
    ])
    assert.deepEqual(await liveIds(loser), idsOf(ALL, [...span(100, 105), 50, 150, 160, 170]))
    assert.equal((await liveFiles(loser)).length, 1)
    assert.deepEqual(await dvCards(loser), [4])
  })

  it('OCR-11 partitioned OPTIMIZE capture reports the partition ordering (no sort above the capture)', async () => {
    // No physical plan here: the invariant is that the recorded order is the physical write order.
    const { dir, loser } = await base(FORWARD, FORWARD, { partitioned: true })
    const asRead = await sourcesAsRead(loser, dir)
    const r = await loser.optimize()
    const actions = await commitActions(dir, r.version)
    const outputs = addsOf(actions)
    assert.equal(outputs.length, 1)
    assert.deepEqual(outputs[0]!.partitionValues, { part: '0' })
    assert.equal(r.metrics.numTaggedSources, 3)
    await assertCompositionReadsBack(dir, removesOf(actions), outputs[0]!, asRead)
  })
})

describe('OCR: reverse remap, DML loses to OPTIMIZE (Case 4b)', () => {
  const reverse: readonly {
    readonly id: string
    readonly name: string
    readonly loser: Op
    readonly loserOperation: string
    readonly ids: readonly number[]
  }[] = [
    {
      id: 'OCR-12',
      name: 'reverse: a losing DELETE remaps its DV onto the winning compaction output',
      loser: del(150),
      loserOperation: 'DELETE',
      ids: idsOf(ALL, [150]),
    },
    {
      id: 'OCR-14',
      name: 'reverse: a losing UPDATE remaps its DV onto the winning compaction output',
      loser: moveUp(150),
      loserOperation: 'UPDATE',
      ids: idsOf(ALL, [150], [1150]),
    },
  ]
  for (const record of reverse) {
    it(`${record.id} ${record.name}`, async () => {
      const { dir, loser, winner } = await base(REVERSE, REVERSE)
      const touched = await fileHolding(loser, dir, 150)
      const asRead = await sourcesAsRead(loser, dir)
      const result = await s1([loser, record.loser], [winner, optimize()])
      const winnerActions = await commitActions(dir, result.winner.version)
      const [output] = addsOf(winnerActions)
      assert.ok(output)
      await assertCompositionReadsBack(dir, removesOf(winnerActions), output, asRead)
      const r = committed(result.loser)
      assertReconciled(r, [
        {
          kind: 'case4b-reverse-remap',
          winnerVersion: result.winner.version,
          winnerOperation: 'OPTIMIZE',
          files: [touched.path],
          rows: 1,
        },
      ])
      assert.deepEqual(await liveIds(loser), record.ids)
      assert.deepEqual(await dvCards(loser), [1])
      assert.equal((await liveFiles(loser)).length, record.loserOperation === 'UPDATE' ? 2 : 1)
      // The loser no longer touches the compacted source: it removes and re-adds the output.
      const mine = await commitActions(dir, r.version)
      assert.deepEqual(
        removesOf(mine).map((x) => x.path),
        [output.path],
      )
      const reAdded = addsOf(mine).find((a) => a.path === output.path)
      assert.equal(Number(reAdded?.deletionVector?.cardinality), 1)
      assert.ok(!addsOf(mine).some((a) => a.path === touched.path))
    })
  }

  it('OCR-09 reverse direction OFF: a losing DELETE against a compacted file aborts', async () => {
    const { dir, loser, winner } = await base(FORWARD, FORWARD)
    const result = await s1([loser, del(150)], [winner, optimize()])
    const tagged = removesOf(await commitActions(dir, result.winner.version)).filter((x) => compositionOf(x))
    assert.equal(tagged.length, 3, "the winner's tags are present")
    aborted(result.loser, {
      winnerVersion: result.winner.version,
      winnerOperation: 'OPTIMIZE',
      refused: 'none',
    })
    assert.deepEqual(await liveIds(loser), ALL)
    assert.equal((await liveFiles(loser)).length, 1)
  })

  it('OCR-15 reverse: aborts when the winning OPTIMIZE recorded no composition', async () => {
    // OPTIMIZE here always tags a trustworthy capture (design decision 5), so the flag-less
    // winner of the record is an OPTIMIZE committed without tags, as an engine without the
    // capture writes it.
    const { loser, winner } = await base(REVERSE, 'none')
    const txn = await loser.begin()
    await del(150)(txn)
    const w = await untaggedOptimize(winner)
    aborted(await settle(txn.commit()), {
      winnerVersion: w.version,
      winnerOperation: 'OPTIMIZE',
      refused: NO_COMPOSITION,
    })
    assert.deepEqual(await liveIds(loser), ALL)
    assert.equal((await liveFiles(loser)).length, 1)
  })

  it('OCR-16 reverse: aborts against a reclustering (ZORDER) winner', async () => {
    const { loser, winner } = await base(REVERSE, REVERSE)
    const result = await s1([loser, del(150)], [winner, optimize({ zOrderBy: ['id'] })])
    aborted(result.loser, { winnerVersion: result.winner.version, refused: NO_COMPOSITION })
    assert.deepEqual(await liveIds(loser), ALL)
  })
})

describe('OCR: the composition tag parser on real tombstones', () => {
  /** A real OPTIMIZE of T(300,3) whose middle file lost ids 100..109 first. */
  async function compacted(): Promise<{ output: AddFile; removes: RemoveFile[]; middle: string }> {
    const { dir, loser } = await base(FORWARD, FORWARD)
    await loser.delete('id >= 100 AND id < 110')
    const middle = (await fileHolding(loser, dir, 150)).path
    const r = await loser.optimize()
    const actions = await commitActions(dir, r.version)
    return { output: addsOf(actions)[0]!, removes: removesOf(actions), middle }
  }

  it('OCR-18 composition tag: parses a single-run compaction entry', async () => {
    const { output, removes, middle } = await compacted()
    const parsed = removes
      .filter((x) => x.path !== middle)
      .map((x) => parseOptimizeSourceComposition(x, new Set([output.path])))
    assert.equal(parsed.length, 2)
    for (const p of parsed) {
      assert.equal(p?.outputPath, output.path)
      assert.equal(p?.liveCount, 100)
    }
  })

  it('OCR-19 composition tag: derives liveCount from the physical count minus the read-time DV', async () => {
    const { output, removes, middle } = await compacted()
    const tombstone = removes.find((x) => x.path === middle)!
    assert.equal(compositionOf(tombstone)?.physical, 100)
    assert.equal(Number(tombstone.deletionVector?.cardinality), 10)
    const parsed = parseOptimizeSourceComposition(tombstone, new Set([output.path]))
    assert.equal(parsed?.liveCount, 90)
    assert.equal(parsed?.outputStart, compositionOf(tombstone)?.offset)
  })

  it('OCR-20 composition tag: tolerates unknown fields in a compaction entry (schema drift)', async () => {
    const { output, removes } = await compacted()
    const x = removes[0]!
    const c = compositionOf(x)!
    const drifted: RemoveFile = {
      ...x,
      tags: {
        ...x.tags,
        compactionInfo: `[{"rowOffsetInTarget":${c.offset},"sourceNumPhysicalRecords":${c.physical},"sourceDeletionVector":null}]`,
      },
    }
    assert.deepEqual(
      parseOptimizeSourceComposition(drifted, new Set([output.path])),
      parseOptimizeSourceComposition(x, new Set([output.path])),
    )
  })

  it('OCR-21 composition tag: falls back (None) on shapes the contiguous offset remap cannot model', async () => {
    const { output, removes } = await compacted()
    const x = removes[0]!
    const outputs = new Set([output.path])
    const shapes: readonly [string, RemoveFile, ReadonlySet<string>][] = [
      ['(i) the output is not in the commit', x, new Set(['elsewhere.parquet'])],
      [
        '(ii) two entries: the source is split across runs',
        {
          ...x,
          tags: {
            ...x.tags,
            compactionInfo:
              '[{"rowOffsetInTarget":0,"sourceNumPhysicalRecords":40},{"rowOffsetInTarget":40,"sourceNumPhysicalRecords":50}]',
          },
        },
        outputs,
      ],
      [
        '(iii) compactionInfo is not JSON',
        { ...x, tags: { ...x.tags, compactionInfo: 'not json' } },
        outputs,
      ],
      ['(iv) no tags at all', { ...x, tags: {} }, outputs],
    ]
    assert.notEqual(parseOptimizeSourceComposition(x, outputs), undefined)
    for (const [what, remove, allowed] of shapes) {
      assert.equal(parseOptimizeSourceComposition(remove, allowed), undefined, what)
    }
  })
})

describe('OCR: a Z-order or clustering OPTIMIZE loses to DML (Case 5a)', () => {
  const ZORDER_FORWARD = flags('optimize.zorder.conflictReconciliation.enabled')

  /** T(300,3) clustered by id: the same three files, on a table with the clustering feature. */
  async function clusteredT(): Promise<string> {
    const dir = await tableDir()
    const table = await createTable(dir, {
      schema: 'id long',
      clusterBy: ['id'],
      properties: { 'delta.enableDeletionVectors': 'true' },
    })
    for (let k = 0; k < 3; k++)
      await table.append(span(k * 100, (k + 1) * 100).map((i) => ({ id: BigInt(i) })))
    await table.close()
    return dir
  }

  const records: readonly {
    readonly id: string
    readonly name: string
    readonly clustered: boolean
    readonly winner: Op
    readonly winnerOperation: string
    readonly ids: readonly number[]
  }[] = [
    {
      id: 'OCR-5A-01',
      name: 'Z-order OPTIMIZE (loser) reconciles a concurrent DELETE through its permutation',
      clustered: false,
      winner: del(150),
      winnerOperation: 'DELETE',
      ids: idsOf(ALL, [150]),
    },
    {
      id: 'OCR-5A-02',
      name: 'Z-order OPTIMIZE (loser) reconciles a concurrent UPDATE (the old row is masked, the image stays)',
      clustered: false,
      winner: moveUp(150),
      winnerOperation: 'UPDATE',
      ids: idsOf(ALL, [150], [1150]),
    },
    {
      id: 'OCR-5A-03',
      name: 'clustering OPTIMIZE (loser) of a clustered table reconciles a concurrent DELETE',
      clustered: true,
      winner: del(250),
      winnerOperation: 'DELETE',
      ids: idsOf(ALL, [250]),
    },
  ]
  for (const record of records) {
    it(`${record.id} ${record.name}`, async () => {
      const dir = record.clustered ? await clusteredT() : await tableT(300, 3)
      const loser = await openTable(dir, ZORDER_FORWARD)
      const winner = await openTable(dir, ZORDER_FORWARD)
      const result = await s1(
        [loser, optimize(record.clustered ? {} : { zOrderBy: ['id'] })],
        [winner, record.winner],
      )
      const r = committed(result.loser)
      assertReconciled(r, [
        {
          kind: 'case5a-zorder-forward',
          winnerVersion: result.winner.version,
          winnerOperation: record.winnerOperation,
          rows: 1,
        },
      ])
      assert.deepEqual(await liveIds(loser), record.ids)
      const actions = await commitActions(dir, r.version)
      const info = actions.flatMap((a) => ('commitInfo' in a ? [a.commitInfo] : []))[0]
      assert.equal(
        info?.operationParameters?.[record.clustered ? 'clusterBy' : 'zOrderBy'],
        '["id"]',
        'the commit says it permuted rows',
      )
      // The outputs hide exactly the one row; no tombstone carries Case 4 offsets (S11).
      const adds = addsOf(actions)
      assert.equal(
        adds.reduce((n, a) => n + Number(a.deletionVector?.cardinality ?? 0n), 0),
        1,
      )
      assert.ok(removesOf(actions).every((x) => compositionOf(x) === undefined))
      if (record.clustered) assert.ok(adds.every((a) => a.clusteringProvider === 'delta-rlc'))
    })
  }

  it('OCR-5A-04 without the flag, the Z-order OPTIMIZE (loser) aborts on the DELETE', async () => {
    const dir = await tableT(300, 3)
    const loser = await openTable(dir, FORWARD)
    const winner = await openTable(dir, FORWARD)
    const result = await s1([loser, optimize({ zOrderBy: ['id'] })], [winner, del(150)])
    aborted(result.loser, { winnerVersion: result.winner.version, winnerOperation: 'DELETE' })
    assert.deepEqual(await liveIds(loser), idsOf(ALL, [150]))
  })
})
