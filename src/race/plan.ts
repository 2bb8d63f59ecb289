/**
 * The race planner: every operation of every writer is a pure function of the configuration,
 * the writer and the operation's sequence number. DELETE, UPDATE and MERGE act on explicit key
 * lists and appends insert fresh keys from the writer's own range, so an operation's effect is
 * determined by its parameters and the rows it sees, and the verifier can replay it on an
 * in-memory model.
 */
import { InvalidArgumentError } from '../index.js'
import type { RaceConfig, WriterKind, WriterSpec } from './options.js'
import { type Random, seededRandom } from './random.js'

/** A planned operation; `keys` are the ids it acts on (appends: the ids it inserts). */
export type PlannedOp =
  | {
      readonly kind: 'append'
      readonly writer: number
      readonly seq: number
      readonly keys: readonly number[]
      readonly tag: string
    }
  | {
      readonly kind: 'delete'
      readonly writer: number
      readonly seq: number
      readonly keys: readonly number[]
    }
  | {
      readonly kind: 'update' | 'merge'
      readonly writer: number
      readonly seq: number
      readonly keys: readonly number[]
      readonly delta: number
      readonly tag: string
    }
  | { readonly kind: 'optimize'; readonly writer: number; readonly seq: number }
  | {
      /** A Z-order OPTIMIZE of the whole table by `zOrderBy`: it permutes rows, moves none. */
      readonly kind: 'zorder'
      readonly writer: number
      readonly seq: number
      readonly zOrderBy: readonly string[]
    }
  | {
      /** A VACUUM at retention 0 (retention check off): it deletes every file no longer live. */
      readonly kind: 'vacuum'
      readonly writer: number
      readonly seq: number
    }
  | {
      /**
       * A MERGE that inserts fresh keys of its writer's own range (`keys`, tagged `tag`) and has
       * a NOT MATCHED BY SOURCE clause on the tag column: the rows tagged `bySourceTag` (those
       * its writer's previous operation inserted) get `delta` added and the tag `updatedTag`.
       */
      readonly kind: 'merge-insert'
      readonly writer: number
      readonly seq: number
      readonly keys: readonly number[]
      readonly delta: number
      readonly tag: string
      readonly bySourceTag: string
      readonly updatedTag: string
    }

/** The kinds a planned operation can have. */
export type OpKind = PlannedOp['kind']

/** One row of the race table. */
export interface RaceRow {
  readonly id: number
  readonly val: number
  readonly tag: string
}

/** The schema of the race table. */
export const RACE_SCHEMA = 'id long not null, val long not null, tag string'

/**
 * The columns a `zorder` writer orders by: the value first, so that rows of one key range end up
 * spread over the outputs (a sort by id alone would keep them together).
 */
const Z_ORDER_COLUMNS: readonly string[] = Object.freeze(['val', 'id'])

/** Fresh keys start here, far above any initial key. */
const FRESH_BASE = 1_000_000_000
/** Fresh keys of one writer span this many ids. */
const WRITER_STRIDE = 100_000_000_000
/** Fresh keys of one operation span this many ids. */
const SEQ_STRIDE = 10_000

/** Relative weights of the kinds a `mixed` writer draws. */
const MIXED_WEIGHTS: ReadonlyArray<readonly [Exclude<OpKind, never>, number]> = [
  ['append', 3],
  ['delete', 2],
  ['update', 2],
  ['merge', 2],
  ['optimize', 1],
]

/**
 * The application id a writer's commits carry in their `txn` action.
 *
 * @param runId - the run
 * @param writer - the writer index
 * @returns `<runId>-w<writer>`
 */
export function appIdOf(runId: string, writer: number): string {
  return `${runId}-w${writer}`
}

/**
 * The writer and sequence number behind a `txn` action of this run, if it is one.
 *
 * @param runId - the run
 * @param appId - the action's application id
 * @returns the writer index, or undefined for another application
 */
export function writerOfAppId(runId: string, appId: string): number | undefined {
  const prefix = `${runId}-w`
  if (!appId.startsWith(prefix)) return undefined
  const rest = appId.slice(prefix.length)
  return /^\d+$/.test(rest) ? Number(rest) : undefined
}

/**
 * The fresh key `index` of operation `seq` of `writer`: no other operation ever inserts it.
 *
 * @param writer - writer index
 * @param seq - sequence number
 * @param index - position in the operation
 * @returns the key
 */
export function freshKey(writer: number, seq: number, index: number): number {
  return FRESH_BASE + writer * WRITER_STRIDE + seq * SEQ_STRIDE + index
}

/**
 * The rows of the initial table, split into `initialFiles` contiguous key ranges (one append,
 * hence one data file, each), so that every writer's keys share every file.
 *
 * @param config - the race
 * @returns one batch of rows per initial file
 */
export function initialBatches(config: RaceConfig): RaceRow[][] {
  const batches: RaceRow[][] = []
  const per = Math.ceil(config.rows / config.initialFiles)
  for (let start = 0; start < config.rows; start += per) {
    const batch: RaceRow[] = []
    for (let id = start; id < Math.min(config.rows, start + per); id++)
      batch.push({ id, val: 0, tag: 'init' })
    batches.push(batch)
  }
  return batches
}

