/**
 * The change sketch a MERGE writes into its commitInfo (design beyond-rlc 8.4): written only when
 * its source keys provably hold the key of every row it changes, with the key columns by physical
 * name. Each test runs a MERGE on a real table and reads the commit file it wrote.
 */
import assert from 'node:assert/strict'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { encodeKeyTuple } from '../../src/conflict/case6-merge-read-set.js'
import { CHANGE_SKETCH_FORMAT, MAX_SKETCH_KEYS } from '../../src/conflict/change-sketch.js'
import type { MergeOptions } from '../../src/ops/merge-clauses.js'
import { DeltaTable } from '../../src/table/delta-table.js'

type Row = Record<string, unknown>

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

const UPSERT: MergeOptions = {
  on: 'target.id = source.id',
  whenMatched: [{ update: { value: 'source.value' } }],
  whenNotMatched: [{ insert: '*' }],
}

const source = (ids: readonly number[]): Row[] =>
  ids.map((id) => ({ id: BigInt(id), other: BigInt(id + 500), value: 9 }))

interface Setup {
  readonly properties?: Readonly<Record<string, string>>
  readonly conflicts?: Readonly<Record<string, boolean>>
}

/** A table of ids 0..99 in two files; returns it and its log directory. */
async function table(setup: Setup = {}): Promise<{ t: DeltaTable; log: string }> {
  const root = await mkdtemp(join(tmpdir(), 'delta-rlc-sketch-'))
  roots.push(root)
  const t = await DeltaTable.create(
    join(root, 't'),
    {
      schema: 'id long, other long, value int',
      properties: { 'delta.enableDeletionVectors': 'true', ...setup.properties },
    },
    { autoCheckpoint: false, conflicts: setup.conflicts ?? { 'merge.rowLevelConflicts.enabled': true } },
  )
  for (const [from, to] of [
    [0, 50],
    [50, 100],
  ] as const) {
    await t.append(
      Array.from({ length: to - from }, (_, i) => ({ id: BigInt(from + i), other: 0n, value: 0 })),
    )
  }
  return { t, log: join(root, 't', '_delta_log') }
}

/** The newest commit's commitInfo. */
async function lastCommitInfo(log: string): Promise<Record<string, unknown>> {
  const newest = (await readdir(log))
    .filter((n) => /^\d{20}\.json$/.test(n))
    .sort()
    .at(-1)!
  for (const line of (await readFile(join(log, newest), 'utf8')).split('\n')) {
    if (line.startsWith('{"commitInfo"'))
      return (JSON.parse(line) as { commitInfo: Record<string, unknown> }).commitInfo
  }
  throw new Error(`no commitInfo in ${newest}`)
}

async function sketchAfter(
  run: (t: DeltaTable) => Promise<unknown>,
  setup?: Setup,
): Promise<Record<string, unknown> | undefined> {
  const { t, log } = await table(setup)
  await run(t)
  return (await lastCommitInfo(log)).changeSketch as Record<string, unknown> | undefined
}

const keysOf = (ids: readonly number[]): string[] =>
  ids.map((id) => encodeKeyTuple([BigInt(id)], [{ name: 'id', type: 'long' }]) as string).sort()

describe('the change sketch of a MERGE', () => {
  it('an upsert writes its source keys: those it updated and those it inserted', async () => {
    const sketch = await sketchAfter((t) => t.merge(source([5, 60, 1000]), UPSERT))
    assert.ok(sketch !== undefined)
    assert.equal(sketch.format, CHANGE_SKETCH_FORMAT)
    assert.deepEqual(sketch.columns, [{ name: 'id', type: 'long' }])
    assert.deepEqual([...(sketch.keys as string[])].sort(), keysOf([5, 60, 1000]))
  })

  it('names the key columns by their physical names under column mapping', async () => {
    const { t, log } = await table({ properties: { 'delta.columnMapping.mode': 'name' } })
    await t.merge(source([5]), UPSERT)
    const sketch = (await lastCommitInfo(log)).changeSketch as { columns: { name: string }[] }
    const schema = JSON.parse((await t.snapshot()).metadata.schemaString!) as {
      fields: { name: string; metadata: Record<string, string> }[]
    }
    const id = schema.fields.find((f) => f.name === 'id')!
    assert.match(sketch.columns[0]!.name, /^col-/)
    assert.equal(sketch.columns[0]!.name, id.metadata['delta.columnMapping.physicalName'])
  })

  it('a key update to the key itself keeps the sketch; to anything else drops it', async () => {
    const same = await sketchAfter((t) =>
      t.merge(source([5]), {
        on: 'target.id = source.id',
        whenMatched: [{ update: { id: 'source.id', value: '1' } }],
      }),
    )
    assert.ok(same !== undefined)
    const moved = await sketchAfter((t) =>
      t.merge(source([5]), {
        on: 'target.id = source.id',
        whenMatched: [{ update: { id: 'source.id + 1000' } }],
      }),
    )
    assert.equal(moved, undefined)
  })

  it('an insert whose key is not the source key drops it', async () => {
    const sketch = await sketchAfter((t) =>
      t.merge(source([1000]), {
        on: 'target.id = source.id',
        whenNotMatched: [{ insert: { id: 'source.other', value: 'source.value' } }],
      }),
    )
    assert.equal(sketch, undefined)
  })

  it('a NOT MATCHED BY SOURCE clause drops it: the rows it changes have keys in no source row', async () => {
    const sketch = await sketchAfter((t) =>
      t.merge(source([5]), {
        on: 'target.id = source.id',
        whenMatched: [{ update: { value: 'source.value' } }],
        whenNotMatchedBySource: [{ if: 'target.id = 99', delete: true }],
      }),
    )
    assert.equal(sketch, undefined)
  })

  it('copy-on-write drops it (copied rows are not in the source); a file removed whole does not', async () => {
    const cow = { properties: { 'delta.enableDeletionVectors': 'false' } }
    assert.equal(await sketchAfter((t) => t.merge(source([5]), UPSERT), cow), undefined)
    const whole = await sketchAfter(
      (t) =>
        t.merge(source(Array.from({ length: 50 }, (_, i) => i)), {
          on: 'target.id = source.id',
          whenMatched: [{ delete: true }],
        }),
      cow,
    )
    assert.ok(whole !== undefined, 'every row of the file was matched: nothing was copied')
  })

  it(`holds at most ${MAX_SKETCH_KEYS} keys`, async () => {
    const ids = (n: number) => Array.from({ length: n }, (_, i) => 10_000 + i)
    const full = await sketchAfter((t) => t.merge(source(ids(MAX_SKETCH_KEYS)), UPSERT))
    assert.equal((full?.keys as string[] | undefined)?.length, MAX_SKETCH_KEYS)
    assert.equal(await sketchAfter((t) => t.merge(source(ids(MAX_SKETCH_KEYS + 1)), UPSERT)), undefined)
  })

  it('goes with an application transaction marker, and is left out when Case 6 is off', async () => {
    const marked = await sketchAfter(async (t) => {
      const tx = await t.begin()
      await tx.merge(source([5]), UPSERT)
      tx.setTransaction('app', 1)
      await tx.commit()
    })
    assert.ok(marked !== undefined, 'a txn marker changes no row')
    assert.equal(await sketchAfter((t) => t.merge(source([5]), UPSERT), { conflicts: {} }), undefined)
  })
})
