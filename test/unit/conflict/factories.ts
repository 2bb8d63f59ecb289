/**
 * Small builders of actions, transactions, winners and deletion vectors for the conflict tests.
 * Everything is pure: no table, no engine.
 */

import { checkConflicts } from '../../../src/conflict/check-conflicts.js'
import type { FetchedFacts } from '../../../src/conflict/fetched-facts.js'
import { type ConflictFlags, DEFAULT_CONFLICT_FLAGS } from '../../../src/conflict/flags.js'
import { createReadMatcher } from '../../../src/conflict/read-matcher.js'
import {
  chooseIsolationLevel,
  createReadPredicate,
  createTransactionInfo,
  type ReadPredicate,
  type TransactionInfo,
} from '../../../src/conflict/transaction-info.js'
import { summarizeWinningCommit, type WinningCommitSummary } from '../../../src/conflict/winning-commit.js'
import { createInlineDescriptor } from '../../../src/dv/descriptor.js'
import { RoaringBitmapArray } from '../../../src/dv/roaring-bitmap-array.js'
import { type Expression, parsePredicate, splitPartitionPredicate } from '../../../src/expressions/index.js'
import {
  type Action,
  type AddFile,
  createAction,
  createAddFile,
  createMetadata,
  createProtocol,
  createRemoveFile,
  type DeletionVectorDescriptor,
  type Metadata,
  type NullableStringMap,
  type Protocol,
  type RemoveFile,
} from '../../../src/protocol/actions.js'

// === Table metadata ===

/**
 * Metadata with a schema of the given columns (name -> Delta type) and partition columns.
 */
export function meta(
  columns: Readonly<Record<string, string>>,
  partitionColumns: readonly string[] = [],
  configuration: Readonly<Record<string, string>> = {},
): Metadata {
  const schemaString = JSON.stringify({
    type: 'struct',
    fields: Object.entries(columns).map(([name, type]) => ({ name, type, nullable: true, metadata: {} })),
  })
  return createMetadata({
    id: 'table-id',
    format: { provider: 'parquet', options: {} },
    schemaString,
    partitionColumns,
    configuration,
  })
}

/** A reader-3 / writer-7 protocol with deletion vectors. */
export const DV_PROTOCOL: Protocol = createProtocol({
  minReaderVersion: 3,
  minWriterVersion: 7,
  readerFeatures: ['deletionVectors'],
  writerFeatures: ['deletionVectors'],
})

/** A legacy protocol without table features. */
export const LEGACY_PROTOCOL: Protocol = createProtocol({ minReaderVersion: 1, minWriterVersion: 2 })

/** A metadata whose table allows deletion vectors (and is Serializable, like OSS Delta). */
export function dvMeta(
  columns: Readonly<Record<string, string>> = { id: 'long' },
  partitionColumns: readonly string[] = [],
): Metadata {
  return meta(columns, partitionColumns, {
    'delta.enableDeletionVectors': 'true',
    'delta.isolationLevel': 'Serializable',
  })
}

// === File actions ===

/** Options of {@link add} and {@link remove}. */
export interface FileOptions {
  readonly part?: NullableStringMap
  readonly dataChange?: boolean
  readonly dv?: DeletionVectorDescriptor
  readonly stats?:
    | string
    | { numRecords?: number; min?: Record<string, unknown>; max?: Record<string, unknown> }
  readonly tags?: NullableStringMap
  readonly size?: bigint
  readonly deletionTimestamp?: bigint
}

function statsText(stats: FileOptions['stats']): string | undefined {
  if (stats === undefined || typeof stats === 'string') return stats
  const out: Record<string, unknown> = {}
  if (stats.numRecords !== undefined) out.numRecords = stats.numRecords
  if (stats.min !== undefined) out.minValues = stats.min
  if (stats.max !== undefined) out.maxValues = stats.max
  if (stats.min !== undefined) out.nullCount = Object.fromEntries(Object.keys(stats.min).map((k) => [k, 0]))
  return JSON.stringify(out)
}

