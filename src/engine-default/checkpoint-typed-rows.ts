/**
 * Checkpoint `add` rows read as typed columns instead of JSON text.
 *
 * Nearly every row of a large checkpoint is an `add`, and turning each into a JSON line in DuckDB
 * only to parse it again in JavaScript was most of the cost of opening a large table. When the
 * `add` struct has the types the protocol gives its fields (as Spark, delta-rs and this library
 * write them), the rows whose required fields are all present are read field by field: exact
 * 64-bit integers as bigint, booleans, maps as JSON objects, and the path, partition values and
 * statistics together in one text (see {@link SEPARATOR}). Every other row, and every
 * row of a checkpoint typed otherwise, still arrives as its JSON line, so a malformed row fails
 * with the same message as before. The row object goes through the same action reader as a
 * parsed line does.
 */
import {
  type DuckDBDataChunk,
  type DuckDBStructType,
  type DuckDBType,
  DuckDBTypeId,
  type DuckDBVector,
} from '@duckdb/node-api'
import { sqlString } from './duckdb-runtime.js'

/** How the typed `add` rows of one query are selected and read. */
export interface TypedAddPlan {
  /** SQL: true for a row read from the typed columns (its JSON line is then not computed). */
  readonly condition: string
  /** SQL expressions of the typed columns, in the order {@link decodeTypedAdd} reads them. */
  readonly columns: readonly string[]
}

const MAP_TEXT = 'MAP(VARCHAR, VARCHAR)'

/** The fields every typed `add` row has (null in none of them), with their types. */
const REQUIRED: ReadonlyArray<readonly [string, string]> = [
  ['path', 'VARCHAR'],
  ['partitionValues', MAP_TEXT],
  ['size', 'BIGINT'],
  ['modificationTime', 'BIGINT'],
  ['dataChange', 'BOOLEAN'],
]

/** Optional fields read as columns when the struct has them, with their types. */
const OPTIONAL: ReadonlyArray<readonly [string, string]> = [
  ['stats', 'VARCHAR'],
  ['tags', MAP_TEXT],
  ['baseRowId', 'BIGINT'],
  ['defaultRowCommitVersion', 'BIGINT'],
  ['clusteringProvider', 'VARCHAR'],
]

/** The deletion vector's fields and types; `maxRowIndex` may be missing from the struct. */
const DV_FIELDS: ReadonlyArray<readonly [string, string]> = [
  ['storageType', 'VARCHAR'],
  ['pathOrInlineDv', 'VARCHAR'],
  ['offset', 'INTEGER'],
  ['sizeInBytes', 'INTEGER'],
  ['cardinality', 'BIGINT'],
  ['maxRowIndex', 'BIGINT'],
]

/**
 * The separator of the path, the partition values' JSON and the statistics in the one text
 * column that carries them: DuckDB hands each string over to JavaScript with a native call, so
 * one string per row instead of three is most of the saving on a large checkpoint. A path
 * holding it is left to the JSON reader; JSON text escapes it; the statistics come last, so they
 * may hold anything.
 */
const SEPARATOR = '\u0001'

/** The number of typed columns: the text, the other required and optional fields, the DV's. */
const TYPED_COLUMNS = 1 + 3 + 4 + DV_FIELDS.length

function fieldTypes(type: DuckDBType): Map<string, DuckDBType> | undefined {
  if (type.typeId !== DuckDBTypeId.STRUCT) return undefined
  const struct = type as DuckDBStructType
  const out = new Map<string, DuckDBType>()
  struct.entryNames.forEach((name, i) => {
    out.set(name, struct.entryTypes[i] as DuckDBType)
  })
  return out
}

function field(of: string, name: string): string {
  return `struct_extract(${of}, ${sqlString(name)})`
}

/**
 * Plans the typed reading of `add` rows, or `undefined` when the column's types differ from the
 * protocol's (every row is then read as JSON).
 *
 * @param addType - the type of the `add` column
 * @param before - the action columns that come before `add` in the JSON line's `coalesce` (a row
 *   setting one of them is read as that action, so it is never a typed add)
 * @returns the plan
 */
