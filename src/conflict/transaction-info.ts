/**
 * The losing ("current") transaction as the conflict checker sees it: what it read, what it
 * wants to commit, and the values derived from both (rlc-spec 1.4, 1.5, 1.7).
 */
import { InvalidArgumentError } from '../errors/index.js'
import { type Expression, lit } from '../expressions/index.js'
import {
  type Action,
  type AddFile,
  isAdd,
  isCdc,
  isCommitInfo,
  isDomainMetadata,
  isMetadata,
  isRemove,
  type Metadata,
  type Protocol,
  type Version,
} from '../protocol/actions.js'
import type { RelocationCapture } from './case5a-capture.js'
import type { RemovedRowIds } from './case5b-removed-rows.js'
import type { MergeReadSet } from './case6-merge-read-set.js'
import type { KeptMatchedRows } from './kept-matched-rows.js'

// === Types ===

/** The isolation level a commit runs under. */
export type IsolationLevel = 'Serializable' | 'WriteSerializable' | 'SnapshotIsolation'

/**
 * One recorded read. Its filters are split into a part over partition columns only and a part
 * over anything else; a full scan records `TRUE` for both.
 */
export interface ReadPredicate {
  /** Conjunction of the partition-only filters; `TRUE` when there are none. */
  readonly partitionPredicate: Expression
  /** Conjunction of the remaining (data) filters; `TRUE` when there are none. */
  readonly dataPredicate: Expression
  /**
   * Row-exact replacement of `dataPredicate` for the value-exact tier (the MERGE source-key read
   * records its exact key set here while `dataPredicate` holds the cheaper pre-filter). Absent:
   * `dataPredicate` is used.
   */
  readonly exactDataPredicate?: Expression
  /**
   * The row-level read set of a MERGE (Case 6), recorded next to its file-level predicate when
   * `merge.rowLevelConflicts.enabled` is on and the MERGE's keys are eligible.
   */
  readonly mergeRead?: MergeReadSet
  /** Carried from the read as Delta records it; not consulted by the checks. */
  readonly shouldRewriteFilter: boolean
}

/** The fields needed to describe a transaction; derived values are computed from them. */
export interface TransactionInfoInput {
  /** The snapshot version the transaction read. */
  readonly readVersion: Version
  /** The transaction's operation name (`commitInfo.operation`), e.g. `DELETE`, `OPTIMIZE`. */
  readonly operation: string
  /** The isolation level the commit runs under; see {@link chooseIsolationLevel}. */
  readonly isolationLevel: IsolationLevel
  /** Recorded reads; empty when the transaction read nothing. */
  readonly readPredicates?: readonly ReadPredicate[]
  /** Files the transaction scanned (deduplicated by path). */
  readonly readFiles?: Iterable<AddFile>
  /** Whether the transaction marked the whole table as read (Delta's "taint"). */
  readonly readWholeTable?: boolean
  /** Application ids whose `txn` version the transaction read. */
  readonly readAppIds?: Iterable<string>
  /** Metadata domains whose configuration the transaction read. */
  readonly readDomains?: Iterable<string>
  /** The actions the transaction wants to commit, without its `commitInfo`. */
  readonly actions: readonly Action[]
  /** The table metadata at read time. */
  readonly metadata: Metadata
  /** The table protocol at read time. */
  readonly protocol: Protocol
  /**
   * Present when the table assigns row ids (the `rowTracking` feature, not suspended): the
   * high-water mark of the read snapshot, which the transaction's fresh ids were assigned above.
   */
  readonly rowTracking?: RowTrackingRead | undefined
  /** Present for a permuting OPTIMIZE (Z-order): its own permutation, for Case 5a. */
  readonly relocation?: RelocationCapture | undefined
  /** Present for a DML on a table with row tracking enabled: the rows it takes out, for Case 5b. */
  readonly removedRowIds?: RemovedRowIds | undefined
  /**
   * Present for a MERGE with an insert clause that matched target rows and left them in place in
   * a file it takes rows out of: those rows, which Case 2 counts as the transaction's own.
   */
  readonly keptMatchedRows?: KeptMatchedRows | undefined
}

/** What a transaction that assigns row ids read of the row-id high-water mark. */
export interface RowTrackingRead {
  /**
   * The mark the transaction's fresh ids are above: the read snapshot's, then each winner's once
   * the ids were re-based over it; `undefined` while no id was ever assigned.
   */
  readonly readHighWaterMark: bigint | undefined
}

