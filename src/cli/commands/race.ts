import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  DeltaTable,
  InvalidArgumentError,
  isDeltaError,
  redactLocation,
  TableAlreadyExistsError,
} from '../../index.js'
import {
  type KeyOverlap,
  parseFaultRates,
  parseWriterMix,
  type RaceConflicts,
  type RaceIsolationLevel,
  type RaceOptions,
  renderTerminalReport,
  resolveRaceConfig,
  runRace,
  verifyRace,
} from '../../race/index.js'
import { childLocation } from '../../race/options.js'
import {
  type Command,
  durationOption,
  integerOption,
  type OptionValues,
  parseConflictsOption,
  stringOption,
  UsageError,
} from '../command.js'
import { VerificationFailedError } from '../verification-failed-error.js'

/** `delta-rlc race`: real writer processes racing on one table, verified afterwards. */
export const raceCommand: Command = {
  name: 'race',
  summary: 'Race writer processes (append, delete, update, merge, optimize) on one table, then verify.',
  usage: '<dir> [--writers MIX] [--overlap MODE] [--duration TIME] [--compare] [options]',
  details: [
    'Creates a table in <dir> (which must hold none), starts one OS process per writer, runs them for',
    '--duration (90, 30s, 2m) with the reconciliations of --conflicts, then replays every committed',
    'operation on a model and checks row counts, keys, visibility and serial equivalence. Every option',
    'is checked before anything starts: a malformed one exits 1 and creates nothing.',
    'With --compare the same seeded workload runs twice, file-level then row-level, side by side.',
    'Reports: <dir>.race/report.json and report.html (or --out DIR). Exit status 3 when a check fails.',
    'With --verify-events FILE, only re-runs the verifier on an existing race table and its events.jsonl.',
  ].join('\n'),
  options: {
    writers: {
      type: 'string',
      value: 'MIX',
      help: 'writers per kind, e.g. delete=2,update=1,merge=1,append=2,optimize=1',
    },
    overlap: {
      type: 'string',
      value: 'MODE',
      help: 'key overlap between writers: disjoint (default), partial or hot',
    },
    isolation: { type: 'string', value: 'LEVEL', help: 'WriteSerializable (default) or Serializable' },
    conflicts: {
      type: 'string',
      value: 'FLAGS',
      help: 'all (default), none, or flag keys, as for every command',
    },
    seed: { type: 'string', value: 'N', help: 'seed of every random choice (default 1)' },
    duration: {
      type: 'string',
      value: 'TIME',
      help: 'how long writers start operations: 90 (seconds), 30s or 2m (default 60s)',
    },
    'ops-per-writer': { type: 'string', value: 'N', help: 'at most N operations per writer' },
    faults: {
      type: 'string',
      value: 'RATES',
      help: 'fault rates, e.g. kill=0.02,put=0.01,read=0.01,ambiguous=0.01',
    },
    rows: { type: 'string', value: 'N', help: 'rows of the initial table (default 20000)' },
    'store-latency': {
      type: 'string',
      value: 'TIME',
      help: 'added to every store request of a writer, as an object store far away would: 20ms, 0.05',
    },
    'conflict-retries': {
      type: 'string',
      value: 'N',
      help: 'run an operation a conflict aborted again, up to N times (default 0: it is dropped)',
    },
    compare: { type: 'boolean', help: 'run file-level then row-level on the same workload' },
    out: { type: 'string', value: 'DIR', help: 'where events and reports go (default <dir>.race)' },
    'no-verify': { type: 'boolean', help: 'skip the verifier' },
    'verify-events': { type: 'string', value: 'FILE', help: 'only verify <dir> against this events.jsonl' },
  },
  positionals: { min: 1, max: 1, names: '<dir>' },
  async run(ctx, values, [location]) {
    const loc = localRaceDir(location as string)
    const eventsPath = stringOption(values, 'verify-events')
    if (eventsPath !== undefined) {
      const report = await verifyRace(
        loc,
        resolve(eventsPath),
        ctx.verbose ? { log: (m) => ctx.io.stderr.write(`${m}\n`) } : {},
      )
      const failed = report.checks.filter((c) => !c.ok)
      if (ctx.json) ctx.printJson(report)
      else {
        ctx.print(
          `${report.ok ? ctx.out.paint('green', 'PASS') : ctx.out.paint('red', 'FAIL')}: ${report.committedOps} committed operations replayed up to version ${report.latestVersion}`,
        )
        for (const c of failed) ctx.print(`  ${ctx.out.paint('red', 'failed')} ${c.name}: ${c.detail}`)
        const d = report.firstDivergence
        if (d !== undefined) ctx.print(`  first divergence (${d.check}, version ${d.version}): ${d.message}`)
      }
      if (!report.ok)
        throw new VerificationFailedError(
          loc,
          failed.map((c) => c.name),
        )
      return
    }
    const options = await raceOptions(loc, values)
    const durationMs = options.durationMs ?? 60_000
    const progress = ctx.progress('race', Math.round(durationMs / 1000) * (options.compare ? 2 : 1), 's')
    let committed = 0
    let aborted = 0
    const started = Date.now()
    const report = await runRace(options, {
      onEvent: (event) => {
        if (event.type !== 'attempt') return
        if (event.outcome === 'committed') committed++
        else if (event.outcome === 'aborted') aborted++
        progress.update(
          Math.round((Date.now() - started) / 1000),
          `${committed} committed, ${aborted} aborted`,
        )
      },
      log: (line) => {
        if (ctx.verbose && !ctx.json) {
          progress.finish()
          ctx.io.stderr.write(`${line}\n`)
        }
      },
    })
    progress.finish()
    if (ctx.json) ctx.printJson(report)
    else {
      ctx.io.stdout.write(renderTerminalReport(report))
      if (report.htmlPath) ctx.print(`report: ${report.htmlPath}`)
    }
    if (!report.ok)
      throw new VerificationFailedError(
        `the race on ${loc}`,
        [
          ...new Set(
            report.runs.flatMap((r) => (r.verify?.checks ?? []).filter((c) => !c.ok).map((c) => c.name)),
          ),
        ],
        report.jsonPath,
      )
  },
}

