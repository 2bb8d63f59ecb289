/**
 * The write-side rules of row tracking (PROTOCOL.md "Row Tracking"), as pure functions over a
 * commit's actions:
 *
 * - every new `add` takes fresh row ids above the table's high-water mark (`baseRowId`, one id per
 *   physical row, so `numRecords` must be known) and `defaultRowCommitVersion` = the commit
 *   version; the `delta.rowTracking` domain moves the mark whenever ids were assigned;
 * - a `remove`, and an `add` that recommits a file already in the table, copy both fields from
 *   the last `add` of the same path;
 * - a commit that lost a race re-bases its fresh ids above the winner's mark and moves its commit
 *   version past the winner's, as Delta's conflict checker does, so ids stay unique.
 *
 * Ids are `bigint` (see `row-tracking.ts`). A mark past 2^63-1 is refused rather than wrapped.
 */
import { InternalError, InvalidTableError, RowIdAssignmentWithoutStatsError } from '../errors/index.js'
import {
  type Action,
  type AddFile,
  createAddFile,
  createRemoveFile,
  type DomainMetadata,
  isAdd,
  isDomainMetadata,
  isRemove,
  type RemoveFile,
} from './actions.js'
import {
  MAX_LONG,
  parseRowIdHighWaterMark,
  ROW_TRACKING_DOMAIN,
  type RowTrackingState,
  rowTrackingDomain,
} from './row-tracking.js'
import { parseStats } from './stats.js'

/** The actions of a commit after a row-tracking rule ran, and the mark they leave. */
export interface RowIdAssignment {
  /** The commit's actions: adds completed, the `delta.rowTracking` domain action set or dropped. */
  readonly actions: readonly Action[]
  /** The highest fresh id the commit assigned or reserved; the input mark when it assigned none. */
  readonly highWaterMark: bigint | undefined
}

/**
 * Assigns row ids to the new files of a commit about to be written at `commitVersion`.
 *
 * Every `add` without `baseRowId` gets `mark + 1`, and the mark grows by its `numRecords` (a file
 * of no rows takes no id). Every `add` without `defaultRowCommitVersion` gets `commitVersion`. An
 * `add` that already has the fields (a recommitted file, see {@link copyRowTrackingFields}) is
 * kept. The commit's own `delta.rowTracking` domain actions are replaced by one recording the new
 * mark, present only when the mark moved (a reservation the commit made above its ids is kept).
 * Nothing changes when the table does not assign ids (feature not supported, or suspended).
 *
 * @param actions - the commit's actions
 * @param input - the table's row-tracking state, the read snapshot's mark, the version the commit
 *   will be written at
 * @returns the completed actions and the new mark
 * @throws {RowIdAssignmentWithoutStatsError} for a new `add` without a `numRecords` statistic
 * @throws {InvalidTableError} `malformed-action` when the ids would pass 2^63-1, or a domain action
 *   of the commit is malformed
 */
export function assignRowIds(
  actions: readonly Action[],
  input: {
    readonly state: RowTrackingState
    readonly highWaterMark: bigint | undefined
    readonly commitVersion: bigint
  },
): RowIdAssignment {
  if (!input.state.assignsIds) return { actions, highWaterMark: input.highWaterMark }
  const start = input.highWaterMark ?? -1n
  let mark = start
  let reserved = start
  const out: Action[] = []
  for (const a of actions) {
    if (isRowTrackingDomain(a)) {
      reserved = maxBig(reserved, parseRowIdHighWaterMark(a.domainMetadata))
      continue
    }
    if (!isAdd(a) || (a.add.baseRowId !== undefined && a.add.defaultRowCommitVersion !== undefined)) {
      out.push(a)
      continue
    }
    let baseRowId = a.add.baseRowId
    if (baseRowId === undefined) {
      baseRowId = mark + 1n
      mark = advance(mark, a.add)
    }
    out.push({
      add: createAddFile({
        ...a.add,
        baseRowId,
        defaultRowCommitVersion: a.add.defaultRowCommitVersion ?? input.commitVersion,
      }),
    })
  }
  const final = maxBig(mark, reserved)
  if (final > start) out.push({ domainMetadata: rowTrackingDomain(final) })
  return { actions: out, highWaterMark: final > start ? final : input.highWaterMark }
}

