/**
 * Log replay: reconciles the actions of a checkpoint and the commits after it into the table
 * state at one version (protocol.md section 3).
 *
 * Files are keyed by logical file, `(path, deletion vector unique id)`, with the path in its
 * canonical spelling ({@link canonicalLogPath}): an add and a remove of one file match however
 * each spells the path (relative or absolute, `file:` forms, percent-encoding). An add and a remove of
 * the same path with different DVs are different files, which is how a DV update is written
 * (`remove(F, dv1)` + `add(F, dv2)`, in either order). For each key the newest action wins; within
 * one commit, a later line wins over an earlier one for the same key.
 */
import { InternalError, InvalidTableError } from '../errors/index.js'
import type {
  Action,
  AddFile,
  CommitInfo,
  DeletionVectorDescriptor,
  DomainMetadata,
  Metadata,
  Protocol,
  RemoveFile,
  SetTransaction,
  Version,
} from '../protocol/actions.js'
import { canonicalLogPath } from '../protocol/log-paths.js'
import { FrozenMap } from './frozen-map.js'
import { LayeredMap } from './layered-map.js'

/** One unit of replay input: the actions of one commit, or (part of) the checkpoint. */
export interface ReplayBatch {
  readonly version: Version
  readonly actions: readonly Action[]
  /** Whether the actions come from a checkpoint (or one of its parts or sidecars). */
  readonly fromCheckpoint: boolean
}

/** Options of {@link replayLog}. */
export interface ReplayOptions {
  /**
   * The table root as a decoded absolute path or URI: absolute paths under it are matched with
   * (and rewritten to) the relative path of the same file.
   */
  readonly tableRoot?: string | undefined
}

/** The reconciled state of the table at one version. Immutable. */
export interface ReplayedState {
  /** The version of the last batch. */
  readonly version: Version
  readonly protocol: Protocol
  readonly metadata: Metadata
  /**
   * Live files by {@link fileActionKey}; each path appears at most once. Paths are canonical
   * ({@link canonicalLogPath}): an action whose path was spelled otherwise is a copy with the
   * canonical path.
   */
  readonly activeFiles: ReadonlyMap<string, AddFile>
  /** Removed logical files by {@link fileActionKey}, as recorded (no retention applied). */
  readonly tombstones: ReadonlyMap<string, RemoveFile>
  /** The latest `txn` per application id. */
  readonly setTransactions: ReadonlyMap<string, SetTransaction>
  /** The live domains (removed ones are dropped) by domain name. */
  readonly domainMetadata: ReadonlyMap<string, DomainMetadata>
  /**
   * The `commitInfo` of the commit at {@link version}, when that commit was replayed and has one
   * (checkpoints hold no commitInfo).
   */
  readonly latestCommitInfo?: CommitInfo
  /** The version of the checkpoint the state was built from, when there was one. */
  readonly checkpointVersion?: Version
}

/**
 * The unique id of a deletion vector, the legacy form Delta uses in reconciliation keys:
 * `storageType + pathOrInlineDv`, plus `'@' + offset` when an offset is present.
 *
 * @param dv - a descriptor
 * @returns its unique id
 */
export function dvUniqueId(dv: DeletionVectorDescriptor): string {
  const base = dv.storageType + dv.pathOrInlineDv
  return dv.offset === undefined ? base : `${base}@${dv.offset}`
}

/**
 * The reconciliation key of a logical file: the path, plus the DV's unique id when there is one.
 * Pass canonical paths ({@link canonicalLogPath}); the paths of a replayed state are. A NUL separates them; log paths are URI-encoded and never contain one.
 *
 * @param path - the file path as written in the log
 * @param dv - the file's deletion vector, if any
 * @returns the key
 */
export function fileActionKey(path: string, dv?: DeletionVectorDescriptor): string {
  return dv === undefined ? path : `${path}\u0000${dvUniqueId(dv)}`
}

/**
 * Replays batches into the table state.
 *
 * Batches must come in ascending version order: the checkpoint batches (all of one version)
 * first, then one batch per commit. A commit batch at or below the checkpoint version only
 * contributes its `commitInfo` (its effects are already in the checkpoint); pass the commit at the
 * checkpoint version that way to get {@link ReplayedState.latestCommitInfo} for a snapshot that
 * ends at a checkpoint. `checkpointMetadata`, `sidecar`, `cdc` and `commitInfo` actions do not
 * change the state.
 *
 * @param batches - the checkpoint and commit batches, ascending
 * @param options - the table root, to match absolute paths with relative ones
 * @returns the frozen state at the last batch's version
 * @throws {InvalidTableError} `missing-protocol` or `missing-metadata` when the replayed log has
 *   no protocol or no metaData
 * @throws {InternalError} when the batches are out of order
 */
