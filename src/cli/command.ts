import { parseArgs } from 'node:util'
import {
  CONFLICT_FLAG_KEYS,
  DeltaTable,
  InvalidArgumentError,
  type OpenOptions,
  parseConflictFlags,
  parseDdlSchema,
  type StructType,
} from '../index.js'
import { CONFLICT_CASE_FLAGS } from '../race/options.js'
import { toJsonText } from './render.js'
import { type CliIo, createProgress, type Painter, type Progress, painterFor } from './terminal.js'

/** A command line that does not fit the command's usage. The CLI exits with status 1. */
export class UsageError extends InvalidArgumentError {
  /** The command whose usage was broken, when known. */
  readonly command: string | undefined
  constructor(message: string, command?: string, options?: { argument?: string; hint?: string }) {
    super(message, {
      argument: options?.argument,
      hint: options?.hint ?? `Run 'delta-rlc ${command ?? ''}${command ? ' ' : ''}--help' for the usage.`,
    })
    this.command = command
  }
}

/** One option of a command. */
export interface OptionSpec {
  readonly type: 'string' | 'boolean'
  readonly short?: string
  readonly multiple?: boolean
  /** Placeholder of the value in help text (`PRED`, `N`, ...). */
  readonly value?: string
  readonly help: string
}

/** Parsed option values. */
export type OptionValues = Readonly<Record<string, string | boolean | (string | boolean)[] | undefined>>

/** What a command gets to work with. */
export interface CommandContext {
  readonly io: CliIo
  /** `--json`: print one JSON document on stdout, errors as JSON on stderr, no progress. */
  readonly json: boolean
  /** `--verbose`: more detail, and the cause chain of errors. */
  readonly verbose: boolean
  /** Styles for stdout. */
  readonly out: Painter
  /** Styles for stderr. */
  readonly err: Painter
  /** Prints a line of human output on stdout. */
  print(text: string): void
  /** Prints a JSON document on stdout. */
  printJson(value: unknown): void
  /** A progress indicator on stderr (silent with `--json` or off a terminal). */
  progress(label: string, total: number | undefined, unit: string): Progress
  /** Opens a table with the reconciliation flags of `--conflicts`, when the command takes it. */
  openTable(location: string, values: OptionValues): Promise<DeltaTable>
}

/** A subcommand of `delta-rlc`. */
export interface Command {
  readonly name: string
  readonly aliases?: readonly string[]
  /** One line for the command list. */
  readonly summary: string
  /** Arguments after `delta-rlc <name>`, e.g. `<table> --where PRED`. */
  readonly usage: string
  /** Paragraphs after the usage line in `--help`. */
  readonly details?: string
  readonly options: Readonly<Record<string, OptionSpec>>
  /** How many positional arguments the command takes. */
  readonly positionals: { readonly min: number; readonly max: number; readonly names: string }
  run(ctx: CommandContext, values: OptionValues, positionals: readonly string[]): Promise<void>
}

/** Options every command accepts. */
export const GLOBAL_OPTIONS: Readonly<Record<string, OptionSpec>> = Object.freeze({
  json: { type: 'boolean', help: 'machine-readable output: one JSON document on stdout, errors as JSON' },
  verbose: { type: 'boolean', short: 'v', help: 'more detail; errors show their cause chain' },
  help: { type: 'boolean', short: 'h', help: 'show this help' },
})

/** The options choosing which input columns `append` and `create --from` read. */
export const INPUT_COLUMNS_OPTIONS: Readonly<Record<string, OptionSpec>> = Object.freeze({
  columns: { type: 'string', value: 'COLS', help: 'read only these input columns, comma-separated' },
  'ignore-extra-columns': {
    type: 'boolean',
    help: 'leave out input columns the table does not have (default: refuse them)',
  },
})

/** The `--conflicts` option of commands that commit. */
export const CONFLICTS_OPTION: Readonly<Record<string, OptionSpec>> = Object.freeze({
  conflicts: {
    type: 'string',
    value: 'FLAGS',
    help: "row-level reconciliation flags: 'all', 'none' (default), or a comma list of flag keys, each optionally =true/=false",
  },
})

/**
 * Parses the arguments of one command.
 *
 * @param command - the command
 * @param args - its arguments (after the command name)
 * @returns option values and positionals
 * @throws {UsageError} on an unknown option, a missing value, or a wrong number of arguments
 */
