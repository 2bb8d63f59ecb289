/**
 * Case 6 (design beyond-rlc 8): a MERGE that lost the race, checked row by row against the
 * winner. With the winner serialized first, the MERGE's outcome is unchanged exactly when no row
 * the winner changed (inserted, deleted, or either image of an update) is in the MERGE's read
 * set (T and key in K_L) or N_1 or ... or N_k (see `case6-merge-read-set.ts`).
 *
 * Tiers, each one-way safe (8.4): a shape gate (anything it does not recognise keeps the
 * file-level answer, with the reason); the winner's change sketch, when it names the same key
 * columns and none of its tuples is in K_L (`change-sketch.ts`: then nothing is read); the
 * statistics of each changed file, against the key filter and the NOT MATCHED BY SOURCE
 * conditions; then the rows of the surviving files, read through the data plane filtered by the
 * same predicates (of a deletion-vector update, only the rows its new vector takes out), each key
 * probed in K_L. With row
 * tracking enabled and the winner tagged `delta.rowTracking.preserved=true` (M-S5), a row the
 * winner only copied (stable id and commit version preserved, the same key, its source row
 * removed by the same commit) is not a change, so a copy-on-write winner reconciles; otherwise
 * every added and removed row counts. Any row of the read set the winner changed, any read that
 * failed or passed its budget, leaves the conflict standing (M-S8).
 *
 * On success the winner's checked paths are resolved for the file-level checks (the added-files
 * and removed-vs-read checks skip them); a path the loser removes too is never resolved: same-file
 * changes stay with Case 2 and the removed-vs-removed check.
 */
import {
  type AddFile,
  type DeletionVectorDescriptor,
  isRemove,
  type RemoveFile,
} from '../protocol/actions.js'
import { preImageOf } from '../protocol/file-action-rewrites.js'
import { ROW_TRACKING_PRESERVED_TAG, rowTrackingState } from '../protocol/row-tracking.js'
import { parseStats } from '../protocol/stats.js'
import { encodeKeyTuple, type MergeReadSet } from './case6-merge-read-set.js'
import { physicalKeyColumns, readChangeSketch, sameKeyColumns } from './change-sketch.js'
import { dvUniqueId } from './deletion-vectors.js'
import type { FetchPlan, ReadRow, RowReadRequest } from './fetched-facts.js'
import { FetchPlanBuilder, ONLY_DELETED_BY_MAX_ROWS } from './fetched-facts.js'
import { firstFileMatchingReads } from './file-checks.js'
import type { PhaseInput, PhaseOutcome, PlanInput, RowLevelPhase } from './phase.js'
import { unchanged } from './phase.js'
import { createReadMatcher, type ReadMatcher } from './read-matcher.js'
import { reconciliation } from './reconciliation.js'
import { type TransactionInfo, withoutReadFiles } from './transaction-info.js'
import { isolationCandidates, type WinningCommitSummary } from './winning-commit.js'

/** Bytes of changed files the row tier reads per winner at most (design 8.5). */
export const MAX_CHANGED_BYTES = 64n * 1024n * 1024n
/** Rows one row read may return at most. */
export const MAX_ROWS_PER_READ = 1_000_000

// === The pair ===

/** Case 6 as a phase: its plan lists the row reads its reconcile consults. */
export const mergeRowsPhase: RowLevelPhase = Object.freeze({
  label: 'MERGE row-level check (Case 6)',
  plan: planMergeRows,
  reconcile: reconcileMergeRows,
})

function planMergeRows(input: PlanInput): FetchPlan {
  const plan = new FetchPlanBuilder()
  const analysis = analyze(input)
  if (analysis.kind !== 'check') return plan.build()
  for (const f of analysis.files) for (const r of [...f.pre, ...(f.post ?? [])]) plan.rowRead(r)
  return plan.build()
}

