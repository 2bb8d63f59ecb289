/**
 * The compaction composition tags (rlc-spec 7.4, 7.5): where each compacted source's live rows
 * landed in the OPTIMIZE output, persisted on the source's tombstone as
 *
 * - `compactedInto`: a JSON array holding the output's path, e.g. `["part-0.parquet"]`;
 * - `compactionInfo`: a JSON array of one object
 *   `{"rowOffsetInTarget": <first output row of the source>, "sourceNumPhysicalRecords": <rows>}`.
 *
 * The source's read-time deletion vector stays on the tombstone, so the live run length is
 * `sourceNumPhysicalRecords - |tombstone DV|` and the gaps inside the run are rebuilt from that DV.
 *
 * A losing OPTIMIZE that remaps a winner's deletions (Case 4a) re-points the source's tombstone at
 * the winner's post-image, whose deletion vector is no longer the one the compaction read. The two
 * tags above would then describe a wrong run to any reader that derives the run from the
 * tombstone's DV, so they are replaced by one tag of this engine's, `remappedCompactionInfo`: a
 * JSON object with `compactedInto` (the output path), `rowOffsetInTarget`,
 * `sourceNumPhysicalRecords` and `readDeletionVector` (the deletion vector the compaction read, as
 * a DV descriptor, or null when the source had none). The run is then derived from
 * `readDeletionVector`, and the tombstone's DV must contain it.
 */
import { InvalidTableError } from '../errors/index.js'
import { parseDeletionVectorDescriptor } from './action-json.js'
import {
  type AddFile,
  createRemoveFile,
  type DeletionVectorDescriptor,
  type NullableStringMap,
  type RemoveFile,
} from './actions.js'
import { normalizeJsonValue, parseJsonText, stringifyJson } from './json-text.js'
import { parseStats } from './stats.js'

/** Tag naming the compaction output of a source. */
export const COMPACTED_INTO_TAG = 'compactedInto'
/** Tag holding the source's run in the output. */
export const COMPACTION_INFO_TAG = 'compactionInfo'
/** Tag holding the run of a source whose tombstone a forward remap re-pointed. */
export const REMAPPED_COMPACTION_INFO_TAG = 'remappedCompactionInfo'

/** Where a compacted source's live rows sit in its output. */
export interface SourceComposition {
  /** The output file's path, as in its `add`. */
  readonly outputPath: string
  /** Output row index of the source's first live row. */
  readonly outputStart: number
  /** The source's live rows at compaction time, written contiguously from `outputStart`. */
  readonly liveCount: number
  /** The source's physical row count (live rows plus the rows of `readDeletionVector`). */
  readonly physicalRecords: number
  /**
   * The deletion vector the compaction read (the gaps of the run), undefined for none. It is the
   * tombstone's own unless a forward remap re-pointed the tombstone since.
   */
  readonly readDeletionVector: DeletionVectorDescriptor | undefined
}

/**
 * Reads the composition of one compacted source from its tombstone: from the `compactedInto` and
 * `compactionInfo` tags, or from `remappedCompactionInfo` on a re-pointed tombstone.
 *
 * Unknown fields are ignored. Anything the contiguous remap cannot model gives `undefined`, and
 * the caller falls back to the file-level checks: a missing tag, malformed JSON, an output not in
 * `allowedOutputPaths`, more than one output or entry (a source split over several runs), a
 * missing, negative or non-integer number, a read-time deletion vector larger than the physical
 * count or than the tombstone's, or both tag forms at once.
 *
 * @param remove - the source's tombstone
 * @param allowedOutputPaths - the paths of the outputs added by the same commit
 * @returns the composition, or undefined
 */
export function parseOptimizeSourceComposition(
  remove: RemoveFile,
  allowedOutputPaths: ReadonlySet<string>,
): SourceComposition | undefined {
  const into = remove.tags?.[COMPACTED_INTO_TAG]
  const info = remove.tags?.[COMPACTION_INFO_TAG]
  const remapped = remove.tags?.[REMAPPED_COMPACTION_INFO_TAG]
  if (typeof remapped === 'string') {
    if (into !== undefined || info !== undefined) return undefined
    return parseRemappedComposition(remapped, remove, allowedOutputPaths)
  }
  if (typeof into !== 'string' || typeof info !== 'string') return undefined
  const outputs = parseJsonArray(into)
  const entries = parseJsonArray(info)
  if (outputs?.length !== 1 || entries?.length !== 1) return undefined
  const entry = entries[0]
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return undefined
  const fields = entry as Record<string, unknown>
  return composition(
    outputs[0],
    fields.rowOffsetInTarget,
    fields.sourceNumPhysicalRecords,
    remove.deletionVector,
    allowedOutputPaths,
  )
}

