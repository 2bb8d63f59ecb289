/**
 * The live matrix for table features beyond a plain write, with Spark and delta-rs: deletion
 * vectors after several DML passes (and the peers' own DML on top), checkpoints read by Spark on a
 * copy whose earlier JSON commits are gone, column mapping after rename and drop, and the change
 * data feed. Directions as in round-trip.test.ts: (a) the peer writes, we read; (b) we write, the
 * peer reads; (c) writes on top of each other.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { DeltaTable } from '../../src/index.js'
import {
  encodeRows,
  Matrix,
  PEERS_SKIP,
  type Peer,
  pick,
  type Row,
  rowSet,
  startPeer,
} from '../helpers/peers.js'

describe('table features with Spark and delta-rs', { skip: PEERS_SKIP }, () => {
  const matrix = new Matrix(import.meta.filename)
  let dir: string
  let peer: Peer

  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'peers-features-'))
    peer = await startPeer({ name: 'table-features' })
  })
  after(async () => {
    await peer?.close()
    matrix.write()
    await fs.rm(dir, { recursive: true, force: true })
  })

  async function ours(location: string): Promise<Row[]> {
    const table = await DeltaTable.open(location)
    const snapshot = await table.snapshot()
    return encodeRows(await table.scan().toArray(), snapshot.schema)
  }
  const spark = async (location: string): Promise<Row[]> =>
    (await peer.call<{ rows: Row[] }>('spark.read', { path: location })).rows
  const rs = async (location: string): Promise<Row[]> =>
    (await peer.call<{ rows: Row[] }>('rs.read', { path: location })).rows
  const rows = (from: number, to: number): Array<Record<string, unknown>> =>
    Array.from({ length: to - from }, (_, k) => ({ id: BigInt(from + k), v: from + k, s: `s${from + k}` }))

  test('deletion vectors after several DML passes', async () => {
    const feature = 'deletion vectors after several DML passes'
    const location = path.join(dir, 'dv-ours')
    const table = await DeltaTable.create(location, {
      schema: 'id long not null, v int, s string',
      properties: { 'delta.enableDeletionVectors': 'true' },
    })
    await table.append(rows(0, 40))
    await table.delete('id % 5 = 0')
    await table.update({ where: 'id % 3 = 0', set: { v: 'v * 10' } })
    await table.delete('id < 4')
    const files = await (await table.snapshot()).files()
    assert.ok(
      files.some((f) => f.deletionVector !== undefined && f.deletionVector !== null),
      'the DML wrote deletion vectors',
    )
    const expected = await ours(location)
    await matrix.cell(feature, 'b', 'spark', async () => {
      assert.deepEqual(rowSet(await spark(location)), rowSet(expected))
    })
    await matrix.cell(feature, 'b', 'delta-rs', async () => {
      assert.deepEqual(rowSet(await rs(location)), rowSet(expected))
      const plain = await peer.attempt('rs.read-pyarrow', { path: location })
      assert.equal(plain.ok, false, 'to_pyarrow_table refuses deletion vectors')
      if (!plain.ok) matrix.refused(`${feature} (to_pyarrow_table)`, 'b', 'delta-rs', plain.error.peerMessage)
    })
    await matrix.cell(feature, 'c', 'spark', async () => {
      await peer.sql(`DELETE FROM delta.\`${location}\` WHERE id % 7 = 0`)
      await peer.sql(`UPDATE delta.\`${location}\` SET s = concat(s, '!') WHERE id % 2 = 0`)
      const theirs = await spark(location)
      assert.deepEqual(rowSet(await ours(location)), rowSet(theirs))
      await table.delete('id % 11 = 0')
      await table.update({ where: 'id > 30', set: { v: '-v' } })
      assert.deepEqual(rowSet(await spark(location)), rowSet(await ours(location)))
      await peer.sql(`REORG TABLE delta.\`${location}\` APPLY (PURGE)`)
      assert.deepEqual(rowSet(await ours(location)), rowSet(await spark(location)))
    })
    await matrix.cell(feature, 'c', 'delta-rs', async () => {
      await peer.call('rs.delete', { path: location, predicate: 'id = 13' })
      await peer.call('rs.update', { path: location, set: { v: 'v + 1' }, predicate: 'id = 17' })
      const theirs = await rs(location)
      assert.deepEqual(rowSet(await ours(location)), rowSet(theirs))
      await table.delete('id = 19')
      assert.deepEqual(rowSet(await rs(location)), rowSet(await ours(location)))
      assert.deepEqual(rowSet(await spark(location)), rowSet(await ours(location)))
    })
    await matrix.cell(feature, 'a', 'spark', async () => {
      const theirs = path.join(dir, 'dv-spark')
      await peer.sql(
        `CREATE TABLE delta.\`${theirs}\` (id long, v int, s string) USING delta TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')`,
      )
      await peer.sql(
        `INSERT INTO delta.\`${theirs}\` SELECT id, cast(id AS int), concat('s', id) FROM range(0, 40)`,
      )
      await peer.sql(`DELETE FROM delta.\`${theirs}\` WHERE id % 5 = 0`)
      await peer.sql(`UPDATE delta.\`${theirs}\` SET v = v * 10 WHERE id % 3 = 0`)
      await peer.sql(`DELETE FROM delta.\`${theirs}\` WHERE id < 4`)
      assert.deepEqual(rowSet(await ours(theirs)), rowSet(await spark(theirs)))
      const files = await (await (await DeltaTable.open(theirs)).snapshot()).files()
      assert.ok(
        files.some((f) => f.deletionVector),
        "Spark's DML wrote deletion vectors",
      )
    })
  })

  test('checkpoints read without the JSON commits before them', async () => {
    const feature = 'classic checkpoint + _last_checkpoint'
    const location = path.join(dir, 'cp-ours')
    const table = await DeltaTable.create(location, {
      schema: 'id long not null, v int, s string',
      properties: { 'delta.enableDeletionVectors': 'true', 'delta.checkpointInterval': '1000' },
    })
    for (let i = 0; i < 4; i++) await table.append(rows(i * 10, i * 10 + 10))
    await table.delete('id % 4 = 0')
    await table.checkpoint()
    await table.append(rows(100, 103))
    const expected = await ours(location)
    const copy = path.join(dir, 'cp-ours-copy')
    await fs.cp(location, copy, { recursive: true })
    const log = path.join(copy, '_delta_log')
    const checkpointVersion = 5
    for (const f of await fs.readdir(log)) {
      const m = /^(\d{20})\.json$/.exec(f)
      if (m && Number(m[1]) <= checkpointVersion) await fs.rm(path.join(log, f))
    }
    await matrix.cell(feature, 'b', 'spark', async () => {
      assert.deepEqual(rowSet(await spark(copy)), rowSet(expected))
      const [detail] = (await peer.call<{ rows: Row[] }>('spark.detail', { path: copy })).rows
      assert.equal(detail?.numFiles, (await (await table.snapshot()).files()).length)
    })
    await matrix.cell(feature, 'b', 'delta-rs', async () => {
      assert.deepEqual(rowSet(await rs(copy)), rowSet(expected))
    })
    await matrix.cell(feature, 'a', 'spark', async () => {
      const theirs = path.join(dir, 'cp-spark')
      await peer.sql(
        `CREATE TABLE delta.\`${theirs}\` (id long, v int, s string) USING delta TBLPROPERTIES ('delta.checkpointInterval' = '3')`,
      )
      for (let i = 0; i < 4; i++) {
        await peer.sql(
          `INSERT INTO delta.\`${theirs}\` SELECT id, cast(id AS int), concat('s', id) FROM range(${i * 10}, ${i * 10 + 10})`,
        )
      }
      await peer.sql(`DELETE FROM delta.\`${theirs}\` WHERE id % 4 = 0`)
      const last = JSON.parse(
        await fs.readFile(path.join(theirs, '_delta_log', '_last_checkpoint'), 'utf8'),
      ) as {
        version: number
      }
      for (const f of await fs.readdir(path.join(theirs, '_delta_log'))) {
        const m = /^(\d{20})\.json$/.exec(f)
        if (m && Number(m[1]) <= last.version) await fs.rm(path.join(theirs, '_delta_log', f))
      }
      assert.deepEqual(rowSet(await ours(theirs)), rowSet(await spark(theirs)))
    })
    await matrix.cell(feature, 'a', 'delta-rs', async () => {
      const theirs = path.join(dir, 'cp-delta-rs')
      for (let i = 0; i < 4; i++) {
        await peer.call('rs.write', {
          path: theirs,
          mode: 'append',
          sql: `SELECT CAST(v AS BIGINT) AS id, CAST(v AS INT) AS v, concat('s', v) AS s FROM (SELECT unnest(range(${i * 10}, ${i * 10 + 10})) AS v)`,
        })
      }
      await peer.call('rs.checkpoint', { path: theirs })
      for (const f of await fs.readdir(path.join(theirs, '_delta_log'))) {
        const m = /^(\d{20})\.json$/.exec(f)
        if (m && Number(m[1]) <= 3) await fs.rm(path.join(theirs, '_delta_log', f))
      }
      assert.deepEqual(rowSet(await ours(theirs)), rowSet(await rs(theirs)))
      assert.equal((await ours(theirs)).length, 40)
    })
  })

  test('column mapping (name) after rename and drop', async () => {
    const feature = 'column mapping (name) after rename and drop'
    const location = path.join(dir, 'cm-ours')
    const table = await DeltaTable.create(location, {
      schema: 'id long not null, v int, s string, gone string',
      properties: { 'delta.columnMapping.mode': 'name', 'delta.enableDeletionVectors': 'true' },
    })
    await table.append(rows(0, 10).map((r) => ({ ...r, gone: 'x' })))
    await table.alter.renameColumn('v', 'value renamed')
    await table.alter.dropColumns(['gone'])
    await (await DeltaTable.open(location)).append([{ id: 100n, 'value renamed': 7, s: 'new' }])
    const expected = await ours(location)
    assert.deepEqual(Object.keys(expected[0] ?? {}), ['id', 'value renamed', 's'])
    await matrix.cell(feature, 'b', 'spark', async () => {
      assert.deepEqual(rowSet(await spark(location)), rowSet(expected))
    })
    await matrix.cell(feature, 'b', 'delta-rs', async () => {
      assert.deepEqual(rowSet(await rs(location)), rowSet(expected))
    })
    await matrix.cell(feature, 'c', 'spark', async () => {
      await peer.sql(`INSERT INTO delta.\`${location}\` VALUES (200, 2, 'spark')`)
      await peer.sql(`ALTER TABLE delta.\`${location}\` RENAME COLUMN s TO \`s 2\``)
      const reopened = await DeltaTable.open(location)
      await reopened.append([{ id: 300n, 'value renamed': 3, 's 2': 'ours' }])
      assert.deepEqual(rowSet(await spark(location)), rowSet(await ours(location)))
      assert.equal((await ours(location)).length, expected.length + 2)
    })
    await matrix.cell(feature, 'a', 'spark', async () => {
      const theirs = path.join(dir, 'cm-spark')
      await peer.sql(
        `CREATE TABLE delta.\`${theirs}\` (id long, v int, s string, gone string) USING delta TBLPROPERTIES ('delta.columnMapping.mode' = 'name')`,
      )
      await peer.sql(
        `INSERT INTO delta.\`${theirs}\` SELECT id, cast(id AS int), concat('s', id), 'x' FROM range(0, 10)`,
      )
      await peer.sql(`ALTER TABLE delta.\`${theirs}\` RENAME COLUMN v TO \`value renamed\``)
      await peer.sql(`ALTER TABLE delta.\`${theirs}\` DROP COLUMN gone`)
      await peer.sql(`INSERT INTO delta.\`${theirs}\` VALUES (100, 7, 'new')`)
      assert.deepEqual(rowSet(await ours(theirs)), rowSet(await spark(theirs)))
    })
  })

  test('change data feed', async () => {
    const feature = 'change data feed'
    const location = path.join(dir, 'cdf-ours')
    const table = await DeltaTable.create(location, {
      schema: 'id long not null, v int, s string',
      properties: { 'delta.enableChangeDataFeed': 'true', 'delta.enableDeletionVectors': 'true' },
    })
    await table.append(rows(0, 10))
    await table.update({ where: 'id < 3', set: { v: 'v + 100' } })
    await table.delete('id = 5')
    const schema = (await table.snapshot()).schema
    const ourChanges: Array<Record<string, unknown>> = []
    for await (const batch of table.changes({ startingVersion: 1 })) for (const r of batch) ourChanges.push(r)
    const columns = ['id', 'v', 's', '_change_type', '_commit_version']
    const encode = (changes: ReadonlyArray<Record<string, unknown>>): Row[] =>
      encodeRows(changes, {
        fields: [
          ...schema.fields,
          { name: '_change_type', type: 'string' },
          { name: '_commit_version', type: 'long' },
        ],
      })
    const expected = pick(encode(ourChanges), columns)
    await matrix.cell(feature, 'b', 'spark', async () => {
      const theirs = (await peer.call<{ rows: Row[] }>('spark.cdf', { path: location, start: 1 })).rows
      assert.deepEqual(rowSet(pick(theirs, columns)), rowSet(expected))
    })
    await matrix.cell(feature, 'b', 'delta-rs', async () => {
      const theirs = (await peer.call<{ rows: Row[] }>('rs.cdf', { path: location, start: 1 })).rows
      // delta-rs types its _commit_version uint64 (Spark and we: long); the data columns are exact.
      for (const row of theirs) assert.match(String(row._commit_version), /^uint64:\d+$/)
      const asLong = theirs.map((row) => ({
        ...row,
        _commit_version: String(row._commit_version).replace(/^uint64:/, 'long:'),
      }))
      assert.deepEqual(rowSet(pick(asLong, columns)), rowSet(expected))
    })
    await matrix.cell(feature, 'a', 'spark', async () => {
      const theirs = path.join(dir, 'cdf-spark')
      await peer.sql(
        `CREATE TABLE delta.\`${theirs}\` (id long, v int, s string) USING delta TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true', 'delta.enableDeletionVectors' = 'true')`,
      )
      await peer.sql(
        `INSERT INTO delta.\`${theirs}\` SELECT id, cast(id AS int), concat('s', id) FROM range(0, 10)`,
      )
      await peer.sql(`UPDATE delta.\`${theirs}\` SET v = v + 100 WHERE id < 3`)
      await peer.sql(`DELETE FROM delta.\`${theirs}\` WHERE id = 5`)
      const sparkChanges = (await peer.call<{ rows: Row[] }>('spark.cdf', { path: theirs, start: 1 })).rows
      const mine: Array<Record<string, unknown>> = []
      for await (const batch of (await DeltaTable.open(theirs)).changes({ startingVersion: 1 })) {
        for (const r of batch) mine.push(r)
      }
      assert.deepEqual(rowSet(pick(encode(mine), columns)), rowSet(pick(sparkChanges, columns)))
    })
  })
})
