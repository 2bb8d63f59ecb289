/**
 * Checkpoint `add` and `remove` rows read as one compact text each instead of a JSON line.
 *
 * Nearly every row of a large checkpoint is an `add` or a `remove`, and turning each into a JSON
 * line in DuckDB only to parse it again in JavaScript was most of the cost of opening a large
 * table. When the struct has the types the protocol gives its fields (as Spark, delta-rs and this
 * library write them), a row whose required fields are all present becomes one text of its fields
 * in a fixed order (see {@link planTypedAdds}, {@link planTypedRemoves}), read here into the
 * decoded row: exact 64-bit integers
 * as bigint, booleans, maps as JSON objects. Every other row, and every row of a checkpoint typed
 * otherwise, still arrives as its JSON line, so a malformed row fails with the same message as
 * before. The row object goes through the same action reader as a parsed line does.
 *
 * Texts of several rows travel together, joined by {@link ROW_SEPARATOR}: DuckDB hands each
 * string over to JavaScript with a native call and a buffer of its own, so fetching one string
 * per group of rows instead of one per row is most of the saving on a large checkpoint.
 */
import type { DuckDBStructType, DuckDBType } from '@duckdb/node-api'
import { DuckDBTypeId } from '@duckdb/node-api'
import type { ActionRow } from '../engine/engine.js'
import { appendAll } from '../util/arrays.js'
import { sqlString } from './duckdb-runtime.js'

/**
 * Separates the fields of a typed row, and starts one: a JSON line never holds it raw (JSON text
 * escapes control characters), so a row text that begins with it is a typed `add`. A field that
 * could hold it (the path, the DV's path, the clustering provider) sends its row to the JSON
 * reader instead.
 */
const FIELD_SEPARATOR = '\u0001'
const FIELD_SQL = 'chr(1)'

/**
 * Separates the rows of one fetched text. JSON text escapes it, and a typed row holding it in a
 * raw text field (the statistics among them) goes the JSON way.
 */
export const ROW_SEPARATOR = '\u001e'
/** {@link ROW_SEPARATOR} in SQL. */
export const ROW_SEPARATOR_SQL = 'chr(30)'

