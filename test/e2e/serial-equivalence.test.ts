/**
 * Serial equivalence of concurrent writers with every reconciliation on, as a property.
 *
 * Each case takes a tiny table (one to three files of `id long, v int`, deletion vectors on,
 * sometimes with deletion vectors already present, sometimes with row tracking,
 * `delta.isolationLevel = Serializable`), two or three operations among append, delete, update,
 * merge (upserts with inserts, some with a
 * conditional WHEN MATCHED update that leaves some matched rows in place, some with a NOT
 * MATCHED BY SOURCE delete, conditional or not), optimize (bin-packing or Z-order) and overwrite (replaceWhere over an id
 * range, new rows inside it), and an interleaving of their begins and commits (all on one
 * snapshot, or staggered; commits in any order). Each operation
 * is staged right after its begin, against its read snapshot, and committed through the real
 * commit loop with `conflicts: 'all'`.
 *
 * The oracle is plain JavaScript over the operations' parameters:
 * - the table must end equal to the serial application, in commit order, of the operations that
 *   committed a version;
 * - an operation that committed nothing must have been a no-op on its read snapshot;
 * - with row tracking, row ids are unique, and a row no committed operation deleted or replaced
 *   keeps its first row id through every update, MERGE and relocation (bin-packing, Z-order);
 * - with change data feed (a third of the tables), the change feed of each committed version is, as a
 *   multiset of (`_change_type`, id, v), the changes its operation makes when applied to the
 *   serial state at its place in commit order (its version number is its place in the replay):
 *   a reconciled commit keeps exactly its own change rows, and a relocation (OPTIMIZE, or a
 *   reconcile onto one's outputs) adds none;
 * - an abort is classified against the winner its error names: a genuine conflict (both touched
 *   the same row, or the winner changed a row the loser's read selects) or an unproven case,
 *   which the distribution reports by operation pair and failed check.
 *
 * The property also proves reconciliation, not just safety: every reconciliation kind must reach a
 * floor of reconciled commits, and no abort between two operations neither of which is an
 * OPTIMIZE may be unproven (the spec reconciles every such pair that shares no row: Cases 1, 1b, 2
 * and 6). A self-test replays the cases that reconciled each kind with `conflicts: 'none'` and
 * with each flag off in turn, and expects the floors to fail.
 *
 * `DELTA_RLC_PROPERTY_RUNS` sets the number of cases (default 475; the floors scale with it); the
 * seed is fixed (`DELTA_RLC_PROPERTY_SEED` explores another).
 */
import assert from 'node:assert/strict'
import { rm } from 'node:fs/promises'
import { dirname } from 'node:path'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import type { DeltaTable } from '../../src/table/delta-table.js'
import type { Transaction } from '../../src/table/transaction.js'
import {
  type Conflicts,
  createTable,
  fromTemplate,
  liveRows,
  openTable,
  settle,
  span,
} from './scenarios/harness.js'

const RUNS = Number(process.env.DELTA_RLC_PROPERTY_RUNS ?? 475)
const SEED = Number(process.env.DELTA_RLC_PROPERTY_SEED ?? 20_260_501)

// === The model ===

interface ModelRow {
  readonly id: number
  readonly v: number
}

/** A predicate as data: rendered to SQL for the engine, evaluated in JS for the oracle. */
type Pred =
  | { readonly t: 'eq'; readonly k: number }
  | { readonly t: 'in'; readonly ks: readonly number[] }
  | { readonly t: 'range'; readonly a: number; readonly b: number }
  | { readonly t: 'mod'; readonly m: number; readonly r: number }
  | { readonly t: 'vge'; readonly c: number }

type OpSpec =
  | { readonly kind: 'append'; readonly rows: readonly ModelRow[] }
  | { readonly kind: 'delete'; readonly where: Pred }
  | { readonly kind: 'update'; readonly where: Pred; readonly add: number }
  | {
      readonly kind: 'merge'
      readonly mode: 'upsert' | 'delete' | 'insert'
      readonly source: readonly ModelRow[]
      /**
       * An upsert's NOT MATCHED BY SOURCE clause: delete the unmatched rows with `v >= c`
       * (`'all'`: every unmatched row, no condition); absent: no such clause.
       */
      readonly bySource?: { readonly c: number } | 'all'
      /**
       * An upsert's WHEN MATCHED condition: update a matched row only when `v < c`; a matched row
       * it leaves in place still keeps its source row from being inserted. Absent: unconditional.
       */
      readonly matchedIf?: { readonly c: number }
    }
  /** Bin-packing, or with `zorder` a Z-order by `v` (a permuting rewrite: Cases 5a and 5b). */
  | { readonly kind: 'optimize'; readonly zorder?: boolean }
  /** `mode: 'overwrite'` with `replaceWhere`: the rows matching `where` are replaced by `rows`. */
  | { readonly kind: 'overwrite'; readonly where: Pred; readonly rows: readonly ModelRow[] }

