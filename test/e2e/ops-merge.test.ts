/**
 * MERGE end to end: every clause kind, conditions, `'*'`, NULL keys and unqualified names, for
 * every layout. The expected rows come from a plain-JS MERGE over the appended rows (clauses in
 * order, first applicable wins) and are compared with a scan as multisets; the log is checked for
 * which files were touched, DV cardinalities, dataChange and metrics. Also: the duplicate-match
 * refusal, input validation, and the source-key read predicate under concurrency (suite MSK).
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { type DeltaErrorCode, isDeltaError } from '../../src/errors/index.js'
import type { MergeOptions } from '../../src/ops/merge-clauses.js'
import { DeltaTable } from '../../src/table/delta-table.js'
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
  liveKeys,
  openWithHook,
  type Row,
  removesOf,
  scanRows,
  standardRow,
  type TestTable,
} from './ops-support.js'

const BATCHES = [0, 1, 2].map((b) => Array.from({ length: 12 }, (_, i) => standardRow(b * 12 + i)))

// === A plain-JS MERGE, the reference ===

interface RefMerge {
  readonly on: (t: Row, s: Row) => boolean
  readonly matched?: readonly { if?: (t: Row, s: Row) => boolean; update?: (t: Row, s: Row) => Row }[]
  readonly notMatched?: readonly { if?: (s: Row) => boolean; insert: (s: Row) => Row }[]
  readonly bySource?: readonly { if?: (t: Row) => boolean; update?: (t: Row) => Row }[]
}

interface RefResult {
  readonly rows: Row[]
  readonly updated: number
  readonly deleted: number
  readonly inserted: number
  /** Ids of target rows that left their files (updated or deleted). */
  readonly touchedIds: Set<bigint>
}

function referenceMerge(target: readonly Row[], source: readonly Row[], m: RefMerge): RefResult {
  const rows: Row[] = []
  let updated = 0
  let deleted = 0
  const touchedIds = new Set<bigint>()
  const matchedSources = new Set<number>()
  for (const t of target) {
    const hits = source.map((s, i) => [s, i] as const).filter(([s]) => m.on(t, s))
    hits.forEach(([, i]) => {
      matchedSources.add(i)
    })
    let acted: { update?: (t: Row) => Row } | undefined
    if (hits.length > 0) {
      for (const [s] of hits) {
        const clause = (m.matched ?? []).find((c) => c.if === undefined || c.if(t, s))
        if (clause !== undefined) {
          const update = clause.update
          acted = update === undefined ? {} : { update: (row) => update(row, s) }
          break
        }
      }
    } else {
      const clause = (m.bySource ?? []).find((c) => c.if === undefined || c.if(t))
      if (clause !== undefined) acted = clause.update === undefined ? {} : { update: clause.update }
    }
    if (acted === undefined) {
      rows.push(t)
      continue
    }
    touchedIds.add(t.id as bigint)
    if (acted.update === undefined) deleted++
    else {
      rows.push(acted.update(t))
      updated++
    }
  }
  let inserted = 0
  source.forEach((s, i) => {
    if (matchedSources.has(i)) return
    const clause = (m.notMatched ?? []).find((c) => c.if === undefined || c.if(s))
    if (clause === undefined) return
    rows.push(clause.insert(s))
    inserted++
  })
  return { rows, updated, deleted, inserted, touchedIds }
}

const full = (r: Row): Row => ({
  id: r.id,
  name: r.name ?? null,
  value: r.value ?? null,
  part: r.part ?? null,
})
const sameId = (t: Row, s: Row): boolean => s.id !== null && s.id !== undefined && t.id === s.id

interface MergeCase {
  readonly name: string
  readonly source: readonly Row[]
  readonly options: MergeOptions
  readonly reference: RefMerge
}

