/**
 * One process of the multi-process put-if-absent race on a local store (forked by
 * test/contract/local-store-race.test.ts with an IPC channel).
 *
 * Usage: `node --import tsx store-race-worker.ts writer <root> <writerId> <keyCount>`
 *    or: `node --import tsx store-race-worker.ts reader <root> <keyCount>`
 *
 * Both roles say `ready`, wait for `go`, then race. A writer tries to create every key with
 * `ifNotExists` and reports the keys it won. The reader reads each key the moment it appears,
 * validates its content (any torn or partial object fails the digest) and reports which writer it
 * saw per key.
 */
import { createHash } from 'node:crypto'
import { setImmediate as yieldToLoop } from 'node:timers/promises'
import { FileAlreadyExistsError, FileNotFoundError } from '../../src/errors/index.js'
import { createLocalStore, type ObjectStore } from '../../src/storage/index.js'

/** Size of the random-looking body of each record, so that each object is about 4 KB. */
const BODY_CHARS = 4000

/** What a writer reports when it is done. */
export interface WriterReport {
  readonly role: 'writer'
  readonly writer: number
  readonly won: number[]
  readonly errors: string[]
}

/** What the reader reports when it is done. */
export interface ReaderReport {
  readonly role: 'reader'
  /** For each key index, the writer named by the content read, or -1 when it never appeared. */
  readonly seen: number[]
  /** Reads that returned an object failing validation. */
  readonly partialReads: number
  /** Listings that showed a name starting with '.' (a temporary file). */
  readonly tempFilesListed: number
  readonly errors: string[]
}

/** Message sent to the parent. */
export type WorkerMessage =
  | { readonly type: 'ready' }
  | { readonly type: 'report'; readonly report: WriterReport | ReaderReport }

/**
 * The key of the i-th raced object.
 *
 * @param index - key index
 * @returns the store key
 */
export function raceKey(index: number): string {
  return `race/${String(index).padStart(5, '0')}.json`
}

function body(writer: number, index: number): string {
  let out = ''
  let block = `${writer}:${index}`
  while (out.length < BODY_CHARS) {
    block = createHash('sha256').update(block).digest('hex')
    out += block
  }
  return out.slice(0, BODY_CHARS)
}

function digest(writer: number, index: number, text: string): string {
  return createHash('sha256').update(`${writer}|${index}|${text}`).digest('hex')
}

/**
 * The content writer `writer` puts at key `index`.
 *
 * @param writer - writer id
 * @param index - key index
 * @returns the object bytes
 */
export function raceRecord(writer: number, index: number): Uint8Array {
  const text = body(writer, index)
  return new TextEncoder().encode(
    JSON.stringify({ writer, index, body: text, digest: digest(writer, index, text) }),
  )
}

/**
 * Validates a raced object.
 *
 * @param data - the bytes read
 * @param index - the key index they were read from
 * @returns the writer the content names, or undefined when the content is torn or partial
 */
export function checkRaceRecord(data: Uint8Array, index: number): number | undefined {
  try {
    const parsed: unknown = JSON.parse(new TextDecoder().decode(data))
    if (typeof parsed !== 'object' || parsed === null) return undefined
    const r = parsed as { writer?: unknown; index?: unknown; body?: unknown; digest?: unknown }
    if (typeof r.writer !== 'number' || r.index !== index || typeof r.body !== 'string') return undefined
    if (r.body.length !== BODY_CHARS || r.body !== body(r.writer, index)) return undefined
    return r.digest === digest(r.writer, index, r.body) ? r.writer : undefined
  } catch {
    return undefined
  }
}

async function runWriter(store: ObjectStore, writer: number, count: number): Promise<WriterReport> {
  const won: number[] = []
  const errors: string[] = []
  for (let i = 0; i < count; i++) {
    try {
      await store.put(raceKey(i), raceRecord(writer, i), { ifNotExists: true })
      won.push(i)
    } catch (err) {
      if (!(err instanceof FileAlreadyExistsError)) errors.push(`${raceKey(i)}: ${String(err)}`)
    }
  }
  return { role: 'writer', writer, won, errors }
}

async function runReader(store: ObjectStore, count: number): Promise<ReaderReport> {
  const seen: number[] = []
  const errors: string[] = []
  let partialReads = 0
  let tempFilesListed = 0
  const deadline = Date.now() + 60_000
  for (let i = 0; i < count; i++) {
    let writer = -1
    while (writer < 0 && Date.now() < deadline) {
      try {
        const found = checkRaceRecord(await store.read(raceKey(i)), i)
        if (found === undefined) partialReads++
        else writer = found
      } catch (err) {
        if (!(err instanceof FileNotFoundError)) errors.push(`${raceKey(i)}: ${String(err)}`)
        await yieldToLoop()
      }
    }
    if (writer < 0) errors.push(`${raceKey(i)} never appeared`)
    seen.push(writer)
    if (i % 50 === 0) {
      for await (const meta of store.listFrom('race/')) {
        if (meta.key.slice('race/'.length).startsWith('.')) tempFilesListed++
      }
    }
  }
  return { role: 'reader', seen, partialReads, tempFilesListed, errors }
}

async function main(): Promise<void> {
  const [role, root, ...rest] = process.argv.slice(2)
  const send = process.send?.bind(process)
  if (send === undefined || root === undefined) {
    process.stderr.write('store-race-worker must be forked with an IPC channel: writer|reader <root> ...\n')
    process.exitCode = 2
    return
  }
  const go = new Promise<void>((resolve) => process.once('message', () => resolve()))
  send({ type: 'ready' } satisfies WorkerMessage)
  await go
  const store = createLocalStore(root)
  const report =
    role === 'writer'
      ? await runWriter(store, Number(rest[0]), Number(rest[1]))
      : await runReader(store, Number(rest[0]))
  send({ type: 'report', report } satisfies WorkerMessage, () => process.disconnect())
}

if (process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].replace(/\\/g, '/'))) {
  await main()
}
