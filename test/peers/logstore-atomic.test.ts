/**
 * The atomic LogStore (test/peers/AtomicLinkLogStore.java) under real contention: two Spark
 * processes and this delta-rlc process append to one local table at the same time, and no commit
 * is lost: every row of every writer is there, and the log holds exactly one commit per append.
 *
 * Spark's own LocalLogStore checks for the commit file and then renames onto it, with a lock that
 * only holds inside one JVM, so without this store a racing process can replace a commit silently.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, test } from 'node:test'
import { DeltaTable } from '../../src/index.js'
import { encodeRows, Matrix, PEERS_SKIP, type Peer, rowSet, startPeer } from '../helpers/peers.js'

const APPENDS = 8

describe('atomic LogStore: two Spark processes and delta-rlc append at once', { skip: PEERS_SKIP }, () => {
  const matrix = new Matrix(import.meta.filename)
  let dir: string
  let sparkA: Peer
  let sparkB: Peer

  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'peers-logstore-'))
    ;[sparkA, sparkB] = await Promise.all([
      startPeer({ name: 'logstore-a' }),
      startPeer({ name: 'logstore-b' }),
    ])
  })

  after(async () => {
    await Promise.all([sparkA?.close(), sparkB?.close()])
    matrix.write()
    await fs.rm(dir, { recursive: true, force: true })
  })

  test(`${APPENDS} appends from each of three writers all land, one commit each`, async () => {
    await matrix.cell('concurrent appends, two Spark processes (atomic LogStore)', 'c', 'spark', async () => {
      const location = path.join(dir, 'race')
      const table = await DeltaTable.create(location, { schema: 'writer string not null, i long not null' })
      // Both sessions warm (JVM started, table loaded) before the race, so the appends overlap.
      await Promise.all([
        sparkA.sql(`SELECT count(*) FROM delta.\`${location}\``),
        sparkB.sql(`SELECT count(*) FROM delta.\`${location}\``),
      ])

      const sparkWriter = (peer: Peer, name: string): Promise<unknown> =>
        Promise.all(
          Array.from({ length: APPENDS }, (_, i) =>
            peer.sql(`INSERT INTO delta.\`${location}\` VALUES ('${name}', ${i})`),
          ),
        )
      const ours = (async () => {
        for (let i = 0; i < APPENDS; i++) await table.append([{ writer: 'delta-rlc', i: BigInt(i) }])
      })()
      await Promise.all([sparkWriter(sparkA, 'spark-a'), sparkWriter(sparkB, 'spark-b'), ours])

      const expected = ['spark-a', 'spark-b', 'delta-rlc'].flatMap((writer) =>
        Array.from({ length: APPENDS }, (_, i) => ({ writer: `string:${writer}`, i: `long:${i}` })),
      )
      const snapshot = await (await DeltaTable.open(location)).snapshot()
      assert.equal(Number(snapshot.version), 3 * APPENDS, 'one commit per append after the CREATE')
      const rows = encodeRows(await (await DeltaTable.open(location)).scan().toArray(), snapshot.schema)
      assert.deepEqual(rowSet(rows), rowSet(expected))
      assert.deepEqual(rowSet(await sparkA.sql(`SELECT * FROM delta.\`${location}\``)), rowSet(expected))

      const commits = (await fs.readdir(path.join(location, '_delta_log'))).filter((f) => f.endsWith('.json'))
      assert.equal(commits.length, 3 * APPENDS + 1)
      const engines = new Map<string, number>()
      for (const file of commits) {
        const text = await fs.readFile(path.join(location, '_delta_log', file), 'utf8')
        const adds = text.split('\n').filter((line) => line.startsWith('{"add"')).length
        assert.ok(file === commits[0] || adds === 1, `${file} holds one append`)
        const info = /"engineInfo":"([^"/ ]+)/.exec(text)?.[1] ?? '?'
        engines.set(info, (engines.get(info) ?? 0) + 1)
      }
      assert.equal(engines.get('Apache-Spark'), 2 * APPENDS)
    })
  })
})
