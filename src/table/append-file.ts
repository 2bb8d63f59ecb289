/**
 * Appending the rows of CSV, JSON lines or Parquet files, as the `append` command does: the
 * files are read through DuckDB in batches (memory stays bounded), every value is converted to
 * its column's type and checked, and all batches are one write (its files cut by the target size
 * across batches) that lands in one commit or none.
 */

import { extname } from 'node:path'
import { InternalError, InvalidArgumentError } from '../errors/index.js'
import { type AppendOptions, checkWriteMode } from '../ops/append.js'
import { buildBatchAppend } from '../ops/append-batches.js'
import { buildOverwrite } from '../ops/overwrite.js'
import { evolveSchema, evolveSchemaForInput, type SchemaEvolution } from '../ops/schema-merge.js'
import type { StructField, StructType } from '../protocol/schema.js'
import type { Transaction } from './transaction.js'

/** Formats of input files. */
export type FileFormat = 'json' | 'csv' | 'parquet'

/** Options of `DeltaTable.appendFile`. */
export interface AppendFileOptions {
  /**
   * `'csv'` (with a header line), `'json'` (JSON lines, or a JSON array) or `'parquet'`; by
   * default from the extension (`.csv`/`.tsv`/`.txt`, `.json`/`.jsonl`/`.ndjson`,
   * `.parquet`/`.pq`).
   */
  readonly format?: FileFormat | 'jsonl' | 'ndjson' | undefined
  /** Read only these input columns (matched case-insensitively). */
  readonly columns?: readonly string[] | undefined
  /** Leave out input columns the table does not have, instead of refusing them (default false). */
  readonly ignoreExtraColumns?: boolean | undefined
  /** Rows per batch read and staged (default 100,000). */
  readonly batchRows?: number | undefined
  /** Bytes per new data file (default the table's `delta.targetFileSize`, else about 128 MiB). */
  readonly targetFileSize?: number | undefined
  /** `'overwrite'` replaces the table (or part of it) with the rows, as `append` does. */
  readonly mode?: AppendOptions['mode'] | undefined
  /** With `mode: 'overwrite'`: replace only the rows matching this predicate. */
  readonly replaceWhere?: AppendOptions['replaceWhere'] | undefined
  /** With `mode: 'overwrite'`: `'dynamic'` replaces only the partitions the rows land in. */
  readonly partitionOverwriteMode?: AppendOptions['partitionOverwriteMode'] | undefined
  /**
   * `'merge'`: input columns the table lacks are added to its schema (nullable, with the type
   * DuckDB reads them as; a timestamp without a zone as `timestamp`) in the same commit; with
   * Parquet input, whose types are declared, a column whose input type is a wider one the table's
   * type widening allows is widened. `'overwrite'` (with `mode: 'overwrite'`): the schema becomes
   * the input's columns with the types DuckDB reads.
   */
  readonly schemaMode?: AppendOptions['schemaMode'] | undefined
  /** With `schemaMode: 'overwrite'`: the new partition columns (default: the table's). */
  readonly partitionBy?: AppendOptions['partitionBy'] | undefined
  /** Stops the append before its commit; the files it staged are deleted. */
  readonly signal?: AbortSignal | undefined
}

/** Rows per batch when the caller gives none. */
const DEFAULT_BATCH_ROWS = 100_000

/**
 * The format of input files: the explicit one, else from the first file's extension.
 *
 * @throws {InvalidArgumentError} for an unknown format or extension
 */
export function fileFormatOf(paths: readonly string[], explicit: string | undefined): FileFormat {
  const f = (explicit ?? '').toLowerCase()
  if (f === 'json' || f === 'jsonl' || f === 'ndjson') return 'json'
  if (f === 'csv' || f === 'parquet') return f
  if (f !== '') {
    throw new InvalidArgumentError(`options.format must be 'csv', 'json' or 'parquet'; got '${explicit}'`, {
      argument: 'options.format',
    })
  }
  const formats = new Set(paths.map(formatOfExtension))
  const [only] = formats
  if (formats.size === 1 && only !== undefined) return only
  throw new InvalidArgumentError(
    formats.has(undefined)
      ? `Cannot tell the format of ${paths.join(', ')} from the extension`
      : `The files ${paths.join(', ')} have extensions of different formats`,
    { argument: 'options.format', hint: "Pass { format: 'csv' | 'json' | 'parquet' }." },
  )
}