interface TemplateSpec {
  readonly files: number
  readonly rowsPerFile: number
  readonly preDeleted: boolean
  /** `delta.enableRowTracking`: row ids must then stay unique and survive every relocation. */
  readonly rowTracking: boolean
  /** `delta.enableChangeDataFeed`: each commit's change feed must be its serial changes. */
  readonly cdf: boolean
}

interface CaseSpec {
  readonly template: TemplateSpec
  readonly ops: readonly OpSpec[]
  /** Each op index appears twice: its first occurrence is its begin, the second its commit. */
  readonly events: readonly number[]
}

function sqlOf(p: Pred): string {
  switch (p.t) {
    case 'eq':
      return `id = ${p.k}`
    case 'in':
      return `id IN (${p.ks.join(', ')})`
    case 'range':
      return `id >= ${p.a} AND id < ${p.b}`
    case 'mod':
      return `id % ${p.m} = ${p.r}`
    case 'vge':
      return `v >= ${p.c}`
  }
}

function holds(p: Pred, r: ModelRow): boolean {
  switch (p.t) {
    case 'eq':
      return r.id === p.k
    case 'in':
      return p.ks.includes(r.id)
    case 'range':
      return r.id >= p.a && r.id < p.b
    case 'mod':
      return r.id % p.m === p.r
    case 'vge':
      return r.v >= p.c
  }
}

/** The operation applied to a table state, serially. */
function apply(op: OpSpec, state: readonly ModelRow[]): ModelRow[] {
  switch (op.kind) {
    case 'append':
      return [...state, ...op.rows]
    case 'delete':
      return state.filter((r) => !holds(op.where, r))
    case 'update':
      return state.map((r) => (holds(op.where, r) ? { id: r.id, v: r.v + op.add } : r))
    case 'merge': {
      const byKey = new Map(op.source.map((s) => [s.id, s]))
      const present = new Set(state.map((r) => r.id))
      const inserted = op.mode === 'delete' ? [] : op.source.filter((s) => !present.has(s.id))
      if (op.mode === 'delete') return state.filter((r) => !byKey.has(r.id))
      if (op.mode === 'insert') return [...state, ...inserted]
      const kept = state.filter((r) => byKey.has(r.id) || !deletedBySource(op, r))
      return [
        ...kept.map((r) => (updatedByMatch(op, r) ? { id: r.id, v: byKey.get(r.id)!.v } : r)),
        ...inserted,
      ]
    }
    case 'overwrite':
      return [...state.filter((r) => !holds(op.where, r)), ...op.rows]
    case 'optimize':
      return [...state]
  }
}

/** Whether a MERGE's NOT MATCHED BY SOURCE clause deletes a row no source row matches. */
function deletedBySource(op: OpSpec & { kind: 'merge' }, r: ModelRow): boolean {
  if (op.bySource === undefined) return false
  return op.bySource === 'all' || r.v >= op.bySource.c
}

/** Whether an upsert's WHEN MATCHED clause updates a target row. */
function updatedByMatch(op: OpSpec & { kind: 'merge' }, r: ModelRow): boolean {
  if (!op.source.some((s) => s.id === r.id)) return false
  return op.matchedIf === undefined || r.v < op.matchedIf.c
}

/** Rows the operation deletes or rewrites on a state (its row-level write set). */
function touched(op: OpSpec, state: readonly ModelRow[]): Set<number> {
  switch (op.kind) {
    case 'overwrite':
    case 'delete':
    case 'update':
      return new Set(state.filter((r) => holds(op.where, r)).map((r) => r.id))
    case 'merge': {
      if (op.mode === 'insert') return new Set()
      const keys = new Set(op.source.map((s) => s.id))
      const acted = (r: ModelRow) =>
        op.mode === 'delete'
          ? keys.has(r.id)
          : updatedByMatch(op, r) || (!keys.has(r.id) && deletedBySource(op, r))
      return new Set(state.filter(acted).map((r) => r.id))
    }
    default:
      return new Set()
  }
}