/** An `add` payload. */
export function add(path: string, o: FileOptions = {}): AddFile {
  return createAddFile({
    path,
    partitionValues: o.part ?? {},
    size: o.size ?? 100n,
    modificationTime: 1n,
    dataChange: o.dataChange ?? true,
    stats: statsText(o.stats),
    tags: o.tags,
    deletionVector: o.dv,
  })
}

/** A `remove` payload. */
export function remove(path: string, o: FileOptions = {}): RemoveFile {
  return createRemoveFile({
    path,
    deletionTimestamp: o.deletionTimestamp ?? 10n,
    dataChange: o.dataChange ?? true,
    extendedFileMetadata: true,
    partitionValues: o.part ?? {},
    size: o.size ?? 100n,
    stats: statsText(o.stats),
    tags: o.tags,
    deletionVector: o.dv,
  })
}

/** The tombstone of an `add`, as a DML or OPTIMIZE writes it. */
export function removeOf(
  f: AddFile,
  o: { dataChange?: boolean; tags?: NullableStringMap; ts?: bigint } = {},
): RemoveFile {
  return createRemoveFile({
    path: f.path,
    deletionTimestamp: o.ts ?? 10n,
    dataChange: o.dataChange ?? true,
    extendedFileMetadata: true,
    partitionValues: f.partitionValues,
    size: f.size,
    stats: f.stats,
    tags: o.tags ?? f.tags,
    deletionVector: f.deletionVector,
  })
}

/** Wraps payloads into actions. */
export const A = {
  add: (f: AddFile): Action => createAction('add', f),
  remove: (r: RemoveFile): Action => createAction('remove', r),
  metadata: (m: Metadata): Action => createAction('metaData', m),
  protocol: (p: Protocol): Action => createAction('protocol', p),
  txn: (appId: string, version: bigint): Action => createAction('txn', { appId, version }),
  domain: (domain: string, configuration = '{}'): Action =>
    createAction('domainMetadata', { domain, configuration, removed: false }),
  commitInfo: (operation: string, isBlindAppend?: boolean): Action =>
    createAction('commitInfo', isBlindAppend === undefined ? { operation } : { operation, isBlindAppend }),
}

// === Deletion vectors ===

/** A bitmap of the given row positions. */
export function bitmap(positions: readonly number[]): RoaringBitmapArray {
  return RoaringBitmapArray.fromPositions(positions)
}

/** An inline descriptor of the given positions. */
export function inlineDv(positions: readonly number[]): DeletionVectorDescriptor {
  return createInlineDescriptor(bitmap(positions))
}

/**
 * A store of file-backed ('u') deletion vectors for tests: `dv(name, positions)` makes a
 * descriptor and remembers its bitmap, `facts()` hands the bitmaps to the checker as the loop
 * would after fetching them.
 */
export class DvStore {
  readonly #bitmaps = new Map<string, RoaringBitmapArray>()

  dv(name: string, positions: readonly number[]): DeletionVectorDescriptor {
    const id = name.padEnd(20, '0').slice(0, 20)
    const b = bitmap(positions)
    const d: DeletionVectorDescriptor = Object.freeze({
      storageType: 'u',
      pathOrInlineDv: id,
      offset: 1,
      sizeInBytes: 40,
      cardinality: b.cardinalityBigInt,
    })
    this.#bitmaps.set(`u${id}@1`, b)
    return d
  }

