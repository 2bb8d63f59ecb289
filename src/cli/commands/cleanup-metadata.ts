import type { Command } from '../command.js'
import { InterruptedError, openWatchedTable, runStoppable } from '../interrupt.js'
import { formatBytes, formatCount } from '../terminal.js'

/** `delta-rlc cleanup-metadata`: delete expired log files now. */
export const cleanupMetadataCommand: Command = {
  name: 'cleanup-metadata',
  summary: 'Delete log files older than delta.logRetentionDuration that no version in it needs.',
  usage: '<table> [--dry-run]',
  details:
    "Deletes the commits, checkpoints and checksum files below the newest checkpoint older than the\ntable's delta.logRetentionDuration (30 days), when they are older than it too: time travel to every\nversion inside the retention keeps working. Checkpoints do this by themselves unless the table sets\ndelta.enableExpiredLogCleanup=false; this command runs it whatever that property says.",
  options: {
    'dry-run': { type: 'boolean', help: 'list what would be deleted, delete nothing' },
  },
  positionals: { min: 1, max: 1, names: '<table>' },
  async run(ctx, values, [location]) {
    const loc = location as string
    const dryRun = values['dry-run'] === true
    const { table, writes } = await openWatchedTable(loc, {})
    try {
      // The cleanup stages nothing: a stop ends it between two deletes, and what was deleted stays so.
      const result = await runStoppable(
        ctx,
        (signal) => table.cleanupMetadata({ dryRun, signal }),
        (signal) =>
          new InterruptedError(signal, undefined, {
            message: `Log cleanup stopped after deleting ${writes.deleted} file${writes.deleted === 1 ? '' : 's'}; the other expired files are still there`,
            hint: 'Every deleted file was older than every version time travel must reach, so the table is intact. Run cleanup-metadata again to delete the rest.',
          }),
        (r) =>
          `the interrupt came after the cleanup had finished (${r.dryRun ? 'a dry run' : `${r.files.length} files deleted`})`,
      )
      if (ctx.json) {
        ctx.printJson({
          table: loc,
          dryRun: result.dryRun,
          cutoff: new Date(result.cutoff).toISOString(),
          boundary: result.boundary ?? null,
          files: result.files,
          bytes: result.bytes,
          failures: result.failures.map((f) => ({ key: f.key, message: f.message })),
        })
        return
      }
      const p = ctx.out
      const verb = result.dryRun ? 'would delete' : 'deleted'
      const n = result.files.length
      ctx.print(
        `${p.paint(result.dryRun ? 'yellow' : 'green', verb)} ${formatCount(n)} log file${n === 1 ? '' : 's'} (${formatBytes(result.bytes)})`,
      )
      ctx.print(`  ${p.paint('dim', 'retention cutoff')}  ${new Date(result.cutoff).toISOString()}`)
      ctx.print(
        `  ${p.paint('dim', 'kept from version')}  ${result.boundary === undefined ? 'the start (no checkpoint is older than the cutoff)' : String(result.boundary)}`,
      )
      for (const f of result.failures)
        ctx.print(`  ${p.paint('red', 'not deleted')}  ${f.key ?? ''} ${f.message}`)
      if (result.dryRun || ctx.verbose) for (const f of result.files) ctx.print(`  ${f}`)
    } finally {
      await table.close()
    }
  },
}
