import { resolve } from 'node:path'
import { InternalError } from '../../index.js'
import {
  type KeyOverlap,
  parseFaultRates,
  parseRaceConflicts,
  parseWriterMix,
  type RaceIsolationLevel,
  type RaceOptions,
  renderTerminalReport,
  runRace,
  verifyRace,
} from '../../race/index.js'
import { type Command, integerOption, numberOption, stringOption, UsageError } from '../command.js'

/** `delta-rlc race`: real writer processes racing on one table, verified afterwards. */
export const raceCommand: Command = {
  name: 'race',
  summary: 'Race writer processes (append, delete, update, merge, optimize) on one table, then verify.',
  usage: '<dir> [--writers MIX] [--overlap disjoint|partial|hot] [--duration S] [--compare] [options]',
  details: [
    'Creates a table in <dir> (which must hold none), starts one OS process per writer, runs them for',
    '--duration seconds with the reconciliations of --conflicts, then replays every committed',
    'operation on a model and checks row counts, keys, visibility and serial equivalence.',
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
      help: 'all (default), none, or flag keys / case names (case1,case2,case3,case4a,case4b,...)',
    },
    seed: { type: 'string', value: 'N', help: 'seed of every random choice (default 1)' },
    duration: { type: 'string', value: 'S', help: 'seconds writers start new operations (default 60)' },
    'ops-per-writer': { type: 'string', value: 'N', help: 'at most N operations per writer' },
    faults: {
      type: 'string',
      value: 'RATES',
      help: 'fault rates, e.g. kill=0.02,put=0.01,read=0.01,ambiguous=0.01',
    },
    rows: { type: 'string', value: 'N', help: 'rows of the initial table (default 20000)' },
    compare: { type: 'boolean', help: 'run file-level then row-level on the same workload' },
    out: { type: 'string', value: 'DIR', help: 'where events and reports go (default <dir>.race)' },
    'no-verify': { type: 'boolean', help: 'skip the verifier' },
    'verify-events': { type: 'string', value: 'FILE', help: 'only verify <dir> against this events.jsonl' },
  },
  positionals: { min: 1, max: 1, names: '<dir>' },
  async run(ctx, values, [location]) {
    const loc = resolve(location as string)
    const eventsPath = stringOption(values, 'verify-events')
    if (eventsPath !== undefined) {
      const report = await verifyRace(
        loc,
        resolve(eventsPath),
        ctx.verbose ? { log: (m) => ctx.io.stderr.write(`${m}\n`) } : {},
      )
      if (ctx.json) ctx.printJson(report)
      else
        ctx.print(
          `${report.ok ? ctx.out.paint('green', 'PASS') : ctx.out.paint('red', 'FAIL')}: ${report.committedOps} committed operations replayed up to version ${report.latestVersion}`,
        )
      if (!report.ok) throw new InternalError(`race verification failed for ${loc}`)
      return
    }
    const options = raceOptions(loc, values)
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
      throw new InternalError(
        `the race on ${loc} failed verification (see ${report.jsonPath ?? 'the report'})`,
      )
  },
}

function raceOptions(location: string, values: Parameters<Command['run']>[1]): RaceOptions {
  const overlap = stringOption(values, 'overlap')
  if (overlap !== undefined && !['disjoint', 'partial', 'hot'].includes(overlap)) {
    throw new UsageError(`--overlap must be disjoint, partial or hot, got '${overlap}'`, 'race')
  }
  const isolation = stringOption(values, 'isolation')
  if (isolation !== undefined && isolation !== 'Serializable' && isolation !== 'WriteSerializable') {
    throw new UsageError(`--isolation must be Serializable or WriteSerializable, got '${isolation}'`, 'race')
  }
  const writers = stringOption(values, 'writers')
  const conflicts = stringOption(values, 'conflicts')
  const faults = stringOption(values, 'faults')
  const duration = numberOption(values, 'duration', 'race')
  const out = stringOption(values, 'out')
  const opt = <K extends keyof RaceOptions>(key: K, value: RaceOptions[K] | undefined) =>
    value === undefined ? {} : ({ [key]: value } as Pick<RaceOptions, K>)
  return {
    location,
    ...opt('writers', writers === undefined ? undefined : parseWriterMix(writers)),
    ...opt('overlap', overlap as KeyOverlap | undefined),
    ...opt('isolation', isolation as RaceIsolationLevel | undefined),
    ...opt('conflicts', conflicts === undefined ? undefined : parseRaceConflicts(conflicts)),
    ...opt('seed', integerOption(values, 'seed', 'race')),
    ...opt('durationMs', duration === undefined ? undefined : Math.round(duration * 1000)),
    ...opt('opsPerWriter', integerOption(values, 'ops-per-writer', 'race')),
    ...opt('faults', faults === undefined ? undefined : parseFaultRates(faults)),
    ...opt('rows', integerOption(values, 'rows', 'race')),
    ...opt('compare', values.compare === true ? true : undefined),
    ...opt('outDir', out === undefined ? undefined : resolve(out)),
    ...opt('verify', values['no-verify'] === true ? false : undefined),
  }
}
