import { type Command, integerOption } from '../command.js'
import { InterruptedError, runStoppable } from '../interrupt.js'
import { formatBytes, formatCount } from '../terminal.js'

/** `delta-rlc checkpoint`: write a checkpoint of the latest (or a given) version. */
export const checkpointCommand: Command = {
  name: 'checkpoint',
  summary: 'Write a checkpoint (Parquet snapshot of the log) so readers replay fewer commits.',
  usage: '<table> [--version N]',
  options: { version: { type: 'string', value: 'N', help: 'checkpoint this version (default: the latest)' } },
  positionals: { min: 1, max: 1, names: '<table>' },
  async run(ctx, values, [location]) {
    const loc = location as string
    const version = integerOption(values, 'version', 'checkpoint')
    const table = await ctx.openTable(loc, {})
    try {
      // A checkpoint is one file put whole: rather than leave the put's temporary file behind, a
      // stop signal lets it finish (a second signal still ends the process at once).
      const result = await runStoppable(
        ctx,
        () => table.checkpoint(version === undefined ? {} : { version: BigInt(version) }),
        (signal) => new InterruptedError(signal),
        (r) => `the interrupt came while writing the checkpoint; it completed (version ${r.version})`,
      )
      if (ctx.json) {
        ctx.printJson({ table: loc, ...result })
        return
      }
      const p = ctx.out
      ctx.print(
        `${p.paint('green', 'checkpoint written')} for version ${p.paint('bold', String(result.version))}`,
      )
      ctx.print(`  ${p.paint('dim', 'file   ')}  ${result.key}`)
      ctx.print(
        `  ${p.paint('dim', 'actions')}  ${formatCount(result.size)} (${formatCount(result.numOfAddFiles)} live files)`,
      )
      ctx.print(`  ${p.paint('dim', 'size   ')}  ${formatBytes(result.sizeInBytes)}`)
    } finally {
      await table.close()
    }
  },
}
