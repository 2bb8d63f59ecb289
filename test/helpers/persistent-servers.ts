/**
 * Azurite and s3rver keeping their data in a directory the test owns, so that a server can be
 * stopped in the middle of an operation and started again on the same data (on a new port).
 * `servers.ts` starts throwaway servers; these are for the tests that take a server down.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { AZURITE_ACCOUNT } from './servers.js'

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const AZURITE_MAIN = path.join(repoRoot, 'node_modules/azurite/dist/src/blob/main.js')
const SERVERS_TS = path.join(repoRoot, 'test/helpers/servers.ts')
const START_TIMEOUT_MS = 20_000

/** A server process on a data directory. */
export interface PersistentServer {
  /** Azurite: the account URL; s3rver: the service URL. */
  readonly endpoint: string
  /**
   * Takes the server down and waits for its exit. Azurite gets SIGTERM: it keeps blob metadata
   * in memory and saves it every few seconds, so only an orderly stop keeps what it acknowledged
   * (a crashed emulator losing acknowledged writes is no finding about the client). s3rver writes
   * every object to disk before answering and gets SIGKILL.
   */
  stop(): Promise<void>
}

const children = new Set<ChildProcess>()
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL')
})

/**
 * Starts Azurite's blob service on `dir` (created if absent) on a free port of 127.0.0.1.
 *
 * @param dir - the data directory, reused across restarts
 * @returns the running server
 */
export function startPersistentAzurite(dir: string): Promise<PersistentServer> {
  return startAzuriteProcess(['--location', dir], '127.0.0.1')
}

/**
 * Starts Azurite's blob service in memory on a free port of `host`, an address of this machine
 * (such as the host end of a veth link).
 *
 * @param host - the address to listen on
 * @returns the running server
 */
export function startAzuriteOn(host: string): Promise<PersistentServer> {
  return startAzuriteProcess(['--inMemoryPersistence'], host)
}

async function startAzuriteProcess(storage: readonly string[], host: string): Promise<PersistentServer> {
  // Azurite's orderly stop saves its metadata, prints that it closed, and then waits for clients'
  // idle keep-alive connections to go away, which took ten seconds (till the forced kill) after
  // any request: the watchdog ends the process once the stop has saved what it must.
  const watchdog = [
    "process.on('disconnect', () => process.exit(0))",
    'const log = console.log',
    'console.log = (...a) => { log(...a); if (/successfully closed/.test(String(a[0]))) process.exit(0) }',
    `process.argv.splice(1, 0, ${JSON.stringify(AZURITE_MAIN)})`,
    `require(${JSON.stringify(AZURITE_MAIN)})`,
  ].join(';')
  const args = ['--blobHost', host, '--blobPort', '0', ...storage]
  const flags = ['--silent', '--skipApiVersionCheck', '--loose', '--disableTelemetry']
  const server = await start(
    'Azurite',
    ['-e', watchdog, '--', ...args, ...flags],
    /successfully listens on (http:\/\/[0-9.]+:\d+)/,
    {},
    'SIGTERM',
  )
  return { ...server, endpoint: `${server.endpoint}/${AZURITE_ACCOUNT}` }
}

/**
 * Starts s3rver (with the conditional-put guard of `servers.ts`) on `dir` on a free port.
 *
 * @param dir - the data directory, reused across restarts
 * @returns the running server
 */
export async function startPersistentS3rver(dir: string): Promise<PersistentServer> {
  return start(
    'S3rver',
    ['--openssl-legacy-provider', '--import', 'tsx', SERVERS_TS, 'run-s3rver'],
    /s3rver listens on (http:\/\/127\.0\.0\.1:\d+)/,
    { DELTA_RLC_SERVER_DIR: dir },
    'SIGKILL',
  )
}

async function start(
  name: string,
  args: readonly string[],
  listening: RegExp,
  env: Record<string, string>,
  stopSignal: NodeJS.Signals,
): Promise<PersistentServer> {
  const child = spawn(process.execPath, args, {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    env: { ...process.env, ...env },
  })
  children.add(child)
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  let output = ''
  const origin = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`${name} did not start within ${START_TIMEOUT_MS} ms:\n${output}`))
    }, START_TIMEOUT_MS)
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      const m = listening.exec(output)
      if (m !== null) {
        clearTimeout(timer)
        resolve(m[1] as string)
      }
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', onData)
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`${name} exited with code ${code} before listening:\n${output}`))
    })
  })
  child.stdout?.removeAllListeners('data').resume()
  child.stderr?.removeAllListeners('data').resume()
  let stopped = false
  return {
    endpoint: origin,
    async stop() {
      if (stopped) return
      stopped = true
      if (child.exitCode === null && child.signalCode === null) child.kill(stopSignal)
      const forced = setTimeout(() => child.kill('SIGKILL'), 10_000)
      await exited
      clearTimeout(forced)
      children.delete(child)
    },
  }
}