/** Whether a row is selected by the operation's read (the predicate it records). */
function reads(op: OpSpec, r: ModelRow): boolean {
  switch (op.kind) {
    case 'overwrite':
    case 'delete':
    case 'update':
      return holds(op.where, r)
    case 'merge':
      return op.source.some((s) => s.id === r.id) || (op.bySource !== undefined && deletedBySource(op, r))
    default:
      return false
  }
}

/** The row images a commit changed: deleted and updated rows (before and after), inserted rows. */
function changes(before: readonly ModelRow[], after: readonly ModelRow[]) {
  const was = new Map(before.map((r) => [r.id, r]))
  const now = new Map(after.map((r) => [r.id, r]))
  const images: ModelRow[] = []
  const rewritten = new Set<number>()
  for (const [id, r] of was) {
    const n = now.get(id)
    if (n === undefined || n.v !== r.v) {
      rewritten.add(id)
      images.push(r)
      if (n !== undefined) images.push(n)
    }
  }
  for (const [id, r] of now) if (!was.has(id)) images.push(r)
  return { images, rewritten }
}

/** One row of a change feed: its change type and image, as text for a multiset comparison. */
const change = (type: string, r: ModelRow): string => `${type} ${r.id} ${r.v}`

/** The change feed an operation writes when applied to a table state serially (Delta's CDF). */
function expectedChanges(op: OpSpec, state: readonly ModelRow[]): string[] {
  const updated = (r: ModelRow, v: number) => [
    change('update_preimage', r),
    change('update_postimage', { id: r.id, v }),
  ]
  switch (op.kind) {
    case 'append':
      return op.rows.map((r) => change('insert', r))
    case 'delete':
      return state.filter((r) => holds(op.where, r)).map((r) => change('delete', r))
    case 'update':
      return state.filter((r) => holds(op.where, r)).flatMap((r) => updated(r, r.v + op.add))
    case 'overwrite':
      return [
        ...state.filter((r) => holds(op.where, r)).map((r) => change('delete', r)),
        ...op.rows.map((r) => change('insert', r)),
      ]
    case 'merge': {
      const byKey = new Map(op.source.map((s) => [s.id, s]))
      const present = new Set(state.map((r) => r.id))
      const inserted = op.mode === 'delete' ? [] : op.source.filter((s) => !present.has(s.id))
      if (op.mode === 'delete') return state.filter((r) => byKey.has(r.id)).map((r) => change('delete', r))
      const out = inserted.map((r) => change('insert', r))
      if (op.mode === 'insert') return out
      for (const r of state) {
        if (updatedByMatch(op, r)) out.push(...updated(r, byKey.get(r.id)!.v))
        else if (!byKey.has(r.id) && deletedBySource(op, r)) out.push(change('delete', r))
      }
      return out
    }
    case 'optimize':
      return []
  }
}

/** The table's change feed from `from` on, by version, each as sorted change rows. */
async function changeFeed(table: DeltaTable, from: bigint): Promise<Map<bigint, string[]>> {
  const out = new Map<bigint, string[]>()
  if (from > (await table.snapshot()).version) return out
  for (const r of await table.changes({ startingVersion: from }).toArray()) {
    const v = r._commit_version as bigint
    const rows = out.get(v) ?? []
    rows.push(change(r._change_type as string, { id: Number(r.id), v: Number(r.v) }))
    out.set(v, rows)
  }
  for (const rows of out.values()) rows.sort()
  return out
}

const sorted = (rows: readonly ModelRow[]) =>
  [...rows].map((r) => [r.id, r.v] as const).sort((a, b) => a[0] - b[0] || a[1] - b[1])

// === Generators ===

/** Predicates over a table whose base ids are 0..maxId, plus the ids appends and merges add. */
function predArb(maxId: number): fc.Arbitrary<Pred> {
  const id = fc.integer({ min: 0, max: maxId })
  return fc.oneof(
    { arbitrary: id.map((k): Pred => ({ t: 'eq', k })), weight: 3 },
    fc.constantFrom(500, 501, 1000, 1100).map((k): Pred => ({ t: 'eq', k })),
    fc.uniqueArray(id, { minLength: 2, maxLength: 3 }).map((ks): Pred => ({ t: 'in', ks })),
    fc.tuple(id, fc.integer({ min: 1, max: 6 })).map(([a, w]): Pred => ({ t: 'range', a, b: a + w })),
    fc.constant<Pred>({ t: 'range', a: 500, b: 2000 }),
    fc.tuple(fc.constantFrom(2, 3), fc.nat(2)).map(([m, r]): Pred => ({ t: 'mod', m, r: r % m })),
    fc.integer({ min: 1, max: 4 }).map((c): Pred => ({ t: 'vge', c })),
  )
}

