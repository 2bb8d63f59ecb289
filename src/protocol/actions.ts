/**
 * Delta log actions as immutable values, shaped exactly like their JSON (field names as the
 * Delta protocol spells them; see protocol.md section 2).
 *
 * Values are built by the `createX` factories, which copy their input, drop `undefined`
 * fields, put the fields in wire order and freeze the result. Parsing and serialization live in
 * `action-json.ts`.
 */

/** A table version: a commit number, 0-based. */
export type Version = bigint

/** A string map as stored in the log (`tags`, `partitionValues`); a value may be `null`. */
export type NullableStringMap = Readonly<Record<string, string | null>>

/** A string map whose values are never null (`configuration`, `format.options`). */
export type StringMap = Readonly<Record<string, string>>

/** Where a deletion vector lives: `u` relative UUID file, `i` inline, `p` absolute path. */
export type DeletionVectorStorageType = 'u' | 'i' | 'p'

/** The descriptor of a deletion vector (`add.deletionVector`, `remove.deletionVector`). */
export interface DeletionVectorDescriptor {
  readonly storageType: DeletionVectorStorageType
  readonly pathOrInlineDv: string
  /** Byte offset of the DV's size field in its file; absent for inline DVs. */
  readonly offset?: number
  /** Length of the serialized bitmap (without size prefix and checksum). */
  readonly sizeInBytes: number
  /** Number of deleted rows. */
  readonly cardinality: bigint
  /** Not meant for the log; kept only when a writer put it there. */
  readonly maxRowIndex?: bigint
}

/** `add`: a data file (with an optional deletion vector) that is part of the table. */
export interface AddFile {
  /** URI-encoded path, relative to the table root or absolute; see `decodeAddPath`. */
  readonly path: string
  readonly partitionValues: NullableStringMap
  readonly size: bigint
  readonly modificationTime: bigint
  readonly dataChange: boolean
  /** Per-file statistics as JSON text; see `parseStats`. */
  readonly stats?: string
  readonly tags?: NullableStringMap
  readonly deletionVector?: DeletionVectorDescriptor
  readonly baseRowId?: bigint
  readonly defaultRowCommitVersion?: bigint
  readonly clusteringProvider?: string
}

/** `remove`: a logical file (path plus DV) that left the table. */
export interface RemoveFile {
  readonly path: string
  readonly deletionTimestamp?: bigint
  readonly dataChange: boolean
  readonly extendedFileMetadata?: boolean
  readonly partitionValues?: NullableStringMap
  readonly size?: bigint
  readonly stats?: string
  readonly tags?: NullableStringMap
  readonly deletionVector?: DeletionVectorDescriptor
  readonly baseRowId?: bigint
  readonly defaultRowCommitVersion?: bigint
}

/** The `format` of a table's data files. */
export interface Format {
  readonly provider: string
  readonly options: StringMap
}

/** `metaData`: schema, partitioning and properties of the table. */
export interface Metadata {
  readonly id: string
  readonly name?: string
  readonly description?: string
  readonly format: Format
  /** The JSON schema; absent only in hand-written test logs. See `parseSchema`. */
  readonly schemaString?: string
  readonly partitionColumns: readonly string[]
  readonly configuration: StringMap
  readonly createdTime?: bigint
}

/** `protocol`: the reader and writer versions (and features) the table requires. */
export interface Protocol {
  readonly minReaderVersion: number
  readonly minWriterVersion: number
  readonly readerFeatures?: readonly string[]
  readonly writerFeatures?: readonly string[]
}

/**
 * `commitInfo`: free-form provenance. Every field of the log is kept (engines write arbitrary
 * ones); the known ones are typed. Untyped integers that fit in a safe integer are `number`,
 * larger ones `bigint`.
 */
export interface CommitInfo {
  readonly [key: string]: unknown
  readonly timestamp?: bigint
  readonly inCommitTimestamp?: bigint
  readonly operation?: string
  readonly operationParameters?: Readonly<Record<string, unknown>>
  readonly readVersion?: bigint
  readonly isolationLevel?: string
  readonly isBlindAppend?: boolean
  readonly txnId?: string
}

/** `txn`: the last version an application committed (idempotent writes). */
export interface SetTransaction {
  readonly appId: string
  readonly version: bigint
  readonly lastUpdated?: bigint
}

/** `domainMetadata`: configuration of one named metadata domain. */
export interface DomainMetadata {
  readonly domain: string
  readonly configuration: string
  readonly removed: boolean
}

