/**
 * Reads every Spark-written golden table and checks what `expected.json` states about its log:
 * latest version, per-version snapshots, active files, DV cardinalities, checkpoint use, and the
 * expected errors. Row-level checks live in the scan tests. The assertions themselves are shared
 * with the remote-store suite (`test/helpers/golden-checks.ts`).
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { DuckDBInstance } from '@duckdb/node-api'
import { DeltaTable } from '../../src/table/delta-table.js'
import {
  GOLDEN_SKIP,
  type GoldenExpectation,
  loadExpected,
  prepareGoldenTable,
  TIME_TRAVEL_START_MS,
} from '../helpers/golden.js'
import {
  assertCheckpointRoundTrip,
  assertGoldenOpenFailures,
  assertHistory,
  assertLatestSnapshot,
  assertListedVersions,
  assertSchemaAndProtocolEvolve,
  readableGoldenTables,
} from '../helpers/golden-checks.js'

const expected = await loadExpected()

async function withTable<T>(name: string, fn: (table: DeltaTable, dir: string) => Promise<T>): Promise<T> {
  const prepared = await prepareGoldenTable(name)
  const table = await DeltaTable.open(prepared.dir)
  try {
    return await fn(table, prepared.dir)
  } finally {
    await table.close()
    await prepared.cleanup()
  }
}

describe('golden tables: log and snapshot', { skip: GOLDEN_SKIP }, () => {
  for (const name of readableGoldenTables(expected)) {
    const exp = expected[name] as GoldenExpectation
    it(`${name}: latest snapshot matches expected.json`, () =>
      withTable(name, (t) => assertLatestSnapshot(t, exp)))
    if (exp.versions) {
      it(`${name}: every listed version loads by time travel`, () =>
        withTable(name, (t) => assertListedVersions(t, exp)))
    }
  }

  it('versions-not-contiguous and deltalog-invalid-protocol-version are refused with their typed errors', async () => {
    const prepared: Array<{ cleanup(): Promise<void> }> = []
    try {
      await assertGoldenOpenFailures(async (name) => {
        const p = await prepareGoldenTable(name)
        prepared.push(p)
        return DeltaTable.open(p.dir)
      })
    } finally {
      await Promise.all(prepared.map((p) => p.cleanup()))
    }
  })

  it('log-replay-latest-metadata-protocol: schema and protocol evolve by version', () =>
    withTable('log-replay-latest-metadata-protocol', assertSchemaAndProtocolEvolve))

  it('time-travel-start-start20-start40: timestamps pick the version committed at or before them', async () => {
    await withTable('time-travel-start-start20-start40', async (table) => {
      const min = 60_000
      const cases: Array<[number, bigint]> = [
        [TIME_TRAVEL_START_MS, 0n],
        [TIME_TRAVEL_START_MS + 10 * min, 0n],
        [TIME_TRAVEL_START_MS + 20 * min, 1n],
        [TIME_TRAVEL_START_MS + 30 * min, 1n],
        [TIME_TRAVEL_START_MS + 40 * min, 2n],
      ]
      for (const [ts, version] of cases) {
        assert.equal(
          (await table.snapshot({ timestamp: ts })).version,
          version,
          `at ${new Date(ts).toISOString()}`,
        )
      }
      assert.equal(
        (await table.snapshot({ timestamp: new Date(TIME_TRAVEL_START_MS + 30 * min) })).version,
        1n,
      )
      for (const bad of [TIME_TRAVEL_START_MS + 50 * min, TIME_TRAVEL_START_MS - min]) {
        await assert.rejects(table.snapshot({ timestamp: bad }), { code: 'DELTA_VERSION_NOT_FOUND' })
      }
      for (const bad of [3n, -1n])
        await assert.rejects(table.snapshot({ version: bad }), { code: 'DELTA_VERSION_NOT_FOUND' })
    })
  })

  it('history lists every commit newest first with its operation', () =>
    withTable('snapshot-data3', assertHistory))
})

describe('golden tables: checkpoints we write', { skip: GOLDEN_SKIP }, () => {
  for (const name of readableGoldenTables(expected)) {
    it(`${name}: a checkpoint we write reproduces the snapshot and is read back from it`, async () => {
      await withTable(name, async (table, dir) => {
        const written = await assertCheckpointRoundTrip(table, () => DeltaTable.open(dir))
        // DuckDB, an independent Parquet reader, sees every action row of the checkpoint.
        const duck = await DuckDBInstance.create(':memory:')
        const con = await duck.connect()
        const counted = await con.runAndReadAll(
          `SELECT count(*), count(add), count(protocol), count(metaData) FROM read_parquet('${join(dir, written.key)}')`,
        )
        assert.deepEqual(
          counted.getRows()[0]?.map((x) => Number(x)),
          [written.size, written.numOfAddFiles, 1, 1],
        )
        con.closeSync()
        duck.closeSync()
      })
    })
  }
})