const CASES: readonly MergeCase[] = [
  {
    name: "upsert with '*': updates matches, inserts the rest (a partition value may change)",
    source: [
      { id: 5n, name: 's5', value: 500, part: 0 },
      { id: 40n, name: 's40', value: 1, part: 1 },
      { id: 13n, name: null, value: null, part: 1 },
    ],
    options: {
      on: 'target.id = source.id',
      whenMatched: [{ update: '*' }],
      whenNotMatched: [{ insert: '*' }],
    },
    reference: { on: sameId, matched: [{ update: (_t, s) => full(s) }], notMatched: [{ insert: full }] },
  },
  {
    name: 'conditional matched clauses: the first that applies acts',
    source: [
      { id: 1n, value: 10 },
      { id: 2n, value: 200 },
      { id: 3n, value: 30 },
      { id: 4n, value: 400 },
      { id: 6n, value: 5 },
    ],
    options: {
      on: 'target.id = source.id',
      whenMatched: [
        { if: 'source.value > 100', delete: true },
        { if: 'target.name IS NULL', update: { name: "'was null'" } },
        { update: { value: 'target.value + source.value' } },
      ],
    },
    reference: {
      on: sameId,
      matched: [
        { if: (_t, s) => (s.value as number) > 100 },
        { if: (t) => t.name === null, update: (t) => ({ ...t, name: 'was null' }) },
        {
          update: (t, s) => ({
            ...t,
            value: t.value === null ? null : (t.value as number) + (s.value as number),
          }),
        },
      ],
    },
  },
  {
    name: 'conditional inserts with explicit values; unnamed columns are NULL',
    source: [
      { id: 100n, value: 1 },
      { id: 101n, value: 2 },
      { id: 102n, value: null },
      { id: 3n, value: 9 },
    ],
    options: {
      on: 'target.id = source.id',
      whenNotMatched: [
        {
          if: 'source.value > 1',
          insert: { id: 'source.id', name: "'big'", value: 'source.value', part: '0' },
        },
        { insert: { id: 'source.id + 1000', part: '1' } },
      ],
    },
    reference: {
      on: sameId,
      notMatched: [
        {
          if: (s) => s.value !== null && (s.value as number) > 1,
          insert: (s) => ({ id: s.id, name: 'big', value: s.value, part: 0 }),
        },
        { insert: (s) => ({ id: (s.id as bigint) + 1000n, name: null, value: null, part: 1 }) },
      ],
    },
  },
  {
    name: 'not matched by source: conditional delete and update of target rows no source row matches',
    source: [0, 1, 2, 3, 4, 5].map((i) => ({ id: BigInt(i) })),
    options: {
      on: 'target.id = source.id',
      whenMatched: [{ update: { name: "'seen'" } }],
      whenNotMatchedBySource: [
        { if: 'target.part = 1', delete: true },
        { if: 'target.value IS NULL', update: { value: '-1' } },
      ],
    },
    reference: {
      on: sameId,
      matched: [{ update: (t) => ({ ...t, name: 'seen' }) }],
      bySource: [
        { if: (t) => t.part === 1 },
        { if: (t) => t.value === null, update: (t) => ({ ...t, value: -1 }) },
      ],
    },
  },
  {
    name: 'unqualified columns resolve to the only side that has them',
    source: [
      { key: 7n, newName: 'k7' },
      { key: 8n, newName: null },
      { key: 99n, newName: 'x' },
    ],
    options: {
      on: 'id = key',
      whenMatched: [{ update: { name: 'newName' } }],
      whenNotMatched: [{ insert: { id: 'key', name: 'newName', part: '2' } }],
    },
    reference: {
      on: (t, s) => t.id === s.key,
      matched: [{ update: (t, s) => ({ ...t, name: s.newName }) }],
      notMatched: [{ insert: (s) => ({ id: s.key, name: s.newName, value: null, part: 2 }) }],
    },
  },
  {
    name: 'a NULL join key matches nothing',
    source: [
      { id: 50n, name: null },
      { id: 51n, name: 'n1' },
    ],
    options: {
      on: 'target.name = source.name',
      whenMatched: [{ update: { value: '0' } }],
      whenNotMatched: [{ insert: { id: 'source.id', name: 'source.name' } }],
    },
    reference: {
      on: (t, s) => t.name !== null && s.name !== null && t.name === s.name,
      matched: [{ update: (t) => ({ ...t, value: 0 }) }],
      notMatched: [{ insert: (s) => ({ id: s.id, name: s.name, value: null, part: null }) }],
    },
  },
  {
    name: 'a single unconditional delete accepts several source rows per target row',
    source: [{ id: 4n }, { id: 4n }, { id: 5n }, { id: 500n }],
    options: { on: 'target.id = source.id', whenMatched: [{ delete: true }] },
    reference: { on: sameId, matched: [{}] },
  },
  {
    name: 'insert-only MERGE inserts duplicate new keys as they come',
    source: [{ id: 200n }, { id: 200n }, { id: 7n }],
    options: {
      on: 'target.id = source.id',
      whenNotMatched: [{ insert: { id: 'source.id', name: "'new'" } }],
    },
    reference: {
      on: sameId,
      notMatched: [{ insert: (s) => ({ id: s.id, name: 'new', value: null, part: null }) }],
    },
  },
  {
    name: 'an empty source with a declared schema: not-matched-by-source deletes',
    source: [],
    options: {
      on: 'target.id = source.id',
      whenNotMatchedBySource: [{ if: 'target.id < 6', delete: true }],
      sourceSchema: 'id long',
    },
    reference: { on: sameId, bySource: [{ if: (t) => (t.id as bigint) < 6n }] },
  },
]

