/**
 * The quick way from a decoded checkpoint row to its `add` or `remove` action.
 *
 * Nearly every row of a large checkpoint is a file action, which the engine decoded with the
 * protocol's types (exact 64-bit integers as bigint, maps as plain objects of strings) or which
 * `JSON.parse` decoded from its JSON text (integers as safe numbers). Such a row is checked here
 * field by field with plain type tests and built with the same factories the action reader
 * calls, so the action is the one `parseCheckpointRow` gives, field for field.
 * Any row this does not recognise (another shape, a missing field, an unexpected type) is left
 * to the action reader, which accepts it or refuses it with its own message.
 */
import {
  type Action,
  createAddFile,
  createDeletionVectorDescriptor,
  createRemoveFile,
  type DeletionVectorDescriptor,
  type NullableStringMap,
} from '../protocol/actions.js'

/** What {@link decodedFileAction} returns for a row it leaves to the action reader. */
export const NOT_DECODED: unique symbol = Symbol('not decoded')

/** The one frozen empty map the files without partition values (or tags) share. */
const EMPTY_MAP: NullableStringMap = Object.freeze({})

/**
 * Frozen maps already checked, by their entries: the files of one partition share one map
 * instead of holding a copy each. Bounded; emptied when full.
 */
const checkedMaps = new Map<string, NullableStringMap>()
const CHECKED_MAPS_MAX = 4096

/** A map of strings and nulls, or `undefined` when `value` is not one. */
function stringMap(value: unknown): NullableStringMap | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  if (Array.isArray(value) || value instanceof Map || Object.getPrototypeOf(value) !== Object.prototype) {
    return undefined
  }
  const obj = value as Record<string, unknown>
  let id = ''
  for (const k in obj) {
    const v = obj[k]
    if (typeof v === 'string') id += `${k.length}:${k}=${v.length}:${v};`
    else if (v === null) id += `${k.length}:${k}!;`
    else return undefined
  }
  if (id === '') return EMPTY_MAP
  let map = checkedMaps.get(id)
  if (map === undefined) {
    // The same copy the reader makes: a frozen plain object of the same entries, in their order.
    map = Object.freeze(Object.fromEntries(Object.entries(obj))) as NullableStringMap
    if (checkedMaps.size >= CHECKED_MAPS_MAX) checkedMaps.clear()
    checkedMaps.set(id, map)
  }
  return map
}

/**
 * A 64-bit field as the reader takes it: a bigint in range, or a safe integer number (what
 * `JSON.parse` gives for a row's JSON text), as a bigint; `NOT_DECODED` for anything else.
 */
function long(v: unknown): bigint | typeof NOT_DECODED {
  if (typeof v === 'bigint') return BigInt.asIntN(64, v) === v ? v : NOT_DECODED
  return Number.isSafeInteger(v) ? BigInt(v as number) : NOT_DECODED
}

function isInt(v: unknown): v is number {
  // The reader turns -0 into 0; the quick way leaves it to the reader.
  return typeof v === 'number' && (v | 0) === v && !Object.is(v, -0)
}

/** `undefined` for a null or absent field, the value for a long, `NOT_DECODED` otherwise. */
function optLong(v: unknown): bigint | undefined | typeof NOT_DECODED {
  if (v === null || v === undefined) return undefined
  return long(v)
}

function optText(v: unknown): string | undefined | typeof NOT_DECODED {
  if (v === null || v === undefined) return undefined
  return typeof v === 'string' ? v : NOT_DECODED
}

function optMap(v: unknown): NullableStringMap | undefined | typeof NOT_DECODED {
  if (v === null || v === undefined) return undefined
  return stringMap(v) ?? NOT_DECODED
}

