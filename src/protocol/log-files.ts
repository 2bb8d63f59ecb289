/**
 * Names of the files in `_delta_log/` (protocol.md section 1), the `_last_checkpoint` hint, and
 * commit files read from their bytes.
 *
 * Names are matched with anchored patterns, so Hadoop side files (`.00000000000000000003.json.crc`)
 * and anything else unknown are not mistaken for log files.
 */
import { InvalidArgumentError, UnsupportedError } from '../errors/index.js'
import { type ActionContext, parseAction, parseCommitLine } from './action-json.js'
import type { Action, Sidecar, Version } from './actions.js'
import { type JsonValue, normalizeJsonValue, parseJsonText, stringifyJson } from './json-text.js'
import { describeContext, isRawObject, type RawObject } from './raw-fields.js'

/** The log directory, relative to the table root, with its trailing slash. */
export const LOG_DIR = '_delta_log/'

/** Where V2 checkpoint sidecars live, relative to the table root. */
export const SIDECAR_DIR = '_delta_log/_sidecars/'

/** The name of the checkpoint hint file inside the log directory. */
export const LAST_CHECKPOINT_FILE = '_last_checkpoint'

/** A classified log file name. `version` is the table version the file describes. */
export type LogFileName =
  | { readonly type: 'commit'; readonly name: string; readonly version: Version }
  /** `n.checkpoint.parquet`: a single-file checkpoint (V1 content, or V2 content with `v2Checkpoint`). */
  | { readonly type: 'checkpoint'; readonly name: string; readonly version: Version }
  | {
      readonly type: 'multi-part-checkpoint'
      readonly name: string
      readonly version: Version
      /** 1-based part number. */
      readonly part: number
      readonly parts: number
    }
  | {
      readonly type: 'v2-checkpoint'
      readonly name: string
      readonly version: Version
      readonly uuid: string
      readonly format: 'json' | 'parquet'
    }
  /** `x.y.compacted.json`: reconciled actions of commits x..y; `version` is y. */
  | {
      readonly type: 'compacted'
      readonly name: string
      readonly version: Version
      readonly startVersion: Version
    }
  /** `n.crc`: the version checksum file. */
  | { readonly type: 'checksum'; readonly name: string; readonly version: Version }
  | { readonly type: 'last-checkpoint'; readonly name: string; readonly version?: undefined }

const COMMIT = /^(\d{20})\.json$/
const CLASSIC_CHECKPOINT = /^(\d{20})\.checkpoint\.parquet$/
const MULTI_PART_CHECKPOINT = /^(\d{20})\.checkpoint\.(\d{10})\.(\d{10})\.parquet$/
const V2_CHECKPOINT = /^(\d{20})\.checkpoint\.([0-9a-f-]{36})\.(json|parquet)$/
const COMPACTED = /^(\d{20})\.(\d{20})\.compacted\.json$/
const CHECKSUM = /^(\d{20})\.crc$/

/**
 * Classifies a file name found directly inside `_delta_log/`.
 *
 * @param name - the bare file name (no directory part)
 * @returns its classification, or `undefined` for anything that is not a Delta log file (hidden
 *   `.crc` side files, temp files, names with a directory part)
 */