/** `checkpointMetadata`: the header of a V2 checkpoint. */
export interface CheckpointMetadata {
  readonly version: bigint
  readonly tags?: NullableStringMap
}

/** `sidecar`: a file of a V2 checkpoint holding add/remove actions. */
export interface Sidecar {
  /** Usually a bare file name inside `_delta_log/_sidecars/`. */
  readonly path: string
  readonly sizeInBytes: bigint
  readonly modificationTime: bigint
  readonly tags?: NullableStringMap
}

/** `cdc`: a change-data file written next to a commit. */
export interface AddCdcFile {
  readonly path: string
  readonly partitionValues: NullableStringMap
  readonly size: bigint
  readonly dataChange: boolean
  readonly tags?: NullableStringMap
}

/** The payload type of each action key. */
export interface ActionPayloads {
  readonly add: AddFile
  readonly remove: RemoveFile
  readonly metaData: Metadata
  readonly protocol: Protocol
  readonly commitInfo: CommitInfo
  readonly txn: SetTransaction
  readonly domainMetadata: DomainMetadata
  readonly checkpointMetadata: CheckpointMetadata
  readonly sidecar: Sidecar
  readonly cdc: AddCdcFile
}

/** An action key as it appears in the log. */
export type ActionKind = keyof ActionPayloads

/** One line of a commit file (or one row of a checkpoint): exactly one action key. */
export type Action =
  | { readonly add: AddFile }
  | { readonly remove: RemoveFile }
  | { readonly metaData: Metadata }
  | { readonly protocol: Protocol }
  | { readonly commitInfo: CommitInfo }
  | { readonly txn: SetTransaction }
  | { readonly domainMetadata: DomainMetadata }
  | { readonly checkpointMetadata: CheckpointMetadata }
  | { readonly sidecar: Sidecar }
  | { readonly cdc: AddCdcFile }

/** Every action key, in the order checkpoints list their columns. */
export const ACTION_KINDS: readonly ActionKind[] = Object.freeze([
  'txn',
  'add',
  'remove',
  'metaData',
  'protocol',
  'domainMetadata',
  'checkpointMetadata',
  'sidecar',
  'commitInfo',
  'cdc',
])

const ACTION_KIND_SET: ReadonlySet<string> = new Set(ACTION_KINDS)

/**
 * Whether a string is a known action key.
 *
 * @param key - a JSON key
 * @returns whether it names an action kind this library knows
 */
export function isActionKind(key: string): key is ActionKind {
  return ACTION_KIND_SET.has(key)
}

// === Factories ===

function freezeMap<T extends Readonly<Record<string, unknown>>>(map: T): T {
  if (Object.isFrozen(map)) return map
  return Object.freeze(Object.fromEntries(Object.entries(map))) as T
}

function freezeList<T>(list: readonly T[]): readonly T[] {
  return Object.isFrozen(list) ? list : Object.freeze([...list])
}

/** Copies the defined entries of `fields` (in the given order) into a frozen object. */
function compact<T extends object>(fields: T): T {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) out[k] = v
  return Object.freeze(out) as T
}

function optMap<T extends Readonly<Record<string, unknown>>>(map: T | undefined): T | undefined {
  return map === undefined ? undefined : freezeMap(map)
}

/**
 * Creates a frozen deletion vector descriptor.
 *
 * @param fields - the descriptor's fields
 * @returns a frozen copy in wire order
 */
export function createDeletionVectorDescriptor(fields: DeletionVectorDescriptor): DeletionVectorDescriptor {
  return compact({
    storageType: fields.storageType,
    pathOrInlineDv: fields.pathOrInlineDv,
    offset: fields.offset,
    sizeInBytes: fields.sizeInBytes,
    cardinality: fields.cardinality,
    maxRowIndex: fields.maxRowIndex,
  })
}

function optDv(dv: DeletionVectorDescriptor | undefined): DeletionVectorDescriptor | undefined {
  if (dv === undefined) return undefined
  return Object.isFrozen(dv) ? dv : createDeletionVectorDescriptor(dv)
}

/**
 * Creates a frozen `add` payload.
 *
 * @param fields - the file's fields
 * @returns a frozen copy in wire order
 */