function opArb(index: number, maxId: number): fc.Arbitrary<OpSpec> {
  const keyArb = fc.oneof(fc.integer({ min: 0, max: maxId }), fc.constantFrom(500, 501, 502))
  return fc.oneof(
    fc
      .integer({ min: 1, max: 3 })
      .chain((n) =>
        fc
          .array(fc.integer({ min: 0, max: 5 }), { minLength: n, maxLength: n })
          .map(
            (vs): OpSpec => ({ kind: 'append', rows: vs.map((v, j) => ({ id: 1000 + 100 * index + j, v })) }),
          ),
      ),
    { arbitrary: predArb(maxId).map((where): OpSpec => ({ kind: 'delete', where })), weight: 2 },
    {
      arbitrary: predArb(maxId).map((where): OpSpec => ({ kind: 'update', where, add: 10 ** index })),
      weight: 2,
    },
    {
      arbitrary: fc
        .tuple(
          fc.constantFrom('upsert', 'delete', 'insert'),
          fc.uniqueArray(keyArb, { minLength: 1, maxLength: 3 }),
          // Upserts only: half without a NOT MATCHED BY SOURCE clause, most of the rest with a
          // condition (a finite read), a few without (a whole-table read).
          fc.oneof(
            { arbitrary: fc.constant(undefined), weight: 4 },
            { arbitrary: fc.integer({ min: 2, max: 4 }).map((c) => ({ c })), weight: 3 },
            { arbitrary: fc.constant<'all'>('all'), weight: 1 },
          ),
          // Upserts only: half with a WHEN MATCHED condition on the target's v (base v is id % 4),
          // so some matched rows stay as they are while their source rows are not inserted.
          fc.option(
            fc.integer({ min: 1, max: 3 }).map((c) => ({ c })),
            { nil: undefined },
          ),
        )
        .map(
          ([mode, keys, bySource, matchedIf]): OpSpec => ({
            kind: 'merge',
            mode,
            source: keys.map((id, j) => ({ id, v: 50 + 10 * index + j })),
            ...(mode === 'upsert' && bySource !== undefined ? { bySource } : {}),
            ...(mode === 'upsert' && matchedIf !== undefined ? { matchedIf } : {}),
          }),
        ),
      weight: 2,
    },
    fc.boolean().map((zorder): OpSpec => (zorder ? { kind: 'optimize', zorder } : { kind: 'optimize' })),
    // An id range and new rows inside it (a row outside would be refused before any commit).
    fc.tuple(fc.integer({ min: 0, max: maxId }), fc.integer({ min: 1, max: 6 })).chain(([a, w]) =>
      fc.uniqueArray(fc.integer({ min: a, max: a + w - 1 }), { minLength: 1, maxLength: 2 }).map(
        (ids): OpSpec => ({
          kind: 'overwrite',
          where: { t: 'range', a, b: a + w },
          rows: ids.map((id, j) => ({ id, v: 70 + 10 * index + j })),
        }),
      ),
    ),
  )
}

const caseArb: fc.Arbitrary<CaseSpec> = fc
  .record({
    template: fc.record({
      files: fc.integer({ min: 1, max: 3 }),
      rowsPerFile: fc.constantFrom(6, 10),
      preDeleted: fc.boolean(),
      rowTracking: fc.boolean(),
    }),
    n: fc.integer({ min: 2, max: 3 }),
  })
  .chain(({ template: drawn, n }) => {
    // About a third of the tables record change data: enough reconciled commits to check every
    // case at a third of the cost. Derived from the drawn fields, so the cases drawn stay those of
    // the seed without change data.
    const template = {
      ...drawn,
      cdf: (drawn.files + Number(drawn.preDeleted) + Number(drawn.rowTracking)) % 3 === 0,
    }
    return fc.record({
      template: fc.constant(template),
      ops: fc.tuple(...span(0, n).map((i) => opArb(i, template.files * template.rowsPerFile - 1))),
      events: fc.oneof(
        // All begin on one snapshot; the commits come in any order.
        fc
          .shuffledSubarray(span(0, n), { minLength: n, maxLength: n })
          .map((commits) => [...span(0, n), ...commits]),
        // Staggered: any interleaving of begins and commits.
        fc.shuffledSubarray([...span(0, n), ...span(0, n)], { minLength: 2 * n, maxLength: 2 * n }),
      ),
    })
  })

/**
 * A focused family the general draw reaches about once in 2,500 cases: a conditional upsert and a
 * DELETE of one of its keys on a one-file table. When the MERGE matched the deleted row and left it
 * in place while updating another row of the file, the DELETE winning must not cost the MERGE the
 * insert the serial order gives it (Case 2 must not union the two deletion vectors).
 */
