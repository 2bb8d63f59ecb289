/**
 * Local object-store servers for the tests: Azurite (Azure Blob emulator, in memory), moto's S3
 * server (which refuses `If-None-Match: *` on an existing key itself) and s3rver (with the
 * conditional-put guard, the S3 server when moto is not installed), each a child process on a free
 * port of 127.0.0.1, plus a small fault-injecting HTTP proxy to put in front of any of them.
 *
 * Reuse: when `DELTA_RLC_AZURITE_ENDPOINT` (an account URL such as
 * `http://127.0.0.1:10000/devstoreaccount1`, with the well-known emulator key) or
 * `DELTA_RLC_S3_ENDPOINT` (a path-style S3 URL accepting the `S3RVER` key pair and honouring
 * `If-None-Match: *`) is set, the server there is used instead of starting one, and `stop` leaves
 * it running. Tests that kill their server always start a private one.
 *
 * Whatever starts a server stops it: `stop()` in an `after` hook, and a process exit hook kills any
 * server child still running; a child also exits by itself when its parent goes away, even one
 * killed with SIGKILL (it watches its IPC channel).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import fs from 'node:fs/promises'
import http from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3'
import { BlobServiceClient, StorageSharedKeyCredential } from '@azure/storage-blob'
import { createConditionalPutGuard, type GuardMiddleware } from './s3rver-guard.js'

/** The emulator's well-known account (public, documented by Microsoft). */
export const AZURITE_ACCOUNT = 'devstoreaccount1'
/** The emulator's well-known account key (public, documented by Microsoft). */
export const AZURITE_KEY =
  'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='
/** The key pair s3rver accepts (moto accepts any). */
export const S3RVER_CREDENTIALS = Object.freeze({ accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' })

// The S3 SDK warns once per process that its future releases will need Node 22; that is no
// finding of these tests, and it would clutter every report.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true'

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const AZURITE_MAIN = path.join(repoRoot, 'node_modules/azurite/dist/src/blob/main.js')
const START_TIMEOUT_MS = 20_000
/** The Python of the peer setup (`npm run peers:setup`), whose venv holds moto's server. */
const PEERS_PYTHON = path.join(repoRoot, '.peers/venv/bin/python')
/** moto's server entry point; its presence says moto is installed. */
export const MOTO_SERVER = path.join(repoRoot, '.peers/venv/bin/moto_server')

/** A running test server. */
export interface TestServer {
  /**
   * The endpoint clients use: for Azurite the account URL
   * (`http://127.0.0.1:<port>/devstoreaccount1`), for s3rver the service URL.
   */
  readonly endpoint: string
  /** Whether this process started the server (false when reusing one named by an env var). */
  readonly owned: boolean
  /** Stops the server if this process started it; idempotent. */
  stop(): Promise<void>
}

/** Options of the start functions. */
export interface StartOptions {
  /** Reuse the server named by the environment variable when set (default true). */
  readonly reuse?: boolean
}

const children = new Set<ChildProcess>()
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL')
})

/**
 * Starts Azurite's blob service in memory on a free port of 127.0.0.1 (or reuses the one named by
 * `DELTA_RLC_AZURITE_ENDPOINT`).
 *
 * @param options - reuse policy
 * @returns the running server
 */
export async function startAzurite(options: StartOptions = {}): Promise<TestServer> {
  const reused = process.env.DELTA_RLC_AZURITE_ENDPOINT
  if (options.reuse !== false && reused) return notOwned(reused.replace(/\/+$/, ''))
  // The child runs Azurite's own entry point behind a watchdog that exits when the IPC channel to
  // this process closes, so a crashed test run leaves no server behind.
  const watchdog = [
    "process.on('disconnect', () => process.exit(0))",
    `process.argv.splice(1, 0, ${JSON.stringify(AZURITE_MAIN)})`,
    `require(${JSON.stringify(AZURITE_MAIN)})`,
  ].join(';')
  const args = [
    '--blobHost',
    '127.0.0.1',
    '--blobPort',
    '0',
    '--inMemoryPersistence',
    '--silent',
    '--skipApiVersionCheck',
    '--loose',
    '--disableTelemetry',
  ]
  const server = await startChild(
    'Azurite',
    process.execPath,
    ['-e', watchdog, '--', ...args],
    /successfully listens on (http:\/\/127\.0\.0\.1:\d+)/,
    'private',
  )
  return { ...server, endpoint: `${server.endpoint}/${AZURITE_ACCOUNT}` }
}