function reconcileMergeRows(input: PhaseInput): PhaseOutcome {
  const { txn, winner, fetched } = input
  const analysis = analyze(input)
  if (analysis.kind === 'skip') return unchanged(txn)
  if (analysis.kind === 'refuse') return refuse(txn, analysis.reason)
  const answers = fetched.rowReads ?? new Map<string, readonly ReadRow[]>()
  const rowsOf = (reqs: readonly RowReadRequest[]): readonly ReadRow[][] | undefined => {
    const out: ReadRow[][] = []
    for (const r of reqs) {
      const rows = answers.get(r.key)
      if (rows === undefined) return undefined
      out.push([...rows])
    }
    return out
  }
  const { read, classify } = analysis
  const copied = new Map<bigint, { readonly encoded: string | null | undefined; used: boolean }>()
  let checkedRows = 0
  const hit = (verb: string, row: ReadRow): PhaseOutcome =>
    refuse(txn, `winner v${winner.version} ${verb} key (${describeKey(row, read)}), a row this MERGE read`)

  // Added rows first: the copies among them answer for removed rows below.
  for (const f of analysis.files) {
    if (f.role !== 'added') continue
    const got = rowsOf(f.pre)
    if (got === undefined) return refuse(txn, `the rows of ${f.path} could not be read within the budget`)
    for (const row of rowsInRead(got, read)) {
      checkedRows++
      const version = row.version
      if (classify && version !== null && version < winner.version) {
        if (copied.has(row.id)) return hit('copied twice a row with', row)
        copied.set(row.id, { encoded: encodeKeyTuple(row.values, read.keyColumns), used: false })
        continue
      }
      const base = f.file.baseRowId
      const verb = !classify
        ? 'added a row with'
        : base !== undefined && row.id >= base
          ? 'inserted'
          : 'updated'
      return hit(verb, row)
    }
  }
  for (const f of analysis.files) {
    if (f.role === 'added') continue
    const pre = rowsOf(f.pre)
    const post = f.post === undefined ? [] : rowsOf(f.post)
    if (pre === undefined || post === undefined) {
      const why = f.role === 'dv-taken' ? ', or its deletion vector shrank' : ''
      return refuse(txn, `the rows of ${f.path} could not be read within the budget${why}`)
    }
    const stillLive = new Set<bigint>()
    for (const rows of post) for (const r of rows) stillLive.add(r.id)
    // A deletion vector that shrank brought rows back: they are new to the loser.
    const wasLive = new Set<bigint>()
    for (const rows of pre) for (const r of rows) wasLive.add(r.id)
    const back = rowsInRead(post, read).find((r) => !wasLive.has(r.id))
    if (back !== undefined) return hit('brought back a row with', back)
    for (const row of rowsInRead(pre, read)) {
      if (stillLive.has(row.id)) continue
      checkedRows++
      const copy = classify ? copied.get(row.id) : undefined
      if (copy !== undefined && !copy.used && copy.encoded === encodeKeyTuple(row.values, read.keyColumns)) {
        copy.used = true
        continue
      }
      return hit('deleted or updated', row)
    }
  }
  for (const [id, copy] of copied) {
    if (!copy.used) {
      return refuse(txn, `winner v${winner.version} wrote row ${id} as a copy of a row it did not remove`)
    }
  }

  const resolved = [...analysis.files.map((f) => f.path), ...analysis.dropped]
  const removedResolved = resolved.filter((p) => winner.removedPaths.has(p))
  const averted =
    removedResolved.some((p) => txn.readFiles.has(p)) ||
    firstFileMatchingReads(analysis.candidateAdds, { txn, matcher: analysis.matcher }) !== undefined
  return Object.freeze({
    txn: withoutReadFiles(txn, removedResolved),
    resolvedPaths: Object.freeze(resolved),
    reconciliation: averted
      ? reconciliation('case6-merge-rows', winner, {
          files: resolved,
          rows: checkedRows,
          ...(analysis.bySketch ? { changeSketch: true } : {}),
        })
      : undefined,
    newDeletionVectors: Object.freeze([]),
    refusals: new Map(),
  })
}

// === Analysis (shared by plan and reconcile) ===