export function planTypedAdds(addType: DuckDBType, before: readonly string[]): TypedAddPlan | undefined {
  const types = fieldTypes(addType)
  if (types === undefined) return undefined
  const add = '"add"'
  const conditions = [`${add} IS NOT NULL`]
  for (const c of before) conditions.push(`"${c}" IS NULL`)
  const columns: string[] = []
  for (const [name, type] of REQUIRED) {
    if (types.get(name)?.toString() !== type) return undefined
    conditions.push(`${field(add, name)} IS NOT NULL`)
  }
  for (const [name, type] of OPTIONAL) {
    const t = types.get(name)
    if (t !== undefined && t.toString() !== type) return undefined
  }
  const dvType = types.get('deletionVector')
  const dvTypes = dvType === undefined ? undefined : fieldTypes(dvType)
  if (dvType !== undefined) {
    if (dvTypes === undefined) return undefined
    for (const [name, type] of DV_FIELDS) {
      const t = dvTypes.get(name)
      if ((t === undefined && name !== 'maxRowIndex') || (t !== undefined && t.toString() !== type)) {
        return undefined
      }
    }
    const dv = field(add, 'deletionVector')
    // A descriptor missing a required field (or an all-null struct) is left to the JSON reader.
    conditions.push(
      `(${dv} IS NULL OR (${field(dv, 'storageType')} IN ('u', 'i', 'p') AND ${field(dv, 'pathOrInlineDv')} IS NOT NULL AND ${field(dv, 'sizeInBytes')} IS NOT NULL AND ${field(dv, 'cardinality')} IS NOT NULL))`,
    )
  }
  // A row that needs its typed statistics converted (no JSON stats, a stats_parsed struct) goes
  // the JSON way, where such rows wait for the table schema.
  if (types.has('stats_parsed')) {
    conditions.push(
      types.has('stats')
        ? `(${field(add, 'stats')} IS NOT NULL OR ${field(add, 'stats_parsed')} IS NULL)`
        : `${field(add, 'stats_parsed')} IS NULL`,
    )
  }
  conditions.push(`strpos(${field(add, 'path')}, chr(1)) = 0`)
  const stats = types.has('stats') ? `coalesce(chr(1) || ${field(add, 'stats')}, '')` : `''`
  // Most tables are unpartitioned: an empty map's JSON is written as is rather than computed.
  const values = field(add, 'partitionValues')
  const valuesJson = `CASE WHEN cardinality(${values}) = 0 THEN '{}' ELSE to_json(${values}) END`
  columns.push(`${field(add, 'path')} || chr(1) || ${valuesJson} || ${stats}`)
  for (const name of ['size', 'modificationTime', 'dataChange']) columns.push(field(add, name))
  for (const [name, type] of OPTIONAL) {
    if (name === 'stats') continue
    if (!types.has(name)) columns.push('NULL')
    else columns.push(type === MAP_TEXT ? `to_json(${field(add, name)})` : field(add, name))
  }
  for (const [name] of DV_FIELDS) {
    columns.push(dvTypes?.has(name) === true ? field(field(add, 'deletionVector'), name) : 'NULL')
  }
  return { condition: conditions.join(' AND '), columns }
}

/** Parsed JSON objects of map texts already seen in one read (most files share their maps). */
export type MapTextCache = Map<string, unknown>

const MAP_CACHE_MAX = 4096

function mapFromText(text: string | null, cache: MapTextCache): unknown {
  if (text === null) return null
  let value = cache.get(text)
  if (value === undefined) {
    // DuckDB's JSON of a VARCHAR map: an object of strings and nulls, nothing JSON.parse rounds.
    value = JSON.parse(text)
    if (cache.size >= MAP_CACHE_MAX) cache.clear()
    cache.set(text, value)
  }
  return value
}

/**
 * Reads the typed `add` row `i` of a chunk into a decoded checkpoint row (`{ add: {...} }`, null
 * for a null field), the form the action reader takes.
 *
 * @param vectors - the chunk's typed columns, in the plan's order
 * @param i - the row
 * @param maps - the read's map-text cache (the objects it returns are read, never changed)
 * @returns the decoded row
 */
export function decodeTypedAdd(
  vectors: readonly DuckDBVector[],
  i: number,
  maps: MapTextCache,
): Readonly<Record<string, unknown>> {
  const v = vectors as readonly [DuckDBVector, ...DuckDBVector[]]
  const text = v[0].getItem(i) as string
  const afterPath = text.indexOf(SEPARATOR)
  const afterValues = text.indexOf(SEPARATOR, afterPath + 1)
  const storageType = (v[8] as DuckDBVector).getItem(i)
  const add: Record<string, unknown> = {
    path: text.slice(0, afterPath),
    partitionValues: mapFromText(
      afterValues < 0 ? text.slice(afterPath + 1) : text.slice(afterPath + 1, afterValues),
      maps,
    ),
    size: (v[1] as DuckDBVector).getItem(i),
    modificationTime: (v[2] as DuckDBVector).getItem(i),
    dataChange: (v[3] as DuckDBVector).getItem(i),
    stats: afterValues < 0 ? null : text.slice(afterValues + 1),
    tags: mapFromText((v[4] as DuckDBVector).getItem(i) as string | null, maps),
    deletionVector:
      storageType === null
        ? null
        : {
            storageType,
            pathOrInlineDv: (v[9] as DuckDBVector).getItem(i),
            offset: (v[10] as DuckDBVector).getItem(i),
            sizeInBytes: (v[11] as DuckDBVector).getItem(i),
            cardinality: (v[12] as DuckDBVector).getItem(i),
            maxRowIndex: (v[13] as DuckDBVector).getItem(i),
          },
    baseRowId: (v[5] as DuckDBVector).getItem(i),
    defaultRowCommitVersion: (v[6] as DuckDBVector).getItem(i),
    clusteringProvider: (v[7] as DuckDBVector).getItem(i),
  }
  return { add }
}

/**
 * The typed columns of a chunk, from column `first` on.
 *
 * @param chunk - a result chunk
 * @param first - the index of the plan's first column
 * @returns the vectors, in the plan's order
 */
export function typedAddVectors(chunk: DuckDBDataChunk, first: number): DuckDBVector[] {
  const out: DuckDBVector[] = []
  for (let c = 0; c < TYPED_COLUMNS; c++) out.push(chunk.getColumnVector(first + c))
  return out
}
