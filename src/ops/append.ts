import { InvalidArgumentError } from '../errors/index.js'
import { appendOnly, targetFileSize } from '../protocol/table-properties.js'
import type { OperationContext, PreparedOperation } from '../txn/staged-operation.js'
import { addFileOf, writeTargetOf } from './write-support.js'

/** Options of an append. */
export interface AppendOptions {
  /** Bytes per new file; wins over the table's `delta.targetFileSize` (default 128 MiB). */
  readonly targetFileSize?: number
}

/**
 * A blind append: writes `rows` to new files (split by partition values) and adds them.
 * Rows are checked against the schema first; nothing is written for invalid input.
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
  const snap = ctx.snapshot
  // Reading appendOnly validates the property even though appends are always allowed.
  appendOnly(snap.properties)
  // Read before any write, so a malformed delta.targetFileSize fails an append of no rows too.
  const fileSize = options.targetFileSize ?? targetFileSize(snap.properties)
  const written =
    rows.length === 0
      ? []
      : await ctx.engine.writer.writeRows({
          rows,
          target: writeTargetOf(snap, fileSize),
          signal: ctx.signal,
        })
  ctx.wrote(written.map((f) => f.key))
  const now = ctx.now()
  const actions = written.map((f) => ({ add: addFileOf(f, now, true) }))
  return {
    operation: 'WRITE',
    parameters: { mode: 'Append', partitionBy: JSON.stringify(snap.partitionColumns) },
    actions,
    metrics: {
      numFiles: written.length,
      numOutputRows: written.reduce((n, f) => n + f.numRecords, 0),
      numOutputBytes: written.reduce((n, f) => n + f.size, 0),
    },
    changesData: true,
  }
}