export function parseCommandArgs(
  command: Command,
  args: readonly string[],
): { values: OptionValues; positionals: string[] } {
  const specs = { ...GLOBAL_OPTIONS, ...command.options }
  const config: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }> = {}
  for (const [name, s] of Object.entries(specs)) {
    config[name] = {
      type: s.type,
      ...(s.short ? { short: s.short } : {}),
      ...(s.multiple ? { multiple: true } : {}),
    }
  }
  let parsed: { values: OptionValues; positionals: string[] }
  try {
    parsed = parseArgs({ args: [...args], options: config, allowPositionals: true, strict: true })
  } catch (err) {
    // Node's messages go on to explain `--` for positionals; the first sentence is the point.
    const msg = (err instanceof Error ? err.message : String(err)).split('\n')[0]?.split('. To ')[0] ?? ''
    throw new UsageError(msg, command.name)
  }
  if (parsed.values.help === true) return parsed
  const n = parsed.positionals.length
  if (n < command.positionals.min || n > command.positionals.max) {
    const want =
      command.positionals.min === command.positionals.max
        ? `${command.positionals.min}`
        : `${command.positionals.min} to ${command.positionals.max === Number.POSITIVE_INFINITY ? 'any number of' : command.positionals.max}`
    throw new UsageError(
      `'${command.name}' takes ${want} argument(s) (${command.positionals.names}), got ${n}`,
      command.name,
    )
  }
  return parsed
}

/**
 * The `--help` text of a command.
 *
 * @param command - the command
 * @returns the help text
 */
export function commandHelp(command: Command): string {
  const lines = [`usage: delta-rlc ${command.name} ${command.usage}`, '', command.summary]
  if (command.aliases?.length) lines.push(`alias: ${command.aliases.join(', ')}`)
  if (command.details) lines.push('', command.details)
  lines.push('', 'options:')
  const specs = { ...command.options, ...GLOBAL_OPTIONS }
  const heads = Object.entries(specs).map(([name, s]) => {
    const flag = `${s.short ? `-${s.short}, ` : '    '}--${name}${s.type === 'string' ? ` ${s.value ?? 'VALUE'}` : ''}`
    return [flag, `${s.help}${s.multiple ? ' (repeatable)' : ''}`] as const
  })
  let width = 0
  for (const [h] of heads) width = Math.max(width, h.length)
  for (const [h, text] of heads) lines.push(`  ${h.padEnd(width)}  ${text}`)
  return lines.join('\n')
}

/**
 * The one-line usage of a command, printed with usage errors.
 *
 * @param command - the command
 * @returns `usage: delta-rlc <name> ...`
 */
export function usageLine(command: Command): string {
  return `usage: delta-rlc ${command.name} ${command.usage}`
}

/**
 * Builds the context a command runs in.
 *
 * @param io - streams and environment
 * @param values - the parsed global options
 * @returns the context
 */
export function createContext(io: CliIo, values: OptionValues): CommandContext {
  const json = values.json === true
  const verbose = values.verbose === true
  return {
    io,
    json,
    verbose,
    out: painterFor(io.stdout, io.env),
    err: painterFor(io.stderr, io.env),
    print: (text) => {
      io.stdout.write(`${text}\n`)
    },
    printJson: (value) => {
      io.stdout.write(`${toJsonText(value, 2)}\n`)
    },
    progress: (label, total, unit) => createProgress(io, label, total, unit, !json),
    openTable: (location, v) => DeltaTable.open(location, openOptions(v)),
  }
}

/**
 * Table-open options from `--conflicts`.
 *
 * @param values - the parsed options
 * @returns the options for `DeltaTable.open` / `create`
 * @throws {UsageError} on a malformed flag list
 */
export function openOptions(values: OptionValues): OpenOptions {
  const raw = values.conflicts
  if (typeof raw !== 'string') return {}
  return { conflicts: parseConflictsOption(raw) }
}

/**
 * Parses `--conflicts`: `all`, `none`, or `key[=true|false|N][,key...]`, the keys being the flag
 * keys of `DeltaTable.open` (`CONFLICT_FLAG_KEYS`). Every command that takes `--conflicts`,
 * `race` included, reads it here, so each accepts the same words, and a wrong one is refused
 * before the command starts anything.
 *
 * @param text - the option value
 * @returns the `conflicts` open option
 * @throws {UsageError} when an entry is empty, names no flag, or its value is not a boolean or a
 *   number
 */