/**
 * Runs a server as a child process with a private temp dir (its working directory, or its data
 * directory through `DELTA_RLC_SERVER_DIR`) and waits for the line that announces its origin.
 */
async function startChild(
  name: string,
  command: string,
  args: readonly string[],
  listening: RegExp,
  cwd: 'repo' | 'private',
): Promise<TestServer> {
  const workDir = await fs.mkdtemp(path.join(os.tmpdir(), `delta-rlc-${name.toLowerCase()}-`))
  // Node children watch their IPC channel; moto watches its stdin, which closes with this process.
  const node = command === process.execPath
  const child = spawn(command, args, {
    cwd: cwd === 'repo' ? repoRoot : workDir,
    stdio: node ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, DELTA_RLC_SERVER_DIR: workDir },
  })
  children.add(child)
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  let output = ''
  let origin: string
  try {
    origin = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${name} did not start within ${START_TIMEOUT_MS} ms:\n${output}`)),
        START_TIMEOUT_MS,
      )
      const onData = (chunk: Buffer) => {
        output += chunk.toString()
        const m = listening.exec(output)
        if (m !== null) {
          clearTimeout(timer)
          resolve(m[1]!)
        }
      }
      child.stdout?.on('data', onData)
      child.stderr?.on('data', onData)
      child.once('exit', (code) => {
        clearTimeout(timer)
        reject(new Error(`${name} exited with code ${code} before listening:\n${output}`))
      })
    })
  } catch (err) {
    child.kill('SIGKILL')
    await exited
    children.delete(child)
    await fs.rm(workDir, { recursive: true, force: true })
    throw err
  }
  // Keep draining its output, and let this process exit even if a test forgets to stop it.
  child.stdout?.removeAllListeners('data').resume()
  child.stderr?.removeAllListeners('data').resume()
  child.unref()
  ;(child.stdout as { unref?: () => void } | null)?.unref?.()
  ;(child.stderr as { unref?: () => void } | null)?.unref?.()
  child.channel?.unref()
  ;(child.stdin as { unref?: () => void } | null)?.unref?.()
  let stopped = false
  return {
    endpoint: origin,
    owned: true,
    async stop() {
      if (stopped) return
      stopped = true
      // Referenced again so that this process waits for the exit it is about to cause.
      child.ref()
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      await exited
      children.delete(child)
      await fs.rm(workDir, { recursive: true, force: true })
    },
  }
}

/**
 * Creates a container on an Azurite endpoint (no error if it exists).
 *
 * @param endpoint - the account URL
 * @param name - the container name
 */
export async function createAzureContainer(endpoint: string, name: string): Promise<void> {
  const service = new BlobServiceClient(
    endpoint,
    new StorageSharedKeyCredential(AZURITE_ACCOUNT, AZURITE_KEY),
  )
  await service.getContainerClient(name).createIfNotExists()
}

/** Whether moto's S3 server is installed (by `npm run peers:setup`). */
export function motoInstalled(): boolean {
  return existsSync(MOTO_SERVER) && existsSync(PEERS_PYTHON)
}

/**
 * Starts the S3 server the S3 tests run on: s3rver with the conditional-put guard. moto answers a
 * second `If-None-Match: *` put of an existing key with 412 itself, but checks and writes without
 * a lock on its threaded server, so two concurrent puts of one key can both win (seen in
 * `s3-conditional-put.test.ts`): it cannot carry the commit-safety tests. Reuses the server named
 * by `DELTA_RLC_S3_ENDPOINT` when set.
 *
 * @param options - reuse policy
 * @returns the running server
 */
export async function startS3(options: StartOptions = {}): Promise<TestServer> {
  return startS3rver(options)
}

/** The S3 server {@link startS3} starts: s3rver, behind the guard (see {@link startS3}). */
export function s3ServerName(): 'moto' | 's3rver' {
  return 's3rver'
}

/**
 * moto's own server (the WSGI app and threaded werkzeug server `moto_server` runs) bound to a
 * free port of 127.0.0.1, which it prints, and exiting when its stdin closes with the parent.
 */
const MOTO_CHILD = [
  'import os, sys, threading',
  'from werkzeug.serving import make_server',
  'from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app',
  "server = make_server('127.0.0.1', 0, DomainDispatcherApplication(create_backend_app), True, request_handler=MotoRequestHandler)",
  "print(f'moto listens on http://127.0.0.1:{server.server_address[1]}', flush=True)",
  'threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()',
  'server.serve_forever()',
].join('\n')

/**
 * Starts moto's S3 server (in memory) on a free port of 127.0.0.1, or reuses the server named by
 * `DELTA_RLC_S3_ENDPOINT`. It serves path-style requests signed with any key pair. It refuses a
 * `PutObject` with `If-None-Match: *` on an existing key with 412 `PreconditionFailed` by itself.
 *
 * @param options - reuse policy
 * @returns the running server
 */
export async function startMoto(options: StartOptions = {}): Promise<TestServer> {
  const reused = process.env.DELTA_RLC_S3_ENDPOINT
  if (options.reuse !== false && reused) return notOwned(reused.replace(/\/+$/, ''))
  if (!motoInstalled()) throw new Error(`moto is not installed at ${MOTO_SERVER}: run npm run peers:setup`)
  return startChild(
    'Moto',
    PEERS_PYTHON,
    ['-c', MOTO_CHILD],
    /moto listens on (http:\/\/127\.0\.0\.1:\d+)/,
    'private',
  )
}

/** Options of {@link startS3rver}. */
export interface S3rverOptions extends StartOptions {
  /**
   * Install the conditional-put guard (default true). Without it s3rver overwrites whatever
   * `If-None-Match` says: only the test that proves the guard turns it off.
   */
  readonly guard?: boolean
}

/**
 * Starts s3rver with the conditional-put guard on a free port of 127.0.0.1 (or reuses the server
 * named by `DELTA_RLC_S3_ENDPOINT`). It serves path-style requests signed with
 * {@link S3RVER_CREDENTIALS}. It runs as a child process with OpenSSL's legacy provider, which
 * s3rver needs to issue listing continuation tokens (it encrypts them with DES).
 *
 * @param options - reuse policy, and whether to guard conditional puts
 * @returns the running server
 */
export async function startS3rver(options: S3rverOptions = {}): Promise<TestServer> {
  const reused = process.env.DELTA_RLC_S3_ENDPOINT
  const guard = options.guard !== false
  if (guard && options.reuse !== false && reused) return notOwned(reused.replace(/\/+$/, ''))
  return startChild(
    'S3rver',
    process.execPath,
    [
      '--openssl-legacy-provider',
      '--import',
      'tsx',
      fileURLToPath(import.meta.url),
      guard ? S3RVER_CHILD : S3RVER_UNGUARDED_CHILD,
    ],
    /s3rver listens on (http:\/\/127\.0\.0\.1:\d+)/,
    'repo',
  )
}

const S3RVER_CHILD = 'run-s3rver'
const S3RVER_UNGUARDED_CHILD = 'run-s3rver-unguarded'

interface S3rverInstance {
  readonly middleware: GuardMiddleware[]
  run(): Promise<AddressInfo>
}

/** The child side of {@link startS3rver}: serves until the parent goes away. */
async function runS3rverChild(guard: boolean): Promise<void> {
  process.on('disconnect', () => process.exit(0))
  // s3rver ships no type declarations; its surface used here is typed by S3rverInstance.
  const S3rver = createRequire(import.meta.url)('s3rver') as new (
    options: Record<string, unknown>,
  ) => S3rverInstance
  const directory =
    process.env.DELTA_RLC_SERVER_DIR ?? (await fs.mkdtemp(path.join(os.tmpdir(), 'delta-rlc-s3rver-')))
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory })
  if (guard) server.middleware.unshift(createConditionalPutGuard())
  const address = await server.run()
  process.stdout.write(`s3rver listens on http://127.0.0.1:${address.port}\n`)
}