export function parseLogFileName(name: string): LogFileName | undefined {
  let m = COMMIT.exec(name)
  if (m) return Object.freeze({ type: 'commit', name, version: BigInt(m[1] as string) })
  m = CLASSIC_CHECKPOINT.exec(name)
  if (m) return Object.freeze({ type: 'checkpoint', name, version: BigInt(m[1] as string) })
  m = MULTI_PART_CHECKPOINT.exec(name)
  if (m) {
    const part = Number(m[2])
    const parts = Number(m[3])
    if (part < 1 || part > parts) return undefined
    return Object.freeze({
      type: 'multi-part-checkpoint',
      name,
      version: BigInt(m[1] as string),
      part,
      parts,
    })
  }
  m = V2_CHECKPOINT.exec(name)
  if (m) {
    return Object.freeze({
      type: 'v2-checkpoint',
      name,
      version: BigInt(m[1] as string),
      uuid: m[2] as string,
      format: m[3] as 'json' | 'parquet',
    })
  }
  m = COMPACTED.exec(name)
  if (m) {
    const startVersion = BigInt(m[1] as string)
    const version = BigInt(m[2] as string)
    if (version <= startVersion) return undefined
    return Object.freeze({ type: 'compacted', name, version, startVersion })
  }
  m = CHECKSUM.exec(name)
  if (m) return Object.freeze({ type: 'checksum', name, version: BigInt(m[1] as string) })
  if (name === LAST_CHECKPOINT_FILE) return Object.freeze({ type: 'last-checkpoint', name })
  return undefined
}

/**
 * Whether a classified name is a checkpoint file of any kind (not the hint).
 *
 * @param f - a classified name
 * @returns whether it is a classic, multi-part or V2 checkpoint file
 */
export function isCheckpointFileName(
  f: LogFileName,
): f is Extract<LogFileName, { type: 'checkpoint' | 'multi-part-checkpoint' | 'v2-checkpoint' }> {
  return f.type === 'checkpoint' || f.type === 'multi-part-checkpoint' || f.type === 'v2-checkpoint'
}

const VERSION_LIMIT = 10n ** 20n

function pad20(version: Version, what: string): string {
  if (typeof version !== 'bigint' || version < 0n || version >= VERSION_LIMIT) {
    throw new InvalidArgumentError(
      `Invalid ${what} version ${String(version)}: expected a bigint in 0..10^20-1`,
      {
        argument: 'version',
      },
    )
  }
  return version.toString().padStart(20, '0')
}

/** The largest part number or part count a multi-part checkpoint file name can carry (10 digits). */
export const MAX_CHECKPOINT_PARTS = 9_999_999_999

function pad10(n: number, what: string): string {
  if (!Number.isSafeInteger(n) || n < 1 || n > MAX_CHECKPOINT_PARTS) {
    throw new InvalidArgumentError(`Invalid checkpoint ${what} ${n}: expected an integer in 1..9999999999`, {
      argument: what,
    })
  }
  return String(n).padStart(10, '0')
}

/**
 * The bare file name of a commit, e.g. `00000000000000000003.json`.
 *
 * @param version - the commit version
 * @returns the file name (prefix with {@link LOG_DIR} for a store key)
 * @throws {InvalidArgumentError} when the version is negative or too large
 */
export function commitFileName(version: Version): string {
  return `${pad20(version, 'commit')}.json`
}

/**
 * The bare file name of a classic single-file checkpoint, e.g. `00000000000000000010.checkpoint.parquet`.
 *
 * @param version - the checkpoint version
 * @returns the file name
 * @throws {InvalidArgumentError} when the version is negative or too large
 */
export function checkpointFileName(version: Version): string {
  return `${pad20(version, 'checkpoint')}.checkpoint.parquet`
}

/**
 * The bare file name of one part of a multi-part checkpoint.
 *
 * @param version - the checkpoint version
 * @param part - 1-based part number
 * @param parts - number of parts
 * @returns the file name
 * @throws {InvalidArgumentError} when a number is out of range
 */
export function multiPartCheckpointFileName(version: Version, part: number, parts: number): string {
  if (part > parts) {
    throw new InvalidArgumentError(`Checkpoint part ${part} is beyond the ${parts} parts`, {
      argument: 'part',
    })
  }
  return `${pad20(version, 'checkpoint')}.checkpoint.${pad10(part, 'part')}.${pad10(parts, 'parts')}.parquet`
}

/**
 * The bare file name of a UUID-named V2 checkpoint.
 *
 * @param version - the checkpoint version
 * @param uuid - a lowercase hyphenated UUID
 * @param format - `json` or `parquet`
 * @returns the file name
 * @throws {InvalidArgumentError} when the version or UUID is malformed
 */