/**
 * The race the command line asks for, resolved and checked in full before anything starts: a
 * malformed value is a usage error (exit 1), and a directory that already holds a race table is
 * refused before any table, writer or report is made.
 */
async function raceOptions(location: string, values: OptionValues): Promise<RaceOptions> {
  const overlap = stringOption(values, 'overlap')
  if (overlap !== undefined && !['disjoint', 'partial', 'hot'].includes(overlap)) {
    throw new UsageError(`--overlap must be disjoint, partial or hot, got '${overlap}'`, 'race', {
      argument: 'overlap',
    })
  }
  const isolation = stringOption(values, 'isolation')
  if (isolation !== undefined && isolation !== 'Serializable' && isolation !== 'WriteSerializable') {
    throw new UsageError(
      `--isolation must be Serializable or WriteSerializable, got '${isolation}'`,
      'race',
      {
        argument: 'isolation',
      },
    )
  }
  const conflicts = stringOption(values, 'conflicts')
  const writers = stringOption(values, 'writers')
  const faults = stringOption(values, 'faults')
  const duration = durationOption(values, 'duration', 'race')
  const latency = durationOption(values, 'store-latency', 'race')
  const out = stringOption(values, 'out')
  const opt = <K extends keyof RaceOptions>(key: K, value: RaceOptions[K] | undefined) =>
    value === undefined ? {} : ({ [key]: value } as Pick<RaceOptions, K>)
  const options: RaceOptions = {
    location,
    ...opt('writers', writers === undefined ? undefined : usage('writers', () => parseWriterMix(writers))),
    ...opt('overlap', overlap as KeyOverlap | undefined),
    ...opt('isolation', isolation as RaceIsolationLevel | undefined),
    ...opt('conflicts', conflicts === undefined ? undefined : raceConflicts(conflicts)),
    ...opt('seed', integerOption(values, 'seed', 'race')),
    ...opt('durationMs', duration === undefined ? undefined : Math.round(duration * 1000)),
    ...opt('opsPerWriter', integerOption(values, 'ops-per-writer', 'race')),
    ...opt('faults', faults === undefined ? undefined : usage('faults', () => parseFaultRates(faults))),
    ...opt('rows', integerOption(values, 'rows', 'race')),
    ...opt('storeLatencyMs', latency === undefined ? undefined : latency * 1000),
    ...opt('conflictRetries', integerOption(values, 'conflict-retries', 'race')),
    ...opt('compare', values.compare === true ? true : undefined),
    ...opt('outDir', out === undefined ? undefined : resolve(out)),
    ...opt('verify', values['no-verify'] === true ? false : undefined),
  }
  const config = usage('race', () => resolveRaceConfig(options))
  const tables = options.compare
    ? [childLocation(config.location, 'file-level'), childLocation(config.location, 'row-level')]
    : [config.location]
  for (const table of tables) {
    if (await tableExists(table)) throw new RaceTableExistsError(table, location, config.outDir)
  }
  return options
}

/** The race's `conflicts` from the one `--conflicts` vocabulary every command takes. */
function raceConflicts(text: string): RaceConflicts {
  const parsed = parseConflictsOption(text)
  return parsed === undefined ? 'none' : (parsed as RaceConflicts)
}

/** Runs a parser of option values; its refusal is a usage error (exit 1), not a failure. */
function usage<R>(argument: string, parse: () => R): R {
  try {
    return parse()
  } catch (err) {
    if (!(err instanceof InvalidArgumentError) || err instanceof UsageError) throw err
    throw new UsageError(err.message, 'race', {
      argument: err.argument ?? argument,
      ...(err.hint === undefined ? {} : { hint: err.hint }),
    })
  }
}

async function tableExists(location: string): Promise<boolean> {
  try {
    const table = await DeltaTable.open(location)
    await table.close()
    return true
  } catch (err) {
    if (isDeltaError(err, 'DELTA_TABLE_NOT_FOUND')) return false
    throw err
  }
}

/** A race directory that already holds a table: the hint says what a CLI user does next. */
export class RaceTableExistsError extends TableAlreadyExistsError {
  override readonly hint: string
  constructor(table: string, dir: string, outDir: string) {
    super(table)
    this.hint = `A race creates its own table. Race in a new directory, or remove this one and its reports (rm -rf ${dir} ${outDir}); to check the earlier race again, run: delta-rlc race ${dir} --verify-events ${join(outDir, 'events.jsonl')}`
  }
}

/**
 * The local directory a race runs in. The command forks its writers on one machine and keeps its
 * events beside the table: an object-store location (`az://`, `s3://`, `https://`) would be taken
 * for a relative path, so it is refused.
 *
 * @param location - the `<dir>` argument
 * @returns the absolute directory
 * @throws {UsageError} for a location with a scheme other than `file://`
 */
function localRaceDir(location: string): string {
  if (location.startsWith('file://')) return fileURLToPath(location)
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(location)?.[1]
  if (scheme !== undefined) {
    throw new UsageError(
      `The race command runs on a local directory, not on ${redactLocation(location)}`,
      'race',
      {
        argument: '<dir>',
        hint: `Give a local directory (or a file:// URL): the command races on local tables only, not on ${scheme}:// locations.`,
      },
    )
  }
  return resolve(location)
}
