/**
 * Clustered tables as the protocol states them (PROTOCOL.md "Clustered Table"): the `clustering`
 * writer feature (which needs `domainMetadata`), the `delta.clustering` domain that names the
 * clustering columns by physical column path, and the `clusteringProvider` field that an `add`
 * carries once a clustering implementation clustered its file.
 *
 * Databricks wrote clustered tables under an earlier name before the protocol had the feature:
 * the `liquid` writer feature, a `delta.liquid` domain (`{"clusteringColumns":[{"physicalName":
 * ["id"]}]}`) and the `delta.liquid.clusteringColumns` property. The protocol defines none of
 * these, so such a table is read for its columns, its domain is left as it is, and no
 * `clusteringProvider` is written to it (see {@link tableClustering}).
 */
import { InvalidArgumentError, InvalidTableError } from '../errors/index.js'
import { createDomainMetadata, type DomainMetadata, type Metadata, type Protocol } from './actions.js'
import { parseJsonText } from './json-text.js'
import { isRawObject } from './raw-fields.js'
import {
  type DataType,
  decimalParts,
  isStructType,
  physicalName,
  type StructField,
  type StructType,
} from './schema.js'
import { columnMappingMode, isFeatureSupported } from './table-features.js'

/** The writer feature of a clustered table. */
export const CLUSTERING_FEATURE = 'clustering'

/** Databricks' early name of {@link CLUSTERING_FEATURE}; the protocol does not define it. */
export const LEGACY_CLUSTERING_FEATURE = 'liquid'

/** The metadata domain naming a clustered table's columns. */
export const CLUSTERING_DOMAIN = 'delta.clustering'

/** The domain Databricks wrote for {@link LEGACY_CLUSTERING_FEATURE} tables. */
export const LEGACY_CLUSTERING_DOMAIN = 'delta.liquid'

/** The property Databricks wrote for {@link LEGACY_CLUSTERING_FEATURE} tables: logical names, comma-separated. */
export const LEGACY_CLUSTERING_COLUMNS_PROPERTY = 'delta.liquid.clusteringColumns'

/**
 * The name of this library's clustering implementation, written to `clusteringProvider` on the
 * files its OPTIMIZE clustered. It is its own name, not Delta Spark's `liquid`: the protocol ties
 * reclustering rights to the name (an implementation reclusters only unclustered files and its
 * own), and this implementation orders rows on a Z-order curve, not on Spark's.
 */
export const CLUSTERING_PROVIDER = 'delta-rlc'

/** At most this many clustering columns, as Delta allows (`clusteringColumnsLimit`, default 4). */
export const MAX_CLUSTERING_COLUMNS = 4

/** How a table is clustered, as read from its protocol, metadata and domains. */
export interface TableClustering {
  /** The feature that makes the table clustered. */
  readonly feature: typeof CLUSTERING_FEATURE | typeof LEGACY_CLUSTERING_FEATURE
  /** The clustering columns as physical column paths, as recorded. */
  readonly physicalColumns: readonly (readonly string[])[]
  /**
   * The clustering columns as top-level logical names, in order, or the recorded path that names
   * no top-level column of the schema (a nested column, or a column that no longer exists).
   */
  readonly columns: readonly string[] | { readonly unresolved: readonly string[] }
  /**
   * What this library writes to `clusteringProvider` on the files it clusters: the provider on a
   * `clustering` table, nothing on a legacy one (the protocol does not define the field there).
   */
  readonly provider: string | undefined
}

/**
 * The `delta.clustering` domain action for these columns: `{"clusteringColumns":[["a"],["b","c"]]}`,
 * each column a physical path, as Delta writes it.
 *
 * @param physicalColumns - physical column paths, in clustering order
 * @returns a frozen domain metadata payload
 */
export function clusteringDomain(physicalColumns: readonly (readonly string[])[]): DomainMetadata {
  return createDomainMetadata({
    domain: CLUSTERING_DOMAIN,
    configuration: JSON.stringify({ clusteringColumns: physicalColumns.map((p) => [...p]) }),
    removed: false,
  })
}

/**
 * The clustering columns a `delta.clustering` or `delta.liquid` domain records, as physical
 * paths. Accepted shapes: Delta's paths (`[["a"],["b","c"]]`), the protocol example's flat names
 * (`["a","b"]`), and the legacy objects (`[{"physicalName":["a"]}]`).
 *
 * @param dm - the domain action
 * @returns the paths, in clustering order
 * @throws {InvalidTableError} `malformed-action` when the configuration has none of these shapes
 */