/** The descriptor, `undefined` for none, `NOT_DECODED` for anything the reader must judge. */
function optDeletionVector(v: unknown): DeletionVectorDescriptor | undefined | typeof NOT_DECODED {
  if (v === null || v === undefined) return undefined
  if (typeof v !== 'object') return NOT_DECODED
  const dv = v as Record<string, unknown>
  const { storageType, pathOrInlineDv, offset, sizeInBytes, cardinality, maxRowIndex } = dv
  if (storageType !== 'u' && storageType !== 'i' && storageType !== 'p') return NOT_DECODED
  if (typeof pathOrInlineDv !== 'string' || !isInt(sizeInBytes)) return NOT_DECODED
  if (offset !== null && offset !== undefined && !isInt(offset)) return NOT_DECODED
  const count = long(cardinality)
  const max = optLong(maxRowIndex)
  if (count === NOT_DECODED || max === NOT_DECODED) return NOT_DECODED
  return createDeletionVectorDescriptor({
    storageType,
    pathOrInlineDv,
    offset: offset ?? undefined,
    sizeInBytes,
    cardinality: count,
    maxRowIndex: max,
  })
}

/**
 * The `add` or `remove` action of a row's payload: the fields both kinds have are checked once,
 * then those of the kind (an `add` requires its size, modification time and partition values).
 */
function decodedFile(kind: 'add' | 'remove', o: Record<string, unknown>): Action | typeof NOT_DECODED {
  const { path, dataChange } = o
  if (typeof path !== 'string' || typeof dataChange !== 'boolean') return NOT_DECODED
  const stats = optText(o.stats)
  const tags = optMap(o.tags)
  const deletionVector = optDeletionVector(o.deletionVector)
  const baseRowId = optLong(o.baseRowId)
  const defaultRowCommitVersion = optLong(o.defaultRowCommitVersion)
  if (
    stats === NOT_DECODED ||
    tags === NOT_DECODED ||
    deletionVector === NOT_DECODED ||
    baseRowId === NOT_DECODED ||
    defaultRowCommitVersion === NOT_DECODED
  ) {
    return NOT_DECODED
  }
  if (kind === 'add') {
    const size = long(o.size)
    const modificationTime = long(o.modificationTime)
    const partitionValues = stringMap(o.partitionValues)
    const clusteringProvider = optText(o.clusteringProvider)
    if (
      size === NOT_DECODED ||
      modificationTime === NOT_DECODED ||
      partitionValues === undefined ||
      clusteringProvider === NOT_DECODED
    ) {
      return NOT_DECODED
    }
    const add = createAddFile({
      path,
      partitionValues,
      size,
      modificationTime,
      dataChange,
      stats,
      tags,
      deletionVector,
      baseRowId,
      defaultRowCommitVersion,
      clusteringProvider,
    })
    return Object.freeze({ add })
  }
  const extendedFileMetadata = o.extendedFileMetadata ?? undefined
  const deletionTimestamp = optLong(o.deletionTimestamp)
  const partitionValues = optMap(o.partitionValues)
  const size = optLong(o.size)
  if (
    (extendedFileMetadata !== undefined && typeof extendedFileMetadata !== 'boolean') ||
    deletionTimestamp === NOT_DECODED ||
    partitionValues === NOT_DECODED ||
    size === NOT_DECODED
  ) {
    return NOT_DECODED
  }
  const remove = createRemoveFile({
    path,
    deletionTimestamp,
    dataChange,
    extendedFileMetadata,
    partitionValues,
    size,
    stats,
    tags,
    deletionVector,
    baseRowId,
    defaultRowCommitVersion,
  })
  return Object.freeze({ remove })
}

/**
 * The action of a decoded checkpoint row that holds exactly one key, `add` or `remove`, whose
 * fields all have their protocol types; {@link NOT_DECODED} for any other row.
 *
 * @param row - a decoded checkpoint row
 * @returns the frozen action, equal to the one `parseCheckpointRow` gives for the row
 */
export function decodedFileAction(row: Readonly<Record<string, unknown>>): Action | typeof NOT_DECODED {
  let kind: string | undefined
  for (const key in row) {
    if (kind !== undefined) return NOT_DECODED
    kind = key
  }
  const payload = kind === undefined ? undefined : row[kind]
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return NOT_DECODED
  if (kind !== 'add' && kind !== 'remove') return NOT_DECODED
  return decodedFile(kind, payload as Record<string, unknown>)
}
