import { InvalidArgumentError } from '../errors/index.js'
import type { Expression } from '../expressions/ast.js'
import { appendOnly, targetFileSize } from '../protocol/table-properties.js'
import type { OperationContext, PreparedOperation } from '../txn/staged-operation.js'
import { blindAppendOperation } from './append-batches.js'
import { computedColumnWrite } from './computed-columns.js'
import { buildOverwrite } from './overwrite.js'
import {
  evolvedTarget,
  evolveSchemaForRows,
  overwriteSchemaForRows,
  type SchemaEvolution,
  type SchemaMode,
  withSchemaEvolution,
} from './schema-merge.js'
import { writeTargetOf } from './write-support.js'

/** Options of an append. */
export interface AppendOptions {
  /** Bytes per new file; wins over the table's `delta.targetFileSize` (default 128 MiB). */
  readonly targetFileSize?: number
  /**
   * `'append'` (default) adds the rows; `'overwrite'` replaces the whole table with them, or with
   * `replaceWhere` / `partitionOverwriteMode: 'dynamic'` only part of it (see `buildOverwrite`).
   */
  readonly mode?: 'append' | 'overwrite'
  /** With `mode: 'overwrite'`: replace only the rows matching this predicate; every new row must match it. */
  readonly replaceWhere?: string | Expression
  /**
   * With `mode: 'overwrite'`: `'dynamic'` replaces only the partitions the new rows land in;
   * `'static'` (default) the whole table, or `replaceWhere`.
   */
  readonly partitionOverwriteMode?: 'static' | 'dynamic'
  /**
   * `'merge'`: columns of the rows that the table lacks are added to its schema (nullable) in
   * the same commit, as Spark's `mergeSchema` does; their types are read off the values (see
   * `schema-merge.ts`); on a table with `delta.enableTypeWidening=true` a column whose values
   * need a wider type is widened. `'overwrite'` (with `mode: 'overwrite'`, not with
   * `replaceWhere` or dynamic partition overwrite): the table's schema becomes the rows' columns,
   * as Spark's `overwriteSchema` does.
   */
  readonly schemaMode?: SchemaMode | undefined
  /** With `schemaMode: 'overwrite'`: the new partition columns (default: the table's). */
  readonly partitionBy?: readonly string[] | undefined
}

/**
 * A blind append: writes `rows` to new files (split by partition values) and adds them.
 * Rows are checked against the schema first; nothing is written for invalid input. With
 * `mode: 'overwrite'` it is an overwrite instead (`buildOverwrite`).
 *
 * @param ctx - the transaction's context
 * @param rows - plain objects keyed by column name
 * @throws {InvalidArgumentError} for rows that are not objects, unknown columns, wrong types,
 *   or nulls in non-nullable columns
 */
export async function buildAppend(
  ctx: OperationContext,
  rows: readonly Readonly<Record<string, unknown>>[],
  options: AppendOptions = {},
): Promise<PreparedOperation> {
  if (!Array.isArray(rows)) {
    throw new InvalidArgumentError('append expects an array of row objects', { argument: 'rows' })
  }
  checkWriteMode(options)
  const snap = ctx.snapshot
  if (options.mode === 'overwrite') {
    let evolution: SchemaEvolution | undefined
    if (options.schemaMode === 'merge') evolution = evolveSchemaForRows(snap, rows)
    else if (options.schemaMode === 'overwrite')
      evolution = overwriteSchemaForRows(snap, rows, options.partitionBy)
    return buildOverwrite(ctx, [rows], options, evolution)
  }
  // Reading appendOnly validates the property even though appends are always allowed.
  appendOnly(snap.properties)
  // Read before any write, so a malformed delta.targetFileSize fails an append of no rows too.
  const fileSize = options.targetFileSize ?? targetFileSize(snap.properties)
  const evolution = options.schemaMode === 'merge' ? evolveSchemaForRows(snap, rows) : undefined
  const target = writeTargetOf(snap, fileSize)
  const computed = computedColumnWrite(snap)
  const written =
    rows.length === 0
      ? []
      : await ctx.engine.writer.writeRows({
          rows: computed.rows(rows),
          target: evolvedTarget(target, evolution),
          signal: ctx.signal,
        })
  return computed.finish(withSchemaEvolution(blindAppendOperation(ctx, written), evolution))
}

/**
 * Refuses overwrite options on an append: they would be ignored, and the call would add rows
 * where the caller meant to replace some. A schema overwrite replaces the whole table, so it
 * refuses `replaceWhere` and dynamic partition overwrite, as Spark does.
 *
 * @param options - the append's options
 * @throws {InvalidArgumentError} naming the option
 */
export function checkWriteMode(options: AppendOptions): void {
  if (options.partitionBy !== undefined && options.schemaMode !== 'overwrite') {
    throw new InvalidArgumentError("options.partitionBy applies to schemaMode: 'overwrite' only", {
      argument: 'options.partitionBy',
      hint: "Pass mode: 'overwrite' and schemaMode: 'overwrite' with partitionBy to repartition the table.",
    })
  }
  if (options.mode === 'overwrite') {
    if (options.schemaMode !== 'overwrite') return
    const partial =
      options.replaceWhere !== undefined
        ? 'replaceWhere'
        : options.partitionOverwriteMode === 'dynamic'
          ? 'partitionOverwriteMode'
          : undefined
    if (partial !== undefined) {
      throw new InvalidArgumentError(
        `schemaMode: 'overwrite' cannot be combined with ${partial === 'replaceWhere' ? 'replaceWhere' : "partitionOverwriteMode: 'dynamic'"}: a new schema must replace every row`,
        {
          argument: `options.${partial}`,
          hint: "Overwrite the whole table to change its schema, or use schemaMode: 'merge' to add columns while replacing part of it.",
        },
      )
    }
    return
  }
  if (options.schemaMode === 'overwrite') {
    throw new InvalidArgumentError("schemaMode: 'overwrite' applies to an overwrite only", {
      argument: 'options.schemaMode',
      hint: "Pass mode: 'overwrite' to replace the table and its schema, or schemaMode: 'merge' to add columns.",
    })
  }
  for (const key of ['replaceWhere', 'partitionOverwriteMode'] as const) {
    if (options[key] !== undefined) {
      throw new InvalidArgumentError(`options.${key} applies to an overwrite only`, {
        argument: `options.${key}`,
        hint: `Pass mode: 'overwrite' with ${key}, or leave ${key} out to append.`,
      })
    }
  }
}
