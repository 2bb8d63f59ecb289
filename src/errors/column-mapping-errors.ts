import { DeltaError } from './delta-error.js'

/**
 * `alter.dropColumns` or `alter.renameColumn` on a table without column mapping. Delta refuses
 * both the same way (`DELTA_UNSUPPORTED_DROP_COLUMN`, `DELTA_UNSUPPORTED_RENAME_COLUMN`): without
 * column mapping, data files name their columns by the logical names, so a drop or rename would
 * have to rewrite every file.
 */
export class ColumnMappingRequiredError extends DeltaError {
  readonly code: 'DELTA_UNSUPPORTED_DROP_COLUMN' | 'DELTA_UNSUPPORTED_RENAME_COLUMN'
  constructor(change: 'drop' | 'rename') {
    super(
      change === 'drop'
        ? 'DROP COLUMN is not supported for a table without column mapping'
        : 'RENAME COLUMN is not supported for a table without column mapping',
      {
        hint: "Turn column mapping on first: alter.setProperties({ 'delta.columnMapping.mode': 'name' }) (CLI: delta-rlc alter <table> set-properties delta.columnMapping.mode=name). It rewrites no data.",
      },
    )
    this.code = change === 'drop' ? 'DELTA_UNSUPPORTED_DROP_COLUMN' : 'DELTA_UNSUPPORTED_RENAME_COLUMN'
  }
}

/** Why a column cannot be dropped or renamed: what depends on it. */
export type ColumnChangeRefusal =
  | 'DELTA_UNSUPPORTED_DROP_PARTITION_COLUMN'
  | 'DELTA_UNSUPPORTED_DROP_CLUSTERING_COLUMN'
  | 'DELTA_CONSTRAINT_DEPENDENT_COLUMN_CHANGE'
  | 'DELTA_GENERATED_COLUMNS_DEPENDENT_COLUMN_CHANGE'

/**
 * A column cannot be dropped or renamed because the table depends on it, as Delta refuses it: a
 * partition column or a clustering column cannot be dropped, and a column a CHECK constraint or a
 * generated column's expression names can be neither dropped nor renamed. Nothing is committed.
 */
export class ColumnChangeRefusedError extends DeltaError {
  readonly code: ColumnChangeRefusal
  /** The column (dotted for a nested field). */
  readonly column: string
  /** What depends on it: constraints or generated columns, each with its expression. */
  readonly dependents: readonly string[]
  constructor(code: ColumnChangeRefusal, column: string, dependents: readonly string[] = []) {
    const text: Record<ColumnChangeRefusal, [string, string]> = {
      DELTA_UNSUPPORTED_DROP_PARTITION_COLUMN: [
        `Cannot drop partition column '${column}'`,
        'Partition values are kept per file; rewrite the table without the column (overwrite with schemaMode overwrite) instead.',
      ],
      DELTA_UNSUPPORTED_DROP_CLUSTERING_COLUMN: [
        `Cannot drop clustering column '${column}'`,
        'Cluster the table by other columns first, or keep the column.',
      ],
      DELTA_CONSTRAINT_DEPENDENT_COLUMN_CHANGE: [
        `Cannot change column '${column}': the CHECK constraints ${dependents.join('; ')} use it`,
        'Drop the constraints first (alter.dropConstraint), then add them again over the new name.',
      ],
      DELTA_GENERATED_COLUMNS_DEPENDENT_COLUMN_CHANGE: [
        `Cannot change column '${column}': the generated columns ${dependents.join('; ')} are computed from it`,
        'Drop the generated columns first, or keep the column as it is.',
      ],
    }
    const [message, hint] = text[code]
    super(message, { hint })
    this.code = code
    this.column = column
    this.dependents = Object.freeze([...dependents])
  }
}

/**
 * A change of `delta.columnMapping.mode` Delta does not allow: turning it on is `none` to `name`
 * (or `id` at creation), and a mapped table keeps its mode
 * (`DELTA_UNSUPPORTED_COLUMN_MAPPING_MODE_CHANGE`). Nothing is committed.
 */
export class ColumnMappingModeChangeError extends DeltaError {
  readonly code = 'DELTA_UNSUPPORTED_COLUMN_MAPPING_MODE_CHANGE'
  readonly from: string
  readonly to: string
  constructor(from: string, to: string) {
    super(`Changing the column mapping mode from '${from}' to '${to}' is not supported`, {
      hint:
        from === 'none'
          ? "An existing table turns column mapping on with mode 'name'; mode 'id' is chosen when a table is created."
          : 'A table keeps its column mapping mode once set.',
    })
    this.from = from
    this.to = to
  }
}
