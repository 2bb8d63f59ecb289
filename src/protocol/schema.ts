/**
 * Delta table schemas: Spark's JSON schema format (protocol.md section 10), a Spark-style DDL
 * parser for schemas given by callers, and column-mapping helpers (section 8).
 *
 * Types are wire-shaped: a primitive type is its JSON name (`'long'`, `'decimal(10,2)'`), a
 * complex type is an object with a `type` of `struct`, `array` or `map`.
 */
import { InvalidArgumentError, InvalidTableError } from '../errors/index.js'
import {
  type JsonValue,
  MAX_JSON_DEPTH,
  normalizeJsonValue,
  parseJsonText,
  stringifyJson,
} from './json-text.js'
import { type ActionContext, describeContext, isRawObject } from './raw-fields.js'

/** The primitive type names of the Delta schema JSON, decimals aside. */
export type PrimitiveTypeName =
  | 'string'
  | 'long'
  | 'integer'
  | 'short'
  | 'byte'
  | 'float'
  | 'double'
  | 'boolean'
  | 'binary'
  | 'date'
  | 'timestamp'
  | 'timestamp_ntz'
  | 'void'
  | 'variant'

/** `decimal(precision,scale)`, written without spaces. */
export type DecimalTypeName = `decimal(${number},${number})`

/** A primitive type as written in the schema JSON. */
export type PrimitiveType = PrimitiveTypeName | DecimalTypeName

/** One field of a struct. */
export interface StructField {
  readonly name: string
  readonly type: DataType
  readonly nullable: boolean
  /** Field metadata (column mapping ids, invariants, comments, type changes, ...). */
  readonly metadata: Readonly<Record<string, JsonValue>>
}

/** A struct: the table schema itself, or a nested struct column. */
export interface StructType {
  readonly type: 'struct'
  readonly fields: readonly StructField[]
}

/** An array column. */
export interface ArrayType {
  readonly type: 'array'
  readonly elementType: DataType
  readonly containsNull: boolean
}

/** A map column. */
export interface MapType {
  readonly type: 'map'
  readonly keyType: DataType
  readonly valueType: DataType
  readonly valueContainsNull: boolean
}

/** Any Delta data type. */
export type DataType = PrimitiveType | StructType | ArrayType | MapType

/** Column mapping mode (`delta.columnMapping.mode`). */
export type ColumnMappingMode = 'none' | 'id' | 'name'

/** Field metadata key holding a column's stable id. */
export const COLUMN_MAPPING_ID_KEY = 'delta.columnMapping.id'
/** Field metadata key holding a column's physical name. */
export const COLUMN_MAPPING_PHYSICAL_NAME_KEY = 'delta.columnMapping.physicalName'

const PRIMITIVE_NAMES: ReadonlySet<string> = new Set<PrimitiveTypeName>([
  'string',
  'long',
  'integer',
  'short',
  'byte',
  'float',
  'double',
  'boolean',
  'binary',
  'date',
  'timestamp',
  'timestamp_ntz',
  'void',
  'variant',
])

const DECIMAL = /^decimal\(\s*(\d+)\s*,\s*(-?\d+)\s*\)$/

/** Largest decimal precision Delta allows. */
export const MAX_DECIMAL_PRECISION = 38

// === Type predicates ===

/**
 * @param t - a data type
 * @returns whether it is a struct
 */
export function isStructType(t: DataType): t is StructType {
  return typeof t === 'object' && t.type === 'struct'
}

/**
 * @param t - a data type
 * @returns whether it is an array
 */
export function isArrayType(t: DataType): t is ArrayType {
  return typeof t === 'object' && t.type === 'array'
}

/**
 * @param t - a data type
 * @returns whether it is a map
 */
export function isMapType(t: DataType): t is MapType {
  return typeof t === 'object' && t.type === 'map'
}

/**
 * @param t - a data type
 * @returns whether it is a primitive (including decimals)
 */
export function isPrimitiveType(t: DataType): t is PrimitiveType {
  return typeof t === 'string'
}

/**
 * Precision and scale of a decimal type.
 *
 * @param t - a data type
 * @returns `{ precision, scale }`, or `undefined` when `t` is not a decimal
 */
