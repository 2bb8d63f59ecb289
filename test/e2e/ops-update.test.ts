/**
 * UPDATE end to end: expected rows computed in plain JS over the appended rows and compared with
 * a scan as multisets, for every layout (partitioned or not, deletion vectors or copy-on-write);
 * the log checked for which files were touched, DV cardinalities, dataChange and metrics.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { type DeltaErrorCode, isDeltaError } from '../../src/errors/index.js'
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
  numRecords,
  openWithHook,
  type Row,
  removesOf,
  scanRows,
  standardRow,
  type TestTable,
} from './ops-support.js'

/** Three appends of 12 rows: ids 0..35. */
const BATCHES = [0, 1, 2].map((b) => Array.from({ length: 12 }, (_, i) => standardRow(b * 12 + i)))

interface UpdateCase {
  readonly name: string
  readonly where?: string
  readonly set: Record<string, string>
  /** Which rows the predicate selects (SQL three-valued logic: NULL is no match). */
  readonly match: (r: Row) => boolean
  /** The updated image of a matched row. */
  readonly apply: (r: Row) => Row
}

const num = (v: unknown): number | null => (v === null ? null : (v as number))

const CASES: readonly UpdateCase[] = [
  {
    name: 'a predicate matching no row changes nothing and commits nothing',
    where: 'id > 1000',
    set: { value: '0' },
    match: () => false,
    apply: (r) => r,
  },
  {
    name: 'some rows of one file',
    where: 'id >= 2 AND id <= 4',
    set: { value: 'value * 10' },
    match: (r) => (r.id as bigint) >= 2n && (r.id as bigint) <= 4n,
    apply: (r) => ({ ...r, value: r.value === null ? null : num(r.value)! * 10 }),
  },
  {
    name: 'every row of the first append',
    where: 'id < 12',
    set: { name: "'all'" },
    match: (r) => (r.id as bigint) < 12n,
    apply: (r) => ({ ...r, name: 'all' }),
  },
  {
    name: 'an IS NULL predicate across files, two columns set',
    where: 'name IS NULL',
    set: { name: "'anon'", value: 'coalesce(value, -1)' },
    match: (r) => r.name === null,
    apply: (r) => ({ ...r, name: 'anon', value: r.value === null ? -1 : r.value }),
  },
  {
    name: 'a comparison with NULL values does not match them',
    where: 'value > 40',
    set: { value: 'NULL' },
    match: (r) => r.value !== null && (r.value as number) > 40,
    apply: (r) => ({ ...r, value: null }),
  },
  {
    name: 'no predicate updates every row',
    set: { value: 'id * 2' },
    match: () => true,
    apply: (r) => ({ ...r, value: Number(r.id) * 2 }),
  },
  {
    name: 'a predicate on the partition column only',
    where: 'part = 1',
    set: { name: 'upper(name)' },
    match: (r) => r.part === 1,
    apply: (r) => ({ ...r, name: r.name === null ? null : (r.name as string).toUpperCase() }),
  },
  {
    name: 'setting the partition column moves the row',
    where: 'id = 7 OR id = 30',
    set: { part: 'part + 10' },
    match: (r) => r.id === 7n || r.id === 30n,
    apply: (r) => ({ ...r, part: (r.part as number) + 10 }),
  },
]

for (const layout of LAYOUTS) {
  describe(`UPDATE (${layout.name})`, () => {
    for (const c of CASES) {
      it(c.name, async () => {
        const t = await createTestTable(layout, BATCHES)
        try {
          const before = await latestVersion(t.table)
          const result = await t.table.update(
            c.where === undefined ? { set: c.set } : { where: c.where, set: c.set },
          )
          const matched = t.rows.filter(c.match)
          const expected = t.rows.map((r) => (c.match(r) ? c.apply(r) : r))
          assertSameRows(await scanRows(t.table), expected)
          assert.equal(result.metrics.numUpdatedRows, matched.length)
          if (matched.length === 0) {
            assert.equal(result.committed, false)
            assert.equal(await latestVersion(t.table), before)
            return
          }
          assert.equal(result.version, before + 1n)
          await checkUpdateCommit(t, result.version, matched, layout.dv)
        } finally {
          await t.cleanup()
        }
      })
    }

    if (layout.dv) {
      it('a second update on a file with a deletion vector grows that vector', async () => {
        const t = await createTestTable(layout, BATCHES)
        try {
          await t.table.update({ where: 'id = 3 OR id = 6', set: { name: "'a'" } })
          const second = await t.table.update({ where: 'id = 9', set: { name: "'b'" } })
          const actions = await commitActions(t.dir, second.version)
          const [removed] = removesOf(actions)
          assert.ok(removed?.deletionVector, 'the tombstone carries the old DV')
          const readd = addsOf(actions).find((a) => a.path === removed.path)
          assert.ok(readd?.deletionVector, 'the file comes back with a new DV')
          const first = 2n // ids 3, 6 and 9 share one file in both layouts
          assert.equal(removed.deletionVector.cardinality, first)
          assert.equal(readd.deletionVector.cardinality, first + 1n)
          assert.equal(second.metrics.numDeletionVectorsUpdated, 1)
          const expected = t.rows.map((r) =>
            r.id === 3n || r.id === 6n ? { ...r, name: 'a' } : r.id === 9n ? { ...r, name: 'b' } : r,
          )
          assertSameRows(await scanRows(t.table), expected)
        } finally {
          await t.cleanup()
        }
      })
    }
  })
}

