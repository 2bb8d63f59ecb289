/**
 * Every operation on a table with a long, checkpointed log: more than 50 commits and at least
 * three checkpoints (a small `delta.checkpointInterval`, deletion vectors on, partitioned and
 * not), each operation checked against a row model kept in JavaScript. After every commit the
 * whole table and its `count()` equal the model; then earlier versions (around every checkpoint
 * and across the log) read as the model was at that version, by version and by the timestamp
 * `history()` reports for it, and VACUUM leaves the latest version whole.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { isDeltaError } from '../../src/errors/index.js'
import { parseStats } from '../../src/protocol/stats.js'
import { DeltaTable } from '../../src/table/delta-table.js'
import {
  applyToModel,
  applyToTable,
  assertTableIs,
  checkpointVersions,
  describeOp,
  filesTheLogDoesNotName,
  MERGE_ID_BASE,
  type ModelRow,
  type Op,
  type Pred,
  REAL_SIZE_SCHEMA,
  type SetSpec,
} from '../helpers/real-size.js'

interface Layout {
  readonly name: string
  readonly partitioned: boolean
  readonly interval: number
  /** `delta.enableInCommitTimestamps`: history and time travel use the commits' own times. */
  readonly inCommitTimestamps: boolean
}

// Each axis once, to keep the tier's run time down: partitioning, the commit-time source (file
// times or In-Commit Timestamps), and the checkpoint spacing.
const LAYOUTS: readonly Layout[] = [
  {
    name: 'unpartitioned, deletion vectors, in-commit timestamps, a checkpoint every 5 commits',
    partitioned: false,
    interval: 5,
    inCommitTimestamps: true,
  },
  {
    name: 'partitioned by part, deletion vectors, file-time timestamps, a checkpoint every 7 commits',
    partitioned: true,
    interval: 7,
    inCommitTimestamps: false,
  },
]

/** Rounds of the script; each adds five to seven commits. */
const ROUNDS = 10

/**
 * The operations, in order: a first load, then rounds of append, DELETE, UPDATE, MERGE (upsert,
 * conditional mix, delete in turn), append, an OPTIMIZE every second round and a VACUUM inside the
 * retention once. Predicates vary so that deletes and updates hit many files and partitions.
 */
function script(): Op[] {
  const ops: Op[] = []
  let next = 0
  const append = (count: number) => {
    ops.push({ kind: 'append', from: next, count })
    next += count
  }
  append(400)
  for (let round = 0; round < ROUNDS; round++) {
    append(150)
    const deletes: Pred[] = [
      { t: 'mod', m: 13, r: round },
      { t: 'range', a: round * 97, b: round * 97 + 40 },
      { t: 'partMod', p: round % 3, m: 9, r: round % 9 },
      { t: 'nameNullMod', m: 7, r: round % 7 },
    ]
    ops.push({ kind: 'delete', where: deletes[round % deletes.length]! })
    const updates: Array<{ where: Pred; set: SetSpec }> = [
      { where: { t: 'mod', m: 11, r: round % 11 }, set: { t: 'addValue', k: round + 1 } },
      { where: { t: 'range', a: round * 61, b: round * 61 + 90 }, set: { t: 'name', s: `u${round}` } },
      { where: { t: 'partMod', p: (round + 1) % 3, m: 8, r: round % 8 }, set: { t: 'movePart' } },
    ]
    ops.push({ kind: 'update', ...updates[round % updates.length]! })
    const ids: number[] = []
    for (let k = 0; k < 40; k++) ids.push((round * 37 + k * 53) % next)
    for (let k = 0; k < 20; k++) ids.push(MERGE_ID_BASE + round * 100 + k)
    const modes = ['upsert', 'mixed', 'delete'] as const
    ops.push({ kind: 'merge', mode: modes[round % 3]!, ids: [...new Set(ids)], salt: round + 1 })
    append(100)
    if (round % 2 === 1) ops.push({ kind: 'optimize' })
    if (round === 4) ops.push({ kind: 'vacuum' })
  }
  return ops
}

