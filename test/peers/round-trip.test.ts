/**
 * The live matrix for the features a plain write exercises: every primitive type, nested types and
 * awkward partition values, with Spark and delta-rs, in the three directions:
 * - (a) the peer writes its own files (from the rows of our table), we read them, and our rows
 *   equal the peer's own read of its table;
 * - (b) we write, the peer reads: its rows equal ours, and its DESCRIBE DETAIL (files, bytes,
 *   properties, protocol) and history agree with our snapshot and history;
 * - (c) the peer appends to our table and we append to the peer's: every engine reads the same.
 * Values are compared in the typed encoding (test/helpers/peers.ts), so a type change is a failure.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { DeltaTable } from '../../src/index.js'
import { encodeRows, Matrix, PEERS_SKIP, type Peer, type Row, rowSet, startPeer } from '../helpers/peers.js'

interface Feature {
  readonly name: string
  readonly schema: string
  readonly partitionBy?: readonly string[]
  readonly properties?: Readonly<Record<string, string>>
  readonly rows: ReadonlyArray<Record<string, unknown>>
}

const FEATURES: readonly Feature[] = [
  {
    name: 'primitive types incl. decimal(38,18), timestamp, timestamp_ntz, binary',
    schema:
      'id long not null, i int, s short, b byte, f float, d double, dec decimal(38,18), dec2 decimal(10,2), str string, bin binary, bo boolean, dt date, ts timestamp, tn timestamp_ntz',
    rows: [
      {
        id: 1n,
        i: 2147483647,
        s: -32768,
        b: 127,
        f: 1.5,
        d: 0.1,
        dec: '12345678901234567890.123456789012345678',
        dec2: '-0.01',
        str: 'héllo ☃ "quoted" \\ back',
        bin: new Uint8Array([0, 1, 255]),
        bo: true,
        dt: '2024-02-29',
        ts: '2024-01-01T12:34:56.789012Z',
        tn: '1999-12-31T23:59:59.999999',
      },
      {
        id: 9007199254740993n,
        i: -2147483648,
        s: 32767,
        b: -128,
        f: -3.25,
        d: 1e300,
        dec: '-0.000000000000000001',
        dec2: '99999999.99',
        str: '',
        bin: new Uint8Array([]),
        bo: false,
        dt: '1970-01-01',
        ts: '1970-01-01T00:00:00.000000Z',
        tn: '2262-04-11T23:47:16.854775',
      },
      { id: -9223372036854775808n },
    ],
  },
  {
    name: 'nested struct, array and map',
    schema:
      'id long not null, st struct<a: int, b: struct<c: string, d: array<long>>>, arr array<struct<x: double, y: string>>, m map<string, struct<v: decimal(20,4)>>',
    rows: [
      {
        id: 1n,
        st: { a: 1, b: { c: 'x', d: [1n, 2n, null] } },
        arr: [
          { x: 1.25, y: 'a' },
          { x: null, y: null },
        ],
        m: new Map([
          ['k1', { v: '1.2345' }],
          ['k2', null],
        ]),
      },
      { id: 2n, st: { a: null, b: null }, arr: [], m: new Map() },
      { id: 3n },
    ],
  },
  {
    name: 'string partitions: null, empty, space, unicode, =, /',
    schema: 'id long not null, p string',
    partitionBy: ['p'],
    rows: [
      { id: 1n, p: null },
      { id: 2n, p: '' },
      { id: 3n, p: ' ' },
      { id: 4n, p: 'a b' },
      { id: 5n, p: 'ünï©ødé ☃' },
      { id: 6n, p: 'k=v' },
      { id: 7n, p: 'a/b' },
      { id: 8n, p: '%41#?' },
    ],
  },
  {
    name: 'date, timestamp and int partitions',
    schema: 'id long not null, d date, t timestamp, n int',
    partitionBy: ['d', 't', 'n'],
    rows: [
      { id: 1n, d: '2024-02-29', t: '2024-01-01T12:34:56.123456Z', n: -1 },
      { id: 2n, d: '1970-01-01', t: '1970-01-01T00:00:00.000000Z', n: 0 },
      { id: 3n, d: null, t: null, n: null },
    ],
  },
]

const ALL_PROPERTIES: Readonly<Record<string, string>> = { 'delta.enableDeletionVectors': 'true' }

describe('round trip with Spark and delta-rs', { skip: PEERS_SKIP }, () => {
  const matrix = new Matrix(import.meta.filename)
  let dir: string
  let peer: Peer

  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'peers-round-trip-'))
    peer = await startPeer({ name: 'round-trip' })
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

  for (const feature of FEATURES) {
    test(feature.name, async () => {
      const base = path.join(dir, feature.name.replace(/[^a-z0-9]+/gi, '-'))
      const location = `${base}-ours`
      const table = await DeltaTable.create(location, {
        schema: feature.schema,
        partitionBy: feature.partitionBy ? [...feature.partitionBy] : undefined,
        properties: { ...ALL_PROPERTIES, ...feature.properties },
      })
      await table.append([...feature.rows])
      const expected = await ours(location)
      assert.equal(expected.length, feature.rows.length)

      await matrix.cell(feature.name, 'b', 'spark', async () => {
        assert.deepEqual(rowSet(await spark(location)), rowSet(expected))
        const snapshot = await table.snapshot()
        const files = await snapshot.files()
        const [detail] = (await peer.call<{ rows: Row[] }>('spark.detail', { path: location })).rows
        assert.ok(detail)
        assert.equal(detail.numFiles, files.length)
        assert.equal(
          detail.sizeInBytes,
          files.reduce((n, f) => n + Number(f.size), 0),
        )
        assert.deepEqual(detail.partitionColumns, [...snapshot.partitionColumns])
        assert.deepEqual(detail.properties, { ...snapshot.properties })
        assert.equal(detail.minReaderVersion, snapshot.protocol.minReaderVersion)
        assert.equal(detail.minWriterVersion, snapshot.protocol.minWriterVersion)
        const history = (await peer.call<{ rows: Row[] }>('spark.history', { path: location })).rows
        const ourHistory = await table.history()
        assert.deepEqual(
          history.map((h) => [h.version, h.operation]),
          ourHistory.map((h) => [Number(h.version), h.operation]),
        )
      })
      await matrix.cell(feature.name, 'b', 'delta-rs', async () => {
        assert.deepEqual(rowSet(await rs(location)), rowSet(expected))
        const snapshot = await table.snapshot()
        const files = await snapshot.files()
        const detail = await peer.call<Row>('rs.detail', { path: location })
        assert.equal(detail.version, Number(snapshot.version))
        assert.equal(detail.numFiles, files.length)
        assert.equal(
          detail.sizeInBytes,
          files.reduce((n, f) => n + Number(f.size), 0),
        )
        assert.deepEqual(detail.properties, { ...snapshot.properties })
      })

      // (a): each peer writes its own table from our rows; we read it as the peer does.
      const sparkTable = `${base}-spark`
      const partitioned = feature.partitionBy ? ` PARTITIONED BY (${feature.partitionBy.join(', ')})` : ''
      await matrix.cell(feature.name, 'a', 'spark', async () => {
        await peer.sql(
          `CREATE TABLE delta.\`${sparkTable}\` USING delta${partitioned} TBLPROPERTIES ('delta.enableDeletionVectors' = 'true') AS SELECT * FROM delta.\`${location}\``,
        )
        const theirs = await spark(sparkTable)
        assert.deepEqual(rowSet(theirs), rowSet(expected))
        assert.deepEqual(rowSet(await ours(sparkTable)), rowSet(theirs))
      })
      const rsTable = `${base}-delta-rs`
      await matrix.cell(feature.name, 'a', 'delta-rs', async () => {
        await peer.call('rs.write', {
          path: rsTable,
          sql: 'SELECT * FROM t',
          tables: { t: location },
          partition_by: feature.partitionBy,
        })
        const theirs = await rs(rsTable)
        assert.deepEqual(rowSet(theirs), rowSet(expected))
        assert.deepEqual(rowSet(await ours(rsTable)), rowSet(theirs))
      })

      // (c): the peer appends to our table, we append to the peer's; all engines agree.
      const twice = rowSet([...expected, ...expected])
      await matrix.cell(feature.name, 'c', 'spark', async () => {
        await peer.sql(`INSERT INTO delta.\`${location}\` SELECT * FROM delta.\`${sparkTable}\``)
        await (await DeltaTable.open(sparkTable)).append([...feature.rows])
        for (const t of [location, sparkTable]) {
          assert.deepEqual(rowSet(await ours(t)), twice, `delta-rlc reads ${t}`)
          assert.deepEqual(rowSet(await spark(t)), twice, `Spark reads ${t}`)
        }
      })
      await matrix.cell(feature.name, 'c', 'delta-rs', async () => {
        const before = rowSet(await ours(location))
        await peer.call('rs.write', {
          path: location,
          mode: 'append',
          sql: 'SELECT * FROM t',
          tables: { t: rsTable },
        })
        await (await DeltaTable.open(rsTable)).append([...feature.rows])
        const thrice = rowSet([...expected, ...expected, ...expected])
        assert.equal(before.length, expected.length * 2)
        assert.deepEqual(rowSet(await ours(location)), thrice, 'delta-rlc reads our table')
        assert.deepEqual(rowSet(await rs(location)), thrice, 'delta-rs reads our table')
        assert.deepEqual(rowSet(await spark(location)), thrice, 'Spark reads our table')
        assert.deepEqual(rowSet(await ours(rsTable)), twice, "delta-rlc reads delta-rs's table")
        assert.deepEqual(rowSet(await rs(rsTable)), twice, "delta-rs reads delta-rs's table")
      })
    })
  }
})