export function parseConflictsOption(text: string): OpenOptions['conflicts'] {
  const t = text.trim()
  if (t === 'all' || t === 'none') return t
  const out: Record<string, boolean | number> = {}
  for (const part of t.split(',')) {
    const entry = part.trim()
    if (entry === '') {
      throw new UsageError(`Empty entry in --conflicts '${text}'`, undefined, {
        argument: 'conflicts',
        hint: CONFLICTS_HINT,
      })
    }
    const eq = entry.indexOf('=')
    if (eq < 0) {
      out[entry] = true
      continue
    }
    const key = entry.slice(0, eq).trim()
    const value = entry
      .slice(eq + 1)
      .trim()
      .toLowerCase()
    if (value === 'true' || value === 'false') out[key] = value === 'true'
    else if (/^\d+$/.test(value)) out[key] = Number(value)
    else {
      throw new UsageError(
        `--conflicts entry '${entry}' needs true, false or a number after '='`,
        undefined,
        { argument: 'conflicts', hint: CONFLICTS_HINT },
      )
    }
  }
  try {
    parseConflictFlags(out)
  } catch (err) {
    if (!(err instanceof InvalidArgumentError)) throw err
    const unknown = Object.keys(out).find((k) => !isConflictFlagKey(k))
    const flags = unknown === undefined ? undefined : CONFLICT_CASE_FLAGS[unknown]
    throw new UsageError(
      unknown === undefined ? err.message : `Unknown --conflicts flag '${unknown}'`,
      undefined,
      {
        argument: 'conflicts',
        hint:
          flags === undefined
            ? CONFLICTS_HINT
            : `'${unknown}' is a reconciliation case; its flag key is ${flags.join(' plus ')}, e.g. --conflicts ${flags.join(',')}.`,
      },
    )
  }
  return out
}

/** What `--conflicts` takes, for the hints of its errors. */
const CONFLICTS_HINT = `Use all, none, or a comma list of flag keys (each optionally =true/=false): ${CONFLICT_FLAG_KEYS.join(', ')}.`

function isConflictFlagKey(key: string): boolean {
  const bare = key.startsWith('spark.databricks.delta.') ? key.slice('spark.databricks.delta.'.length) : key
  return CONFLICT_FLAG_KEYS.includes(bare)
}

// === Option readers ===

/**
 * A string option.
 *
 * @returns the value, or undefined when absent
 */
export function stringOption(values: OptionValues, name: string): string | undefined {
  const v = values[name]
  if (Array.isArray(v)) return v.length === 0 ? undefined : String(v[v.length - 1])
  return typeof v === 'string' ? v : undefined
}

/**
 * A predicate option such as `--where`. Blank is refused: it is almost always an unset shell
 * variable, and taking it for every row would act on every row.
 *
 * @param values - the parsed options
 * @param name - the option, e.g. `where`
 * @param command - the command, for the usage hint
 * @param everyRow - what acting on every row takes, for the message (default `--NAME true`)
 * @returns the predicate text, or undefined when absent
 * @throws {UsageError} when the value is blank
 */
export function predicateOption(
  values: OptionValues,
  name: string,
  command: string,
  everyRow = `--${name} true`,
): string | undefined {
  const v = stringOption(values, name)
  if (v !== undefined && v.trim() === '') {
    throw new UsageError(
      `--${name} is ${v === '' ? 'empty' : 'blank'}: give a SQL predicate (${everyRow} for every row)`,
      command,
      { argument: name },
    )
  }
  return v
}

/**
 * A schema DDL argument, parsed.
 *
 * @param ddl - the DDL text
 * @param command - the command, for the usage error
 * @returns the schema
 * @throws {UsageError} when the DDL does not parse (exit 1, as any malformed argument)
 */
export function ddlArgument(ddl: string, command: string): StructType {
  try {
    return parseDdlSchema(ddl)
  } catch (err) {
    if (!(err instanceof InvalidArgumentError)) throw err
    throw new UsageError(err.message, command, {
      argument: err.argument ?? 'schema',
      ...(err.hint === undefined ? {} : { hint: err.hint }),
    })
  }
}

/**
 * A repeatable string option.
 *
 * @returns every value given, in order
 */
export function stringsOption(values: OptionValues, name: string): string[] {
  const v = values[name]
  if (v === undefined) return []
  return (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === 'string')
}

/**
 * A comma-separated list option (`--columns a,b`).
 *
 * @returns the trimmed, non-empty items, or undefined when absent
 */
export function listOption(values: OptionValues, name: string): string[] | undefined {
  const v = stringOption(values, name)
  if (v === undefined) return undefined
  return v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
}

