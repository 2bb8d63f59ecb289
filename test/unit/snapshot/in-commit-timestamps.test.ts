/**
 * In-Commit Timestamps: written as the first action of every commit of a table that enables
 * them, strictly increasing (also over a commit that won the race), and used by time travel,
 * history and snapshots from the version they were enabled at, file times before it.
 */
import assert from 'node:assert/strict'
import { mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { isDeltaError } from '../../../src/errors/index.js'
import type { Action } from '../../../src/protocol/actions.js'
import { DeltaTable } from '../../../src/table/delta-table.js'

const BASE = Date.UTC(2024, 0, 1)
const STEP = 60_000
const ICT_ON = { 'delta.enableInCommitTimestamps': 'true' }

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

async function newRoot(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'delta-rlc-ict-'))
  roots.push(root)
  return root
}

const commitPath = (root: string, v: number) =>
  join(root, '_delta_log', `${String(v).padStart(20, '0')}.json`)

async function setFileTime(root: string, v: number, ms: number): Promise<void> {
  await utimes(commitPath(root, v), new Date(ms), new Date(ms))
}

/** The commit file's lines, parsed (test-side: plain JSON is enough for these small values). */
async function commitLines(root: string, v: number): Promise<Array<Record<string, Record<string, unknown>>>> {
  const text = await readFile(commitPath(root, v), 'utf8')
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l))
}

async function ictOf(root: string, v: number): Promise<number> {
  const [first] = await commitLines(root, v)
  const ict = first?.commitInfo?.inCommitTimestamp
  assert.equal(typeof ict, 'number', `commit ${v} starts with a commitInfo carrying inCommitTimestamp`)
  return ict as number
}

async function ids(table: DeltaTable, version: bigint): Promise<bigint[]> {
  const rows = await table.scan({ version }).toArray()
  return rows.map((r) => r.id as bigint).sort((a, b) => (a < b ? -1 : 1))
}

const idsUpTo = (v: number) => Array.from({ length: v }, (_, i) => BigInt(i))

/** Every version is reached by the timestamp history reports for it, and holds its rows. */
async function assertHistoryReachable(table: DeltaTable, latest: number): Promise<void> {
  const history = await table.history()
  assert.equal(history.length, latest + 1)
  for (const h of history) {
    const snap = await table.snapshot({ timestamp: h.timestamp })
    assert.equal(snap.version, h.version, `the timestamp history reports for version ${h.version}`)
    assert.equal(snap.timestamp, h.timestamp)
    assert.deepEqual(await ids(table, h.version), idsUpTo(Number(h.version)))
  }
}

function rejectsNotFound(pattern: RegExp) {
  return (err: unknown) => {
    assert.ok(isDeltaError(err, 'DELTA_VERSION_NOT_FOUND'), String(err))
    assert.match((err as Error).message, pattern)
    return true
  }
}

