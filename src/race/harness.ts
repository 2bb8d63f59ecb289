/**
 * The race harness: creates the table, starts one OS process per writer, restarts writers a kill
 * fault ended, makes sure no writer outlives it, merges the event logs, runs the verifier and
 * writes the reports.
 */
import { type ChildProcess, fork } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, open, readdir, rm, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { DeltaTable, InvalidArgumentError, redactLocation } from '../index.js'
import { appendAll } from '../util/arrays.js'
import {
  EventSink,
  type ExitEvent,
  type RaceEvent,
  type RunEvent,
  readEvents,
  writerEventsPath,
} from './events.js'
import {
  childLocation,
  isRemoteLocation,
  type RaceConfig,
  type RaceOptions,
  resolveRaceConfig,
  type WriterSpec,
} from './options.js'
import { initialBatches, RACE_SCHEMA } from './plan.js'
import { labelOf, type RaceReport, type RaceRunReport } from './report.js'
import { renderHtmlReport } from './report-html.js'
import { computeRunStats } from './stats.js'
import { verifyRace } from './verify.js'
import { RACE_LOCATION_ENV, type WriterTask } from './writer.js'

/** Callbacks of {@link runRace}. */
export interface RaceIo {
  /** Every event of every writer, shortly after it is logged. */
  readonly onEvent?: ((event: RaceEvent, run: string) => void) | undefined
  /** Progress lines for a human. */
  readonly log?: ((line: string) => void) | undefined
}

/** Grace after the deadline for operations in flight, ms. */
const GRACE_MS = 60_000
/** Time writers get to start and open the table, ms. */
const READY_TIMEOUT_MS = 120_000
/** Restarts after kill faults, per writer, at most. */
const MAX_RESTARTS = 1000

/**
 * Runs a race: N writer processes on one table (two tables with `compare`), then the verifier,
 * then the JSON and HTML reports in `outDir`.
 *
 * @param options - the race
 * @param io - event and progress callbacks
 * @returns the report of every run
 * @throws {InvalidArgumentError} for bad options
 * @throws {TableAlreadyExistsError} when a table already exists at the location
 */
export async function runRace(options: RaceOptions, io: RaceIo = {}): Promise<RaceReport> {
  const location = isRemoteLocation(options.location) ? options.location : resolve(options.location)
  const base = resolveRaceConfig({ ...options, location })
  const outDir = resolve(base.outDir)
  const runs: RaceRunReport[] = []
  if (options.compare) {
    for (const [conflicts, label] of [
      ['none', 'file-level'],
      [base.conflictsLabel, 'row-level'],
    ] as const) {
      const config = resolveRaceConfig({
        ...options,
        location: childLocation(location, label),
        outDir: join(outDir, label),
        conflicts: conflicts === 'none' || conflicts === 'all' ? conflicts : (options.conflicts ?? 'all'),
        runId: `${base.runId}-${label}`,
      })
      runs.push(await runOne(config, options.verify !== false, io))
    }
  } else {
    runs.push(await runOne({ ...base, outDir }, options.verify !== false, io))
  }
  const report: RaceReport = {
    runs,
    compare: options.compare === true,
    ok: runs.every((r) => r.crashes.length === 0 && (r.verify === undefined || r.verify.ok)),
    htmlPath: join(outDir, 'report.html'),
    jsonPath: join(outDir, 'report.json'),
  }
  await mkdir(outDir, { recursive: true })
  await writeFile(join(outDir, 'report.json'), `${JSON.stringify(report, null, 2)}\n`)
  await writeFile(join(outDir, 'report.html'), renderHtmlReport(report))
  return report
}

// === One run ===

