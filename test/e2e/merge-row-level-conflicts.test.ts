/**
 * Case 6 (design beyond-rlc 8.8, C6-01 .. C6-13): a MERGE that loses the race to another commit
 * is checked row by row. Each test begins the loser's transaction and stages its MERGE, commits
 * the winner on the same snapshot, then commits the loser, and asserts the outcome and the
 * table's final rows.
 */
import assert from 'node:assert/strict'
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { isDeltaError } from '../../src/errors/index.js'
import type { MergeOptions } from '../../src/ops/merge-clauses.js'
import { DeltaTable } from '../../src/table/delta-table.js'

type Row = Record<string, unknown>

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

const CASE6 = { 'merge.rowLevelConflicts.enabled': true } as const
const SCHEMA = 'id long, region string, value int'

interface RaceSetup {
  readonly schema?: string
  readonly properties?: Readonly<Record<string, string>>
  readonly conflicts?: Readonly<Record<string, boolean | number>> | 'all'
  /** Base rows, one append (so one file) per batch. */
  readonly batches: readonly (readonly Row[])[]
  readonly loser: (tx: Awaited<ReturnType<DeltaTable['begin']>>) => Promise<unknown>
  readonly winner: (table: DeltaTable) => Promise<unknown>
  readonly isolationLevel?: 'Serializable' | 'WriteSerializable'
  /**
   * What becomes of the change sketch in the winner's `commitInfo` once it committed: kept,
   * removed (a writer that writes none), or replaced by a malformed one.
   */
  readonly winnerSketch?: SketchVariant
}

type SketchVariant = 'present' | 'absent' | 'other format' | 'malformed keys' | 'not an object'

interface RaceOutcome {
  /** 'committed', or the loser's error code. */
  readonly outcome: string
  readonly message: string
  readonly kinds: readonly string[]
  /** Per reconciliation, whether the winner's change sketch decided it. */
  readonly bySketch: readonly boolean[]
  readonly rows: Row[]
}

async function race(setup: RaceSetup): Promise<RaceOutcome> {
  const root = await mkdtemp(join(tmpdir(), 'delta-rlc-case6-'))
  roots.push(root)
  const table = await DeltaTable.create(
    join(root, 't'),
    { schema: setup.schema ?? SCHEMA, properties: { ...setup.properties } },
    { autoCheckpoint: false, conflicts: setup.conflicts ?? CASE6 },
  )
  for (const batch of setup.batches) await table.append([...batch])
  const tx = await table.begin(
    setup.isolationLevel === undefined ? {} : { isolationLevel: setup.isolationLevel },
  )
  await setup.loser(tx)
  await setup.winner(table)
  if (setup.winnerSketch !== undefined) await rewriteSketch(join(root, 't'), setup.winnerSketch)
  let outcome = 'committed'
  let message = ''
  let kinds: readonly string[] = []
  let bySketch: readonly boolean[] = []
  try {
    const result = await tx.commit()
    kinds = result.reconciliations.map((r) => r.kind)
    bySketch = result.reconciliations.map((r) => r.detail.changeSketch === true)
  } catch (err) {
    if (!isDeltaError(err)) throw err
    outcome = err.code
    message = err.message
  }
  return { outcome, message, kinds, bySketch, rows: await table.scan().toArray() }
}

/** Rewrites the newest commit's `commitInfo.changeSketch` as another writer could have left it. */
async function rewriteSketch(tablePath: string, variant: SketchVariant): Promise<void> {
  const log = join(tablePath, '_delta_log')
  const newest = (await readdir(log))
    .filter((n) => /^\d{20}\.json$/.test(n))
    .sort()
    .at(-1)!
  const lines = (await readFile(join(log, newest), 'utf8')).split('\n').filter((l) => l !== '')
  const out = lines.map((line) => {
    const action = JSON.parse(line) as { commitInfo?: Record<string, unknown> }
    const info = action.commitInfo
    if (info === undefined) return line
    assert.ok(info.changeSketch !== undefined, `the winner (${info.operation}) wrote a change sketch`)
    const sketch = info.changeSketch as Record<string, unknown>
    if (variant === 'absent') delete info.changeSketch
    else if (variant === 'other format') info.changeSketch = { ...sketch, format: 'delta-rlc.merge-keys/99' }
    else if (variant === 'malformed keys') info.changeSketch = { ...sketch, keys: [1, 2] }
    else if (variant === 'not an object') info.changeSketch = 'keys'
    return JSON.stringify(action)
  })
  await writeFile(join(log, newest), `${out.join('\n')}\n`)
}

