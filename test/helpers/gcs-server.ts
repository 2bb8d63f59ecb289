/**
 * fake-gcs-server (an emulator of the Google Cloud Storage JSON API, built by
 * `scripts/setup-gcs-server.sh` into `.peers/bin/`) for the tests: in memory, on a free port of
 * 127.0.0.1, as a child process behind a Node watchdog that kills it when this process goes away,
 * even one killed with SIGKILL (the watchdog watches its IPC channel).
 *
 * Reuse: when `DELTA_RLC_GCS_ENDPOINT` names a running server (`http://127.0.0.1:4443`), it is
 * used instead of starting one, and `stop` leaves it running. `DELTA_RLC_FAKE_GCS_BIN` names
 * another binary.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createServer } from 'node:net'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import type { TestServer } from './servers.js'

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const START_TIMEOUT_MS = 20_000

/** The fake-gcs-server binary the tests run. */
export const FAKE_GCS_BIN =
  process.env.DELTA_RLC_FAKE_GCS_BIN ?? path.join(repoRoot, '.peers/bin/fake-gcs-server')

/**
 * Why the GCS tests cannot run here, or undefined when they can.
 *
 * @returns a one-line reason to skip with
 */
export function fakeGcsUnavailable(): string | undefined {
  if (process.env.DELTA_RLC_GCS_ENDPOINT) return undefined
  return existsSync(FAKE_GCS_BIN)
    ? undefined
    : `fake-gcs-server is not installed at ${path.relative(repoRoot, FAKE_GCS_BIN)}: run scripts/setup-gcs-server.sh`
}

const children = new Set<ChildProcess>()
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL')
})

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0))
    })
  })
}

/**
 * Starts fake-gcs-server in memory on a free port of 127.0.0.1 (or reuses the one named by
 * `DELTA_RLC_GCS_ENDPOINT`). Call {@link fakeGcsUnavailable} first.
 *
 * @returns the running server; its endpoint is the JSON API origin
 */
export async function startFakeGcs(): Promise<TestServer> {
  const reused = process.env.DELTA_RLC_GCS_ENDPOINT
  if (reused) return { endpoint: reused.replace(/\/+$/, ''), owned: false, stop: async () => {} }
  const args = ['-scheme', 'http', '-host', '127.0.0.1', '-backend', 'memory', '-log-level', 'error']
  for (let tries = 0; ; tries++) {
    const port = await freePort()
    try {
      return await startOn(port, args)
    } catch (err) {
      // Another process may have taken the port between its probe and the server's bind.
      if (tries >= 2) throw err
    }
  }
}

async function startOn(port: number, args: readonly string[]): Promise<TestServer> {
  // The watchdog runs the binary and kills it when the IPC channel to this process closes.
  const watchdog = [
    "const { spawn } = require('node:child_process')",
    `const server = spawn(${JSON.stringify(FAKE_GCS_BIN)}, process.argv.slice(1), { stdio: 'inherit' })`,
    "server.on('exit', (code) => process.exit(code ?? 1))",
    "process.on('disconnect', () => { server.kill('SIGKILL'); process.exit(0) })",
    "process.on('SIGTERM', () => { server.kill('SIGKILL'); process.exit(0) })",
  ].join(';')
  const child = spawn(process.execPath, ['-e', watchdog, '--', ...args, '-port', String(port)], {
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  })
  children.add(child)
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  let output = ''
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString()
  })
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString()
  })
  const endpoint = `http://127.0.0.1:${port}`
  const started = Date.now()
  for (;;) {
    if (child.exitCode !== null) {
      children.delete(child)
      throw new Error(`fake-gcs-server exited with code ${child.exitCode} before listening:\n${output}`)
    }
    try {
      const response = await fetch(`${endpoint}/storage/v1/b?project=test`)
      if (response.ok) break
    } catch {
      // Not listening yet.
    }
    if (Date.now() - started > START_TIMEOUT_MS) {
      child.kill('SIGTERM')
      await exited
      children.delete(child)
      throw new Error(`fake-gcs-server did not start within ${START_TIMEOUT_MS} ms:\n${output}`)
    }
    await sleep(50)
  }
  child.stdout?.removeAllListeners('data').resume()
  child.stderr?.removeAllListeners('data').resume()
  child.unref()
  ;(child.stdout as { unref?: () => void } | null)?.unref?.()
  ;(child.stderr as { unref?: () => void } | null)?.unref?.()
  child.channel?.unref()
  let stopped = false
  return {
    endpoint,
    owned: true,
    async stop() {
      if (stopped) return
      stopped = true
      child.ref()
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      await exited
      children.delete(child)
    },
  }
}

/**
 * Creates a bucket on a fake-gcs-server endpoint (no error if it exists).
 *
 * @param endpoint - the JSON API origin
 * @param name - the bucket name
 */
export async function createGcsBucket(endpoint: string, name: string): Promise<void> {
  const response = await fetch(`${endpoint}/storage/v1/b?project=test`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  })
  if (!response.ok && response.status !== 409) {
    throw new Error(`creating bucket ${name} failed: HTTP ${response.status} ${await response.text()}`)
  }
}
