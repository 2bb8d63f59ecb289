/**
 * The summary of one committed winning version (rlc-spec 1.6), built once from its actions and
 * read by every check.
 */
import {
  type Action,
  type AddFile,
  type CommitInfo,
  type DomainMetadata,
  isAdd,
  isCdc,
  isCommitInfo,
  isDomainMetadata,
  isMetadata,
  isProtocol,
  isRemove,
  isSetTransaction,
  type Metadata,
  type Protocol,
  type RemoveFile,
  type SetTransaction,
  type Version,
} from '../protocol/actions.js'
import { canonicalLogPath } from '../protocol/log-paths.js'
import type { TransactionInfo } from './transaction-info.js'

/** A winning commit, pre-digested for the checks. */
export interface WinningCommitSummary {
  /** The version of the winning commit. */
  readonly version: Version
  /**
   * Its actions, as read from the log, except that file paths are canonical
   * ({@link canonicalLogPath}), as the paths of a snapshot are, so that the checks compare files
   * and not spellings.
   */
  readonly actions: readonly Action[]
  /** Its first `commitInfo`, if any. */
  readonly commitInfo: CommitInfo | undefined
  /** `commitInfo.operation`, if recorded. */
  readonly operation: string | undefined
  /** Its first `protocol`, if any. */
  readonly protocol: Protocol | undefined
  readonly metadataUpdates: readonly Metadata[]
  readonly appLevelTransactions: readonly SetTransaction[]
  readonly domainMetadata: readonly DomainMetadata[]
  readonly removedFiles: readonly RemoveFile[]
  readonly addedFiles: readonly AddFile[]
  /** `commitInfo.isBlindAppend`, if recorded. */
  readonly isBlindAppend: boolean | undefined
  /** All adds when the winner was a blind append, else none. */
  readonly blindAppendAddedFiles: readonly AddFile[]
  /** All adds unless the winner was a blind append. */
  readonly changedDataAddedFiles: readonly AddFile[]
  /** Adds by path (the last one when a path repeats). */
  readonly addedFilesByPath: ReadonlyMap<string, AddFile>
  /** Every path the winner removed. */
  readonly removedPaths: ReadonlySet<string>
  /** Every file action is an `add`. */
  readonly onlyAddFiles: boolean
  /**
   * The winner's deletion-vector updates: path to the `add` that re-adds a path the winner also
   * removed, with a deletion vector (how a DV-based DELETE, UPDATE or MERGE looks in the log).
   * Only paths with exactly one such `add` and exactly one `remove` are listed; anything
   * ambiguous is left to the file-level checks.
   */
  readonly dvUpdates: ReadonlyMap<string, AddFile>
  /** For each path of `dvUpdates`: the winner's `remove` of it, i.e. its pre-image. */
  readonly dvUpdatePreImages: ReadonlyMap<string, RemoveFile>
  /**
   * Files the winner took out of the table whole: path to its only `remove` of it, with
   * `dataChange` set (every row of the file left the table, as when a DML deletes or rewrites
   * all of them), and no `add` of the path. A `dataChange=false` removal relocates the rows
   * instead and is never listed.
   */
  readonly wholeRemovals: ReadonlyMap<string, RemoveFile>
}

/**
 * Summarizes a winning commit.
 *
 * @param version - the winner's version
 * @param logActions - the winner's actions, in log order
 * @param options - the table root (a decoded absolute path or URI), to match absolute paths with
 *   the relative paths of the same files
 * @returns the frozen summary
 */
