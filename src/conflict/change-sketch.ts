/**
 * The change sketch (design beyond-rlc 8.4, optional accelerator): a MERGE writes into its
 * `commitInfo` the key columns it joined on and a set of key tuples holding the key of every row
 * it changed (inserted, deleted, either image of an update). A MERGE that loses to it and joined
 * on the same columns then decides Case 6 from the sketch alone, without reading a data file:
 * when none of the sketch's tuples is in its own key set K_L, no row the winner changed is in its
 * read set.
 *
 * It lives in `commitInfo`, never in file tags, so no snapshot or checkpoint carries it. It is
 * only sound when it is complete, so the writer writes one only where completeness follows from
 * the MERGE's shape (see `mergeChangeSketch` in `ops/merge-sketch.ts`). A reader that finds it
 * absent, of another format, malformed or over the cap ignores it and reads the rows: the
 * outcome is the same, only the cost differs.
 */
import type { Metadata, Protocol } from '../protocol/actions.js'
import { type PrimitiveType, parseSchema, physicalName } from '../protocol/schema.js'
import { columnMappingMode } from '../protocol/table-features.js'
import type { MergeKeyColumn } from './case6-merge-read-set.js'

/** The `commitInfo` field that holds the sketch. */
export const CHANGE_SKETCH_FIELD = 'changeSketch'

/** The encoding this reader and writer speak: a format name and version. */
export const CHANGE_SKETCH_FORMAT = 'delta-rlc.merge-keys/1'

/** The most key tuples a sketch lists (design 8.4: exact up to 8,192). */
export const MAX_SKETCH_KEYS = 8192

/** A change sketch, as written and as read back. */
export interface ChangeSketch {
  /** The key columns, by physical name and schema type, in the order the tuples list them. */
  readonly columns: readonly MergeKeyColumn[]
  /**
   * Key tuples encoded by `encodeKeyTuple`, a superset of the non-NULL keys of the rows the
   * commit changed.
   */
  readonly keys: readonly string[]
}

/**
 * The sketch as the `commitInfo` field's value.
 *
 * @param sketch - the sketch
 * @returns a JSON-ready object
 */
export function changeSketchValue(sketch: ChangeSketch): Readonly<Record<string, unknown>> {
  return Object.freeze({
    format: CHANGE_SKETCH_FORMAT,
    columns: sketch.columns.map((c) => ({ name: c.name, type: c.type })),
    keys: [...sketch.keys],
  })
}

/**
 * Reads the sketch of a commit.
 *
 * @param commitInfo - the commit's `commitInfo`, if any
 * @returns the sketch; undefined when absent, on a commit that is not a MERGE (only a MERGE
 *   writes one), of another format, malformed, or holding more tuples than
 *   {@link MAX_SKETCH_KEYS} (the caller then reads the rows)
 */
export function readChangeSketch(
  commitInfo: Readonly<Record<string, unknown>> | undefined,
): ChangeSketch | undefined {
  if (commitInfo?.operation !== 'MERGE') return undefined
  const raw = commitInfo[CHANGE_SKETCH_FIELD]
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return undefined
  const { format, columns, keys } = raw as Record<string, unknown>
  if (format !== CHANGE_SKETCH_FORMAT) return undefined
  if (!Array.isArray(columns) || columns.length === 0 || !Array.isArray(keys)) return undefined
  if (keys.length > MAX_SKETCH_KEYS || keys.some((k) => typeof k !== 'string')) return undefined
  const parsed: MergeKeyColumn[] = []
  for (const c of columns as unknown[]) {
    if (c === null || typeof c !== 'object') return undefined
    const { name, type } = c as Record<string, unknown>
    if (typeof name !== 'string' || name === '' || typeof type !== 'string') return undefined
    parsed.push(Object.freeze({ name, type: type as PrimitiveType }))
  }
  return Object.freeze({ columns: Object.freeze(parsed), keys: Object.freeze([...(keys as string[])]) })
}

/**
 * Key columns named as the data files name them (the physical names under column mapping), so
 * that a sketch and a read set compare by what the columns are, not by what they are called.
 *
 * @param columns - key columns by table (logical) name
 * @param protocol - the table's protocol
 * @param metadata - the table's metadata
 * @returns the columns by physical name; undefined when a column is not a top-level field of
 *   the schema or its physical name cannot be read
 */
export function physicalKeyColumns(
  columns: readonly MergeKeyColumn[],
  protocol: Protocol,
  metadata: Metadata,
): readonly MergeKeyColumn[] | undefined {
  if (metadata.schemaString === undefined) return undefined
  try {
    const mode = columnMappingMode(protocol, metadata)
    const fields = parseSchema(metadata.schemaString).fields
    const out: MergeKeyColumn[] = []
    for (const c of columns) {
      const field = fields.find((f) => f.name === c.name)
      if (field === undefined) return undefined
      out.push(Object.freeze({ name: physicalName(field, mode), type: c.type }))
    }
    return Object.freeze(out)
  } catch {
    return undefined
  }
}

/**
 * Whether a sketch and a read set speak of the same key columns: the same physical names and
 * types, in the same order (a tuple's encoding follows the order).
 *
 * @param sketch - the winner's sketch columns
 * @param read - the loser's key columns, by physical name
 * @returns true when every position agrees
 */
export function sameKeyColumns(sketch: readonly MergeKeyColumn[], read: readonly MergeKeyColumn[]): boolean {
  return (
    sketch.length === read.length &&
    sketch.every((c, i) => c.name === read[i]!.name && c.type === read[i]!.type)
  )
}
