/**
 * The CLI run in the test's own process (`runCli`), what it prints collected, without colours:
 * for tests of what a command does and says. Tests of the process itself (signals, pipes, exit
 * status of the real binary) start the built CLI instead (`cli-build.ts`).
 */
import { Readable, Writable } from 'node:stream'
import { runCli } from '../../src/cli/run-cli.js'

/** How an in-process run ended, with what it printed. */
export interface CliResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** A writable stream that keeps what is written to it as `text`. */
function textSink(): Writable & { text: string } {
  const w = new Writable({
    write(chunk, _enc, cb) {
      w.text += String(chunk)
      cb()
    },
  }) as Writable & { text: string }
  w.text = ''
  return w
}

/**
 * Runs `delta-rlc` with `args` in this process.
 *
 * @param args - the command line after the program name
 * @param stdin - what the command reads from standard input, if anything
 * @returns the exit status and what it printed
 */
export async function runCliInProcess(args: readonly string[], stdin?: string): Promise<CliResult> {
  const stdout = textSink()
  const stderr = textSink()
  const code = await runCli(args, {
    stdout,
    stderr,
    env: { NO_COLOR: '1' },
    ...(stdin === undefined ? {} : { stdin: Readable.from([Buffer.from(stdin)]) }),
  })
  return { code, stdout: stdout.text, stderr: stderr.text }
}
