/**
 * The golden-table assertions as functions of an open table, whatever store it lives on: what
 * `expected.json` states about the log, the snapshots, the rows, the documented filters, and the
 * documented failures. The local suites (`test/golden/read.test.ts`, `rows.test.ts`) and the
 * remote one run these same functions.
 */
import assert from 'node:assert/strict'
import { parseStats } from '../../src/protocol/stats.js'
import type { CheckpointResult } from '../../src/snapshot/write-checkpoint.js'
import type { DeltaTable } from '../../src/table/delta-table.js'
import type { GoldenExpectation } from './golden.js'

/** Tables with a readable latest snapshot (the error tables have their own checks). */
export function readableGoldenTables(expected: Readonly<Record<string, GoldenExpectation>>): string[] {
  return Object.keys(expected)
    .sort()
    .filter((name) => {
      const exp = expected[name] as GoldenExpectation
      return !(exp.expectError && exp.latestVersion === null) && name !== 'deltalog-invalid-protocol-version'
    })
}

/** A row value in the encoding of expected.json (see the fixtures README). */
export function normalizeGoldenValue(v: unknown): unknown {
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString()
  if (v instanceof Uint8Array) return Buffer.from(v).toString('hex')
  if (v instanceof Map)
    return [...v.entries()].map(([k, x]) => [normalizeGoldenValue(k), normalizeGoldenValue(x)])
  if (Array.isArray(v)) return v.map(normalizeGoldenValue)
  if (v !== null && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, normalizeGoldenValue(x)]))
  }
  return v
}

function multiset(rows: readonly unknown[][]): string[] {
  return rows.map((r) => JSON.stringify(r)).sort()
}

function logFacts(
  files: readonly { path: string; stats?: string; deletionVector?: { cardinality: bigint } }[],
) {
  let sumNumRecords: number | null = 0
  let numFilesWithDV = 0
  let sumDvCardinality = 0
  for (const f of files) {
    const n = parseStats(f.stats)?.numRecords
    sumNumRecords = n === undefined || sumNumRecords === null ? null : sumNumRecords + Number(n)
    if (f.deletionVector) {
      numFilesWithDV++
      sumDvCardinality += Number(f.deletionVector.cardinality)
    }
  }
  return { sumNumRecords, numFilesWithDV, sumDvCardinality }
}

/**
 * The latest snapshot: version, partitioning, active files and the log statistics.
 *
 * @param table - the open table
 * @param exp - its expectation
 */
export async function assertLatestSnapshot(table: DeltaTable, exp: GoldenExpectation): Promise<void> {
  const snap = await table.snapshot()
  assert.equal(snap.version, BigInt(exp.latestVersion ?? -1))
  assert.deepEqual([...snap.partitionColumns], [...exp.partitionColumns])
  const files = await snap.files()
  const stats = exp.logStats ?? {}
  if (stats.numActiveFiles !== undefined) assert.equal(files.length, stats.numActiveFiles, 'active files')
  if (exp.activeFiles) assert.deepEqual(files.map((f) => f.path).sort(), [...exp.activeFiles].sort())
  const facts = logFacts(files)
  if (stats.sumNumRecords !== undefined) assert.equal(facts.sumNumRecords, stats.sumNumRecords, 'numRecords')
  if (stats.numFilesWithDV !== undefined) assert.equal(facts.numFilesWithDV, stats.numFilesWithDV, 'DV files')
  if (stats.sumDvCardinality !== undefined) {
    assert.equal(facts.sumDvCardinality, stats.sumDvCardinality, 'DV cardinality')
  }
  if (stats.checkpointVersion !== undefined) {
    assert.equal(snap.logSegment.checkpoint?.version, BigInt(stats.checkpointVersion), 'checkpoint used')
  }
}

/**
 * Every version `expected.json` lists loads by time travel with its active files.
 *
 * @param table - the open table
 * @param exp - its expectation
 */
export async function assertListedVersions(table: DeltaTable, exp: GoldenExpectation): Promise<void> {
  for (const [v, facts] of Object.entries(exp.versions ?? {})) {
    const snap = await table.snapshot({ version: BigInt(v) })
    assert.equal(snap.version, BigInt(v))
    if (facts.activeFiles) {
      assert.deepEqual(
        (await snap.files()).map((f) => f.path).sort(),
        [...facts.activeFiles].sort(),
        `version ${v}`,
      )
    }
  }
}