/**
 * Creates a bucket on an S3 test endpoint, moto or s3rver (no error if it exists).
 *
 * @param endpoint - the service URL
 * @param name - the bucket name
 */
export async function createS3Bucket(endpoint: string, name: string): Promise<void> {
  const client = s3TestClient(endpoint)
  try {
    await client.send(new CreateBucketCommand({ Bucket: name }))
  } catch (err) {
    const code = (err as { name?: string }).name
    if (code !== 'BucketAlreadyOwnedByYou' && code !== 'BucketAlreadyExists') throw err
  } finally {
    client.destroy()
  }
}

function s3TestClient(endpoint: string): S3Client {
  return new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { ...S3RVER_CREDENTIALS },
  })
}

function notOwned(endpoint: string): TestServer {
  return { endpoint, owned: false, stop: async () => {} }
}

let counter = 0

/**
 * A name unique within this test run, usable as a container, bucket or key prefix.
 *
 * @param stem - a readable stem (lowercase letters and digits)
 * @returns `<stem>-<pid>-<counter>-<random>`
 */
export function uniqueName(stem: string): string {
  counter++
  return `${stem}-${process.pid}-${counter}-${Math.random().toString(36).slice(2, 8)}`
}

// === Fault proxy ===

/**
 * What the proxy does to a request:
 * - `status`: answers with this status and error code without forwarding (throttling, 5xx);
 * - `drop-response`: forwards the request, lets the server complete it, then cuts the connection
 *   without answering (a response lost after the write landed);
 * - `hang`: never answers.
 */
