/**
 * The Parquet side of a checkpoint: its parts and V2 sidecars read into actions.
 *
 * Rows arrive from the engine in batches and each batch is parsed before the next is read, so a
 * checkpoint of a million files is never held whole as text: what stays is the actions. A row's
 * null fields are left in place (the action readers take a null as an absent field), which
 * spares a copy of every row.
 */
import { parse as parseLossless } from 'lossless-json'
import type { ActionRow, Engine } from '../engine/engine.js'
import { FileNotFoundError, InvalidTableError } from '../errors/index.js'
import { type ActionContext, parseCheckpointRow } from '../protocol/action-json.js'
import type { Action, Version } from '../protocol/actions.js'
import { SIDECAR_DIR } from '../protocol/log-files.js'
import { type DeferredCheckpointRow, needsSchema, parseDeferredRows } from './checkpoint-parsed-rows.js'
import { decodedFileAction, NOT_DECODED } from './decoded-file-actions.js'

/** Where decoded actions go, one at a time. */
export interface ActionSink {
  push(action: Action): unknown
}

/** How many actions a {@link CheckpointActionSink} hands on at once. */
const SINK_BATCH = 4096

/**
 * The actions of a checkpoint on their way to the replay: handed on in batches as they are
 * decoded, so that a checkpoint's rows are never all held at once (a checkpoint of one action
 * repeated costs one action, not one per row). It keeps what the rest of the read needs: the
 * sidecars named, and the protocol and metadata that type deferred rows.
 */
export class CheckpointActionSink implements ActionSink {
  readonly #onBatch: (actions: readonly Action[]) => void
  #buffer: Action[] = []
  #handedOn = false
  /** Store keys of the sidecars the actions name. */
  readonly sidecarKeys: string[] = []
  /** The protocol and metadata actions seen. */
  readonly tableActions: Action[] = []

  /** @param onBatch - receives the actions, in order, a batch at a time */
  constructor(onBatch: (actions: readonly Action[]) => void) {
    this.#onBatch = onBatch
  }