/**
 * The losing transaction. Frozen; the `withX` functions of this module return updated copies.
 * Conflict checks against successive winners thread this value through: the rewritten actions
 * of one check, and its read files as that winner left them, are the input of the next.
 */
export interface TransactionInfo {
  readonly readVersion: Version
  readonly operation: string
  readonly isolationLevel: IsolationLevel
  readonly readPredicates: readonly ReadPredicate[]
  /** Scanned files by path. */
  readonly readFiles: ReadonlyMap<string, AddFile>
  readonly readWholeTable: boolean
  readonly readAppIds: ReadonlySet<string>
  readonly readDomains: ReadonlySet<string>
  readonly actions: readonly Action[]
  /** Read-time metadata. */
  readonly metadata: Metadata
  /** Read-time protocol, replaced by a winner's protocol once adopted. */
  readonly protocol: Protocol
  /**
   * Every file action is an `add` and nothing was read (rlc-spec 1.5). Fixed when the
   * transaction is described: rewrites by reconciliations never make a transaction blind.
   */
  readonly isBlindAppend: boolean
  /** No `remove` and no `add` with a deletion vector among the actions (Case 3's test). */
  readonly isAppendOnly: boolean
  /** The actions carry a `metaData`. */
  readonly metadataChanged: boolean
  /** Present when the table assigns row ids; see {@link TransactionInfoInput.rowTracking}. */
  readonly rowTracking: RowTrackingRead | undefined
  /** See {@link TransactionInfoInput.relocation}. */
  readonly relocation: RelocationCapture | undefined
  /**
   * See {@link TransactionInfoInput.removedRowIds}; keyed by the paths the actions take rows out
   * of, which a Case 5b rewrite moves to the outputs it masks.
   */
  readonly removedRowIds: RemovedRowIds | undefined
  /** See {@link TransactionInfoInput.keptMatchedRows}; keyed by the paths the MERGE read them in. */
  readonly keptMatchedRows: KeptMatchedRows | undefined
}

// === Construction ===

/** The `TRUE` predicate, for reads without filters. */
export const TRUE_PREDICATE: Expression = lit(true)

/**
 * A read predicate.
 *
 * @param parts - the partition part and data part (each `TRUE` when absent), an optional
 *   row-exact data predicate, a MERGE's row-level read set, and `shouldRewriteFilter` (default true)
 * @returns a frozen read predicate
 */
export function createReadPredicate(parts: {
  readonly partitionPredicate?: Expression
  readonly dataPredicate?: Expression
  readonly exactDataPredicate?: Expression
  readonly mergeRead?: MergeReadSet | undefined
  readonly shouldRewriteFilter?: boolean
}): ReadPredicate {
  const out: {
    partitionPredicate: Expression
    dataPredicate: Expression
    exactDataPredicate?: Expression
    mergeRead?: MergeReadSet
    shouldRewriteFilter: boolean
  } = {
    partitionPredicate: parts.partitionPredicate ?? TRUE_PREDICATE,
    dataPredicate: parts.dataPredicate ?? TRUE_PREDICATE,
    shouldRewriteFilter: parts.shouldRewriteFilter ?? true,
  }
  if (parts.exactDataPredicate !== undefined) out.exactDataPredicate = parts.exactDataPredicate
  if (parts.mergeRead !== undefined) out.mergeRead = parts.mergeRead
  return Object.freeze(out)
}

/**
 * Describes a losing transaction and computes its derived values.
 *
 * @param input - what the transaction read and wants to commit
 * @returns the frozen transaction info
 */
export function createTransactionInfo(input: TransactionInfoInput): TransactionInfo {
  const readPredicates = Object.freeze([...(input.readPredicates ?? [])])
  const readFiles = new Map<string, AddFile>()
  for (const f of input.readFiles ?? []) readFiles.set(f.path, f)
  const readWholeTable = input.readWholeTable ?? false
  const actions = freezeActions(input.actions)
  return build({
    readVersion: input.readVersion,
    operation: input.operation,
    isolationLevel: input.isolationLevel,
    readPredicates,
    readFiles,
    readWholeTable,
    readAppIds: new Set(input.readAppIds ?? []),
    readDomains: new Set(input.readDomains ?? []),
    actions,
    metadata: input.metadata,
    protocol: input.protocol,
    isBlindAppend: computeBlindAppend(actions, readPredicates, readFiles, readWholeTable),
    rowTracking: input.rowTracking === undefined ? undefined : Object.freeze({ ...input.rowTracking }),
    relocation: input.relocation,
    removedRowIds: input.removedRowIds,
    keptMatchedRows: input.keptMatchedRows,
  })
}

