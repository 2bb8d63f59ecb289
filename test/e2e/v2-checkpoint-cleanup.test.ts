/**
 * Checkpoints and expired log cleanup on a `v2Checkpoint` table: a copy of the Spark golden table
 * `v2-checkpoint-json` (checkpoint interval 2, a UUID-named JSON V2 checkpoint at version 2 whose
 * file actions live in two sidecars). The checkpoints delta-rlc writes there are V2 (one
 * `checkpointMetadata` header), and the cleanup after them deletes a V2 checkpoint's sidecars
 * once the checkpoint itself has gone, never while a remaining checkpoint names them, and
 * deletes an unnamed sidecar only when it is older than the retention.
 */
import assert from 'node:assert/strict'
import { cp, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { DuckDBInstance } from '@duckdb/node-api'
import { DeltaTable } from '../../src/table/delta-table.js'
import { GOLDEN_DIR, GOLDEN_SKIP } from '../helpers/golden.js'

const DAY_MS = 24 * 3_600_000
const pad = (v: number) => String(v).padStart(20, '0')
const SIDECARS = ['_delta_log', '_sidecars'] as const

let base = ''

before(async () => {
  base = await mkdtemp(join(tmpdir(), 'v2-cleanup-'))
})
after(async () => {
  if (base !== '') await rm(base, { recursive: true, force: true })
})

async function copyFixture(name: string): Promise<string> {
  const dir = join(base, name)
  await cp(join(GOLDEN_DIR as string, 'v2-checkpoint-json'), dir, { recursive: true })
  return dir
}

/** Sets the modification time of the given `_delta_log/` entries (and `_sidecars/` names). */
async function age(dir: string, names: readonly string[], ms: number): Promise<void> {
  for (const n of names) await utimes(join(dir, '_delta_log', n), ms / 1000, ms / 1000)
}

/** The log's files, without Spark's Hadoop checksum files (`.<name>.crc`), which follow them. */
async function logNames(dir: string): Promise<string[]> {
  return (await readdir(join(dir, '_delta_log')))
    .filter((n) => n !== '_sidecars' && !n.startsWith('.'))
    .sort()
}

async function checksumNames(dir: string): Promise<string[]> {
  return (await readdir(join(dir, '_delta_log'))).filter((n) => n.startsWith('.')).sort()
}

/** The sidecars, without Spark's Hadoop checksum files (`.<name>.crc`), which follow them. */
async function sidecarNames(dir: string): Promise<string[]> {
  return (await readdir(join(dir, ...SIDECARS))).filter((n) => !n.startsWith('.')).sort()
}

async function ids(table: DeltaTable, version?: bigint): Promise<bigint[]> {
  const rows = await table.scan(version === undefined ? {} : { version }).toArray()
  return rows.map((r) => r.id as bigint).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
}

const range = (from: number, to: number): bigint[] =>
  Array.from({ length: to - from + 1 }, (_, i) => BigInt(from + i))

describe('checkpoints and log cleanup on a v2Checkpoint table', { skip: GOLDEN_SKIP }, () => {
  it('a checkpoint delta-rlc writes there is V2: one checkpointMetadata header, and it alone rebuilds the table', async () => {
    const dir = await copyFixture('header')
    const table = await DeltaTable.open(dir)
    try {
      await table.append([{ id: 10n }])
      // Version 4 is a multiple of the interval: the commit writes the checkpoint.
      assert.equal((await table.append([{ id: 11n }])).version, 4n)
    } finally {
      await table.close()
    }
    const checkpoint = join(dir, '_delta_log', `${pad(4)}.checkpoint.parquet`)
    const duck = await DuckDBInstance.create(':memory:')
    const con = await duck.connect()
    try {
      const reader = await con.runAndReadAll(
        `SELECT checkpointMetadata."version" AS v FROM read_parquet('${checkpoint}') WHERE checkpointMetadata IS NOT NULL`,
      )
      assert.deepEqual(
        reader.getRowObjects().map((r) => r.v),
        [4n],
        'exactly one checkpointMetadata action, naming the checkpoint version',
      )
    } finally {
      con.closeSync()
      duck.closeSync()
    }
    // Without the commits and the older checkpoint, the new checkpoint is the only way to version 4.
    for (const n of await logNames(dir)) {
      if (n.startsWith(pad(4)) || n === '_last_checkpoint') continue
      await rm(join(dir, '_delta_log', n))
    }
    const reopened = await DeltaTable.open(dir)
    try {
      assert.deepEqual(await ids(reopened), range(0, 11))
    } finally {
      await reopened.close()
    }
  })

  it('sidecars stay while a checkpoint names them, go with it after the retention, and an unnamed sidecar goes only when old', async () => {
    const dir = await copyFixture('sidecars')
    const named = await sidecarNames(dir)
    assert.equal(named.length, 2, 'the fixture checkpoint keeps its file actions in two sidecars')
    const now = Date.now()
    // An abandoned sidecar from long ago, and one a checkpoint writer may be about to name.
    await writeFile(join(dir, ...SIDECARS, 'orphan-old.parquet'), 'x')
    await writeFile(join(dir, ...SIDECARS, 'orphan-young.parquet'), 'x')
    await age(dir, await logNames(dir), now - 60 * DAY_MS)
    const old = (await readdir(join(dir, ...SIDECARS))).filter((n) => n !== 'orphan-young.parquet')
    await age(
      dir,
      old.map((n) => `_sidecars/${n}`),
      now - 60 * DAY_MS,
    )

    const table = await DeltaTable.open(dir)
    try {
      await table.append([{ id: 10n }])
      // The checkpoint at 4 cleans up: the boundary is the 60-day-old checkpoint 2, which still
      // names its sidecars.
      const v4 = await table.append([{ id: 11n }])
      assert.equal(v4.version, 4n)
      assert.deepEqual(await logNames(dir), [
        `${pad(2)}.checkpoint.6374b053-df23-479b-b2cf-c9c550132b49.json`,
        `${pad(2)}.json`,
        `${pad(3)}.json`,
        `${pad(4)}.checkpoint.parquet`,
        `${pad(4)}.json`,
        '_last_checkpoint',
      ])
      assert.deepEqual(await sidecarNames(dir), [...named, 'orphan-young.parquet'].sort())
      assert.deepEqual(
        await checksumNames(dir),
        [
          `.${pad(2)}.checkpoint.6374b053-df23-479b-b2cf-c9c550132b49.json.crc`,
          `.${pad(2)}.json.crc`,
          '._last_checkpoint.crc',
        ],
        'the checksum files of deleted commits went with them',
      )
      assert.deepEqual(await ids(table, 2n), range(0, 9), 'version 2 still reads through its sidecars')

      // Checkpoint 4 ages past the retention: checkpoint 2 and then its sidecars expire.
      await age(dir, [`${pad(3)}.json`, `${pad(4)}.json`, `${pad(4)}.checkpoint.parquet`], now - 40 * DAY_MS)
      await table.append([{ id: 12n }])
      const dry = await table.cleanupMetadata({ dryRun: true })
      assert.equal(dry.boundary, 4n)
      const expected = [
        `_delta_log/.${pad(2)}.json.crc`,
        `_delta_log/.${pad(2)}.checkpoint.6374b053-df23-479b-b2cf-c9c550132b49.json.crc`,
        ...named.map((n) => `_delta_log/_sidecars/.${n}.crc`),
        `_delta_log/${pad(2)}.json`,
        `_delta_log/${pad(2)}.checkpoint.6374b053-df23-479b-b2cf-c9c550132b49.json`,
        `_delta_log/${pad(3)}.json`,
        ...named.map((n) => `_delta_log/_sidecars/${n}`),
      ]
      assert.deepEqual([...dry.files].sort(), [...expected].sort())
      assert.equal((await sidecarNames(dir)).length, 3, 'a dry run deletes nothing')

      const done = await table.cleanupMetadata()
      assert.deepEqual([...done.files].sort(), [...expected].sort())
      assert.deepEqual(done.failures, [])
      assert.deepEqual(await sidecarNames(dir), ['orphan-young.parquet'])
      assert.deepEqual(
        await readdir(join(dir, ...SIDECARS)),
        ['orphan-young.parquet'],
        'checksum files went with their sidecars',
      )
      assert.deepEqual(await ids(table), range(0, 12))
      assert.deepEqual(await ids(table, 4n), range(0, 11))
    } finally {
      await table.close()
    }
    const reopened = await DeltaTable.open(dir)
    try {
      assert.deepEqual(await ids(reopened), range(0, 12))
    } finally {
      await reopened.close()
    }
  })
})
