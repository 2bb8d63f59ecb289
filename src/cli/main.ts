#!/usr/bin/env node
/**
 * The `delta-rlc` command: create, write, read and maintain Delta tables from the shell.
 * Exit status: 0 ok, 1 usage error, 2 conflict with a concurrent writer, 3 any other error,
 * 130 / 143 when SIGINT / SIGTERM stopped it.
 */
import { getEventListeners } from 'node:events'
import { constants } from 'node:os'
import { InterruptedError, type StopSignal } from './interrupt.js'
import { runCli } from './run-cli.js'

// A reader that stops early (`delta-rlc show t | head`) closes the pipe: that is not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0)
    throw err
  })
}

// SIGINT and SIGTERM abort the running operation through `interrupt` so that it can remove
// what it staged. A command that does not listen is ended at once, as without a handler; so is
// any command on a second signal.
const interrupt = new AbortController()
const onStopSignal = (signal: StopSignal): void => {
  if (interrupt.signal.aborted || getEventListeners(interrupt.signal, 'abort').length === 0) {
    process.exit(128 + constants.signals[signal])
  }
  interrupt.abort(new InterruptedError(signal))
}
process.on('SIGINT', onStopSignal)
process.on('SIGTERM', onStopSignal)

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  interrupt: interrupt.signal,
})
