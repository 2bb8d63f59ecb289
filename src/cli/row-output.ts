import { type CommandContext, UsageError } from './command.js'
import { csvRecord, type RowFormat, renderTable, toJsonText } from './render.js'
import { formatCount } from './terminal.js'

/** Rows a `--format table` listing shows when no `--limit` is given. */
export const TABLE_DEFAULT_LIMIT = 1000

/**
 * Parses `--format`.
 *
 * @throws {UsageError} for anything but table, json or csv
 */
export function rowFormat(text: string | undefined, command: string): RowFormat {
  const f = (text ?? 'table').toLowerCase()
  if (f === 'table' || f === 'json' || f === 'csv') return f
  throw new UsageError(`--format must be table, json or csv, got '${text}'`, command, { argument: 'format' })
}

/**
 * The rows a command lists (`scan`, `sql`) in the chosen format: json lines and csv go out as
 * they come (csv after its header), while the table view and `--json` collect them in `rows`.
 * At most `limit` rows are taken: as many rows as the table view can show, by default.
 */
export class RowOutput {
  /** The rows taken, for the table view and `--json` (empty when streaming). */
  readonly rows: Readonly<Record<string, unknown>>[] = []
  /** How many rows were taken. */
  count = 0
  /** Whether a row was refused for the limit: there were more. */
  truncated = false
  readonly #ctx: CommandContext
  readonly #columns: readonly string[]
  readonly #format: RowFormat
  readonly #limitGiven: boolean
  readonly #limit: number | undefined
  readonly #streaming: boolean

  /**
   * @param ctx - the command's context
   * @param columns - the column names, in order
   * @param format - `--format`
   * @param limit - `--limit`, when given
   */
  constructor(ctx: CommandContext, columns: readonly string[], format: RowFormat, limit: number | undefined) {
    this.#ctx = ctx
    this.#columns = columns
    this.#format = format
    this.#limitGiven = limit !== undefined
    this.#limit = limit ?? (format === 'table' && !ctx.json ? TABLE_DEFAULT_LIMIT : undefined)
    this.#streaming = !ctx.json && format !== 'table'
    if (this.#streaming && format === 'csv') ctx.io.stdout.write(`${csvRecord(columns)}\n`)
  }

  /** The most rows taken, if there is a bound. */
  get limit(): number | undefined {
    return this.#limit
  }

  /**
   * Takes the next row, unless the limit is reached.
   *
   * @param row - the row, by column name
   * @returns false when the row was not taken: the listing stops
   */
  take(row: Readonly<Record<string, unknown>>): boolean {
    if (this.#limit !== undefined && this.count >= this.#limit) {
      this.truncated = true
      return false
    }
    this.count++
    const out = this.#ctx.io.stdout
    if (!this.#streaming) this.rows.push(row)
    else if (this.#format === 'csv') out.write(`${csvRecord(this.#columns.map((c) => row[c]))}\n`)
    else out.write(`${toJsonText(row)}\n`)
    return true
  }

  /**
   * Takes rows batch by batch until the batches end or the limit is reached, with a progress
   * line labelled `label`.
   *
   * @param batches - the rows, in batches (a scan, a change feed)
   * @param label - the progress label
   */
  async takeAll(
    batches: AsyncIterable<readonly Readonly<Record<string, unknown>>[]>,
    label: string,
  ): Promise<void> {
    const progress = this.#ctx.progress(label, this.#limit, 'rows')
    try {
      outer: for await (const batch of batches) {
        for (const row of batch) if (!this.take(row)) break outer
        progress.update(this.count)
      }
    } finally {
      progress.finish()
    }
  }

  /**
   * With `--format table` (and no `--json`): the table, then a line with the row count and the
   * version, which says how to see more when the default limit cut the rows short.
   *
   * @param version - the snapshot version the rows come from
   */
  printTable(version: bigint): void {
    if (this.#ctx.json || this.#format !== 'table') return
    const ctx = this.#ctx
    ctx.print(renderTable(this.#columns, this.rows, ctx.out))
    const count = this.count
    const more =
      this.truncated && !this.#limitGiven
        ? `; showing the first ${formatCount(count)}, use --limit to see more`
        : ''
    ctx.print(
      ctx.out.paint('dim', `(${formatCount(count)} row${count === 1 ? '' : 's'}, version ${version}${more})`),
    )
  }
}
