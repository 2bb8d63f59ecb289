import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Engine } from '../engine/engine.js'
import type { ObjectStore } from '../storage/object-store.js'
import { DuckDbParquetHandler } from './checkpoint-parquet.js'
import { DuckDbDataPlane } from './duckdb-data-plane.js'
import { DuckDbMergeExecutor } from './duckdb-merge.js'
import { DuckDbRuntime } from './duckdb-runtime.js'
import { DuckDbWriter } from './duckdb-writer.js'

/** Options of {@link createDefaultEngine}. */
export interface DefaultEngineOptions {
  /** Local directory for staged copies and intermediate files; defaults to the OS temp dir. */
  readonly scratchDir?: string
  /** DuckDB worker threads; defaults to the number of cores. */
  readonly threads?: number
}

/**
 * The default engine: the given store for bytes, DuckDB for everything Parquet.
 *
 * @param storage - the table's store
 * @param options - scratch directory and DuckDB threads
 * @returns an engine; call `close()` when done with it
 */
export function createDefaultEngine(storage: ObjectStore, options: DefaultEngineOptions = {}): Engine {
  const duck = new DuckDbRuntime(options.threads)
  const scratchDir = options.scratchDir ?? join(tmpdir(), 'delta-rlc-scratch')
  return Object.freeze({
    storage,
    parquet: new DuckDbParquetHandler(storage, duck, scratchDir),
    data: new DuckDbDataPlane(storage, duck, scratchDir),
    writer: new DuckDbWriter(storage, duck, scratchDir),
    merge: new DuckDbMergeExecutor(storage, duck, scratchDir),
    close: () => duck.close(),
  })
}
