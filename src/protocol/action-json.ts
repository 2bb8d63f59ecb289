/**
 * Actions at the boundary: validating decoded JSON lines and checkpoint rows into frozen
 * {@link Action} values, and writing actions back as commit-file JSON.
 *
 * Readers ignore unknown fields and unknown action kinds (protocol.md section 1.1); a known
 * action with a missing or mistyped field is refused with `InvalidTableError('malformed-action')`.
 * 64-bit fields become exact `bigint`s; 32-bit fields become `number`s.
 */
import { InvalidTableError } from '../errors/index.js'
import {
  type Action,
  type ActionKind,
  type ActionPayloads,
  type AddCdcFile,
  type AddFile,
  type CheckpointMetadata,
  type CommitInfo,
  createAddCdcFile,
  createAddFile,
  createCheckpointMetadata,
  createCommitInfo,
  createDeletionVectorDescriptor,
  createDomainMetadata,
  createMetadata,
  createProtocol,
  createRemoveFile,
  createSetTransaction,
  createSidecar,
  type DeletionVectorDescriptor,
  type DomainMetadata,
  isActionKind,
  type Metadata,
  type NullableStringMap,
  type Protocol,
  type RemoveFile,
  type SetTransaction,
  type Sidecar,
} from './actions.js'
import { normalizeJsonValue, parseJsonText, stringifyJson } from './json-text.js'
import {
  type ActionContext,
  describeContext,
  describeValue,
  type FieldScope,
  failField,
  isRawObject,
  optBool,
  optInt,
  optLong,
  optObject,
  optString,
  optStringList,
  optStringMap,
  type RawObject,
  reqBool,
  reqInt,
  reqLong,
  reqNullableStringMap,
  reqString,
} from './raw-fields.js'

export type { ActionContext } from './raw-fields.js'

// === Payload readers ===

function isAllNull(obj: RawObject): boolean {
  for (const k in obj) if (obj[k] !== null && obj[k] !== undefined) return false
  return true
}

function readDeletionVector(obj: RawObject, s: FieldScope): DeletionVectorDescriptor | undefined {
  const raw = optObject(obj, 'deletionVector', s)
  // Parquet decoders may return a null struct as an object whose fields are all null.
  if (raw === undefined || (s.mode === 'checkpoint' && isAllNull(raw))) return undefined
  const d: FieldScope = { ...s, what: `${s.what}.deletionVector` }
  const storageType = reqString(raw, 'storageType', d)
  if (storageType !== 'u' && storageType !== 'i' && storageType !== 'p') {
    return failField(d, 'storageType', `must be 'u', 'i' or 'p', got ${describeValue(storageType)}`)
  }
  return createDeletionVectorDescriptor({
    storageType,
    pathOrInlineDv: reqString(raw, 'pathOrInlineDv', d),
    offset: optInt(raw, 'offset', d),
    sizeInBytes: reqInt(raw, 'sizeInBytes', d),
    cardinality: reqLong(raw, 'cardinality', d),
    maxRowIndex: optLong(raw, 'maxRowIndex', d),
  })
}

/** The one frozen empty map every unpartitioned file shares. */
const NO_PARTITION_VALUES: NullableStringMap = Object.freeze({})

/**
 * Frozen partition-value maps already read, by their entries: the files of one partition share
 * one object instead of holding a copy each (a snapshot keeps one map per live file). Bounded;
 * emptied when full. Sharing is safe because the maps are frozen values.
 */
const partitionValuesSeen = new Map<string, NullableStringMap>()
const PARTITION_VALUES_SEEN_MAX = 4096

/**
 * Reads `partitionValues` as {@link optStringMap} does, returning a shared map for entries read
 * before.
 */
function readPartitionValues(o: RawObject, s: FieldScope): NullableStringMap | undefined {
  const raw = o.partitionValues
  if (isRawObject(raw)) {
    const keys = Object.keys(raw)
    if (keys.length === 0) return NO_PARTITION_VALUES
    let id = ''
    for (const k of keys) {
      const v = raw[k]
      // Anything else is left to optStringMap, which accepts or refuses it with its own message.
      if (typeof v === 'string') id += `${k.length}:${k}=${v.length}:${v};`
      else if (v === null) id += `${k.length}:${k}!;`
      else return optStringMap(o, 'partitionValues', s, true)
    }
    const seen = partitionValuesSeen.get(id)
    if (seen !== undefined) return seen
    const map = optStringMap(o, 'partitionValues', s, true)
    if (map === undefined) return map
    if (partitionValuesSeen.size >= PARTITION_VALUES_SEEN_MAX) partitionValuesSeen.clear()
    partitionValuesSeen.set(id, map)
    return map
  }
  return optStringMap(o, 'partitionValues', s, true)
}