for (const layout of LAYOUTS) {
  describe(`MERGE (${layout.name})`, () => {
    for (const c of CASES) {
      it(c.name, async () => {
        const t = await createTestTable(layout, BATCHES)
        try {
          const before = await latestVersion(t.table)
          const result = await t.table.merge(c.source, c.options)
          const ref = referenceMerge(t.rows, c.source, c.reference)
          assertSameRows(await scanRows(t.table), ref.rows)
          assert.equal(result.metrics.numTargetRowsInserted, ref.inserted, 'inserted')
          assert.equal(result.metrics.numTargetRowsUpdated, ref.updated, 'updated')
          assert.equal(result.metrics.numTargetRowsDeleted, ref.deleted, 'deleted')
          assert.equal(result.metrics.numSourceRows, c.source.length)
          assert.equal(result.version, before + 1n)
          await checkMergeCommit(t, result.version, ref, layout.dv)
        } finally {
          await t.cleanup()
        }
      })
    }
  })
}

/** Exactly the files holding an updated or deleted row are touched, as UPDATE and DELETE do. */
async function checkMergeCommit(t: TestTable, version: bigint, ref: RefResult, dv: boolean): Promise<void> {
  const actions = await commitActions(t.dir, version)
  const info = commitInfoOf(actions)
  assert.equal(info.operation, 'MERGE')
  assert.equal(info.operationParameters?.predicate !== undefined, true)
  const adds = addsOf(actions)
  const removes = removesOf(actions)
  for (const a of [...adds, ...removes]) assert.equal(a.dataChange, true)
  const touched = [...t.idsByFile].filter(([, ids]) => [...ids].some((id) => ref.touchedIds.has(id)))
  assert.deepEqual(removes.map((r) => keyOf(r.path)).sort(), touched.map(([k]) => k).sort())
  for (const [key, ids] of touched) {
    const hits = [...ids].filter((id) => ref.touchedIds.has(id)).length
    const readd = adds.find((a) => keyOf(a.path) === key)
    if (hits === ids.size || !dv) assert.equal(readd, undefined, `${key} leaves the table`)
    else assert.equal(readd?.deletionVector?.cardinality, BigInt(hits), `${key} DV cardinality`)
  }
  await assertDuckDbReadsAdds(t.dir, Number(version), Number(version))
}