/** A winner file whose changed rows are read. */
interface FileToCheck {
  readonly path: string
  /**
   * `added`: every live row is new; `removed`: every live row left; `dv-taken`: the rows read are
   * those a deletion-vector update took out (each left); `dv-update`: pre minus post.
   */
  readonly role: 'added' | 'removed' | 'dv-taken' | 'dv-update'
  /** The file read: the add, or the pre-image of the remove. */
  readonly file: AddFile
  /** Reads of the file's live rows (the key part, then the NOT MATCHED BY SOURCE part). */
  readonly pre: readonly RowReadRequest[]
  /** For a deletion-vector update: the same reads of the rows still live after it. */
  readonly post?: readonly RowReadRequest[]
}

type Analysis =
  | { readonly kind: 'skip' }
  | { readonly kind: 'refuse'; readonly reason: string }
  | {
      readonly kind: 'check'
      readonly read: MergeReadSet
      readonly classify: boolean
      readonly files: readonly FileToCheck[]
      /** Winner paths the statistics ruled out. */
      readonly dropped: readonly string[]
      /** The winner adds the added-files check would consider, for the reconciliation record. */
      readonly candidateAdds: readonly AddFile[]
      readonly matcher: ReadMatcher
      /** Decided by the winner's change sketch: no rows are read. */
      readonly bySketch: boolean
    }

function analyze(input: PlanInput): Analysis {
  const { txn, winner, flags } = input
  if (!flags.mergeRowLevelConflicts) return { kind: 'skip' }
  const maxMillis = flags.mergeRowLevelMaxMillis
  if (winner.addedFiles.length === 0 && winner.removedFiles.length === 0) return { kind: 'skip' }
  if (txn.isBlindAppend) return { kind: 'skip' }
  // Not a MERGE: nothing of this case applies, and no refusal should explain its conflict.
  if (txn.operation !== 'MERGE' && txn.readPredicates.every((r) => r.mergeRead === undefined)) {
    return { kind: 'skip' }
  }
  const gate = shapeGate(txn, winner)
  if (typeof gate === 'string') return { kind: 'refuse', reason: gate }
  const read = gate
  const candidateAdds = isolationCandidates(txn, winner)
  // Blind appends under WriteSerializable: nothing the file-level checks would look at.
  if (candidateAdds.length === 0 && winner.removedFiles.length === 0) return { kind: 'skip' }

  const ownRemoves = new Set<string>()
  for (const a of txn.actions) if (isRemove(a)) ownRemoves.add(a.remove.path)
  const shaped: { role: FileToCheck['role']; file: AddFile; post?: AddFile }[] = []
  for (const add of candidateAdds) {
    if (winner.removedPaths.has(add.path)) {
      if (!winner.dvUpdates.has(add.path)) {
        return { kind: 'refuse', reason: `the winner removed and re-added ${add.path} ambiguously` }
      }
      continue
    }
    if (!ownRemoves.has(add.path)) shaped.push({ role: 'added', file: add })
  }
  for (const r of winner.removedFiles) {
    if (ownRemoves.has(r.path)) continue
    const post = winner.dvUpdates.get(r.path)
    if (post !== undefined) shaped.push({ role: 'dv-update', file: preImageOf(r), post })
    else if (winner.wholeRemovals.has(r.path)) shaped.push({ role: 'removed', file: preImageOf(r) })
    else return { kind: 'refuse', reason: `the winner removed ${r.path} in a shape this check does not read` }
  }

  const matcher = createReadMatcher(txn.metadata)
  if (sketchRulesOut(txn, winner, read)) {
    // No changed key is in K_L: nothing to read, as the rows would show (design 8.4).
    const dropped = shaped.map((s) => s.file.path)
    return {
      kind: 'check',
      read,
      classify: false,
      files: [],
      dropped,
      candidateAdds,
      matcher,
      bySketch: true,
    }
  }
  const classify = classifies(txn, winner)
  const files: FileToCheck[] = []
  const dropped: string[] = []
  let bytes = 0n
  for (const s of shaped) {
    if (!mayHoldReadRows(s.file, read, matcher)) {
      dropped.push(s.file.path)
      continue
    }
    const ids = classify ? 'stable' : 'position'
    // A deletion vector that grew: only the rows it took out are read, not the rows it kept twice.
    const taken = s.post === undefined ? undefined : takenBy(s.file, s.post)
    bytes += s.file.size * (s.post === undefined || taken !== undefined ? 1n : 2n)
    const checked: FileToCheck =
      taken !== undefined
        ? {
            path: s.file.path,
            role: 'dv-taken',
            file: s.file,
            pre: readsOf(taken.file, read, ids, txn, maxMillis, taken.dv),
          }
        : {
            path: s.file.path,
            role: s.role,
            file: s.file,
            pre: readsOf(s.file, read, ids, txn, maxMillis),
            ...(s.post === undefined ? {} : { post: readsOf(s.post, read, ids, txn, maxMillis) }),
          }
    files.push(checked)
  }
  if (bytes > MAX_CHANGED_BYTES) {
    return {
      kind: 'refuse',
      reason: `the winner's changed files hold ${bytes} bytes, more than the ${MAX_CHANGED_BYTES} the row check reads`,
    }
  }
  return { kind: 'check', read, classify, files, dropped, candidateAdds, matcher, bySketch: false }
}

