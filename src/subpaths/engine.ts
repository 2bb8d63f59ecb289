/**
 * `delta-rlc/engine`: what a custom engine implements, and the default engine.
 *
 * The table API reaches files and compute only through an {@link Engine}: storage, Parquet and
 * the data plane (DuckDB in the default engine). Pass your own as `options.engine` to
 * `DeltaTable.open` or `DeltaTable.create`; `test/contract/engine-contract.ts` is the suite an
 * engine is checked with.
 *
 * ### Examples
 * ```ts
 * import { DeltaTable, createLocalStore } from 'delta-rlc'
 * import { createDefaultEngine } from 'delta-rlc/engine'
 *
 * const engine = createDefaultEngine(createLocalStore('/data/sales'), { threads: 2 })
 * const table = await DeltaTable.open('/data/sales', { engine })
 * ```
 */

export type * from '../engine/index.js'
export { createDefaultEngine, type DefaultEngineOptions } from '../engine-default/default-engine.js'
export type { Expression } from '../expressions/ast.js'
export type {
  AddFile,
  DeletionVectorDescriptor,
  RemoveFile,
  Version,
} from '../protocol/actions.js'
export type {
  ColumnMappingMode,
  DataType,
  StructField,
  StructType,
} from '../protocol/schema.js'
export type {
  ByteRange,
  FileMeta,
  ObjectStore,
  PutOptions,
  StoreCallOptions,
} from '../storage/object-store.js'
