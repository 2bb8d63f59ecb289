import { DeltaError } from './delta-error.js'

/**
 * An OPTIMIZE named Z-order columns on a clustered table. Delta refuses it the same way
 * (`DELTA_CLUSTERING_WITH_ZORDER_BY`): a clustered table's OPTIMIZE already orders rows by its
 * clustering columns, and a Z-order by others would undo that layout.
 */
export class ClusteringWithZOrderByError extends DeltaError {
  readonly code = 'DELTA_CLUSTERING_WITH_ZORDER_BY'
  /** The table's clustering columns. */
  readonly clusteringColumns: readonly string[]
  /** The Z-order columns asked for. */
  readonly zOrderBy: readonly string[]
  constructor(clusteringColumns: readonly string[], zOrderBy: readonly string[]) {
    super(
      `OPTIMIZE of a clustered table cannot Z-order (zOrderBy: ${zOrderBy.join(', ')}); it clusters by ${clusteringColumns.length > 0 ? clusteringColumns.join(', ') : '(no clustering columns)'}`,
      { hint: 'Run optimize() without zOrderBy: it clusters the files by the clustering columns.' },
    )
    this.clusteringColumns = Object.freeze([...clusteringColumns])
    this.zOrderBy = Object.freeze([...zOrderBy])
  }
}