async function runOne(config: RaceConfig, verify: boolean, io: RaceIo): Promise<RaceRunReport> {
  const log = io.log ?? (() => {})
  const label = labelOf(config.conflictsLabel)
  await mkdir(config.outDir, { recursive: true })
  await clearOldEvents(config.outDir)
  // What is logged or written to the run's files names the table without its secrets (a SAS
  // token in an https:// location); the writers and the verifier get the real location.
  const shown: RaceConfig = { ...config, location: redactLocation(config.location) }
  log(`[${label}] creating ${shown.location} with ${config.rows} rows in ${config.initialFiles} files`)
  const initialVersion = await createRaceTable(config)
  const header: RunEvent = { type: 'run', t: Date.now(), config: shown, initialVersion }
  const harnessPath = join(config.outDir, 'harness.jsonl')
  const sink = new EventSink(harnessPath)
  sink.write(header)
  const fleet = new Fleet(config, sink, io, label)
  let exits: ExitEvent[]
  try {
    exits = await fleet.run()
  } finally {
    fleet.killAll()
    sink.close()
  }
  const eventsPath = join(config.outDir, 'events.jsonl')
  const events = await mergeEvents(config, harnessPath, eventsPath)
  const stats = computeRunStats(config.writers, events)
  log(
    `[${label}] ${stats.totals.commits} commits, ${stats.totals.aborts} aborts, ${stats.totals.reconciliations} reconciliations in ${((stats.endedAt - stats.startedAt) / 1000).toFixed(1)} s`,
  )
  const report: RaceRunReport = {
    label,
    config: shown,
    eventsPath,
    initialVersion,
    stats,
    crashes: exits.filter((e) => !e.restart && e.faultKill !== true && (e.code !== 0 || e.signal !== null)),
    restarts: exits.filter((e) => e.restart).length,
    verify: verify ? await verifyRace(config.location, eventsPath, { log }) : undefined,
  }
  if (report.verify) {
    const v = report.verify
    log(
      `[${label}] verifier: ${v.ok ? 'PASS' : 'FAIL'} (${v.committedOps} commits replayed, ${v.contentChecks} content checks)${v.firstDivergence ? `: ${v.firstDivergence.message}` : ''}`,
    )
  }
  return report
}

async function createRaceTable(config: RaceConfig): Promise<number> {
  const table = await DeltaTable.create(config.location, {
    schema: RACE_SCHEMA,
    properties: {
      'delta.enableDeletionVectors': 'true',
      ...(config.rowTracking === true ? { 'delta.enableRowTracking': 'true' } : {}),
    },
  })
  try {
    let version = 0
    for (const batch of initialBatches(config)) {
      const r = await table.append(
        batch.map((row) => ({ id: BigInt(row.id), val: BigInt(row.val), tag: row.tag })),
      )
      version = Number(r.version)
    }
    return version
  } finally {
    await table.close()
  }
}

async function clearOldEvents(outDir: string): Promise<void> {
  for (const name of await readdir(outDir)) {
    if (/^(events(-w\d+)?|harness)\.jsonl$/.test(name)) await rm(join(outDir, name), { force: true })
  }
}

async function mergeEvents(config: RaceConfig, harnessPath: string, outPath: string): Promise<RaceEvent[]> {
  const all: RaceEvent[] = await readEvents(harnessPath)
  for (const w of config.writers) {
    const path = writerEventsPath(config, w.index)
    if (existsSync(path)) appendAll(all, await readEvents(path))
  }
  const [header, ...rest] = all
  rest.sort((a, b) => a.t - b.t)
  const events = header === undefined ? rest : [header, ...rest]
  await writeFile(outPath, events.map((e) => `${JSON.stringify(e)}\n`).join(''))
  return events
}

// === Writer processes ===

/**
 * The command line and environment of a writer process: the task as JSON on the command line,
 * where every local user can read it (`ps`), so with its location redacted; the real location,
 * which may hold a SAS token, in the environment, which only the user can read.
 *
 * @param task - the writer's task
 * @returns the arguments after the worker's entry point, and the environment
 */