const base = (from: number, to: number, region = 'US'): Row[] =>
  Array.from({ length: to - from }, (_, i) => ({ id: BigInt(from + i), region, value: 0 }))

const TWO_FILES = [base(0, 50), base(50, 100)]

function upsert(
  keys: readonly (number | bigint | null)[],
  value: number,
  region = 'US',
): [Row[], MergeOptions] {
  return [
    keys.map((k) => ({ id: typeof k === 'number' ? BigInt(k) : k, region, value })),
    {
      on: 'target.id = source.id',
      whenMatched: [{ update: { value: 'source.value' } }],
      whenNotMatched: [{ insert: '*' }],
    },
  ]
}

/** Rows by id (the id as text); a repeated id keeps every row. */
function byId(rows: readonly Row[]): Map<string, Row[]> {
  const out = new Map<string, Row[]>()
  for (const r of rows) {
    const k = String(r.id)
    out.set(k, [...(out.get(k) ?? []), r])
  }
  return out
}

function valueAt(rows: readonly Row[], id: number | bigint): unknown {
  const hits = byId(rows).get(String(id)) ?? []
  assert.equal(hits.length, 1, `exactly one row with id ${id}`)
  return hits[0]!.value
}

describe('Case 6: MERGE against MERGE at row level', () => {
  for (const [dv, rowTracking] of [
    [true, false],
    [false, false],
    [true, true],
    [false, true],
  ]) {
    const layout = `deletion vectors ${dv ? 'on' : 'off'}, row tracking ${rowTracking ? 'on' : 'off'}`
    it(`C6-01 disjoint upserts both commit (${layout})`, async () => {
      const r = await race({
        properties: {
          'delta.enableDeletionVectors': String(dv),
          ...(rowTracking ? { 'delta.enableRowTracking': 'true' } : {}),
        },
        batches: TWO_FILES,
        loser: (tx) => tx.merge(...upsert([60, 1000], 1)),
        winner: (t) => t.merge(...upsert([10, 2000], 2)),
      })
      assert.equal(r.outcome, 'committed', r.message)
      assert.deepEqual(r.kinds, ['case6-merge-rows'])
      assert.equal(r.rows.length, 102)
      assert.equal(byId(r.rows).size, 102)
      assert.deepEqual(
        [60, 1000, 10, 2000].map((k) => valueAt(r.rows, k)),
        [1, 1, 2, 2],
      )
    })
  }

  it('disjoint upserts abort with the flag off (the file-level answer)', async () => {
    const r = await race({
      conflicts: {},
      properties: { 'delta.enableDeletionVectors': 'true' },
      batches: TWO_FILES,
      loser: (tx) => tx.merge(...upsert([60, 1000], 1)),
      winner: (t) => t.merge(...upsert([10, 2000], 2)),
    })
    assert.equal(r.outcome, 'DELTA_CONCURRENT_APPEND')
    assert.equal(r.rows.length, 101)
  })

  it('a loser that is not a MERGE is left to the other cases, with no Case 6 reason', async () => {
    const r = await race({
      properties: { 'delta.enableDeletionVectors': 'false' },
      batches: TWO_FILES,
      loser: (tx) => tx.delete('id = 10'),
      winner: (t) => t.merge(...upsert([11], 2)),
    })
    assert.notEqual(r.outcome, 'committed')
    assert.doesNotMatch(r.message, /Case 6/)
    assert.equal(valueAt(r.rows, 10), 0)
  })

  it('past the time budget the row reads stop and the file-level answer stands', async () => {
    const r = await race({
      conflicts: { ...CASE6, 'merge.rowLevelConflicts.maxMillis': 1 },
      // Without a sketch the winner's rows must be read, which the budget stops.
      winnerSketch: 'absent',
      properties: { 'delta.enableDeletionVectors': 'true' },
      batches: TWO_FILES,
      loser: (tx) => tx.merge(...upsert([60, 1000], 1)),
      winner: (t) => t.merge(...upsert([10, 2000], 2)),
    })
    assert.equal(r.outcome, 'DELTA_CONCURRENT_APPEND')
    assert.match(r.message, /could not be read within the budget/)
    assert.equal(r.rows.length, 101)
    assert.equal(valueAt(r.rows, 10), 2)
  })

  it('C6-02 both insert the same new key: the loser aborts and the key is there once', async () => {
    const r = await race({
      properties: { 'delta.enableDeletionVectors': 'true' },
      batches: TWO_FILES,
      loser: (tx) => tx.merge(...upsert([1000], 1)),
      winner: (t) => t.merge(...upsert([1000], 2)),
    })
    assert.equal(r.outcome, 'DELTA_CONCURRENT_APPEND')
    assert.match(r.message, /Case 6: winner v\d+ added a row with key \(id = 1000\)/)
    assert.equal(valueAt(r.rows, 1000), 2)
    assert.equal(r.rows.length, 101)
  })

  it('C6-03 a MATCHED-only loser aborts when the winner inserts its key (no lost update)', async () => {
    const r = await race({
      properties: { 'delta.enableDeletionVectors': 'true' },
      batches: TWO_FILES,
      loser: (tx) =>
        tx.merge(
          [
            { id: 60n, region: 'US', value: 7 },
            { id: 1000n, region: 'US', value: 7 },
          ],
          {
            on: 'target.id = source.id',
            whenMatched: [{ update: { value: 'source.value' } }],
          },
        ),
      winner: (t) => t.merge(...upsert([1000], 2)),
    })
    assert.equal(r.outcome, 'DELTA_CONCURRENT_APPEND')
    assert.equal(valueAt(r.rows, 1000), 2)
    assert.equal(valueAt(r.rows, 60), 0)
  })

  it('C6-04 a winner UPDATE that changes a key into the loser key set aborts the loser', async () => {
    const r = await race({
      properties: { 'delta.enableDeletionVectors': 'true' },
      batches: TWO_FILES,
      loser: (tx) => tx.merge(...upsert([1000], 1)),
      winner: (t) => t.update({ where: 'id = 5', set: { id: '1000' } }),
    })
    assert.notEqual(r.outcome, 'committed')
    assert.match(r.message, /Case 6: winner v\d+ added a row with key \(id = 1000\)/)
    assert.equal(valueAt(r.rows, 1000), 0)
    assert.equal(byId(r.rows).has('5'), false)
  })

  describe('C6-05 a conditional NOT MATCHED BY SOURCE loser', () => {
    const loser = (tx: Awaited<ReturnType<DeltaTable['begin']>>) =>
      tx.merge([{ id: 60n, region: 'US', value: 1 }], {
        on: 'target.id = source.id',
        whenMatched: [{ update: { value: 'source.value' } }],
        whenNotMatchedBySource: [{ if: "target.region = 'EU'", delete: true }],
      })

    it("commits when the winner inserts a disjoint key with region 'US'", async () => {
      const r = await race({
        properties: { 'delta.enableDeletionVectors': 'true' },
        batches: [base(0, 50), base(50, 98), base(98, 100, 'EU')],
        loser,
        winner: (t) => t.merge(...upsert([2000], 2, 'US')),
      })
      assert.equal(r.outcome, 'committed', r.message)
      assert.equal(valueAt(r.rows, 60), 1)
      assert.equal(valueAt(r.rows, 2000), 2)
      assert.equal(byId(r.rows).has('98'), false, 'the EU rows the loser read are deleted')
      assert.equal(r.rows.length, 99)
    })

    it("aborts when the winner inserts a row with region 'EU' (it would be deleted serially)", async () => {
      const r = await race({
        properties: { 'delta.enableDeletionVectors': 'true' },
        batches: [base(0, 50), base(50, 98), base(98, 100, 'EU')],
        loser,
        winner: (t) => t.merge(...upsert([2000], 2, 'EU')),
      })
      assert.equal(r.outcome, 'DELTA_CONCURRENT_APPEND')
      assert.equal(valueAt(r.rows, 2000), 2)
      assert.equal(valueAt(r.rows, 60), 0)
      assert.equal(r.rows.length, 101)
    })
  })

  it('C6-06 an unconditional NOT MATCHED BY SOURCE loser aborts against any changed-data winner', async () => {
    const r = await race({
      properties: { 'delta.enableDeletionVectors': 'true' },
      batches: TWO_FILES,
      loser: (tx) =>
        tx.merge([{ id: 60n, region: 'US', value: 1 }], {
          on: 'target.id = source.id',
          whenMatched: [{ update: { value: 'source.value' } }],
          whenNotMatchedBySource: [{ update: { value: '9' } }],
        }),
      winner: (t) => t.merge(...upsert([2000], 2)),
    })
    assert.equal(r.outcome, 'DELTA_CONCURRENT_APPEND')
    assert.match(r.message, /without a condition/)
    assert.equal(valueAt(r.rows, 60), 0)
    assert.equal(valueAt(r.rows, 2000), 2)
  })

  describe('C6-07 a copy-on-write UPDATE winner copies a row whose key the loser read', () => {
    // Insert-only MERGE: key 10 exists (read, not changed), key 1000 is new. The winner rewrites
    // the file holding row 10 to update row 20, copying row 10.
    const loser = (tx: Awaited<ReturnType<DeltaTable['begin']>>) =>
      tx.merge(
        [
          { id: 10n, region: 'US', value: 1 },
          { id: 1000n, region: 'US', value: 1 },
        ],
        { on: 'target.id = source.id', whenNotMatched: [{ insert: '*' }] },
      )
    const winner = (t: DeltaTable) => t.update({ where: 'id = 20', set: { value: '2' } })

    it('commits with row tracking: the copy is not a change', async () => {
      const r = await race({
        properties: { 'delta.enableDeletionVectors': 'false', 'delta.enableRowTracking': 'true' },
        batches: TWO_FILES,
        loser,
        winner,
      })
      assert.equal(r.outcome, 'committed', r.message)
      assert.deepEqual(r.kinds, ['case6-merge-rows'])
      assert.deepEqual(
        [10, 20, 1000].map((k) => valueAt(r.rows, k)),
        [0, 2, 1],
      )
      assert.equal(r.rows.length, 101)
    })

    it('aborts without row tracking: every rewritten row counts as changed', async () => {
      const r = await race({
        properties: { 'delta.enableDeletionVectors': 'false' },
        batches: TWO_FILES,
        loser,
        winner,
      })
      assert.notEqual(r.outcome, 'committed')
      assert.match(r.message, /Case 6: winner v\d+ (added a row with|deleted or updated) key \(id = 10\)/)
      assert.equal(valueAt(r.rows, 20), 2)
      assert.equal(byId(r.rows).has('1000'), false)
    })
  })

  describe('C6-08 a blind-append winner of a key the loser inserts', () => {
    const run = (isolationLevel: 'Serializable' | 'WriteSerializable') =>
      race({
        properties: { 'delta.enableDeletionVectors': 'true' },
        batches: TWO_FILES,
        isolationLevel,
        loser: (tx) => tx.merge(...upsert([1000], 1)),
        winner: (t) => t.append([{ id: 1000n, region: 'US', value: 2 }]),
      })

    it('aborts under Serializable', async () => {
      const r = await run('Serializable')
      assert.equal(r.outcome, 'DELTA_CONCURRENT_APPEND')
      assert.equal(valueAt(r.rows, 1000), 2)
    })

    it('commits under WriteSerializable (MERGE then INSERT is the serial order)', async () => {
      const r = await run('WriteSerializable')
      assert.equal(r.outcome, 'committed', r.message)
      assert.deepEqual((byId(r.rows).get('1000') ?? []).map((x) => x.value).sort(), [1, 2])
    })
  })

  describe('C6-09 long keys around 2^53 are told apart', () => {
    const big = 2n ** 53n
    const batches = [...TWO_FILES, [{ id: big, region: 'US', value: 0 }]]
    const loser = (tx: Awaited<ReturnType<DeltaTable['begin']>>) => tx.merge(...upsert([big + 1n], 1))

    it('commits when the winner updates 2^53 and the loser inserts 2^53 + 1', async () => {
      const r = await race({
        properties: { 'delta.enableDeletionVectors': 'true' },
        batches,
        loser,
        winner: (t) => t.merge(...upsert([big], 2)),
      })
      assert.equal(r.outcome, 'committed', r.message)
      assert.equal(valueAt(r.rows, big), 2)
      assert.equal(valueAt(r.rows, big + 1n), 1)
    })

    it('aborts when both insert 2^53 + 1', async () => {
      const r = await race({
        properties: { 'delta.enableDeletionVectors': 'true' },
        batches,
        loser,
        winner: (t) => t.merge(...upsert([big + 1n], 2)),
      })
      assert.equal(r.outcome, 'DELTA_CONCURRENT_APPEND')
      assert.equal(valueAt(r.rows, big + 1n), 2)
    })
  })

  describe('C6-10 multi-column keys are matched as tuples', () => {
    const schema = 'a long, b string, value int'
    const batches = [
      [
        { a: 1n, b: 'x', value: 0 },
        { a: 2n, b: 'x', value: 0 },
      ],
    ]
    const on = 'target.a = source.a AND target.b = source.b'
    const tupleUpsert = (rows: Row[]): [Row[], MergeOptions] => [
      rows,
      { on, whenMatched: [{ update: { value: 'source.value' } }], whenNotMatched: [{ insert: '*' }] },
    ]
    const loser = (tx: Awaited<ReturnType<DeltaTable['begin']>>) =>
      tx.merge(
        ...tupleUpsert([
          { a: 1n, b: 'x', value: 1 },
          { a: 3n, b: 'y', value: 1 },
        ]),
      )

    it('commits when the winner inserts (1, y): each column is in the source, the tuple is not', async () => {
      const r = await race({
        schema,
        properties: { 'delta.enableDeletionVectors': 'true' },
        batches,
        loser,
        winner: (t) => t.merge(...tupleUpsert([{ a: 1n, b: 'y', value: 2 }])),
      })
      assert.equal(r.outcome, 'committed', r.message)
      const got = r.rows.map((x) => `${x.a}${x.b}=${x.value}`).sort()
      assert.deepEqual(got, ['1x=1', '1y=2', '2x=0', '3y=1'])
    })

    it('aborts when the winner inserts (3, y)', async () => {
      const r = await race({
        schema,
        properties: { 'delta.enableDeletionVectors': 'true' },
        batches,
        loser,
        winner: (t) => t.merge(...tupleUpsert([{ a: 3n, b: 'y', value: 2 }])),
      })
      assert.equal(r.outcome, 'DELTA_CONCURRENT_APPEND')
      assert.match(r.message, /key \(a = 3, b = 'y'\)/)
    })
  })

  describe('keys of other types are compared as their column type', () => {
    for (const [type, loserKey, sameKey, otherKey] of [
      ['decimal(10,2)', '1.50', '1.5', '2.25'],
      ['date', '2024-02-29', '2024-02-29', '2024-03-01'],
      [
        'timestamp',
        '2024-02-29T10:00:00.000000Z',
        new Date(Date.UTC(2024, 1, 29, 10)),
        '2024-02-29T10:00:00.000001Z',
      ],
      ['binary', new Uint8Array([1, 2]), new Uint8Array([1, 2]), new Uint8Array([1, 2, 0])],
    ] as const) {
      const keyed = (k: unknown, value: number): [Row[], MergeOptions] => [
        [{ k, value }],
        {
          on: 'target.k = source.k',
          whenMatched: [{ update: { value: 'source.value' } }],
          whenNotMatched: [{ insert: '*' }],
        },
      ]
      const run = (winnerKey: unknown) =>
        race({
          schema: `k ${type}, value int`,
          properties: { 'delta.enableDeletionVectors': 'true' },
          batches: [[{ k: null, value: 0 }]],
          loser: (tx) => tx.merge(...keyed(loserKey, 1)),
          winner: (t) => t.merge(...keyed(winnerKey, 2)),
        })

      it(`${type}: the same key written two ways aborts, another key commits`, async () => {
        const same = await run(sameKey)
        assert.equal(same.outcome, 'DELTA_CONCURRENT_APPEND')
        assert.equal(same.rows.length, 2)
        const other = await run(otherKey)
        assert.equal(other.outcome, 'committed', other.message)
        assert.equal(other.rows.length, 3)
      })
    }
  })

  it('a NOT MATCHED BY SOURCE condition on a partition column is decided by partition values', async () => {
    const root = await mkdtemp(join(tmpdir(), 'delta-rlc-case6-'))
    roots.push(root)
    const table = await DeltaTable.create(
      join(root, 't'),
      { schema: SCHEMA, partitionBy: ['region'], properties: { 'delta.enableDeletionVectors': 'true' } },
      { autoCheckpoint: false, conflicts: CASE6 },
    )
    await table.append([...base(0, 50, 'US'), ...base(50, 52, 'EU')])
    const outcomes: string[] = []
    for (const region of ['US', 'EU']) {
      const tx = await table.begin({ isolationLevel: 'Serializable' })
      await tx.merge([{ id: 10n, region: 'US', value: 1 }], {
        on: 'target.id = source.id',
        whenMatched: [{ update: { value: 'source.value' } }],
        whenNotMatchedBySource: [{ if: "target.region = 'EU' AND target.value > 5", delete: true }],
      })
      await table.append([{ id: BigInt(1000 + outcomes.length), region, value: 9 }])
      outcomes.push(
        await tx.commit().then(
          () => 'committed',
          (err: unknown) => (isDeltaError(err) ? err.code : String(err)),
        ),
      )
    }
    // Serializable: the blind appends are checked. The MERGE read the 'EU' rows with value > 5,
    // which only the second append inserts.
    assert.deepEqual(outcomes, ['committed', 'DELTA_CONCURRENT_APPEND'])
    const rows = await table.scan().toArray()
    assert.equal(valueAt(rows, 10), 1)
    assert.equal(rows.length, 54)
  })

  it('C6-11 NULL keys never match: both NULL-key inserts commit', async () => {
    const r = await race({
      properties: { 'delta.enableDeletionVectors': 'true' },
      batches: TWO_FILES,
      loser: (tx) => tx.merge(...upsert([null, 1000], 1)),
      winner: (t) => t.merge(...upsert([null], 2)),
    })
    assert.equal(r.outcome, 'committed', r.message)
    assert.deepEqual(
      r.rows
        .filter((x) => x.id === null)
        .map((x) => x.value)
        .sort(),
      [1, 2],
    )
    assert.equal(valueAt(r.rows, 1000), 1)
  })

  describe('C6-12 past the exact cap the keys go to a Bloom filter', () => {
    const conflicts = { ...CASE6, 'merge.rowLevelConflicts.maxExactKeys': 1 }
    const keys = Array.from({ length: 200 }, (_, i) => 1000 + i)

    it('never misses a conflict', async () => {
      const r = await race({
        conflicts,
        properties: { 'delta.enableDeletionVectors': 'true' },
        batches: TWO_FILES,
        loser: (tx) => tx.merge(...upsert(keys, 1)),
        winner: (t) => t.merge(...upsert([1100], 2)),
      })
      assert.equal(r.outcome, 'DELTA_CONCURRENT_APPEND')
      assert.equal(valueAt(r.rows, 1100), 2)
      assert.equal(r.rows.length, 101)
    })

    it('a disjoint winner commits or aborts, never duplicating or losing a row', async () => {
      const r = await race({
        conflicts,
        properties: { 'delta.enableDeletionVectors': 'true' },
        batches: TWO_FILES,
        loser: (tx) => tx.merge(...upsert(keys, 1)),
        winner: (t) => t.merge(...upsert([5000], 2)),
      })
      assert.ok(['committed', 'DELTA_CONCURRENT_APPEND'].includes(r.outcome), r.outcome)
      assert.equal(valueAt(r.rows, 5000), 2)
      assert.equal(r.rows.length, r.outcome === 'committed' ? 301 : 101)
      assert.equal(byId(r.rows).size, r.rows.length)
    })
  })
})