export function v2CheckpointFileName(version: Version, uuid: string, format: 'json' | 'parquet'): string {
  if (!/^[0-9a-f-]{36}$/.test(uuid)) {
    throw new InvalidArgumentError(
      `Invalid checkpoint UUID '${uuid}': expected 36 lowercase hex digits and dashes`,
      {
        argument: 'uuid',
      },
    )
  }
  return `${pad20(version, 'checkpoint')}.checkpoint.${uuid}.${format}`
}

/**
 * The bare file name of a version checksum file, e.g. `00000000000000000003.crc`.
 *
 * @param version - the version it describes
 * @returns the file name
 * @throws {InvalidArgumentError} when the version is negative or too large
 */
export function checksumFileName(version: Version): string {
  return `${pad20(version, 'checksum')}.crc`
}

/**
 * The bare file name of a log compaction of commits `start..end`.
 *
 * @param start - first version covered
 * @param end - last version covered, greater than `start`
 * @returns the file name
 * @throws {InvalidArgumentError} when the range is empty or a version is out of range
 */
export function compactedFileName(start: Version, end: Version): string {
  if (end <= start) {
    throw new InvalidArgumentError(
      `Invalid log compaction range ${start}..${end}: the end must be after the start`,
      {
        argument: 'end',
      },
    )
  }
  return `${pad20(start, 'compaction')}.${pad20(end, 'compaction')}.compacted.json`
}

/**
 * The store key of a commit, e.g. `_delta_log/00000000000000000003.json`.
 *
 * @param version - the commit version
 * @returns the key relative to the table root
 * @throws {InvalidArgumentError} when the version is negative or too large
 */
export function commitKey(version: Version): string {
  return LOG_DIR + commitFileName(version)
}

// === Commit files ===

/**
 * The longest line a commit file may hold, in bytes: the longest string V8 can build (2^29 - 24
 * UTF-16 units; UTF-8 never takes fewer bytes than units, so a line this long always decodes).
 */
export const MAX_COMMIT_LINE_BYTES = 2 ** 29 - 24

const NEWLINE = 0x0a

/**
 * Parses a commit file (newline-delimited JSON, one action per line) from its bytes. Each line is
 * decoded on its own, so a file far larger than the longest string the runtime can hold (512 MiB)
 * is read as long as each of its lines fits. Blank lines are skipped; a leading byte-order mark is
 * dropped; unknown action kinds are dropped; 64-bit integers are exact.
 *
 * @param bytes - the file's content
 * @param ctx - the file and version, for error messages
 * @returns the actions in file order
 * @throws {InvalidTableError} `malformed-commit` when a line is not JSON (e.g. truncated),
 *   `malformed-action` when a line is not a well-formed action; both name the line
 * @throws {UnsupportedError} when a single line is longer than {@link MAX_COMMIT_LINE_BYTES}
 */
export function parseCommitBytes(bytes: Uint8Array, ctx: ActionContext = {}): Action[] {
  const out: Action[] = []
  for (const { text, line } of commitLines(bytes, ctx)) {
    const lineCtx: ActionContext = { path: ctx.path, version: ctx.version, line }
    const action = parseAction(parseCommitLine(text, lineCtx), lineCtx)
    if (action !== undefined) out.push(action)
  }
  return out
}

/**
 * The first action of a commit file, read from a prefix of its bytes: what In-Commit Timestamps
 * need (`commitInfo` comes first when they are enabled) without decoding the rest of the file.
 *
 * @param prefix - the file's first bytes (the whole file, or a range read of its start)
 * @param complete - whether `prefix` is the whole file
 * @param ctx - the file and version, for error messages
 * @returns the first action; `undefined` when the file holds none, or when `prefix` ends before
 *   the first non-blank line does (read more and call again)
 * @throws {InvalidTableError} when the first line is not a well-formed action
 */
