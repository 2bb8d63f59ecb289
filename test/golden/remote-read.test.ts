/**
 * The golden-table read and row checks on non-local stores: each prepared table is uploaded to a
 * fresh location on a memory store, on Azurite and on s3rver, opened by its URL through the public
 * API, and held to the same `expected.json` facts as on local disk (the staging cache serves the
 * data files, the DV files are read by range through the store).
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { commitFileName, LOG_DIR } from '../../src/protocol/log-files.js'
import { DeltaTable } from '../../src/table/delta-table.js'
import { GOLDEN_SKIP, type GoldenExpectation, loadExpected, prepareGoldenTable } from '../helpers/golden.js'
import {
  assertCheckpointRoundTrip,
  assertColumnProjection,
  assertGoldenFilters,
  assertGoldenOpenFailures,
  assertGoldenRows,
  assertHistory,
  assertLatestSnapshot,
  assertListedVersions,
  assertSchemaAndProtocolEvolve,
  assertTimestampTravel,
  assertVacuumedVersionsFail,
  readableGoldenTables,
} from '../helpers/golden-checks.js'
import {
  azuriteBackend,
  memoryBackend,
  type RemoteBackend,
  type RemoteLocation,
  s3rverBackend,
  uploadDirectory,
} from '../helpers/remote-backends.js'

const expected = await loadExpected()
const BACKENDS: readonly RemoteBackend[] = [memoryBackend(), azuriteBackend(), s3rverBackend()]
const TIME_TRAVEL = 'time-travel-start-start20-start40'
const SPECIAL_CHAR = 'table-with-dv-special-char'
const TIME_TRAVEL_COMMITS = [0, 1, 2].map((v) => `${LOG_DIR}${commitFileName(BigInt(v))}`)

// The backends run side by side: most of the time goes to waiting on servers.
describe('golden tables on remote stores', { skip: GOLDEN_SKIP, concurrency: BACKENDS.length }, () => {
  for (const backend of BACKENDS) {
    describe(`golden tables on ${backend.name}`, { timeout: 150_000 }, () => {
      before(() => backend.start())
      after(() => backend.stop())

      /** Uploads a prepared golden table to a fresh location. */
      async function upload(name: string): Promise<RemoteLocation> {
        const prepared = await prepareGoldenTable(name)
        try {
          const loc = backend.fresh('golden')
          // Object stores set modification times themselves: commit times come from upload order.
          await uploadDirectory(prepared.dir, loc.store, {
            last: name === TIME_TRAVEL ? TIME_TRAVEL_COMMITS : [],
            gapMs: backend.mtimeResolutionMs + 100,
          })
          return loc
        } finally {
          await prepared.cleanup()
        }
      }

      for (const name of readableGoldenTables(expected)) {
        const exp = expected[name] as GoldenExpectation
        if (name === SPECIAL_CHAR) {
          it(`${name}: skipped`, {
            skip: 'its absolute (p) DV path names a local file, which cannot point into a bucket',
          }, () => {})
          continue
        }
        it(`${name}: log, snapshots, rows, filters and a written checkpoint match expected.json`, async () => {
          const loc = await upload(name)
          const table = await DeltaTable.open(loc.location, loc.openOptions)
          try {
            await assertLatestSnapshot(table, exp)
            await assertListedVersions(table, exp)
            await assertGoldenRows(name, table, exp)
            await assertGoldenFilters(name, table)
            if (name === 'snapshot-vacuumed') await assertVacuumedVersionsFail(table)
            if (name === 'log-replay-latest-metadata-protocol') await assertSchemaAndProtocolEvolve(table)
            if (name === 'snapshot-data3') await assertHistory(table)
            if (name === 'dv-partitioned-with-checkpoint') await assertColumnProjection(table)
            if (name === TIME_TRAVEL) {
              const times: number[] = []
              for (const key of TIME_TRAVEL_COMMITS) times.push((await loc.store.head(key)).lastModified)
              assert.ok(
                times.every((t, i) => i === 0 || t > (times[i - 1] as number)),
                `commit times increase: ${times.join(', ')}`,
              )
              await assertTimestampTravel(table, times)
            }
            await assertCheckpointRoundTrip(table, () => DeltaTable.open(loc.location, loc.openOptions))
          } finally {
            await table.close()
          }
        })
      }

      it('versions-not-contiguous and deltalog-invalid-protocol-version are refused with typed errors', async () => {
        await assertGoldenOpenFailures(async (name) => {
          const loc = await upload(name)
          return DeltaTable.open(loc.location, loc.openOptions)
        })
      })
    })
  }
})