export function createAddFile(fields: AddFile): AddFile {
  const { path, partitionValues, size, modificationTime, dataChange, stats } = fields
  if (
    path !== undefined &&
    partitionValues !== undefined &&
    size !== undefined &&
    modificationTime !== undefined &&
    dataChange !== undefined
  ) {
    // Built as a literal rather than through `compact`: a snapshot holds one of these per live
    // file, and a literal keeps its common fields inside the object (no separate property
    // store) at a fraction of the cost. Key order is the same wire order.
    const out: { -readonly [K in keyof AddFile]: AddFile[K] } =
      stats === undefined
        ? { path, partitionValues: freezeMap(partitionValues), size, modificationTime, dataChange }
        : { path, partitionValues: freezeMap(partitionValues), size, modificationTime, dataChange, stats }
    if (fields.tags !== undefined) out.tags = freezeMap(fields.tags)
    if (fields.deletionVector !== undefined) out.deletionVector = optDv(fields.deletionVector)
    if (fields.baseRowId !== undefined) out.baseRowId = fields.baseRowId
    if (fields.defaultRowCommitVersion !== undefined)
      out.defaultRowCommitVersion = fields.defaultRowCommitVersion
    if (fields.clusteringProvider !== undefined) out.clusteringProvider = fields.clusteringProvider
    return Object.freeze(out)
  }
  // A required field is missing (only a caller outside the type system gets here): drop it as
  // every factory drops undefined fields.
  return compact({
    path: fields.path,
    partitionValues: freezeMap(fields.partitionValues),
    size: fields.size,
    modificationTime: fields.modificationTime,
    dataChange: fields.dataChange,
    stats: fields.stats,
    tags: optMap(fields.tags),
    deletionVector: optDv(fields.deletionVector),
    baseRowId: fields.baseRowId,
    defaultRowCommitVersion: fields.defaultRowCommitVersion,
    clusteringProvider: fields.clusteringProvider,
  })
}

/**
 * Creates a frozen `remove` payload.
 *
 * @param fields - the removed logical file's fields
 * @returns a frozen copy in wire order
 */
export function createRemoveFile(fields: RemoveFile): RemoveFile {
  return compact({
    path: fields.path,
    deletionTimestamp: fields.deletionTimestamp,
    dataChange: fields.dataChange,
    extendedFileMetadata: fields.extendedFileMetadata,
    partitionValues: optMap(fields.partitionValues),
    size: fields.size,
    stats: fields.stats,
    tags: optMap(fields.tags),
    deletionVector: optDv(fields.deletionVector),
    baseRowId: fields.baseRowId,
    defaultRowCommitVersion: fields.defaultRowCommitVersion,
  })
}

/**
 * Creates a frozen `metaData` payload.
 *
 * @param fields - the metadata's fields
 * @returns a frozen copy in wire order
 */
export function createMetadata(fields: Metadata): Metadata {
  return compact({
    id: fields.id,
    name: fields.name,
    description: fields.description,
    format: compact({ provider: fields.format.provider, options: freezeMap(fields.format.options) }),
    schemaString: fields.schemaString,
    partitionColumns: freezeList(fields.partitionColumns),
    configuration: freezeMap(fields.configuration),
    createdTime: fields.createdTime,
  })
}

/**
 * Creates a frozen `protocol` payload.
 *
 * @param fields - the protocol's fields
 * @returns a frozen copy in wire order
 */
export function createProtocol(fields: Protocol): Protocol {
  return compact({
    minReaderVersion: fields.minReaderVersion,
    minWriterVersion: fields.minWriterVersion,
    readerFeatures: fields.readerFeatures === undefined ? undefined : freezeList(fields.readerFeatures),
    writerFeatures: fields.writerFeatures === undefined ? undefined : freezeList(fields.writerFeatures),
  })
}

/**
 * Creates a frozen `commitInfo` payload. Field order is kept as given, so a parsed commitInfo
 * serializes back in its original order.
 *
 * @param fields - the commit's provenance fields
 * @returns a frozen copy
 */
export function createCommitInfo(fields: CommitInfo): CommitInfo {
  return Object.isFrozen(fields) ? fields : compact({ ...fields })
}

/**
 * Creates a frozen `txn` payload.
 *
 * @param fields - the application id and version
 * @returns a frozen copy in wire order
 */
export function createSetTransaction(fields: SetTransaction): SetTransaction {
  return compact({ appId: fields.appId, version: fields.version, lastUpdated: fields.lastUpdated })
}

/**
 * Creates a frozen `domainMetadata` payload.
 *
 * @param fields - the domain, its configuration and whether it is removed
 * @returns a frozen copy in wire order
 */
export function createDomainMetadata(fields: DomainMetadata): DomainMetadata {
  return compact({ domain: fields.domain, configuration: fields.configuration, removed: fields.removed })
}