const matchedRowDeleteArb: fc.Arbitrary<CaseSpec> = fc
  .record({
    preDeleted: fc.boolean(),
    keys: fc.uniqueArray(
      fc.oneof({ arbitrary: fc.integer({ min: 0, max: 9 }), weight: 4 }, fc.constant(500)),
      { minLength: 2, maxLength: 3 },
    ),
    c: fc.integer({ min: 1, max: 3 }),
    // Both begin on one snapshot, then either commit order; or the DELETE begins first.
    events: fc.constantFrom([0, 1, 1, 0], [1, 0, 1, 0], [0, 1, 0, 1]),
  })
  .chain(({ preDeleted, keys, c, events }) =>
    fc.constantFrom(...keys).map(
      (k): CaseSpec => ({
        template: { files: 1, rowsPerFile: 10, preDeleted, rowTracking: false, cdf: true },
        ops: [
          {
            kind: 'merge',
            mode: 'upsert',
            source: keys.map((id, j) => ({ id, v: 50 + j })),
            matchedIf: { c },
          },
          { kind: 'delete', where: { t: 'eq', k } },
        ],
        events,
      }),
    ),
  )

// === Running a case ===

/** Builds (once) a template table and returns a copy of it with its model state. */
async function tableFor(spec: TemplateSpec): Promise<{ dir: string; state: ModelRow[] }> {
  const ids = span(0, spec.files * spec.rowsPerFile)
  const deleted = (id: number) => spec.preDeleted && id % 5 === 2
  const dir = await fromTemplate(JSON.stringify(['serial', spec]), async (d) => {
    const table = await createTable(d, {
      schema: 'id long, v int',
      properties: {
        'delta.enableDeletionVectors': 'true',
        'delta.isolationLevel': 'Serializable',
        ...(spec.rowTracking ? { 'delta.enableRowTracking': 'true' } : {}),
        ...(spec.cdf ? { 'delta.enableChangeDataFeed': 'true' } : {}),
      },
    })
    for (let f = 0; f < spec.files; f++) {
      await table.append(
        span(f * spec.rowsPerFile, (f + 1) * spec.rowsPerFile).map((id) => ({ id: BigInt(id), v: id % 4 })),
      )
    }
    if (spec.preDeleted) await table.delete('id % 5 = 2')
  })
  return { dir, state: ids.filter((id) => !deleted(id)).map((id) => ({ id, v: id % 4 })) }
}

/** Each live row's stable row id, by its key. */
async function rowIds(table: DeltaTable): Promise<Map<number, bigint>> {
  const out = new Map<number, bigint>()
  for (const r of await table.scan({ withRowTracking: true }).toArray()) {
    out.set(Number(r.id), r._row_id as bigint)
  }
  return out
}

async function stage(txn: Transaction, op: OpSpec): Promise<void> {
  switch (op.kind) {
    case 'append':
      await txn.append(op.rows.map((r) => ({ id: BigInt(r.id), v: r.v })))
      return
    case 'delete':
      await txn.delete(sqlOf(op.where))
      return
    case 'update':
      await txn.update({ where: sqlOf(op.where), set: { v: `v + ${op.add}` } })
      return
    case 'merge': {
      const rows = op.source.map((s) => ({ id: BigInt(s.id), v: s.v }))
      const on = 'target.id = source.id'
      if (op.mode === 'upsert') {
        const bySource = op.bySource
        const matchedIf = op.matchedIf
        await txn.merge(rows, {
          on,
          whenMatched: [
            matchedIf === undefined
              ? { update: { v: 'source.v' } }
              : { if: `target.v < ${matchedIf.c}`, update: { v: 'source.v' } },
          ],
          whenNotMatched: [{ insert: '*' }],
          ...(bySource === undefined
            ? {}
            : {
                whenNotMatchedBySource: [
                  bySource === 'all' ? { delete: true } : { if: `target.v >= ${bySource.c}`, delete: true },
                ],
              }),
        })
      } else if (op.mode === 'delete') {
        await txn.merge(rows, { on, whenMatched: [{ delete: true }] })
      } else {
        await txn.merge(rows, { on, whenNotMatched: [{ insert: '*' }] })
      }
      return
    }
    case 'overwrite':
      await txn.append(
        op.rows.map((r) => ({ id: BigInt(r.id), v: r.v })),
        { mode: 'overwrite', replaceWhere: sqlOf(op.where) },
      )
      return
    case 'optimize':
      await txn.optimize(op.zorder === true ? { zOrderBy: ['v'] } : {})
      return
  }
}