export function summarizeWinningCommit(
  version: Version,
  logActions: readonly Action[],
  options: { readonly tableRoot?: string | undefined } = {},
): WinningCommitSummary {
  const actions = canonicalPaths(logActions, options.tableRoot)
  let commitInfo: CommitInfo | undefined
  let protocol: Protocol | undefined
  const metadataUpdates: Metadata[] = []
  const appLevelTransactions: SetTransaction[] = []
  const domainMetadata: DomainMetadata[] = []
  const removedFiles: RemoveFile[] = []
  const addedFiles: AddFile[] = []
  let onlyAddFiles = true
  for (const a of actions) {
    if (isAdd(a)) addedFiles.push(a.add)
    else if (isRemove(a)) {
      removedFiles.push(a.remove)
      onlyAddFiles = false
    } else if (isCdc(a)) onlyAddFiles = false
    else if (isCommitInfo(a)) commitInfo ??= a.commitInfo
    else if (isProtocol(a)) protocol ??= a.protocol
    else if (isMetadata(a)) metadataUpdates.push(a.metaData)
    else if (isSetTransaction(a)) appLevelTransactions.push(a.txn)
    else if (isDomainMetadata(a)) domainMetadata.push(a.domainMetadata)
  }
  const isBlindAppend = typeof commitInfo?.isBlindAppend === 'boolean' ? commitInfo.isBlindAppend : undefined
  const operation = typeof commitInfo?.operation === 'string' ? commitInfo.operation : undefined

  const addedFilesByPath = new Map<string, AddFile>()
  const addCount = new Map<string, number>()
  for (const f of addedFiles) {
    addedFilesByPath.set(f.path, f)
    addCount.set(f.path, (addCount.get(f.path) ?? 0) + 1)
  }
  const removedPaths = new Set<string>()
  const removeCount = new Map<string, number>()
  const removeByPath = new Map<string, RemoveFile>()
  for (const r of removedFiles) {
    removedPaths.add(r.path)
    removeCount.set(r.path, (removeCount.get(r.path) ?? 0) + 1)
    removeByPath.set(r.path, r)
  }
  const dvUpdates = new Map<string, AddFile>()
  const dvUpdatePreImages = new Map<string, RemoveFile>()
  for (const [path, add] of addedFilesByPath) {
    if (add.deletionVector === undefined || addCount.get(path) !== 1 || removeCount.get(path) !== 1) continue
    dvUpdates.set(path, add)
    dvUpdatePreImages.set(path, removeByPath.get(path)!)
  }

  const wholeRemovals = new Map<string, RemoveFile>()
  for (const [path, r] of removeByPath) {
    if (r.dataChange && removeCount.get(path) === 1 && !addCount.has(path)) wholeRemovals.set(path, r)
  }

  const frozenAdds = Object.freeze(addedFiles)
  const none: readonly AddFile[] = Object.freeze([])
  return Object.freeze({
    version,
    actions: Object.isFrozen(actions) ? actions : Object.freeze([...actions]),
    commitInfo,
    operation,
    protocol,
    metadataUpdates: Object.freeze(metadataUpdates),
    appLevelTransactions: Object.freeze(appLevelTransactions),
    domainMetadata: Object.freeze(domainMetadata),
    removedFiles: Object.freeze(removedFiles),
    addedFiles: frozenAdds,
    isBlindAppend,
    blindAppendAddedFiles: isBlindAppend === true ? frozenAdds : none,
    changedDataAddedFiles: isBlindAppend === true ? none : frozenAdds,
    addedFilesByPath,
    removedPaths,
    onlyAddFiles,
    dvUpdates,
    dvUpdatePreImages,
    wholeRemovals,
  })
}

/** The actions with every add and remove path canonical; the same array when all already are. */
function canonicalPaths(actions: readonly Action[], root: string | undefined): readonly Action[] {
  let out: Action[] | undefined
  for (let i = 0; i < actions.length; i++) {
    const a = actions[i] as Action
    let next: Action = a
    if (isAdd(a)) {
      const path = canonicalLogPath(a.add.path, root)
      if (path !== a.add.path) next = Object.freeze({ add: Object.freeze({ ...a.add, path }) })
    } else if (isRemove(a)) {
      const path = canonicalLogPath(a.remove.path, root)
      if (path !== a.remove.path) next = Object.freeze({ remove: Object.freeze({ ...a.remove, path }) })
    }
    if (next !== a && out === undefined) out = actions.slice(0, i)
    out?.push(next)
  }
  return out === undefined ? actions : Object.freeze(out)
}

/**
 * The winner adds the isolation level asks the added-files check to consider (rlc-spec 2.2 step
 * 10): none under SnapshotIsolation; under WriteSerializable only the adds of a winner that is
 * not a blind append, unless the transaction changes metadata; every add otherwise.
 *
 * @param txn - the losing transaction
 * @param winner - the winning commit
 * @returns the candidates
 */
export function isolationCandidates(
  txn: Pick<TransactionInfo, 'isolationLevel' | 'metadataChanged'>,
  winner: WinningCommitSummary,
): readonly AddFile[] {
  switch (txn.isolationLevel) {
    case 'SnapshotIsolation':
      return []
    case 'WriteSerializable':
      return txn.metadataChanged ? winner.addedFiles : winner.changedDataAddedFiles
    case 'Serializable':
      return winner.addedFiles
  }
}
