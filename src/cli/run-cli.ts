import {
  type Command,
  commandHelp,
  createContext,
  GLOBAL_OPTIONS,
  type OptionValues,
  parseCommandArgs,
  UsageError,
  usageLine,
} from './command.js'
import { alterCommand } from './commands/alter.js'
import { appendCommand } from './commands/append.js'
import { changesCommand } from './commands/changes.js'
import { checkpointCommand } from './commands/checkpoint.js'
import { cleanupMetadataCommand } from './commands/cleanup-metadata.js'
import { createCommand } from './commands/create.js'
import { deleteCommand } from './commands/delete.js'
import { demoCommand } from './commands/demo.js'
import { describeCommand } from './commands/describe.js'
import { fsckCommand } from './commands/fsck.js'
import { historyCommand } from './commands/history.js'
import { mergeCommand } from './commands/merge.js'
import { optimizeCommand } from './commands/optimize.js'
import { raceCommand } from './commands/race.js'
import { restoreCommand } from './commands/restore.js'
import { scanCommand } from './commands/scan.js'
import { sqlCommand } from './commands/sql.js'
import { updateCommand } from './commands/update.js'
import { vacuumCommand } from './commands/vacuum.js'
import { redactingIo } from './redacting-io.js'
import { EXIT, exitCodeOf, formatError, formatErrorJson } from './report-error.js'
import { type CliIo, painterFor } from './terminal.js'

/** Every command, in the order the help lists them. */
export const COMMANDS: readonly Command[] = Object.freeze([
  createCommand,
  appendCommand,
  deleteCommand,
  updateCommand,
  mergeCommand,
  optimizeCommand,
  vacuumCommand,
  fsckCommand,
  restoreCommand,
  alterCommand,
  historyCommand,
  scanCommand,
  changesCommand,
  describeCommand,
  checkpointCommand,
  cleanupMetadataCommand,
  sqlCommand,
  raceCommand,
  demoCommand,
])

/** The package version printed by `--version`. */
export const CLI_VERSION = '0.1.0'

/**
 * Runs `delta-rlc` with the given arguments.
 *
 * @param argv - the arguments after the program name
 * @param io - streams and environment
 * @param commands - the commands to dispatch to (the full set by default)
 * @returns the exit status: 0 ok, 1 usage error, 2 conflict, 3 other error, 128 + the signal
 *   number when a stop signal ended the command
 */
export async function runCli(
  argv: readonly string[],
  cliIo: CliIo,
  commands: readonly Command[] = COMMANDS,
): Promise<number> {
  let io = cliIo
  const [name, ...rest] = argv
  const wantsJson = argv.includes('--json')
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    const topic = name === 'help' ? rest[0] : undefined
    const cmd = topic === undefined ? undefined : findCommand(commands, topic)
    io.stdout.write(`${cmd ? commandHelp(cmd) : mainHelp(commands)}\n`)
    return name === undefined ? EXIT.usage : EXIT.ok
  }
  if (name === '--version' || name === '-V') {
    io.stdout.write(`delta-rlc ${CLI_VERSION}\n`)
    return EXIT.ok
  }
  const command = findCommand(commands, name)
  if (command === undefined) {
    return fail(
      io,
      new UsageError(`Unknown command '${name}'`, undefined, {
        hint: `Commands: ${commands.map((c) => c.name).join(', ')}. Run 'delta-rlc --help'.`,
      }),
      wantsJson,
      false,
    )
  }
  let values: OptionValues
  let positionals: string[]
  try {
    ;({ values, positionals } = parseCommandArgs(command, rest))
  } catch (err) {
    return fail(redactingIo(io, rest), err, wantsJson, false, command)
  }
  // From here on, a location's SAS token or password is never printed.
  io = redactingIo(io, positionals)
  if (values.help === true) {
    io.stdout.write(`${commandHelp(command)}\n`)
    return EXIT.ok
  }
  const ctx = createContext(io, values)
  try {
    await command.run(ctx, values, positionals)
    return EXIT.ok
  } catch (err) {
    return fail(io, err, ctx.json, ctx.verbose, err instanceof UsageError ? command : undefined)
  }
}

function fail(io: CliIo, err: unknown, json: boolean, verbose: boolean, command?: Command): number {
  if (json) io.stderr.write(`${formatErrorJson(err, verbose)}\n`)
  else {
    io.stderr.write(`${formatError(err, painterFor(io.stderr, io.env), verbose)}\n`)
    if (command && err instanceof UsageError) io.stderr.write(`${usageLine(command)}\n`)
  }
  return exitCodeOf(err)
}

function findCommand(commands: readonly Command[], name: string): Command | undefined {
  return commands.find((c) => c.name === name || c.aliases?.includes(name))
}

function mainHelp(commands: readonly Command[]): string {
  let width = 0
  for (const c of commands)
    width = Math.max(width, (c.name + (c.aliases?.length ? `/${c.aliases.join('/')}` : '')).length)
  const lines = [
    'usage: delta-rlc <command> <table> [options]',
    '',
    'A Delta Lake table engine with row-level concurrency. <table> is a local path, file:// URL,',
    'az://container/prefix, s3://bucket/prefix or gs://bucket/prefix.',
    '',
    'commands:',
    ...commands.map(
      (c) =>
        `  ${(c.name + (c.aliases?.length ? `/${c.aliases.join('/')}` : '')).padEnd(width)}  ${c.summary}`,
    ),
    '',
    'options of every command:',
    ...Object.entries(GLOBAL_OPTIONS).map(
      ([n, s]) => `  ${`${s.short ? `-${s.short}, ` : '    '}--${n}`.padEnd(16)}  ${s.help}`,
    ),
    '',
    'limits:',
    '  value size     one string (UTF-8 bytes) or binary value holds at most 256 MiB',
    '  nesting depth  struct, array and map types and values nest at most 64 levels',
    '',
    'exit status: 0 ok, 1 usage error, 2 conflict with a concurrent writer, 3 any other error,',
    '130 / 143 when SIGINT / SIGTERM stopped an append (its staged files are removed).',
    "Run 'delta-rlc <command> --help' for a command's options.",
  ]
  return lines.join('\n')
}
