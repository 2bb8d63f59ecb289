/**
 * Deletion-vector access for the reconciliations: identity of descriptors, the bitmaps behind
 * them (decoded inline, or handed in by the loop), and the descriptors of new ones.
 */
import { createInlineDescriptor, decodeInlineDv, EMPTY_DV_DESCRIPTOR } from '../dv/descriptor.js'
import { RoaringBitmapArray } from '../dv/roaring-bitmap-array.js'
import type { Action, DeletionVectorDescriptor } from '../protocol/actions.js'
import type { FetchedFacts } from './fetched-facts.js'
import { type TransactionInfo, withActions } from './transaction-info.js'

/**
 * The unique id of a deletion vector (Delta's legacy form: storage type, path or inline data,
 * then `@offset` when there is an offset). Descriptors with the same id denote the same bitmap.
 *
 * @param dv - a descriptor, or undefined for "no deletion vector"
 * @returns the id, or undefined when `dv` is undefined
 */
export function dvUniqueId(dv: DeletionVectorDescriptor | undefined): string | undefined {
  if (dv === undefined) return undefined
  return dv.offset === undefined
    ? `${dv.storageType}${dv.pathOrInlineDv}`
    : `${dv.storageType}${dv.pathOrInlineDv}@${dv.offset}`
}

/**
 * Whether a descriptor deletes nothing (absent, or cardinality 0).
 *
 * @param dv - a descriptor or undefined
 * @returns true when it denotes the empty set
 */
export function isEmptyDv(dv: DeletionVectorDescriptor | undefined): boolean {
  return dv === undefined || dv.cardinality === 0n
}

/**
 * Whether two descriptors denote the same deletion vector: both empty, or the same unique id.
 *
 * @param a - a descriptor or undefined
 * @param b - a descriptor or undefined
 * @returns true when they are the same
 */
export function sameDeletionVector(
  a: DeletionVectorDescriptor | undefined,
  b: DeletionVectorDescriptor | undefined,
): boolean {
  if (isEmptyDv(a) && isEmptyDv(b)) return true
  return !isEmptyDv(a) && !isEmptyDv(b) && dvUniqueId(a) === dvUniqueId(b)
}

/**
 * Whether the loop must load a descriptor's bitmap (it is neither empty nor inline).
 *
 * @param dv - a descriptor or undefined
 * @returns true when the bitmap lives in a file
 */
export function needsFetch(dv: DeletionVectorDescriptor | undefined): dv is DeletionVectorDescriptor {
  return !isEmptyDv(dv) && dv!.storageType !== 'i'
}

/**
 * The bitmap of a descriptor: empty for none, decoded for inline ones, looked up among the
 * fetched ones otherwise. A fetched bitmap whose cardinality differs from the descriptor's is not
 * trusted.
 *
 * @param dv - a descriptor or undefined
 * @param fetched - the bitmaps the loop loaded
 * @returns the bitmap, or undefined when it is not available or not trustworthy
 */
export function readDeletionVector(
  dv: DeletionVectorDescriptor | undefined,
  fetched: FetchedFacts,
): RoaringBitmapArray | undefined {
  if (isEmptyDv(dv)) return RoaringBitmapArray.empty()
  const descriptor = dv!
  let bitmap: RoaringBitmapArray | undefined
  if (descriptor.storageType === 'i') {
    try {
      bitmap = decodeInlineDv(descriptor)
    } catch {
      return undefined
    }
  } else {
    bitmap = fetched.deletionVectors.get(dvUniqueId(descriptor)!)
  }
  if (bitmap === undefined || bitmap.isDisposed || bitmap.cardinalityBigInt !== descriptor.cardinality)
    return undefined
  return bitmap
}

/**
 * The descriptor of a deletion vector created by a reconciliation: inline, or the EMPTY
 * descriptor for an empty set.
 *
 * @param bitmap - the deleted positions
 * @returns the descriptor
 */
export function newDeletionVectorDescriptor(bitmap: RoaringBitmapArray): DeletionVectorDescriptor {
  return bitmap.isEmpty ? EMPTY_DV_DESCRIPTOR : createInlineDescriptor(bitmap)
}

/**
 * Swaps deletion-vector descriptors in a transaction's actions, typically the inline descriptors
 * of {@link NewDeletionVector}s for the file-backed ones the loop wrote. Every `add` and `remove`
 * whose descriptor's unique id is a key of `replacements` gets the mapped descriptor.
 *
 * @param txn - the transaction
 * @param replacements - unique id of the descriptor to replace, to its replacement
 * @returns the updated transaction (the same value when nothing matched)
 */
export function replaceDeletionVectorDescriptors(
  txn: TransactionInfo,
  replacements: ReadonlyMap<string, DeletionVectorDescriptor>,
): TransactionInfo {
  let changed = false
  const actions = txn.actions.map((a): Action => {
    if ('add' in a && a.add.deletionVector !== undefined) {
      const next = replacements.get(dvUniqueId(a.add.deletionVector)!)
      if (next === undefined) return a
      changed = true
      return Object.freeze({ add: Object.freeze({ ...a.add, deletionVector: next }) })
    }
    if ('remove' in a && a.remove.deletionVector !== undefined) {
      const next = replacements.get(dvUniqueId(a.remove.deletionVector)!)
      if (next === undefined) return a
      changed = true
      return Object.freeze({ remove: Object.freeze({ ...a.remove, deletionVector: next }) })
    }
    return a
  })
  return changed ? withActions(txn, actions) : txn
}

/**
 * The created deletion vectors a transaction's actions still reference. A later reconcile may
 * replace a vector created against an earlier winner; only the ones still in use need a file.
 *
 * @param txn - the transaction after its last check
 * @param created - every vector the checks created
 * @returns those still referenced, in their original order
 */
export function newDeletionVectorsInUse<T extends { readonly descriptor: DeletionVectorDescriptor }>(
  txn: TransactionInfo,
  created: readonly T[],
): readonly T[] {
  const inUse = new Set<string>()
  for (const a of txn.actions) {
    if ('add' in a && a.add.deletionVector !== undefined) inUse.add(dvUniqueId(a.add.deletionVector)!)
    if ('remove' in a && a.remove.deletionVector !== undefined)
      inUse.add(dvUniqueId(a.remove.deletionVector)!)
  }
  return Object.freeze(created.filter((d) => inUse.has(dvUniqueId(d.descriptor)!)))
}