/**
 * A non-negative integer option.
 *
 * @throws {UsageError} when the value is not a non-negative integer
 */
export function integerOption(values: OptionValues, name: string, command: string): number | undefined {
  const v = stringOption(values, name)
  if (v === undefined) return undefined
  if (!/^\d+$/.test(v.trim())) {
    throw new UsageError(`--${name} needs a non-negative integer, got '${v}'`, command, { argument: name })
  }
  return Number(v.trim())
}

/**
 * A non-negative number option (hours may be fractional).
 *
 * @throws {UsageError} when the value is not a non-negative number
 */
export function numberOption(values: OptionValues, name: string, command: string): number | undefined {
  const v = stringOption(values, name)
  if (v === undefined) return undefined
  const n = Number(v.trim())
  if (v.trim() === '' || !Number.isFinite(n) || n < 0) {
    throw new UsageError(`--${name} needs a non-negative number, got '${v}'`, command, { argument: name })
  }
  return n
}

const DURATION_UNITS: Readonly<Record<string, number>> = {
  '': 1,
  ms: 0.001,
  s: 1,
  sec: 1,
  m: 60,
  min: 60,
  h: 3600,
}

/**
 * A duration option in seconds: `90`, `30s`, `2m`, `1.5h`, `500ms` (a bare number is seconds).
 *
 * @throws {UsageError} when the value is not a non-negative duration
 */
export function durationOption(values: OptionValues, name: string, command: string): number | undefined {
  const v = stringOption(values, name)
  if (v === undefined) return undefined
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(v)
  const unit = DURATION_UNITS[(m?.[2] ?? '?').toLowerCase()]
  if (!m || unit === undefined) {
    throw new UsageError(`--${name} needs a duration such as 90, 30s or 2m, got '${v}'`, command, {
      argument: name,
    })
  }
  return Number(m[1]) * unit
}

const SIZE_UNITS: Readonly<Record<string, number>> = {
  '': 1,
  b: 1,
  k: 1024,
  kb: 1024,
  kib: 1024,
  m: 1024 ** 2,
  mb: 1024 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1024 ** 3,
  gib: 1024 ** 3,
}

/**
 * A byte size option: `134217728`, `128MB`, `1GiB`, `512k` (binary multiples).
 *
 * @throws {UsageError} when the value is not a size
 */
export function sizeOption(values: OptionValues, name: string, command: string): number | undefined {
  const v = stringOption(values, name)
  if (v === undefined) return undefined
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(v)
  const unit = SIZE_UNITS[(m?.[2] ?? '?').toLowerCase()]
  if (!m || unit === undefined || Number(m[1]) * unit < 1) {
    throw new UsageError(`--${name} needs a size such as 134217728, 128MB or 1GiB, got '${v}'`, command, {
      argument: name,
    })
  }
  return Math.round(Number(m[1]) * unit)
}

/**
 * The time-travel options `--version` / `--timestamp` as snapshot options.
 *
 * @throws {UsageError} when both are given, the version is not an integer or the time is not a time
 */
export function timeTravelOptions(
  values: OptionValues,
  command: string,
): { version?: bigint; timestamp?: string | number } {
  const version = stringOption(values, 'version')
  const timestamp = stringOption(values, 'timestamp')
  if (version !== undefined && timestamp !== undefined) {
    throw new UsageError('Give --version or --timestamp, not both', command)
  }
  if (version !== undefined) {
    if (!/^\d+$/.test(version.trim())) {
      throw new UsageError(`--version needs a table version (an integer), got '${version}'`, command, {
        argument: 'version',
      })
    }
    return { version: BigInt(version.trim()) }
  }
  if (timestamp === undefined) return {}
  if (/^\d+$/.test(timestamp.trim())) return { timestamp: Number(timestamp.trim()) }
  if (Number.isNaN(Date.parse(timestamp))) {
    throw new UsageError(
      `--timestamp needs an ISO time (2024-01-31T12:00:00Z) or milliseconds since the epoch, got '${timestamp}'`,
      command,
      { argument: 'timestamp' },
    )
  }
  return { timestamp }
}

/** The `--version` and `--timestamp` options. */
export const TIME_TRAVEL_OPTIONS: Readonly<Record<string, OptionSpec>> = Object.freeze({
  version: { type: 'string', value: 'N', help: 'read this table version (time travel)' },
  timestamp: {
    type: 'string',
    value: 'TIME',
    help: 'read the latest version committed at or before this ISO time or epoch ms',
  },
})
