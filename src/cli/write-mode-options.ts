import type { OverwriteOptions } from '../index.js'
import { type OptionSpec, type OptionValues, stringOption, UsageError } from './command.js'

/** The `--mode`, `--replace-where` and `--partition-overwrite-mode` options of `append`. */
export const WRITE_MODE_OPTIONS: Readonly<Record<string, OptionSpec>> = Object.freeze({
  mode: {
    type: 'string',
    value: 'MODE',
    help: 'append (default) or overwrite: replace the whole table, or what --replace-where or --partition-overwrite-mode selects',
  },
  'replace-where': {
    type: 'string',
    value: 'PRED',
    help: 'with --mode overwrite: replace only the rows matching this SQL predicate; a new row outside it is refused',
  },
  'partition-overwrite-mode': {
    type: 'string',
    value: 'static|dynamic',
    help: 'with --mode overwrite: dynamic replaces only the partitions the new rows land in',
  },
})

/**
 * The overwrite the options ask for, or undefined for an append.
 *
 * @param values - the parsed options
 * @param command - the command name, for messages
 * @returns the overwrite's options (without a file size)
 * @throws {UsageError} for an unknown mode or value, an overwrite option without `--mode
 *   overwrite`, or `--replace-where` with `--partition-overwrite-mode dynamic`
 */
export function writeModeOption(
  values: OptionValues,
  command: string,
): Omit<OverwriteOptions, 'targetFileSize'> | undefined {
  const mode = stringOption(values, 'mode')
  const replaceWhere = stringOption(values, 'replace-where')
  const partitionMode = stringOption(values, 'partition-overwrite-mode')
  if (mode !== undefined && mode !== 'append' && mode !== 'overwrite') {
    throw new UsageError(`--mode must be append or overwrite, got '${mode}'`, command, { argument: 'mode' })
  }
  if (partitionMode !== undefined && partitionMode !== 'static' && partitionMode !== 'dynamic') {
    throw new UsageError(
      `--partition-overwrite-mode must be static or dynamic, got '${partitionMode}'`,
      command,
      {
        argument: 'partition-overwrite-mode',
      },
    )
  }
  if (mode !== 'overwrite') {
    const given =
      replaceWhere !== undefined
        ? 'replace-where'
        : partitionMode !== undefined
          ? 'partition-overwrite-mode'
          : undefined
    if (given !== undefined) {
      throw new UsageError(`--${given} needs --mode overwrite`, command, { argument: given })
    }
    return undefined
  }
  if (replaceWhere !== undefined && replaceWhere.trim() === '') {
    throw new UsageError('--replace-where needs a SQL predicate', command, { argument: 'replace-where' })
  }
  if (replaceWhere !== undefined && partitionMode === 'dynamic') {
    throw new UsageError(
      '--replace-where and --partition-overwrite-mode dynamic both say what to replace; give one',
      command,
      { argument: 'replace-where' },
    )
  }
  return {
    ...(replaceWhere === undefined ? {} : { replaceWhere }),
    ...(partitionMode === undefined ? {} : { partitionOverwriteMode: partitionMode }),
  }
}
