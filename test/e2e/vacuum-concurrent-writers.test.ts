/**
 * VACUUM against writers in flight: an untracked file younger than the minimum age is never
 * deleted; VACUUM writes Delta's START and END commits; a writer whose staged file a VACUUM
 * deleted aborts with a typed, retryable error instead of committing a dangling reference; and
 * a commit landing between VACUUM's snapshot and its START keeps its files.
 */
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { utimes } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { parseConflictFlags } from '../../src/conflict/flags.js'
import { ConcurrentModificationError, isDeltaError } from '../../src/errors/index.js'
import { vacuumTable } from '../../src/ops/vacuum.js'
import { MIN_UNTRACKED_FILE_AGE_MS, vacuumStartInfo } from '../../src/protocol/vacuum-commits.js'
import { commitLogOnly } from '../../src/txn/log-only-commit.js'
import { createTestTable, listDataFiles, scanRows, standardRow } from './ops-support.js'

const ROWS = Array.from({ length: 4 }, (_, i) => standardRow(i))
const MORE = Array.from({ length: 3 }, (_, i) => standardRow(100 + i))
const ZERO = { retentionHours: 0, enforceRetentionDuration: false } as const

/** Sets a file's modification time `hours` into the past. */
async function age(dir: string, key: string, hours: number): Promise<void> {
  const t = new Date(Date.now() - hours * 3_600_000)
  await utimes(join(dir, key), t, t)
}

describe('VACUUM and writers in flight', () => {
  it('never deletes an untracked file younger than the minimum age, even at retention 0', async () => {
    const t = await createTestTable({ partitioned: false, dv: false }, [ROWS])
    try {
      const before = new Set(await listDataFiles(t.dir))
      const txn = await t.table.begin()
      await txn.append(MORE)
      const staged = (await listDataFiles(t.dir)).filter((k) => !before.has(k))
      assert.equal(staged.length, 1, 'the append staged one file')
      const result = await t.table.vacuum(ZERO)
      assert.deepEqual(result.files, [], 'the staged file is younger than one hour')
      await txn.commit()
      assert.equal((await scanRows(t.table)).length, ROWS.length + MORE.length)
      assert.ok(existsSync(join(t.dir, staged[0] as string)))
      assert.equal(MIN_UNTRACKED_FILE_AGE_MS, 3_600_000)
    } finally {
      await t.cleanup()
    }
  })

  it('writes VACUUM START and VACUUM END with Delta’s parameters and metrics', async () => {
    const t = await createTestTable({ partitioned: false, dv: false }, [ROWS, MORE])
    try {
      await t.table.delete('id = 1')
      const result = await t.table.vacuum(ZERO)
      assert.ok(result.files.length > 0, 'the rewritten file is deleted')
      const [end, start] = await t.table.history({ limit: 2 })
      assert.equal(start?.operation, 'VACUUM START')
      assert.deepEqual(start?.commitInfo?.operationParameters, {
        retentionCheckEnabled: 'false',
        defaultRetentionMillis: '604800000',
        specifiedRetentionMillis: '0',
      })
      assert.deepEqual(start?.commitInfo?.operationMetrics, {
        numFilesToDelete: String(result.files.length),
        sizeOfDataToDelete: String(result.bytes),
      })
      assert.equal(end?.operation, 'VACUUM END')
      assert.deepEqual(end?.commitInfo?.operationParameters, { status: 'COMPLETED' })
      assert.deepEqual(end?.commitInfo?.operationMetrics, {
        numDeletedFiles: String(result.files.length),
        numVacuumedDirectories: '1',
      })
      assert.equal(result.startVersion, start?.version)
      assert.equal(result.endVersion, end?.version)
      const latest = end?.version as bigint
      await t.table.vacuum({ ...ZERO, dryRun: true })
      await t.table.vacuum({ ...ZERO, logging: false })
      assert.equal(
        (await t.table.history({ limit: 1 }))[0]?.version,
        latest,
        'dry run and logging: false write none',
      )
    } finally {
      await t.cleanup()
    }
  })

  it('a writer whose staged file VACUUM deleted aborts with DELTA_CONCURRENT_VACUUM', async () => {
    const t = await createTestTable({ partitioned: false, dv: false }, [ROWS])
    try {
      const before = new Set(await listDataFiles(t.dir))
      const txn = await t.table.begin()
      await txn.append(MORE)
      const [staged] = (await listDataFiles(t.dir)).filter((k) => !before.has(k))
      // A writer that took longer than the minimum age between its write and its commit.
      await age(t.dir, staged as string, 2)
      const result = await t.table.vacuum(ZERO)
      assert.deepEqual(result.files, [staged])
      const version = (await t.table.history({ limit: 1 }))[0]?.version
      await assert.rejects(
        () => txn.commit(),
        (err) =>
          err instanceof ConcurrentModificationError &&
          isDeltaError(err, 'DELTA_CONCURRENT_VACUUM') &&
          err.file === staged &&
          err.winnerOperation === 'VACUUM START' &&
          /rerun/.test(err.hint ?? ''),
      )
      assert.equal((await t.table.history({ limit: 1 }))[0]?.version, version, 'nothing committed')
      assert.equal((await scanRows(t.table)).length, ROWS.length, 'the table reads')
      // Rerunning the operation works.
      await t.table.append(MORE)
      assert.equal((await scanRows(t.table)).length, ROWS.length + MORE.length)
    } finally {
      await t.cleanup()
    }
  })

  it('while a VACUUM START has no END, a file old enough for it to choose aborts the writer', async () => {
    const t = await createTestTable({ partitioned: false, dv: false }, [ROWS])
    try {
      const before = new Set(await listDataFiles(t.dir))
      const txn = await t.table.begin()
      await txn.append(MORE)
      const [staged] = (await listDataFiles(t.dir)).filter((k) => !before.has(k))
      await age(t.dir, staged as string, 2)
      // A VACUUM that has listed and committed its START, and is still deleting.
      const snap = await t.table.snapshot()
      await commitLogOnly(
        t.table.engine,
        snap,
        vacuumStartInfo({
          retentionCheckEnabled: false,
          specifiedRetentionMillis: 0,
          defaultRetentionMillis: 604_800_000,
          numFilesToDelete: 1,
          sizeOfDataToDelete: 1,
        }),
        { flags: parseConflictFlags({}) },
      )
      await assert.rejects(
        () => txn.commit(),
        (err) => isDeltaError(err, 'DELTA_CONCURRENT_VACUUM') && /still running/.test(err.message),
      )
      // A fresh file is younger than anything that VACUUM listed: it commits.
      await t.table.append(MORE)
      assert.equal((await scanRows(t.table)).length, ROWS.length + MORE.length)
    } finally {
      await t.cleanup()
    }
  })

  it('keeps the files of a commit that landed after the snapshot VACUUM planned on', async () => {
    const t = await createTestTable({ partitioned: false, dv: false }, [ROWS])
    try {
      const planned = await t.table.snapshot()
      const before = new Set(await listDataFiles(t.dir))
      await t.table.append(MORE)
      const [added] = (await listDataFiles(t.dir)).filter((k) => !before.has(k))
      await age(t.dir, added as string, 2)
      const result = await vacuumTable(t.table.engine, planned, ZERO)
      assert.deepEqual(result.files, [], 'the file of the later commit is kept')
      assert.ok(existsSync(join(t.dir, added as string)))
      assert.equal((await scanRows(t.table)).length, ROWS.length + MORE.length)
    } finally {
      await t.cleanup()
    }
  })
})
