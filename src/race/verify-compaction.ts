/**
 * Checks the composition tags of every OPTIMIZE of a race against the files themselves: for each
 * tagged source (re-pointed ones included), its live rows at compaction time must sit in the
 * output exactly at `[rowOffsetInTarget, rowOffsetInTarget + live)`, in the source's physical
 * order (compared by key, the race's keys being unique). A wrong offset would make a later remap
 * (Cases 4a and 4b) delete the wrong rows, so it is checked directly, not only through its
 * consequences.
 */
import { parseOptimizeSourceComposition } from '../conflict/composition-tags.js'
import { FileNotFoundError } from '../errors/index.js'
import type { AddFile, RemoveFile } from '../protocol/actions.js'
import { commitKey } from '../protocol/log-files.js'
import { decodeAddPath } from '../protocol/partition-values.js'
import { loadDeletionVector } from '../scan/load-deletion-vector.js'
import { columnSpecs } from '../scan/table-scan.js'
import { readCommit } from '../snapshot/log-reader.js'
import type { DeltaTable } from '../table/delta-table.js'

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
 * in physical order; the output of one OPTIMIZE, usually a source of the next, is kept for it.
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
  const idColumn = columnSpecs(snap, ['id'])
  const cache = new Map<string, readonly string[]>()
  const physicalIds = async (path: string, partitionValues: AddFile['partitionValues']) => {
    const hit = cache.get(path)
    if (hit !== undefined) return hit
    const ids: string[] = []
    const files = [{ key: keyOf(path), partitionValues }]
    for await (const batch of engine.data.scan({ files, columns: idColumn, physicalOrder: true })) {
      for (const row of batch) ids.push(String(row.id))
    }
    if (cache.size >= CACHED_FILES) cache.delete(cache.keys().next().value as string)
    cache.set(path, ids)
    return ids
  }
  let sources = 0
  for (const version of versions) {
    const actions = await readCommit(engine, BigInt(version))
    if (actions === undefined) throw new FileNotFoundError(commitKey(BigInt(version)))
    const outputs = new Map<string, AddFile>()
    const removes: RemoveFile[] = []
    for (const a of actions) {
      if ('add' in a) outputs.set(a.add.path, a.add)
      else if ('remove' in a) removes.push(a.remove)
    }
    for (const r of removes) {
      const comp = parseOptimizeSourceComposition(r, new Set(outputs.keys()))
      if (comp === undefined) continue
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
      const live = (await physicalIds(r.path, r.partitionValues ?? {})).filter((_, i) => !skipped?.has(i))
      skipped?.dispose()
      if (live.length !== comp.liveCount) {
        return mismatch(
          `OPTIMIZE at version ${version}: source ${r.path} had ${live.length} live rows, its tag says ${comp.liveCount}`,
        )
      }
      const output = await physicalIds(comp.outputPath, outputs.get(comp.outputPath)?.partitionValues ?? {})
      const at = live.findIndex((id, k) => output[comp.outputStart + k] !== id)
      if (at >= 0) {
        const row = comp.outputStart + at
        return mismatch(
          `OPTIMIZE at version ${version}: live row ${at} of source ${r.path} (id ${live[at]}) should sit at row ${row} of ${comp.outputPath}, which holds ${output[row] === undefined ? 'no row' : `id ${output[row]}`}`,
        )
      }
    }
  }
  return { sources }
}

/** Files whose ids stay in memory between OPTIMIZE commits. */
const CACHED_FILES = 16

function keyOf(path: string): string {
  const d = decodeAddPath(path)
  return d.kind === 'relative' ? d.key : path
}
