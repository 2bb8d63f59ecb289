/**
 * Cases 4a and 4b over chains of winners, against a row oracle: a losing OPTIMIZE remaps any
 * number of successive DML winners on the same sources (DV updates and whole removals) (the re-pointed tombstones keep the
 * read-time run in `remappedCompactionInfo`), commits, and a DML that then loses to that OPTIMIZE
 * is remapped through the re-pointed tombstones. Every output row the result deletes must be
 * exactly a row some commit deleted.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import type { TransactionInfo } from '../../../src/conflict/transaction-info.js'
import { initDeletionVectors } from '../../../src/dv/initialization.js'
import { parseCommitFile, serializeCommit } from '../../../src/protocol/action-json.js'
import type { Action, AddFile, DeletionVectorDescriptor } from '../../../src/protocol/actions.js'
import { parseOptimizeSourceComposition } from '../../../src/protocol/composition-tags.js'
import { compaction, dmlWinner, dvUpdate, optimizeLoser, rowsOf } from './compaction-fixture.js'
import {
  A,
  add,
  check,
  DV_PROTOCOL,
  DvStore,
  dvMeta,
  flagsWith,
  loser,
  removeOf,
  winner,
} from './factories.js'

await initDeletionVectors()

const ON = flagsWith({ optimizeReconciliation: true, optimizeReverseReconciliation: true })

interface Source {
  readonly rows: number
  readonly base: readonly number[]
}

interface Chain {
  readonly sources: readonly Source[]
  /** Each winner: the source it hits and a seed choosing which live rows it deletes. */
  readonly winners: readonly Hit[]
  /** The DML that finally loses to the committed OPTIMIZE. */
  readonly loser: readonly Hit[]
}

/** Rows deleted from one source: picked ones through a DV, or every live one by a whole removal. */
interface Hit {
  readonly source: number
  readonly pick: readonly number[]
  readonly whole?: boolean
}

const sourceArb = fc.integer({ min: 1, max: 40 }).chain((rows) =>
  fc.record({
    rows: fc.constant(rows),
    base: fc.uniqueArray(fc.integer({ min: 0, max: rows - 1 }), { maxLength: rows - 1 }),
  }),
)
const hitArb: fc.Arbitrary<Hit> = fc.record({
  source: fc.nat(),
  pick: fc.uniqueArray(fc.nat({ max: 1000 }), { minLength: 1, maxLength: 4 }),
  whole: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
})
const chainArb: fc.Arbitrary<Chain> = fc.record({
  sources: fc.array(sourceArb, { minLength: 1, maxLength: 4 }),
  winners: fc.array(hitArb, { maxLength: 6 }),
  loser: fc.array(hitArb, { minLength: 1, maxLength: 2 }),
})

function fileOf(k: number, s: Source, dv: DeletionVectorDescriptor | undefined): AddFile {
  return add(`s${k}.parquet`, {
    stats: { numRecords: s.rows, min: { id: 1000 * k }, max: { id: 1000 * k + s.rows - 1 } },
    ...(dv ? { dv } : {}),
  })
}

/** The rows of a source not in `deleted`. */
function liveRows(rows: number, deleted: ReadonlySet<number>): number[] {
  return [...Array(rows).keys()].filter((i) => !deleted.has(i))
}

/** Picks live rows (not in `deleted`) by seed; none when every row is gone. */
function pickLive(rows: number, deleted: ReadonlySet<number>, seeds: readonly number[]): number[] {
  const live = liveRows(rows, deleted)
  if (live.length === 0) return []
  return [...new Set(seeds.map((x) => live[x % live.length]!))]
}

function actionsOf(r: ReturnType<typeof check>): readonly Action[] {
  if (r.kind !== 'ok') throw new assert.AssertionError({ message: `expected ok: ${r.error.message}` })
  return r.txn.actions
}

function outputDv(actions: readonly Action[]): number[] {
  const out = actions.flatMap((a) => ('add' in a && a.add.path === 'out.parquet' ? [a.add] : []))
  assert.equal(out.length, 1)
  return rowsOf(out[0]!.deletionVector)
}

