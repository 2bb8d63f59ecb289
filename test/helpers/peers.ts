/**
 * The live peers of the interoperability tier (test/peers/): a long-lived Python process with
 * Spark (Delta) and delta-rs (test/peers/peer.py), started once per test file, plus the typed value
 * encoding both sides compare in and the record of the matrix cells each file proves.
 *
 * The peers live under `.peers/`, installed by `npm run peers:setup`. Where it is absent (a clone
 * without Python or a JDK) every peer test skips with {@link PEERS_SKIP}; where it is present
 * nothing skips.
 *
 * The process is its own process group, so `close()` (or the exit hook, should a test file die)
 * also ends the JVM that pyspark starts underneath it.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import {
  createWriteStream,
  existsSync,
  mkdirSync,
  readFileSync,
  type WriteStream,
  writeFileSync,
} from 'node:fs'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

/** The repository root. */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
/** Where `npm run peers:setup` installs the peers. */
export const PEERS_DIR = process.env.DELTA_RLC_PEERS ?? path.join(REPO_ROOT, '.peers')
const PYTHON = path.join(PEERS_DIR, 'venv', 'bin', 'python')
const PEER_SCRIPT = path.join(REPO_ROOT, 'test', 'peers', 'peer.py')
/** Where each test file writes the matrix cells it proved (rendered by scripts/peers-matrix.ts). */
export const RESULTS_DIR = path.join(PEERS_DIR, 'results')

function skipReason(): string | undefined {
  if (!existsSync(path.join(PEERS_DIR, 'stamp')) || !existsSync(PYTHON)) {
    return `no live peers in ${PEERS_DIR}: run \`npm run peers:setup\` (needs python3.11, a JDK and Maven)`
  }
  return undefined
}

/** The reason every peer test skips, or undefined where the peers are installed. */
export const PEERS_SKIP: string | undefined = skipReason()

/** The versions `peers:setup` installed. */
export function peerVersions(): Record<string, string> {
  return JSON.parse(readFileSync(path.join(PEERS_DIR, 'versions.json'), 'utf8')) as Record<string, string>
}

/** A failed peer command: the peer's exception type and message. */
export class PeerCommandError extends Error {
  constructor(
    readonly cmd: string,
    readonly type: string,
    readonly peerMessage: string,
  ) {
    super(`${cmd} failed with ${type}: ${peerMessage.split('\n')[0]}`)
    this.name = 'PeerCommandError'
  }
}

/** Options of {@link startPeer}. */
export interface PeerOptions {
  /** Extra Spark configuration, applied when the session starts. */
  readonly sparkConf?: Readonly<Record<string, string>>
  /** The LogStore class for `file:` tables; the atomic hard-link one unless given. */
  readonly logStore?: string
  /** A name for the stderr log under `.peers/logs/`. */
  readonly name?: string
}

const running = new Set<ChildProcess>()
process.on('exit', () => {
  for (const child of running) killGroup(child, 'SIGKILL')
})

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null) return
  try {
    process.kill(-child.pid, signal)
  } catch {
    // already gone
  }
}

/** One peer process; commands are answered in order. */
export class Peer {
  readonly #child: ChildProcess
  readonly #pending = new Map<
    number,
    { resolve: (v: unknown) => void; reject: (e: Error) => void; cmd: string }
  >()
  readonly #stderrTail: string[] = []
  #nextId = 1
  #exited: Promise<void>
  #exitError: Error | undefined