/**
 * Checks one UPDATE commit against what the appends put where: exactly the files holding a
 * matched row are touched, partially matched files get a DV (or are copied), images are new files.
 */
async function checkUpdateCommit(
  t: TestTable,
  version: bigint,
  matched: readonly Row[],
  dv: boolean,
): Promise<void> {
  const actions = await commitActions(t.dir, version)
  assert.equal(commitInfoOf(actions).operation, 'UPDATE')
  const adds = addsOf(actions)
  const removes = removesOf(actions)
  for (const a of [...adds, ...removes]) assert.equal(a.dataChange, true, `${a.path} changes data`)

  const matchedIds = new Set(matched.map((r) => r.id as bigint))
  const touched = [...t.idsByFile].filter(([, ids]) => [...ids].some((id) => matchedIds.has(id)))
  assert.deepEqual(
    removes.map((r) => keyOf(r.path)).sort(),
    touched.map(([k]) => k).sort(),
    'only files holding a match',
  )

  let copied = 0
  for (const [key, ids] of touched) {
    const hits = [...ids].filter((id) => matchedIds.has(id)).length
    const readd = adds.find((a) => keyOf(a.path) === key)
    if (hits === ids.size || !dv) {
      assert.equal(readd, undefined, `${key} leaves the table`)
      copied += ids.size - hits
    } else {
      assert.ok(readd?.deletionVector, `${key} gets a DV`)
      assert.equal(readd.deletionVector.cardinality, BigInt(hits))
      assert.equal(readd.size, removes.find((r) => keyOf(r.path) === key)?.size)
    }
  }
  const fresh = adds.filter((a) => !t.idsByFile.has(keyOf(a.path)))
  assert.equal(
    fresh.reduce((n, a) => n + numRecords(a), 0),
    matched.length + copied,
    'new files hold the images and the copied rows',
  )
  const info = commitInfoOf(actions)
  const metrics = info.operationMetrics as Readonly<Record<string, string>>
  assert.equal(metrics.numUpdatedRows, String(matched.length))
  assert.equal(metrics.numCopiedRows, String(copied))
  assert.equal(await assertDuckDbReadsAdds(t.dir, Number(version), Number(version)), fresh.length)
}

describe('UPDATE input validation', () => {
  let t: TestTable
  before(async () => {
    t = await createTestTable({ partitioned: true, dv: true }, BATCHES)
  })
  after(async () => t.cleanup())

  const bad: readonly { name: string; options: unknown; code: DeltaErrorCode }[] = [
    { name: 'an unknown column in set', options: { set: { nope: '1' } }, code: 'DELTA_INVALID_ARGUMENT' },
    { name: 'a nested column in set', options: { set: { 'name.x': '1' } }, code: 'DELTA_INVALID_ARGUMENT' },
    {
      name: 'an unknown column in where',
      options: { where: 'nope = 1', set: { value: '1' } },
      code: 'DELTA_INVALID_ARGUMENT',
    },
    {
      name: 'an unknown column in a value',
      options: { set: { value: 'nope + 1' } },
      code: 'DELTA_INVALID_ARGUMENT',
    },
    { name: 'NULL for a NOT NULL column', options: { set: { id: 'NULL' } }, code: 'DELTA_INVALID_ARGUMENT' },
    {
      name: 'a value that is NULL at run time for a NOT NULL column',
      options: { where: 'name IS NULL', set: { id: 'CAST(name AS long)' } },
      code: 'DELTA_INVALID_ARGUMENT',
    },
    {
      name: 'a value of the wrong type',
      options: { where: 'id = 1', set: { id: "'abc'" } },
      code: 'DELTA_INVALID_ARGUMENT',
    },
    {
      name: 'a malformed predicate',
      options: { where: 'id = = 1', set: { value: '1' } },
      code: 'DELTA_INVALID_PREDICATE',
    },
    { name: 'an empty set', options: { set: {} }, code: 'DELTA_INVALID_ARGUMENT' },
    { name: 'a missing set', options: { where: 'id = 1' }, code: 'DELTA_INVALID_ARGUMENT' },
    {
      name: 'a column set twice',
      options: { set: { value: '1', VALUE: '2' } },
      code: 'DELTA_INVALID_ARGUMENT',
    },
  ]
  for (const b of bad) {
    it(`refuses ${b.name} without committing or leaving files`, async () => {
      const version = await latestVersion(t.table)
      const files = await listDataFiles(t.dir)
      await assert.rejects(
        () => t.table.update(b.options as never),
        (err) => isDeltaError(err, b.code),
      )
      assert.equal(await latestVersion(t.table), version)
      assert.deepEqual(await listDataFiles(t.dir), files)
    })
  }

  it('names an unquoted text value as a set expression, with the quoting that was meant', async () => {
    await assert.rejects(
      () => t.table.update({ where: 'id = 1', set: { name: 'bob' } }),
      (err: unknown) =>
        isDeltaError(err, 'DELTA_INVALID_ARGUMENT') &&
        err.message === "Unknown column 'bob' in the set expression for column 'name'" &&
        (err.hint ?? '').includes(`{ name: "'bob'" }`),
    )
  })

  it('refuses to change an append-only table', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'delta-rlc-ops-'))
    const table = await DeltaTable.create(dir, {
      schema: 'id long not null',
      properties: { 'delta.appendOnly': 'true' },
    })
    try {
      await table.append([{ id: 1n }])
      await assert.rejects(
        () => table.update({ set: { id: 'id + 1' } }),
        (err) => isDeltaError(err, 'DELTA_UNSUPPORTED'),
      )
      assert.equal(await latestVersion(table), 1n)
    } finally {
      await table.close()
      await rm(dir, { recursive: true, force: true })
    }
  })
})