describe('C6-13 the change sketch in commitInfo: present, absent or corrupt, the same outcomes', () => {
  const dv = { 'delta.enableDeletionVectors': 'true' }
  const big = 2n ** 53n
  const pairs = 'a long, b string, value int'
  const pairUpsert = (rows: Row[]): [Row[], MergeOptions] => [
    rows,
    {
      on: 'target.a = source.a AND target.b = source.b',
      whenMatched: [{ update: { value: 'source.value' } }],
      whenNotMatched: [{ insert: '*' }],
    },
  ]
  const pairLoser = (tx: Awaited<ReturnType<DeltaTable['begin']>>) =>
    tx.merge(
      ...pairUpsert([
        { a: 1n, b: 'x', value: 1 },
        { a: 3n, b: 'y', value: 1 },
      ]),
    )
  const pairBase = [
    [
      { a: 1n, b: 'x', value: 0 },
      { a: 2n, b: 'x', value: 0 },
    ],
  ]
  // Each: the race, its outcome, and whether a present sketch decides it (no changed key in K_L,
  // no NOT MATCHED BY SOURCE clause in the loser).
  const scenarios: readonly {
    readonly name: string
    readonly setup: RaceSetup
    readonly outcome: string
    readonly bySketch: boolean
  }[] = [
    {
      name: 'disjoint upserts',
      setup: {
        properties: dv,
        batches: TWO_FILES,
        loser: (tx) => tx.merge(...upsert([60, 1000], 1)),
        winner: (t) => t.merge(...upsert([10, 2000], 2)),
      },
      outcome: 'committed',
      bySketch: true,
    },
    {
      name: 'disjoint upserts with row tracking',
      setup: {
        properties: { ...dv, 'delta.enableRowTracking': 'true' },
        batches: TWO_FILES,
        loser: (tx) => tx.merge(...upsert([60, 1000], 1)),
        winner: (t) => t.merge(...upsert([10, 2000], 2)),
      },
      outcome: 'committed',
      bySketch: true,
    },
    {
      name: 'the same new key',
      setup: {
        properties: dv,
        batches: TWO_FILES,
        loser: (tx) => tx.merge(...upsert([1000], 1)),
        winner: (t) => t.merge(...upsert([1000], 2)),
      },
      outcome: 'DELTA_CONCURRENT_APPEND',
      bySketch: false,
    },
    {
      name: 'a winner deleting a key the loser updates',
      setup: {
        properties: dv,
        batches: TWO_FILES,
        loser: (tx) => tx.merge(...upsert([60], 1)),
        winner: (t) =>
          t.merge([{ id: 60n, region: 'US', value: 0 }], {
            on: 'target.id = source.id',
            whenMatched: [{ delete: true }],
          }),
      },
      outcome: 'DELTA_CONCURRENT_APPEND',
      bySketch: false,
    },
    {
      name: 'keys 2^53 and 2^53 + 1',
      setup: {
        properties: dv,
        batches: [...TWO_FILES, [{ id: big, region: 'US', value: 0 }]],
        loser: (tx) => tx.merge(...upsert([big + 1n], 1)),
        winner: (t) => t.merge(...upsert([big], 2)),
      },
      outcome: 'committed',
      bySketch: true,
    },
    {
      name: 'tuple (1, y) against (1, x) and (3, y)',
      setup: {
        schema: pairs,
        properties: dv,
        batches: pairBase,
        loser: pairLoser,
        winner: (t) => t.merge(...pairUpsert([{ a: 1n, b: 'y', value: 2 }])),
      },
      outcome: 'committed',
      bySketch: true,
    },
    {
      name: 'tuple (3, y) on both sides',
      setup: {
        schema: pairs,
        properties: dv,
        batches: pairBase,
        loser: pairLoser,
        winner: (t) => t.merge(...pairUpsert([{ a: 3n, b: 'y', value: 2 }])),
      },
      outcome: 'DELTA_CONCURRENT_APPEND',
      bySketch: false,
    },
    {
      name: "a NOT MATCHED BY SOURCE loser against a 'EU' insert",
      setup: {
        properties: dv,
        batches: [base(0, 50), base(50, 98), base(98, 100, 'EU')],
        loser: (tx) =>
          tx.merge([{ id: 60n, region: 'US', value: 1 }], {
            on: 'target.id = source.id',
            whenMatched: [{ update: { value: 'source.value' } }],
            whenNotMatchedBySource: [{ if: "target.region = 'EU'", delete: true }],
          }),
        winner: (t) => t.merge(...upsert([2000], 2, 'EU')),
      },
      outcome: 'DELTA_CONCURRENT_APPEND',
      bySketch: false,
    },
  ]
  const sorted = (rows: readonly Row[]): string[] =>
    rows.map((r) => JSON.stringify(r, (_, v) => (typeof v === 'bigint' ? `${v}n` : v))).sort()
  scenarios.forEach((sc, i) => {
    const corrupt: SketchVariant = (['other format', 'malformed keys', 'not an object'] as const)[i % 3]!
    it(`${sc.name}: ${sc.outcome}, with the sketch present, absent or ${corrupt}`, async () => {
      const present = await race({ ...sc.setup, winnerSketch: 'present' })
      assert.equal(present.outcome, sc.outcome, present.message)
      if (sc.outcome === 'committed') {
        assert.deepEqual(present.kinds, ['case6-merge-rows'])
        assert.deepEqual(present.bySketch, [sc.bySketch], 'decided by the sketch, reading no rows')
      }
      for (const variant of ['absent', corrupt] as const) {
        const other = await race({ ...sc.setup, winnerSketch: variant })
        assert.equal(other.outcome, present.outcome, `${variant}: ${other.message}`)
        assert.deepEqual(other.kinds, present.kinds, variant)
        assert.ok(
          other.bySketch.every((b) => !b),
          `${variant}: the rows were read`,
        )
        assert.deepEqual(sorted(other.rows), sorted(present.rows), variant)
      }
    })
  })
})

