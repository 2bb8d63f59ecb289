import { ONLY_DELETED_BY_MAX_ROWS, type ReadRow, type RowReadRequest } from '../conflict/fetched-facts.js'
import { RoaringBitmapArray } from '../dv/roaring-bitmap-array.js'
import {
  type ColumnSpec,
  type DataFileRef,
  ROW_COMMIT_VERSION_COLUMN,
  ROW_ID_COLUMN,
} from '../engine/data-plane.js'
import type { Engine } from '../engine/engine.js'
import { isDeltaError } from '../errors/index.js'
import type { DeletionVectorDescriptor } from '../protocol/actions.js'
import { decodeAddPath } from '../protocol/partition-values.js'
import { parseStats } from '../protocol/stats.js'
import { fileRefWithDeletions } from '../scan/data-file-refs.js'
import { maxOf } from '../util/arrays.js'
import { mapLimit } from '../util/map-limit.js'

/** How many row reads run at once. */
const READ_CONCURRENCY = 8

/**
 * Answers the conflict checker's row reads (Case 6) through the data plane. A read that fails
 * with a library error, names a column the snapshot lacks, returns more than its `maxRows`, or
 * is not done when the reads' `maxMillis` have passed is left out of the answers, which makes the
 * reconciliation that asked refuse.
 *
 * @param engine - the engine
 * @param columns - the read snapshot's columns (predicates and returned values use them)
 * @param requests - the reads
 * @param loadDv - loads a deletion vector (cached by the caller)
 * @param signal - cancels the reads
 * @returns the rows by request key
 */
export async function loadRowReads(
  engine: Engine,
  columns: readonly ColumnSpec[],
  requests: readonly RowReadRequest[],
  loadDv: (descriptor: DeletionVectorDescriptor) => Promise<RoaringBitmapArray>,
  signal: AbortSignal | undefined,
): Promise<ReadonlyMap<string, readonly ReadRow[]>> {
  const byName = new Map(columns.map((c) => [c.name, c]))
  const maxMillis = maxOf(
    requests.map((r) => r.maxMillis ?? 0),
    0,
  )
  const deadline = maxMillis > 0 ? AbortSignal.timeout(maxMillis) : undefined
  const stop =
    deadline === undefined ? signal : signal === undefined ? deadline : AbortSignal.any([signal, deadline])
  const answers = await mapLimit(requests, READ_CONCURRENCY, async (req) => {
    try {
      if (deadline?.aborted) return undefined
      const rows = await readRows(engine, columns, byName, req, loadDv, stop)
      return deadline?.aborted ? undefined : rows
    } catch (err) {
      // Past the budget this answer is missing; the caller's own cancellation still ends the commit.
      if (deadline?.aborted && signal?.aborted !== true) return undefined
      if (!isDeltaError(err)) throw err
      return undefined
    }
  })
  const out = new Map<string, readonly ReadRow[]>()
  requests.forEach((req, i) => {
    const rows = answers[i]
    if (rows !== undefined) out.set(req.key, rows)
  })
  return out
}

async function readRows(
  engine: Engine,
  columns: readonly ColumnSpec[],
  byName: ReadonlyMap<string, ColumnSpec>,
  req: RowReadRequest,
  loadDv: (descriptor: DeletionVectorDescriptor) => Promise<RoaringBitmapArray>,
  signal: AbortSignal | undefined,
): Promise<readonly ReadRow[] | undefined> {
  const decoded = decodeAddPath(req.file.path)
  if (decoded.kind !== 'relative') return undefined
  const specs: ColumnSpec[] = []
  for (const name of req.columns) {
    const spec = byName.get(name)
    // A table column named like the id columns would shadow them in the returned row.
    const lower = name.toLowerCase()
    if (spec === undefined || lower === ROW_ID_COLUMN || lower === ROW_COMMIT_VERSION_COLUMN) return undefined
    specs.push(spec)
  }
  const live = req.file.deletionVector === undefined ? undefined : await loadDv(req.file.deletionVector)
  let deleted = live
  if (req.onlyDeletedBy !== undefined) {
    const rowCount = parseStats(req.file.stats)?.numRecords
    if (rowCount === undefined || rowCount > BigInt(ONLY_DELETED_BY_MAX_ROWS)) return undefined
    const after = await loadDv(req.onlyDeletedBy)
    // Rows that came back are changes this read would not show.
    if (live !== undefined && !live.isSubsetOf(after)) return undefined
    const taken = live === undefined ? after : after.difference(live)
    if (taken.isEmpty) return Object.freeze([])
    // Every other row is hidden. A taken position at or past the count (statistics that
    // undercount the file) still reads, and positions the file lacks hide nothing.
    deleted = RoaringBitmapArray.fromRange(0, rowCount).difference(taken)
  }
  const stable = req.ids === 'stable'
  if (stable && (req.file.baseRowId === undefined || req.file.defaultRowCommitVersion === undefined)) {
    return undefined
  }
  // Positions: a base of 0 and no materialized column make the row id the physical position.
  const ref: DataFileRef = fileRefWithDeletions(
    {
      key: decoded.key,
      partitionValues: req.file.partitionValues,
      baseRowId: stable ? req.file.baseRowId : 0n,
      defaultRowCommitVersion: stable ? req.file.defaultRowCommitVersion : 0n,
    },
    deleted,
  )
  const rows: ReadRow[] = []
  for await (const batch of engine.data.scan({
    files: [ref],
    columns: specs,
    predicateColumns: columns,
    predicate: req.predicate,
    rowTracking: stable ? (req.rowTracking ?? {}) : {},
    signal,
  })) {
    for (const row of batch) {
      if (rows.length >= req.maxRows) return undefined
      const id = row[ROW_ID_COLUMN]
      if (typeof id !== 'bigint') return undefined
      const version = row[ROW_COMMIT_VERSION_COLUMN]
      rows.push(
        Object.freeze({
          id,
          version: stable && typeof version === 'bigint' ? version : null,
          values: Object.freeze(specs.map((c) => row[c.name])),
        }),
      )
    }
  }
  return Object.freeze(rows)
}