/**
 * Whether the winner's change sketch proves that no row it changed is in the read set: the
 * sketch is well formed, of the same key columns, none of its tuples is (or may be) in K_L, and
 * the read set has no NOT MATCHED BY SOURCE part, which keys alone cannot decide.
 */
function sketchRulesOut(txn: TransactionInfo, winner: WinningCommitSummary, read: MergeReadSet): boolean {
  if (read.notMatchedBySource !== undefined) return false
  const sketch = readChangeSketch(winner.commitInfo)
  if (sketch === undefined) return false
  const columns = physicalKeyColumns(read.keyColumns, txn.protocol, txn.metadata)
  if (columns === undefined || !sameKeyColumns(sketch.columns, columns)) return false
  return sketch.keys.every((k) => read.keys.probe(k) === 'absent')
}

/** The loser's MERGE read set, or why the winner cannot be checked against it. */
function shapeGate(txn: TransactionInfo, winner: WinningCommitSummary): MergeReadSet | string {
  if (txn.readWholeTable) return 'the transaction read the whole table'
  const reads = txn.readPredicates
  const read = reads.length === 1 ? reads[0]!.mergeRead : undefined
  if (read === undefined) {
    return 'the transaction recorded no MERGE read set (no eligible equi-join key, or reads besides one MERGE)'
  }
  if (read.wholeTable) return 'a NOT MATCHED BY SOURCE clause without a condition reads every row'
  const noDataChange = [...winner.addedFiles, ...winner.removedFiles].some((f) => !f.dataChange)
  if (noDataChange) return 'the winner rearranged files without changing data'
  return read
}

/**
 * Whether rows may be classified by row tracking (M-S5): enabled on the table, the winner tagged
 * preserved, and every file read carries the fields a stable id needs; the winner's new files
 * must carry its own version as their default commit version, or a copy could not be told apart.
 */
function classifies(txn: TransactionInfo, winner: WinningCommitSummary): boolean {
  try {
    if (!rowTrackingState(txn.protocol, txn.metadata).enabled) return false
  } catch {
    return false
  }
  const tags = winner.commitInfo?.tags
  const preserved =
    tags !== null && typeof tags === 'object'
      ? (tags as Record<string, unknown>)[ROW_TRACKING_PRESERVED_TAG]
      : undefined
  if (preserved !== 'true') return false
  for (const add of winner.addedFiles) {
    if (add.baseRowId === undefined || add.defaultRowCommitVersion === undefined) return false
    if (!winner.removedPaths.has(add.path) && add.defaultRowCommitVersion !== winner.version) return false
  }
  return winner.removedFiles.every(
    (r: RemoveFile) => r.baseRowId !== undefined && r.defaultRowCommitVersion !== undefined,
  )
}

function mayHoldReadRows(file: AddFile, read: MergeReadSet, matcher: ReadMatcher): boolean {
  if (matcher.statsMayMatch(read.keyFilter, file)) return true
  return read.notMatchedBySource !== undefined && matcher.statsMayMatch(read.notMatchedBySource, file)
}