/**
 * The tag that replaces the composition tags on a tombstone re-pointed by a forward remap.
 *
 * @param run - the source's composition, as parsed from the tombstone before the re-point
 * @returns the tag
 */
export function remappedCompositionTag(run: SourceComposition): Readonly<Record<string, string>> {
  const dv = run.readDeletionVector
  return Object.freeze({
    [REMAPPED_COMPACTION_INFO_TAG]: stringifyJson({
      compactedInto: run.outputPath,
      rowOffsetInTarget: run.outputStart,
      sourceNumPhysicalRecords: run.physicalRecords,
      readDeletionVector:
        dv === undefined
          ? null
          : {
              storageType: dv.storageType,
              pathOrInlineDv: dv.pathOrInlineDv,
              offset: dv.offset,
              sizeInBytes: dv.sizeInBytes,
              cardinality: dv.cardinality,
              maxRowIndex: dv.maxRowIndex,
            },
    }),
  })
}

/**
 * A tombstone re-pointed by a forward remap, tagged with the source's run: the composition tags
 * the re-pointed tombstone inherited are dropped and `remappedCompactionInfo` is set.
 *
 * @param remove - the re-pointed tombstone (the tombstone of the winner's post-image)
 * @param run - the source's composition before the re-point
 * @returns the tagged tombstone
 */
export function withRemappedComposition(remove: RemoveFile, run: SourceComposition): RemoveFile {
  const kept: Record<string, string | null> = {}
  for (const [k, v] of Object.entries(remove.tags ?? {})) {
    if (k !== COMPACTED_INTO_TAG && k !== COMPACTION_INFO_TAG && k !== REMAPPED_COMPACTION_INFO_TAG)
      kept[k] = v
  }
  return createRemoveFile({ ...remove, tags: { ...kept, ...remappedCompositionTag(run) } })
}

/**
 * The read-time deletion vector a re-pointed tombstone's `remappedCompactionInfo` names, so that
 * VACUUM keeps its file as long as the tombstone is retained.
 *
 * @param remove - a tombstone
 * @returns the descriptor, or undefined when the tag is absent, names none, or is malformed
 */
export function remappedReadDeletionVector(remove: RemoveFile): DeletionVectorDescriptor | undefined {
  const text = remove.tags?.[REMAPPED_COMPACTION_INFO_TAG]
  if (typeof text !== 'string') return undefined
  return readDeletionVectorField(text)?.descriptor
}

/**
 * The tags of one compacted source.
 *
 * @param outputPath - the output's path, as in its `add`
 * @param rowOffsetInTarget - the output row index of the source's first live row
 * @param sourceNumPhysicalRecords - the source's physical row count (live rows plus its DV's)
 * @returns the two tags
 */
export function compositionTags(
  outputPath: string,
  rowOffsetInTarget: number,
  sourceNumPhysicalRecords: number | bigint,
): Readonly<Record<string, string>> {
  return Object.freeze({
    [COMPACTED_INTO_TAG]: JSON.stringify([outputPath]),
    [COMPACTION_INFO_TAG]: `[{"rowOffsetInTarget":${rowOffsetInTarget},"sourceNumPhysicalRecords":${sourceNumPhysicalRecords}}]`,
  })
}

/**
 * Plans the composition tags of one compaction bin written into one output, with the sources in
 * write order (rlc-spec 7.3). The trust gate refuses (returns undefined, meaning "write plain
 * tombstones") unless every source has a physical row count in its stats, no source appears
 * twice, and, when the data plane reports what it wrote, each source's written row count equals
 * its live rows at read time.
 *
 * @param outputPath - the output's path, as in its `add`
 * @param sources - the bin's sources as read (with their read-time DVs), in write order
 * @param writtenRowCounts - rows the data plane wrote per source, in the same order, if known
 * @returns source path to the tags to merge into its tombstone, or undefined
 */
export function planCompositionTags(
  outputPath: string,
  sources: readonly AddFile[],
  writtenRowCounts?: readonly number[],
): ReadonlyMap<string, Readonly<Record<string, string>>> | undefined {
  if (sources.length === 0) return undefined
  if (writtenRowCounts !== undefined && writtenRowCounts.length !== sources.length) return undefined
  const out = new Map<string, Readonly<Record<string, string>>>()
  let position = 0
  for (let i = 0; i < sources.length; i++) {
    const source = sources[i]!
    const physical = parseStats(source.stats)?.numRecords
    if (physical === undefined || out.has(source.path)) return undefined
    const live = physical - (source.deletionVector?.cardinality ?? 0n)
    if (live < 0n || live > BigInt(Number.MAX_SAFE_INTEGER)) return undefined
    const written = writtenRowCounts?.[i]
    if (written !== undefined && BigInt(written) !== live) return undefined
    out.set(source.path, compositionTags(outputPath, position, physical))
    position += Number(live)
  }
  return out
}