  push(action: Action): void {
    if ('sidecar' in action) this.sidecarKeys.push(`${SIDECAR_DIR}${action.sidecar.path}`)
    else if ('metaData' in action || 'protocol' in action) this.tableActions.push(action)
    this.#buffer.push(action)
    if (this.#buffer.length >= SINK_BATCH) this.flush()
  }

  /** Hands on what is buffered (an empty batch if nothing was ever handed on). */
  flush(): void {
    if (this.#buffer.length === 0 && this.#handedOn) return
    const batch = this.#buffer
    this.#buffer = []
    this.#handedOn = true
    this.#onBatch(batch)
  }
}

/**
 * Reads the Parquet files of a checkpoint, then the sidecars its actions name, and pushes their
 * actions to `actions` (which already took the actions of its JSON part, if any: a V2 checkpoint
 * in JSON names its sidecars there).
 *
 * @param engine - the engine whose Parquet handler reads the files
 * @param parquetKeys - store keys of the checkpoint's Parquet files (parts, or the V2 top file)
 * @param version - the checkpoint version, for messages
 * @param actions - where this file's actions go, in row order
 * @param signal - aborts the read
 * @throws {InvalidTableError} `invalid-checkpoint` when a file is unreadable or a sidecar is
 *   missing, `malformed-action` when a row is not a well-formed action
 */
export async function readCheckpointParquet(
  engine: Engine,
  parquetKeys: readonly string[],
  version: Version,
  actions: CheckpointActionSink,
  signal: AbortSignal | undefined,
): Promise<void> {
  const deferred: DeferredCheckpointRow[] = []
  await readRows(engine, parquetKeys, { path: parquetKeys[0], version }, actions, deferred, signal)
  const sidecarKeys = [...actions.sidecarKeys]
  if (sidecarKeys.length > 0) {
    try {
      await readRows(engine, sidecarKeys, { path: sidecarKeys[0], version }, actions, deferred, signal)
    } catch (err) {
      if (err instanceof FileNotFoundError) {
        throw new InvalidTableError(
          'invalid-checkpoint',
          `Checkpoint ${version} references a missing sidecar ${err.path}`,
          { version, path: err.path, cause: err },
        )
      }
      throw err
    }
  }
  for (const a of parseDeferredRows(deferred, actions.tableActions)) actions.push(a)
}

/** Reads rows batch by batch (or all at once from an engine without batches) into `out`. */
async function readRows(
  engine: Engine,
  keys: readonly string[],
  ctx: ActionContext,
  out: ActionSink,
  deferred: DeferredCheckpointRow[],
  signal: AbortSignal | undefined,
): Promise<void> {
  if (keys.length === 0) return
  const parquet = engine.parquet
  if (parquet.readActionRowBatches === undefined) {
    parseRowsInto(out, await parquet.readActionRows(keys, { signal }), ctx, deferred)
    return
  }
  await parquet.readActionRowBatches(keys, (rows) => parseRowsInto(out, rows, ctx, deferred), { signal })
}

/**
 * Parses checkpoint rows (commit-shaped JSON lines, or rows the engine decoded) and appends
 * their actions to `out`; rows that need the table schema to be typed go to `deferred`.
 *
 * @param out - where the actions go, in row order
 * @param rows - the rows as the engine's Parquet handler gives them: JSON text or decoded
 * @param ctx - the checkpoint file and version, for messages
 * @param deferred - where rows that need the table schema go
 * @throws {InvalidTableError} `malformed-action` when a row is malformed
 */
export function parseRowsInto(
  out: ActionSink,
  rows: readonly ActionRow[],
  ctx: ActionContext,
  deferred: DeferredCheckpointRow[],
): void {
  for (let i = 0; i < rows.length; i++) {
    const given = rows[i] as ActionRow
    if (typeof given === 'string') {
      const quick = quickTextAction(given)
      if (quick !== NOT_DECODED) {
        out.push(quick)
        continue
      }
    }
    const row = (typeof given === 'string' ? parseRowText(given) : given) as Record<string, unknown>
    if (needsSchema(row)) {
      // Rare (statistics only as typed structs): these are converted field by field, and the
      // conversion expects Parquet's nulls dropped as a commit line would have them.
      deferred.push({ row: stripNulls(row) as Record<string, unknown>, ctx })
      continue
    }
    // Most rows of a large checkpoint: a file action whose fields have their types.
    const quick = decodedFileAction(row)
    if (quick !== NOT_DECODED) {
      out.push(quick)
      continue
    }
    const action = parseCheckpointRow(row, ctx)
    if (action) out.push(action)
  }
}

/**
 * The file action of a row's JSON text read with plain `JSON.parse`, when the quick way takes
 * it. That is exact without looking for long runs of digits: every number the quick way reads
 * must come out a safe integer, and an integer `JSON.parse` rounded is 2^53 or more.
 */
function quickTextAction(line: string): Action | typeof NOT_DECODED {
  let row: unknown
  try {
    row = JSON.parse(line)
  } catch {
    // Read again the usual way, which reports it as before.
    return NOT_DECODED
  }
  if (typeof row !== 'object' || row === null || needsSchema(row as Record<string, unknown>)) {
    return NOT_DECODED
  }
  return decodedFileAction(row as Record<string, unknown>)
}

// Any integer at or above 2^53 has at least 16 digits. A row without such a run of digits holds
// only integers JSON.parse decodes exactly, to the same numbers `parseExactNumber` gives, and
// JSON.parse is an order of magnitude faster than the lossless parser on large checkpoints.
const LONG_DIGIT_RUN = 16

function parseRowText(line: string): unknown {
  if (!hasDigitRun(line, LONG_DIGIT_RUN)) return JSON.parse(line)
  return parseLossless(line, undefined, parseExactNumber)
}

/** Whether `text` holds `n` consecutive ASCII digits (a loop: a regex is slower on long rows). */
function hasDigitRun(text: string, n: number): boolean {
  let run = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c >= 48 && c <= 57) {
      if (++run >= n) return true
    } else {
      run = 0
    }
  }
  return false
}

/** Integers as bigint when they do not fit a double exactly, other numbers as number. */
function parseExactNumber(text: string): number | bigint {
  if (/^-?\d+$/.test(text)) {
    const n = Number(text)
    return Number.isSafeInteger(n) ? n : BigInt(text)
  }
  return Number(text)
}

/**
 * Parquet has no "absent" field: an optional struct field is null. Drops those nulls so a row
 * reads like a commit line, except inside maps, where a null value is meaningful (a null
 * partition value).
 */
function stripNulls(value: unknown, insideMap = false): unknown {
  if (Array.isArray(value)) return value.map((v) => stripNulls(v))
  if (value === null || typeof value !== 'object') return value
  const out: Record<string, unknown> = {}
  const obj = value as Record<string, unknown>
  for (const k of Object.keys(obj)) {
    const v = obj[k]
    if (v === null && !insideMap) continue
    out[k] = stripNulls(v, MAP_FIELDS.has(k))
  }
  return out
}
const MAP_FIELDS = new Set(['partitionValues', 'tags', 'configuration', 'options'])
