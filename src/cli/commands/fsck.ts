import type { Command } from '../command.js'
import { InterruptedError, runStoppable } from '../interrupt.js'
import { formatCount } from '../terminal.js'

/** `delta-rlc fsck`: find (and with --repair remove) live files whose objects are missing. */
export const fsckCommand: Command = {
  name: 'fsck',
  summary: 'Report live files whose data or deletion-vector file is missing; --repair removes them.',
  usage: '<table> [--repair]',
  details:
    "Checks that the data file and deletion-vector file of every live file exist. With --repair, one\ncommit (operation FSCK, as Databricks' FSCK REPAIR TABLE) removes the files that are missing, so\nscans stop failing on them; their rows are gone from the table.",
  options: {
    repair: { type: 'boolean', help: 'commit a remove for every live file with a missing object' },
  },
  positionals: { min: 1, max: 1, names: '<table>' },
  async run(ctx, values, [location]) {
    const loc = location as string
    const repair = values.repair === true
    const table = await ctx.openTable(loc, {})
    const progress = ctx.progress('fsck', undefined, 'files')
    try {
      progress.update(0, 'checking')
      const result = await runStoppable(
        ctx,
        (signal) => table.fsck({ repair, signal }),
        (signal) => new InterruptedError(signal),
        (r) =>
          `the interrupt came after FSCK had finished (${r.commit === undefined ? 'nothing committed' : `version ${r.commit.version} committed`})`,
      )
      progress.finish()
      if (ctx.json) {
        ctx.printJson({
          table: loc,
          version: result.version,
          repair: result.repair,
          filesChecked: result.filesChecked,
          filesUnchecked: result.filesUnchecked,
          missing: result.missing,
          ...(result.commit === undefined ? {} : { committedVersion: result.commit.version }),
        })
        return
      }
      const p = ctx.out
      const n = result.missing.length
      ctx.print(
        `${p.paint(n === 0 ? 'green' : 'yellow', n === 0 ? 'no missing files' : `${formatCount(n)} live file${n === 1 ? '' : 's'} with a missing object`)} at version ${p.paint('bold', String(result.version))}`,
      )
      ctx.print(`  ${p.paint('dim', 'files checked')}  ${formatCount(result.filesChecked)}`)
      if (result.filesUnchecked > 0)
        ctx.print(
          `  ${p.paint('dim', 'not checked  ')}  ${formatCount(result.filesUnchecked)} (outside the table root)`,
        )
      for (const m of result.missing)
        ctx.print(
          `  ${m.missing === 'data' ? 'data file' : 'deletion vector'} missing: ${m.key}${m.key === m.path ? '' : ` (${m.path})`}`,
        )
      if (result.commit !== undefined)
        ctx.print(
          `${p.paint('green', 'repaired')}: version ${p.paint('bold', String(result.commit.version))} removes them`,
        )
      else if (n > 0 && !repair) ctx.print(`Run with --repair to remove them from the table.`)
    } finally {
      progress.finish()
      await table.close()
    }
  },
}
