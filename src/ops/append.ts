import { InvalidArgumentError, UnsupportedError } from '../errors/index.js'
import type { Expression } from '../expressions/ast.js'
import { appendOnly, targetFileSize } from '../protocol/table-properties.js'
import type { OperationContext, PreparedOperation } from '../txn/staged-operation.js'
import { blindAppendOperation } from './append-batches.js'
import { computedColumnWrite } from './computed-columns.js'
import { buildOverwrite } from './overwrite.js'
import { evolveSchemaForRows, type SchemaMode, withSchemaEvolution } from './schema-merge.js'
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
   * `schema-merge.ts`). Not with `mode: 'overwrite'`.
   */
  readonly schemaMode?: SchemaMode | undefined
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
  if (options.mode === 'overwrite') return buildOverwrite(ctx, [rows], options)
  const snap = ctx.snapshot
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
          target: evolution === undefined ? target : { ...target, schema: evolution.schema },
          signal: ctx.signal,
        })
  return computed.finish(withSchemaEvolution(blindAppendOperation(ctx, written), evolution))
}

/**
 * Refuses overwrite options on an append: they would be ignored, and the call would add rows
 * where the caller meant to replace some.
 *
 * @param options - the append's options
 * @throws {InvalidArgumentError} naming the option
 */
function checkWriteMode(options: AppendOptions): void {
  if (options.mode === 'overwrite') {
    if (options.schemaMode !== undefined) {
      throw new UnsupportedError('schemaMode is not supported with an overwrite yet', {
        hint: "Add the columns first with table.alter.addColumns, then overwrite; or append with schemaMode: 'merge'.",
      })
    }
    return
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