/**
 * Copies `baseRowId` and `defaultRowCommitVersion` from the last `add` of each path onto the
 * commit's removes and recommitted adds (an `add` of a path that is already live, e.g. with a new
 * deletion vector), as the protocol requires of both. A field the last `add` lacks is left as the
 * action has it, and actions of other paths are kept as they are.
 *
 * @param actions - the commit's actions
 * @param lastAdds - the live `add` of each path in the read snapshot, by path
 * @returns the actions with the fields copied
 */
export function copyRowTrackingFields(
  actions: readonly Action[],
  lastAdds: ReadonlyMap<string, AddFile>,
): readonly Action[] {
  return actions.map((a) => {
    if (isRemove(a)) {
      const from = lastAdds.get(a.remove.path)
      return from === undefined ? a : { remove: removeWithRowTracking(a.remove, from) }
    }
    if (isAdd(a)) {
      const from = lastAdds.get(a.add.path)
      return from === undefined ? a : { add: recommitWithRowTracking(a.add, from) }
    }
    return a
  })
}

/**
 * A `remove` carrying the row-tracking fields of the `add` it removes.
 *
 * @param remove - the remove action
 * @param lastAdd - the last `add` of the same path
 * @returns the remove with `baseRowId` and `defaultRowCommitVersion` of `lastAdd` (where it has them)
 * @throws {InternalError} when the paths differ
 */
export function removeWithRowTracking(remove: RemoveFile, lastAdd: AddFile): RemoveFile {
  samePath(remove.path, lastAdd.path)
  return createRemoveFile({
    ...remove,
    baseRowId: lastAdd.baseRowId ?? remove.baseRowId,
    defaultRowCommitVersion: lastAdd.defaultRowCommitVersion ?? remove.defaultRowCommitVersion,
  })
}

/**
 * An `add` that recommits a live file (same path), carrying the row-tracking fields of its last
 * `add`: the file's rows keep their ids and commit versions.
 *
 * @param add - the recommitted add
 * @param lastAdd - the last `add` of the same path
 * @returns the add with `baseRowId` and `defaultRowCommitVersion` of `lastAdd` (where it has them)
 * @throws {InternalError} when the paths differ
 */
export function recommitWithRowTracking(add: AddFile, lastAdd: AddFile): AddFile {
  samePath(add.path, lastAdd.path)
  return createAddFile({
    ...add,
    baseRowId: lastAdd.baseRowId ?? add.baseRowId,
    defaultRowCommitVersion: lastAdd.defaultRowCommitVersion ?? add.defaultRowCommitVersion,
  })
}

// === Losing a race ===

/** What {@link rebaseRowIds} needs to know about one winning commit. */
export interface RowIdRebaseInput {
  /**
   * The mark the losing commit's fresh ids were assigned above: its read snapshot's mark for the
   * first winner, then the `readHighWaterMark` the previous call returned.
   */
  readonly readHighWaterMark: bigint | undefined
  /** The mark the winner's `delta.rowTracking` domain action records; `undefined` when it has none. */
  readonly winnerHighWaterMark: bigint | undefined
  /** The winner's version. */
  readonly winnerVersion: bigint
  /**
   * Paths whose adds recommit a file already committed (the read snapshot's, or a winner's output
   * that a reconciliation re-adds): their ids are inherited, never fresh, whatever their value.
   */
  readonly inheritedPaths?: ReadonlySet<string> | undefined
}

/** The losing commit's actions after {@link rebaseRowIds}, and the mark to use for the next winner. */
export interface RowIdRebase extends RowIdAssignment {
  /** The winner's mark (or the input read mark when it assigned none): pass it for the next winner. */
  readonly readHighWaterMark: bigint | undefined
}