/**
 * A copy with another record of the rows it takes out (a Case 5b rewrite moved them).
 *
 * @param txn - the transaction
 * @param removedRowIds - the new record
 * @returns the updated copy
 */
export function withRemovedRowIds(txn: TransactionInfo, removedRowIds: RemovedRowIds): TransactionInfo {
  return build({ ...txn, removedRowIds })
}

/**
 * A copy with other actions; the derived `isAppendOnly` and `metadataChanged` follow them.
 *
 * @param txn - the transaction
 * @param actions - the new action list
 * @returns the updated copy
 */
export function withActions(txn: TransactionInfo, actions: readonly Action[]): TransactionInfo {
  return build({ ...txn, actions: freezeActions(actions) })
}

/**
 * A copy whose `readFiles` no longer holds the given paths (they were reconciled at row level
 * against the winner being checked). The narrowing holds for that winner's file checks only: the
 * checker carries every file the read depends on to the next winner (`carried-read-files.ts`).
 *
 * @param txn - the transaction
 * @param paths - the paths to forget
 * @returns the updated copy (the same value when nothing changes)
 */
export function withoutReadFiles(txn: TransactionInfo, paths: Iterable<string>): TransactionInfo {
  const readFiles = new Map(txn.readFiles)
  let changed = false
  for (const p of paths) changed = readFiles.delete(p) || changed
  return changed ? build({ ...txn, readFiles }) : txn
}

/**
 * A copy with other read files (those it is checked against the next winner with).
 *
 * @param txn - the transaction
 * @param readFiles - the read files, by path
 * @returns the updated copy
 */
export function withReadFiles(
  txn: TransactionInfo,
  readFiles: ReadonlyMap<string, AddFile>,
): TransactionInfo {
  return build({ ...txn, readFiles })
}

/**
 * A copy whose row ids were re-based over a winner: other actions, and the read mark to re-base
 * over the next winner.
 *
 * @param txn - the transaction (one that assigns row ids)
 * @param actions - the re-based actions
 * @param readHighWaterMark - the mark its fresh ids are now above
 * @returns the updated copy
 */
export function withRowIdsRebased(
  txn: TransactionInfo,
  actions: readonly Action[],
  readHighWaterMark: bigint | undefined,
): TransactionInfo {
  return build({ ...txn, actions: freezeActions(actions), rowTracking: Object.freeze({ readHighWaterMark }) })
}

/**
 * A copy that runs against another protocol (a winner's, once adopted).
 *
 * @param txn - the transaction
 * @param protocol - the protocol to adopt
 * @returns the updated copy
 */
export function withProtocol(txn: TransactionInfo, protocol: Protocol): TransactionInfo {
  return build({ ...txn, protocol })
}

// === Isolation level ===

/** Operations that never change data (Delta's `Operation.changesData = false`). */
const NO_DATA_CHANGE_OPERATIONS: ReadonlySet<string> = new Set([
  'OPTIMIZE',
  'Manual Update',
  'REORG',
  'VACUUM START',
  'VACUUM END',
  'SET TBLPROPERTIES',
  'UNSET TBLPROPERTIES',
  'ADD COLUMNS',
  'CHANGE COLUMN',
  'COMPUTE STATS',
])

const ROW_TRACKING_DOMAIN = 'delta.rowTracking'

/**
 * The isolation level a commit runs under (rlc-spec 1.7). The table's `delta.isolationLevel`
 * (default WriteSerializable) applies, except that a commit whose actions are all file actions
 * (or the row-tracking domain) with `dataChange = false` downgrades to SnapshotIsolation; under
 * WriteSerializable the operation must also not be one that changes data. An empty commit
 * downgrades too. So OPTIMIZE runs as SnapshotIsolation.
 *
 * @param args - the commit's actions (a `commitInfo` among them is ignored), the table
 *   configuration, the operation name, and optionally whether the operation changes data
 *   (default: false only for operations known not to, such as OPTIMIZE)
 * @returns the level
 * @throws {InvalidArgumentError} when `delta.isolationLevel` holds an unknown value
 */
