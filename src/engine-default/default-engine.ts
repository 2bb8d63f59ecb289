import type { Engine } from '../engine/engine.js'
import type { ObjectStore } from '../storage/object-store.js'
import { DuckDbParquetHandler } from './checkpoint-parquet.js'
import { DuckDbDataPlane } from './duckdb-data-plane.js'
import { DuckDbMergeExecutor } from './duckdb-merge.js'
import { DuckDbRuntime, duckDbMemoryLimit } from './duckdb-runtime.js'
import { DuckDbWriter } from './duckdb-writer.js'
import { defaultScratchDir, sweepScratchDirOnce } from './scratch-dir.js'
import { withStagingCache } from './staging.js'
import { createStagingCache } from './staging-cache.js'

/** Options of {@link createDefaultEngine}. */
export interface DefaultEngineOptions {
  /**
   * Local directory for staged copies and intermediate files; defaults to
   * `delta-rlc-scratch-<uid>` under the OS temp dir. The first engine of a process removes, in the
   * background, what processes that no longer run left there.
   */
  readonly scratchDir?: string
  /** DuckDB worker threads; defaults to the number of cores. */
  readonly threads?: number
  /**
   * The most memory DuckDB uses before it spills to the scratch directory: a number of bytes or a
   * size such as `'4GB'` or `'512MiB'`. Defaults to DuckDB's own limit, 80% of the machine's memory.
   */
  readonly memoryLimit?: string | number
  /**
   * Directory of the staging cache for remote objects, which processes may share; defaults to
   * `delta-rlc-cache-<uid>` under the OS temp dir.
   */
  readonly cacheDir?: string
  /** Size bound of the staging cache in bytes (default 1 GiB); 0 stages a private copy per read. */
  readonly cacheMaxBytes?: number
}

/**
 * The default engine: the given store for bytes, DuckDB for everything Parquet.
 *
 * @param storage - the table's store
 * @param options - scratch directory, DuckDB threads and memory limit, staging cache
 * @returns an engine; call `close()` when done with it
 * @throws {InvalidArgumentError} for a negative `cacheMaxBytes`, an empty `cacheDir` or an invalid
 *   `memoryLimit`
 */
export function createDefaultEngine(storage: ObjectStore, options: DefaultEngineOptions = {}): Engine {
  if (options.memoryLimit !== undefined) duckDbMemoryLimit(options.memoryLimit)
  const scratchDir = options.scratchDir ?? defaultScratchDir()
  const duck = new DuckDbRuntime({ threads: options.threads, memoryLimit: options.memoryLimit, scratchDir })
  // Killed writers leave their scratch entries behind; nothing else would ever remove them.
  void sweepScratchDirOnce(scratchDir)
  const staged = withStagingCache(
    storage,
    createStagingCache({ dir: options.cacheDir, maxBytes: options.cacheMaxBytes }),
  )
  const writer = new DuckDbWriter(staged, duck, scratchDir)
  return Object.freeze({
    storage,
    parquet: new DuckDbParquetHandler(staged, duck, scratchDir),
    data: new DuckDbDataPlane(staged, duck, scratchDir),
    writer,
    // MERGE writes its new rows through the writer, from its own DuckDB tables.
    merge: new DuckDbMergeExecutor(staged, duck, scratchDir, writer),
    close: () => duck.close(),
  })
}