describe('UPDATE in transactions', () => {
  it('is invisible until commit and then lands as one version', async () => {
    const t = await createTestTable({ partitioned: false, dv: true }, BATCHES)
    try {
      const txn = await t.table.begin()
      const metrics = await txn.update({ where: 'id = 1', set: { name: "'x'" } })
      assert.equal(metrics.numUpdatedRows, 1)
      assertSameRows(await scanRows(t.table), t.rows)
      const result = await txn.commit()
      assert.equal(result.operation, 'UPDATE')
      assertSameRows(
        await scanRows(t.table),
        t.rows.map((r) => (r.id === 1n ? { ...r, name: 'x' } : r)),
      )
    } finally {
      await t.cleanup()
    }
  })

  it('loses to a concurrent DELETE of rows of a file it read (flags off)', async () => {
    const t = await createTestTable({ partitioned: false, dv: true }, BATCHES)
    try {
      const loser = await t.table.begin()
      await loser.update({ where: 'id = 1', set: { name: "'x'" } })
      await t.table.delete('id = 2')
      // The winner re-adds the file with a DV: Delta reports the changed-data add first.
      await assert.rejects(
        () => loser.commit(),
        (err) => isDeltaError(err, 'DELTA_CONCURRENT_APPEND', 'DELTA_CONCURRENT_DELETE_READ'),
      )
      assertSameRows(
        await scanRows(t.table),
        t.rows.filter((r) => r.id !== 2n),
      )
    } finally {
      await t.cleanup()
    }
  })

  it('reconciles with a concurrent DELETE of other rows of the same file (row-level concurrency on)', async () => {
    const t = await createTestTable({ partitioned: false, dv: true }, BATCHES, {
      conflicts: { 'rowLevelConcurrency.enabled': true },
    })
    try {
      const loser = await t.table.begin()
      await loser.update({ where: 'id = 1', set: { name: "'x'" } })
      await t.table.delete('id = 2')
      const result = await loser.commit()
      assert.ok(result.reconciliations.some((r) => r.kind === 'case2-dv-union'))
      assertSameRows(
        await scanRows(t.table),
        t.rows.filter((r) => r.id !== 2n).map((r) => (r.id === 1n ? { ...r, name: 'x' } : r)),
      )
    } finally {
      await t.cleanup()
    }
  })

  it('deletes the files it wrote when its one-call commit loses a conflict', async () => {
    const t = await createTestTable({ partitioned: false, dv: true }, BATCHES)
    const table = await openWithHook(t.dir, 'rewrite', () => t.table.delete('id = 2'))
    try {
      const files = await listDataFiles(t.dir)
      await assert.rejects(
        () => table.update({ where: 'id = 1', set: { name: "'x'" } }),
        (err) => isDeltaError(err) && err.code.startsWith('DELTA_CONCURRENT'),
      )
      const live = await liveKeys(t.table)
      const added = (await listDataFiles(t.dir)).filter((k) => !files.includes(k))
      assert.ok(added.length > 0, 'the winner wrote a DV file')
      assert.deepEqual(
        added.filter((k) => !live.includes(k)),
        [],
        'no image file of the loser is left',
      )
    } finally {
      await closeHooked(table)
      await t.cleanup()
    }
  })
})