describe('MERGE refusals', () => {
  let t: TestTable
  before(async () => {
    t = await createTestTable({ partitioned: false, dv: true }, BATCHES)
  })
  after(async () => t.cleanup())

  async function refused(source: unknown, options: unknown, code: DeltaErrorCode): Promise<Error> {
    const version = await latestVersion(t.table)
    const files = await listDataFiles(t.dir)
    let caught: unknown
    await assert.rejects(
      async () => {
        try {
          await t.table.merge(source as never, options as never)
        } catch (err) {
          caught = err
          throw err
        }
      },
      (err) => isDeltaError(err, code),
    )
    assert.equal(await latestVersion(t.table), version, 'no commit')
    assert.deepEqual(await listDataFiles(t.dir), files, 'no file left behind')
    return caught as Error
  }

  it('refuses several source rows updating one target row, naming the key', async () => {
    const err = await refused(
      [
        { id: 5n, value: 1 },
        { id: 5n, value: 2 },
      ],
      { on: 'target.id = source.id', whenMatched: [{ update: { value: 'source.value' } }] },
      'DELTA_INVALID_ARGUMENT',
    )
    assert.match(err.message, /id = 5/)
    assert.match(err.message, /Delta MERGE forbids multiple source rows matching one target row/)
  })

  it('refuses several source rows matching one target row under a conditional delete', async () => {
    await refused(
      [{ id: 5n }, { id: 5n }],
      { on: 'target.id = source.id', whenMatched: [{ if: 'target.id > 0', delete: true }] },
      'DELTA_INVALID_ARGUMENT',
    )
  })

  const bad: readonly { name: string; source?: unknown; options: unknown; code?: DeltaErrorCode }[] = [
    { name: 'a missing on', options: { whenMatched: [{ delete: true }] } },
    { name: 'no clause', options: { on: 'target.id = source.id' } },
    {
      name: "'*' when the source lacks table columns",
      options: { on: 'target.id = source.id', whenNotMatched: [{ insert: '*' }] },
    },
    {
      name: 'an unconditional clause before another',
      options: { on: 'target.id = source.id', whenMatched: [{ delete: true }, { update: { name: "'x'" } }] },
    },
    {
      name: 'an insert reading the target',
      options: { on: 'target.id = source.id', whenNotMatched: [{ insert: { id: 'target.id' } }] },
    },
    {
      name: 'a not-matched-by-source clause reading the source',
      options: {
        on: 'target.id = source.id',
        whenNotMatchedBySource: [{ update: { value: 'source.id' } }],
      },
    },
    {
      name: "'*' in a not-matched-by-source update",
      options: { on: 'target.id = source.id', whenNotMatchedBySource: [{ update: '*' }] },
    },
    {
      name: 'an ambiguous unqualified column',
      options: { on: 'id = id', whenMatched: [{ delete: true }] },
    },
    {
      name: 'an unknown column',
      options: { on: 'target.id = source.nope', whenMatched: [{ delete: true }] },
    },
    {
      name: 'an unknown assigned column',
      options: { on: 'target.id = source.id', whenMatched: [{ update: { nope: '1' } }] },
    },
    {
      name: 'a clause with both update and delete',
      options: { on: 'target.id = source.id', whenMatched: [{ update: { name: "'x'" }, delete: true }] },
    },
    {
      name: 'NULL for a NOT NULL column',
      options: { on: 'target.id = source.id', whenMatched: [{ update: { id: 'NULL' } }] },
    },
    {
      name: 'an insert leaving a NOT NULL column out',
      options: { on: 'target.id = source.id', whenNotMatched: [{ insert: { name: 'source.name' } }] },
    },
    {
      name: 'a source value of the wrong type',
      source: [{ id: 'abc' }],
      options: { on: 'target.id = source.id', whenMatched: [{ delete: true }] },
    },
    {
      name: 'a NULL inserted into a NOT NULL column at run time',
      source: [{ id: 300n, other: null }],
      options: {
        on: 'target.id = source.id',
        whenNotMatched: [{ insert: { id: 'CAST(source.other AS long)' } }],
      },
    },
    {
      name: 'source rows that are not an array',
      source: { id: 1n },
      options: { on: 'target.id = source.id', whenMatched: [{ delete: true }] },
    },
    {
      name: 'a malformed source schema',
      source: [],
      options: { on: 'target.id = source.id', whenMatched: [{ delete: true }], sourceSchema: 'id nonsense' },
    },
    {
      name: 'a malformed ON condition',
      options: { on: 'target.id = = source.id', whenMatched: [{ delete: true }] },
      code: 'DELTA_INVALID_PREDICATE',
    },
  ]
  for (const b of bad) {
    it(`refuses ${b.name}`, async () => {
      await refused(b.source ?? [{ id: 1n, name: 'x' }], b.options, b.code ?? 'DELTA_INVALID_ARGUMENT')
    })
  }

  it('refuses update and delete clauses on an append-only table, but inserts', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'delta-rlc-ops-'))
    const table = await DeltaTable.create(dir, {
      schema: 'id long not null',
      properties: { 'delta.appendOnly': 'true' },
    })
    try {
      await table.append([{ id: 1n }])
      await assert.rejects(
        () => table.merge([{ id: 1n }], { on: 'target.id = source.id', whenMatched: [{ delete: true }] }),
        (err) => isDeltaError(err, 'DELTA_UNSUPPORTED'),
      )
      await table.merge([{ id: 1n }, { id: 2n }], {
        on: 'target.id = source.id',
        whenNotMatched: [{ insert: '*' }],
      })
      assertSameRows(await scanRows(table), [{ id: 1n }, { id: 2n }])
    } finally {
      await table.close()
      await rm(dir, { recursive: true, force: true })
    }
  })
})

