/**
 * Every check of the race verifier, shown failing: one short race (append, delete, update and
 * OPTIMIZE writers on hot keys, row tracking on, one conflict abort) is run once; each row of the
 * table below damages a copy of its table (or its event log) in one way and expects exactly the
 * named check to fail, with a detail naming what it found, and every other check to pass. The
 * untouched copy passes every check. One more check is one more row.
 */
import assert from 'node:assert/strict'
import { cp, mkdtemp, readFile, rm, truncate, unlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { COMPACTION_INFO_TAG } from '../../src/protocol/composition-tags.js'
import { commitKey } from '../../src/protocol/log-files.js'
import {
  type AttemptEvent,
  type RaceConfig,
  type RaceEvent,
  type RunEvent,
  readEvents,
  runRace,
  verifyRace,
} from '../../src/race/index.js'
import { appIdOf, type PlannedOp, planOperation } from '../../src/race/plan.js'
import { stageOperation } from '../../src/race/stage-op.js'
import { DeltaTable } from '../../src/table/delta-table.js'
import { runCliInProcess } from '../helpers/cli-in-process.js'

/** Every check the verifier runs on a table with row tracking. */
const CHECKS = [
  'log-contiguous',
  'no-unknown-commits',
  'applied-at-most-once',
  'acknowledged-commits-visible',
  'aborted-ops-not-landed',
  'readable-every-version',
  'row-count-every-version',
  'no-duplicate-keys',
  'content-matches-serial-replay',
  'row-ids-unique',
  'row-ids-preserved',
  'committed-files-present',
  'compaction-offsets-exact',
] as const

/** A log line as parsed JSON, edited in place by the damage. */
// biome-ignore lint/suspicious/noExplicitAny: raw log JSON, edited field by field
type LogAction = Record<string, any>

/** A copy of the race: its table directory and its event log. */
interface Copy {
  readonly dir: string
  readonly events: string
}

/** What the damage did, for the detail to name. */
type Found = Readonly<Record<string, string | number>>

interface Tamper {
  /** The check that must fail, alone but for {@link Tamper.with}. */
  readonly check: (typeof CHECKS)[number]
  /** Checks the same damage must fail too: a missing live file also leaves its version unreadable. */
  readonly with?: readonly (typeof CHECKS)[number][]
  readonly damage: string
  /** Damages the copy; returns what the detail must name. */
  readonly apply: (copy: Copy) => Promise<Found>
  /** The failed check's detail (and the first divergence's message), given what was damaged. */
  readonly detail: (found: Found) => RegExp
}

describe('race verifier: every check fails on the damage it exists for', () => {
  let root: string
  let location: string
  let eventsPath: string
  let config: RaceConfig
  let events: RaceEvent[]
  let copies = 0

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'delta-rlc-verify-tamper-'))
    location = join(root, 'table')
    const report = await runRace({
      location,
      writers: { append: 1, delete: 1, update: 1, optimize: 1 },
      overlap: 'hot',
      rowTracking: true,
      conflicts: 'all',
      seed: 3,
      durationMs: 60_000,
      opsPerWriter: 4,
      rows: 400,
      initialFiles: 2,
    })
    const run = report.runs[0]!
    eventsPath = run.eventsPath
    events = await readEvents(eventsPath)
    config = (events[0] as RunEvent).config
    assert.ok(run.verify?.ok, 'the untouched table passes')
    assert.deepEqual(
      run.verify.checks.map((c) => c.name),
      [...CHECKS],
      'the verifier runs every check the table lists',
    )
  })
  after(() => rm(root, { recursive: true, force: true }))

  const attempts = () => events.filter((e): e is AttemptEvent => e.type === 'attempt')
  const committed = () => attempts().filter((a) => a.outcome === 'committed')
  const latest = () => Math.max(...committed().map((a) => a.version!))

  async function copy(): Promise<Copy> {
    const at = join(root, `copy-${copies++}`)
    await cp(location, join(at, 'table'), { recursive: true })
    await cp(eventsPath, join(at, 'events.jsonl'))
    return { dir: join(at, 'table'), events: join(at, 'events.jsonl') }
  }

  const logPath = (c: Copy, v: number) => join(c.dir, commitKey(BigInt(v)))
  const readActions = async (c: Copy, v: number) =>
    (await readFile(logPath(c, v), 'utf8'))
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as LogAction)
  const writeActions = (c: Copy, v: number, actions: readonly unknown[]) =>
    writeFile(logPath(c, v), `${actions.map((a) => JSON.stringify(a)).join('\n')}\n`)
  /** A commit written straight into the log, as another engine would. */
  const rawCommit = (c: Copy, v: number, operation: string, actions: readonly unknown[] = []) =>
    writeActions(c, v, [
      { commitInfo: { timestamp: Date.now(), operation, txnId: `tamper-${v}` } },
      ...actions,
    ])

  /**
   * Commits the next planned operation of the first writer of `kind` under its marker, as the race
   * would have (optionally altered first), after the race's last version.
   */
  async function commitNext(
    c: Copy,
    kind: PlannedOp['kind'],
    alter: (op: PlannedOp) => PlannedOp = (op) => op,
  ): Promise<{ version: number; op: PlannedOp }> {
    const writer = config.writers.findIndex((w) => w.kind === kind)
    assert.ok(writer >= 0, `the race has a ${kind} writer`)
    const seq = Math.max(...attempts().map((a) => a.seq)) + 1
    const op = planOperation(config, config.writers[writer]!, seq)
    const table = await DeltaTable.open(c.dir)
    try {
      const txn = await table.begin()
      txn.setTransaction(appIdOf(config.runId, writer), seq)
      await stageOperation(txn, alter(op))
      return { version: Number((await txn.commit()).version), op }
    } finally {
      await table.close()
    }
  }

  /** The data files of one commit's adds that no OPTIMIZE ever read or wrote, with their version. */
  async function plainAdd(c: Copy): Promise<{ version: number; path: string; add: LogAction }> {
    const optimized = new Set<string>()
    for (const v of committed().map((a) => a.version!)) {
      for (const a of await readActions(c, v)) {
        if (a.commitInfo?.operation !== 'OPTIMIZE') continue
        for (const x of await readActions(c, v)) {
          if (x.add) optimized.add(x.add.path)
          if (x.remove) optimized.add(x.remove.path)
        }
      }
    }
    const last = latest()
    const table = await DeltaTable.open(c.dir)
    let live: Set<string>
    try {
      live = new Set((await table.snapshot()).activeFiles().map((f) => f.path))
    } finally {
      await table.close()
    }
    for (let v = last; v > (events[0] as RunEvent).initialVersion; v--) {
      for (const a of await readActions(c, v)) {
        if (a.add && a.add.deletionVector === undefined && !optimized.has(a.add.path) && live.has(a.add.path))
          return { version: v, path: a.add.path, add: a.add }
      }
    }
    throw new Error('no live data file outside every OPTIMIZE')
  }

  const TAMPERS: readonly Tamper[] = [
    {
      check: 'log-contiguous',
      damage: 'a commit file deleted where a checkpoint still covers the versions after it',
      apply: async (c) => {
        // Two data-preserving OPTIMIZE commits after the race, a checkpoint at the second, then the
        // first's file deleted: every version still loads, and only the log has a hole.
        const v = latest() + 1
        await rawCommit(c, v, 'OPTIMIZE')
        await rawCommit(c, v + 1, 'OPTIMIZE')
        const table = await DeltaTable.open(c.dir)
        try {
          await table.checkpoint()
        } finally {
          await table.close()
        }
        await unlink(logPath(c, v))
        return { version: v }
      },
      detail: (f) => new RegExp(`version ${f.version} is missing`),
    },
    {
      check: 'no-unknown-commits',
      damage: 'a commit with no race marker',
      apply: async (c) => {
        const v = latest() + 1
        await rawCommit(c, v, 'WRITE')
        return { version: v }
      },
      detail: (f) => new RegExp(`version ${f.version} \\(WRITE\\) carries 0 race markers`),
    },
    {
      check: 'applied-at-most-once',
      damage: "an operation's marker committed a second time",
      apply: async (c) => {
        const first = committed().find((a) => a.kind === 'delete')!
        const v = latest() + 1
        await rawCommit(c, v, 'DELETE', [
          { txn: { appId: appIdOf(config.runId, first.writer), version: first.seq } },
        ])
        return { version: v, first: first.version!, writer: first.writer, seq: first.seq }
      },
      detail: (f) =>
        new RegExp(`w${f.writer} seq ${f.seq} landed twice: at versions ${f.first} and ${f.version}`),
    },
    {
      check: 'acknowledged-commits-visible',
      damage: 'the last acknowledged commit dropped',
      apply: async (c) => {
        const last = committed().find((a) => a.version === latest())!
        await unlink(logPath(c, last.version!))
        return { writer: last.writer, seq: last.seq, version: last.version! }
      },
      detail: (f) =>
        new RegExp(
          `1 missing or misplaced.*acknowledged commit of w${f.writer} seq ${f.seq} .*is not at version ${f.version}`,
        ),
    },
    {
      check: 'aborted-ops-not-landed',
      damage: 'an operation its writer was told had aborted, landed afterwards',
      apply: async (c) => {
        const lost = attempts().find((a) => a.outcome === 'aborted' && a.code?.startsWith('DELTA_CONCURRENT'))
        assert.ok(lost, 'the race has a conflict abort')
        const table = await DeltaTable.open(c.dir)
        try {
          const txn = await table.begin()
          txn.setTransaction(appIdOf(config.runId, lost.writer), lost.seq)
          await stageOperation(txn, planOperation(config, config.writers[lost.writer]!, lost.seq))
          const { version } = await txn.commit()
          return { writer: lost.writer, seq: lost.seq, version: Number(version), code: lost.code! }
        } finally {
          await table.close()
        }
      },
      detail: (f) =>
        new RegExp(
          `w${f.writer} seq ${f.seq} was reported aborted \\(${f.code}\\) in every try, yet landed at version ${f.version}`,
        ),
    },
    {
      check: 'committed-files-present',
      with: ['readable-every-version'],
      damage: 'a live data file deleted',
      apply: async (c) => {
        const f = await plainAdd(c)
        await unlink(join(c.dir, decodeURIComponent(f.path)))
        return { path: f.path }
      },
      detail: (f) => new RegExp(`1 files of version \\d+ are missing, first .*${f.path}`),
    },
    {
      check: 'readable-every-version',
      damage: 'a live data file truncated',
      apply: async (c) => {
        const f = await plainAdd(c)
        await truncate(join(c.dir, decodeURIComponent(f.path)), 100)
        return { path: f.path }
      },
      detail: (f) => new RegExp(`version \\d+ cannot be read: DELTA_STORAGE_ERROR .*${f.path}`),
    },
    {
      check: 'row-count-every-version',
      damage: "a file's row count raised by one in its add",
      apply: async (c) => {
        const f = await plainAdd(c)
        const actions = await readActions(c, f.version)
        for (const a of actions) {
          if (a.add?.path !== f.path) continue
          const stats = JSON.parse(a.add.stats)
          stats.numRecords++
          a.add.stats = JSON.stringify(stats)
        }
        await writeActions(c, f.version, actions)
        return { version: f.version }
      },
      detail: (f) => new RegExp(`version ${f.version}: (\\d+) live rows, the replay has`),
    },
    {
      check: 'no-duplicate-keys',
      damage: 'a live data file added a second time by a data-preserving OPTIMIZE (counted as empty)',
      apply: async (c) => {
        const f = await plainAdd(c)
        const copyPath = `again-${f.path}`
        await cp(join(c.dir, decodeURIComponent(f.path)), join(c.dir, decodeURIComponent(copyPath)))
        const stats = JSON.parse(f.add.stats)
        const v = latest() + 1
        await rawCommit(c, v, 'OPTIMIZE', [
          {
            add: {
              ...f.add,
              path: copyPath,
              dataChange: false,
              stats: JSON.stringify({ ...stats, numRecords: 0 }),
            },
          },
        ])
        return { version: v }
      },
      detail: (f) => new RegExp(`version ${f.version} holds key \\d+ more than once`),
    },
    {
      check: 'content-matches-serial-replay',
      damage: "the update writer's next operation committed with another delta than planned",
      apply: async (c) => {
        type Update = Extract<PlannedOp, { delta: number }>
        const { version, op } = await commitNext(c, 'update', (op) => ({
          ...(op as Update),
          delta: (op as Update).delta + 1,
        }))
        return { version, tag: (op as Update).tag }
      },
      detail: (f) =>
        new RegExp(
          `version ${f.version}, key (\\d+): the table has \\{id: \\1, val: \\d+, tag: ${f.tag}\\}, the serial replay has \\{id: \\1,`,
        ),
    },
    {
      check: 'row-ids-unique',
      damage: "an appended file's base row id set to the first initial row's",
      apply: async (c) => {
        const { version } = await commitNext(c, 'append')
        const actions = await readActions(c, version)
        for (const a of actions) if (a.add) a.add.baseRowId = 0
        await writeActions(c, version, actions)
        return { version }
      },
      detail: (f) => new RegExp(`version ${f.version}: keys \\d+ and \\d+ share the stable row id`),
    },
    {
      check: 'row-ids-preserved',
      damage: 'an appended file re-added by a data-preserving OPTIMIZE under another base row id',
      apply: async (c) => {
        const { version } = await commitNext(c, 'append')
        const add = (await readActions(c, version)).find((a) => a.add !== undefined)!.add
        // An add of a live path replaces it: the same rows, now under other row ids.
        await rawCommit(c, version + 1, 'OPTIMIZE', [
          { add: { ...add, dataChange: false, baseRowId: add.baseRowId + 1_000_000 } },
        ])
        return { version: version + 1, had: version }
      },
      detail: (f) =>
        new RegExp(`version ${f.version}: key \\d+ has stable row id \\d+, but had \\d+ at version ${f.had}`),
    },
    {
      check: 'compaction-offsets-exact',
      damage: "an OPTIMIZE source's offset in its output shifted by one row",
      apply: async (c) => {
        for (const a of committed()
          .filter((x) => x.kind === 'optimize')
          .reverse()) {
          const actions = await readActions(c, a.version!)
          const tagged = actions.find((x) => {
            const tag = x.remove?.tags?.[COMPACTION_INFO_TAG]
            return tag !== undefined && JSON.parse(tag)[0].rowOffsetInTarget > 0
          })
          if (tagged === undefined) continue
          const [entry] = JSON.parse(tagged.remove.tags[COMPACTION_INFO_TAG])
          tagged.remove.tags[COMPACTION_INFO_TAG] = JSON.stringify([
            { ...entry, rowOffsetInTarget: entry.rowOffsetInTarget + 1 },
          ])
          await writeActions(c, a.version!, actions)
          return { version: a.version!, source: tagged.remove.path }
        }
        throw new Error('no OPTIMIZE compacted a source past row 0 of its output')
      },
      detail: (f) =>
        new RegExp(
          `OPTIMIZE at version ${f.version}: live row 0 of source ${f.source} \\(id \\d+\\) should sit at row`,
        ),
    },
  ]

  it('passes every check on an untouched copy', async () => {
    const c = await copy()
    const v = await verifyRace(c.dir, c.events)
    assert.deepEqual(
      v.checks.filter((x) => !x.ok).map((x) => x.name),
      [],
    )
    assert.equal(v.firstDivergence, undefined)
  })

  it('has a row for every check', () => {
    assert.deepEqual([...new Set(TAMPERS.map((t) => t.check))].sort(), [...CHECKS].sort())
  })

  it('race --verify-events prints each failed check with what it found and exits 3, as no internal error', async () => {
    const c = await copy()
    const row = TAMPERS.find((t) => t.check === 'acknowledged-commits-visible')!
    const found = await row.apply(c)
    const r = await runCliInProcess(['race', c.dir, '--verify-events', c.events])
    assert.equal(r.code, 3, r.stderr)
    assert.match(r.stdout, /^FAIL: \d+ committed operations replayed/)
    assert.match(
      r.stdout,
      /\n {2}failed acknowledged-commits-visible: \d+ acknowledged commits, 1 missing or misplaced\n/,
    )
    assert.match(
      r.stdout,
      new RegExp(
        `first divergence \\(acknowledged-commits-visible, version ${found.version}\\): acknowledged commit of w${found.writer} seq ${found.seq} `,
      ),
    )
    assert.match(
      r.stderr,
      /^error\[DELTA_VERIFICATION_FAILED\]: verification failed for .*: acknowledged-commits-visible\n/,
    )
    assert.doesNotMatch(r.stderr, /DELTA_INTERNAL|This is a bug/)
    const json = await runCliInProcess(['race', c.dir, '--verify-events', c.events, '--json'])
    assert.equal(json.code, 3, json.stderr)
    assert.deepEqual(
      (JSON.parse(json.stdout) as { checks: { name: string; ok: boolean }[] }).checks
        .filter((x) => !x.ok)
        .map((x) => x.name),
      ['acknowledged-commits-visible'],
    )
  })

  for (const t of TAMPERS) {
    it(`${t.check} fails, ${t.with === undefined ? 'alone' : `with ${t.with.join(', ')} only`}, on ${t.damage}`, async () => {
      const c = await copy()
      const found = await t.apply(c)
      const v = await verifyRace(c.dir, c.events)
      assert.deepEqual(
        v.checks.filter((x) => !x.ok).map((x) => x.name),
        CHECKS.filter((x) => x === t.check || t.with?.includes(x)),
        `only ${[t.check, ...(t.with ?? [])].join(' and ')} fail: ${JSON.stringify(v.checks.filter((x) => !x.ok))}`,
      )
      assert.equal(v.ok, false)
      const failed = v.checks.find((x) => x.name === t.check)!
      const text = `${failed.detail} | ${v.firstDivergence?.message ?? ''}`
      assert.match(text, t.detail(found))
    })
  }
})
