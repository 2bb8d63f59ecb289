import type { DeltaTable } from '../index.js'
import type { CommandContext } from './command.js'
import { formatCount } from './terminal.js'

/** What every commit of the table API returns. */
export type CommitResult = Awaited<ReturnType<DeltaTable['append']>>

/**
 * The JSON shape of a commit result in `--json` output.
 *
 * @param table - the table location
 * @param result - the commit result
 * @returns plain data
 */
export function commitJson(table: string, result: CommitResult): Record<string, unknown> {
  return {
    table,
    committed: result.committed,
    version: result.version,
    operation: result.operation,
    attempts: result.attempts,
    txnId: result.txnId,
    metrics: result.metrics,
    reconciliations: result.reconciliations.map((r) => ({
      kind: r.kind,
      winnerVersion: r.winnerVersion,
      winnerOperation: r.winnerOperation ?? null,
      detail: r.detail,
    })),
  }
}

/**
 * Prints a commit result for a person: the version, the metrics, and any reconciliation.
 *
 * @param ctx - the command context
 * @param table - the table location
 * @param result - the commit result
 * @param extra - more `key: value` lines
 */
export function printCommit(
  ctx: CommandContext,
  table: string,
  result: CommitResult,
  extra: Readonly<Record<string, unknown>> = {},
): void {
  if (ctx.json) {
    ctx.printJson({ ...commitJson(table, result), ...extra })
    return
  }
  const p = ctx.out
  if (!result.committed) {
    ctx.print(
      `${p.paint('yellow', 'nothing to commit')}: ${result.operation} changed no data; table stays at version ${result.version}`,
    )
  } else {
    const retry = result.attempts > 1 ? p.paint('dim', ` after ${result.attempts} attempts`) : ''
    ctx.print(
      `${p.paint('green', 'committed')} ${result.operation} as version ${p.paint('bold', String(result.version))}${retry}`,
    )
  }
  const rows: Array<[string, string]> = []
  for (const [k, v] of Object.entries(result.metrics)) rows.push([k, formatCount(Math.round(v))])
  for (const [k, v] of Object.entries(extra))
    rows.push([k, typeof v === 'number' ? formatCount(v) : String(v)])
  let width = 0
  for (const [k] of rows) width = Math.max(width, k.length)
  for (const [k, v] of rows) ctx.print(`  ${p.paint('dim', k.padEnd(width))}  ${v}`)
  for (const r of result.reconciliations) {
    const files = r.detail.files?.length
    const what = [
      files === undefined ? '' : `${files} file${files === 1 ? '' : 's'}`,
      r.detail.rows === undefined ? '' : `${formatCount(r.detail.rows)} rows`,
    ].filter((s) => s !== '')
    ctx.print(
      `  ${p.paint('magenta', 'reconciled')} ${r.kind} against version ${r.winnerVersion} (${r.winnerOperation ?? 'unknown operation'})${what.length ? `: ${what.join(', ')}` : ''}`,
    )
  }
}
