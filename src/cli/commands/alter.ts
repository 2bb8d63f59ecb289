import type { CommitResult, DeltaTable } from '../../index.js'
import { CONFLICTS_OPTION, type Command, ddlArgument, integerOption, UsageError } from '../command.js'
import { printCommit } from '../commit-output.js'
import { openWatchedTable, runCommitting } from '../interrupt.js'

/** One ALTER action of the command line: how many arguments it takes, and what it runs. */
interface AlterAction {
  readonly args: string
  readonly min: number
  readonly max: number
  run(
    table: DeltaTable,
    args: readonly string[],
    flags: AlterFlags,
    signal: AbortSignal | undefined,
  ): Promise<CommitResult>
}

interface AlterFlags {
  readonly ifExists: boolean
  readonly backfillFilesPerCommit: number | undefined
}

const ACTIONS: Readonly<Record<string, AlterAction>> = Object.freeze({
  'set-properties': {
    args: 'KEY=VALUE...',
    min: 1,
    max: Number.POSITIVE_INFINITY,
    run: (t, args, flags, signal) =>
      t.alter.setProperties(Object.fromEntries(args.map(keyValue)), {
        signal,
        backfillFilesPerCommit: flags.backfillFilesPerCommit,
      }),
  },
  'unset-properties': {
    args: 'KEY... [--if-exists]',
    min: 1,
    max: Number.POSITIVE_INFINITY,
    run: (t, args, flags, signal) => t.alter.unsetProperties(args, { ifExists: flags.ifExists, signal }),
  },
  'add-columns': {
    args: "'NAME TYPE'...",
    min: 1,
    max: Number.POSITIVE_INFINITY,
    run: (t, args, _flags, signal) => {
      // A column definition that does not parse is a malformed argument (exit 1).
      for (const a of args) ddlArgument(a, 'alter')
      return t.alter.addColumns(args, { signal })
    },
  },
  'drop-columns': {
    args: 'COLUMN... [--if-exists]',
    min: 1,
    max: Number.POSITIVE_INFINITY,
    run: (t, args, flags, signal) => t.alter.dropColumns(args, { ifExists: flags.ifExists, signal }),
  },
  'rename-column': {
    args: 'COLUMN NEW_NAME',
    min: 2,
    max: 2,
    run: (t, [from, to], _flags, signal) => t.alter.renameColumn(from as string, to as string, { signal }),
  },
  'add-constraint': {
    args: 'NAME EXPR',
    min: 2,
    max: 2,
    run: (t, [name, expr], _flags, signal) =>
      t.alter.addConstraint(name as string, expr as string, { signal }),
  },
  'drop-constraint': {
    args: 'NAME [--if-exists]',
    min: 1,
    max: 1,
    run: (t, [name], flags, signal) =>
      t.alter.dropConstraint(name as string, { ifExists: flags.ifExists, signal }),
  },
  'set-not-null': {
    args: 'COLUMN',
    min: 1,
    max: 1,
    run: (t, [column], _flags, signal) => t.alter.setNotNull(column as string, { signal }),
  },
  'set-comment': {
    args: 'COLUMN TEXT',
    min: 2,
    max: 2,
    run: (t, [column, text], _flags, signal) =>
      t.alter.setColumnComment(column as string, text as string, { signal }),
  },
  'change-column-type': {
    args: 'COLUMN TYPE',
    min: 2,
    max: 2,
    run: (t, [column, type], _flags, signal) =>
      t.alter.changeColumnType(column as string, type as string, { signal }),
  },
})

/** `delta-rlc alter`: ALTER TABLE, one metadata commit per call. */
export const alterCommand: Command = {
  name: 'alter',
  summary: 'Change table properties, columns or constraints (ALTER TABLE), as one metadata commit.',
  usage: `<table> ${Object.keys(ACTIONS).join(' | ')} ARGS...`,
  details: [
    ...Object.entries(ACTIONS).map(([name, a]) => `  ${name} ${a.args}`),
    "Each is one commit with Delta's operation name (SET TBLPROPERTIES, UNSET TBLPROPERTIES, ADD",
    'COLUMNS, DROP COLUMNS, RENAME COLUMN, ADD CONSTRAINT, DROP CONSTRAINT, CHANGE COLUMN); a',
    'concurrent writer that loses to it aborts with DELTA_METADATA_CHANGED. A property that turns a',
    'feature on upgrades the protocol; delta.enableRowTracking=true first backfills row ids into the',
    'files written before. drop-columns and rename-column need column mapping',
    '(set-properties delta.columnMapping.mode=name, which rewrites no data) and rewrite no data.',
    "Example: delta-rlc alter ./events add-constraint positive_amount 'amount > 0'",
  ].join('\n'),
  options: {
    'if-exists': {
      type: 'boolean',
      help: 'unset-properties, drop-constraint, drop-columns: a missing key, constraint or column is no error',
    },
    'backfill-files-per-commit': {
      type: 'string',
      value: 'N',
      help: 'set-properties delta.enableRowTracking=true: files per backfill commit (default 10000)',
    },
    ...CONFLICTS_OPTION,
  },
  positionals: { min: 2, max: Number.POSITIVE_INFINITY, names: '<table> <action> ARGS...' },
  async run(ctx, values, [location, name, ...args]) {
    const loc = location as string
    const action = ACTIONS[name as string]
    if (action === undefined) {
      throw new UsageError(
        `Unknown alter action '${name}'; use one of: ${Object.keys(ACTIONS).join(', ')}`,
        'alter',
        {
          argument: 'action',
        },
      )
    }
    if (args.length < action.min || args.length > action.max) {
      throw new UsageError(`alter ${name} takes ${action.args}`, 'alter', { argument: name as string })
    }
    const ifExists = values['if-exists'] === true
    if (ifExists && name !== 'unset-properties' && name !== 'drop-constraint' && name !== 'drop-columns') {
      throw new UsageError(
        `--if-exists applies to unset-properties, drop-constraint and drop-columns, not ${name}`,
        'alter',
        {
          argument: 'if-exists',
        },
      )
    }
    const backfillFilesPerCommit = integerOption(values, 'backfill-files-per-commit', 'alter')
    if (backfillFilesPerCommit !== undefined && (name !== 'set-properties' || backfillFilesPerCommit < 1)) {
      throw new UsageError(
        '--backfill-files-per-commit takes a positive number, with set-properties',
        'alter',
        {
          argument: 'backfill-files-per-commit',
        },
      )
    }
    if (name === 'set-properties') args.forEach(keyValue)
    const { table, writes } = await openWatchedTable(loc, values)
    try {
      printCommit(
        ctx,
        loc,
        await runCommitting(ctx, writes, (signal) =>
          action.run(table, args, { ifExists, backfillFilesPerCommit }, signal),
        ),
      )
    } finally {
      await table.close()
    }
  },
}

/** `KEY=VALUE` as a pair; the value may hold `=`. */
function keyValue(text: string): [string, string] {
  const at = text.indexOf('=')
  if (at <= 0) {
    throw new UsageError(`Expected KEY=VALUE, got '${text}'`, 'alter', {
      argument: 'set-properties',
      hint: "Write each property as key=value, e.g. delta.appendOnly=true 'owner=data eng'.",
    })
  }
  return [text.slice(0, at), text.slice(at + 1)]
}