/**
 * The operation `seq` of a writer.
 *
 * @param config - the race
 * @param writer - the writer
 * @param seq - the operation's sequence number (0-based)
 * @returns the planned operation
 * @throws {InvalidArgumentError} when the configuration cannot be planned (too many rows per op)
 */
export function planOperation(config: RaceConfig, writer: WriterSpec, seq: number): PlannedOp {
  if (config.appendRows > SEQ_STRIDE || config.keysPerOp > SEQ_STRIDE) {
    throw new InvalidArgumentError(`Rows and keys per operation are limited to ${SEQ_STRIDE}`, {
      argument: 'appendRows',
    })
  }
  const rnd = seededRandom(config.seed, writer.index, seq, 1)
  const kind = kindOf(writer.kind, rnd)
  const w = writer.index
  const tag = `w${w}s${seq}`
  switch (kind) {
    case 'append':
      return Object.freeze({
        kind,
        writer: w,
        seq,
        keys: Object.freeze(Array.from({ length: config.appendRows }, (_, i) => freshKey(w, seq, i))),
        tag,
      })
    case 'optimize':
    case 'vacuum':
      return Object.freeze({ kind, writer: w, seq })
    case 'zorder':
      return Object.freeze({ kind, writer: w, seq, zOrderBy: Z_ORDER_COLUMNS })
    case 'merge-insert':
      return Object.freeze({
        kind,
        writer: w,
        seq,
        keys: Object.freeze(Array.from({ length: mergeInsertCount(config) }, (_, i) => freshKey(w, seq, i))),
        delta: 1 + rnd.int(9),
        tag: mergeInsertTag(w, seq),
        bySourceTag: mergeInsertTag(w, seq - 1),
        updatedTag: `mi${w}u${seq}`,
      })
    case 'delete':
      return Object.freeze({ kind, writer: w, seq, keys: pickKeys(config, writer, seq, rnd, kind) })
    case 'update':
    case 'merge':
      return Object.freeze({
        kind,
        writer: w,
        seq,
        keys: pickKeys(config, writer, seq, rnd, kind),
        delta: 1 + rnd.int(9),
        tag,
      })
  }
}

/**
 * How many fresh keys a MERGE of this configuration inserts.
 *
 * @param config - the race
 * @returns at least 1
 */
export function mergeInsertCount(config: RaceConfig): number {
  return Math.max(1, Math.floor(config.keysPerOp / 4))
}

/**
 * The tag a merge-insert writer gives the rows operation `seq` inserts: the value its next
 * operation's NOT MATCHED BY SOURCE condition selects.
 *
 * @param writer - writer index
 * @param seq - sequence number (-1 names no operation: no row carries it)
 * @returns the tag
 */
export function mergeInsertTag(writer: number, seq: number): string {
  return `mi${writer}s${seq}`
}

// === Internals ===

function kindOf(kind: WriterKind, rnd: Random): OpKind {
  if (kind !== 'mixed') return kind
  const total = MIXED_WEIGHTS.reduce((n, [, w]) => n + w, 0)
  let x = rnd.int(total)
  for (const [k, w] of MIXED_WEIGHTS) {
    if (x < w) return k
    x -= w
  }
  return 'append'
}

/** Kinds whose writer inserts fresh keys that its later operations may act on. */
function insertsOwnKeys(kind: WriterKind): boolean {
  return kind === 'mixed' || kind === 'merge'
}

function pickKeys(
  config: RaceConfig,
  writer: WriterSpec,
  seq: number,
  rnd: Random,
  kind: 'delete' | 'update' | 'merge',
): readonly number[] {
  const writers = config.writers.length
  const w = writer.index
  const ownSlice = Math.max(1, Math.ceil((config.rows - w) / writers))
  const keys = new Set<number>()
  const existing = kind === 'merge' ? config.keysPerOp - mergeInsertCount(config) : config.keysPerOp
  let guard = 0
  while (keys.size < existing && guard++ < existing * 20) {
    const r = rnd.next()
    if (config.overlap === 'hot' && r < 0.5) {
      keys.add(rnd.int(Math.min(config.hotKeys, config.rows)))
    } else if (config.overlap === 'partial' && r < 0.2) {
      // A MERGE never aims at another writer's fresh keys: inserting one it cannot see yet would
      // race that writer's own insert of it.
      if (kind !== 'merge' && rnd.next() < 0.5) {
        const other = rnd.int(writers)
        keys.add(freshKey(other, rnd.int(seq + 1), rnd.int(config.appendRows)))
      } else {
        keys.add(rnd.int(config.rows))
      }
    } else if (insertsOwnKeys(writer.kind) && seq > 0 && rnd.next() < 0.25) {
      keys.add(freshKey(w, rnd.int(seq), rnd.int(Math.max(config.appendRows, mergeInsertCount(config)))))
    } else {
      const k = w + writers * rnd.int(ownSlice)
      if (k < config.rows) keys.add(k)
    }
  }
  if (kind === 'merge') for (let i = 0; i < mergeInsertCount(config); i++) keys.add(freshKey(w, seq, i))
  return Object.freeze([...keys].sort((a, b) => a - b))
}
