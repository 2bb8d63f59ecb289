import type { WrittenFile } from '../engine/data-writer.js'
import { InvalidArgumentError } from '../errors/index.js'
import { type StructField, toStructType } from '../protocol/schema.js'
import { appendOnly, targetFileSize } from '../protocol/table-properties.js'
import type { OperationContext, PreparedOperation } from '../txn/staged-operation.js'
import { computedColumnWrite } from './computed-columns.js'
import { evolvedTarget, evolveSchema, type SchemaEvolution, withSchemaEvolution } from './schema-merge.js'
import { addFileOf, writeTargetOf } from './write-support.js'

/** Options of an append of row batches. */
export interface BatchAppendOptions {
  /** Bytes per new file; wins over the table's `delta.targetFileSize` (default 128 MiB). */
  readonly targetFileSize?: number | undefined
  /**
   * Columns the batches carry that the table lacks: they are added to the schema (nullable) in
   * the same commit as the rows, as an append with `schemaMode: 'merge'` adds them (the rows of
   * a stream are not all known in advance, so their types are given here).
   */
  readonly newColumns?: readonly StructField[] | undefined
}

/**
 * A blind append of rows that arrive in batches (an input file read piece by piece): one write
 * of all of them, so the new files are cut by the target size across batch boundaries rather
 * than once per batch, and only one batch of JavaScript rows is held at a time. Every row is
 * checked as an append's are; a bad one fails the whole append with its index in the input,
 * and nothing is written.
 *
 * @param ctx - the transaction's context
 * @param batches - arrays of plain objects keyed by column name
 * @param options - `targetFileSize`
 * @param evolved - a schema change to commit with the rows, instead of `options.newColumns`
 *   (an input that declares its types: see `evolveSchemaForInput`)
 * @throws {InvalidArgumentError} for a batch that is not an array, rows that are not objects,
 *   unknown columns, wrong types, or nulls in non-nullable columns
 */
export async function buildBatchAppend(
  ctx: OperationContext,
  batches: AsyncIterable<readonly Readonly<Record<string, unknown>>[]>,
  options: BatchAppendOptions = {},
  evolved?: SchemaEvolution,
): Promise<PreparedOperation> {
  const snap = ctx.snapshot
  // Reading appendOnly validates the property even though appends are always allowed.
  appendOnly(snap.properties)
  // Read before any write, so a malformed delta.targetFileSize fails before the input is read.
  const fileSize = options.targetFileSize ?? targetFileSize(snap.properties)
  const evolution =
    evolved ?? (options.newColumns === undefined ? undefined : evolveSchema(snap, options.newColumns))
  const target = writeTargetOf(snap, fileSize)
  const computed = computedColumnWrite(snap)
  const written = await ctx.engine.writer.writeRows({
    rows: computed.batches(batches),
    target: evolvedTarget(target, evolution),
    signal: ctx.signal,
  })
  return computed.finish(withSchemaEvolution(blindAppendOperation(ctx, written), evolution))
}

/**
 * The WRITE (mode Append) operation that adds `written`, as every blind append commits it.
 *
 * @param ctx - the transaction's context; the written keys are handed to it
 * @param written - the new data files
 * @returns the prepared operation
 */
export function blindAppendOperation(
  ctx: OperationContext,
  written: readonly WrittenFile[],
): PreparedOperation {
  ctx.wrote(written.map((f) => f.key))
  const now = ctx.now()
  return {
    operation: 'WRITE',
    parameters: { mode: 'Append', partitionBy: JSON.stringify(ctx.snapshot.partitionColumns) },
    actions: written.map((f) => ({ add: addFileOf(f, now, true) })),
    metrics: {
      numFiles: written.length,
      numOutputRows: written.reduce((n, f) => n + f.numRecords, 0),
      numOutputBytes: written.reduce((n, f) => n + f.size, 0),
    },
    changesData: true,
  }
}

/**
 * Checks the options of an append of row batches: `targetFileSize`, a positive number, and
 * `newColumns`, schema fields.
 *
 * @throws {InvalidArgumentError} naming the option
 */
export function checkBatchAppendOptions(options: unknown): asserts options is BatchAppendOptions {
  if (options === undefined) return
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidArgumentError('options must be an object', { argument: 'options' })
  }
  for (const [key, value] of Object.entries(options)) {
    if (key === 'newColumns') {
      if (value !== undefined) {
        if (!Array.isArray(value)) {
          throw new InvalidArgumentError('options.newColumns must be an array of schema fields', {
            argument: 'options.newColumns',
          })
        }
        toStructType({ type: 'struct', fields: value })
      }
      continue
    }
    if (key !== 'targetFileSize') {
      throw new InvalidArgumentError(`Unknown option '${key}' of appendBatches`, {
        argument: `options.${key}`,
        hint: 'appendBatches takes { targetFileSize, newColumns }.',
      })
    }
    if (value !== undefined && (typeof value !== 'number' || !(value > 0) || !Number.isFinite(value))) {
      throw new InvalidArgumentError('options.targetFileSize must be a positive number of bytes', {
        argument: 'options.targetFileSize',
      })
    }
  }
}
