import type { DeltaTable } from '../index.js'
import type { CommandContext } from './command.js'
import type { CommitResult } from './commit-output.js'
import { type InputFormat, inputFormatOf, openInputFiles } from './input-file.js'

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
 * (so memory stays bounded), each batch is staged as new data files, and one commit lands them
 * all, or nothing.
 *
 * @param ctx - the command context (for the progress bar)
 * @param table - the open table
 * @param paths - the input files, all of one format
 * @param options - `--format`, rows per batch, target file size
 * @returns the commit result and counts
 * @throws {InvalidArgumentError} when the input does not fit the table schema; nothing is committed
 */
export async function appendInputFiles(
  ctx: CommandContext,
  table: DeltaTable,
  paths: readonly string[],
  options: {
    format?: string | undefined
    batchRows?: number | undefined
    targetFileSize?: number | undefined
  },
): Promise<AppendOutcome> {
  const format = inputFormatOf(paths[0] as string, options.format)
  for (const p of paths.slice(1)) inputFormatOf(p, options.format ?? format)
  const input = await openInputFiles(paths, format)
  try {
    const showProgress = ctx.io.stderr.isTTY === true && !ctx.json
    const total = showProgress ? await input.countRows() : undefined
    const progress = ctx.progress('append', total, 'rows')
    const txn = await table.begin()
    let rows = 0
    let batches = 0
    try {
      const batchRows = Math.max(1, options.batchRows ?? DEFAULT_BATCH_ROWS)
      for await (const batch of input.readRows(txn.snapshot.schema, batchRows)) {
        await txn.append(
          batch,
          options.targetFileSize === undefined ? {} : { targetFileSize: options.targetFileSize },
        )
        rows += batch.length
        batches++
        progress.update(rows)
      }
      progress.update(rows, 'committing')
      const result = await txn.commit()
      return { result, rows, batches, format }
    } finally {
      progress.finish()
    }
  } finally {
    input.close()
  }
}