export type ProxyFault =
  | { readonly kind: 'status'; readonly status: number; readonly code: string }
  | { readonly kind: 'drop-response' }
  | { readonly kind: 'hang' }

/** A fault applied to the next `times` requests with a matching method. */
export interface ProxyRule {
  readonly fault: ProxyFault
  readonly times: number
  /** Only requests with this HTTP method (any when absent). */
  readonly method?: string
}

/** A running fault proxy. */
export interface FaultProxy {
  /** `http://127.0.0.1:<port>`: use it in place of the upstream origin. */
  readonly origin: string
  /** Requests received so far. */
  readonly requests: number
  /** Replaces the rules and resets the request count. */
  setRules(rules: readonly ProxyRule[]): void
  stop(): Promise<void>
}

/**
 * Starts an HTTP proxy on a free port of 127.0.0.1 that forwards every request unchanged (Host
 * header included, so signatures stay valid) to `upstream`, except those its rules intercept.
 *
 * @param upstream - the upstream origin or endpoint (only its origin is used)
 * @returns the running proxy
 */
export async function startFaultProxy(upstream: string): Promise<FaultProxy> {
  const target = new URL(upstream)
  let rules: { rule: ProxyRule; left: number }[] = []
  let requests = 0
  const server = http.createServer((req, res) => {
    requests++
    const entry = rules.find(
      (r) => r.left > 0 && (r.rule.method === undefined || r.rule.method === req.method),
    )
    if (entry !== undefined) entry.left--
    const fault = entry?.rule.fault
    if (fault?.kind === 'hang') {
      req.resume()
      return
    }
    if (fault?.kind === 'status') {
      req.resume()
      req.once('end', () => {
        const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${fault.code}</Code><Message>Injected by the test proxy</Message></Error>`
        res.writeHead(fault.status, {
          'content-type': 'application/xml',
          'content-length': Buffer.byteLength(body),
          'x-ms-error-code': fault.code,
        })
        res.end(body)
      })
      return
    }
    const upstreamRequest = http.request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
        agent: false,
      },
      (upstreamResponse) => {
        if (fault?.kind === 'drop-response') {
          upstreamResponse.resume()
          upstreamResponse.once('end', () => req.socket.destroy())
          return
        }
        res.writeHead(upstreamResponse.statusCode ?? 502, upstreamResponse.headers)
        upstreamResponse.pipe(res)
      },
    )
    upstreamRequest.once('error', () => res.destroy())
    req.pipe(upstreamRequest)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  let stopped = false
  return {
    origin: `http://127.0.0.1:${port}`,
    get requests() {
      return requests
    },
    setRules(next) {
      rules = next.map((rule) => ({ rule, left: rule.times }))
      requests = 0
    },
    async stop() {
      if (stopped) return
      stopped = true
      const closing = new Promise<void>((resolve) => server.close(() => resolve()))
      server.closeAllConnections()
      await closing
    },
  }
}

if (
  process.argv[1] !== undefined &&
  (process.argv[2] === S3RVER_CHILD || process.argv[2] === S3RVER_UNGUARDED_CHILD) &&
  fileURLToPath(import.meta.url) === path.resolve(process.argv[1])
) {
  await runS3rverChild(process.argv[2] === S3RVER_CHILD)
}