/** How the typed `add` rows of one query are selected and written. */
export interface TypedAddPlan {
  /** SQL: true for a row written as its typed text (its JSON line is then not computed). */
  readonly condition: string
  /**
   * SQL: the row's typed text, read back by {@link splitRows}.
   *
   * @param number - SQL of the row's number to write first (see {@link splitRows}), if any
   */
  text(number?: string): string
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

/** Optional fields read when the struct has them, with their types. */
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

/** SQL: true when the text `sql` (possibly null) holds neither separator. */
function noSeparator(sql: string): string {
  return `coalesce(strpos(${sql}, ${FIELD_SQL}) = 0 AND strpos(${sql}, ${ROW_SEPARATOR_SQL}) = 0, true)`
}

/**
 * Plans the typed reading of `add` rows, or `undefined` when the column's types differ from the
 * protocol's (every row is then read as JSON).
 *
 * The text of a typed row is, each field after a {@link FIELD_SEPARATOR}: the path, the partition
 * values' JSON, size, modification time, data change (`t`/`f`), the tags' JSON, base row id,
 * default row commit version, clustering provider, the DV's storage type, path, offset, size,
 * cardinality and max row index, and last the statistics (which may then hold the field
 * separator). A null is the empty field; a text that may be empty is written after a `+`.
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
  const conditions = typedRowConditions(add, types, before, REQUIRED, OPTIONAL)
  if (conditions === undefined) return undefined
  const dv = dvPlan(types, add)
  if (dv === null) return undefined
  if (dv !== undefined) appendAll(conditions, dv.conditions)
  // A row that needs its typed statistics converted (no JSON stats, a stats_parsed struct) goes
  // the JSON way, where such rows wait for the table schema.
  if (types.has('stats_parsed')) {
    conditions.push(
      types.has('stats')
        ? `(${field(add, 'stats')} IS NOT NULL OR ${field(add, 'stats_parsed')} IS NULL)`
        : `${field(add, 'stats_parsed')} IS NULL`,
    )
  }
  conditions.push(`strpos(${field(add, 'path')}, ${FIELD_SQL}) = 0`)
  conditions.push(`strpos(${field(add, 'path')}, ${ROW_SEPARATOR_SQL}) = 0`)
  if (types.has('clusteringProvider')) conditions.push(noSeparator(field(add, 'clusteringProvider')))
  if (types.has('stats'))
    conditions.push(`coalesce(strpos(${field(add, 'stats')}, ${ROW_SEPARATOR_SQL}) = 0, true)`)

  const has = (name: string): boolean => types.has(name)
  const values = field(add, 'partitionValues')
  const parts = [
    field(add, 'path'),
    // Most tables are unpartitioned: an empty map's JSON is written as is rather than computed.
    `CASE WHEN cardinality(${values}) = 0 THEN '{}' ELSE to_json(${values}) END`,
    field(add, 'size'),
    field(add, 'modificationTime'),
    `CASE WHEN ${field(add, 'dataChange')} THEN 't' ELSE 'f' END`,
    has('tags') ? `to_json(${field(add, 'tags')})` : undefined,
    has('baseRowId') ? field(add, 'baseRowId') : undefined,
    has('defaultRowCommitVersion') ? field(add, 'defaultRowCommitVersion') : undefined,
    has('clusteringProvider') ? `'+' || ${field(add, 'clusteringProvider')}` : undefined,
    ...(dv?.fields ?? DV_FIELDS.map(() => undefined)),
    has('stats') ? `'+' || ${field(add, 'stats')}` : undefined,
  ]
  return { condition: conditions.join(' AND '), text: concatText(parts) }
}

/**
 * The conditions every typed row of an action column needs: the action set, none of the columns
 * before it set, its required fields present. `undefined` when a field the struct has is typed
 * otherwise than the protocol says.
 */
function typedRowConditions(
  column: string,
  types: ReadonlyMap<string, DuckDBType>,
  before: readonly string[],
  required: ReadonlyArray<readonly [string, string]>,
  optional: ReadonlyArray<readonly [string, string]>,
): string[] | undefined {
  const conditions = [`${column} IS NOT NULL`]
  for (const c of before) conditions.push(`"${c}" IS NULL`)
  for (const [name, type] of required) {
    if (types.get(name)?.toString() !== type) return undefined
    conditions.push(`${field(column, name)} IS NOT NULL`)
  }
  for (const [name, type] of optional) {
    const t = types.get(name)
    if (t !== undefined && t.toString() !== type) return undefined
  }
  return conditions
}

/**
 * The SQL of a typed row's text: `lead` (if any), then each part after a field separator, the
 * part left out where it is undefined (an empty field). One concat() per row: a chain of `||`
 * would copy the growing text once per field, and concat() leaves out a null, which is the empty
 * field a null stands for.
 */
function concatText(parts: readonly (string | undefined)[], lead?: string): TypedAddPlan['text'] {
  const args: string[] = lead === undefined ? [] : [lead]
  for (const part of parts) {
    args.push(FIELD_SQL)
    if (part !== undefined) args.push(part)
  }
  const fields = args.join(', ')
  return (number) => `concat(${number === undefined ? '' : `${number}, `}${fields})`
}

/**
 * Starts a typed `remove` row (see {@link FIELD_SEPARATOR}); like it, never raw in a JSON line.
 */
const REMOVE_START = '\u0002'
const REMOVE_START_CODE = REMOVE_START.charCodeAt(0)
const REMOVE_START_SQL = 'chr(2)'

/** The fields every typed `remove` row has (null in none of them), with their types. */
const REMOVE_REQUIRED: ReadonlyArray<readonly [string, string]> = [
  ['path', 'VARCHAR'],
  ['dataChange', 'BOOLEAN'],
]

/** Optional `remove` fields read when the struct has them, in the order of the row text. */
const REMOVE_OPTIONAL: ReadonlyArray<readonly [string, string]> = [
  ['deletionTimestamp', 'BIGINT'],
  ['extendedFileMetadata', 'BOOLEAN'],
  ['partitionValues', MAP_TEXT],
  ['size', 'BIGINT'],
  ['tags', MAP_TEXT],
  ['baseRowId', 'BIGINT'],
  ['defaultRowCommitVersion', 'BIGINT'],
  ['stats', 'VARCHAR'],
]

/**
 * Plans the typed reading of `remove` rows (the tombstones, often a quarter of a large
 * checkpoint's rows), or `undefined` when the column's types differ from the protocol's.
 *
 * The text of a typed row is {@link REMOVE_START}, then each field after a
 * {@link FIELD_SEPARATOR}: the path, data change (`t`/`f`), deletion timestamp, extended file
 * metadata (`t`/`f`, empty for null), the partition values' JSON, size, the tags' JSON, base row
 * id, default row commit version, the DV's six fields as for an `add`, and last the statistics
 * after a `+`. A field the struct lacks is empty, as a null is.
 *
 * @param removeType - the type of the `remove` column
 * @param before - the action columns that come before `remove` in the JSON line's `coalesce`
 * @returns the plan
 */
export function planTypedRemoves(
  removeType: DuckDBType,
  before: readonly string[],
): TypedAddPlan | undefined {
  const types = fieldTypes(removeType)
  if (types === undefined) return undefined
  const remove = '"remove"'
  const conditions = typedRowConditions(remove, types, before, REMOVE_REQUIRED, REMOVE_OPTIONAL)
  if (conditions === undefined) return undefined
  // Fields beyond the protocol's (stats_parsed among them) are left to the JSON reader.
  const known = new Set([...REMOVE_REQUIRED, ...REMOVE_OPTIONAL].map(([n]) => n))
  known.add('deletionVector')
  for (const name of types.keys()) if (!known.has(name)) return undefined
  const dv = dvPlan(types, remove)
  if (dv === null) return undefined
  if (dv !== undefined) appendAll(conditions, dv.conditions)
  const path = field(remove, 'path')
  conditions.push(`strpos(${path}, ${FIELD_SQL}) = 0`, `strpos(${path}, ${ROW_SEPARATOR_SQL}) = 0`)
  if (types.has('stats'))
    conditions.push(`coalesce(strpos(${field(remove, 'stats')}, ${ROW_SEPARATOR_SQL}) = 0, true)`)

  const has = (name: string): boolean => types.has(name)
  const bool = (name: string): string | undefined =>
    has(name)
      ? `CASE WHEN ${field(remove, name)} THEN 't' WHEN NOT ${field(remove, name)} THEN 'f' END`
      : undefined
  const map = (name: string): string | undefined => {
    if (!has(name)) return undefined
    const m = field(remove, name)
    return `CASE WHEN cardinality(${m}) = 0 THEN '{}' ELSE to_json(${m}) END`
  }
  const parts = [
    path,
    bool('dataChange'),
    has('deletionTimestamp') ? field(remove, 'deletionTimestamp') : undefined,
    bool('extendedFileMetadata'),
    map('partitionValues'),
    has('size') ? field(remove, 'size') : undefined,
    map('tags'),
    has('baseRowId') ? field(remove, 'baseRowId') : undefined,
    has('defaultRowCommitVersion') ? field(remove, 'defaultRowCommitVersion') : undefined,
    ...(dv?.fields ?? DV_FIELDS.map(() => undefined)),
    has('stats') ? `'+' || ${field(remove, 'stats')}` : undefined,
  ]
  return { condition: conditions.join(' AND '), text: concatText(parts, REMOVE_START_SQL) }
}

/**
 * The deletion vector of an action struct: the conditions a typed row needs and the SQL of its
 * six fields; `undefined` when the struct has no `deletionVector`, `null` when its types differ
 * from the protocol's.
 */
function dvPlan(
  types: ReadonlyMap<string, DuckDBType>,
  of: string,
): { conditions: string[]; fields: (string | undefined)[] } | undefined | null {
  const dvType = types.get('deletionVector')
  if (dvType === undefined) return undefined
  const dvTypes = fieldTypes(dvType)
  if (dvTypes === undefined) return null
  for (const [name, type] of DV_FIELDS) {
    const t = dvTypes.get(name)
    if ((t === undefined && name !== 'maxRowIndex') || (t !== undefined && t.toString() !== type)) return null
  }
  const dv = field(of, 'deletionVector')
  return {
    conditions: [
      // A descriptor missing a required field (or an all-null struct) is left to the JSON reader.
      `(${dv} IS NULL OR (${field(dv, 'storageType')} IN ('u', 'i', 'p') AND ${field(dv, 'pathOrInlineDv')} IS NOT NULL AND ${field(dv, 'sizeInBytes')} IS NOT NULL AND ${field(dv, 'cardinality')} IS NOT NULL))`,
      noSeparator(field(dv, 'pathOrInlineDv')),
    ],
    fields: DV_FIELDS.map(([name]) => (dvTypes.has(name) ? field(dv, name) : undefined)),
  }
}

/** Parsed JSON objects of map texts already seen in one read (most files share their maps). */
export type MapTextCache = Map<string, unknown>

const MAP_CACHE_MAX = 4096

function mapFromText(text: string, cache: MapTextCache): unknown {
  let value = cache.get(text)
  if (value === undefined) {
    // DuckDB's JSON of a VARCHAR map: an object of strings and nulls, nothing JSON.parse rounds.
    value = JSON.parse(text)
    if (cache.size >= MAP_CACHE_MAX) cache.clear()
    cache.set(text, value)
  }
  return value
}

/** The map of the field `text[from, to)`: null when empty, the shared parse of `{}` when empty. */
function mapAt(text: string, from: number, to: number, cache: MapTextCache): unknown {
  if (from === to) return null
  if (to === from + 2 && text.charCodeAt(from) === 123) return mapFromText('{}', cache)
  return mapFromText(text.slice(from, to), cache)
}

/**
 * The integer of the decimal field `text[from, to)` as a bigint, null when empty. Short fields
 * are read digit by digit (no substring to allocate); the text is DuckDB's cast of an integer.
 */
function longAt(text: string, from: number, to: number): bigint | null {
  if (from === to) return null
  if (to - from > 15) return BigInt(text.slice(from, to))
  return BigInt(intAt(text, from, to))
}

/** The integer of a decimal field of at most 15 characters (sign included), null when empty. */
function intAt(text: string, from: number, to: number): number {
  const negative = text.charCodeAt(from) === 45
  let n = 0
  for (let i = negative ? from + 1 : from; i < to; i++) n = n * 10 + (text.charCodeAt(i) - 48)
  return negative ? -n : n
}

/**
 * Reads the fields of one typed row in order: {@link FieldCursor.next} moves to the next field,
 * `text[a, b)`, and the readers decode it. One cursor serves a whole read (no object per row).
 */
class FieldCursor {
  text = ''
  a = 0
  b = 0

