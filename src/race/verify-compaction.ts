/**
 * Checks the composition tags of every OPTIMIZE of a race against the files themselves: for each
 * tagged source, its live rows at compaction time (by key, the race's keys being unique) must sit
 * in the output exactly at `[rowOffsetInTarget, rowOffsetInTarget + live)`. A wrong offset would
 * make a later remap (Cases 4a and 4b) delete the wrong rows, so it is checked directly, not only
 * through its consequences.
 */
import { parseOptimizeSourceComposition } from '../conflict/composition-tags.js'
import { parsePredicate } from '../expressions/parse-predicate.js'
import { parseCommitFile } from '../protocol/action-json.js'
import type { AddFile, RemoveFile } from '../protocol/actions.js'
import { commitKey } from '../protocol/log-files.js'
import { decodeAddPath } from '../protocol/partition-values.js'
import { loadDeletionVector } from '../scan/load-deletion-vector.js'
import { columnSpecs } from '../scan/table-scan.js'
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
 * Checks the tagged tombstones of the OPTIMIZE commits among `versions`.
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
  let sources = 0
  for (const version of versions) {
    const key = commitKey(BigInt(version))
    const actions = parseCommitFile(new TextDecoder().decode(await engine.storage.read(key)), {
      path: key,
      version: BigInt(version),
    })
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
      const deleted = r.deletionVector
        ? (await loadDeletionVector(engine, r.deletionVector)).toArray()
        : undefined
      const sourceRef = { key: keyOf(r.path), deletedRows: deleted, partitionValues: r.partitionValues ?? {} }
      const ids: string[] = []
      for await (const batch of engine.data.scan({ files: [sourceRef], columns: idColumn })) {
        for (const row of batch) ids.push(String(row.id))
      }
      const mismatch = (message: string): CompactionCheck => ({
        sources,
        mismatch: { version, source: r.path, output: comp.outputPath, message },
      })
      if (ids.length !== comp.liveCount) {
        return mismatch(
          `OPTIMIZE at version ${version}: source ${r.path} had ${ids.length} live rows, its tag says ${comp.liveCount}`,
        )
      }
      if (ids.length === 0) continue
      const [found] = await engine.data.matchPositions({
        files: [
          {
            key: keyOf(comp.outputPath),
            partitionValues: outputs.get(comp.outputPath)?.partitionValues ?? {},
          },
        ],
        predicate: parsePredicate(`id IN (${ids.join(', ')})`),
        predicateColumns: idColumn,
      })
      const positions = [...(found?.positions ?? [])].sort((a, b) => a - b)
      const first = positions[0] ?? -1
      const contiguous = positions.length === ids.length && positions.every((p, i) => p === first + i)
      if (!contiguous || first !== comp.outputStart) {
        return mismatch(
          `OPTIMIZE at version ${version}: the ${ids.length} live rows of source ${r.path} sit at output rows ${describe(positions)} of ${comp.outputPath}, but its tag says ${comp.outputStart}..${comp.outputStart + comp.liveCount - 1}`,
        )
      }
    }
  }
  return { sources }
}

function keyOf(path: string): string {
  const d = decodeAddPath(path)
  return d.kind === 'relative' ? d.key : path
}

function describe(positions: readonly number[]): string {
  if (positions.length === 0) return '(none)'
  const first = positions[0] as number
  const last = positions.at(-1) as number
  return last - first + 1 === positions.length
    ? `${first}..${last}`
    : `${positions.length} scattered from ${first} to ${last}`
}
