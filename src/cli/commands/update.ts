import { parseAssignments } from '../clause-text.js'
import { CONFLICTS_OPTION, type Command, predicateOption, stringsOption, UsageError } from '../command.js'
import { printCommit } from '../commit-output.js'
import { openWatchedTable, runCommitting } from '../interrupt.js'

/** `delta-rlc update`: set columns of the rows matching a predicate. */
export const updateCommand: Command = {
  name: 'update',
  summary: 'Update the rows matching a predicate: --set column = SQL expression.',
  usage: "<table> --set 'COL = EXPR' [--set ...] [--where PRED]",
  details:
    "Example: delta-rlc update ./accounts --set \"status = 'closed', balance = 0\" --where 'id = 7'\nExpressions see the row's current values. Without --where every row is updated.",
  options: {
    set: {
      type: 'string',
      value: 'ASSIGN',
      multiple: true,
      help: "'column = expression', comma-separated or repeated",
    },
    where: {
      type: 'string',
      value: 'PRED',
      help: 'SQL predicate of the rows to update (default: every row; blank is refused)',
    },
    ...CONFLICTS_OPTION,
  },
  positionals: { min: 1, max: 1, names: '<table>' },
  async run(ctx, values, [location]) {
    const loc = location as string
    const sets = stringsOption(values, 'set')
    if (sets.length === 0)
      throw new UsageError("update needs --set 'column = expression'", 'update', { argument: 'set' })
    const set: Record<string, string> = {}
    for (const s of sets) Object.assign(set, parseAssignments(s, '--set'))
    const where = predicateOption(values, 'where', 'update', 'leave --where out')
    const { table, writes } = await openWatchedTable(loc, values)
    try {
      const result = await runCommitting(ctx, writes, (signal) =>
        table.update({ set, ...(where === undefined ? {} : { where }), signal }),
      )
      printCommit(ctx, loc, result)
    } finally {
      await table.close()
    }
  },
}
