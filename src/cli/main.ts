#!/usr/bin/env node
/**
 * The `delta-rlc` command: create, write, read and maintain Delta tables from the shell.
 * Exit status: 0 ok, 1 usage error, 2 conflict with a concurrent writer, 3 any other error.
 */
import { runCli } from './run-cli.js'

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
})
