/**
 * Expired log cleanup at size: a log of 3,000 commits with a checkpoint every 250 versions, whose
 * commit and checkpoint files are aged so that version v was made (3,000 - v) x 20 minutes ago.
 * With the default 30-day `delta.logRetentionDuration` the cutoff falls just after version 840
 * (made exactly 30 days before the files were aged), so the newest checkpoint older than it is 750: every file below 750 goes, every
 * version from 750 on stays readable (exact rows, by version and by timestamp), and older ones
 * fail with `DELTA_VERSION_NOT_FOUND`.
 *
 * Most commits are written straight into `_delta_log/` as small protocol-valid SET TRANSACTION
 * commits (one engine commit costs ~10 ms, and the cleanup rule only sees file names and times);
 * every 250th version is an append through the engine, which also writes the checkpoints.
 */
import assert from 'node:assert/strict'
import { cp, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { isDeltaError, StorageError, VersionNotFoundError } from '../../src/errors/index.js'
import { createLocalStore } from '../../src/storage/index.js'
import { passThroughStore } from '../../src/storage/pass-through-store.js'
import { DeltaTable } from '../../src/table/delta-table.js'

const LATEST = 3000
const INTERVAL = 250
const STEP_MS = 20 * 60_000
const DAY_MS = 24 * 3_600_000
/** The newest checkpoint older than the 30-day cutoff. */
const BOUNDARY = 750n
/** The first version inside the window: version 840 was made (3000 - 840) x 20 min = 30 days ago. */
const FIRST_IN_WINDOW = 841

const pad = (v: number | bigint) => String(v).padStart(20, '0')

let base = ''
let template = ''
/** When the files were aged: version v's files carry agedAt - (LATEST - v) x STEP_MS. */
let agedAt = 0

/** A small SET TRANSACTION commit, as the engine writes one, put straight into the log. */
function fillerCommit(v: number, ms: number): string {
  return `${[
    JSON.stringify({
      commitInfo: {
        timestamp: ms,
        operation: 'SET TRANSACTION',
        operationParameters: {},
        engineInfo: 'test',
      },
    }),
    JSON.stringify({ txn: { appId: 'filler', version: v, lastUpdated: ms } }),
  ].join('\n')}\n`
}

/** Ids appended up to version v: one row per engine append, at every multiple of the interval. */
function idsAt(v: number): bigint[] {
  const ids: bigint[] = []
  for (let a = INTERVAL; a <= v; a += INTERVAL) ids.push(BigInt(a))
  return ids
}

/** Sets every log file of version v to the time version v was made. */
async function ageLog(dir: string, now: number): Promise<void> {
  const log = join(dir, '_delta_log')
  for (const name of await readdir(log)) {
    const m = /^(\d{20})\./.exec(name)
    if (m === null) continue
    const v = Number(m[1])
    const t = new Date(now - (LATEST - v) * STEP_MS)
    await utimes(join(log, name), t, t)
  }
}

async function logNames(dir: string): Promise<string[]> {
  return (await readdir(join(dir, '_delta_log'))).filter((n) => /^\d{20}\./.test(n)).sort()
}

const versionsOf = (names: readonly string[], suffix: string) =>
  names.filter((n) => n.endsWith(suffix)).map((n) => BigInt(n.slice(0, 20)))

async function ids(
  table: DeltaTable,
  opts: { version?: bigint; timestamp?: number } = {},
): Promise<bigint[]> {
  const rows = await table.scan(opts).toArray()
  return rows.map((r) => r.id as bigint).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
}

async function assertGone(table: DeltaTable, version: bigint, latest: bigint): Promise<void> {
  await assert.rejects(
    () => table.scan({ version }).toArray(),
    (err) => {
      assert.ok(isDeltaError(err, 'DELTA_VERSION_NOT_FOUND'), `version ${version}: ${String(err)}`)
      assert.ok(err instanceof VersionNotFoundError)
      assert.equal(err.earliest, BOUNDARY)
      assert.equal(err.latest, latest)
      return true
    },
  )
}

/** Asserts the log holds exactly the files from the boundary on. */
async function assertCleanedToBoundary(dir: string, latest: number): Promise<void> {
  const names = await logNames(dir)
  const commits = versionsOf(names, '.json')
  assert.equal(commits[0], BOUNDARY, 'the log starts at the boundary checkpoint')
  assert.equal(commits.length, latest - Number(BOUNDARY) + 1, 'every commit from the boundary on is kept')
  const checkpoints = versionsOf(names, '.checkpoint.parquet')
  const expected: bigint[] = []
  for (let c = Number(BOUNDARY); c <= latest; c += INTERVAL) expected.push(BigInt(c))
  assert.deepEqual(checkpoints, expected, 'checkpoints 250 and 500 are gone, 750 on are kept')
}

before(async () => {
  base = await mkdtemp(join(tmpdir(), 'delta-rlc-log-cleanup-expired-'))
  template = join(base, 'template')
  const table = await DeltaTable.create(template, {
    schema: 'id long',
    properties: { 'delta.checkpointInterval': String(INTERVAL) },
  })
  try {
    const now = Date.now()
    for (let v = 1; v <= LATEST; v++) {
      if (v % INTERVAL === 0) {
        const r = await table.append([{ id: BigInt(v) }])
        assert.equal(r.version, BigInt(v))
      } else {
        await writeFile(join(template, '_delta_log', `${pad(v)}.json`), fillerCommit(v, now))
      }
    }
  } finally {
    await table.close()
  }
  agedAt = Date.now()
  await ageLog(template, agedAt)
  assert.deepEqual(
    versionsOf(await logNames(template), '.checkpoint.parquet'),
    idsAt(LATEST),
    'the engine appends wrote a checkpoint every 250 versions',
  )
})
after(() => rm(base, { recursive: true, force: true }))

/**
 * Sets one table property in a metadata commit through the engine: the commit is new, the older
 * log files keep their age.
 */
async function setProperty(table: DeltaTable, key: string, value: string): Promise<void> {
  const txn = await table.begin()
  const md = txn.snapshot.metadata
  txn.stageActions([{ metaData: { ...md, configuration: { ...md.configuration, [key]: value } } }], {
    operation: 'SET TBLPROPERTIES',
    changesData: false,
  })
  await txn.commit()
}

async function copy(name: string): Promise<string> {
  const dir = join(base, name)
  await cp(template, dir, { recursive: true, preserveTimestamps: true })
  return dir
}

describe('expired log cleanup on a 3,000-commit log aged over 41 days', () => {
  it('the checkpoint an engine commit writes cleans the log to the boundary, and every version in the window reads exactly', async () => {
    const dir = await copy('auto')
    const table = await DeltaTable.open(dir)
    try {
      // Filler commits up to the next interval, then an engine append that checkpoints.
      const now = Date.now()
      for (let v = LATEST + 1; v < LATEST + INTERVAL; v++)
        await writeFile(join(dir, '_delta_log', `${pad(v)}.json`), fillerCommit(v, now))
      const next = LATEST + INTERVAL
      assert.equal((await table.append([{ id: BigInt(next) }])).version, BigInt(next))
      await assertCleanedToBoundary(dir, next)

      const reopened = await DeltaTable.open(dir)
      try {
        assert.deepEqual(await ids(reopened), idsAt(next))
        for (const v of [750, 839, 840, 999, 1000, 2250, 2999, 3000, next])
          assert.deepEqual(await ids(reopened, { version: BigInt(v) }), idsAt(v), `version ${v}`)
        for (const v of [0n, 1n, 249n, 250n, 500n, 749n]) await assertGone(reopened, v, BigInt(next))
        // By timestamp: the time version 1000 was made selects it.
        const at1000 = agedAt - (LATEST - 1000) * STEP_MS
        assert.equal((await reopened.snapshot({ timestamp: at1000 })).version, 1000n)
        const history = await reopened.history()
        assert.equal(history.at(-1)?.version, BOUNDARY, 'history starts at the boundary')
      } finally {
        await reopened.close()
      }
    } finally {
      await table.close()
    }
  })

  it('cleanupMetadata lists the same files in a dry run, then deletes them; a second run finds nothing', async () => {
    const dir = await copy('explicit')
    const table = await DeltaTable.open(dir)
    try {
      const before = await logNames(dir)
      const dry = await table.cleanupMetadata({ dryRun: true })
      assert.equal(dry.dryRun, true)
      assert.equal(dry.boundary, BOUNDARY)
      const expected = before.filter((n) => BigInt(n.slice(0, 20)) < BOUNDARY).map((n) => `_delta_log/${n}`)
      assert.equal(expected.length, Number(BOUNDARY) + 2, 'commits 0..749 and checkpoints 250, 500')
      assert.deepEqual([...dry.files].sort(), expected)
      assert.deepEqual(await logNames(dir), before, 'a dry run deletes nothing')
      assert.ok(Math.abs(dry.cutoff - (Date.now() - 30 * DAY_MS)) < 60_000, 'the cutoff is 30 days ago')

      const done = await table.cleanupMetadata()
      assert.deepEqual([...done.files].sort(), expected)
      assert.deepEqual(done.failures, [])
      await assertCleanedToBoundary(dir, LATEST)
      assert.deepEqual(await ids(table, { version: BigInt(FIRST_IN_WINDOW) }), idsAt(FIRST_IN_WINDOW))
      await assertGone(table, BOUNDARY - 1n, BigInt(LATEST))

      const again = await table.cleanupMetadata()
      assert.equal(again.boundary, BOUNDARY)
      assert.deepEqual(again.files, [])
    } finally {
      await table.close()
    }
  })

  it('a shorter delta.logRetentionDuration moves the boundary up: checkpoint() cleans to the newest checkpoint older than it', async () => {
    const dir = await copy('short-retention')
    const table = await DeltaTable.open(dir)
    try {
      await setProperty(table, 'delta.logRetentionDuration', 'interval 10 days')
      // 10 days = 720 versions: the cutoff falls just after 2280, the boundary is 2250.
      const result = await table.checkpoint()
      assert.equal(result.version, BigInt(LATEST + 1))
      assert.equal(result.logCleanup?.boundary, 2250n)
      assert.deepEqual(result.logCleanup?.failures, [])
      const names = await logNames(dir)
      assert.equal(versionsOf(names, '.json')[0], 2250n)
      assert.deepEqual(versionsOf(names, '.checkpoint.parquet'), [2250n, 2500n, 2750n, 3000n, 3001n])
      assert.deepEqual(await ids(table, { version: 2281n }), idsAt(2281))
      await assert.rejects(
        () => table.scan({ version: 2249n }).toArray(),
        (err) => isDeltaError(err, 'DELTA_VERSION_NOT_FOUND'),
      )
    } finally {
      await table.close()
    }
  })

  it('with delta.enableExpiredLogCleanup=false the checkpoints delete nothing; cleanupMetadata still does', async () => {
    const dir = await copy('disabled')
    const table = await DeltaTable.open(dir)
    try {
      await setProperty(table, 'delta.enableExpiredLogCleanup', 'false')
      const now = Date.now()
      for (let v = LATEST + 2; v < LATEST + INTERVAL; v++)
        await writeFile(join(dir, '_delta_log', `${pad(v)}.json`), fillerCommit(v, now))
      const before = await logNames(dir)
      const next = LATEST + INTERVAL
      assert.equal((await table.append([{ id: BigInt(next) }])).version, BigInt(next))
      const checkpoint = await table.checkpoint()
      assert.equal(checkpoint.logCleanup, undefined, 'no cleanup ran')
      const after = await logNames(dir)
      assert.deepEqual(
        after.filter((n) => !before.includes(n)),
        [`${pad(next)}.checkpoint.parquet`, `${pad(next)}.json`],
        'only the new commit and its checkpoint were added; nothing was deleted',
      )
      assert.deepEqual(await ids(table, { version: 1n }), [])
      assert.deepEqual(await ids(table, { version: 250n }), [250n])

      const explicit = await table.cleanupMetadata()
      assert.equal(explicit.boundary, BOUNDARY)
      await assertCleanedToBoundary(dir, next)
    } finally {
      await table.close()
    }
  })

  it('a cleanup stopped half-way leaves a readable table, and the next run finishes it', async () => {
    const dir = await copy('interrupted')
    const stop = new AbortController()
    let deletes = 0
    const inner = createLocalStore(dir)
    const store = {
      ...passThroughStore(inner),
      delete: async (key: string, opts?: { signal?: AbortSignal | undefined }) => {
        await inner.delete(key, opts)
        if (++deletes === 300) stop.abort(new Error('stopped'))
      },
    }
    const table = await DeltaTable.open(dir, { storage: store })
    try {
      await assert.rejects(() => table.cleanupMetadata({ signal: stop.signal }), /stopped/)
      const left = await logNames(dir)
      const leftBelow = left.filter((n) => BigInt(n.slice(0, 20)) < BOUNDARY)
      assert.ok(leftBelow.length > 0 && leftBelow.length < Number(BOUNDARY) + 2, `${leftBelow.length} left`)
      // The ascending order: what is left below the boundary is the newer part of it.
      assert.ok(!left.includes(`${pad(0)}.json`), 'the oldest commits went first')

      const reopened = await DeltaTable.open(dir)
      try {
        assert.deepEqual(await ids(reopened), idsAt(LATEST))
        for (const v of [750, FIRST_IN_WINDOW, 2000])
          assert.deepEqual(await ids(reopened, { version: BigInt(v) }), idsAt(v), `version ${v}`)
        const rest = await reopened.cleanupMetadata()
        assert.equal(rest.files.length, leftBelow.length)
      } finally {
        await reopened.close()
      }
      await assertCleanedToBoundary(dir, LATEST)
    } finally {
      await table.close()
    }
  })

  it('a log file that cannot be deleted never fails the commit whose checkpoint cleans up: it is reported and kept', async () => {
    const dir = await copy('failing-delete')
    const inner = createLocalStore(dir)
    const refused = `_delta_log/${pad(100)}.json`
    const store = {
      ...passThroughStore(inner),
      delete: async (key: string, opts?: { signal?: AbortSignal | undefined }) => {
        if (key === refused) throw new StorageError(`refused to delete ${key}`, { path: key })
        await inner.delete(key, opts)
      },
    }
    const table = await DeltaTable.open(dir, { storage: store })
    try {
      const result = await table.checkpoint()
      assert.equal(result.version, BigInt(LATEST))
      assert.equal(result.logCleanup?.failures.length, 1)
      assert.equal(result.logCleanup?.failures[0]?.key, refused)
      assert.equal(result.logCleanup?.files.length, Number(BOUNDARY) + 1)
      const now = Date.now()
      for (let v = LATEST + 1; v < LATEST + INTERVAL; v++)
        await writeFile(join(dir, '_delta_log', `${pad(v)}.json`), fillerCommit(v, now))
      const next = LATEST + INTERVAL
      const commit = await table.append([{ id: BigInt(next) }])
      assert.equal(commit.version, BigInt(next), 'the commit that checkpoints lands')
      const names = await logNames(dir)
      assert.ok(names.includes(`${pad(100)}.json`), 'the refused file is still there')
      assert.ok(names.includes(`${pad(next)}.checkpoint.parquet`))
      assert.deepEqual(await ids(table), idsAt(next))
      assert.deepEqual(await ids(table, { version: BOUNDARY }), idsAt(Number(BOUNDARY)))
    } finally {
      await table.close()
    }
  })
})

describe('expired log cleanup on a table with In-Commit Timestamps', () => {
  it('times the checkpoints by their In-Commit Timestamps, not by file times', async () => {
    const dir = join(base, 'ict')
    const table = await DeltaTable.create(dir, {
      schema: 'id long',
      properties: { 'delta.enableInCommitTimestamps': 'true', 'delta.checkpointInterval': '1000' },
    })
    try {
      // Version v was made 40 - v days (and an hour) ago: 11 and newer are inside 30 days.
      const now = Date.now()
      const ictOf = (v: number) => now - (40 - v) * DAY_MS - 3_600_000
      const log = join(dir, '_delta_log')
      const zero = join(log, `${pad(0)}.json`)
      const lines = (await readFile(zero, 'utf8')).split('\n').filter((l) => l !== '')
      const info = JSON.parse(lines[0] as string) as { commitInfo: Record<string, unknown> }
      assert.ok(info.commitInfo.inCommitTimestamp !== undefined, 'commit 0 starts with its ICT')
      info.commitInfo.inCommitTimestamp = ictOf(0)
      await writeFile(zero, `${[JSON.stringify(info), ...lines.slice(1)].join('\n')}\n`)
      for (let v = 1; v <= 39; v++) {
        const commitInfo = { inCommitTimestamp: ictOf(v), timestamp: ictOf(v), operation: 'SET TRANSACTION' }
        const txn = { appId: 'filler', version: v, lastUpdated: ictOf(v) }
        await writeFile(
          join(log, `${pad(v)}.json`),
          `${JSON.stringify({ commitInfo })}\n${JSON.stringify({ txn })}\n`,
        )
      }
      for (const v of [10n, 20n, 30n]) await table.checkpoint({ version: v })
      // Every file is older than the cutoff: only the In-Commit Timestamps can place it.
      const old = new Date(now - 70 * DAY_MS)
      for (const name of await readdir(log))
        if (/^\d{20}\./.test(name)) await utimes(join(log, name), old, old)

      const result = await table.cleanupMetadata()
      assert.equal(result.boundary, 10n)
      assert.deepEqual(
        [...result.files].sort(),
        Array.from({ length: 10 }, (_, v) => `_delta_log/${pad(v)}.json`),
      )
      const reopened = await DeltaTable.open(dir)
      try {
        for (const v of [10n, 11n, 25n, 39n])
          assert.equal((await reopened.snapshot({ version: v })).version, v)
        assert.equal((await reopened.snapshot({ timestamp: ictOf(15) })).version, 15n)
        await assert.rejects(
          () => reopened.snapshot({ version: 9n }),
          (err) => isDeltaError(err, 'DELTA_VERSION_NOT_FOUND'),
        )
      } finally {
        await reopened.close()
      }
    } finally {
      await table.close()
    }
  })
})
