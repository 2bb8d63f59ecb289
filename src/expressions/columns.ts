/**
 * Column resolution for evaluation and data skipping: the declared type of each column path,
 * its physical path (column mapping renames columns in stats, partition values and files), and
 * whether it is a partition column. Names resolve exactly first, then case-insensitively, as
 * Delta column names are case-insensitive.
 */

import { InvalidArgumentError } from '../errors/index.js'
import { type DataType, parseDataType } from './data-types.js'

/** What is known about one column path. */
export interface ColumnInfo {
  /** The path as the schema spells it. */
  readonly path: readonly string[]
  /** The path under which stats and partition values are keyed (physical names). */
  readonly physicalPath: readonly string[]
  /** The primitive type, or `undefined` for a struct, array, map or unknown type. */
  readonly type: DataType | undefined
  /** Whether this is a partition column (always a top-level column). */
  readonly partition: boolean
  /**
   * Types the column had before type widening (`delta.typeChanges`), whose stats older files
   * may still carry; empty when the type never changed.
   */
  readonly widenedFrom: readonly string[]
}

/** Resolves column paths written in predicates. */
export interface ColumnResolver {
  /**
   * @param path - the path as written in a predicate
   * @returns the column, or `undefined` when no such column exists
   */
  resolve(path: readonly string[]): ColumnInfo | undefined
}

interface Node {
  readonly name: string
  readonly physicalName: string
  readonly type: DataType | undefined
  readonly widenedFrom: readonly string[]
  readonly children: readonly Node[]
}

function findChild(nodes: readonly Node[], name: string): Node | undefined {
  const exact = nodes.find((n) => n.name === name)
  if (exact !== undefined) return exact
  const lower = name.toLowerCase()
  const matches = nodes.filter((n) => n.name.toLowerCase() === lower)
  return matches.length === 1 ? matches[0] : undefined
}

function resolverOver(roots: readonly Node[], partitionColumns: readonly string[]): ColumnResolver {
  const partitions = new Set(partitionColumns.map((c) => c.toLowerCase()))
  return Object.freeze({
    resolve(path: readonly string[]): ColumnInfo | undefined {
      let nodes = roots
      const logical: string[] = []
      const physical: string[] = []
      let node: Node | undefined
      for (const part of path) {
        node = findChild(nodes, part)
        if (node === undefined) return undefined
        logical.push(node.name)
        physical.push(node.physicalName)
        nodes = node.children
      }
      if (node === undefined) return undefined
      return Object.freeze({
        path: Object.freeze(logical),
        physicalPath: Object.freeze(physical),
        type: node.type,
        widenedFrom: node.widenedFrom,
        partition: path.length === 1 && partitions.has((logical[0] as string).toLowerCase()),
      })
    },
  })
}

function typeNode(
  name: string,
  physicalName: string,
  type: unknown,
  mapped: boolean,
  widenedFrom: readonly string[],
): Node {
  if (typeof type === 'string') {
    return { name, physicalName, type: parseDataType(type), widenedFrom, children: [] }
  }
  const t = type as { type?: unknown; fields?: unknown }
  if (t !== null && typeof t === 'object' && t.type === 'struct' && Array.isArray(t.fields)) {
    return { name, physicalName, type: undefined, widenedFrom, children: structFields(t.fields, mapped) }
  }
  return { name, physicalName, type: undefined, widenedFrom, children: [] }
}

function typeChanges(metadata: Record<string, unknown> | undefined): string[] {
  const changes = metadata?.['delta.typeChanges']
  if (!Array.isArray(changes)) return []
  return changes
    .map((c) => (c as { fromType?: unknown } | null)?.fromType)
    .filter((t): t is string => typeof t === 'string')
}

function structFields(fields: readonly unknown[], mapped: boolean): Node[] {
  return fields.map((f) => {
    const field = f as { name?: unknown; type?: unknown; metadata?: Record<string, unknown> }
    if (typeof field?.name !== 'string') {
      throw new InvalidArgumentError('Invalid schema: every field needs a string name', {
        argument: 'schema',
      })
    }
    const physical = field.metadata?.['delta.columnMapping.physicalName']
    const physicalName = mapped && typeof physical === 'string' ? physical : field.name
    return typeNode(field.name, physicalName, field.type, mapped, typeChanges(field.metadata))
  })
}

/**
 * A resolver over a Delta schema in Spark's JSON form (`{"type":"struct","fields":[...]}`, as an
 * object or as the `schemaString` text).
 *
 * @param schema - the schema object or its JSON text
 * @param options - `partitionColumns`: the table's partition columns; `columnMapping`: whether
 *   stats and partition values are keyed by `delta.columnMapping.physicalName` (default: true,
 *   which only matters for fields that carry that metadata)
 * @returns the resolver
 * @throws {InvalidArgumentError} when the schema is not a struct schema
 */
export function columnsFromSchema(
  schema: unknown,
  options: { partitionColumns?: readonly string[]; columnMapping?: boolean } = {},
): ColumnResolver {
  let parsed: unknown = schema
  if (typeof schema === 'string') {
    try {
      parsed = JSON.parse(schema)
    } catch (cause) {
      throw new InvalidArgumentError('Invalid schema: not valid JSON', { argument: 'schema', cause })
    }
  }
  const root = parsed as { type?: unknown; fields?: unknown }
  if (root === null || typeof root !== 'object' || root.type !== 'struct' || !Array.isArray(root.fields)) {
    throw new InvalidArgumentError('Invalid schema: expected {"type":"struct","fields":[...]}', {
      argument: 'schema',
    })
  }
  return resolverOver(
    structFields(root.fields, options.columnMapping ?? true),
    options.partitionColumns ?? [],
  )
}

/**
 * A resolver from a flat map of dotted paths to type names, e.g.
 * `{ id: 'long', 'address.city': 'string' }`. Physical names equal logical names.
 *
 * @param types - type name per dotted column path
 * @param options - `partitionColumns`: the top-level partition columns
 * @returns the resolver
 * @throws {InvalidArgumentError} for a type name that is not a primitive type
 */
export function columnsFromTypes(
  types: Readonly<Record<string, string>>,
  options: { partitionColumns?: readonly string[] } = {},
): ColumnResolver {
  interface Mutable {
    name: string
    physicalName: string
    type: DataType | undefined
    widenedFrom: readonly string[]
    children: Mutable[]
  }
  const roots: Mutable[] = []
  for (const [dotted, typeName] of Object.entries(types)) {
    const type = parseDataType(typeName)
    if (type === undefined) {
      throw new InvalidArgumentError(`Unknown type ${JSON.stringify(typeName)} for column ${dotted}`, {
        argument: 'types',
      })
    }
    let level = roots
    const parts = dotted.split('.')
    parts.forEach((part, i) => {
      let node = level.find((n) => n.name === part)
      if (node === undefined) {
        node = { name: part, physicalName: part, type: undefined, widenedFrom: [], children: [] }
        level.push(node)
      }
      if (i === parts.length - 1) node.type = type
      level = node.children
    })
  }
  return resolverOver(roots, options.partitionColumns ?? [])
}
