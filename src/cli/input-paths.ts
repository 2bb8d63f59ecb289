/**
 * The input files of a command, made ready before DuckDB opens them: `-` stands for standard
 * input, which is copied to a private temp file (DuckDB reads its input several times: to find
 * the columns, to check every value, then to stream the rows), as is any path that is a stream
 * rather than a regular file (a FIFO, `/dev/stdin`, a process substitution); a file with no
 * content is refused with its own message, where DuckDB would invent a column for it.
 *
 * A copy is named `delta-rlc-stdin-<pid>-...` after its process: a process killed mid-command
 * (SIGKILL) leaves its copy behind, and the next command that reads standard input removes the
 * copies of processes that no longer run, once they are {@link STDIN_COPY_GRACE_MS} old.
 */
import { createReadStream, createWriteStream } from 'node:fs'
import { lstat, mkdtemp, open, readdir, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { InvalidArgumentError } from '../index.js'
import { type CommandContext, UsageError } from './command.js'
import { type InputFormat, inputFormatOf } from './input-file.js'

/** The path that names standard input. */
export const STDIN_PATH = '-'

/** Input files ready to open. Call `cleanup` when done: it removes the copy of standard input. */
export interface PreparedInput {
  /** The files to read, `-` replaced by the copy of standard input. */
  readonly paths: readonly string[]
  readonly format: InputFormat
  cleanup(): Promise<void>
}

/** Copies of dead processes younger than this stay (ms): 10 minutes, as scratch entries. */
export const STDIN_COPY_GRACE_MS = 10 * 60_000
/** Copies named before they carried a pid (`delta-rlc-stdin-XXXXXX`) go once this old (ms): a day. */
const LEGACY_STDIN_COPY_GRACE_MS = 24 * 3_600_000
const STDIN_COPY = /^delta-rlc-stdin-(\d+)-[A-Za-z0-9]{6}$/
const LEGACY_STDIN_COPY = /^delta-rlc-stdin-[A-Za-z0-9]{6}$/

/**
 * Removes the copies of standard input that processes which no longer run left in `dir`; a copy
 * of a running process (or another user's), a fresh one and any other name stay. Failures on
 * single entries are skipped: another process may sweep at the same time.
 *
 * @param dir - the temp directory (default the OS one)
 * @param now - the clock, ms since the epoch
 * @returns the names removed
 */
export async function sweepStdinCopies(dir: string = tmpdir(), now: number = Date.now()): Promise<string[]> {
  let names: string[]
  try {
    names = await readdir(dir)
  } catch {
    return []
  }
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined
  const removed: string[] = []
  for (const name of names) {
    if (!name.startsWith('delta-rlc-stdin-')) continue
    const pidText = STDIN_COPY.exec(name)?.[1]
    let grace: number
    if (pidText !== undefined) {
      const pid = Number(pidText)
      if (pid === process.pid || processRuns(pid)) continue
      grace = STDIN_COPY_GRACE_MS
    } else if (LEGACY_STDIN_COPY.test(name)) {
      grace = LEGACY_STDIN_COPY_GRACE_MS
    } else {
      continue
    }
    const path = join(dir, name)
    try {
      const s = await lstat(path)
      if (!s.isDirectory() || (uid !== undefined && s.uid !== uid)) continue
      let newest = s.mtimeMs
      for (const child of await readdir(path))
        newest = Math.max(newest, (await lstat(join(path, child))).mtimeMs)
      if (now - newest < grace) continue
      await rm(path, { recursive: true, force: true })
      removed.push(name)
    } catch {
      // Gone already, or not ours to remove.
    }
  }
  return removed
}

/** Whether a process runs (`kill(pid, 0)` succeeds or is refused as another user's). */
function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as { code?: unknown } | null)?.code === 'EPERM'
  }
}

/** Bytes looked at to tell a text file with only blank lines from one with content. */
const BLANK_PROBE_BYTES = 64 * 1024

/** Sweeps the copies of processes gone, then makes this process's own copy directory. */
async function stdinCopyDir(): Promise<string> {
  await sweepStdinCopies()
  return mkdtemp(join(tmpdir(), `delta-rlc-stdin-${process.pid}-`))
}

