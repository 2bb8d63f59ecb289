/**
 * `delta-rlc/testing`: tools for testing applications and checking what a table holds on disk.
 * Not part of the table API, and free to change between minor versions.
 *
 * - Stores that wrap another store: {@link createFaultyStore} fails chosen requests,
 *   {@link createDelayStore} adds latency, {@link passThroughStore} forwards every call (a base to
 *   wrap from).
 * - Physical readers, for verifiers that check a table below the table API (the race verifier
 *   does): the log listing and one commit's actions, snapshots loaded or advanced version by
 *   version, a file's deletion vector, the composition tags OPTIMIZE writes on its tombstones,
 *   and the store keys of log files and data files.
 *
 * ### Examples
 * ```ts
 * import { DeltaTable, createLocalStore } from 'delta-rlc'
 * import { createFaultyStore } from 'delta-rlc/testing'
 *
 * // The first put of a commit file fails, as a service outage would fail it.
 * const storage = createFaultyStore(createLocalStore('/tmp/t'), {
 *   faults: [{ methods: 'put', match: /_delta_log\/\d+\.json$/, nth: 1 }],
 * })
 * const table = await DeltaTable.open('/tmp/t', { storage })
 * ```
 */

export type { RoaringBitmapArray } from '../dv/roaring-bitmap-array.js'
export { lit } from '../expressions/ast.js'
export {
  parseOptimizeSourceComposition,
  type SourceComposition,
} from '../protocol/composition-tags.js'
export { commitKey, LOG_DIR, type LogFileName, parseLogFileName } from '../protocol/log-files.js'
export { type DecodedAddPath, decodeAddPath } from '../protocol/partition-values.js'
export { columnSpecs } from '../scan/column-specs.js'
export { loadDeletionVector } from '../scan/load-deletion-vector.js'
export { type AdvanceOptions, advanceSnapshot } from '../snapshot/advance-snapshot.js'
export { loadSnapshot } from '../snapshot/load-snapshot.js'
export { listLogFrom, readCommit } from '../snapshot/log-reader.js'
export type { DelayStore, DelayStoreOptions, DelayStoreRequests } from '../storage/delay-store.js'
export { createDelayStore } from '../storage/delay-store.js'
export type {
  DelayRule,
  FaultPlan,
  FaultRule,
  FaultyStore,
  FaultyStoreStats,
  KeyMatcher,
  StoreMethod,
} from '../storage/faulty-store.js'
export { createFaultyStore } from '../storage/faulty-store.js'
export { passThroughStore } from '../storage/pass-through-store.js'
