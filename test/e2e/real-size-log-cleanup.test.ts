/**
 * A table whose log was cleaned up to a checkpoint, as Delta's log cleanup leaves it: every
 * commit and checkpoint file below the kept checkpoint is gone. Reads, writes, history and VACUUM
 * keep working; time travel reaches every version from the kept checkpoint on and refuses older
 * ones with `DELTA_VERSION_NOT_FOUND`, naming the range that is still available. The commit times
 * are the files' own (copies keep them) or, on a last table, In-Commit Timestamps.
 */
import assert from 'node:assert/strict'
import { cp, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { isDeltaError, VersionNotFoundError } from '../../src/errors/index.js'
import { DeltaTable } from '../../src/table/delta-table.js'
import {
  applyToModel,
  applyToTable,
  assertTableIs,
  checkpointVersions,
  cleanUpLogBefore,
  commitVersions,
  MERGE_ID_BASE,
  type ModelRow,
  type Op,
} from '../helpers/real-size.js'

const INTERVAL = 10
/** Commits after the create: checkpoints at 10, 20 and 30, then three more commits. */
const COMMITS = 33

/** Appends, deletes, updates and merges in turn, `count` of them, with ids from `next` up. */
function script(count: number, next: number, salt: number): { ops: Op[]; next: number } {
  const ops: Op[] = []
  for (let i = 0; ops.length < count; i++) {
    switch (i % 4) {
      case 0:
        ops.push({ kind: 'append', from: next, count: 120 })
        next += 120
        break
      case 1:
        ops.push({ kind: 'delete', where: { t: 'mod', m: 17, r: (i + salt) % 17 } })
        break
      case 2:
        ops.push({
          kind: 'update',
          where: { t: 'mod', m: 13, r: (i + salt) % 13 },
          set: { t: 'addValue', k: 2 },
        })
        break
      default: {
        const ids: number[] = []
        for (let k = 0; k < 30; k++) ids.push((i * 31 + k * 7) % next)
        for (let k = 0; k < 10; k++) ids.push(MERGE_ID_BASE + (salt * 100 + i) * 10 + k)
        ops.push({ kind: 'merge', mode: 'upsert', ids: [...new Set(ids)], salt: salt + i })
      }
    }
  }
  return { ops, next }
}

let base = ''
let template = ''
/** The model at every version of the template table. */
const modelAt: ModelRow[][] = [[]]
let nextId = 0

before(async () => {
  base = await mkdtemp(join(tmpdir(), 'delta-rlc-log-cleanup-'))
  template = join(base, 'template')
  const table = await DeltaTable.create(template, {
    schema: 'id long not null, name string, value double, part int',
    properties: {
      'delta.enableDeletionVectors': 'true',
      'delta.checkpointInterval': String(INTERVAL),
    },
  })
  try {
    const { ops, next } = script(COMMITS, 0, 1)
    nextId = next
    for (const op of ops) {
      const result = await applyToTable(table, op)
      assert.equal(result.version, BigInt(modelAt.length), 'every operation commits')
      modelAt.push(applyToModel(op, modelAt.at(-1)!))
    }
  } finally {
    await table.close()
  }
  assert.deepEqual(await checkpointVersions(template), [10n, 20n, 30n])
})
after(() => rm(base, { recursive: true, force: true }))

/** A copy of the template table, cleaned up to the checkpoint at `keep`, opened. */
async function cleanedCopy(name: string, keep: bigint): Promise<{ dir: string; table: DeltaTable }> {
  const dir = join(base, name)
  // Commit file times are the commit times time travel by timestamp uses: keep them.
  await cp(template, dir, { recursive: true, preserveTimestamps: true })
  const deleted = await cleanUpLogBefore(dir, keep)
  assert.ok(deleted.length >= Number(keep), `${deleted.length} log files deleted`)
  assert.equal((await commitVersions(dir))[0], keep, 'the log starts at the kept checkpoint')
  return { dir, table: await DeltaTable.open(dir) }
}

/** Asserts that time travel to `version` is refused with the available range. */
async function assertVersionGone(table: DeltaTable, version: bigint, earliest: bigint, latest: bigint) {
  await assert.rejects(
    () => table.scan({ version }).toArray(),
    (err) => {
      assert.ok(isDeltaError(err, 'DELTA_VERSION_NOT_FOUND'), `version ${version}: ${String(err)}`)
      assert.ok(err instanceof VersionNotFoundError)
      assert.equal(err.earliest, earliest, `version ${version}: the earliest available version`)
      assert.equal(err.latest, latest, `version ${version}: the latest version`)
      return true
    },
  )
}

const LATEST = BigInt(COMMITS)
const NEXT_CHECKPOINT = 40n

for (const keep of [30n, 20n]) {
  describe(`a log cleaned up to the checkpoint at version ${keep} (checkpoints at 10, 20, 30; latest ${LATEST})`, () => {
    let dir = ''
    let table: DeltaTable
    before(async () => {
      ;({ dir, table } = await cleanedCopy(`cleaned-${keep}`, keep))
    })
    after(() => table?.close())

    it('reads the latest version, and every version from the kept checkpoint on', async () => {
      await assertTableIs(table, modelAt.at(-1)!, 'latest')
      for (let v = keep; v <= LATEST; v++) {
        await assertTableIs(table, modelAt[Number(v)]!, `version ${v}`, { version: v })
      }
    })

    it('refuses time travel to a removed version with DELTA_VERSION_NOT_FOUND and the available range', async () => {
      for (const v of [0n, 1n, 9n, 10n, keep - 1n]) await assertVersionGone(table, v, keep, LATEST)
      await assert.rejects(
        () => table.snapshot({ version: LATEST + 1n }),
        (err) => isDeltaError(err, 'DELTA_VERSION_NOT_FOUND'),
      )
    })

    it('history lists the commits still in the log, and their timestamps time travel to them', async () => {
      const history = await table.history()
      const versions: bigint[] = []
      for (let v = LATEST; v >= keep; v--) versions.push(v)
      assert.deepEqual(
        history.map((h) => h.version),
        versions,
      )
      for (const h of history) {
        const snap = await table.snapshot({ timestamp: h.timestamp })
        assert.equal(snap.version, h.version, `the timestamp history reports for version ${h.version}`)
      }
      const earliest = history.at(-1)!
      await assert.rejects(
        () => table.snapshot({ timestamp: earliest.timestamp - 60_000 }),
        (err) => isDeltaError(err, 'DELTA_VERSION_NOT_FOUND'),
      )
    })

    it('takes appends, deletes, updates, merges and OPTIMIZE, writes the next checkpoint, and vacuums', async () => {
      // Just enough commits to reach the next checkpoint interval, the last an OPTIMIZE.
      const { ops } = script(Number(NEXT_CHECKPOINT - LATEST) - 1, nextId, 2)
      ops.push({ kind: 'optimize' })
      const models = modelAt.slice()
      for (const op of ops) {
        const result = await applyToTable(table, op)
        assert.equal(result.version, BigInt(models.length))
        models.push(applyToModel(op, models.at(-1)!))
        await assertTableIs(table, models.at(-1)!, `version ${result.version}`)
      }
      const newest = BigInt(models.length - 1)
      assert.ok(
        (await checkpointVersions(dir)).includes(NEXT_CHECKPOINT),
        'a checkpoint on top of the cleaned log',
      )
      for (const v of [keep, LATEST, newest - 1n])
        await assertTableIs(table, models[Number(v)]!, `version ${v} after the new commits`, { version: v })
      await assertVersionGone(table, keep - 1n, keep, newest)

      const kept = await table.vacuum()
      assert.deepEqual(kept.files, [], 'nothing inside the retention is deleted')
      await table.vacuum({ retentionHours: 0, enforceRetentionDuration: false })
      const reopened = await DeltaTable.open(dir)
      try {
        await assertTableIs(reopened, models.at(-1)!, 'a fresh handle after VACUUM')
      } finally {
        await reopened.close()
      }
    })
  })
}

describe('a log with In-Commit Timestamps cleaned up to its newest checkpoint', () => {
  const dir = () => join(base, 'ict')
  const models: ModelRow[][] = [[]]
  let table: DeltaTable
  before(async () => {
    const created = await DeltaTable.create(dir(), {
      schema: 'id long not null, name string, value double, part int',
      properties: {
        'delta.enableDeletionVectors': 'true',
        'delta.checkpointInterval': '5',
        'delta.enableInCommitTimestamps': 'true',
      },
    })
    try {
      for (const op of script(13, 0, 3).ops) {
        await applyToTable(created, op)
        models.push(applyToModel(op, models.at(-1)!))
      }
    } finally {
      await created.close()
    }
    await cleanUpLogBefore(dir(), 10n)
    table = await DeltaTable.open(dir())
  })
  after(() => table?.close())

  it('reads and time travels from the checkpoint on by version and by In-Commit Timestamp, refuses older versions, and takes an append', async () => {
    for (let v = 10n; v <= 13n; v++)
      await assertTableIs(table, models[Number(v)]!, `version ${v}`, { version: v })
    await assertVersionGone(table, 9n, 10n, 13n)
    const history = await table.history()
    assert.deepEqual(
      history.map((h) => h.version),
      [13n, 12n, 11n, 10n],
    )
    for (const h of history) {
      assert.equal(h.timestamp, Number(h.commitInfo?.inCommitTimestamp), `version ${h.version}: its ICT`)
      assert.equal((await table.snapshot({ timestamp: h.timestamp })).version, h.version)
    }
    await assert.rejects(
      () => table.snapshot({ timestamp: history.at(-1)!.timestamp - 1 }),
      (err) => isDeltaError(err, 'DELTA_VERSION_NOT_FOUND'),
    )
    const op: Op = { kind: 'append', from: 800_000, count: 30 }
    const result = await applyToTable(table, op)
    assert.equal(result.version, 14n)
    await assertTableIs(table, applyToModel(op, models.at(-1)!), 'after an append')
  })
})