/**
 * Copies standard input to a temp file when `-` is among the paths, and refuses empty inputs.
 *
 * @param ctx - the command context (standard input, the interrupt signal)
 * @param paths - the paths as given
 * @param explicitFormat - `--format`, required with `-`
 * @param command - the command, for usage errors
 * @returns the files to open and their format
 * @throws {UsageError} when `-` is given without `--format`, or more than once
 * @throws {InvalidArgumentError} when an input has no content
 */
export async function prepareInput(
  ctx: CommandContext,
  paths: readonly string[],
  explicitFormat: string | undefined,
  command: string,
): Promise<PreparedInput> {
  const stdinCount = paths.filter((p) => p === STDIN_PATH).length
  if (stdinCount > 1) {
    throw new UsageError("Standard input ('-') can be read once only", command, { argument: 'input' })
  }
  if (stdinCount === 1 && explicitFormat === undefined) {
    throw new UsageError("Reading standard input ('-') needs --format json, csv or parquet", command, {
      argument: 'format',
    })
  }
  const format = inputFormatOf(
    paths[0] === STDIN_PATH ? `input.${explicitFormat}` : (paths[0] as string),
    explicitFormat,
  )
  let temp: string | undefined
  const cleanup = async () => {
    if (temp !== undefined) await rm(temp, { recursive: true, force: true })
  }
  try {
    const out: string[] = []
    const extension = format === 'json' ? 'jsonl' : format
    for (const [i, p] of paths.entries()) {
      if (p === STDIN_PATH) {
        temp ??= await stdinCopyDir()
        const copy = join(temp, `${i}-stdin.${extension}`)
        await copyStream(ctx, ctx.io.stdin, copy)
        out.push(copy)
        continue
      }
      // A stream has no size (stat says 0) and can be read once: it is read to its end first.
      const kind = await stat(resolve(p)).catch(() => undefined)
      if (kind === undefined || kind.isFile() || kind.isDirectory()) {
        out.push(p)
        continue
      }
      temp ??= await stdinCopyDir()
      const copy = join(temp, `${i}-stream.${extension}`)
      await copyStream(ctx, createReadStream(resolve(p)), copy)
      out.push(copy)
    }
    for (let i = 0; i < out.length; i++) {
      await refuseEmpty(
        out[i] as string,
        paths[i] === STDIN_PATH ? 'standard input' : (paths[i] as string),
        format,
      )
    }
    return { paths: out, format, cleanup }
  } catch (err) {
    await cleanup()
    throw err
  }
}

async function copyStream(
  ctx: CommandContext,
  stdin: NodeJS.ReadableStream | undefined,
  to: string,
): Promise<void> {
  if (stdin === undefined) {
    throw new UsageError("This run has no standard input to read for '-'", undefined, { argument: 'input' })
  }
  const interrupt = ctx.io.interrupt
  try {
    await pipeline(stdin, createWriteStream(to), interrupt === undefined ? {} : { signal: interrupt })
  } catch (err) {
    // A stop signal ends the copy: the command stops with the signal's own error.
    if (interrupt?.aborted) throw interrupt.reason
    throw err
  }
}

/**
 * Refuses an input with no content: DuckDB reads an empty CSV file as one column `column0` and an
 * empty JSON file as one column `json`, which would then be reported as unknown columns.
 */
async function refuseEmpty(path: string, name: string, format: InputFormat): Promise<void> {
  const absolute = resolve(path)
  const size = (await stat(absolute).catch(() => undefined))?.size
  // A missing file is reported by the reader, which names it as not found.
  if (size === undefined) return
  let blank = size === 0
  if (!blank && format !== 'parquet' && size <= BLANK_PROBE_BYTES) {
    const handle = await open(absolute, 'r')
    try {
      const buffer = Buffer.alloc(size)
      await handle.read(buffer, 0, size, 0)
      blank = buffer.toString('utf8').trim() === ''
    } finally {
      await handle.close()
    }
  }
  if (!blank) return
  throw new InvalidArgumentError(
    `The input ${name === 'standard input' ? 'on standard input' : `file ${name}`} is empty: it has no ${format === 'csv' ? 'header line, hence no columns,' : 'columns'} and no rows`,
    {
      argument: 'input',
      hint:
        format === 'csv'
          ? 'A CSV input starts with a header line naming its columns; nothing was written.'
          : format === 'json'
            ? 'A JSON lines input holds one object per line; nothing was written.'
            : 'A Parquet input is a whole Parquet file; nothing was written.',
    },
  )
}