/**
 * A tombstone with composition tags merged into its tags.
 *
 * @param remove - the source's tombstone
 * @param tags - its composition tags
 * @returns the tagged tombstone
 */
export function withCompositionTags(remove: RemoveFile, tags: Readonly<Record<string, string>>): RemoveFile {
  const merged: NullableStringMap = { ...(remove.tags ?? {}), ...tags }
  return createRemoveFile({ ...remove, tags: merged })
}

// === Internals ===

function parseRemappedComposition(
  text: string,
  remove: RemoveFile,
  allowedOutputPaths: ReadonlySet<string>,
): SourceComposition | undefined {
  const parsed = readDeletionVectorField(text)
  if (parsed === undefined) return undefined
  const { fields, descriptor: read } = parsed
  // The tombstone removes what the winner left: it holds at least the rows the compaction skipped.
  const tombstoneCardinality = remove.deletionVector?.cardinality ?? 0n
  if ((read?.cardinality ?? 0n) > tombstoneCardinality) return undefined
  return composition(
    fields.compactedInto,
    normalizeJsonValue(fields.rowOffsetInTarget),
    normalizeJsonValue(fields.sourceNumPhysicalRecords),
    read,
    allowedOutputPaths,
  )
}

/** The tag's fields and its read-time descriptor, or undefined when malformed. */
function readDeletionVectorField(
  text: string,
): { fields: Record<string, unknown>; descriptor: DeletionVectorDescriptor | undefined } | undefined {
  let raw: unknown
  try {
    raw = parseJsonText(text)
  } catch {
    return undefined
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return undefined
  const fields = raw as Record<string, unknown>
  if (fields.readDeletionVector === null || fields.readDeletionVector === undefined)
    return { fields, descriptor: undefined }
  try {
    return { fields, descriptor: parseDeletionVectorDescriptor(fields.readDeletionVector) }
  } catch (err) {
    if (err instanceof InvalidTableError) return undefined
    throw err
  }
}

function composition(
  outputPath: unknown,
  outputStart: unknown,
  physical: unknown,
  read: DeletionVectorDescriptor | undefined,
  allowedOutputPaths: ReadonlySet<string>,
): SourceComposition | undefined {
  if (typeof outputPath !== 'string' || !allowedOutputPaths.has(outputPath)) return undefined
  if (!isCount(outputStart) || !isCount(physical)) return undefined
  const liveCount = BigInt(physical) - (read === undefined ? 0n : read.cardinality)
  if (liveCount < 0n) return undefined
  return Object.freeze({
    outputPath,
    outputStart,
    liveCount: Number(liveCount),
    physicalRecords: physical,
    readDeletionVector: read,
  })
}

function parseJsonArray(text: string): unknown[] | undefined {
  try {
    const v: unknown = JSON.parse(text)
    return Array.isArray(v) ? v : undefined
  } catch {
    return undefined
  }
}

function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0
}

/**
 * Whether a commit rewrote files with their rows permuted (a Z-order or clustering OPTIMIZE):
 * its `commitInfo.operationParameters` name a non-empty `zOrderBy` or `clusterBy` list. Offsets
 * never describe where such a commit's rows went, whatever tags its tombstones carry (design
 * beyond-rlc S11); unparsable parameters count as permuting.
 *
 * @param commitInfo - the commit's `commitInfo`, if any
 * @returns true when the rows were permuted
 */
export function permutesRows(
  commitInfo: { readonly operationParameters?: Readonly<Record<string, unknown>> } | undefined,
): boolean {
  const params = commitInfo?.operationParameters
  if (params === undefined) return false
  for (const key of ['zOrderBy', 'clusterBy']) {
    const raw = params[key]
    if (raw === undefined || raw === null) continue
    if (Array.isArray(raw)) {
      if (raw.length > 0) return true
      continue
    }
    if (typeof raw !== 'string') return true
    try {
      const parsed: unknown = JSON.parse(raw)
      if (!Array.isArray(parsed) || parsed.length > 0) return true
    } catch {
      return true
    }
  }
  return false
}