export function decimalParts(
  t: DataType,
): { readonly precision: number; readonly scale: number } | undefined {
  if (typeof t !== 'string') return undefined
  const m = DECIMAL.exec(t)
  return m ? { precision: Number(m[1]), scale: Number(m[2]) } : undefined
}

/**
 * Builds a decimal type name, checking its bounds.
 *
 * @param precision - total digits, 1..38
 * @param scale - digits after the point, 0..precision
 * @returns e.g. `decimal(10,2)`
 * @throws {InvalidArgumentError} when precision or scale is out of range
 */
export function decimalType(precision: number, scale: number): DecimalTypeName {
  if (!Number.isInteger(precision) || precision < 1 || precision > MAX_DECIMAL_PRECISION) {
    throw new InvalidArgumentError(
      `Decimal precision ${precision} is out of range: expected 1..${MAX_DECIMAL_PRECISION}`,
      {
        argument: 'schema',
      },
    )
  }
  if (!Number.isInteger(scale) || scale < 0 || scale > precision) {
    throw new InvalidArgumentError(
      `Decimal scale ${scale} is out of range: expected 0..${precision} (the precision)`,
      {
        argument: 'schema',
      },
    )
  }
  return `decimal(${precision},${scale})`
}

// === JSON schema ===

type SchemaFail = (at: string, problem: string) => never

/**
 * How deep a decoded schema may nest: the type levels still allowed below the current one. Log
 * schemas are bounded by the JSON depth limit already; a caller's schema object by
 * {@link MAX_DDL_TYPE_DEPTH}, so that what is written reads back.
 */
type DepthLeft = number

function readType(raw: unknown, at: string, fail: SchemaFail, left: DepthLeft): DataType {
  if (typeof raw === 'string') {
    if (PRIMITIVE_NAMES.has(raw)) return raw as PrimitiveTypeName
    const m = DECIMAL.exec(raw)
    if (m) {
      const precision = Number(m[1])
      const scale = Number(m[2])
      // Spark allows a negative scale in legacy mode; Delta's own bounds are 1..38 digits.
      if (precision < 1 || precision > MAX_DECIMAL_PRECISION || scale > precision) {
        return fail(at, `has an invalid decimal type '${raw}'`)
      }
      return `decimal(${precision},${scale})`
    }
    if (raw === 'decimal') return 'decimal(10,0)'
    return fail(at, `has an unknown type '${raw}'`)
  }
  if (!isRawObject(raw)) return fail(at, 'has a type that is neither a name nor an object')
  if (left <= 0) return fail(at, `nests types more than ${MAX_DDL_TYPE_DEPTH} levels deep`)
  switch (raw.type) {
    case 'struct':
      return readStruct(raw, at, fail, left - 1)
    case 'array': {
      if (typeof raw.containsNull !== 'boolean') return fail(`${at}.containsNull`, 'must be a boolean')
      return Object.freeze({
        type: 'array',
        elementType: readType(raw.elementType, `${at}.elementType`, fail, left - 1),
        containsNull: raw.containsNull,
      })
    }
    case 'map': {
      if (typeof raw.valueContainsNull !== 'boolean')
        return fail(`${at}.valueContainsNull`, 'must be a boolean')
      return Object.freeze({
        type: 'map',
        keyType: readType(raw.keyType, `${at}.keyType`, fail, left - 1),
        valueType: readType(raw.valueType, `${at}.valueType`, fail, left - 1),
        valueContainsNull: raw.valueContainsNull,
      })
    }
    default:
      return fail(at, `has an unknown complex type ${JSON.stringify(raw.type) ?? 'undefined'}`)
  }
}