/**
 * The latest rows equal `expectedRows` as a multiset, and every listed version has its row count
 * (through both `count()` and `toArray()`). Does nothing for tables without rows.
 *
 * @param name - the table name
 * @param table - the open table
 * @param exp - its expectation
 */
export async function assertGoldenRows(
  name: string,
  table: DeltaTable,
  exp: GoldenExpectation,
): Promise<void> {
  if (!exp.expectedRows || exp.rowCount === null) return
  const rows = await table.scan().toArray()
  const cols = exp.expectedRows.columns
  const actual = rows.map((r) => cols.map((c) => normalizeGoldenValue(r[c])))
  assert.equal(rows.length, exp.rowCount)
  assert.deepEqual(multiset(actual), multiset(exp.expectedRows.rows))
  // The data of the older versions of this table was vacuumed: see assertVacuumedVersionsFail.
  if (name === 'snapshot-vacuumed') return
  for (const [v, facts] of Object.entries(exp.versions ?? {})) {
    if (facts.rowCount === undefined) continue
    assert.equal(await table.scan({ version: BigInt(v) }).count(), facts.rowCount, `version ${v}`)
    assert.equal((await table.scan({ version: BigInt(v) }).toArray()).length, facts.rowCount, `version ${v}`)
  }
}

/** The documented filters: table, predicate, matching rows. */
export const GOLDEN_FILTERS: ReadonlyArray<readonly [string, string, number]> = [
  ['dv-partitioned-with-checkpoint', 'part >= 7', 12],
  ['dv-partitioned-with-checkpoint', 'part = 0', 2],
  ['dv-with-columnmapping', 'part = 0', 2],
  ['data-skipping-partition-and-data-column', 'part > 0 AND id > 0', 1],
  ['table-with-dv-large', 'value < 200', 198],
  ['partitioned-table-with-dv-large', 'partCol = 0 AND id < 1000', 97],
]

/**
 * The documented filters of one table select their documented number of rows.
 *
 * @param name - the table name
 * @param table - the open table
 */
export async function assertGoldenFilters(name: string, table: DeltaTable): Promise<void> {
  for (const [t, where, count] of GOLDEN_FILTERS) {
    if (t !== name) continue
    assert.equal((await table.scan({ where }).toArray()).length, count, where)
    assert.equal(await table.scan({ where }).count(), count, where)
  }
}

/**
 * A checkpoint written now reproduces the snapshot and is what a fresh open reads.
 *
 * @param table - the open table
 * @param reopen - opens the same table again
 * @returns what the checkpoint wrote, for checks that need the file itself
 */
export async function assertCheckpointRoundTrip(
  table: DeltaTable,
  reopen: () => Promise<DeltaTable>,
): Promise<CheckpointResult> {
  const before = await table.snapshot()
  const written = await table.checkpoint()
  assert.equal(written.version, before.version)
  const reopened = await reopen()
  try {
    const after = await reopened.snapshot()
    assert.equal(after.logSegment.checkpoint?.version, before.version, 'the new checkpoint is used')
    assert.equal(after.logSegment.commits.length, 0)
    assert.deepEqual(after.protocol, before.protocol)
    assert.deepEqual(after.metadata, before.metadata)
    const key = (f: { path: string; deletionVector?: unknown; size: bigint; stats?: string }) =>
      JSON.stringify([f.path, f.deletionVector ?? null, f.size, f.stats ?? null], (_k, v) =>
        typeof v === 'bigint' ? v.toString() : v,
      )
    assert.deepEqual((await after.files()).map(key).sort(), (await before.files()).map(key).sort())
    assert.deepEqual([...after.setTransactions().entries()], [...before.setTransactions().entries()])
  } finally {
    await reopened.close()
  }
  return written
}

/**
 * `snapshot-vacuumed`: the log of every version replays, the data of versions 0..4 is gone.
 *
 * @param table - the open table
 */
export async function assertVacuumedVersionsFail(table: DeltaTable): Promise<void> {
  assert.equal(await table.scan().count(), 20)
  for (const v of [0n, 1n, 2n, 3n, 4n]) {
    assert.equal((await table.snapshot({ version: v })).version, v)
    await assert.rejects(table.scan({ version: v }).toArray(), { code: 'DELTA_FILE_NOT_FOUND' })
  }
}