/** Runs one chain; returns the output rows it deleted and those the oracle expects. */
function runChain(chain: Chain) {
  const store = new DvStore()
  const deleted = chain.sources.map((s) => new Set(s.base))
  const dvs = chain.sources.map((s, k) => (s.base.length > 0 ? store.dv(`base${k}`, s.base) : undefined))
  const capture = chain.sources.map((s, k) => fileOf(k, s, dvs[k]))
  const liveAtCapture = capture.map((_, k) => chain.sources[k]!.rows - chain.sources[k]!.base.length)
  const out = add('out.parquet', {
    dataChange: false,
    stats: { numRecords: liveAtCapture.reduce((a, b) => a + b, 0) },
  })
  // The oracle: where each (source, physical row) live at capture time sits in the output.
  const position = new Map<string, number>()
  let next = 0
  chain.sources.forEach((s, k) => {
    for (let i = 0; i < s.rows; i++) if (!deleted[k]!.has(i)) position.set(`${k}:${i}`, next++)
  })
  const expected = new Set<number>()

  let txn: TransactionInfo = optimizeLoser(capture, compaction(capture, { out }))
  chain.winners.forEach((w, j) => {
    const k = w.source % chain.sources.length
    const rows = w.whole
      ? liveRows(chain.sources[k]!.rows, deleted[k]!)
      : pickLive(chain.sources[k]!.rows, deleted[k]!, w.pick)
    if (rows.length === 0) return
    const pre = fileOf(k, chain.sources[k]!, dvs[k])
    for (const i of rows) {
      deleted[k]!.add(i)
      if (position.has(`${k}:${i}`)) expected.add(position.get(`${k}:${i}`)!)
    }
    // A whole removal leaves the source's DV as it was: the file is simply gone.
    if (!w.whole) dvs[k] = store.dv(`w${j}s${k}`, [...deleted[k]!])
    const actions = w.whole ? [A.remove(removeOf(pre))] : dvUpdate(pre, dvs[k]!)
    const r = check(txn, dmlWinner(BigInt(j + 2), actions), ON, store.facts())
    actionsOf(r)
    if (r.kind === 'ok') txn = r.txn
  })
  const optimized = [...expected].sort((a, b) => a - b)
  assert.deepEqual(outputDv(txn.actions), optimized)

  // The OPTIMIZE commits: its actions go through the log's JSON and back.
  const committed = parseCommitFile(serializeCommit(txn.actions))
  const outputs = new Set(['out.parquet'])
  for (const a of committed) {
    if (!('remove' in a)) continue
    const k = Number(a.remove.path.slice(1, -'.parquet'.length))
    const run = parseOptimizeSourceComposition(a.remove, outputs)
    assert.ok(run, `source ${a.remove.path} lost its run`)
    assert.deepEqual(run.readDeletionVector, capture[k]!.deletionVector)
  }

  // A DML that read the latest state of the sources loses to it.
  const current = chain.sources.map((s, k) => fileOf(k, s, dvs[k]))
  const loserActions: Action[] = []
  const seen = new Set<number>()
  for (const h of chain.loser) {
    const k = h.source % chain.sources.length
    if (seen.has(k)) continue
    const rows = h.whole
      ? liveRows(chain.sources[k]!.rows, deleted[k]!)
      : pickLive(chain.sources[k]!.rows, deleted[k]!, h.pick)
    if (rows.length === 0) continue
    seen.add(k)
    for (const i of rows) expected.add(position.get(`${k}:${i}`)!)
    if (h.whole) loserActions.push(A.remove(removeOf(current[k]!)))
    else loserActions.push(...dvUpdate(current[k]!, store.dv(`l${k}`, [...deleted[k]!, ...rows])))
  }
  if (loserActions.length === 0) return { optimized }
  const dml = loser({
    metadata: dvMeta(),
    protocol: DV_PROTOCOL,
    files: current,
    reads: [{ scan: 'id >= 0' }],
    actions: loserActions,
    operation: 'DELETE',
  })
  const w = winner(BigInt(chain.winners.length + 2), committed, { operation: 'OPTIMIZE', blind: false })
  const after = actionsOf(check(dml, w, ON, store.facts()))
  assert.deepEqual(
    outputDv(after),
    [...expected].sort((a, b) => a - b),
  )
  return { optimized }
}

describe('Cases 4a then 4b over chains of winners (row oracle)', () => {
  it('three winners on one source, then a DML on the re-pointed tombstone', () => {
    runChain({
      sources: [
        { rows: 10, base: [1] },
        { rows: 10, base: [0, 4] },
      ],
      winners: [
        { source: 1, pick: [2] },
        { source: 1, pick: [5] },
        { source: 0, pick: [0] },
        { source: 1, pick: [0] },
      ],
      loser: [{ source: 1, pick: [0] }],
    })
  })

  it('any chain: the output deletes exactly the rows the commits deleted', () => {
    fc.assert(
      fc.property(chainArb, (chain) => {
        runChain(chain)
      }),
      { numRuns: 300 },
    )
  })
})