export function parseFirstCommitAction(
  prefix: Uint8Array,
  complete: boolean,
  ctx: ActionContext = {},
): { readonly action: Action | undefined; readonly found: boolean } {
  for (const { text, line, terminated } of commitLines(prefix, ctx)) {
    if (!terminated && !complete) return { action: undefined, found: false }
    const lineCtx: ActionContext = { path: ctx.path, version: ctx.version, line }
    return { action: parseAction(parseCommitLine(text, lineCtx), lineCtx), found: true }
  }
  return { action: undefined, found: complete }
}

/** The non-blank lines of a commit file, decoded one at a time. */
function* commitLines(
  bytes: Uint8Array,
  ctx: ActionContext,
): Generator<{ text: string; line: number; terminated: boolean }> {
  // One decoder per file, told to keep a byte-order mark: only the file's first one is dropped.
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true })
  let start = 0
  let line = 0
  while (start < bytes.length) {
    line++
    const nl = bytes.indexOf(NEWLINE, start)
    const end = nl === -1 ? bytes.length : nl
    if (end - start > MAX_COMMIT_LINE_BYTES) {
      throw new UnsupportedError(
        `Commit file${describeContext({ ...ctx, line })} has a line of ${end - start} bytes; lines longer than ${MAX_COMMIT_LINE_BYTES} bytes cannot be read`,
        {
          hint: 'One action of this commit is larger than a JavaScript string can hold; read the table with an engine without that limit, or rewrite the commit.',
        },
      )
    }
    let text = decoder.decode(bytes.subarray(start, end))
    if (line === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1)
    start = end + 1
    if (text.trim() !== '') yield { text, line, terminated: nl !== -1 }
  }
}

// === _last_checkpoint ===

/** The V2 checkpoint summary Spark embeds in `_last_checkpoint`. */
export interface LastCheckpointV2Info {
  /** Bare file name of the top-level V2 checkpoint file. */
  readonly path: string
  readonly sizeInBytes: number
  readonly modificationTime: number
  readonly nonFileActions?: readonly Action[]
  readonly sidecarFiles?: readonly Sidecar[]
}

/**
 * The `_last_checkpoint` hint. Only a hint: it may be stale or point at a checkpoint that is
 * gone or incomplete, so readers confirm it against the listing.
 */
export interface LastCheckpoint {
  readonly version: Version
  /** Number of actions in the checkpoint. */
  readonly size?: number
  /** Number of parts of a multi-part checkpoint. */
  readonly parts?: number
  readonly sizeInBytes?: number
  readonly numOfAddFiles?: number
  readonly checkpointSchema?: JsonValue
  readonly tags?: Readonly<Record<string, string>>
  readonly v2Checkpoint?: LastCheckpointV2Info
  /** MD5 over the canonical JSON; carried, not verified (the hint is checked against the listing). */
  readonly checksum?: string
}

function safeInt(obj: RawObject, key: string): number | undefined | null {
  const v = normalizeJsonValue(obj[key])
  if (v === undefined || v === null) return undefined
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : null
}

function readV2Info(raw: unknown): LastCheckpointV2Info | undefined | null {
  if (raw === undefined || raw === null) return undefined
  if (!isRawObject(raw) || typeof raw.path !== 'string') return null
  const sizeInBytes = safeInt(raw, 'sizeInBytes')
  const modificationTime = safeInt(raw, 'modificationTime')
  if (sizeInBytes == null || modificationTime == null) return null
  const lists: { nonFileActions?: readonly Action[]; sidecarFiles?: readonly Sidecar[] } = {}
  try {
    if (Array.isArray(raw.nonFileActions)) {
      lists.nonFileActions = Object.freeze(
        raw.nonFileActions.map((a) => parseAction(a)).filter((a): a is Action => a !== undefined),
      )
    }
    if (Array.isArray(raw.sidecarFiles)) {
      const sidecars: Sidecar[] = []
      for (const s of raw.sidecarFiles) {
        const a = parseAction({ sidecar: s })
        if (a !== undefined && 'sidecar' in a) sidecars.push(a.sidecar)
      }
      lists.sidecarFiles = Object.freeze(sidecars)
    }
  } catch {
    return null
  }
  return Object.freeze({ path: raw.path, sizeInBytes, modificationTime, ...lists })
}

