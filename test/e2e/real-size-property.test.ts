/**
 * Random tables with checkpointed logs, as a property: each case creates a table (deletion
 * vectors on or off, partitioned or not, In-Commit Timestamps on or off, a checkpoint every two
 * to four commits), runs a random sequence of appends, deletes, updates, merges and optimizes
 * through the public API, and keeps a serial row model in JavaScript. At the end, and at a random
 * earlier version, `count()`, the length of `scan().toArray()` and the model's size agree, and
 * the rows equal the model's; the timestamp `history()` reports for that earlier version time
 * travels to it.
 *
 * A case costs a table and a dozen commits, far more than a case of the serial-equivalence
 * property, so the number of cases has its own variable: `DELTA_RLC_REAL_SIZE_RUNS` (default 6).
 * The seed is fixed; `DELTA_RLC_PROPERTY_SEED` explores another.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { DeltaTable } from '../../src/table/delta-table.js'
import {
  applyToModel,
  applyToTable,
  assertSameRows,
  checkpointVersions,
  describeOp,
  MERGE_ID_BASE,
  type ModelRow,
  type Op,
  type Pred,
  REAL_SIZE_SCHEMA,
  rowKey,
  type SetSpec,
} from '../helpers/real-size.js'

const RUNS = Number(process.env.DELTA_RLC_REAL_SIZE_RUNS ?? 6)
const SEED = Number(process.env.DELTA_RLC_PROPERTY_SEED ?? 20_260_501)

// === Generators ===

/** An operation before its append ids are assigned (they follow the appends before it). */
type OpDraft = Exclude<Op, { kind: 'append' }> | { readonly kind: 'append'; readonly count: number }

/** Ids the first appends reach; predicates and merge keys aim there. */
const ID_SPAN = 400

const predArb: fc.Arbitrary<Pred> = fc.oneof(
  fc.tuple(fc.integer({ min: 2, max: 9 }), fc.nat(8)).map(([m, r]): Pred => ({ t: 'mod', m, r: r % m })),
  fc
    .tuple(fc.nat(ID_SPAN), fc.integer({ min: 1, max: 80 }))
    .map(([a, w]): Pred => ({ t: 'range', a, b: a + w })),
  fc
    .tuple(fc.nat(2), fc.integer({ min: 1, max: 5 }), fc.nat(4))
    .map(([p, m, r]): Pred => ({ t: 'partMod', p, m, r: r % m })),
  fc.integer({ min: 0, max: ID_SPAN * 2 }).map((c): Pred => ({ t: 'valueAbove', c })),
  fc
    .tuple(fc.integer({ min: 1, max: 4 }), fc.nat(3))
    .map(([m, r]): Pred => ({ t: 'nameNullMod', m, r: r % m })),
)

const setArb: fc.Arbitrary<SetSpec> = fc.oneof(
  fc.integer({ min: 1, max: 9 }).map((k): SetSpec => ({ t: 'addValue', k })),
  fc.nat(99).map((k): SetSpec => ({ t: 'name', s: `u${k}` })),
  fc.constant<SetSpec>({ t: 'movePart' }),
)

const opArb: fc.Arbitrary<OpDraft> = fc.oneof(
  {
    arbitrary: fc.integer({ min: 1, max: 120 }).map((count): OpDraft => ({ kind: 'append', count })),
    weight: 3,
  },
  { arbitrary: predArb.map((where): OpDraft => ({ kind: 'delete', where })), weight: 2 },
  {
    arbitrary: fc.record({ where: predArb, set: setArb }).map((u): OpDraft => ({ kind: 'update', ...u })),
    weight: 2,
  },
  {
    arbitrary: fc
      .record({
        mode: fc.constantFrom('upsert', 'delete', 'mixed'),
        matched: fc.uniqueArray(fc.nat(ID_SPAN), { maxLength: 30 }),
        inserted: fc.uniqueArray(fc.nat(999), { maxLength: 10 }),
        salt: fc.integer({ min: 1, max: 1000 }),
      })
      .filter((m) => m.matched.length + m.inserted.length > 0)
      .map(
        (m): OpDraft => ({
          kind: 'merge',
          mode: m.mode,
          ids: [...m.matched, ...m.inserted.map((k) => MERGE_ID_BASE + k)],
          salt: m.salt,
        }),
      ),
    weight: 2,
  },
  fc.constant<OpDraft>({ kind: 'optimize' }),
)

interface CaseSpec {
  readonly dv: boolean
  readonly partitioned: boolean
  readonly interval: number
  readonly inCommitTimestamps: boolean
  readonly ops: readonly Op[]
  /** Picks the earlier version to check. */
  readonly probe: number
}