  constructor(child: ChildProcess, logFile: string) {
    this.#child = child
    running.add(child)
    const log = (line: string): void => {
      this.#stderrTail.push(line)
      if (this.#stderrTail.length > 80) this.#stderrTail.shift()
    }
    const logStream = createWriteStreamSafe(logFile)
    child.stderr?.on('data', (chunk: Buffer) => {
      logStream?.write(chunk)
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') log(line)
    })
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream })
    lines.on('line', (line) => {
      const message = JSON.parse(line) as {
        id: number
        ok: boolean
        result?: unknown
        error?: { type: string; message: string }
      }
      const waiter = this.#pending.get(message.id)
      if (waiter === undefined) return
      this.#pending.delete(message.id)
      if (message.ok) waiter.resolve(message.result)
      else
        waiter.reject(
          new PeerCommandError(waiter.cmd, message.error?.type ?? '?', message.error?.message ?? ''),
        )
    })
    this.#exited = new Promise((resolve) => {
      child.on('exit', (code, signal) => {
        running.delete(child)
        logStream?.end()
        this.#exitError = new Error(
          `peer process exited (${code ?? signal}); last stderr:\n${this.#stderrTail.slice(-20).join('\n')}`,
        )
        for (const waiter of this.#pending.values()) waiter.reject(this.#exitError)
        this.#pending.clear()
        resolve()
      })
    })
  }

  /** The process id of the Python peer. */
  get pid(): number | undefined {
    return this.#child.pid
  }

  /**
   * Sends one command and waits for its answer.
   *
   * @throws {PeerCommandError} when the peer's engine raised (its type and message are kept)
   */
  call<T = Record<string, unknown>>(cmd: string, args: Record<string, unknown> = {}): Promise<T> {
    if (this.#exitError !== undefined) return Promise.reject(this.#exitError)
    const id = this.#nextId++
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (v: unknown) => void, reject, cmd })
      this.#child.stdin?.write(`${JSON.stringify({ ...args, id, cmd })}\n`)
    })
  }

  /** The command's result, or the peer's refusal as a value (for asserting refusals). */
  async attempt<T = Record<string, unknown>>(
    cmd: string,
    args: Record<string, unknown> = {},
  ): Promise<{ ok: true; result: T } | { ok: false; error: PeerCommandError }> {
    try {
      return { ok: true, result: await this.call<T>(cmd, args) }
    } catch (e) {
      if (e instanceof PeerCommandError) return { ok: false, error: e }
      throw e
    }
  }

  /** Runs Spark SQL; returns its rows (typed encoding unless `format: 'plain'`). */
  async sql(sql: string, format: 'typed' | 'plain' = 'typed'): Promise<Row[]> {
    return (await this.call<{ rows: Row[] }>('spark.sql', { sql, format })).rows
  }

  /** Ends the process: closes stdin (Spark stops), then signals the group if it lingers. */
  async close(): Promise<void> {
    if (this.#child.exitCode !== null || this.#child.signalCode !== null) return
    this.#child.stdin?.end()
    const timer = setTimeout(() => killGroup(this.#child, 'SIGTERM'), 20_000)
    const hard = setTimeout(() => killGroup(this.#child, 'SIGKILL'), 30_000)
    await this.#exited
    clearTimeout(timer)
    clearTimeout(hard)
    // pyspark's JVM is a grandchild; make sure it went with its parent.
    killGroup(this.#child, 'SIGKILL')
  }
}

function createWriteStreamSafe(file: string): WriteStream | undefined {
  try {
    mkdirSync(path.dirname(file), { recursive: true })
    return createWriteStream(file)
  } catch {
    // The log is for debugging only; a test never fails for the want of it.
    return undefined
  }
}

/** Starts a peer process (Spark starts inside it on the first `spark.*` command). */
export async function startPeer(options: PeerOptions = {}): Promise<Peer> {
  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'delta-rlc-peer-'))
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DELTA_RLC_PEERS: PEERS_DIR,
    DELTA_RLC_PEER_SCRATCH: scratch,
    DELTA_RLC_PEER_SPARK_CONF: JSON.stringify(options.sparkConf ?? {}),
    PYTHONUNBUFFERED: '1',
  }
  if (options.logStore !== undefined) env.DELTA_RLC_PEER_LOGSTORE = options.logStore
  const child = spawn(PYTHON, [PEER_SCRIPT], { env, stdio: ['pipe', 'pipe', 'pipe'], detached: true })
  const name = options.name ?? `peer-${process.pid}-${Date.now()}`
  const peer = new Peer(child, path.join(PEERS_DIR, 'logs', `${name}.log`))
  await peer.call('ping')
  return peer
}

// ---------------------------------------------------------------------------------------------
// The typed encoding (see test/peers/peer.py)

/** A row in the typed encoding: column name to encoded value. */
export type Row = Record<string, unknown>

/** A Delta data type as it appears in a schema. */
export type DeltaType =
  | string
  | { type: 'struct'; fields: ReadonlyArray<{ name: string; type: DeltaType }> }
  | { type: 'array'; elementType: DeltaType }
  | { type: 'map'; keyType: DeltaType; valueType: DeltaType }

function floatBits(value: number): string {
  if (Number.isNaN(value)) return 'NaN'
  const view = new DataView(new ArrayBuffer(8))
  view.setFloat64(0, value)
  let hex = ''
  for (let i = 0; i < 8; i++) hex += view.getUint8(i).toString(16).padStart(2, '0')
  return hex
}

const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?(Z|[+-]00:?00)?$/

/** Microseconds since the epoch of delta-rlc's timestamp text. */
export function timestampMicros(text: string): bigint {
  const m = TIMESTAMP.exec(text)
  if (m === null) throw new Error(`not a timestamp: ${text}`)
  const date = new Date(0)
  date.setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]))
  date.setUTCHours(Number(m[4]), Number(m[5]), Number(m[6]), 0)
  const fraction = BigInt((m[7] ?? '').padEnd(6, '0'))
  return BigInt(date.getTime()) * 1000n + fraction
}

function decimalAtScale(text: string, scale: number): string {
  const negative = text.startsWith('-')
  const body = negative ? text.slice(1) : text
  const [whole = '0', frac = ''] = body.split('.')
  if (frac.length > scale && /[^0]/.test(frac.slice(scale)))
    throw new Error(`${text} has more than ${scale} digits`)
  const digits = scale === 0 ? whole : `${whole}.${frac.slice(0, scale).padEnd(scale, '0')}`
  return negative && /[1-9]/.test(digits) ? `-${digits}` : digits
}