/**
 * `log-replay-latest-metadata-protocol`: schema and protocol evolve by version.
 *
 * @param table - the open table
 */
export async function assertSchemaAndProtocolEvolve(table: DeltaTable): Promise<void> {
  const v0 = await table.snapshot({ version: 0n })
  assert.deepEqual(
    v0.schema.fields.map((f) => f.name),
    ['col1'],
  )
  const v2 = await table.snapshot()
  assert.deepEqual(
    v2.schema.fields.map((f) => f.name),
    ['col1', 'col2'],
  )
  assert.equal(v2.protocol.minReaderVersion, 3)
  assert.deepEqual([...(v2.protocol.writerFeatures ?? [])].sort(), ['appendOnly', 'invariants'])
}

/**
 * `snapshot-data3`: history lists every commit newest first with its operation.
 *
 * @param table - the open table
 */
export async function assertHistory(table: DeltaTable): Promise<void> {
  const history = await table.history()
  assert.deepEqual(
    history.map((h) => h.version),
    [3n, 2n, 1n, 0n],
  )
  assert.ok(history.every((h) => typeof h.operation === 'string' && h.operation.length > 0))
  assert.equal((await table.history({ limit: 2 })).length, 2)
}

/**
 * `dv-partitioned-with-checkpoint`: the `columns` option projects and orders columns.
 *
 * @param table - the open table
 */
export async function assertColumnProjection(table: DeltaTable): Promise<void> {
  const rows = await table.scan({ columns: ['col2', 'part'], where: 'col1 = 31' }).toArray()
  assert.deepEqual(rows, [{ col2: 'foo1', part: 1 }])
  assert.deepEqual(Object.keys(rows[0] ?? {}), ['col2', 'part'])
  await assert.rejects(table.scan({ columns: ['nope'] }).toArray(), { code: 'DELTA_INVALID_ARGUMENT' })
}

/**
 * Timestamp time travel against commit times: each commit's own time selects it, a time between
 * two commits selects the earlier, and times before the first or after the last commit fail.
 *
 * @param table - the open table
 * @param commitTimes - the modification time of commit 0, 1, 2... in ms
 */
export async function assertTimestampTravel(
  table: DeltaTable,
  commitTimes: readonly number[],
): Promise<void> {
  for (let v = 0; v < commitTimes.length; v++) {
    const t = commitTimes[v] as number
    assert.equal((await table.snapshot({ timestamp: t })).version, BigInt(v), `at commit ${v}`)
    const next = commitTimes[v + 1]
    if (next !== undefined && next - t > 1) {
      const between = t + Math.floor((next - t) / 2)
      assert.equal(
        (await table.snapshot({ timestamp: between })).version,
        BigInt(v),
        `between ${v} and ${v + 1}`,
      )
      assert.equal((await table.snapshot({ timestamp: new Date(between) })).version, BigInt(v))
    }
  }
  const first = commitTimes[0] as number
  const last = commitTimes[commitTimes.length - 1] as number
  for (const bad of [first - 60_000, last + 10 * 60_000]) {
    await assert.rejects(table.snapshot({ timestamp: bad }), { code: 'DELTA_VERSION_NOT_FOUND' })
  }
  for (const bad of [BigInt(commitTimes.length), -1n]) {
    await assert.rejects(table.snapshot({ version: bad }), { code: 'DELTA_VERSION_NOT_FOUND' })
  }
}

/**
 * The two golden tables that must not open, and how they fail.
 *
 * @param open - opens the named (uploaded) table
 */
export async function assertGoldenOpenFailures(open: (name: string) => Promise<DeltaTable>): Promise<void> {
  await assert.rejects(open('versions-not-contiguous'), (err: unknown) => {
    assert.equal((err as { code?: string }).code, 'DELTA_INVALID_TABLE')
    assert.equal((err as { reason?: string }).reason, 'versions-not-contiguous')
    return true
  })
  await assert.rejects(open('deltalog-invalid-protocol-version'), (err: unknown) => {
    assert.equal((err as { code?: string }).code, 'DELTA_UNSUPPORTED_PROTOCOL_VERSION')
    assert.equal((err as { requiredVersion?: number }).requiredVersion, 99)
    return true
  })
}
