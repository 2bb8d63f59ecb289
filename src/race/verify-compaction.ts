/**
 * Checks the composition tags of every OPTIMIZE of a race against the files themselves: for each
 * tagged source (re-pointed ones included), its live rows at compaction time must sit in the
 * output exactly at `[rowOffsetInTarget, rowOffsetInTarget + live)`, in the source's physical
 * order (compared by key, the race's keys being unique). A wrong offset would make a later remap
 * (Cases 4a and 4b) delete the wrong rows, so it is checked directly, not only through its
 * consequences.
 */
import { type AddFile, type DeltaTable, FileNotFoundError, type RemoveFile } from '../index.js'
import type { ColumnSpec, Engine } from '../subpaths/engine.js'
import {
  columnSpecs,
  commitKey,
  loadDeletionVector,
  parseOptimizeSourceComposition,
  type RoaringBitmapArray,
  readCommit,
  type SourceComposition,
} from '../subpaths/testing.js'
import { mapLimit } from '../util/map-limit.js'
import { type IdFile, PhysicalIds } from './physical-ids.js'

/** The first mismatch between a tag and its output, if any. */
export interface CompactionMismatch {
  readonly version: number
  readonly source: string
  readonly output: string
  readonly message: string
}

/** What the compaction check found. */
export interface CompactionCheck {
  /** Tagged sources checked. */
  readonly sources: number
  readonly mismatch?: CompactionMismatch | undefined
}

/**
 * Checks the tagged tombstones of the OPTIMIZE commits among `versions`. Each file is read once,
 * in physical order, and the files of several commits in one request; the output of one
 * OPTIMIZE, usually a source of the next, is kept for it.
 *
 * @param table - the race table
 * @param versions - commit versions whose operation is OPTIMIZE
 * @returns how many sources were checked and the first mismatch
 */
export async function checkCompactionOffsets(
  table: DeltaTable,
  versions: readonly number[],
): Promise<CompactionCheck> {
  const engine = table.engine
  const snap = await table.snapshot()
  const ids = new PhysicalIds(engine, columnSpecs(snap, ['id'])[0] as ColumnSpec, CACHED_FILES)
  let sources = 0
  for (let start = 0; start < versions.length; start += COMMITS_PER_BATCH) {
    // A commit that cannot be read fails the check when its turn comes, as if read in turn.
    const batch = await mapLimit(versions.slice(start, start + COMMITS_PER_BATCH), COMMITS_PER_BATCH, (v) =>
      readCompaction(engine, v).then(
        (compaction) => ({ compaction }),
        (error: unknown) => ({ error }),
      ),
    )
    const files: IdFile[] = []
    for (const read of batch) {
      if (!('compaction' in read)) break
      const c = read.compaction
      for (const { remove, comp } of c.tagged) {
        files.push({ path: remove.path, partitionValues: remove.partitionValues ?? {} })
        files.push({
          path: comp.outputPath,
          partitionValues: c.outputs.get(comp.outputPath)?.partitionValues ?? {},
        })
      }
    }
    await ids.prefetch(files)
    for (const read of batch) {
      if (!('compaction' in read)) throw read.error
      const { version, outputs, tagged } = read.compaction
      for (const { remove: r, comp } of tagged) {
        sources++
        const mismatch = (message: string): CompactionCheck => ({
          sources,
          mismatch: { version, source: r.path, output: comp.outputPath, message },
        })
        // The rows the compaction skipped: the tombstone's DV, or after a forward remap re-pointed
        // the tombstone, the read-time DV its tag names.
        const skipped = comp.readDeletionVector
          ? await loadDeletionVector(engine, comp.readDeletionVector)
          : undefined
        const physical = await ids.get({ path: r.path, partitionValues: r.partitionValues ?? {} })
        const live = skipped === undefined ? physical : withoutPositions(physical, skipped)
        skipped?.dispose()
        if (live.length !== comp.liveCount) {
          return mismatch(
            `OPTIMIZE at version ${version}: source ${r.path} had ${live.length} live rows, its tag says ${comp.liveCount}`,
          )
        }
        const output = await ids.get({
          path: comp.outputPath,
          partitionValues: outputs.get(comp.outputPath)?.partitionValues ?? {},
        })
        const at = live.findIndex((id, k) => output[comp.outputStart + k] !== id)
        if (at >= 0) {
          const row = comp.outputStart + at
          return mismatch(
            `OPTIMIZE at version ${version}: live row ${at} of source ${r.path} (id ${live[at]}) should sit at row ${row} of ${comp.outputPath}, which holds ${output[row] === undefined ? 'no row' : `id ${output[row]}`}`,
          )
        }
      }
    }
  }
  return { sources }
}

/** An OPTIMIZE commit: its outputs and its tagged tombstones, in log order. */
interface Compaction {
  readonly version: number
  readonly outputs: ReadonlyMap<string, AddFile>
  readonly tagged: ReadonlyArray<{ readonly remove: RemoveFile; readonly comp: SourceComposition }>
}

async function readCompaction(engine: Engine, version: number): Promise<Compaction> {
  const actions = await readCommit(engine, BigInt(version))
  if (actions === undefined) throw new FileNotFoundError(commitKey(BigInt(version)))
  const outputs = new Map<string, AddFile>()
  const removes: RemoveFile[] = []
  for (const a of actions) {
    if ('add' in a) outputs.set(a.add.path, a.add)
    else if ('remove' in a) removes.push(a.remove)
  }
  const paths = new Set(outputs.keys())
  const tagged: Array<{ remove: RemoveFile; comp: SourceComposition }> = []
  for (const remove of removes) {
    const comp = parseOptimizeSourceComposition(remove, paths)
    if (comp !== undefined) tagged.push({ remove, comp })
  }
  return { version, outputs, tagged }
}

/**
 * The entries of `ids` whose index `skipped` does not hold: the rows a DV leaves live. Positions
 * past the end name no row and are not looked at.
 */
function withoutPositions(ids: readonly unknown[], skipped: RoaringBitmapArray): readonly unknown[] {
  const inside = ids.length === 0 ? 0 : skipped.rank(ids.length - 1)
  if (inside === 0) return ids
  const out: unknown[] = []
  let from = 0
  for (let k = 0; k < inside; k++) {
    const position = skipped.select(k) as number
    for (let i = from; i < position; i++) out.push(ids[i])
    from = position + 1
  }
  for (let i = from; i < ids.length; i++) out.push(ids[i])
  return out
}

/** Files whose ids stay in memory between batches. */
const CACHED_FILES = 16

/**
 * OPTIMIZE commits whose files are read in one request: each has one output of about the whole
 * table's rows, which bounds the ids held at once.
 */
const COMMITS_PER_BATCH = 8
