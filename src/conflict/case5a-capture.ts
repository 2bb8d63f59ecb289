/**
 * What a permuting OPTIMIZE (Z-order) keeps of its own permutation while it writes (design
 * beyond-rlc 7.3, W4), for Case 5a to remap a winner's deletions with no data I/O: per source,
 * where each row that was live at read time landed, indexed by the row's live rank (its rank in
 * physical order among the rows the read-time deletion vector leaves).
 */
import type { DeletionVectorDescriptor } from '../protocol/actions.js'

/** Where one relocated source's live rows went. */
export interface RelocatedSource {
  /** The `add.path` of each output `outputIndex` can name, by that index. */
  readonly outputs: readonly string[]
  /** The deletion vector the OPTIMIZE read the source with (the gaps of its ranks); none: undefined. */
  readonly readDeletionVector: DeletionVectorDescriptor | undefined
  /** By live rank: the index in `outputs` of the row's output. */
  readonly outputIndex: Uint16Array | Uint32Array
  /** By live rank: the row's physical position in its output. */
  readonly outputRow: Uint32Array
}

/** The permutation of one permuting OPTIMIZE. */
export interface RelocationCapture {
  /** Relocated sources by `remove.path`; undefined when the permutation was not kept. */
  readonly sources: ReadonlyMap<string, RelocatedSource> | undefined
  /** Why the permutation was not kept, when it was not. */
  readonly notKept?: string | undefined
}
