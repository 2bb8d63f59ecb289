/**
 * delta-rs on tables whose writer features it does not implement: it reads each table we write
 * (through QueryBuilder, rows equal to ours) and refuses to write to it. The refusals are asserted
 * with delta-rs's message, so a delta-rs release that starts writing one of these tables turns this
 * test red and the matrix gets a new cell to prove. delta-rs only: no JVM starts in this file.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { DeltaTable } from '../../src/index.js'
import { encodeRows, Matrix, PEERS_SKIP, type Peer, type Row, rowSet, startPeer } from '../helpers/peers.js'

interface Case {
  readonly feature: string
  readonly schema: string
  readonly properties?: Readonly<Record<string, string>>
  readonly clusterBy?: readonly string[]
  /** The writer feature delta-rs's refusal names. */
  readonly refusal: RegExp
  /** Set where delta-rs refuses even to read the table: what its refusal names. */
  readonly readRefusal?: RegExp
}

const CASES: readonly Case[] = [
  {
    feature: 'row tracking',
    schema: 'id long not null, v int',
    properties: { 'delta.enableRowTracking': 'true' },
    refusal: /rowTracking|domainMetadata/i,
  },
  {
    feature: 'in-commit timestamps',
    schema: 'id long not null, v int',
    properties: { 'delta.enableInCommitTimestamps': 'true' },
    refusal: /inCommitTimestamp/i,
  },
  {
    feature: 'liquid clustering',
    schema: 'id long not null, v int',
    clusterBy: ['id'],
    refusal: /clustering|domainMetadata/i,
  },
  {
    feature: 'identity column',
    schema: 'id long GENERATED ALWAYS AS IDENTITY, v int',
    refusal: /identityColumns/i,
  },
  {
    feature: 'type widening',
    schema: 'id long not null, v int',
    properties: { 'delta.enableTypeWidening': 'true' },
    refusal: /typeWidening/i,
    // typeWidening is a reader-writer feature, and delta-rs does not read it either.
    readRefusal: /TypeWidening/,
  },
]

describe('delta-rs reads but refuses to write tables with features it lacks', { skip: PEERS_SKIP }, () => {
  const matrix = new Matrix(import.meta.filename)
  let dir: string
  let peer: Peer

  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'peers-refusals-'))
    peer = await startPeer({ name: 'delta-rs-refusals' })
  })
  after(async () => {
    await peer?.close()
    matrix.write()
    await fs.rm(dir, { recursive: true, force: true })
  })

  for (const c of CASES) {
    test(c.feature, async () => {
      const location = path.join(dir, c.feature.replace(/\W+/g, '-'))
      const table = await DeltaTable.create(location, {
        schema: c.schema,
        properties: { ...c.properties },
        clusterBy: c.clusterBy ? [...c.clusterBy] : undefined,
      })
      const input = c.schema.includes('IDENTITY')
        ? [{ v: 1 }, { v: 2 }, { v: null }]
        : [
            { id: 1n, v: 1 },
            { id: 2n, v: null },
          ]
      await table.append(input)
      const snapshot = await table.snapshot()
      const expected = encodeRows(await table.scan().toArray(), snapshot.schema)
      if (c.readRefusal !== undefined) {
        const read = await peer.attempt('rs.read', { path: location })
        assert.equal(read.ok, false, `delta-rs refuses to read a table with ${c.feature}`)
        if (!read.ok) {
          assert.match(read.error.peerMessage, c.readRefusal)
          matrix.refused(c.feature, 'b', 'delta-rs', read.error.peerMessage)
        }
      } else {
        await matrix.cell(c.feature, 'b', 'delta-rs', async () => {
          const theirs = (await peer.call<{ rows: Row[] }>('rs.read', { path: location })).rows
          assert.deepEqual(rowSet(theirs), rowSet(expected))
        })
      }
      const write = await peer.attempt('rs.write', {
        path: location,
        mode: 'append',
        sql: 'SELECT * FROM t',
        tables: { t: location },
      })
      assert.equal(write.ok, false, `delta-rs refuses to append to a table with ${c.feature}`)
      if (!write.ok) {
        assert.match(write.error.peerMessage, c.refusal)
        matrix.refused(c.feature, 'c', 'delta-rs', write.error.peerMessage)
      }
      // The refusal left the table as it was.
      assert.equal(
        (await (await DeltaTable.open(location)).snapshot()).version,
        snapshot.version,
        'the refused write committed nothing',
      )
    })
  }
})