  /** Starts at the field whose separator is at `text[separator]`. */
  reset(text: string, separator: number): this {
    this.text = text
    this.b = separator
    return this
  }

  next(): this {
    this.a = this.b + 1
    this.b = this.text.indexOf(FIELD_SEPARATOR, this.a)
    return this
  }

  string(): string {
    return this.text.slice(this.a, this.b)
  }

  /** A text written after a `+` (it may be empty), null for the empty field. */
  plusString(): string | null {
    return this.a === this.b ? null : this.text.slice(this.a + 1, this.b)
  }

  long(): bigint | null {
    return longAt(this.text, this.a, this.b)
  }

  int(): number | null {
    return this.a === this.b ? null : intAt(this.text, this.a, this.b)
  }

  /** `t`, `f`, or null for the empty field. */
  bool(): boolean | null {
    return this.a === this.b ? null : this.text.charCodeAt(this.a) === 116
  }

  map(maps: MapTextCache): unknown {
    return mapAt(this.text, this.a, this.b, maps)
  }

  /** The deletion vector of the next six fields: null when the first is empty (all six are then). */
  deletionVector(): Record<string, unknown> | null {
    const storageType = this.next().string()
    if (storageType === '') {
      this.b += 5
      return null
    }
    return {
      storageType,
      pathOrInlineDv: this.next().string(),
      offset: this.next().int(),
      sizeInBytes: this.next().int(),
      cardinality: this.next().long(),
      maxRowIndex: this.next().long(),
    }
  }

