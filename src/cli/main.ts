#!/usr/bin/env node
/**
 * The `delta-rlc` command: create, write, read and maintain Delta tables from the shell.
 * Exit status: 0 ok, 1 usage error, 2 conflict with a concurrent writer, 3 any other error.
 */
import { runCli } from './run-cli.js'

// A reader that stops early (`delta-rlc show t | head`) closes the pipe: that is not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0)
    throw err
  })
}

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
})