/** What a run of the property saw: the report, the floors' counts, and cases to replay. */
interface Distribution {
  cases: number
  allCommitted: number
  withAbort: number
  readonly noOps: Map<string, number>
  readonly aborts: Map<string, number>
  /** Reconciled commits by kind (and by `kind by change sketch`). */
  readonly reconciliations: Map<string, number>
  /** Aborts no real conflict explains between two operations that are not OPTIMIZE. */
  readonly forbidden: Map<string, number>
  /** The first cases that reconciled each kind, for the self-test to replay with a flag off. */
  readonly reconciledCases: Map<string, CaseSpec[]>
  /** Reconciled commits on change-data-feed tables whose feed was checked. */
  reconciledFeeds: number
}

function newDistribution(): Distribution {
  return {
    cases: 0,
    allCommitted: 0,
    withAbort: 0,
    noOps: new Map(),
    aborts: new Map(),
    reconciliations: new Map(),
    forbidden: new Map(),
    reconciledCases: new Map(),
    reconciledFeeds: 0,
  }
}

const distribution = newDistribution()
const count = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1)
/** Cases kept per kind for the self-test. */
const KEPT_CASES = 2

/**
 * The reconciled commits each kind must reach in the default 500 cases of the fixed seed, about
 * half of what the seed reaches (measured: case1 82, case1b 29, case2 75, case3 12, case4a 16,
 * case4b 23, case5a 18, case5b 11, case6 66 of which 10 by change sketch); scaled to
 * `DELTA_RLC_PROPERTY_RUNS`.
 */
const FLOORS: Readonly<Record<string, number>> = {
  'case1-data-skipping': 40,
  'case1b-delete-read': 14,
  'case2-dv-union': 37,
  'case3-no-data-change': 6,
  'case4a-forward-remap': 8,
  'case4b-reverse-remap': 11,
  'case5a-zorder-forward': 9,
  'case5b-zorder-reverse': 5,
  'case6-merge-rows': 33,
  'case6-merge-rows by change sketch': 5,
}

/**
 * Each reconciliation flag and the kind only it reaches (the self-test turns it off alone).
 * `merge.sourceKeyReadPredicate.enabled` has no kind of its own here: it only feeds Case 1 a
 * MERGE's read, and with Case 6 on every MERGE loser of the generator reconciles through Case 6
 * (or Case 2, 3, 4b, 5b on its files); the leave-one-out matrix (flag-leave-one-out.test.ts)
 * shows it alone.
 */
const FLAG_KINDS: Readonly<Record<string, string>> = {
  'rowLevelConcurrency.enabled': 'case2-dv-union',
  'conflictDetection.dataSkipping.enabled': 'case1-data-skipping',
  'conflictDetection.dataSkipping.valueExact.enabled': 'case1b-delete-read',
  'conflictDetection.excludeNoDataChangeFiles.enabled': 'case3-no-data-change',
  'optimize.conflictReconciliation.enabled': 'case4a-forward-remap',
  'optimize.conflictReconciliation.reverse.enabled': 'case4b-reverse-remap',
  'optimize.zorder.conflictReconciliation.enabled': 'case5a-zorder-forward',
  'optimize.zorder.conflictReconciliation.reverse.enabled': 'case5b-zorder-reverse',
  'merge.rowLevelConflicts.enabled': 'case6-merge-rows',
}

/** Every flag on but one. */
function allBut(flag: string): Readonly<Record<string, boolean>> {
  return Object.fromEntries(
    [...Object.keys(FLAG_KINDS), 'merge.sourceKeyReadPredicate.enabled'].map((k) => [k, k !== flag]),
  )
}

/**
 * What a run falls short of: each kind under its floor, and each abort between two non-OPTIMIZE
 * operations that no real conflict explains (the spec reconciles every such pair: Case 1, 1b, 2
 * or 6; only an OPTIMIZE on either side may still abort without sharing a row, when its table
 * lacks row tracking or both compact one file).
 */
function shortfalls(d: Distribution, floors: Readonly<Record<string, number>>): string[] {
  const out: string[] = []
  for (const [kind, floor] of Object.entries(floors)) {
    const n = d.reconciliations.get(kind) ?? 0
    if (n < floor) out.push(`${kind}: ${n} reconciled, floor ${floor}`)
  }
  for (const [reason, n] of d.forbidden) out.push(`${n} x ${reason}`)
  return out
}