  facts(rowMatches: ReadonlyMap<string, boolean> = new Map()): FetchedFacts {
    return { deletionVectors: new Map(this.#bitmaps), rowMatches }
  }
}

// === Reads, transactions, winners ===

/** A recorded read of `where` (full scan when omitted), split on the table's partition columns. */
export function readOf(where: string | undefined, metadata: Metadata, exact?: string): ReadPredicate {
  if (where === undefined) return createReadPredicate({})
  const parts = splitPartitionPredicate(parsePredicate(where), metadata.partitionColumns)
  const out: {
    partitionPredicate?: Expression
    dataPredicate?: Expression
    exactDataPredicate?: Expression
  } = {}
  if (parts.partition !== undefined) out.partitionPredicate = parts.partition
  if (parts.data !== undefined) out.dataPredicate = parts.data
  if (exact !== undefined) out.exactDataPredicate = parsePredicate(exact)
  return createReadPredicate(out)
}

/** The files a read of `where` scans: those its partition part may select. */
export function filesRead(read: ReadPredicate, files: readonly AddFile[], metadata: Metadata): AddFile[] {
  const matcher = createReadMatcher(metadata)
  return files.filter((f) => matcher.partitionMayMatch(read, f))
}

/** How a loser read the table. */
export type ReadSpec =
  | { readonly scan: string | undefined }
  | { readonly predicateOnly: string }
  | { readonly wholeTable: true }

/** Options of {@link loser}. */
export interface LoserSpec {
  readonly metadata: Metadata
  readonly protocol?: Protocol
  readonly files?: readonly AddFile[]
  readonly reads?: readonly ReadSpec[]
  readonly readAppIds?: readonly string[]
  readonly actions: readonly Action[]
  readonly operation?: string
  readonly readVersion?: bigint
}

/** A losing transaction: reads performed against `files`, then `actions` to commit. */
export function loser(spec: LoserSpec): TransactionInfo {
  const readPredicates: ReadPredicate[] = []
  const readFiles: AddFile[] = []
  let readWholeTable = false
  for (const r of spec.reads ?? []) {
    if ('wholeTable' in r) {
      readWholeTable = true
      readPredicates.push(createReadPredicate({}))
    } else if ('predicateOnly' in r) {
      readPredicates.push(readOf(r.predicateOnly, spec.metadata))
    } else {
      const read = readOf(r.scan, spec.metadata)
      readPredicates.push(read)
      readFiles.push(...filesRead(read, spec.files ?? [], spec.metadata))
    }
  }
  const operation = spec.operation ?? 'TRUNCATE'
  return createTransactionInfo({
    readVersion: spec.readVersion ?? 1n,
    operation,
    isolationLevel: chooseIsolationLevel({
      actions: spec.actions,
      configuration: spec.metadata.configuration,
      operation,
    }),
    readPredicates,
    readFiles,
    readWholeTable,
    readAppIds: spec.readAppIds ?? [],
    actions: spec.actions,
    metadata: spec.metadata,
    protocol: spec.protocol ?? LEGACY_PROTOCOL,
  })
}

/**
 * A winning commit. `blind` says whether the winner recorded itself as a blind append (it only
 * added files and read nothing); by default a winner that only adds is one.
 */
export function winner(
  version: bigint,
  actions: readonly Action[],
  o: { operation?: string; blind?: boolean } = {},
): WinningCommitSummary {
  const onlyAdds = actions.every((a) => !('remove' in a))
  const blind = o.blind ?? onlyAdds
  return summarizeWinningCommit(version, [A.commitInfo(o.operation ?? 'TRUNCATE', blind), ...actions])
}

/** Flags with the given switches on. */
export function flagsWith(on: Partial<ConflictFlags>): ConflictFlags {
  return { ...DEFAULT_CONFLICT_FLAGS, ...on }
}

/** Runs the checker with the given flags and facts (baseline when omitted). */
export function check(
  txn: TransactionInfo,
  w: WinningCommitSummary,
  flags: ConflictFlags = DEFAULT_CONFLICT_FLAGS,
  fetched: FetchedFacts = { deletionVectors: new Map(), rowMatches: new Map() },
) {
  return checkConflicts(txn, w, flags, fetched)
}

/** The error class name of a result, or 'ok'. */
export function outcomeOf(result: ReturnType<typeof checkConflicts>): string {
  return result.kind === 'ok' ? 'ok' : result.error.constructor.name
}