for (const layout of LAYOUTS) {
  describe(`a table with a checkpointed log of over 50 commits: ${layout.name}`, () => {
    let base = ''
    let dir = ''
    let table: DeltaTable
    /** The model's rows at each version. */
    const modelAt: ModelRow[][] = []
    /** The operation each version's commit reported. */
    const operationAt: string[] = []

    before(async () => {
      base = await mkdtemp(join(tmpdir(), 'delta-rlc-real-size-'))
      dir = join(base, 't')
      table = await DeltaTable.create(dir, {
        schema: REAL_SIZE_SCHEMA,
        partitionBy: layout.partitioned ? ['part'] : [],
        properties: {
          'delta.enableDeletionVectors': 'true',
          'delta.checkpointInterval': String(layout.interval),
          ...(layout.inCommitTimestamps ? { 'delta.enableInCommitTimestamps': 'true' } : {}),
        },
      })
      modelAt.push([])
      operationAt.push('CREATE TABLE')
    })
    after(async () => {
      await table?.close()
      await rm(base, { recursive: true, force: true })
    })

    it('append, delete, update, merge, optimize and vacuum each leave the table and count() equal to the model', async (t) => {
      let model: ModelRow[] = []
      for (const op of script()) {
        const result = await applyToTable(table, op).catch((err: unknown) => {
          t.diagnostic(`${describeOp(op)} on version ${modelAt.length - 1} failed`)
          throw err
        })
        model = applyToModel(op, model)
        const label = `after ${describeOp(op)} (version ${result.version})`
        if (op.kind === 'vacuum') {
          assert.equal(result.committed, false, 'VACUUM writes no data version')
          assert.equal(result.metrics.numDeletedFiles, 0, 'nothing inside the retention is deleted')
          // Its log-only VACUUM START and END commits are versions of their own, with the same rows.
          assert.equal(
            (result as { startVersion?: bigint }).startVersion,
            BigInt(modelAt.length),
            `${label}: VACUUM START is the next version`,
          )
          assert.equal(
            (result as { endVersion?: bigint }).endVersion,
            BigInt(modelAt.length + 1),
            `${label}: VACUUM END follows it`,
          )
          modelAt.push(model, model)
          operationAt.push('VACUUM START', 'VACUUM END')
        } else {
          assert.equal(result.committed, true, `${label} commits`)
          assert.equal(result.version, BigInt(modelAt.length), `${label} is the next version`)
          modelAt.push(model)
          operationAt.push(result.operation)
        }
        await assertTableIs(table, model, label)
      }
      assert.ok(modelAt.length > 50, `${modelAt.length - 1} commits after the create`)
      const checkpoints = await checkpointVersions(dir)
      assert.ok(checkpoints.length >= 3, `checkpoints at ${checkpoints.join(', ')}`)
      const latest = BigInt(modelAt.length - 1)
      assert.equal(checkpoints.at(-1), latest - (latest % BigInt(layout.interval)))
      const reopened = await DeltaTable.open(dir)
      try {
        await assertTableIs(reopened, model, 'a fresh handle reads the latest version')
      } finally {
        await reopened.close()
      }
    })

    it('time travel by version returns the model as it was, around every checkpoint and across the log', async () => {
      assert.ok(modelAt.length > 50, 'the log was built')
      // Each side of every checkpoint (replayed from the one before, read from it, replayed on top
      // of it), the first versions (no checkpoint yet) and every fourth version between.
      const versions = new Set<number>([0, 1, 2, modelAt.length - 1])
      for (const c of await checkpointVersions(dir)) for (const d of [-1, 0, 1]) versions.add(Number(c) + d)
      for (let v = 0; v < modelAt.length; v += 4) versions.add(v)
      for (const v of [...versions].filter((x) => x < modelAt.length).sort((a, b) => a - b)) {
        await assertTableIs(table, modelAt[v]!, `version ${v}`, { version: BigInt(v) })
      }
    })

    it('a version read from its checkpoint keeps every file statistic: row counts, id bounds, null counts', async () => {
      assert.ok(modelAt.length > 50, 'the log was built')
      for (const v of await checkpointVersions(dir)) {
        const snap = await table.snapshot({ version: v })
        let live = 0n
        for (const f of snap.activeFiles()) {
          const stats = parseStats(f.stats)
          assert.ok(stats?.numRecords !== undefined, `version ${v}: ${f.path} has numRecords`)
          assert.notEqual(stats.minValues?.id, undefined, `version ${v}: ${f.path} has a minimum id`)
          assert.notEqual(stats.maxValues?.id, undefined, `version ${v}: ${f.path} has a maximum id`)
          assert.notEqual(
            stats.nullCount?.name,
            undefined,
            `version ${v}: ${f.path} has a null count of name`,
          )
          live += stats.numRecords - (f.deletionVector?.cardinality ?? 0n)
        }
        assert.equal(live, BigInt(modelAt[Number(v)]!.length), `version ${v}: live rows by the statistics`)
      }
    })

    it('leaves no file on disk that the log does not name', async () => {
      assert.ok(modelAt.length > 50, 'the log was built')
      const { listed, unnamed } = await filesTheLogDoesNotName(table, dir)
      assert.ok(listed > 50, `${listed} data and deletion-vector files`)
      assert.deepEqual(unnamed, [])
    })

    it('history lists every commit, newest first, with the operation each commit reported', async () => {
      assert.ok(modelAt.length > 50, 'the log was built')
      const history = await table.history()
      assert.deepEqual(
        history.map((h) => h.version),
        modelAt.map((_, v) => BigInt(v)).reverse(),
      )
      assert.deepEqual(
        history.map((h) => h.operation),
        [...operationAt].reverse(),
      )
      for (let i = 1; i < history.length; i++) {
        assert.ok(history[i - 1]!.timestamp > history[i]!.timestamp, 'timestamps increase with versions')
      }
      if (layout.inCommitTimestamps) {
        for (const h of history) {
          const ict = h.commitInfo?.inCommitTimestamp
          assert.equal(
            h.timestamp,
            ict === undefined ? undefined : Number(ict),
            `version ${h.version}: its ICT`,
          )
        }
      }
      assert.deepEqual(
        (await table.history({ limit: 3 })).map((h) => h.version),
        history.slice(0, 3).map((h) => h.version),
      )
    })

    it('the timestamp history reports for each version time travels to that version, before and after checkpoints', async () => {
      assert.ok(modelAt.length > 50, 'the log was built')
      const history = await table.history()
      const checkpoints = await checkpointVersions(dir)
      for (const h of history) {
        const snap = await table.snapshot({ timestamp: h.timestamp })
        assert.equal(
          snap.version,
          h.version,
          `the timestamp of version ${h.version} (checkpoints at ${checkpoints.join(', ')})`,
        )
      }
      // Contents too, at a version before the first checkpoint, at a checkpoint, and after the last.
      const newest = BigInt(modelAt.length - 1)
      for (const v of [3n, checkpoints[0]!, checkpoints.at(-1)! - 1n, newest]) {
        const i = history.findIndex((e) => e.version === v)
        const h = history[i]!
        await assertTableIs(table, modelAt[Number(v)]!, `timestamp of version ${v}`, {
          timestamp: h.timestamp,
        })
        // The same instant as a Date and as ISO text, and an instant before the next commit.
        assert.equal((await table.snapshot({ timestamp: new Date(h.timestamp) })).version, v)
        assert.equal((await table.snapshot({ timestamp: new Date(h.timestamp).toISOString() })).version, v)
        const later = history[i - 1]
        if (later !== undefined && later.timestamp - h.timestamp > 1) {
          assert.equal((await table.snapshot({ timestamp: later.timestamp - 1 })).version, v)
        }
      }
      await assert.rejects(
        () => table.snapshot({ timestamp: history.at(-1)!.timestamp - 1 }),
        (err) => isDeltaError(err, 'DELTA_VERSION_NOT_FOUND'),
        'an instant before the first commit',
      )
    })

    it('vacuum with zero retention keeps the latest version whole, readable through its checkpoint, and writable', async () => {
      assert.ok(modelAt.length > 50, 'the log was built')
      const model = modelAt.at(-1)!
      const result = await table.vacuum({ retentionHours: 0, enforceRetentionDuration: false })
      assert.ok(result.files.length > 0, 'the files earlier versions used are deleted')
      await assertTableIs(table, model, 'after VACUUM')
      await assert.rejects(
        () => table.scan({ version: 1n }).toArray(),
        (err) => isDeltaError(err, 'DELTA_FILE_NOT_FOUND'),
        'a version whose files VACUUM deleted fails with a typed error',
      )
      const reopened = await DeltaTable.open(dir)
      try {
        await assertTableIs(reopened, model, 'a fresh handle after VACUUM')
        const op: Op = { kind: 'append', from: 900_000, count: 50 }
        const appended = await applyToTable(reopened, op)
        // The VACUUM wrote its START and END commits: the append is the version after them.
        assert.equal(appended.version, BigInt(modelAt.length + 2))
        await assertTableIs(reopened, applyToModel(op, model), 'an append after VACUUM')
      } finally {
        await reopened.close()
      }
    })
  })
}
