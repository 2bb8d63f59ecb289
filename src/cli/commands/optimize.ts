import { CONFLICTS_OPTION, type Command, listOption, predicateOption, sizeOption } from '../command.js'
import { printCommit } from '../commit-output.js'
import { openWatchedTable, runCommitting } from '../interrupt.js'

/** `delta-rlc optimize`: bin-packing compaction, or Z-ordering. */
export const optimizeCommand: Command = {
  name: 'optimize',
  summary: 'Compact small files (bin-packing), or Z-order by columns; a dataChange=false commit.',
  usage: '<table> [--target-size SIZE] [--zorder-by COLS] [--where PRED]',
  details:
    'Sources are tagged with where their rows went (compactedInto / compactionInfo), so concurrent\nDELETE/UPDATE/MERGE can be reconciled with --conflicts (cases 4a and 4b).',
  options: {
    'target-size': {
      type: 'string',
      value: 'SIZE',
      help: 'size of each output file, e.g. 256MB (default 1GiB)',
    },
    'zorder-by': {
      type: 'string',
      value: 'COLS',
      help: 'Z-order the rows by these columns, comma-separated',
    },
    where: {
      type: 'string',
      value: 'PRED',
      help: 'predicate over partition columns selecting what to optimize (blank is refused)',
    },
    ...CONFLICTS_OPTION,
  },
  positionals: { min: 1, max: 1, names: '<table>' },
  async run(ctx, values, [location]) {
    const loc = location as string
    const targetFileSize = sizeOption(values, 'target-size', 'optimize')
    const zOrderBy = listOption(values, 'zorder-by')
    const where = predicateOption(values, 'where', 'optimize', 'leave --where out')
    const { table, writes } = await openWatchedTable(loc, values)
    const progress = ctx.progress('optimize', undefined, 'files')
    try {
      const before = (await table.snapshot()).activeFiles().length
      progress.update(before, 'rewriting')
      const result = await runCommitting(ctx, writes, (signal) =>
        table
          .optimize({
            ...(targetFileSize === undefined ? {} : { targetFileSize }),
            ...(zOrderBy === undefined ? {} : { zOrderBy }),
            ...(where === undefined ? {} : { where }),
            signal,
          })
          .finally(() => progress.finish()),
      )
      printCommit(ctx, loc, result, {
        filesBefore: before,
        filesAfter: (await table.snapshot()).activeFiles().length,
      })
    } finally {
      progress.finish()
      await table.close()
    }
  },
}