/**
 * Parses the `_last_checkpoint` hint. Never throws: an empty, truncated or ill-typed file, a
 * version that is negative, fractional or wider than a log file name's 20 digits, or a part count
 * outside the 1 to 9,999,999,999 a file name can carry, gives `undefined`, and the reader falls
 * back to listing the log.
 *
 * @param text - the file's content
 * @returns the hint, or `undefined` when it is unusable
 */
export function parseLastCheckpoint(text: string): LastCheckpoint | undefined {
  let raw: unknown
  try {
    raw = parseJsonText(text)
  } catch {
    return undefined
  }
  if (!isRawObject(raw)) return undefined
  const version = normalizeJsonValue(raw.version)
  if ((typeof version !== 'number' || !Number.isSafeInteger(version)) && typeof version !== 'bigint')
    return undefined
  // A version no log file name can carry (20 digits) is as untrustworthy as a negative one.
  if (version < 0 || BigInt(version) >= VERSION_LIMIT) return undefined
  const size = safeInt(raw, 'size')
  const parts = safeInt(raw, 'parts')
  const sizeInBytes = safeInt(raw, 'sizeInBytes')
  const numOfAddFiles = safeInt(raw, 'numOfAddFiles')
  if (size === null || parts === null || sizeInBytes === null || numOfAddFiles === null) return undefined
  // A part count no checkpoint file name can carry (10 digits, from 1) names no real checkpoint.
  if (parts !== undefined && (parts < 1 || parts > MAX_CHECKPOINT_PARTS)) return undefined
  const v2Checkpoint = readV2Info(raw.v2Checkpoint)
  if (v2Checkpoint === null) return undefined
  let tags: Readonly<Record<string, string>> | undefined
  if (isRawObject(raw.tags)) {
    const entries = Object.entries(raw.tags).filter((e): e is [string, string] => typeof e[1] === 'string')
    tags = Object.freeze(Object.fromEntries(entries))
  }
  const checkpointSchema = raw.checkpointSchema == null ? undefined : normalizeJsonValue(raw.checkpointSchema)
  const out: Record<string, unknown> = {
    version: BigInt(version),
    size,
    parts,
    sizeInBytes,
    numOfAddFiles,
    checkpointSchema,
    tags,
    v2Checkpoint,
    checksum: typeof raw.checksum === 'string' ? raw.checksum : undefined,
  }
  for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k]
  return Object.freeze(out) as unknown as LastCheckpoint
}

/**
 * Serializes the `_last_checkpoint` hint as one JSON object.
 *
 * @param hint - the checkpoint summary
 * @returns the file content
 * @throws {InvalidArgumentError} when the hint holds a value JSON cannot represent
 */
export function serializeLastCheckpoint(hint: LastCheckpoint): string {
  const v2 = hint.v2Checkpoint
  return stringifyJson({
    version: hint.version,
    size: hint.size,
    parts: hint.parts,
    sizeInBytes: hint.sizeInBytes,
    numOfAddFiles: hint.numOfAddFiles,
    checkpointSchema: hint.checkpointSchema,
    tags: hint.tags,
    v2Checkpoint:
      v2 === undefined
        ? undefined
        : {
            path: v2.path,
            sizeInBytes: v2.sizeInBytes,
            modificationTime: v2.modificationTime,
            nonFileActions: v2.nonFileActions,
            sidecarFiles: v2.sidecarFiles,
          },
    checksum: hint.checksum,
  })
}