export function replayLog(batches: Iterable<ReplayBatch>, options: ReplayOptions = {}): ReplayedState {
  const replay = new LogReplay(options)
  for (const batch of batches) replay.push(batch)
  return replay.finish()
}

/**
 * {@link replayLog} one batch at a time: a reader pushes the batches as it reads them, so a
 * checkpoint's rows reach the state as they are decoded and are never all held at once (a file's
 * later action replaces the earlier one as soon as it arrives). The same ordering rules apply.
 */
export class LogReplay {
  readonly #root: string | undefined
  #protocol: Protocol | undefined
  #metadata: Metadata | undefined
  readonly #active = new Map<string, AddFile>()
  readonly #tombstones = new Map<string, RemoveFile>()
  readonly #txns = new Map<string, SetTransaction>()
  readonly #domains = new Map<string, DomainMetadata>()
  #checkpointVersion: Version | undefined
  #lastVersion: Version | undefined
  #lastCommitVersion: Version | undefined
  #commitInfo: { version: Version; info: CommitInfo | undefined } | undefined

  /** @param options - the table root, to match absolute paths with relative ones */
  constructor(options: ReplayOptions = {}) {
    this.#root = options.tableRoot
  }

  /**
   * Applies one batch.
   *
   * @param batch - the next checkpoint or commit batch
   * @throws {InternalError} when it is out of order
   */
  push(batch: ReplayBatch): void {
    const v = batch.version
    if (batch.fromCheckpoint) {
      if (
        this.#lastVersion !== undefined &&
        (this.#checkpointVersion !== v || this.#lastCommitVersion !== undefined)
      ) {
        throw new InternalError(
          `replay got checkpoint actions of version ${v} after version ${this.#lastVersion}; checkpoint batches come first and share one version`,
        )
      }
      this.#checkpointVersion = v
    } else {
      if (this.#lastVersion !== undefined && v < this.#lastVersion) {
        throw new InternalError(
          `replay got version ${v} after version ${this.#lastVersion}; batches must be ascending`,
        )
      }
      if (this.#lastCommitVersion !== undefined && v === this.#lastCommitVersion) {
        throw new InternalError(`replay got two batches for commit ${v}`)
      }
      this.#lastCommitVersion = v
      let info: CommitInfo | undefined
      for (const a of batch.actions) {
        if ('commitInfo' in a) {
          info = a.commitInfo
          break
        }
      }
      this.#commitInfo = { version: v, info }
      // Only the commit at the checkpoint version gets here (ordering is checked above).
      if (this.#checkpointVersion !== undefined && v <= this.#checkpointVersion) return
    }
    this.#lastVersion = v

    for (const a of batch.actions) {
      if ('add' in a) {
        const add = withCanonicalPath(a.add, this.#root)
        const key = add.deletionVector === undefined ? add.path : fileActionKey(add.path, add.deletionVector)
        this.#active.set(key, add)
        this.#tombstones.delete(key)
      } else if ('remove' in a) {
        const rm = withCanonicalPath(a.remove, this.#root)
        const key = rm.deletionVector === undefined ? rm.path : fileActionKey(rm.path, rm.deletionVector)
        this.#active.delete(key)
        this.#tombstones.set(key, rm)
      } else if ('metaData' in a) {
        this.#metadata = a.metaData
      } else if ('protocol' in a) {
        this.#protocol = a.protocol
      } else if ('txn' in a) {
        this.#txns.set(a.txn.appId, a.txn)
      } else if ('domainMetadata' in a) {
        const dm = a.domainMetadata
        if (dm.removed) this.#domains.delete(dm.domain)
        else this.#domains.set(dm.domain, dm)
      }
    }
  }

  /**
   * The state after every batch pushed.
   *
   * @returns the frozen state at the last batch's version
   * @throws {InvalidTableError} `missing-protocol` or `missing-metadata` when the replayed log has
   *   no protocol or no metaData
   */
  finish(): ReplayedState {
    const protocol = this.#protocol
    const metadata = this.#metadata
    const lastVersion = this.#lastVersion
    const commitInfo = this.#commitInfo
    const checkpointVersion = this.#checkpointVersion
    const active = this.#active
    const tombstones = this.#tombstones
    const txns = this.#txns
    const domains = this.#domains
    if (lastVersion === undefined) {
      throw new InvalidTableError(
        'missing-protocol',
        'The log segment to replay is empty: no protocol and no metaData',
      )
    }
    if (protocol === undefined) {
      throw new InvalidTableError(
        'missing-protocol',
        `The table has no protocol action at version ${lastVersion}`,
        {
          version: lastVersion,
          hint: 'The log (or its checkpoint) lost its protocol action; the table cannot be read safely.',
        },
      )
    }
    if (metadata === undefined) {
      throw new InvalidTableError(
        'missing-metadata',
        `The table has no metaData action at version ${lastVersion}`,
        {
          version: lastVersion,
          hint: 'The log (or its checkpoint) lost its metaData action; the table cannot be read.',
        },
      )
    }
    const state: ReplayedState = {
      version: lastVersion,
      protocol,
      metadata,
      // Layered maps: advancing the state by a commit shares them instead of copying them.
      activeFiles: LayeredMap.of(active),
      tombstones: LayeredMap.of(tombstones),
      setTransactions: new FrozenMap(txns),
      domainMetadata: new FrozenMap(domains),
      ...(commitInfo?.version === lastVersion && commitInfo.info !== undefined
        ? { latestCommitInfo: commitInfo.info }
        : {}),
      ...(checkpointVersion === undefined ? {} : { checkpointVersion }),
    }
    return Object.freeze(state)
  }
}

/** The action itself when its path is canonical, else a frozen copy with the canonical path. */
function withCanonicalPath<T extends { readonly path: string }>(action: T, root: string | undefined): T {
  const path = canonicalLogPath(action.path, root)
  return path === action.path ? action : Object.freeze({ ...action, path })
}

/**
 * The state after `batches`, continuing from `state`: the same result {@link replayLog} gives
 * for the batches that built `state` followed by `batches`, field for field and in the same
 * iteration order. Costs time in the number of actions in `batches`, not in the size of the
 * table: the file maps of `state` are shared, not copied.
 *
 * @param state - a replayed state
 * @param batches - commit batches (never checkpoint ones) after `state.version`, ascending
 * @param options - the table root, to match absolute paths with relative ones
 * @returns the new frozen state (`state` itself when `batches` is empty)
 * @throws {InternalError} when a batch is out of order or from a checkpoint
 */
export function advanceReplayedState(
  state: ReplayedState,
  batches: Iterable<ReplayBatch>,
  options: ReplayOptions = {},
): ReplayedState {
  const root = options.tableRoot
  let { protocol, metadata } = state
  let lastVersion = state.version
  let commitInfo: CommitInfo | undefined = state.latestCommitInfo
  const activeChanges: Array<readonly [string, AddFile | undefined]> = []
  const tombstoneChanges: Array<readonly [string, RemoveFile | undefined]> = []
  let txns: Map<string, SetTransaction> | undefined
  let domains: Map<string, DomainMetadata> | undefined
  let any = false
  for (const batch of batches) {
    const v = batch.version
    if (batch.fromCheckpoint || v <= lastVersion) {
      throw new InternalError(
        `advancing the state of version ${lastVersion} got ${batch.fromCheckpoint ? 'checkpoint' : 'commit'} actions of version ${v}`,
      )
    }
    any = true
    lastVersion = v
    commitInfo = undefined
    for (const a of batch.actions) {
      if ('commitInfo' in a) {
        commitInfo = a.commitInfo
        break
      }
    }
    for (const a of batch.actions) {
      if ('add' in a) {
        const add = withCanonicalPath(a.add, root)
        const key = add.deletionVector === undefined ? add.path : fileActionKey(add.path, add.deletionVector)
        activeChanges.push([key, add])
        tombstoneChanges.push([key, undefined])
      } else if ('remove' in a) {
        const rm = withCanonicalPath(a.remove, root)
        const key = rm.deletionVector === undefined ? rm.path : fileActionKey(rm.path, rm.deletionVector)
        activeChanges.push([key, undefined])
        tombstoneChanges.push([key, rm])
      } else if ('metaData' in a) {
        metadata = a.metaData
      } else if ('protocol' in a) {
        protocol = a.protocol
      } else if ('txn' in a) {
        txns ??= new Map(state.setTransactions)
        txns.set(a.txn.appId, a.txn)
      } else if ('domainMetadata' in a) {
        const dm = a.domainMetadata
        domains ??= new Map(state.domainMetadata)
        if (dm.removed) domains.delete(dm.domain)
        else domains.set(dm.domain, dm)
      }
    }
  }
  if (!any) return state
  const next: ReplayedState = {
    version: lastVersion,
    protocol,
    metadata,
    activeFiles: layered(state.activeFiles).with(activeChanges),
    tombstones: layered(state.tombstones).with(tombstoneChanges),
    setTransactions: txns === undefined ? state.setTransactions : new FrozenMap(txns),
    domainMetadata: domains === undefined ? state.domainMetadata : new FrozenMap(domains),
    ...(commitInfo === undefined ? {} : { latestCommitInfo: commitInfo }),
    ...(state.checkpointVersion === undefined ? {} : { checkpointVersion: state.checkpointVersion }),
  }
  return Object.freeze(next)
}

/** The map itself when it is layered (every replayed state's is), else a layered copy. */
function layered<V>(map: ReadonlyMap<string, V>): LayeredMap<string, V> {
  return map instanceof LayeredMap ? (map as LayeredMap<string, V>) : LayeredMap.of(new Map(map))
}