function readAdd(o: RawObject, s: FieldScope): AddFile {
  return createAddFile({
    path: reqString(o, 'path', s),
    partitionValues: readPartitionValues(o, s) ?? failField(s, 'partitionValues', 'is required but missing'),
    size: reqLong(o, 'size', s),
    modificationTime: reqLong(o, 'modificationTime', s),
    dataChange: reqBool(o, 'dataChange', s),
    stats: optString(o, 'stats', s),
    tags: optStringMap(o, 'tags', s, true),
    deletionVector: readDeletionVector(o, s),
    baseRowId: optLong(o, 'baseRowId', s),
    defaultRowCommitVersion: optLong(o, 'defaultRowCommitVersion', s),
    clusteringProvider: optString(o, 'clusteringProvider', s),
  })
}

function readRemove(o: RawObject, s: FieldScope): RemoveFile {
  return createRemoveFile({
    path: reqString(o, 'path', s),
    deletionTimestamp: optLong(o, 'deletionTimestamp', s),
    dataChange: reqBool(o, 'dataChange', s),
    extendedFileMetadata: optBool(o, 'extendedFileMetadata', s),
    partitionValues: readPartitionValues(o, s),
    size: optLong(o, 'size', s),
    stats: optString(o, 'stats', s),
    tags: optStringMap(o, 'tags', s, true),
    deletionVector: readDeletionVector(o, s),
    baseRowId: optLong(o, 'baseRowId', s),
    defaultRowCommitVersion: optLong(o, 'defaultRowCommitVersion', s),
  })
}

function readMetadata(o: RawObject, s: FieldScope): Metadata {
  const format = optObject(o, 'format', s)
  if (format === undefined) return failField(s, 'format', 'is required but missing')
  const f: FieldScope = { ...s, what: `${s.what}.format` }
  const partitionColumns = optStringList(o, 'partitionColumns', s)
  if (partitionColumns === undefined) return failField(s, 'partitionColumns', 'is required but missing')
  return createMetadata({
    id: reqString(o, 'id', s),
    name: optString(o, 'name', s),
    description: optString(o, 'description', s),
    format: {
      provider: reqString(format, 'provider', f),
      options: optStringMap(format, 'options', f, false) ?? {},
    },
    schemaString: optString(o, 'schemaString', s),
    partitionColumns,
    configuration: optStringMap(o, 'configuration', s, false) ?? {},
    createdTime: optLong(o, 'createdTime', s),
  })
}

function readProtocol(o: RawObject, s: FieldScope): Protocol {
  return createProtocol({
    minReaderVersion: reqInt(o, 'minReaderVersion', s),
    minWriterVersion: reqInt(o, 'minWriterVersion', s),
    readerFeatures: optStringList(o, 'readerFeatures', s),
    writerFeatures: optStringList(o, 'writerFeatures', s),
  })
}

const COMMIT_INFO_LONGS: ReadonlySet<string> = new Set(['timestamp', 'inCommitTimestamp', 'readVersion'])
const COMMIT_INFO_STRINGS: ReadonlySet<string> = new Set(['operation', 'isolationLevel', 'txnId'])

function readCommitInfo(o: RawObject, s: FieldScope): CommitInfo {
  const entries: [string, unknown][] = []
  for (const key of Object.keys(o)) {
    let value: unknown
    if (COMMIT_INFO_LONGS.has(key)) value = optLong(o, key, s)
    else if (COMMIT_INFO_STRINGS.has(key)) value = optString(o, key, s)
    else if (key === 'isBlindAppend') value = optBool(o, key, s)
    else if (key === 'operationParameters') {
      const params = optObject(o, key, s)
      value = params === undefined ? undefined : normalizeJsonValue(params)
      if (params !== undefined && value === undefined)
        return failField(s, key, 'holds a value JSON cannot represent')
    } else {
      const raw = o[key]
      if (raw === undefined) continue
      value = normalizeJsonValue(raw)
      if (value === undefined)
        return failField(s, key, `holds a value JSON cannot represent: ${describeValue(raw)}`)
    }
    if (value !== undefined) entries.push([key, value])
  }
  return createCommitInfo(Object.freeze(Object.fromEntries(entries)) as CommitInfo)
}