export function writerProcessArgs(task: WriterTask): { args: string[]; env: NodeJS.ProcessEnv } {
  const shown: WriterTask = {
    ...task,
    config: { ...task.config, location: redactLocation(task.config.location) },
  }
  return { args: [JSON.stringify(shown)], env: { ...process.env, [RACE_LOCATION_ENV]: task.config.location } }
}

/**
 * The writer processes of one run. Every child is tracked until it exits; `killAll` (called in
 * `finally`, on SIGINT and at process exit) ends the ones still alive.
 */
class Fleet {
  readonly #config: RaceConfig
  readonly #sink: EventSink
  readonly #io: RaceIo
  readonly #label: string
  readonly #children = new Set<ChildProcess>()
  readonly #exits: ExitEvent[] = []
  readonly #tails = new Map<number, number>()
  #deadline = 0
  #interrupted = false

  constructor(config: RaceConfig, sink: EventSink, io: RaceIo, label: string) {
    this.#config = config
    this.#sink = sink
    this.#io = io
    this.#label = label
  }

  /** Runs every writer to its end; resolves with every exit the harness saw. */
  async run(): Promise<ExitEvent[]> {
    const onSigint = () => {
      this.#interrupted = true
      this.killAll()
    }
    const onExit = () => this.killAll()
    process.on('SIGINT', onSigint)
    process.on('exit', onExit)
    const ticker = setInterval(() => void this.#tail(), 250)
    try {
      const ready: Array<Promise<void>> = []
      const done = this.#config.writers.map((w) => {
        let markReady: () => void = () => {}
        ready.push(new Promise<void>((r) => (markReady = r)))
        return this.#runWriter(w, markReady)
      })
      await withTimeout(Promise.all(ready), READY_TIMEOUT_MS)
      this.#deadline = Date.now() + this.#config.durationMs
      for (const child of this.#children) child.send?.({ type: 'start', deadline: this.#deadline })
      this.#io.log?.(`[${this.#label}] ${this.#config.writers.length} writers started`)
      const hardStop = setTimeout(() => this.killAll(), this.#config.durationMs + READY_TIMEOUT_MS + GRACE_MS)
      try {
        await Promise.all(done)
      } finally {
        clearTimeout(hardStop)
      }
      if (this.#interrupted) {
        throw new DOMException('The race was interrupted', 'AbortError')
      }
      return this.#exits
    } finally {
      clearInterval(ticker)
      await this.#tail()
      process.off('SIGINT', onSigint)
      process.off('exit', onExit)
    }
  }

  /** Sends SIGKILL to every writer still alive. */
  killAll(): void {
    for (const child of this.#children) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    }
  }

  /** One writer slot: starts the process, and starts it again after each kill fault. */
  async #runWriter(writer: WriterSpec, markReady: () => void): Promise<void> {
    for (let incarnation = 0; ; incarnation++) {
      const task: WriterTask = {
        config: this.#config,
        writer,
        eventsPath: writerEventsPath(this.#config, writer.index),
        incarnation,
        deadline: this.#deadline,
      }
      const { code, signal, stderr, pid } = await this.#spawn(task, markReady)
      const killed = signal === 'SIGKILL'
      const faultKill = killed && (await lastEventIsKill(task.eventsPath))
      const restart =
        killed &&
        !this.#interrupted &&
        this.#deadline > 0 &&
        Date.now() < this.#deadline &&
        incarnation < MAX_RESTARTS
      const exit: ExitEvent = {
        type: 'exit',
        t: Date.now(),
        writer: writer.index,
        pid,
        code,
        signal,
        restart,
        faultKill,
        stderr: code === 0 || killed ? undefined : stderr,
      }
      this.#exits.push(exit)
      this.#sink.write(exit)
      if (!killed && code !== 0) {
        this.#io.log?.(`[${this.#label}] writer ${writer.index} failed (exit ${code}): ${stderr.trim()}`)
      }
      // A writer that dies before it is ready never blocks the start of the others.
      markReady()
      if (!restart) return
    }
  }

  #spawn(
    task: WriterTask,
    markReady: () => void,
  ): Promise<{ code: number | null; signal: string | null; stderr: string; pid: number | undefined }> {
    return new Promise((resolvePromise) => {
      const { args, env } = writerProcessArgs(task)
      const child = fork(workerEntry(), args, {
        env,
        execArgv: inheritedExecArgv(),
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      })
      this.#children.add(child)
      let stderr = ''
      child.stderr?.on('data', (chunk: Buffer) => {
        stderr = (stderr + chunk.toString('utf8')).slice(-4000)
      })
      child.on('message', (m: { type?: string }) => {
        if (m?.type !== 'ready') return
        if (this.#deadline > 0) child.send({ type: 'start', deadline: this.#deadline })
        else markReady()
      })
      // Sends to a child that just died fail; its exit is handled below.
      child.on('error', () => {})
      child.on('exit', (code, signal) => {
        this.#children.delete(child)
        resolvePromise({ code, signal, stderr, pid: child.pid })
      })
    })
  }

  /** Forwards the new lines of every writer's event file to `onEvent`. */
  async #tail(): Promise<void> {
    const onEvent = this.#io.onEvent
    if (onEvent === undefined) return
    for (const w of this.#config.writers) {
      const path = writerEventsPath(this.#config, w.index)
      if (!existsSync(path)) continue
      const from = this.#tails.get(w.index) ?? 0
      const fh = await open(path, 'r')
      try {
        const { size } = await fh.stat()
        if (size <= from) continue
        const buf = Buffer.alloc(size - from)
        await fh.read(buf, 0, buf.length, from)
        const text = buf.toString('utf8')
        const end = text.lastIndexOf('\n')
        if (end < 0) continue
        this.#tails.set(w.index, from + Buffer.byteLength(text.slice(0, end + 1)))
        for (const line of text.slice(0, end).split('\n')) {
          if (line.trim() !== '') onEvent(JSON.parse(line) as RaceEvent, this.#label)
        }
      } finally {
        await fh.close()
      }
    }
  }
}

/**
 * The writer module next to this one: `worker.js` when compiled, `worker.ts` under a TypeScript
 * loader.
 */
function workerEntry(): string {
  const js = fileURLToPath(new URL('./worker.js', import.meta.url))
  if (existsSync(js)) return js
  const ts = fileURLToPath(new URL('./worker.ts', import.meta.url))
  if (existsSync(ts)) return ts
  throw new InvalidArgumentError(
    `The race worker module is missing next to ${fileURLToPath(import.meta.url)}`,
    {
      argument: 'worker',
      hint: 'Rebuild the package (npm run build).',
    },
  )
}

const TEST_FLAGS_WITH_VALUE = new Set([
  '--test-reporter',
  '--test-reporter-destination',
  '--test-name-pattern',
  '--test-skip-pattern',
  '--test-concurrency',
  '--test-timeout',
  '--test-shard',
  '--test-coverage-include',
  '--test-coverage-exclude',
])

/** The parent's loader flags (tsx), without test-runner and debugger flags. */
function inheritedExecArgv(): string[] {
  const out: string[] = []
  const args = process.execArgv
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string
    if (a.startsWith('--test') || a.startsWith('--inspect') || a.startsWith('--watch')) {
      // A flag given as `--test-reporter spec` carries its value in the next argument.
      if (!a.includes('=') && TEST_FLAGS_WITH_VALUE.has(a)) i++
      continue
    }
    out.push(a)
  }
  return out
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    p,
    new Promise<undefined>((r) => {
      timer = setTimeout(() => r(undefined), ms)
    }),
  ]).finally(() => clearTimeout(timer))
}

/** Whether the last complete event a writer logged is its own kill fault. */
async function lastEventIsKill(eventsPath: string): Promise<boolean> {
  try {
    const events = await readEvents(eventsPath)
    return events.at(-1)?.type === 'kill'
  } catch {
    return false
  }
}