function formatOfExtension(path: string): FileFormat | undefined {
  const ext = extname(path).toLowerCase()
  if (ext === '.json' || ext === '.jsonl' || ext === '.ndjson') return 'json'
  if (ext === '.csv' || ext === '.tsv' || ext === '.txt') return 'csv'
  if (ext === '.parquet' || ext === '.pq') return 'parquet'
  return undefined
}

/**
 * Stages the rows of input files into a transaction, batch by batch.
 *
 * @param txn - the transaction (its snapshot's schema is the one the values are read as)
 * @param paths - local files, all of one format
 * @param options - see {@link AppendFileOptions}
 * @param signal - stops the reading between batches
 * @returns the number of rows staged
 * @throws {FileNotFoundError} when a file does not exist
 * @throws {InvalidArgumentError} naming the file, line or row, and column of the first value
 *   that does not fit, or an input column the table lacks
 */
export async function stageInputFiles(
  txn: Transaction,
  paths: readonly string[],
  options: AppendFileOptions,
  signal: AbortSignal | undefined,
): Promise<number> {
  const format = fileFormatOf(paths, options.format)
  // The reader lives with the CLI, which loads it; a library user who never appends a file
  // never loads DuckDB's input readers or the CLI's modules.
  const { inferSchema, openInputFiles } = await import('../cli/input-file.js')
  const input = await openInputFiles(paths, format, { columns: options.columns })
  try {
    const batchRows = options.batchRows ?? DEFAULT_BATCH_ROWS
    const extra = options.ignoreExtraColumns === true ? 'ignore' : 'error'
    const appendOptions =
      options.targetFileSize === undefined ? {} : { targetFileSize: options.targetFileSize }
    let read = 0
    let staged = 0
    checkWriteMode(options)
    const snap = txn.snapshot
    let evolution: SchemaEvolution | undefined
    if (options.schemaMode !== undefined) {
      const declared = inferSchema(input.columns, 'timestamp').fields
      // CSV and JSON carry no types, only what DuckDB guesses (whole numbers as BIGINT): columns
      // are widened only for an input that declares its types.
      evolution =
        options.schemaMode === 'overwrite' || format === 'parquet'
          ? evolveSchemaForInput(snap, declared, options.schemaMode, options.partitionBy)
          : evolveSchema(snap, newInputColumns(snap.schema, input.columns, inferSchema))
    }
    const batches = input.readRows(evolution?.schema ?? snap.schema, batchRows, extra, signal)
    // One write takes every batch, so the files are cut by the target size, not per batch; an
    // overwrite's range may depend on all of them (dynamic).
    const counted = async function* () {
      for await (const batch of batches) {
        signal?.throwIfAborted()
        read += batch.length
        yield batch
      }
    }
    if (options.mode === 'overwrite') {
      const { replaceWhere, partitionOverwriteMode } = options
      const overwrite = { ...appendOptions, replaceWhere, partitionOverwriteMode }
      staged = (await txn.stage((ctx) => buildOverwrite(ctx, counted(), overwrite, evolution))).metrics
        .numOutputRows as number
    } else {
      staged =
        (await txn.stage((ctx) => buildBatchAppend(ctx, counted(), appendOptions, evolution))).metrics
          .numOutputRows ?? 0
    }
    // The writer counts the rows of its own files: a difference from the rows read means rows
    // were lost or doubled on the way, and nothing may be committed.
    if (staged !== read) {
      throw new InternalError(
        `the staged data files hold ${staged} rows but ${read} were read from the input`,
      )
    }
    return read
  } finally {
    input.close()
  }
}

/**
 * The input columns a table lacks (names compare without case), typed as DuckDB reads them, for
 * an append that evolves the schema.
 *
 * @param schema - the table schema
 * @param columns - the input columns
 * @param infer - the input reader's schema inference
 * @returns the new fields, nullable
 */
function newInputColumns<C extends { readonly name: string }>(
  schema: StructType,
  columns: readonly C[],
  infer: (columns: readonly C[], naive: 'timestamp') => StructType,
): StructField[] {
  const known = new Set(schema.fields.map((f) => f.name.toLowerCase()))
  return [
    ...infer(
      columns.filter((c) => !known.has(c.name.toLowerCase())),
      'timestamp',
    ).fields,
  ]
}