function shortRefusal(text: string | undefined): string {
  if (text === undefined) return ''
  const head = text.split(' (')[0]!
  return `; refused: ${head.length > 90 ? `${head.slice(0, 90)}...` : head}`
}

async function runCase(
  spec: CaseSpec,
  conflicts: Conflicts = 'all',
  dist: Distribution = distribution,
): Promise<void> {
  const { dir, state } = await tableFor(spec.template)
  try {
    const table = await openTable(dir, conflicts)
    let model = state
    // With row tracking: each row's stable id at the start, kept for the rows whose lineage no
    // committed operation has broken (deleted, or replaced by an overwrite).
    const firstIds = spec.template.rowTracking ? await rowIds(table) : undefined
    const startVersion = (await table.snapshot()).version
    const lineage = new Set(state.map((r) => r.id))
    const txns = new Map<number, Transaction>()
    const readStates = new Map<number, ModelRow[]>()
    const winners = new Map<
      bigint,
      { op: OpSpec; before: ModelRow[]; after: ModelRow[]; reconciled: boolean }
    >()
    let aborts = 0
    for (const i of spec.events) {
      const op = spec.ops[i]!
      const txn = txns.get(i)
      if (txn === undefined) {
        const t = await table.begin()
        txns.set(i, t)
        readStates.set(i, model)
        await stage(t, op)
        continue
      }
      const outcome = await settle(txn.commit())
      if (outcome.kind === 'committed') {
        if (!outcome.result.committed) {
          const read = readStates.get(i)!
          assert.deepEqual(sorted(apply(op, read)), sorted(read), `op ${i} (${op.kind}) committed nothing`)
          count(dist.noOps, op.kind)
          continue
        }
        const before = model
        model = apply(op, model)
        const after = new Set(model.map((r) => r.id))
        for (const r of before) {
          if (!after.has(r.id) || (op.kind === 'overwrite' && holds(op.where, r))) lineage.delete(r.id)
        }
        winners.set(outcome.result.version, {
          op,
          before,
          after: model,
          reconciled: outcome.result.reconciliations.length > 0,
        })
        for (const r of outcome.result.reconciliations) {
          const kinds: string[] = [r.kind]
          if (r.detail.changeSketch === true) kinds.push(`${r.kind} by change sketch`)
          for (const kind of kinds) {
            count(dist.reconciliations, kind)
            const kept = dist.reconciledCases.get(kind) ?? []
            if (kept.length < KEPT_CASES && !kept.includes(spec)) kept.push(spec)
            dist.reconciledCases.set(kind, kept)
          }
        }
        continue
      }
      aborts++
      const error = outcome.error
      assert.ok(error.check, 'the abort names the check that failed')
      const w = winners.get(error.winnerVersion)
      assert.ok(w, `the named winner ${error.winnerVersion} is a commit of this case`)
      const mine = touched(op, readStates.get(i)!)
      const theirs = changes(w.before, w.after)
      let reason: string
      if ([...theirs.rewritten].some((id) => mine.has(id))) reason = 'genuine: both touched a row'
      else if (theirs.images.some((r) => reads(op, r)))
        reason = 'genuine: the winner changed a row the loser read'
      else {
        reason = `unproven: ${op.kind} after ${w.op.kind}: ${error.code} in ${error.check}${shortRefusal(error.reconcileRefused)}`
        if (op.kind !== 'optimize' && w.op.kind !== 'optimize') count(dist.forbidden, reason)
      }
      count(dist.aborts, reason)
    }
    dist.cases++
    if (aborts === 0) dist.allCommitted++
    else dist.withAbort++
    const rows = await liveRows(table)
    assert.deepEqual(
      sorted(rows.map((r) => ({ id: r.id!, v: r.v! }))),
      sorted(model),
      'the table equals the committed operations applied serially in commit order',
    )
    if (spec.template.cdf) {
      const feed = await changeFeed(table, startVersion + 1n)
      for (const [version, w] of winners) {
        assert.deepEqual(
          feed.get(version) ?? [],
          expectedChanges(w.op, w.before).sort(),
          `the change feed of version ${version} (${w.op.kind}${w.reconciled ? ', reconciled' : ''}) is its serial changes`,
        )
        if (w.reconciled) dist.reconciledFeeds++
      }
      assert.deepEqual(
        [...feed.keys()].filter((v) => !winners.has(v)),
        [],
        'no change rows outside the committed versions',
      )
    }
    if (firstIds !== undefined) {
      const ids = await rowIds(table)
      assert.equal(new Set(ids.values()).size, ids.size, 'row ids are unique')
      for (const [id, rowId] of firstIds) {
        if (lineage.has(id))
          assert.equal(ids.get(id), rowId, `row ${id} keeps its row id through every rewrite`)
      }
    }
  } finally {
    await rm(dirname(dir), { recursive: true, force: true })
  }
}

