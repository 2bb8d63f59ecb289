import { CONFLICTS_OPTION, type Command, predicateOption, UsageError } from '../command.js'
import { printCommit } from '../commit-output.js'
import { openWatchedTable, runCommitting } from '../interrupt.js'

/** `delta-rlc delete`: remove the rows matching a predicate. */
export const deleteCommand: Command = {
  name: 'delete',
  summary: 'Delete the rows matching a SQL predicate (deletion vectors when the table has them).',
  usage: '<table> --where PRED',
  details:
    'Example: delta-rlc delete ./events --where "user_id = 42 AND day < DATE \'2024-01-01\'"\nTo delete every row, pass --where true.',
  options: {
    where: {
      type: 'string',
      value: 'PRED',
      help: 'SQL predicate of the rows to delete (required; blank is refused, --where true deletes every row)',
    },
    ...CONFLICTS_OPTION,
  },
  positionals: { min: 1, max: 1, names: '<table>' },
  async run(ctx, values, [location]) {
    const loc = location as string
    const where = predicateOption(values, 'where', 'delete')
    if (where === undefined) {
      throw new UsageError('delete needs --where PRED (pass --where true to delete every row)', 'delete', {
        argument: 'where',
      })
    }
    const { table, writes } = await openWatchedTable(loc, values)
    try {
      printCommit(ctx, loc, await runCommitting(ctx, writes, (signal) => table.delete(where, { signal })))
    } finally {
      await table.close()
    }
  },
}