/**
 * The changed-rows read of a deletion-vector update: the pre-image, with the statistics that give
 * its row count (the remove's, else the add's: one physical file), and the new deletion vector.
 * Undefined when the count is unknown or too large for it, or the update dropped the vector: the
 * pre- and post-image are read instead.
 */
function takenBy(
  pre: AddFile,
  post: AddFile,
): { readonly file: AddFile; readonly dv: DeletionVectorDescriptor } | undefined {
  if (post.deletionVector === undefined) return undefined
  const own = parseStats(pre.stats)?.numRecords
  const rows = own ?? parseStats(post.stats)?.numRecords
  if (rows === undefined || rows > BigInt(ONLY_DELETED_BY_MAX_ROWS)) return undefined
  const file = own !== undefined ? pre : Object.freeze({ ...pre, stats: post.stats })
  return { file, dv: post.deletionVector }
}

function readsOf(
  file: AddFile,
  read: MergeReadSet,
  ids: 'stable' | 'position',
  txn: TransactionInfo,
  maxMillis: number,
  onlyDeletedBy?: DeletionVectorDescriptor,
): readonly RowReadRequest[] {
  const state = ids === 'stable' ? rowTrackingState(txn.protocol, txn.metadata) : undefined
  const taken = onlyDeletedBy === undefined ? '' : `-${dvUniqueId(onlyDeletedBy)}`
  const base = `case6:${ids}:${file.path}#${dvUniqueId(file.deletionVector) ?? ''}${taken}`
  const request = (part: string, predicate: RowReadRequest['predicate']): RowReadRequest =>
    Object.freeze({
      key: `${base}:${part}`,
      file,
      predicate,
      columns: Object.freeze(read.keyColumns.map((c) => c.name)),
      ids,
      ...(state === undefined
        ? {}
        : {
            rowTracking: Object.freeze({
              materializedRowIdColumn: state.materializedRowIdColumn,
              materializedRowCommitVersionColumn: state.materializedRowCommitVersionColumn,
            }),
          }),
      maxRows: MAX_ROWS_PER_READ,
      ...(onlyDeletedBy === undefined ? {} : { onlyDeletedBy }),
      ...(maxMillis > 0 ? { maxMillis } : {}),
    })
  const out = [request('key', read.rowFilter ?? read.keyFilter)]
  if (read.notMatchedBySource !== undefined) out.push(request('nmbs', read.notMatchedBySource))
  return Object.freeze(out)
}

// === Rows ===

/**
 * The rows of one file in the read set, once each: those of the key read whose key is in K_L
 * (a Bloom filter's "maybe", and a key that cannot be encoded, count as in it), and every row of
 * the NOT MATCHED BY SOURCE read.
 */
function rowsInRead(answers: readonly (readonly ReadRow[])[], read: MergeReadSet): ReadRow[] {
  const out = new Map<bigint, ReadRow>()
  const [keyRows = [], nmbsRows = []] = answers
  for (const row of keyRows) {
    const encoded = encodeKeyTuple(row.values, read.keyColumns)
    if (encoded === null) continue
    if (encoded === undefined || read.keys.probe(encoded) !== 'absent') out.set(row.id, row)
  }
  for (const row of nmbsRows) out.set(row.id, row)
  return [...out.values()]
}

function describeKey(row: ReadRow, read: MergeReadSet): string {
  return read.keyColumns
    .map((c, i) => {
      const v = row.values[i]
      const text =
        v === null || v === undefined
          ? 'NULL'
          : v instanceof Uint8Array
            ? `0x${Array.from(v, (b) => b.toString(16).padStart(2, '0')).join('')}`
            : typeof v === 'string'
              ? `'${v}'`
              : String(v)
      return `${c.name} = ${text}`
    })
    .join(', ')
}

function refuse(txn: TransactionInfo, reason: string): PhaseOutcome {
  return unchanged(txn, new Map([['*', `Case 6: ${reason}`]]))
}
