/**
 * Reads every Spark-written golden table and checks what `expected.json` states about its log:
 * latest version, per-version snapshots, active files, DV cardinalities, checkpoint use, and the
 * expected errors. Row-level checks live in the scan tests.
 */
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { DuckDBInstance } from '@duckdb/node-api'
import { parseStats } from '../../src/protocol/stats.js'
import { DeltaTable } from '../../src/table/delta-table.js'
import {
  GOLDEN_SKIP,
  type GoldenExpectation,
  loadExpected,
  prepareGoldenTable,
  TIME_TRAVEL_START_MS,
} from '../helpers/golden.js'

const expected = await loadExpected()
const names = Object.keys(expected).sort()

async function withTable<T>(
  name: string,
  fn: (table: DeltaTable, dir: string) => Promise<T>,
  opts?: { specialCharEncoded?: boolean },
): Promise<T> {
  const prepared = await prepareGoldenTable(name, opts)
  const table = await DeltaTable.open(prepared.dir)
  try {
    return await fn(table, prepared.dir)
  } finally {
    await table.close()
    await prepared.cleanup()
  }
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

describe('golden tables: log and snapshot', { skip: GOLDEN_SKIP }, () => {
  for (const name of names) {
    const exp = expected[name] as GoldenExpectation
    if (exp.expectError && exp.latestVersion === null) continue
    if (name === 'deltalog-invalid-protocol-version') continue

    it(`${name}: latest snapshot matches expected.json`, async () => {
      await withTable(name, async (table) => {
        const snap = await table.snapshot()
        assert.equal(snap.version, BigInt(exp.latestVersion ?? -1))
        assert.deepEqual([...snap.partitionColumns], [...exp.partitionColumns])
        const files = await snap.files()
        const stats = exp.logStats ?? {}
        if (stats.numActiveFiles !== undefined)
          assert.equal(files.length, stats.numActiveFiles, 'active files')
        if (exp.activeFiles) assert.deepEqual(files.map((f) => f.path).sort(), [...exp.activeFiles].sort())
        const facts = logFacts(files)
        if (stats.sumNumRecords !== undefined)
          assert.equal(facts.sumNumRecords, stats.sumNumRecords, 'sum of numRecords')
        if (stats.numFilesWithDV !== undefined)
          assert.equal(facts.numFilesWithDV, stats.numFilesWithDV, 'files with DV')
        if (stats.sumDvCardinality !== undefined)
          assert.equal(facts.sumDvCardinality, stats.sumDvCardinality, 'DV cardinality')
        if (stats.checkpointVersion !== undefined) {
          assert.equal(
            snap.logSegment.checkpoint?.version,
            BigInt(stats.checkpointVersion),
            'checkpoint used',
          )
        }
      })
    })

    if (exp.versions) {
      it(`${name}: every listed version loads by time travel`, async () => {
        await withTable(name, async (table) => {
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
        })
      })
    }
  }

  it('versions-not-contiguous: refused with versions-not-contiguous', async () => {
    const prepared = await prepareGoldenTable('versions-not-contiguous')
    try {
      await assert.rejects(DeltaTable.open(prepared.dir), (err: unknown) => {
        assert.equal((err as { code?: string }).code, 'DELTA_INVALID_TABLE')
        assert.equal((err as { reason?: string }).reason, 'versions-not-contiguous')
        return true
      })
    } finally {
      await prepared.cleanup()
    }
  })

  it('deltalog-invalid-protocol-version: reader version 99 is refused', async () => {
    const prepared = await prepareGoldenTable('deltalog-invalid-protocol-version')
    try {
      await assert.rejects(DeltaTable.open(prepared.dir), (err: unknown) => {
        assert.equal((err as { code?: string }).code, 'DELTA_UNSUPPORTED_PROTOCOL_VERSION')
        assert.equal((err as { requiredVersion?: number }).requiredVersion, 99)
        return true
      })
    } finally {
      await prepared.cleanup()
    }
  })

  it('log-replay-latest-metadata-protocol: schema and protocol evolve by version', async () => {
    await withTable('log-replay-latest-metadata-protocol', async (table) => {
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
    })
  })

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

  it('history lists every commit newest first with its operation', async () => {
    await withTable('snapshot-data3', async (table) => {
      const history = await table.history()
      assert.deepEqual(
        history.map((h) => h.version),
        [3n, 2n, 1n, 0n],
      )
      assert.ok(history.every((h) => typeof h.operation === 'string' && h.operation.length > 0))
      assert.equal((await table.history({ limit: 2 })).length, 2)
    })
  })
})

describe('golden tables: checkpoints we write', { skip: GOLDEN_SKIP }, () => {
  for (const name of names) {
    const exp = expected[name] as GoldenExpectation
    if (exp.expectError && exp.latestVersion === null) continue
    if (name === 'deltalog-invalid-protocol-version') continue
    it(`${name}: a checkpoint we write reproduces the snapshot and is read back from it`, async () => {
      await withTable(name, async (table, dir) => {
        const before = await table.snapshot()
        const written = await table.checkpoint()
        assert.equal(written.version, before.version)
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
        const reopened = await DeltaTable.open(dir)
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
      })
    })
  }
})