/**
 * Re-bases a losing commit's row tracking over one winning commit, before any reconciliation
 * touches its actions.
 *
 * - A fresh `add` (no `baseRowId`, or one above `readHighWaterMark`, and not an inherited path)
 *   gets new ids from the winner's mark up: the winner may have handed out the same ones.
 * - An `add` whose `defaultRowCommitVersion` is the winner's version (or absent), and not an
 *   inherited path, gets the next version: the commit can land no earlier.
 * - The commit's own `delta.rowTracking` domain action is replaced by one with the new mark, or
 *   dropped when it assigned nothing above the winner's.
 *
 * Order matters: run it for each winner before the row-level phases, which may re-add a winner's
 * output file. That file's `baseRowId` is above this commit's read mark and its
 * `defaultRowCommitVersion` is the winner's version, so re-basing it afterwards would change every
 * id of its rows (unless its path is in `inheritedPaths`). Running first, the returned read mark
 * already covers the winner's files for the next winner.
 *
 * @param actions - the losing commit's actions
 * @param input - the read mark, the winner's mark and version, inherited paths
 * @returns the re-based actions, their mark, and the read mark for the next winner
 * @throws {RowIdAssignmentWithoutStatsError} for a fresh `add` without `numRecords`
 * @throws {InvalidTableError} `malformed-action` when the ids would pass 2^63-1
 */
export function rebaseRowIds(actions: readonly Action[], input: RowIdRebaseInput): RowIdRebase {
  const read = input.readHighWaterMark ?? -1n
  const winner = maxBig(read, input.winnerHighWaterMark ?? read)
  const inherited = input.inheritedPaths
  let mark = winner
  const out: Action[] = []
  for (const a of actions) {
    if (isRowTrackingDomain(a)) continue
    if (!isAdd(a) || inherited?.has(a.add.path) === true) {
      out.push(a)
      continue
    }
    const add = a.add
    const fresh = add.baseRowId === undefined || add.baseRowId > read
    const bump =
      add.defaultRowCommitVersion === undefined || add.defaultRowCommitVersion === input.winnerVersion
    if (!fresh && !bump) {
      out.push(a)
      continue
    }
    let baseRowId = add.baseRowId
    if (fresh) {
      baseRowId = mark + 1n
      mark = advance(mark, add)
    }
    out.push({
      add: createAddFile({
        ...add,
        baseRowId,
        defaultRowCommitVersion: bump ? input.winnerVersion + 1n : add.defaultRowCommitVersion,
      }),
    })
  }
  if (mark > winner) out.push({ domainMetadata: rowTrackingDomain(mark) })
  const readHighWaterMark = input.winnerHighWaterMark === undefined ? input.readHighWaterMark : winner
  return { actions: out, highWaterMark: mark > winner ? mark : readHighWaterMark, readHighWaterMark }
}

/**
 * The mark a commit's domain actions record (the last `delta.rowTracking` one wins, as in log
 * replay; a removed domain records none).
 *
 * @param domains - the commit's domain metadata actions
 * @returns the mark, or `undefined` when the commit sets none
 * @throws {InvalidTableError} `malformed-action` when the domain's configuration is malformed
 */
export function highWaterMarkOf(domains: Iterable<DomainMetadata>): bigint | undefined {
  let last: DomainMetadata | undefined
  for (const d of domains) if (d.domain === ROW_TRACKING_DOMAIN) last = d
  return last === undefined || last.removed ? undefined : parseRowIdHighWaterMark(last)
}

// === Helpers ===

function isRowTrackingDomain(a: Action): a is { readonly domainMetadata: DomainMetadata } {
  return isDomainMetadata(a) && a.domainMetadata.domain === ROW_TRACKING_DOMAIN
}

/** The mark after `add` took its ids above `mark`. */
function advance(mark: bigint, add: AddFile): bigint {
  const n = parseStats(add.stats)?.numRecords
  if (n === undefined) throw new RowIdAssignmentWithoutStatsError(add.path)
  const next = mark + n
  if (next > MAX_LONG) {
    throw new InvalidTableError(
      'malformed-action',
      `Row ids of the table are exhausted: the ${n} rows of ${add.path} would take ids past 2^63-1 (mark ${mark})`,
    )
  }
  return next
}

function maxBig(a: bigint, b: bigint): bigint {
  return a > b ? a : b
}

function samePath(path: string, lastAddPath: string): void {
  if (path !== lastAddPath) {
    throw new InternalError(`row-tracking fields of ${lastAddPath} were copied onto an action of ${path}`)
  }
}