describe('MERGE commit failures', () => {
  it('deletes the files it wrote when its one-call commit loses a conflict', async () => {
    const t = await createTestTable({ partitioned: false, dv: true }, BATCHES)
    const table = await openWithHook(t.dir, 'writeRows', () => t.table.delete('id = 2'))
    try {
      const files = await listDataFiles(t.dir)
      await assert.rejects(
        () =>
          table.merge([{ id: 1n, name: 'm' }], {
            on: 'target.id = source.id',
            whenMatched: [{ update: { name: 'source.name' } }],
          }),
        (err) => isDeltaError(err) && err.code.startsWith('DELTA_CONCURRENT'),
      )
      const live = await liveKeys(t.table)
      const added = (await listDataFiles(t.dir)).filter((k) => !files.includes(k))
      assert.deepEqual(
        added.filter((k) => !live.includes(k)),
        [],
        'no file of the loser is left',
      )
      assertSameRows(
        await scanRows(t.table),
        t.rows.filter((r) => r.id !== 2n),
      )
    } finally {
      await closeHooked(table)
      await t.cleanup()
    }
  })
})

// === Source-key read predicate under concurrency (scenarios suite MSK) ===

const upsert = (keys: readonly number[], v: number): [Row[], MergeOptions] => [
  keys.map((k) => ({ id: BigInt(k), value: v })),
  {
    on: 'target.id = source.id',
    whenMatched: [{ update: { value: 'source.value' } }],
    whenNotMatched: [{ insert: { id: 'source.id', value: 'source.value' } }],
  },
]

async function race(
  conflicts: Readonly<Record<string, boolean>> | 'all',
  loser: [Row[], MergeOptions],
  winner: [Row[], MergeOptions],
): Promise<{ outcome: string; rows: Row[] }> {
  const base = Array.from({ length: 100 }, (_, i) => ({ id: BigInt(i), name: null, value: 0, part: null }))
  const t = await createTestTable({ partitioned: false, dv: true }, [base.slice(0, 50), base.slice(50)], {
    conflicts,
  })
  try {
    const l = await t.table.begin()
    await l.merge(...loser)
    await t.table.merge(...winner)
    let outcome = 'committed'
    try {
      await l.commit()
    } catch (err) {
      outcome = isDeltaError(err) ? err.code : String(err)
    }
    return { outcome, rows: await scanRows(t.table) }
  } finally {
    await t.cleanup()
  }
}

describe('MERGE source-key read predicate (MSK)', () => {
  it('disjoint keys: the loser commits with the source-key predicate on (MSK-01)', async () => {
    const { outcome, rows } = await race('all', upsert([60, 500], 2), upsert([10, 1000], 1))
    assert.equal(outcome, 'committed')
    assert.equal(rows.length, 102)
    assert.equal(new Set(rows.map((r) => r.id)).size, 102)
    const v = new Map(rows.map((r) => [r.id, r.value]))
    assert.deepEqual([v.get(10n), v.get(60n), v.get(500n), v.get(1000n)], [1, 2, 2, 1])
  })

  it('disjoint keys still conflict with the source-key predicate off (MSK-03)', async () => {
    const { outcome } = await race(
      {
        'conflictDetection.dataSkipping.enabled': true,
        'conflictDetection.dataSkipping.valueExact.enabled': true,
      },
      upsert([60, 500], 2),
      upsert([10, 1000], 1),
    )
    assert.equal(outcome, 'DELTA_CONCURRENT_APPEND')
  })

  it('more keys than the IN-set threshold: a range pre-filter, the exact keys decide (MSK-06)', async () => {
    const keys = Array.from({ length: 40 }, (_, i) => 1000 + 2 * i)
    const threshold = { 'merge.sourceKeyReadPredicate.inSetThreshold': 10 }
    const ok = await race({ ...flagsAll(), ...threshold } as never, upsert(keys, 2), upsert([10, 1001], 1))
    assert.equal(ok.outcome, 'committed')
    assert.equal(ok.rows.length, 100 + 40 + 1)
    const clash = await race({ ...flagsAll(), ...threshold } as never, upsert(keys, 3), upsert([1002], 1))
    assert.notEqual(clash.outcome, 'committed')
  })

  it('a NOT MATCHED BY SOURCE clause reads every row: no source-key predicate (MSK-10)', async () => {
    const [rows] = upsert([60], 2)
    const { outcome } = await race(
      'all',
      [
        rows,
        {
          on: 'target.id = source.id',
          whenMatched: [{ update: { value: 'source.value' } }],
          whenNotMatchedBySource: [{ if: 'target.id = 1000', delete: true }],
        },
      ],
      upsert([10, 1000], 1),
    )
    assert.notEqual(outcome, 'committed')
  })
})

function flagsAll(): Record<string, boolean> {
  return {
    'rowLevelConcurrency.enabled': true,
    'conflictDetection.dataSkipping.enabled': true,
    'conflictDetection.dataSkipping.valueExact.enabled': true,
    'merge.sourceKeyReadPredicate.enabled': true,
  }
}