export function parseClusteringColumns(dm: DomainMetadata): string[][] {
  const fail = (problem: string): never => {
    throw new InvalidTableError(
      'malformed-action',
      `Invalid ${dm.domain} domain metadata: ${problem} (configuration ${JSON.stringify(dm.configuration.slice(0, 200))})`,
    )
  }
  let raw: unknown
  try {
    raw = parseJsonText(dm.configuration)
  } catch {
    return fail('the configuration is not JSON')
  }
  if (!isRawObject(raw)) return fail('the configuration is not a JSON object')
  const list = raw.clusteringColumns
  if (!Array.isArray(list)) return fail('clusteringColumns is not a list')
  return list.map((entry) => {
    const path = isRawObject(entry) ? entry.physicalName : entry
    if (typeof path === 'string' && path !== '') return [path]
    if (Array.isArray(path) && path.length > 0 && path.every((s) => typeof s === 'string' && s !== '')) {
      return path as string[]
    }
    return fail('a clustering column is neither a name nor a list of names')
  })
}

/**
 * How a table is clustered, or `undefined` when it is not: a table is clustered when its protocol
 * supports `clustering` (or the legacy `liquid`). The columns come from the `delta.clustering`
 * domain (legacy: the `delta.liquid` domain, else the `delta.liquid.clusteringColumns` property);
 * a clustered table without them has no clustering columns.
 *
 * @param protocol - the table protocol
 * @param metadata - the table metadata
 * @param domains - the snapshot's live domains by name
 * @param schema - the table schema, to name the columns logically
 * @throws {InvalidTableError} when the domain is malformed or column mapping is inconsistent
 */
export function tableClustering(
  protocol: Protocol,
  metadata: Metadata,
  domains: ReadonlyMap<string, DomainMetadata>,
  schema: StructType,
): TableClustering | undefined {
  const feature = isFeatureSupported(protocol, CLUSTERING_FEATURE)
    ? CLUSTERING_FEATURE
    : isFeatureSupported(protocol, LEGACY_CLUSTERING_FEATURE)
      ? LEGACY_CLUSTERING_FEATURE
      : undefined
  if (feature === undefined) return undefined
  const mode = columnMappingMode(protocol, metadata)
  const domain = domains.get(feature === CLUSTERING_FEATURE ? CLUSTERING_DOMAIN : LEGACY_CLUSTERING_DOMAIN)
  let physicalColumns: string[][] = []
  if (domain !== undefined && !domain.removed) physicalColumns = parseClusteringColumns(domain)
  else if (feature === LEGACY_CLUSTERING_FEATURE) {
    // The property holds logical names; without column mapping they are the physical ones too.
    const names = (metadata.configuration[LEGACY_CLUSTERING_COLUMNS_PROPERTY] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '')
    physicalColumns = names.map((n) => {
      const f = schema.fields.find((x) => x.name.toLowerCase() === n.toLowerCase())
      return [f === undefined ? n : physicalName(f, mode)]
    })
  }
  const columns: string[] = []
  let unresolved: readonly string[] | undefined
  for (const path of physicalColumns) {
    const f = path.length === 1 ? schema.fields.find((x) => physicalName(x, mode) === path[0]) : undefined
    if (f === undefined) {
      unresolved ??= path
      continue
    }
    columns.push(f.name)
  }
  return Object.freeze({
    feature,
    physicalColumns: Object.freeze(physicalColumns.map((p) => Object.freeze(p))),
    columns: unresolved === undefined ? Object.freeze(columns) : Object.freeze({ unresolved }),
    provider: feature === CLUSTERING_FEATURE ? CLUSTERING_PROVIDER : undefined,
  })
}

/**
 * Whether a column of this type can cluster a table: Delta clusters only by columns it keeps
 * min/max statistics for (numbers, decimals, strings, dates and timestamps), so booleans, binary,
 * nested and variant columns cannot.
 *
 * @param type - the column's type
 */
export function isClusteringType(type: DataType): boolean {
  if (typeof type !== 'string') return false
  if (decimalParts(type) !== undefined) return true
  return [
    'byte',
    'short',
    'integer',
    'long',
    'float',
    'double',
    'string',
    'date',
    'timestamp',
    'timestamp_ntz',
  ].includes(type)
}

