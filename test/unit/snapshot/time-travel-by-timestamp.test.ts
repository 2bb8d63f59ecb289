/**
 * Time travel by timestamp reaches every commit still in the log, also those at or before the
 * newest checkpoint, by Delta's rule (the latest commit at or before the instant, file times made
 * strictly increasing), and history() lists exactly the versions a timestamp can reach.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm, unlink, utimes } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { isDeltaError, type VersionNotFoundError } from '../../../src/errors/index.js'
import { DeltaTable } from '../../../src/table/delta-table.js'

const BASE = Date.UTC(2024, 0, 1)
const STEP = 60_000
const LATEST = 10
const INTERVAL = 3

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

const commitPath = (root: string, v: number) =>
  join(root, '_delta_log', `${String(v).padStart(20, '0')}.json`)
const checkpointPath = (root: string, v: number) =>
  join(root, '_delta_log', `${String(v).padStart(20, '0')}.checkpoint.parquet`)

/** Sets commit v's file time to BASE + v minutes, as if one commit a minute had been made. */
async function setCommitTime(root: string, v: number, ms = BASE + v * STEP): Promise<void> {
  await utimes(commitPath(root, v), new Date(ms), new Date(ms))
}

/** Version v of the table holds ids 0..v-1: creation, then one append per version. */
async function buildTable(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'delta-rlc-tt-'))
  roots.push(root)
  const table = await DeltaTable.create(root, {
    schema: 'id long',
    properties: { 'delta.checkpointInterval': String(INTERVAL) },
  })
  try {
    for (let v = 1; v <= LATEST; v++) await table.append([{ id: BigInt(v - 1) }])
  } finally {
    await table.close()
  }
  for (let v = 0; v <= LATEST; v++) await setCommitTime(root, v)
  return root
}

async function idsAt(table: DeltaTable, timestamp: number): Promise<{ version: bigint; ids: bigint[] }> {
  const snap = await table.snapshot({ timestamp })
  const rows = await table.scan({ version: snap.version }).toArray()
  return { version: snap.version, ids: rows.map((r) => r.id as bigint).sort((a, b) => (a < b ? -1 : 1)) }
}

const idsUpTo = (v: number) => Array.from({ length: v }, (_, i) => BigInt(i))

function notFound(earliest: bigint, at: number | undefined, why: RegExp) {
  return (err: unknown) => {
    assert.ok(isDeltaError(err, 'DELTA_VERSION_NOT_FOUND'), String(err))
    assert.equal((err as VersionNotFoundError).earliest, earliest)
    assert.equal((err as VersionNotFoundError).latest, BigInt(LATEST))
    assert.match((err as Error).message, why)
    if (at !== undefined) assert.ok((err as Error).message.includes(new Date(at).toISOString()), String(err))
    return true
  }
}

describe('time travel by timestamp', () => {
  let root: string
  before(async () => {
    root = await buildTable()
  })

  it('reaches every version, before and after each checkpoint, by the timestamp history reports', async () => {
    const table = await DeltaTable.open(root)
    try {
      const history = await table.history()
      assert.deepEqual(
        history.map((h) => h.version),
        idsUpTo(LATEST + 1).reverse(),
      )
      for (const h of history) {
        const v = Number(h.version)
        assert.equal(h.timestamp, BASE + v * STEP)
        assert.deepEqual(await idsAt(table, h.timestamp), { version: h.version, ids: idsUpTo(v) })
        // Between two commits, the older one is the table's state.
        if (v < LATEST)
          assert.equal((await table.snapshot({ timestamp: h.timestamp + STEP - 1 })).version, h.version)
        // The snapshot reports its own commit's time, also at a checkpoint version.
        assert.equal((await table.snapshot({ version: h.version })).timestamp, h.timestamp)
      }
      await assert.rejects(
        table.snapshot({ timestamp: BASE - 1 }),
        notFound(0n, BASE, /before the earliest commit \(version 0 at/),
      )
      await assert.rejects(
        table.snapshot({ timestamp: BASE + LATEST * STEP + 1 }),
        notFound(0n, BASE + LATEST * STEP, /after the latest commit/),
      )
    } finally {
      await table.close()
    }
  })

  it('makes file times that go backwards strictly increasing, as Delta does', async () => {
    const skewed = await buildTable()
    // Version 5's file claims to be older than version 4's.
    await setCommitTime(skewed, 5, BASE + 2 * STEP)
    const table = await DeltaTable.open(skewed)
    try {
      const history = await table.history()
      const five = history.find((h) => h.version === 5n)
      assert.equal(five?.timestamp, BASE + 4 * STEP + 1)
      assert.deepEqual(await idsAt(table, BASE + 4 * STEP + 1), { version: 5n, ids: idsUpTo(5) })
      assert.equal((await table.snapshot({ timestamp: BASE + 4 * STEP })).version, 4n)
      assert.equal((await table.snapshot({ timestamp: BASE + 2 * STEP })).version, 2n)
    } finally {
      await table.close()
    }
  })
})

describe('time travel by timestamp after log cleanup', () => {
  /** Each case deletes some log files and names the versions time travel must still reach. */
  const cases: Array<{ name: string; remove: (root: string) => Promise<void>; reachable: number[] }> = [
    {
      name: 'commits below a kept checkpoint deleted',
      remove: async (root) => {
        for (let v = 0; v <= 5; v++) await unlink(commitPath(root, v))
        await unlink(checkpointPath(root, 3))
      },
      reachable: [6, 7, 8, 9, 10],
    },
    {
      name: 'older commits left behind without a checkpoint to start from',
      remove: async (root) => {
        for (let v = 0; v <= 2; v++) await unlink(commitPath(root, v))
        await unlink(checkpointPath(root, 3))
        await unlink(commitPath(root, 6))
      },
      // 3..5 have commit files but no checkpoint below them; 6 has only its checkpoint.
      reachable: [7, 8, 9, 10],
    },
    {
      name: 'the checkpoint and its own commit kept',
      remove: async (root) => {
        for (let v = 0; v <= 2; v++) await unlink(commitPath(root, v))
      },
      reachable: [3, 4, 5, 6, 7, 8, 9, 10],
    },
  ]
  for (const c of cases) {
    it(`${c.name}: the reachable range is exactly what history lists`, async () => {
      const root = await buildTable()
      await c.remove(root)
      const table = await DeltaTable.open(root)
      try {
        const history = await table.history()
        assert.deepEqual(
          history.map((h) => Number(h.version)),
          [...c.reachable].reverse(),
        )
        for (const h of history) {
          assert.equal(h.timestamp, BASE + Number(h.version) * STEP)
          assert.deepEqual(await idsAt(table, h.timestamp), {
            version: h.version,
            ids: idsUpTo(Number(h.version)),
          })
        }
        const first = c.reachable[0] as number
        // Every instant before the earliest reachable commit is refused, naming that commit.
        for (const v of [0, first - 1]) {
          await assert.rejects(
            table.snapshot({ timestamp: BASE + v * STEP }),
            notFound(
              BigInt(first),
              BASE + first * STEP,
              new RegExp(`before the earliest commit \\(version ${first} at`),
            ),
          )
        }
      } finally {
        await table.close()
      }
    })
  }
})