describe('In-Commit Timestamps', () => {
  it('a table created with them stamps every commit first, and time travel ignores file times', async () => {
    const root = await newRoot()
    const LATEST = 7
    const table = await DeltaTable.create(root, {
      schema: 'id long',
      properties: { ...ICT_ON, 'delta.checkpointInterval': '3' },
    })
    try {
      for (let v = 1; v <= LATEST; v++) await table.append([{ id: BigInt(v - 1) }])
      const icts: number[] = []
      for (let v = 0; v <= LATEST; v++) icts.push(await ictOf(root, v))
      for (let v = 1; v <= LATEST; v++) assert.ok((icts[v] as number) > (icts[v - 1] as number))
      const zero = await commitLines(root, 0)
      const protocol = zero.find((l) => l.protocol)?.protocol as { writerFeatures?: string[] }
      assert.ok(protocol.writerFeatures?.includes('inCommitTimestamp'))
      const config = zero.find((l) => l.metaData)?.metaData?.configuration as Record<string, string>
      assert.equal(config['delta.inCommitTimestampEnablementVersion'], undefined)

      // File times that say the opposite order: time travel must not look at them.
      for (let v = 0; v <= LATEST; v++) await setFileTime(root, v, BASE - v * STEP)
      const reopened = await DeltaTable.open(root)
      try {
        const history = await reopened.history()
        assert.deepEqual(
          history.map((h) => h.timestamp),
          [...icts].reverse(),
        )
        await assertHistoryReachable(reopened, LATEST)
        for (let v = 0; v < LATEST; v++) {
          // Just before the next commit, this one is the state.
          const snap = await reopened.snapshot({ timestamp: (icts[v + 1] as number) - 1 })
          assert.equal(snap.version, BigInt(v))
          // Checkpoint versions report their commit's time, not the checkpoint file's.
          assert.equal((await reopened.snapshot({ version: BigInt(v) })).timestamp, icts[v])
        }
        await assert.rejects(
          reopened.snapshot({ timestamp: (icts[0] as number) - 1 }),
          rejectsNotFound(/before the earliest commit \(version 0 at/),
        )
        await assert.rejects(
          reopened.snapshot({ timestamp: (icts[LATEST] as number) + 1 }),
          rejectsNotFound(/after the latest commit \(version 7 at/),
        )
      } finally {
        await reopened.close()
      }
    } finally {
      await table.close()
    }
  })

  it('every operation writes and VACUUM runs on a table that has them', async () => {
    const root = await newRoot()
    const table = await DeltaTable.create(root, {
      schema: 'id long',
      properties: { ...ICT_ON, 'delta.enableDeletionVectors': 'true' },
    })
    try {
      await table.append([{ id: 1n }, { id: 2n }])
      await table.append([{ id: 3n }])
      await table.delete('id = 2')
      await table.update({ where: 'id = 3', set: { id: '30' } })
      await table.optimize()
      const vacuumed = await table.vacuum({ retentionHours: 0, enforceRetentionDuration: false })
      assert.ok(vacuumed.files.length >= 1, 'the compacted files are gone')
      assert.deepEqual(await ids(table, (await table.snapshot()).version), [1n, 30n])
      const latest = Number((await table.snapshot()).version)
      for (let v = 1; v <= latest; v++) assert.ok((await ictOf(root, v)) > (await ictOf(root, v - 1)))
    } finally {
      await table.close()
    }
  })

  it('enabled at a later version: file times before it, In-Commit Timestamps from it', async () => {
    const root = await newRoot()
    const table = await DeltaTable.create(root, { schema: 'id long' })
    try {
      for (let v = 1; v <= 3; v++) await table.append([{ id: BigInt(v - 1) }])
      for (let v = 0; v <= 3; v++) await setFileTime(root, v, BASE + v * STEP)

      // Version 4 turns them on: the writer feature and the property, nothing else.
      const snap = await table.snapshot()
      const txn = await table.begin()
      txn.stageActions(
        [
          {
            protocol: {
              minReaderVersion: 1,
              minWriterVersion: 7,
              writerFeatures: ['appendOnly', 'invariants', 'inCommitTimestamp'],
            },
          },
          { metaData: { ...snap.metadata, configuration: { ...snap.metadata.configuration, ...ICT_ON } } },
        ],
        { operation: 'SET TBLPROPERTIES', changesData: false },
      )
      assert.equal((await txn.commit()).version, 4n)
      const enabledAt = await ictOf(root, 4)
      const config = (await commitLines(root, 4)).find((l) => l.metaData)?.metaData?.configuration as Record<
        string,
        string
      >
      assert.equal(config['delta.inCommitTimestampEnablementVersion'], '4')
      assert.equal(config['delta.inCommitTimestampEnablementTimestamp'], String(enabledAt))
      assert.ok(enabledAt > BASE + 3 * STEP, 'greater than the previous commit file time')

      // Versions 5 and 6 are ordinary appends (version 4 added no row).
      await table.append([{ id: 3n }])
      await table.append([{ id: 4n }])
      // A later metaData that leaves the enablement properties out keeps them.
      const latest = await table.snapshot()
      const change = await table.begin()
      change.stageActions(
        [
          {
            metaData: {
              ...latest.metadata,
              configuration: { ...ICT_ON, 'delta.checkpointInterval': '50' },
            },
          },
        ],
        { operation: 'SET TBLPROPERTIES', changesData: false },
      )
      assert.equal((await change.commit()).version, 7n)
      const kept = (await commitLines(root, 7)).find((l) => l.metaData)?.metaData?.configuration as Record<
        string,
        string
      >
      assert.equal(kept['delta.inCommitTimestampEnablementVersion'], '4')
      assert.equal(kept['delta.inCommitTimestampEnablementTimestamp'], String(enabledAt))

      const icts = new Map<number, number>()
      for (let v = 4; v <= 7; v++) icts.set(v, await ictOf(root, v))
      // File times of the later commits are wrong on purpose: only their ICTs count.
      for (let v = 4; v <= 7; v++) await setFileTime(root, v, BASE)

      const reopened = await DeltaTable.open(root)
      try {
        const history = await reopened.history()
        const expected = [0, 1, 2, 3]
          .map((v) => BASE + v * STEP)
          .concat([4, 5, 6, 7].map((v) => icts.get(v) as number))
        assert.deepEqual(
          history.map((h) => h.timestamp),
          expected.reverse(),
        )
        for (const h of history) {
          assert.equal((await reopened.snapshot({ timestamp: h.timestamp })).version, h.version)
          assert.equal((await reopened.snapshot({ version: h.version })).timestamp, h.timestamp)
        }
        const rowsAt = async (timestamp: number) => {
          const s = await reopened.snapshot({ timestamp })
          return { version: s.version, ids: await ids(reopened, s.version) }
        }
        // Before enablement, between two commits: file times decide.
        assert.deepEqual(await rowsAt(BASE + 2 * STEP + 1), { version: 2n, ids: idsUpTo(2) })
        // After the last file-time commit but before the enablement timestamp: version 3.
        assert.deepEqual(await rowsAt(enabledAt - 1), { version: 3n, ids: idsUpTo(3) })
        assert.deepEqual(await rowsAt(enabledAt), { version: 4n, ids: idsUpTo(3) })
        assert.deepEqual(await rowsAt((icts.get(6) as number) - 1), { version: 5n, ids: idsUpTo(4) })
        await assert.rejects(
          reopened.snapshot({ timestamp: BASE - 1 }),
          rejectsNotFound(/before the earliest commit \(version 0 at 2024-01-01T00:00:00.000Z\)/),
        )
        await assert.rejects(
          reopened.snapshot({ timestamp: (icts.get(7) as number) + 1 }),
          rejectsNotFound(/after the latest commit \(version 7 at/),
        )
      } finally {
        await reopened.close()
      }
    } finally {
      await table.close()
    }
  })

  it('a commit that loses the race is stamped above the winner, even a winner from the future', async () => {
    const root = await newRoot()
    const table = await DeltaTable.create(root, { schema: 'id long', properties: ICT_ON })
    try {
      const txn = await table.begin()
      await txn.append([{ id: 0n }])
      // Another writer's commit lands first, with a clock an hour ahead.
      const future = Date.now() + 3_600_000
      const winner: Action[] = [
        { commitInfo: { timestamp: BigInt(future), inCommitTimestamp: BigInt(future), operation: 'WRITE' } },
      ]
      await writeFile(
        commitPath(root, 1),
        `${winner.map((a) => JSON.stringify(a, (_k, x) => (typeof x === 'bigint' ? Number(x) : x))).join('\n')}\n`,
      )
      const result = await txn.commit()
      assert.equal(result.version, 2n)
      assert.equal(result.attempts, 2)
      assert.equal(await ictOf(root, 2), future + 1)
      assert.equal((await table.snapshot({ timestamp: future })).version, 1n)
      const snap = await table.snapshot({ timestamp: future + 1 })
      assert.equal(snap.version, 2n)
      assert.deepEqual(await ids(table, snap.version), [0n])
    } finally {
      await table.close()
    }
  })

  it('turning them on while another writer wins: the enablement moves to the version that lands', async () => {
    const root = await newRoot()
    const table = await DeltaTable.create(root, { schema: 'id long' })
    try {
      const snap = await table.snapshot()
      const txn = await table.begin()
      txn.stageActions(
        [
          {
            protocol: {
              minReaderVersion: 1,
              minWriterVersion: 7,
              writerFeatures: ['appendOnly', 'invariants', 'inCommitTimestamp'],
            },
          },
          { metaData: { ...snap.metadata, configuration: { ...ICT_ON } } },
        ],
        { operation: 'SET TBLPROPERTIES', changesData: false },
      )
      await table.append([{ id: 0n }])
      const result = await txn.commit()
      assert.equal(result.version, 2n)
      const ict = await ictOf(root, 2)
      const config = (await commitLines(root, 2)).find((l) => l.metaData)?.metaData?.configuration as Record<
        string,
        string
      >
      assert.equal(config['delta.inCommitTimestampEnablementVersion'], '2')
      assert.equal(config['delta.inCommitTimestampEnablementTimestamp'], String(ict))
      assert.equal((await table.snapshot({ timestamp: ict })).version, 2n)
      assert.deepEqual(await ids(table, 2n), [0n])
      const history = await table.history()
      assert.deepEqual(
        history.map((h) => h.version),
        [2n, 1n, 0n],
      )
      for (const h of history)
        assert.equal((await table.snapshot({ timestamp: h.timestamp })).version, h.version)
    } finally {
      await table.close()
    }
  })

  it('reads a timestamp behind a long first line or a late commitInfo, and names a commit without one', async () => {
    const root = await newRoot()
    const table = await DeltaTable.create(root, { schema: 'id long', properties: ICT_ON })
    try {
      await table.append([{ id: 0n }])
      const [file] = (await table.snapshot()).activeFiles()
      assert.ok(file)
      const t1 = await ictOf(root, 1)
      const add = `{"add":{"path":"${file.path}","partitionValues":{},"size":${file.size},"modificationTime":1,"dataChange":false}}`
      // Version 2: a commitInfo line of 200 KB, longer than the prefix read first.
      const note = 'n'.repeat(200_000)
      await writeFile(
        commitPath(root, 2),
        `{"commitInfo":{"inCommitTimestamp":${t1 + 1000},"timestamp":1,"operation":"WRITE","note":"${note}"}}\n${add}\n`,
      )
      // Version 3: a writer that put its commitInfo last.
      await writeFile(
        commitPath(root, 3),
        `${add}\n{"commitInfo":{"inCommitTimestamp":${t1 + 2000},"timestamp":1,"operation":"WRITE"}}\n`,
      )
      assert.equal((await table.snapshot({ timestamp: t1 + 1000 })).version, 2n)
      assert.equal((await table.snapshot({ timestamp: t1 + 1999 })).version, 2n)
      assert.equal((await table.snapshot({ timestamp: t1 + 2000 })).version, 3n)
      assert.equal((await table.snapshot({ version: 2n })).timestamp, t1 + 1000)

      // Version 4: no In-Commit Timestamp although the table enables them.
      await writeFile(commitPath(root, 4), `{"commitInfo":{"timestamp":1,"operation":"WRITE"}}\n${add}\n`)
      const latest = await table.snapshot()
      assert.equal(latest.version, 4n)
      assert.deepEqual(await ids(table, 4n), [0n])
      await assert.rejects(table.snapshot({ timestamp: t1 + 1500 }), (err: unknown) => {
        assert.ok(isDeltaError(err, 'DELTA_INVALID_TABLE'), String(err))
        assert.match(
          (err as Error).message,
          /00000000000000000004\.json \(version 4\) has no commitInfo\.inCommitTimestamp/,
        )
        return true
      })
      // Time travel by version still works.
      assert.deepEqual(await ids(table, 2n), [0n])
    } finally {
      await table.close()
    }
  })

  it('refuses enablement properties at creation, which only the engine may set', async () => {
    const root = await newRoot()
    await assert.rejects(
      DeltaTable.create(root, {
        schema: 'id long',
        properties: { ...ICT_ON, 'delta.inCommitTimestampEnablementVersion': '3' },
      }),
      (err: unknown) => isDeltaError(err, 'DELTA_INVALID_ARGUMENT'),
    )
  })
})