/**
 * Creates a frozen `checkpointMetadata` payload.
 *
 * @param fields - the checkpoint version and tags
 * @returns a frozen copy in wire order
 */
export function createCheckpointMetadata(fields: CheckpointMetadata): CheckpointMetadata {
  return compact({ version: fields.version, tags: optMap(fields.tags) })
}

/**
 * Creates a frozen `sidecar` payload.
 *
 * @param fields - the sidecar file's fields
 * @returns a frozen copy in wire order
 */
export function createSidecar(fields: Sidecar): Sidecar {
  return compact({
    path: fields.path,
    sizeInBytes: fields.sizeInBytes,
    modificationTime: fields.modificationTime,
    tags: optMap(fields.tags),
  })
}

/**
 * Creates a frozen `cdc` payload.
 *
 * @param fields - the change-data file's fields
 * @returns a frozen copy in wire order
 */
export function createAddCdcFile(fields: AddCdcFile): AddCdcFile {
  return compact({
    path: fields.path,
    partitionValues: freezeMap(fields.partitionValues),
    size: fields.size,
    dataChange: fields.dataChange,
    tags: optMap(fields.tags),
  })
}

const PAYLOAD_FACTORIES: { readonly [K in ActionKind]: (p: ActionPayloads[K]) => ActionPayloads[K] } = {
  add: createAddFile,
  remove: createRemoveFile,
  metaData: createMetadata,
  protocol: createProtocol,
  commitInfo: createCommitInfo,
  txn: createSetTransaction,
  domainMetadata: createDomainMetadata,
  checkpointMetadata: createCheckpointMetadata,
  sidecar: createSidecar,
  cdc: createAddCdcFile,
}

/**
 * Wraps a payload into a frozen action, building the payload with its factory.
 *
 * @param kind - the action key
 * @param payload - the payload's fields
 * @returns `{ [kind]: payload }`, frozen
 */
export function createAction<K extends ActionKind>(kind: K, payload: ActionPayloads[K]): Action {
  const factory = PAYLOAD_FACTORIES[kind] as (p: ActionPayloads[K]) => ActionPayloads[K]
  return Object.freeze({ [kind]: factory(payload) }) as unknown as Action
}

/**
 * The key of an action.
 *
 * @param action - an action
 * @returns its kind
 */
export function actionKind(action: Action): ActionKind {
  for (const key in action) if (isActionKind(key)) return key
  // Actions are only built by this module's factories and parsers, which always set one key.
  return Object.keys(action)[0] as ActionKind
}

// === Type guards ===

/**
 * @param a - an action
 * @returns whether it is an `add`
 */
export function isAdd(a: Action): a is { readonly add: AddFile } {
  return 'add' in a
}

/**
 * @param a - an action
 * @returns whether it is a `remove`
 */
export function isRemove(a: Action): a is { readonly remove: RemoveFile } {
  return 'remove' in a
}

/**
 * @param a - an action
 * @returns whether it is a `metaData`
 */
export function isMetadata(a: Action): a is { readonly metaData: Metadata } {
  return 'metaData' in a
}

/**
 * @param a - an action
 * @returns whether it is a `protocol`
 */
export function isProtocol(a: Action): a is { readonly protocol: Protocol } {
  return 'protocol' in a
}

/**
 * @param a - an action
 * @returns whether it is a `commitInfo`
 */
export function isCommitInfo(a: Action): a is { readonly commitInfo: CommitInfo } {
  return 'commitInfo' in a
}

/**
 * @param a - an action
 * @returns whether it is a `txn`
 */
export function isSetTransaction(a: Action): a is { readonly txn: SetTransaction } {
  return 'txn' in a
}

/**
 * @param a - an action
 * @returns whether it is a `domainMetadata`
 */
export function isDomainMetadata(a: Action): a is { readonly domainMetadata: DomainMetadata } {
  return 'domainMetadata' in a
}

/**
 * @param a - an action
 * @returns whether it is a `checkpointMetadata`
 */
export function isCheckpointMetadata(a: Action): a is { readonly checkpointMetadata: CheckpointMetadata } {
  return 'checkpointMetadata' in a
}

/**
 * @param a - an action
 * @returns whether it is a `sidecar`
 */
export function isSidecar(a: Action): a is { readonly sidecar: Sidecar } {
  return 'sidecar' in a
}

/**
 * @param a - an action
 * @returns whether it is a `cdc`
 */
export function isCdc(a: Action): a is { readonly cdc: AddCdcFile } {
  return 'cdc' in a
}
