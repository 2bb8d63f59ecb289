import { CONFLICTS_OPTION, type Command, timeTravelOptions, UsageError } from '../command.js'
import { printCommit } from '../commit-output.js'
import { openWatchedTable, runCommitting } from '../interrupt.js'

/** `delta-rlc restore`: bring the table back to an earlier version, as one commit. */
export const restoreCommand: Command = {
  name: 'restore',
  summary: 'Bring the table back to an earlier version or timestamp, as one RESTORE commit.',
  usage: '<table> --version N | --timestamp TIME',
  details: [
    "One commit (operation RESTORE, as Delta's RESTORE TABLE ... TO VERSION AS OF) removes the files",
    'added since that version and adds back the files removed since, with their deletion vectors;',
    'the metadata is set back, the protocol is kept. History keeps every version. A version whose',
    'files VACUUM deleted is refused before anything is committed.',
    'Example: delta-rlc restore ./events --version 12',
  ].join('\n'),
  options: {
    version: { type: 'string', value: 'N', help: 'the version to bring back' },
    timestamp: {
      type: 'string',
      value: 'TIME',
      help: 'bring back the latest version committed at or before this ISO time or epoch ms',
    },
    ...CONFLICTS_OPTION,
  },
  positionals: { min: 1, max: 1, names: '<table>' },
  async run(ctx, values, [location]) {
    const loc = location as string
    const target = timeTravelOptions(values, 'restore')
    if (target.version === undefined && target.timestamp === undefined) {
      throw new UsageError('restore needs --version N or --timestamp TIME', 'restore', {
        argument: 'version',
      })
    }
    const { table, writes } = await openWatchedTable(loc, values)
    try {
      printCommit(
        ctx,
        loc,
        await runCommitting(ctx, writes, (signal) => table.restore({ ...target, signal })),
      )
    } finally {
      await table.close()
    }
  },
}
