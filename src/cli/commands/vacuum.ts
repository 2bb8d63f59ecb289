import { InvalidArgumentError } from '../../index.js'
import { type Command, numberOption } from '../command.js'
import { InterruptedError, openWatchedTable, runStoppable } from '../interrupt.js'
import { formatBytes, formatCount } from '../terminal.js'

/** `delta-rlc vacuum`: delete files no retained version needs. */
export const vacuumCommand: Command = {
  name: 'vacuum',
  summary: 'Delete data and DV files that no version inside the retention window references.',
  usage: '<table> [--retention-hours H] [--dry-run] [--force]',
  details:
    "The default retention is the table's delta.deletedFileRetentionDuration (7 days). A shorter one\nbreaks time travel and concurrent readers of old versions, so it needs --force. However short the\nretention, a file no commit names (an untracked file: most likely a write still in flight) is\nkept until it is 1 hour old. VACUUM writes Delta's VACUUM START and VACUUM END commits around its\ndeletes (a dry run writes none); a writer whose files it deleted aborts with\nDELTA_CONCURRENT_VACUUM instead of committing.",
  options: {
    'retention-hours': { type: 'string', value: 'H', help: 'keep files removed less than H hours ago' },
    'dry-run': { type: 'boolean', help: 'list what would be deleted, delete nothing' },
    force: { type: 'boolean', help: "allow a retention shorter than the table's" },
  },
  positionals: { min: 1, max: 1, names: '<table>' },
  async run(ctx, values, [location]) {
    const loc = location as string
    const retentionHours = numberOption(values, 'retention-hours', 'vacuum')
    const dryRun = values['dry-run'] === true
    const { table, writes } = await openWatchedTable(loc, {})
    const progress = ctx.progress('vacuum', undefined, 'files')
    try {
      progress.update(0, 'listing')
      // VACUUM stages nothing: a stop ends it between two deletes, and what was deleted stays so.
      const result = await runStoppable(
        ctx,
        (signal) =>
          table
            .vacuum({
              dryRun,
              ...(retentionHours === undefined ? {} : { retentionHours }),
              ...(values.force === true ? { enforceRetentionDuration: false } : {}),
              signal,
            })
            .catch((err: unknown) => {
              throw withCliRetentionHint(err)
            }),
        (signal) =>
          new InterruptedError(signal, undefined, {
            message: `VACUUM stopped after deleting ${writes.deleted} file${writes.deleted === 1 ? '' : 's'}; the other files it chose are still there`,
            hint: 'Every deleted file was one no retained version reads, so the table is intact. Run vacuum again to delete the rest.',
          }),
        (r) =>
          `the interrupt came after VACUUM had finished (${r.dryRun ? 'a dry run' : `${r.files.length} files deleted`})`,
      )
      progress.finish()
      if (ctx.json) {
        ctx.printJson({
          table: loc,
          dryRun: result.dryRun,
          files: result.files,
          bytes: result.bytes,
          filesScanned: result.filesScanned,
          filesReferenced: result.filesReferenced,
          deleteBefore: new Date(result.deleteBefore).toISOString(),
        })
        return
      }
      const p = ctx.out
      const verb = result.dryRun ? 'would delete' : 'deleted'
      ctx.print(
        `${p.paint(result.dryRun ? 'yellow' : 'green', verb)} ${formatCount(result.files.length)} file${result.files.length === 1 ? '' : 's'} (${formatBytes(result.bytes)})`,
      )
      ctx.print(`  ${p.paint('dim', 'retention cutoff')}  ${new Date(result.deleteBefore).toISOString()}`)
      ctx.print(`  ${p.paint('dim', 'files scanned   ')}  ${formatCount(result.filesScanned)}`)
      ctx.print(`  ${p.paint('dim', 'still referenced')}  ${formatCount(result.filesReferenced)}`)
      if (result.dryRun || ctx.verbose) for (const f of result.files) ctx.print(`  ${f}`)
    } finally {
      progress.finish()
      await table.close()
    }
  },
}

/**
 * The library's refusal of a short retention names its option (`enforceRetentionDuration`); on
 * the command line the switch is `--force`.
 */
function withCliRetentionHint(err: unknown): unknown {
  if (!(err instanceof InvalidArgumentError) || err.argument !== 'retentionHours') return err
  if (!/deletedFileRetentionDuration/.test(err.message)) return err
  return new InvalidArgumentError(err.message, {
    argument: 'retention-hours',
    cause: err,
    hint: 'Add --force if no other operation runs on older versions of the table, or use a longer --retention-hours.',
  })
}