/** One delta-rlc value of Delta type `type` in the typed encoding. */
export function encodeValue(value: unknown, type: DeltaType): unknown {
  if (value === null || value === undefined) return null
  if (typeof type !== 'string') {
    if (type.type === 'struct') {
      const object = value as Record<string, unknown>
      const out: Record<string, unknown> = {}
      for (const field of type.fields) out[field.name] = encodeValue(object[field.name], field.type)
      return out
    }
    if (type.type === 'array') return (value as unknown[]).map((v) => encodeValue(v, type.elementType))
    const entries: Array<[unknown, unknown]> =
      value instanceof Map ? [...value.entries()] : Object.entries(value as Record<string, unknown>)
    return { $map: entries.map(([k, v]) => [encodeValue(k, type.keyType), encodeValue(v, type.valueType)]) }
  }
  switch (type) {
    case 'long':
    case 'integer':
    case 'short':
    case 'byte':
      return `${type}:${String(value)}`
    case 'float':
    case 'double':
      return `${type}:${floatBits(Number(value))}`
    case 'boolean':
      return `boolean:${value ? 'true' : 'false'}`
    case 'string':
      return `string:${value as string}`
    case 'binary':
      return `binary:${Buffer.from(value as Uint8Array).toString('base64')}`
    case 'date':
      return `date:${value as string}`
    case 'timestamp':
    case 'timestamp_ntz':
      return `${type}:${timestampMicros(value as string)}`
  }
  const decimal = /^decimal\((\d+),\s*(\d+)\)$/.exec(type)
  if (decimal !== null)
    return `decimal(${decimal[1]},${decimal[2]}):${decimalAtScale(String(value), Number(decimal[2]))}`
  throw new Error(`no typed encoding for Delta type ${type}`)
}

/** delta-rlc's rows in the typed encoding, by the table's schema. */
export function encodeRows(
  rows: ReadonlyArray<Record<string, unknown>>,
  schema: { fields: ReadonlyArray<{ name: string; type: unknown }> },
): Row[] {
  return rows.map((row) => {
    const out: Row = {}
    for (const field of schema.fields) out[field.name] = encodeValue(row[field.name], field.type as DeltaType)
    return out
  })
}

/** A stable text of an encoded value: object keys sorted, map pairs sorted by key. */
export function canonical(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value)
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  const object = value as Record<string, unknown>
  if ('$map' in object && Object.keys(object).length === 1) {
    const pairs = (object.$map as Array<[unknown, unknown]>).map(
      ([k, v]) => [canonical(k), canonical(v)] as const,
    )
    pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    return `{"$map":[${pairs.map(([k, v]) => `[${k},${v}]`).join(',')}]}`
  }
  const keys = Object.keys(object).sort()
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(object[k])}`).join(',')}}`
}

/** Rows as a sorted list of canonical texts: equal lists mean equal multisets of rows. */
export function rowSet(rows: readonly Row[]): string[] {
  return rows.map(canonical).sort()
}

/** Keeps only `columns` of each row (drop metadata columns before comparing). */
export function pick(rows: readonly Row[], columns: readonly string[]): Row[] {
  return rows.map((row) => Object.fromEntries(columns.map((c) => [c, row[c]])))
}

// ---------------------------------------------------------------------------------------------
// The matrix

/** (a) the peer writes, we read; (b) we write, the peer reads; (c) writes on top of each other. */
export type Direction = 'a' | 'b' | 'c'
/** The peer engine of a cell. */
export type PeerEngine = 'spark' | 'delta-rs'

/** One cell of the live matrix. */
export interface MatrixCell {
  readonly feature: string
  readonly direction: Direction
  readonly engine: PeerEngine
  readonly result: 'pass' | 'refused' | 'fail'
  /** The peer's refusal message, or the failure. */
  readonly message?: string
}

/** Collects the cells one test file proves and writes them when the file ends. */
export class Matrix {
  readonly #cells: MatrixCell[] = []

  constructor(readonly file: string) {}

  /**
   * Runs `check` and records the cell as passed when it returns, as failed (and rethrows) when it
   * throws: a cell is never recorded without its assertions having run.
   */
  async cell(
    feature: string,
    direction: Direction,
    engine: PeerEngine,
    check: () => Promise<void>,
  ): Promise<void> {
    try {
      await check()
    } catch (e) {
      this.#cells.push({
        feature,
        direction,
        engine,
        result: 'fail',
        message: String(e).split('\n')[0] ?? '',
      })
      throw e
    }
    this.#cells.push({ feature, direction, engine, result: 'pass' })
  }

  /** Records a refusal by the peer that the test has asserted. */
  refused(feature: string, direction: Direction, engine: PeerEngine, message: string): void {
    this.#cells.push({
      feature,
      direction,
      engine,
      result: 'refused',
      message: (message.split('\n')[0] ?? '').slice(0, 300),
    })
  }

  /** Writes `.peers/results/<file>.json`. */
  write(): void {
    mkdirSync(RESULTS_DIR, { recursive: true })
    writeFileSync(
      path.join(RESULTS_DIR, `${path.basename(this.file, '.test.ts')}.json`),
      `${JSON.stringify({ file: this.file, cells: this.#cells }, null, 2)}\n`,
    )
  }
}
