import { type DeltaTable, InternalError, type OverwriteOptions } from '../index.js'
import type { CommandContext } from './command.js'
import type { CommitResult } from './commit-output.js'
import {
  type ExtraColumns,
  type InputFormat,
  inferSchema,
  inputFormatOf,
  openInputFiles,
} from './input-file.js'
import { InterruptedError, type StoreWrites } from './interrupt.js'

/** Rows per `append` batch when the user gives no `--batch-rows`. */
export const DEFAULT_BATCH_ROWS = 100_000

/** What {@link appendInputFiles} did. */
export interface AppendOutcome {
  readonly result: CommitResult
  readonly rows: number
  readonly batches: number
  readonly format: InputFormat
}

/**
 * Appends the rows of input files to a table as one transaction: the files are read in batches
 * (so memory stays bounded), the batches are one write whose files are cut by the target size,
 * and one commit lands them all, or nothing.
 *
 * When anything fails before the commit (a bad value, a read that stops short, SIGINT or
 * SIGTERM through `ctx.io.interrupt`), the transaction is aborted, which deletes every data file
 * it staged. Once the commit has started it runs to its end: stopping it half-way could leave
 * its outcome unknown.
 *
 * @param ctx - the command context (for the progress bar and the interrupt signal)
 * @param table - the open table
 * @param paths - the input files, all of one format
 * @param options - `--format`, rows per batch, target file size, the input columns read
 * @returns the commit result and counts
 * @throws {InvalidArgumentError} when the input does not fit the table schema; nothing is committed
 * @throws {InterruptedError} when a stop signal arrived before the commit; nothing is committed
 */
export async function appendInputFiles(
  ctx: CommandContext,
  table: DeltaTable,
  paths: readonly string[],
  options: {
    format?: string | undefined
    batchRows?: number | undefined
    targetFileSize?: number | undefined
    /** `--columns`: read only these input columns. */
    columns?: readonly string[] | undefined
    /** What happens to input columns the table lacks (default `'error'`). */
    extraColumns?: ExtraColumns | undefined
    /** `--mode overwrite`: what the rows replace (see `Transaction.overwrite`); absent for an append. */
    overwrite?: Omit<OverwriteOptions, 'targetFileSize'> | undefined
    /**
     * `--schema-mode merge`: input columns the table lacks are added to its schema in the same
     * commit (nullable, typed as DuckDB reads them; a timestamp without a zone as `timestamp`).
     */
    schemaMode?: 'merge' | undefined
    /** The counts of a table opened by `openWatchedTable`, for the report of an interrupt. */
    writes?: StoreWrites | undefined
  },
): Promise<AppendOutcome> {
  const format = inputFormatOf(paths[0] as string, options.format)
  for (const p of paths.slice(1)) inputFormatOf(p, options.format ?? format)
  const interrupt = ctx.io.interrupt
  // Staging stops on an interrupt; the commit does not (see above), so it gets its own signal.
  const staging = new AbortController()
  const stopStaging = () => staging.abort(interrupt?.reason)
  interrupt?.addEventListener('abort', stopStaging, { once: true })
  const input = await openInputFiles(paths, format, { columns: options.columns })
  try {
    const showProgress = ctx.io.stderr.isTTY === true && !ctx.json
    const total = showProgress ? await input.countRows() : undefined
    const progress = ctx.progress('append', total, 'rows')
    const txn = await table.begin({ signal: staging.signal })
    let rows = 0
    let batches = 0
    let stagedFiles = 0
    try {
      const batchRows = Math.max(1, options.batchRows ?? DEFAULT_BATCH_ROWS)
      const extra = options.extraColumns ?? 'error'
      const known = new Set(txn.snapshot.schema.fields.map((f) => f.name.toLowerCase()))
      const newColumns =
        options.schemaMode === 'merge'
          ? inferSchema(
              input.columns.filter((c) => !known.has(c.name.toLowerCase())),
              'timestamp',
            ).fields
          : []
      const schema = { ...txn.snapshot.schema, fields: [...txn.snapshot.schema.fields, ...newColumns] }
      const read = input.readRows(schema, batchRows, extra, staging.signal)
      // Every batch goes to one write, so the files are cut by the target size across batches.
      const counted = async function* () {
        for await (const batch of read) {
          staging.signal.throwIfAborted()
          rows += batch.length
          batches++
          progress.update(rows)
          yield batch
        }
      }
      const size = options.targetFileSize === undefined ? {} : { targetFileSize: options.targetFileSize }
      const metrics =
        options.overwrite === undefined
          ? await txn.appendBatches(counted(), newColumns.length === 0 ? size : { ...size, newColumns })
          : await txn.overwrite(counted(), { ...size, ...options.overwrite })
      stagedFiles = metrics.numFiles ?? 0
      const stagedRows = metrics.numOutputRows ?? 0
      staging.signal.throwIfAborted()
      // The rows written are counted by the writer from its own files: a difference from the
      // rows read means rows were lost or doubled on the way, and nothing may be committed.
      if (stagedRows !== rows) {
        throw new InternalError(
          `the staged data files hold ${stagedRows} rows but ${rows} were read from the input; nothing was committed`,
        )
      }
    } catch (err) {
      progress.finish()
      await txn.abort()
      const stop = staging.signal.aborted ? staging.signal.reason : undefined
      if (stop instanceof InterruptedError) {
        // The watched store counts the files the write undid itself as well as those the abort removed.
        throw new InterruptedError(stop.signal, options.writes?.removed ?? stagedFiles)
      }
      throw err
    }
    progress.update(rows, 'committing')
    interrupt?.removeEventListener('abort', stopStaging)
    // Listening keeps the CLI from ending the process on a signal while the commit runs.
    const duringCommit = () => {}
    interrupt?.addEventListener('abort', duringCommit, { once: true })
    try {
      const result = await txn.commit()
      progress.finish()
      if (interrupt?.aborted) {
        ctx.io.stderr.write(
          `${ctx.err.paint('yellow', 'note')}: the interrupt came while committing; the commit completed (version ${result.version})\n`,
        )
      }
      return { result, rows, batches, format }
    } finally {
      progress.finish()
      interrupt?.removeEventListener('abort', duringCommit)
    }
  } finally {
    interrupt?.removeEventListener('abort', stopStaging)
    input.close()
  }
}