function readStruct(
  raw: { readonly [k: string]: unknown },
  at: string,
  fail: SchemaFail,
  left: DepthLeft,
): StructType {
  if (raw.type !== 'struct') return fail(at, "must be a struct (type 'struct')")
  if (!Array.isArray(raw.fields)) return fail(`${at}.fields`, 'must be a list')
  const fields: StructField[] = []
  for (let i = 0; i < raw.fields.length; i++) {
    const f: unknown = raw.fields[i]
    const fat = `${at}.fields[${i}]`
    if (!isRawObject(f)) return fail(fat, 'must be an object')
    if (typeof f.name !== 'string') return fail(`${fat}.name`, 'must be a string')
    const nullable = f.nullable ?? true
    if (typeof nullable !== 'boolean') return fail(`${fat}.nullable`, 'must be a boolean')
    const metadataRaw = f.metadata ?? {}
    if (!isRawObject(metadataRaw)) return fail(`${fat}.metadata`, 'must be an object')
    const metadata = normalizeJsonValue(metadataRaw)
    if (
      metadata === undefined ||
      metadata === null ||
      typeof metadata !== 'object' ||
      Array.isArray(metadata)
    ) {
      return fail(`${fat}.metadata`, 'holds a value JSON cannot represent')
    }
    fields.push(
      Object.freeze({
        name: f.name,
        type: readType(f.type, `${fat} (${f.name})`, fail, left),
        nullable,
        metadata: metadata as Readonly<Record<string, JsonValue>>,
      }),
    )
  }
  return Object.freeze({ type: 'struct', fields: Object.freeze(fields) })
}

/**
 * Parses a table schema from `metaData.schemaString`.
 *
 * @param schemaString - Spark's JSON schema
 * @param ctx - the log file and version it came from, for messages
 * @returns the frozen schema
 * @throws {InvalidTableError} `malformed-action` when the text is not a valid struct schema
 */
export function parseSchema(schemaString: string, ctx: ActionContext = {}): StructType {
  const fail: SchemaFail = (at, problem) => {
    throw new InvalidTableError(
      'malformed-action',
      `Invalid table schema${describeContext(ctx)}: ${at} ${problem}`,
      {
        path: ctx.path,
        version: ctx.version,
        hint: 'The metaData.schemaString of the table is not a valid Delta schema.',
      },
    )
  }
  let raw: unknown
  try {
    raw = parseJsonText(schemaString)
  } catch (cause) {
    return fail('schema', `is not JSON (${cause instanceof Error ? cause.message : String(cause)})`)
  }
  if (!isRawObject(raw)) return fail('schema', 'must be a JSON object')
  // The JSON depth limit bounds a log schema already; this bound is never the binding one.
  return readStruct(raw, 'schema', fail, MAX_JSON_DEPTH)
}

/**
 * Validates a schema given by a caller as an object (the JSON form, already decoded). Field
 * names must be unique, ignoring case, inside each struct.
 *
 * @param raw - an object shaped like the schema JSON
 * @returns the frozen schema
 * @throws {InvalidArgumentError} when it is not a valid struct schema
 */
export function toStructType(raw: unknown): StructType {
  const fail: SchemaFail = (at, problem) => {
    throw new InvalidArgumentError(`Invalid schema: ${at} ${problem}`, { argument: 'schema' })
  }
  if (!isRawObject(raw)) return fail('schema', 'must be an object')
  const schema = readStruct(raw, 'schema', fail, MAX_DDL_TYPE_DEPTH)
  checkUniqueNames(schema, 'schema')
  return schema
}

/**
 * Serializes a schema to Spark's JSON format (the `schemaString` of `metaData`).
 *
 * @param schema - a struct schema
 * @returns compact JSON text
 * @throws {InvalidArgumentError} when field metadata holds a value JSON cannot represent
 */
export function serializeSchema(schema: StructType): string {
  return stringifyJson(typeToJson(schema))
}

function typeToJson(t: DataType): unknown {
  if (typeof t === 'string') return t
  switch (t.type) {
    case 'struct':
      return {
        type: 'struct',
        fields: t.fields.map((f) => ({
          name: f.name,
          type: typeToJson(f.type),
          nullable: f.nullable,
          metadata: f.metadata,
        })),
      }
    case 'array':
      return { type: 'array', elementType: typeToJson(t.elementType), containsNull: t.containsNull }
    case 'map':
      return {
        type: 'map',
        keyType: typeToJson(t.keyType),
        valueType: typeToJson(t.valueType),
        valueContainsNull: t.valueContainsNull,
      }
  }
}

