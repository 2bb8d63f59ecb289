/**
 * The ids of data files in physical row order, for the race verifier's compaction check: files
 * are read many in one data-plane request rather than one request each (an OPTIMIZE of a race has
 * a handful of small sources and one output, and a request costs far more than its rows), and
 * the most recently read files stay in memory, since the output of one OPTIMIZE is usually a
 * source of the next.
 */
import type { AddFile } from '../index.js'
import type { ColumnSpec, Engine } from '../subpaths/engine.js'
import { decodeAddPath, lit } from '../subpaths/testing.js'

/** A data file to read: its log path and partition values. */
export interface IdFile {
  readonly path: string
  readonly partitionValues: AddFile['partitionValues']
}

/** The ids of files, read in batches and kept for a while. */
export class PhysicalIds {
  readonly #engine: Engine
  readonly #column: ColumnSpec
  readonly #keep: number
  readonly #cache = new Map<string, readonly unknown[]>()

  /**
   * @param engine - the table's engine
   * @param column - the data-plane spec of the id column
   * @param keep - how many files stay in memory after they were last asked for
   */
  constructor(engine: Engine, column: ColumnSpec, keep: number) {
    this.#engine = engine
    this.#column = column
    this.#keep = keep
  }

  /**
   * Reads the files not in memory yet, all in one request, so that {@link PhysicalIds.get} finds
   * them. A batch that fails, or whose per-file row counts do not add up to the rows it returned,
   * leaves the files unread: `get` then reads each alone and fails (or not) exactly as a read of
   * that one file does.
   *
   * @param files - the files about to be asked for
   */
  async prefetch(files: readonly IdFile[]): Promise<void> {
    const wanted = new Map<string, IdFile>()
    for (const f of files) if (!this.#cache.has(f.path)) wanted.set(f.path, f)
    if (wanted.size === 0) return
    const batch = [...wanted.values()]
    let split: unknown[][]
    try {
      const refs = batch.map((f) => ({ key: keyOf(f.path), partitionValues: f.partitionValues }))
      // A predicate no row matches: only the per-file row counts are computed.
      const counts = await this.#engine.data.matchPositions({ files: refs, predicate: lit(false) })
      const ids: unknown[] = []
      for await (const rows of this.#engine.data.scan({
        files: refs,
        columns: [this.#column],
        physicalOrder: true,
      }))
        for (const row of rows) ids.push(row[this.#column.name])
      split = splitByCounts(
        ids,
        counts.map((c) => c.liveRows),
      )
    } catch {
      return
    }
    if (split.length !== batch.length) return
    this.#evict(batch.length, new Set(files.map((f) => f.path)))
    for (const [i, f] of batch.entries()) this.#cache.set(f.path, split[i] as unknown[])
  }

  /**
   * The ids of one file in physical order (its deletion vector not applied), as the data plane
   * returns them (bigints for a `long` column).
   *
   * @param file - the file
   * @returns its ids
   * @throws like a data-plane scan of the file
   */
  async get(file: IdFile): Promise<readonly unknown[]> {
    const hit = this.#cache.get(file.path)
    if (hit !== undefined) {
      // Most recently used last.
      this.#cache.delete(file.path)
      this.#cache.set(file.path, hit)
      return hit
    }
    const ids: unknown[] = []
    const files = [{ key: keyOf(file.path), partitionValues: file.partitionValues }]
    for await (const rows of this.#engine.data.scan({ files, columns: [this.#column], physicalOrder: true }))
      for (const row of rows) ids.push(row[this.#column.name])
    this.#evict(1, new Set())
    this.#cache.set(file.path, ids)
    return ids
  }

  /**
   * Makes room for `incoming` files: the least recently used go until `keep` are left, but never
   * one of `needed` (the files a batch was read for, the cached ones among them included).
   */
  #evict(incoming: number, needed: ReadonlySet<string>): void {
    let excess = this.#cache.size + incoming - this.#keep
    for (const path of this.#cache.keys()) {
      if (excess <= 0) return
      if (needed.has(path)) continue
      this.#cache.delete(path)
      excess--
    }
  }
}

/**
 * Splits `ids` into consecutive runs of the given lengths; an empty array when the lengths do
 * not add up to the number of ids.
 */
function splitByCounts(ids: readonly unknown[], counts: readonly number[]): unknown[][] {
  const out: unknown[][] = []
  let at = 0
  for (const n of counts) {
    out.push(ids.slice(at, at + n))
    at += n
  }
  return at === ids.length ? out : []
}

function keyOf(path: string): string {
  const d = decodeAddPath(path)
  return d.kind === 'relative' ? d.key : path
}
