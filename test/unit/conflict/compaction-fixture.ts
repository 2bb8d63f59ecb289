/**
 * The OPTIMIZE-vs-DML setting of scenarios.md suite OCR, at the action level: T(300,3) is three
 * 100-row files `s0`, `s1`, `s2` (file k holds ids [100k, 100k + 100), physical row r of file k is
 * id 100k + r), compacted into `out.parquet`.
 */

import { decodeInlineDv } from '../../../src/dv/descriptor.js'
import {
  type Action,
  type AddFile,
  createAddFile,
  type DeletionVectorDescriptor,
  type RemoveFile,
} from '../../../src/protocol/actions.js'
import { planCompositionTags, withCompositionTags } from '../../../src/protocol/composition-tags.js'
import { A, add, DV_PROTOCOL, dvMeta, loser, removeOf, winner } from './factories.js'

/** Source k of T(300,3), optionally with a read-time deletion vector. */
export function source(k: number, dv?: DeletionVectorDescriptor, rows = 100): AddFile {
  return add(`s${k}.parquet`, {
    stats: { numRecords: rows, min: { id: 100 * k }, max: { id: 100 * k + rows - 1 } },
    ...(dv ? { dv } : {}),
  })
}

/** The output of compacting `sources` (physical rows = their live rows). */
export function output(sources: readonly AddFile[], path = 'out.parquet'): AddFile {
  const live = sources.reduce((n, s) => n + 100 - Number(s.deletionVector?.cardinality ?? 0n), 0)
  return add(path, { dataChange: false, stats: { numRecords: live, min: { id: 0 }, max: { id: 299 } } })
}

/**
 * An OPTIMIZE's actions: tagged (unless `tagged` is false, as ZORDER or repartition write)
 * `dataChange=false` tombstones of the sources, then the output.
 */
export function compaction(
  sources: readonly AddFile[],
  o: { tagged?: boolean; out?: AddFile } = {},
): Action[] {
  const out = o.out ?? output(sources)
  const tags = o.tagged === false ? undefined : planCompositionTags(out.path, sources)
  const removes = sources.map((s) => {
    const tomb: RemoveFile = removeOf(s, { dataChange: false })
    const t = tags?.get(s.path)
    return A.remove(t ? withCompositionTags(tomb, t) : tomb)
  })
  return [...removes, A.add(out)]
}

/** A losing OPTIMIZE that read and compacts `sources`. */
export function optimizeLoser(sources: readonly AddFile[], actions: readonly Action[] = compaction(sources)) {
  return loser({
    metadata: dvMeta(),
    protocol: DV_PROTOCOL,
    files: sources,
    reads: [{ scan: undefined }],
    actions,
    operation: 'OPTIMIZE',
  })
}

/** A DV-based DML on `file`: remove(file) + add(file, post) (+ an UPDATE image file). */
export function dvUpdate(file: AddFile, post: DeletionVectorDescriptor, image?: AddFile): Action[] {
  const actions = [A.remove(removeOf(file)), A.add(createAddFile({ ...file, deletionVector: post }))]
  if (image) actions.push(A.add(image))
  return actions
}

/** A winning DML commit. */
export function dmlWinner(version: bigint, actions: readonly Action[], operation = 'DELETE') {
  return winner(version, actions, { operation, blind: false })
}

/** The positions of an inline deletion vector. */
export function rowsOf(dv: DeletionVectorDescriptor | undefined): number[] {
  if (dv === undefined) return []
  return decodeInlineDv(dv).toArray()
}