function readSetTransaction(o: RawObject, s: FieldScope): SetTransaction {
  return createSetTransaction({
    appId: reqString(o, 'appId', s),
    version: reqLong(o, 'version', s),
    lastUpdated: optLong(o, 'lastUpdated', s),
  })
}

function readDomainMetadata(o: RawObject, s: FieldScope): DomainMetadata {
  return createDomainMetadata({
    domain: reqString(o, 'domain', s),
    configuration: reqString(o, 'configuration', s),
    removed: reqBool(o, 'removed', s),
  })
}

function readCheckpointMetadata(o: RawObject, s: FieldScope): CheckpointMetadata {
  return createCheckpointMetadata({
    version: reqLong(o, 'version', s),
    tags: optStringMap(o, 'tags', s, true),
  })
}

function readSidecar(o: RawObject, s: FieldScope): Sidecar {
  return createSidecar({
    path: reqString(o, 'path', s),
    sizeInBytes: reqLong(o, 'sizeInBytes', s),
    modificationTime: reqLong(o, 'modificationTime', s),
    tags: optStringMap(o, 'tags', s, true),
  })
}

function readCdc(o: RawObject, s: FieldScope): AddCdcFile {
  return createAddCdcFile({
    path: reqString(o, 'path', s),
    partitionValues: reqNullableStringMap(o, 'partitionValues', s),
    size: reqLong(o, 'size', s),
    dataChange: reqBool(o, 'dataChange', s),
    tags: optStringMap(o, 'tags', s, true),
  })
}

const READERS: { readonly [K in ActionKind]: (o: RawObject, s: FieldScope) => ActionPayloads[K] } = {
  add: readAdd,
  remove: readRemove,
  metaData: readMetadata,
  protocol: readProtocol,
  commitInfo: readCommitInfo,
  txn: readSetTransaction,
  domainMetadata: readDomainMetadata,
  checkpointMetadata: readCheckpointMetadata,
  sidecar: readSidecar,
  cdc: readCdc,
}

function malformedShape(ctx: ActionContext, problem: string): never {
  throw new InvalidTableError('malformed-action', `Malformed action${describeContext(ctx)}: ${problem}`, {
    path: ctx.path,
    version: ctx.version,
    hint: 'Each log entry must be an object with exactly one action key (add, remove, metaData, ...).',
  })
}

function readAction(raw: unknown, ctx: ActionContext, mode: FieldScope['mode']): Action | undefined {
  if (!isRawObject(raw)) return malformedShape(ctx, `expected an object, got ${describeValue(raw)}`)
  let kind: ActionKind | undefined
  let payload: unknown
  let unknownKeys = 0
  for (const key of Object.keys(raw)) {
    const value = raw[key]
    if (value === null || value === undefined) continue
    if (!isActionKind(key)) {
      unknownKeys++
      continue
    }
    if (mode === 'checkpoint' && isRawObject(value) && isAllNull(value)) continue
    if (kind !== undefined) return malformedShape(ctx, `it holds two actions, '${kind}' and '${key}'`)
    kind = key
    payload = value
  }
  if (kind === undefined) {
    // An object holding only action kinds this library does not know is a newer protocol's
    // action, which readers must ignore. A checkpoint row may also be entirely null.
    if (unknownKeys > 0 || mode === 'checkpoint') return undefined
    return malformedShape(ctx, 'it holds no action')
  }
  const scope: FieldScope = { what: kind, ctx, mode }
  if (!isRawObject(payload)) return failField(scope, kind, `must be an object, got ${describeValue(payload)}`)
  const read = READERS[kind] as (o: RawObject, s: FieldScope) => ActionPayloads[ActionKind]
  return Object.freeze({ [kind]: read(payload, scope) }) as unknown as Action
}

// === Public API ===

/**
 * Validates one decoded commit-file line into an action.
 *
 * Integers may be JS numbers only when they are safe integers; anything larger must arrive as a
 * `bigint` or as a lossless-json `LosslessNumber` (use {@link parseCommitFile} for raw text).
 *
 * @param raw - one decoded JSON object
 * @param ctx - where it came from, for error messages
 * @returns the frozen action, or `undefined` for an action kind this library does not know
 * @throws {InvalidTableError} `malformed-action` when the object is not exactly one well-formed
 *   action
 */