/**
 * Checks the clustering columns asked of a new table and returns them as the schema names them.
 * The protocol forbids clustering a partitioned table, and requires statistics for every
 * clustering column, so each must be among the leading `statsColumns` leaf columns the writer
 * keeps statistics for.
 *
 * @param schema - the new table's schema
 * @param partitionBy - its partition columns
 * @param clusterBy - the columns asked for
 * @param statsColumns - `delta.dataSkippingNumIndexedCols` (-1: all)
 * @returns the columns' schema names, in order
 * @throws {InvalidArgumentError} (`argument: 'clusterBy'`) for a partitioned table, no or too many
 *   columns, an unknown, repeated, nested-typed or non-orderable column, or one without statistics
 */
export function checkClusterBy(
  schema: StructType,
  partitionBy: readonly string[],
  clusterBy: unknown,
  statsColumns: number,
): string[] {
  const bad = (message: string, hint?: string): never => {
    throw new InvalidArgumentError(message, {
      argument: 'clusterBy',
      ...(hint === undefined ? {} : { hint }),
    })
  }
  if (!Array.isArray(clusterBy) || clusterBy.some((c) => typeof c !== 'string')) {
    return bad('clusterBy must be an array of column names', "Pass { clusterBy: ['col'] }.")
  }
  if (partitionBy.length > 0) {
    return bad(
      'A table cannot be both partitioned and clustered (the Delta protocol forbids it)',
      'Drop partitionBy and cluster by those columns instead, or drop clusterBy.',
    )
  }
  if (clusterBy.length === 0) return bad('clusterBy needs at least one column')
  if (clusterBy.length > MAX_CLUSTERING_COLUMNS) {
    return bad(
      `A table can be clustered by at most ${MAX_CLUSTERING_COLUMNS} columns, got ${clusterBy.length}`,
      'Keep the columns queries filter on most.',
    )
  }
  const leaves = leafPositions(schema)
  const out: string[] = []
  for (const name of clusterBy as string[]) {
    const field =
      schema.fields.find((f) => f.name === name) ??
      schema.fields.find((f) => f.name.toLowerCase() === name.toLowerCase())
    if (field === undefined) {
      return bad(
        `Clustering column '${name}' is not in the schema`,
        `The table has: ${schema.fields.map((f) => f.name).join(', ')}`,
      )
    }
    if (!isClusteringType(field.type)) {
      return bad(
        `Clustering column '${field.name}' has type ${typeName(field)}, which cannot cluster a table`,
        'Cluster by number, decimal, string, date or timestamp columns (Delta keeps min/max statistics only for those).',
      )
    }
    if (out.includes(field.name)) return bad(`Clustering column '${field.name}' is listed twice`)
    const leaf = leaves.get(field.name) ?? 0
    if (statsColumns >= 0 && leaf >= statsColumns) {
      return bad(
        `Clustering column '${field.name}' gets no statistics: it is leaf column ${leaf + 1} and delta.dataSkippingNumIndexedCols is ${statsColumns}`,
        'Move the column among the first ones, or raise delta.dataSkippingNumIndexedCols (-1: all columns).',
      )
    }
    out.push(field.name)
  }
  return out
}

/** Each top-level column's position among the schema's leaf columns (structs are expanded). */
function leafPositions(schema: StructType): Map<string, number> {
  const out = new Map<string, number>()
  let n = 0
  const count = (t: DataType): number =>
    isStructType(t) ? t.fields.reduce((s, f) => s + count(f.type), 0) : t === 'void' ? 0 : 1
  for (const f of schema.fields) {
    out.set(f.name, n)
    n += count(f.type)
  }
  return out
}

function typeName(field: StructField): string {
  return typeof field.type === 'string' ? field.type : field.type.type
}

/** What {@link clusteringOf} reads of a snapshot. */
export interface ClusteringSource {
  readonly protocol: Protocol
  readonly metadata: Metadata
  readonly schema: StructType
  readonly state: { readonly domainMetadata: ReadonlyMap<string, DomainMetadata> }
}

/**
 * How a snapshot's table is clustered (see {@link tableClustering}), or `undefined` when it is
 * not clustered.
 *
 * @param snap - a snapshot (`await table.snapshot()`)
 * @returns the clustering feature, columns and provider
 * @throws {InvalidTableError} when the clustering domain is malformed
 */
export function clusteringOf(snap: ClusteringSource): TableClustering | undefined {
  return tableClustering(snap.protocol, snap.metadata, snap.state.domainMetadata, snap.schema)
}