function checkUniqueNames(t: DataType, at: string): void {
  if (typeof t === 'string') return
  if (t.type === 'array') {
    checkUniqueNames(t.elementType, `${at}.element`)
    return
  }
  if (t.type === 'map') {
    checkUniqueNames(t.keyType, `${at}.key`)
    checkUniqueNames(t.valueType, `${at}.value`)
    return
  }
  const seen = new Map<string, string>()
  for (const f of t.fields) {
    const lower = f.name.toLowerCase()
    const prev = seen.get(lower)
    if (prev !== undefined) {
      throw new InvalidArgumentError(
        `Invalid schema: columns '${prev}' and '${f.name}' in ${at} differ only by case; Delta column names are case-insensitive`,
        { argument: 'schema' },
      )
    }
    seen.set(lower, f.name)
    checkUniqueNames(f.type, `${at}.${f.name}`)
  }
}

// === DDL ===

const DDL_PRIMITIVES: Readonly<Record<string, PrimitiveTypeName>> = {
  string: 'string',
  text: 'string',
  long: 'long',
  bigint: 'long',
  int: 'integer',
  integer: 'integer',
  short: 'short',
  smallint: 'short',
  byte: 'byte',
  tinyint: 'byte',
  float: 'float',
  real: 'float',
  double: 'double',
  boolean: 'boolean',
  bool: 'boolean',
  binary: 'binary',
  date: 'date',
  timestamp: 'timestamp',
  timestamp_ltz: 'timestamp',
  timestamp_ntz: 'timestamp_ntz',
  void: 'void',
  variant: 'variant',
}

interface Token {
  readonly kind: 'word' | 'quoted' | 'string' | 'number' | 'punct' | 'expr' | 'end'
  readonly text: string
  readonly pos: number
}

function tokenize(src: string, fail: (pos: number, problem: string) => never): Token[] {
  const out: Token[] = []
  let i = 0
  while (i < src.length) {
    const c = src[i] as string
    if (/\s/.test(c)) {
      i++
      continue
    }
    if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i)) as RegExpExecArray
      out.push({ kind: 'word', text: m[0], pos: i })
      i += m[0].length
      continue
    }
    if (/[0-9]/.test(c) || (c === '-' && /[0-9]/.test(src[i + 1] ?? ''))) {
      const m = /^-?[0-9]+/.exec(src.slice(i)) as RegExpExecArray
      out.push({ kind: 'number', text: m[0], pos: i })
      i += m[0].length
      continue
    }
    if (c === '`') {
      let j = i + 1
      let name = ''
      for (;;) {
        if (j >= src.length) return fail(i, 'unterminated `quoted` name')
        if (src[j] === '`') {
          if (src[j + 1] === '`') {
            name += '`'
            j += 2
            continue
          }
          break
        }
        name += src[j]
        j++
      }
      out.push({ kind: 'quoted', text: name, pos: i })
      i = j + 1
      continue
    }
    if (c === "'" || c === '"') {
      let j = i + 1
      let text = ''
      for (;;) {
        if (j >= src.length) return fail(i, 'unterminated string literal')
        const d = src[j] as string
        if (d === '\\' && j + 1 < src.length) {
          text += src[j + 1]
          j += 2
          continue
        }
        if (d === c) break
        text += d
        j++
      }
      out.push({ kind: 'string', text, pos: i })
      i = j + 1
      continue
    }
    if (c === '(' && isGenerationStart(out)) {
      // The text of GENERATED ALWAYS AS (<expr>) is kept whole: it is SQL, not DDL.
      const end = closingParen(src, i, fail)
      out.push({ kind: 'expr', text: src.slice(i + 1, end).trim(), pos: i })
      i = end + 1
      continue
    }
    if ('<>(),:'.includes(c)) {
      out.push({ kind: 'punct', text: c, pos: i })
      i++
      continue
    }
    return fail(i, `unexpected character '${c}'`)
  }
  out.push({ kind: 'end', text: '', pos: src.length })
  return out
}

/**
 * The deepest nesting of struct, array and map types a schema given by a caller (DDL or object)
 * may have, and so of a value appended: {@link MAX_TYPE_DEPTH}. The parser and every walk over a
 * schema recurse per level; a struct level takes three levels of the schema's JSON, so this also
 * keeps the written schema far inside the log's JSON depth limit.
 */
export const MAX_DDL_TYPE_DEPTH = 64

/**
 * The deepest nesting of struct, array and map types delta-rlc creates or appends to (each such
 * type is one level: `struct<a: array<int>>` is 2). DuckDB's Parquet reader slows down about
 * twofold with each nested list or map level, so a bound keeps every read of the table finite.
 */
