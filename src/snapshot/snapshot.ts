import { InvalidTableError } from '../errors/index.js'
import type { LogSegment } from '../log/log-segment.js'
import type { ReplayedState } from '../log/replay.js'
import type {
  AddFile,
  CommitInfo,
  Metadata,
  Protocol,
  RemoveFile,
  SetTransaction,
  Version,
} from '../protocol/actions.js'
import { parseSchema, type StructType } from '../protocol/schema.js'

/**
 * The state of a table at one version: protocol, metadata, schema and the live files.
 *
 * A snapshot is an immutable value. It holds the reconciled log state in memory; data files
 * are only read by scans.
 *
 * ### Examples
 * ```ts
 * const snap = await table.snapshot({ version: 3n })
 * console.log(snap.version, snap.partitionColumns, (await snap.files()).length)
 * ```
 */
export class Snapshot {
  /** The table version this snapshot describes. */
  readonly version: Version
  /** The table's protocol at this version. */
  readonly protocol: Protocol
  /** The table's metadata at this version. */
  readonly metadata: Metadata
  /**
   * Commit time of this version (ms since the epoch): its In-Commit Timestamp when the table
   * enables them for this version, else its commit file's modification time (as stored, not made
   * increasing). Only when log cleanup removed the commit file and kept its checkpoint is the
   * checkpoint file's time used.
   */
  readonly timestamp: number
  /** The log files this snapshot was built from. */
  readonly logSegment: LogSegment
  /** Where the table lives (for messages). */
  readonly location: string
  readonly #state: ReplayedState
  #schema: StructType | undefined

  /** @internal built by `loadSnapshot` */
  constructor(init: {
    version: Version
    state: ReplayedState
    logSegment: LogSegment
    timestamp: number
    location: string
  }) {
    this.version = init.version
    this.#state = init.state
    this.protocol = init.state.protocol
    this.metadata = init.state.metadata
    this.logSegment = init.logSegment
    this.timestamp = init.timestamp
    this.location = init.location
    Object.freeze(this)
  }

  /**
   * The table schema.
   *
   * @throws {InvalidTableError} (`missing-schema`) when the metadata has no `schemaString`
   */
  get schema(): StructType {
    if (this.#schema) return this.#schema
    const text = this.metadata.schemaString
    if (text === undefined) {
      throw new InvalidTableError(
        'missing-schema',
        `The metadata of ${this.location} at version ${this.version} has no schema`,
        {
          version: this.version,
        },
      )
    }
    this.#schema = parseSchema(text)
    return this.#schema
  }

  /** Partition column names, in table order. */
  get partitionColumns(): readonly string[] {
    return this.metadata.partitionColumns
  }

  /** Table properties (`metaData.configuration`). */
  get properties(): Readonly<Record<string, string>> {
    return this.metadata.configuration
  }

  /** Live data files (with their deletion vectors), in no particular order. */
  async files(): Promise<readonly AddFile[]> {
    return this.activeFiles()
  }

  /** Live data files, synchronously. */
  activeFiles(): readonly AddFile[] {
    return [...this.#state.activeFiles.values()]
  }

  /** Remove tombstones still held in the log state (for VACUUM and checkpoints). */
  tombstones(): readonly RemoveFile[] {
    return [...this.#state.tombstones.values()]
  }

  /** The latest `txn` per application id. */
  setTransactions(): ReadonlyMap<string, SetTransaction> {
    return this.#state.setTransactions
  }

  /** The reconciled log state. */
  get state(): ReplayedState {
    return this.#state
  }

  /** The commitInfo of this version's own commit, when it was read. */
  get commitInfo(): CommitInfo | undefined {
    return this.#state.latestCommitInfo
  }
}