export function chooseIsolationLevel(args: {
  readonly actions: readonly Action[]
  readonly configuration: Readonly<Record<string, string>>
  readonly operation: string
  readonly operationChangesData?: boolean
}): IsolationLevel {
  const tableLevel = tableIsolationLevel(args.configuration)
  const changesData = args.operationChangesData ?? !NO_DATA_CHANGE_OPERATIONS.has(args.operation)
  let noDataChanged = true
  for (const a of args.actions) {
    if (isCommitInfo(a)) continue
    if (isAdd(a)) noDataChanged &&= !a.add.dataChange
    else if (isRemove(a)) noDataChanged &&= !a.remove.dataChange
    else if (isCdc(a)) noDataChanged &&= !a.cdc.dataChange
    else if (isDomainMetadata(a) && a.domainMetadata.domain === ROW_TRACKING_DOMAIN) continue
    else noDataChanged = false
  }
  const downgrade = tableLevel === 'Serializable' ? noDataChanged : noDataChanged && !changesData
  return downgrade ? 'SnapshotIsolation' : tableLevel
}

function tableIsolationLevel(configuration: Readonly<Record<string, string>>): IsolationLevel {
  const raw = configuration['delta.isolationLevel']
  if (raw === undefined) return 'WriteSerializable'
  switch (raw.trim().toLowerCase()) {
    case 'serializable':
      return 'Serializable'
    case 'writeserializable':
      return 'WriteSerializable'
    default:
      throw new InvalidArgumentError(
        `Invalid value '${raw}' for table property delta.isolationLevel: expected Serializable or WriteSerializable`,
        {
          argument: 'delta.isolationLevel',
          hint: 'Set delta.isolationLevel to Serializable or WriteSerializable.',
        },
      )
  }
}

// === Internals ===

interface Fields {
  readonly readVersion: Version
  readonly operation: string
  readonly isolationLevel: IsolationLevel
  readonly readPredicates: readonly ReadPredicate[]
  readonly readFiles: ReadonlyMap<string, AddFile>
  readonly readWholeTable: boolean
  readonly readAppIds: ReadonlySet<string>
  readonly readDomains: ReadonlySet<string>
  readonly actions: readonly Action[]
  readonly metadata: Metadata
  readonly protocol: Protocol
  readonly isBlindAppend: boolean
  readonly rowTracking: RowTrackingRead | undefined
  readonly relocation: RelocationCapture | undefined
  readonly removedRowIds: RemovedRowIds | undefined
  readonly keptMatchedRows: KeptMatchedRows | undefined
}

function build(f: Fields): TransactionInfo {
  let isAppendOnly = true
  let metadataChanged = false
  for (const a of f.actions) {
    // Change data files are written only by a commit that changed existing rows.
    if (isRemove(a) || isCdc(a) || (isAdd(a) && a.add.deletionVector !== undefined)) isAppendOnly = false
    if (isMetadata(a)) metadataChanged = true
  }
  return Object.freeze({
    readVersion: f.readVersion,
    operation: f.operation,
    isolationLevel: f.isolationLevel,
    readPredicates: f.readPredicates,
    readFiles: f.readFiles,
    readWholeTable: f.readWholeTable,
    readAppIds: f.readAppIds,
    readDomains: f.readDomains,
    actions: f.actions,
    metadata: f.metadata,
    protocol: f.protocol,
    isBlindAppend: f.isBlindAppend,
    rowTracking: f.rowTracking,
    relocation: f.relocation,
    removedRowIds: f.removedRowIds,
    keptMatchedRows: f.keptMatchedRows,
    isAppendOnly,
    metadataChanged,
  })
}

function freezeActions(actions: readonly Action[]): readonly Action[] {
  return Object.isFrozen(actions) ? actions : Object.freeze([...actions])
}

function computeBlindAppend(
  actions: readonly Action[],
  readPredicates: readonly ReadPredicate[],
  readFiles: ReadonlyMap<string, AddFile>,
  readWholeTable: boolean,
): boolean {
  if (readPredicates.length > 0 || readFiles.size > 0 || readWholeTable) return false
  return actions.every((a) => !(isRemove(a) || isCdc(a)))
}