  /** The last field, after a `+`, running to `to`: null when empty. */
  lastPlusString(to: number): string | null {
    const a = this.b + 1
    return a === to ? null : this.text.slice(a + 1, to)
  }
}

const cursor = new FieldCursor()

/**
 * Reads one typed row, `text[from, to)` (starting at its leading field separator), into a
 * decoded checkpoint row (`{ add: {...} }`, null for a null field), the form the action reader
 * takes.
 */
function decodeTypedAdd(text: string, from: number, to: number, maps: MapTextCache): ActionRow {
  const c = cursor.reset(text, from)
  const path = c.next().string()
  const partitionValues = c.next().map(maps)
  const size = c.next().long()
  const modificationTime = c.next().long()
  const dataChange = c.next().bool() === true
  const tags = c.next().map(maps)
  const baseRowId = c.next().long()
  const defaultRowCommitVersion = c.next().long()
  const clusteringProvider = c.next().plusString()
  const deletionVector = c.deletionVector()
  const stats = c.lastPlusString(to)
  const add = {
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
  }
  return { add }
}

/**
 * Reads one typed `remove` row, `text[from, to)` (starting at {@link REMOVE_START}), into a
 * decoded checkpoint row (`{ remove: {...} }`), the form the action reader takes.
 */
function decodeTypedRemove(text: string, from: number, to: number, maps: MapTextCache): ActionRow {
  const c = cursor.reset(text, from + 1)
  const path = c.next().string()
  const dataChange = c.next().bool()
  const deletionTimestamp = c.next().long()
  const extendedFileMetadata = c.next().bool()
  const partitionValues = c.next().map(maps)
  const size = c.next().long()
  const tags = c.next().map(maps)
  const baseRowId = c.next().long()
  const defaultRowCommitVersion = c.next().long()
  const deletionVector = c.deletionVector()
  const stats = c.lastPlusString(to)
  const remove = {
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
  }
  return { remove }
}

/**
 * Appends the rows of one fetched text (row texts joined by {@link ROW_SEPARATOR}) to `out`: a
 * typed row decoded, any other as its JSON line.
 *
 * With `numbered`, each row text starts with its row number in decimal: DuckDB joins a group's
 * texts in the order its threads happened to see them, which is nearly always row order, and
 * the rows are put back in order here when it is not.
 *
 * @param text - the fetched text
 * @param out - where the rows go, in order
 * @param maps - the read's map-text cache (the objects it returns are read, never changed)
 * @param numbered - whether each row starts with its row number
 */
export function splitRows(text: string, out: ActionRow[], maps: MapTextCache, numbered = false): void {
  const first = out.length
  let numbers: number[] | undefined
  let last = -1
  let ordered = true
  let from = 0
  for (;;) {
    let to = text.indexOf(ROW_SEPARATOR, from)
    if (to < 0) to = text.length
    if (numbered) {
      let n = 0
      let c = text.charCodeAt(from)
      while (c >= 48 && c <= 57) {
        n = n * 10 + (c - 48)
        c = text.charCodeAt(++from)
      }
      if (n <= last) ordered = false
      last = n
      if (!ordered) {
        numbers ??= []
        // The numbers of the rows before the first one out of order, then each row's own.
        while (numbers.length < out.length - first) numbers.push(-1)
      }
      numbers?.push(n)
    }
    const lead = text.charCodeAt(from)
    if (lead === 1) out.push(decodeTypedAdd(text, from, to, maps))
    else if (lead === REMOVE_START_CODE) out.push(decodeTypedRemove(text, from, to, maps))
    else out.push(from === 0 && to === text.length ? text : text.slice(from, to))
    if (to === text.length) break
    from = to + 1
  }
  if (numbers !== undefined) restoreOrder(text, out, first, numbers)
}

/**
 * Sorts `out[first..]` by row number. `numbers` holds the number of each of those rows, except
 * for a leading run of -1 (rows read before the first row out of order), which are numbered
 * again from the text.
 */
function restoreOrder(text: string, out: ActionRow[], first: number, numbers: number[]): void {
  let from = 0
  for (let i = 0; i < numbers.length && numbers[i] === -1; i++) {
    let n = 0
    let c = text.charCodeAt(from)
    while (c >= 48 && c <= 57) {
      n = n * 10 + (c - 48)
      c = text.charCodeAt(++from)
    }
    numbers[i] = n
    from = text.indexOf(ROW_SEPARATOR, from) + 1
  }
  const rows = out.splice(first)
  const order = rows.map((_, i) => i).sort((a, b) => (numbers[a] as number) - (numbers[b] as number))
  for (const i of order) out.push(rows[i] as ActionRow)
}