export function parseAction(raw: unknown, ctx: ActionContext = {}): Action | undefined {
  return readAction(raw, ctx, 'json')
}

/**
 * Validates a deletion-vector descriptor decoded from JSON, shaped as `add.deletionVector` (used
 * where a descriptor is carried outside an action, such as in a tag).
 *
 * @param raw - the decoded descriptor object
 * @param ctx - where it came from, for error messages
 * @returns the frozen descriptor
 * @throws {InvalidTableError} `malformed-action` when it is not a well-formed descriptor
 */
export function parseDeletionVectorDescriptor(
  raw: unknown,
  ctx: ActionContext = {},
): DeletionVectorDescriptor {
  const scope: FieldScope = { what: 'descriptor', ctx, mode: 'json' }
  const dv = readDeletionVector({ deletionVector: raw }, scope)
  return dv ?? failField(scope, 'deletionVector', 'is required but missing')
}

/**
 * Validates one row of a checkpoint into an action. The row has one column per action kind
 * (`{ add: {...}, remove: null, metaData: null, ... }`) with at most one non-null; integers may be
 * `bigint`, `number` or numeric strings, and maps plain objects, `Map`s or entry lists, as
 * Parquet decoders produce them. Extra columns such as `add.stats_parsed` are ignored.
 *
 * @param row - one decoded checkpoint row
 * @param ctx - the checkpoint file and version, for error messages
 * @returns the frozen action, or `undefined` when the row holds no known action
 * @throws {InvalidTableError} `malformed-action` when the row holds two actions or a malformed one
 */
export function parseCheckpointRow(
  row: Readonly<Record<string, unknown>>,
  ctx: ActionContext = {},
): Action | undefined {
  return readAction(row, ctx, 'checkpoint')
}

/**
 * Parses a commit file (newline-delimited JSON, one action per line). Blank lines are skipped;
 * unknown action kinds are dropped. 64-bit integers are exact.
 *
 * @param text - the file's content
 * @param ctx - the file and version, for error messages
 * @returns the actions in file order
 * @throws {InvalidTableError} `malformed-commit` when a line is not JSON (e.g. truncated),
 *   `malformed-action` when a line is not a well-formed action; both name the line
 */
export function parseCommitFile(text: string, ctx: ActionContext = {}): Action[] {
  const out: Action[] = []
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i] as string
    if (i === 0 && line.charCodeAt(0) === 0xfeff) line = line.slice(1)
    if (line.trim() === '') continue
    const lineCtx: ActionContext = { path: ctx.path, version: ctx.version, line: i + 1 }
    const action = readAction(parseCommitLine(line, lineCtx), lineCtx, 'json')
    if (action !== undefined) out.push(action)
  }
  return out
}

/**
 * Decodes one line of a commit file as JSON (64-bit integers exact), the one place that turns a
 * line that is not JSON into the commit file's error.
 *
 * @param line - the line's text, without its newline
 * @param ctx - the file, version and line, for the error message
 * @returns the decoded value
 * @throws {InvalidTableError} `malformed-commit` naming the line
 */
export function parseCommitLine(line: string, ctx: ActionContext): unknown {
  try {
    return parseJsonText(line)
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause)
    throw new InvalidTableError(
      'malformed-commit',
      `Commit file${describeContext(ctx)} is not valid JSON: ${reason}`,
      {
        path: ctx.path,
        version: ctx.version,
        cause,
        hint: 'The commit file is truncated or corrupt; restore it from a backup or rewrite the table.',
      },
    )
  }
}

/**
 * Serializes one action as a single JSON line (without the newline). 64-bit integers are
 * written exactly; absent optional fields are omitted; null partition values stay `null`.
 *
 * @param action - an action
 * @returns its JSON text
 * @throws {InvalidArgumentError} when the action holds a value JSON cannot represent
 */
export function serializeAction(action: Action): string {
  return stringifyJson(action)
}

/**
 * Serializes actions as a commit file: one JSON line per action, each ending in a newline.
 * `parseCommitFile(serializeCommit(actions))` deep-equals `actions`.
 *
 * @param actions - the commit's actions, in the order to write them
 * @returns the file content
 * @throws {InvalidArgumentError} when an action holds a value JSON cannot represent
 */
export function serializeCommit(actions: readonly Action[]): string {
  let out = ''
  for (const a of actions) out += `${serializeAction(a)}\n`
  return out
}