export const MAX_TYPE_DEPTH = MAX_DDL_TYPE_DEPTH

/**
 * How deep struct, array and map types nest in `type`, counted up to `limit + 1` at most (so a
 * hostile schema costs no more than the limit). Iterative: safe on any depth.
 *
 * @param type - a field type or a whole schema
 * @param limit - the depth past which counting stops
 * @returns the depth (0 for a primitive type), at most `limit + 1`
 */
export function typeDepth(type: DataType, limit = MAX_TYPE_DEPTH): number {
  let deepest = 0
  const stack: { t: DataType; d: number }[] = [{ t: type, d: 0 }]
  while (stack.length > 0) {
    const { t, d } = stack.pop() as { t: DataType; d: number }
    if (typeof t === 'string') continue
    const depth = d + 1
    if (depth > deepest) deepest = depth
    if (deepest > limit) return deepest
    if (t.type === 'struct') for (const f of t.fields) stack.push({ t: f.type, d: depth })
    else if (t.type === 'array') stack.push({ t: t.elementType, d: depth })
    else stack.push({ t: t.keyType, d: depth }, { t: t.valueType, d: depth })
  }
  return deepest
}

class DdlParser {
  #i = 0
  #depth = 0
  constructor(
    private readonly tokens: readonly Token[],
    private readonly fail: (pos: number, problem: string) => never,
  ) {}