/** A floor scaled to the number of cases run (the floors are set for 500). */
const scaled = (floors: Readonly<Record<string, number>>, runs: number) =>
  Object.fromEntries(Object.entries(floors).map(([k, n]) => [k, Math.ceil((n * runs) / 500)]))

function report(t: { diagnostic: (m: string) => void }, d: Distribution): void {
  const lines = [
    `cases ${d.cases}: all committed ${d.allCommitted}, with an abort ${d.withAbort}`,
    `reconciled commits whose change feed was checked: ${d.reconciledFeeds}`,
    ...[...d.noOps].sort().map(([k, n]) => `nothing to commit (a no-op on its snapshot) ${k}: ${n}`),
    ...[...d.reconciliations].sort().map(([k, n]) => `reconciled ${k}: ${n}`),
    ...[...d.aborts].sort((a, b) => b[1] - a[1]).map(([k, n]) => `abort ${n} x ${k}`),
  ]
  for (const line of lines) t.diagnostic(line)
}

/** Replays recorded cases with other flags into a fresh distribution. */
async function replay(cases: readonly CaseSpec[], conflicts: Conflicts): Promise<Distribution> {
  const d = newDistribution()
  for (const spec of cases) await runCase(spec, conflicts, d)
  return d
}

describe('serial equivalence with every reconciliation on', () => {
  it(`concurrent appends, deletes, updates, merges, optimizes and overwrites end as their serial replay in commit order (${RUNS} cases)`, async (t) => {
    await fc.assert(
      fc.asyncProperty(caseArb, (spec) => runCase(spec)),
      { seed: SEED, numRuns: RUNS },
    )
    report(t, distribution)
    assert.ok(distribution.cases >= RUNS)
    assert.deepEqual(
      shortfalls(distribution, scaled(FLOORS, RUNS)),
      [],
      'every reconciliation kind reaches its floor, and no abort between non-OPTIMIZE operations is unproven',
    )
  })

  it('the floors catch a checker that reconciles nothing, or that lacks any one flag', async (t) => {
    // The cases that reconciled each kind above, replayed: with every flag off no kind is
    // reached, and with one flag off its kind falls under the floor of the replayed cases.
    const kept = (kind: string) => distribution.reconciledCases.get(kind) ?? []
    const kinds = Object.values(FLAG_KINDS)
    for (const kind of kinds) assert.ok(kept(kind).length > 0, `the property reached ${kind}`)
    const everyKind = [...new Set(kinds.flatMap((k) => kept(k).slice(0, 1)))]
    const none = await replay(everyKind, 'none')
    const floors = Object.fromEntries(kinds.map((k) => [k, 1]))
    assert.deepEqual(
      shortfalls(none, floors).filter((f) => !f.includes(' x ')),
      kinds.map((k) => `${k}: 0 reconciled, floor 1`),
      "with conflicts: 'none' every kind's floor fails",
    )
    t.diagnostic(
      `'none' on ${everyKind.length} cases: ${none.aborts.size} abort reasons, ${none.forbidden.size} unproven`,
    )
    for (const [flag, kind] of Object.entries(FLAG_KINDS)) {
      const cases = kept(kind)
      const d = await replay(cases, allBut(flag))
      const failed = shortfalls(d, { [kind]: cases.length })
      t.diagnostic(`all but ${flag}: ${failed.join('; ') || 'nothing fails'}`)
      assert.ok(
        failed.some((f) => f.startsWith(`${kind}:`)),
        `with ${flag} off, ${kind} falls under the floor of ${cases.length} replayed cases`,
      )
    }
  })

  const focusedRuns = Math.max(20, Math.round(RUNS / 8))
  it(`a conditional upsert whose matched, unchanged row a concurrent DELETE removes ends as the serial replay (${focusedRuns} cases)`, async (t) => {
    const focused = newDistribution()
    await fc.assert(
      fc.asyncProperty(matchedRowDeleteArb, (spec) => runCase(spec, 'all', focused)),
      { seed: SEED, numRuns: focusedRuns },
    )
    report(t, focused)
    // Measured: 4 of the 63 default cases reconcile through Case 2.
    assert.deepEqual(shortfalls(focused, scaled({ 'case2-dv-union': 2 }, focusedRuns * 8)), [])
  })
})