const caseArb: fc.Arbitrary<CaseSpec> = fc
  .record({
    dv: fc.boolean(),
    partitioned: fc.boolean(),
    interval: fc.integer({ min: 2, max: 4 }),
    inCommitTimestamps: fc.boolean(),
    first: fc.integer({ min: 50, max: ID_SPAN }),
    drafts: fc.array(opArb, { minLength: 6, maxLength: 12 }),
    probe: fc.nat(),
  })
  .map(({ dv, partitioned, interval, inCommitTimestamps, first, drafts, probe }) => {
    // The first commit loads a base of rows for the predicates and merge keys to hit.
    const ops: Op[] = [{ kind: 'append', from: 0, count: first }]
    let next = first
    for (const d of drafts) {
      if (d.kind === 'append') {
        ops.push({ kind: 'append', from: next, count: d.count })
        next += d.count
      } else {
        ops.push(d)
      }
    }
    return { dv, partitioned, interval, inCommitTimestamps, ops, probe }
  })

// === Running a case ===

function caseLabel(spec: CaseSpec): string {
  return `${spec.dv ? 'DVs' : 'copy-on-write'}, ${spec.partitioned ? 'partitioned' : 'unpartitioned'}, checkpoint every ${spec.interval}${spec.inCommitTimestamps ? ', in-commit timestamps' : ''}`
}

/** count(), the scan's length and the model's size agree, and the rows are the model's. */
async function assertConsistent(
  table: DeltaTable,
  expected: readonly ModelRow[],
  message: string,
  version?: bigint,
): Promise<void> {
  const at = version === undefined ? {} : { version }
  const rows = await table.scan(at).toArray()
  const count = await table.scan(at).count()
  assert.equal(count, rows.length, `${message}: count() equals scan().toArray().length`)
  assert.equal(rows.length, expected.length, `${message}: the scan has the model's size`)
  assertSameRows(rows, expected, message)
}

const distribution = { cases: 0, commits: 0, noOps: 0, checkpoints: 0, ops: new Map<string, number>() }

async function runCase(spec: CaseSpec): Promise<void> {
  const base = await mkdtemp(join(tmpdir(), 'delta-rlc-real-size-prop-'))
  const dir = join(base, 't')
  const table = await DeltaTable.create(dir, {
    schema: REAL_SIZE_SCHEMA,
    partitionBy: spec.partitioned ? ['part'] : [],
    properties: {
      'delta.enableDeletionVectors': String(spec.dv),
      'delta.checkpointInterval': String(spec.interval),
      'delta.enableInCommitTimestamps': String(spec.inCommitTimestamps),
    },
  })
  try {
    const modelAt: ModelRow[][] = [[]]
    for (const op of spec.ops) {
      const before = modelAt.at(-1)!
      const after = applyToModel(op, before)
      const result = await applyToTable(table, op)
      const label = `${caseLabel(spec)}: ${describeOp(op)}`
      distribution.ops.set(op.kind, (distribution.ops.get(op.kind) ?? 0) + 1)
      if (result.committed) {
        assert.equal(result.version, BigInt(modelAt.length), `${label} commits the next version`)
        modelAt.push(after)
        distribution.commits++
      } else {
        // Nothing to commit must mean nothing to change.
        assert.deepEqual(after.map(rowKey).sort(), before.map(rowKey).sort(), `${label} committed nothing`)
        distribution.noOps++
      }
    }
    const latest = modelAt.length - 1
    const checkpoints = await checkpointVersions(dir)
    assert.equal(checkpoints.length, Math.floor(latest / spec.interval), `${caseLabel(spec)}: checkpoints`)
    distribution.checkpoints += checkpoints.length
    await assertConsistent(table, modelAt[latest]!, `${caseLabel(spec)}: latest version ${latest}`)
    const earlier = spec.probe % latest
    await assertConsistent(
      table,
      modelAt[earlier]!,
      `${caseLabel(spec)}: version ${earlier}`,
      BigInt(earlier),
    )
    const entry = (await table.history()).find((h) => h.version === BigInt(earlier))
    assert.ok(entry, `${caseLabel(spec)}: history lists version ${earlier}`)
    const byTime = await table.snapshot({ timestamp: entry.timestamp })
    assert.equal(byTime.version, entry.version, `${caseLabel(spec)}: the timestamp of version ${earlier}`)
    distribution.cases++
  } finally {
    await table.close()
    await rm(base, { recursive: true, force: true })
  }
}

describe('random checkpointed tables against a serial row model', () => {
  it(`count(), scan() and the model agree at the end and at an earlier version (${RUNS} cases)`, async (t) => {
    await fc.assert(fc.asyncProperty(caseArb, runCase), { seed: SEED, numRuns: RUNS })
    t.diagnostic(
      `cases ${distribution.cases}: ${distribution.commits} commits, ${distribution.noOps} operations with nothing to commit, ${distribution.checkpoints} checkpoints; ` +
        [...distribution.ops].map(([k, n]) => `${k} ${n}`).join(', '),
    )
    assert.ok(distribution.cases >= RUNS)
  })
})