describe('Case 6 then another winner: the read set carries over to the next winner', () => {
  // An insert-only MERGE of keys 500 and 9 reads row 9 (matched: not inserted). A first winner
  // that Case 6 reconciles rewrites the file holding row 9; a second winner deletes row 9.
  // Serially (winners, then the MERGE) the MERGE would insert source row 9, so its read is stale:
  // it must abort, and the table keep the winners' rows only.
  const schema = 'id long, v int'
  const rows = (from: number, to: number): Row[] =>
    Array.from({ length: to - from }, (_, i) => ({ id: BigInt(from + i), v: 0 }))
  const vAt = (all: readonly Row[], id: number): unknown => all.find((x) => x.id === BigInt(id))?.v
  const loser = (tx: Awaited<ReturnType<DeltaTable['begin']>>) =>
    tx.merge(
      [
        { id: 500n, v: 1 },
        { id: 9n, v: 1 },
      ],
      { on: 'target.id = source.id', whenNotMatched: [{ insert: '*' }] },
    )
  const chains: readonly {
    readonly name: string
    readonly winners: (t: DeltaTable) => Promise<void>
    /** Ids left by the winners alone, in order. */
    readonly left: readonly number[]
  }[] = [
    {
      name: 'UPDATE id = 6, then DELETE id % 2 = 1',
      winners: async (t) => {
        await t.update({ where: 'id = 6', set: { v: '7' } })
        await t.delete('id % 2 = 1')
      },
      left: [0, 2, 4, 6, 8, 10],
    },
    {
      name: 'UPDATE id = 6, then DELETE id = 9',
      winners: async (t) => {
        await t.update({ where: 'id = 6', set: { v: '7' } })
        await t.delete('id = 9')
      },
      left: [0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11],
    },
    {
      name: 'OPTIMIZE ZORDER BY v, then DELETE id = 9',
      winners: async (t) => {
        await t.optimize({ zOrderBy: ['v'] })
        await t.delete('id = 9')
      },
      left: [0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11],
    },
    {
      name: 'OPTIMIZE, then DELETE id = 9',
      winners: async (t) => {
        await t.optimize()
        await t.delete('id = 9')
      },
      left: [0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11],
    },
  ]
  for (const chain of chains) {
    for (const [dv, rowTracking] of [
      [true, false],
      [false, false],
      [true, true],
      [false, true],
    ]) {
      const layout = `deletion vectors ${dv ? 'on' : 'off'}, row tracking ${rowTracking ? 'on' : 'off'}`
      it(`${chain.name}: the insert-only MERGE of key 9 aborts (${layout})`, async () => {
        const r = await race({
          schema,
          conflicts: 'all',
          properties: {
            'delta.enableDeletionVectors': String(dv),
            ...(rowTracking ? { 'delta.enableRowTracking': 'true' } : {}),
          },
          batches: [rows(0, 6), rows(6, 12)],
          loser,
          winner: chain.winners,
        })
        assert.match(r.outcome, /^DELTA_CONCURRENT_(APPEND|DELETE_READ|DELETE_DELETE)$/, r.message)
        assert.deepEqual(
          r.rows.map((x) => Number(x.id)).sort((a, b) => a - b),
          chain.left,
        )
      })
    }
  }
  for (const [dv, rowTracking] of [
    [true, false],
    [false, false],
    [true, true],
    [false, true],
  ]) {
    const layout = `deletion vectors ${dv ? 'on' : 'off'}, row tracking ${rowTracking ? 'on' : 'off'}`
    // Copy-on-write without row tracking: the UPDATE's rewrite copies row 9, a change (C6-07).
    const copies = !dv && !rowTracking
    it(`UPDATE id = 6, then DELETE id = 7: the MERGE ${copies ? 'aborts at the UPDATE' : 'commits as if after both'} (${layout})`, async () => {
      const r = await race({
        schema,
        conflicts: 'all',
        properties: {
          'delta.enableDeletionVectors': String(dv),
          ...(rowTracking ? { 'delta.enableRowTracking': 'true' } : {}),
        },
        batches: [rows(0, 6), rows(6, 12)],
        loser,
        winner: async (t) => {
          await t.update({ where: 'id = 6', set: { v: '7' } })
          await t.delete('id = 7')
        },
      })
      const serial = [0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11]
      if (copies) {
        assert.equal(r.outcome, 'DELTA_CONCURRENT_APPEND', r.message)
      } else {
        assert.equal(r.outcome, 'committed', r.message)
        assert.deepEqual(r.kinds, ['case6-merge-rows', 'case6-merge-rows'])
        serial.push(500)
        assert.equal(vAt(r.rows, 500), 1)
      }
      assert.deepEqual(
        r.rows.map((x) => Number(x.id)).sort((a, b) => a - b),
        serial,
      )
      assert.equal(vAt(r.rows, 6), 7)
      assert.equal(vAt(r.rows, 9), 0)
    })
  }
})