  private peek(): Token {
    return this.tokens[this.#i] as Token
  }

  private next(): Token {
    const t = this.peek()
    if (t.kind !== 'end') this.#i++
    return t
  }

  private isWord(word: string): boolean {
    const t = this.peek()
    return t.kind === 'word' && t.text.toLowerCase() === word
  }

  private expectPunct(p: string, context: string): void {
    const t = this.next()
    if (t.kind !== 'punct' || t.text !== p)
      this.fail(t.pos, `expected '${p}' ${context}, found ${describeToken(t)}`)
  }

  fieldList(end: 'end' | '>'): StructField[] {
    const fields: StructField[] = []
    for (;;) {
      fields.push(this.field(end === '>'))
      const t = this.peek()
      if (t.kind === 'punct' && t.text === ',') {
        this.next()
        continue
      }
      if (end === 'end' && t.kind === 'end') return fields
      if (end === '>' && t.kind === 'punct' && t.text === '>') return fields
      return this.fail(
        t.pos,
        `expected ',' or ${end === 'end' ? 'the end' : "'>'"} after a field, found ${describeToken(t)}`,
      )
    }
  }

  private field(nested: boolean): StructField {
    const t = this.next()
    if (t.kind !== 'word' && t.kind !== 'quoted')
      return this.fail(t.pos, `expected a column name, found ${describeToken(t)}`)
    if (nested && this.peek().kind === 'punct' && this.peek().text === ':') this.next()
    const type = this.type()
    let nullable = true
    const metadata: Record<string, JsonValue> = {}
    for (;;) {
      if (this.isWord('not')) {
        const notTok = this.next()
        if (!this.isWord('null')) return this.fail(notTok.pos, "expected 'NULL' after 'NOT'")
        this.next()
        nullable = false
        continue
      }
      if (this.isWord('generated')) {
        if (nested) return this.fail(this.peek().pos, 'only top-level columns can be GENERATED')
        Object.assign(metadata, this.generated(type))
        continue
      }
      if (this.isWord('comment')) {
        this.next()
        const c = this.next()
        if (c.kind !== 'string')
          return this.fail(c.pos, `expected a quoted comment after 'COMMENT', found ${describeToken(c)}`)
        metadata.comment = c.text
        continue
      }
      break
    }
    return Object.freeze({ name: t.text, type, nullable, metadata: Object.freeze(metadata) })
  }

  /**
   * `GENERATED ALWAYS AS (<expr>)` (a generated column), `GENERATED ALWAYS AS IDENTITY` or
   * `GENERATED BY DEFAULT AS IDENTITY`, the latter two with optional
   * `(START WITH <n> INCREMENT BY <m>)`, as the protocol's field metadata.
   */
  private generated(type: DataType): Record<string, JsonValue> {
    const start = this.next()
    const expectWord = (word: string, context: string): void => {
      const t = this.next()
      if (t.kind !== 'word' || t.text.toLowerCase() !== word)
        this.fail(t.pos, `expected '${word.toUpperCase()}' ${context}, found ${describeToken(t)}`)
    }
    let allowExplicitInsert = false
    if (this.isWord('by')) {
      this.next()
      expectWord('default', "after 'GENERATED BY'")
      allowExplicitInsert = true
    } else {
      expectWord('always', "after 'GENERATED'")
    }
    expectWord('as', `after 'GENERATED ${allowExplicitInsert ? 'BY DEFAULT' : 'ALWAYS'}'`)
    const t = this.peek()
    if (t.kind === 'expr') {
      this.next()
      if (allowExplicitInsert)
        return this.fail(t.pos, 'a generated column is GENERATED ALWAYS AS (expression)')
      if (t.text === '') return this.fail(t.pos, 'the generation expression is empty')
      return { 'delta.generationExpression': t.text }
    }
    expectWord('identity', "or '(expression)' after 'AS'")
    if (type !== 'long') return this.fail(start.pos, 'an IDENTITY column must be long (bigint)')
    let first = 1n
    let step = 1n
    if (this.peek().kind === 'punct' && this.peek().text === '(') {
      this.next()
      for (;;) {
        const option = this.next()
        const name = option.kind === 'word' ? option.text.toLowerCase() : ''
        if (name !== 'start' && name !== 'increment') {
          return this.fail(
            option.pos,
            `expected 'START WITH' or 'INCREMENT BY', found ${describeToken(option)}`,
          )
        }
        expectWord(name === 'start' ? 'with' : 'by', `after '${option.text.toUpperCase()}'`)
        const n = this.next()
        if (n.kind !== 'number') return this.fail(n.pos, `expected a whole number, found ${describeToken(n)}`)
        const value = BigInt(n.text)
        if (value < -(2n ** 63n) || value >= 2n ** 63n)
          return this.fail(n.pos, 'the number is outside the long range')
        if (name === 'start') first = value
        else if (value === 0n) return this.fail(n.pos, 'INCREMENT BY cannot be 0')
        else step = value
        const close = this.peek()
        if (close.kind === 'punct' && close.text === ')') {
          this.next()
          break
        }
      }
    }
    const long = (v: bigint): number | bigint =>
      v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v
    return {
      'delta.identity.start': long(first),
      'delta.identity.step': long(step),
      'delta.identity.allowExplicitInsert': allowExplicitInsert,
    }
  }

  private type(): DataType {
    const t = this.next()
    if (t.kind !== 'word') return this.fail(t.pos, `expected a type, found ${describeToken(t)}`)
    const name = t.text.toLowerCase()
    if (name !== 'struct' && name !== 'array' && name !== 'map') return this.simpleType(t, name)
    if (++this.#depth > MAX_DDL_TYPE_DEPTH) {
      return this.fail(t.pos, `types nest more than ${MAX_DDL_TYPE_DEPTH} levels deep`)
    }
    try {
      return this.nestedType(name)
    } finally {
      this.#depth--
    }
  }

  private nestedType(name: 'struct' | 'array' | 'map'): DataType {
    switch (name) {
      case 'struct': {
        this.expectPunct('<', "after 'struct'")
        if (this.peek().kind === 'punct' && this.peek().text === '>') {
          this.next()
          return Object.freeze({ type: 'struct', fields: Object.freeze([]) })
        }
        const fields = this.fieldList('>')
        this.expectPunct('>', 'to close the struct')
        return Object.freeze({ type: 'struct', fields: Object.freeze(fields) })
      }
      case 'array': {
        this.expectPunct('<', "after 'array'")
        const elementType = this.type()
        this.expectPunct('>', 'to close the array')
        return Object.freeze({ type: 'array', elementType, containsNull: true })
      }
      case 'map': {
        this.expectPunct('<', "after 'map'")
        const keyType = this.type()
        this.expectPunct(',', 'between the map key and value types')
        const valueType = this.type()
        this.expectPunct('>', 'to close the map')
        return Object.freeze({ type: 'map', keyType, valueType, valueContainsNull: true })
      }
    }
  }

  private simpleType(t: Token, name: string): DataType {
    switch (name) {
      case 'decimal':
      case 'dec':
      case 'numeric': {
        if (!(this.peek().kind === 'punct' && this.peek().text === '(')) return 'decimal(10,0)'
        this.next()
        const p = this.next()
        if (p.kind !== 'number')
          return this.fail(p.pos, `expected the decimal precision, found ${describeToken(p)}`)
        let scale = 0
        if (this.peek().kind === 'punct' && this.peek().text === ',') {
          this.next()
          const s = this.next()
          if (s.kind !== 'number')
            return this.fail(s.pos, `expected the decimal scale, found ${describeToken(s)}`)
          scale = Number(s.text)
        }
        this.expectPunct(')', 'to close the decimal type')
        try {
          return decimalType(Number(p.text), scale)
        } catch (err) {
          return this.fail(t.pos, err instanceof Error ? err.message : String(err))
        }
      }
      case 'char':
      case 'varchar': {
        // Delta stores char/varchar columns as strings; the length is not enforced here.
        this.expectPunct('(', `after '${t.text}'`)
        const n = this.next()
        if (n.kind !== 'number') return this.fail(n.pos, `expected a length, found ${describeToken(n)}`)
        this.expectPunct(')', `to close '${t.text}'`)
        return 'string'
      }
      default: {
        const primitive = DDL_PRIMITIVES[name]
        if (primitive === undefined) return this.fail(t.pos, `unknown type '${t.text}'`)
        return primitive
      }
    }
  }
}

/** Whether the tokens so far end with `GENERATED ALWAYS AS`: a `(` opens an expression. */
function isGenerationStart(tokens: readonly Token[]): boolean {
  const words = tokens.slice(-3).map((t) => (t.kind === 'word' ? t.text.toLowerCase() : ''))
  return words.join(' ') === 'generated always as'
}

/** The index of the `)` closing the `(` at `open`, skipping quoted text. */
function closingParen(src: string, open: number, fail: (pos: number, problem: string) => never): number {
  let depth = 0
  for (let i = open; i < src.length; i++) {
    const c = src[i] as string
    if (c === "'" || c === '"' || c === '`') {
      const close = src.indexOf(c, i + 1)
      if (close < 0) return fail(i, 'unterminated quoted text in the generation expression')
      i = close
      continue
    }
    if (c === '(') depth++
    else if (c === ')' && --depth === 0) return i
  }
  return fail(open, "unclosed '(' of the generation expression")
}

function describeToken(t: Token): string {
  if (t.kind === 'end') return 'the end of the schema'
  if (t.kind === 'string') return `'${t.text}'`
  return `'${t.text}'`
}

/**
 * Parses a Spark-style DDL schema such as
 * `id long not null, name string, d decimal(10,2), s struct<a: int, b: string>, xs array<long>, m map<string,int>`.
 *
 * Accepts Spark's type names and aliases (`bigint`, `int`, `integer`, `smallint`, `tinyint`,
 * `real`, `bool`, `dec`, `numeric`, `char(n)`/`varchar(n)` as string, `timestamp_ltz`),
 * case-insensitively; `NOT NULL`; `COMMENT '...'` (kept as field metadata `comment`); backquoted
 * names; on top-level columns `GENERATED ALWAYS AS (<expr>)` (field metadata
 * `delta.generationExpression`) and `GENERATED { ALWAYS | BY DEFAULT } AS IDENTITY [(START WITH n
 * INCREMENT BY m)]` (`delta.identity.start`, `.step`, `.allowExplicitInsert`; start and step 1 by
 * default). Nested fields may be written `name: type` or `name type`. Arrays and maps allow nulls.
 *
 * @param ddl - the schema text
 * @returns the frozen schema
 * @throws {InvalidArgumentError} pointing at the offending part, for a syntax error, an unknown
 *   type, an out-of-range decimal, column names that differ only by case, or types nested deeper
 *   than {@link MAX_DDL_TYPE_DEPTH}; also when `ddl` is not a string
 */
export function parseDdlSchema(ddl: string): StructType {
  const fail = (pos: number, problem: string): never => {
    const start = Math.max(0, pos - 20)
    const excerpt = `${start > 0 ? '...' : ''}${ddl.slice(start, pos)} >>> ${ddl.slice(pos, pos + 20)}`
    throw new InvalidArgumentError(
      `Invalid schema at position ${pos}: ${problem} (near: ${excerpt.trim()})`,
      {
        argument: 'schema',
        hint: "Write the schema as 'name type [NOT NULL], ...', e.g. 'id long not null, name string'.",
      },
    )
  }
  if (typeof ddl !== 'string') {
    throw new InvalidArgumentError(`schema must be DDL text; got ${ddl === null ? 'null' : typeof ddl}`, {
      argument: 'schema',
      hint: "Write the schema as 'name type [NOT NULL], ...', e.g. 'id long not null, name string'.",
    })
  }
  if (ddl.trim() === '') return fail(0, 'the schema is empty')
  const parser = new DdlParser(tokenize(ddl, fail), fail)
  const schema: StructType = Object.freeze({ type: 'struct', fields: Object.freeze(parser.fieldList('end')) })
  checkUniqueNames(schema, 'schema')
  return schema
}

// === Column mapping ===

/**
 * The name a column has in data files, statistics and partition values.
 *
 * @param field - a schema field
 * @param mode - the table's column mapping mode
 * @returns the logical name when mode is `none`, else the field's physical name
 * @throws {InvalidTableError} `missing-schema` when column mapping is on and the field lacks a
 *   physical name
 */
export function physicalName(field: StructField, mode: ColumnMappingMode): string {
  if (mode === 'none') return field.name
  const p = field.metadata[COLUMN_MAPPING_PHYSICAL_NAME_KEY]
  if (typeof p !== 'string' || p === '') {
    throw new InvalidTableError(
      'missing-schema',
      `Column '${field.name}' has no ${COLUMN_MAPPING_PHYSICAL_NAME_KEY} although column mapping mode is '${mode}'`,
      { hint: 'The table schema is inconsistent with its column mapping mode.' },
    )
  }
  return p
}

/**
 * The column mapping id of a field.
 *
 * @param field - a schema field
 * @returns its `delta.columnMapping.id`, or `undefined` when it has none
 */
export function columnMappingId(field: StructField): number | undefined {
  const id = field.metadata[COLUMN_MAPPING_ID_KEY]
  return typeof id === 'number' && Number.isSafeInteger(id) ? id : undefined
}

/**
 * Finds a field by column mapping id, searching nested structs, arrays and maps.
 *
 * @param type - the schema (or any type) to search
 * @param id - the `delta.columnMapping.id` to find
 * @returns the field, or `undefined`
 */
export function fieldById(type: DataType, id: number): StructField | undefined {
  if (typeof type === 'string') return undefined
  switch (type.type) {
    case 'struct':
      for (const f of type.fields) {
        if (columnMappingId(f) === id) return f
        const inner = fieldById(f.type, id)
        if (inner !== undefined) return inner
      }
      return undefined
    case 'array':
      return fieldById(type.elementType, id)
    case 'map':
      return fieldById(type.keyType, id) ?? fieldById(type.valueType, id)
  }
}

/**
 * Finds a top-level field by name, ignoring case as Delta does.
 *
 * @param schema - the table schema
 * @param name - a column name
 * @returns the field, or `undefined`
 */
export function fieldByName(schema: StructType, name: string): StructField | undefined {
  const exact = schema.fields.find((f) => f.name === name)
  if (exact !== undefined) return exact
  const lower = name.toLowerCase()
  return schema.fields.find((f) => f.name.toLowerCase() === lower)
}

/**
 * Visits every field, nested ones included (inside structs, array elements and map values).
 *
 * @param type - the schema or type to walk
 * @param visit - called with each field and its path of names from the top
 */
export function forEachField(
  type: DataType,
  visit: (field: StructField, path: readonly string[]) => void,
): void {
  walk(type, [], visit)
}

function walk(
  type: DataType,
  prefix: readonly string[],
  visit: (f: StructField, p: readonly string[]) => void,
): void {
  if (typeof type === 'string') return
  switch (type.type) {
    case 'struct':
      for (const f of type.fields) {
        const path = [...prefix, f.name]
        visit(f, path)
        walk(f.type, path, visit)
      }
      return
    case 'array':
      walk(type.elementType, prefix, visit)
      return
    case 'map':
      walk(type.keyType, prefix, visit)
      walk(type.valueType, prefix, visit)
      return
  }
}
