/**
 * The built CLI for end-to-end tests: `dist/` is built at most once across test files (a lock
 * directory keeps two files from running tsc on the same output at once, and a build is skipped
 * when `dist/` is newer than every source file). `startCli` runs it, `startProcess` any program.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

/** The repository root. */
export const REPO_ROOT = resolve(import.meta.dirname, '../..')
/** The built CLI entry point. */
export const CLI = join(REPO_ROOT, 'dist/src/cli/main.js')

/** Builds `dist/` unless it is already newer than every source file. */
export async function buildCli(): Promise<void> {
  const lock = join(tmpdir(), `delta-rlc-cli-build-${Buffer.from(REPO_ROOT).toString('hex').slice(-24)}.lock`)
  const deadline = Date.now() + 180_000
  for (;;) {
    try {
      mkdirSync(lock)
      break
    } catch {
      // A lock left by a killed run is stale after the build's own time limit.
      if (Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now()) > 180_000)
        rmSync(lock, { recursive: true, force: true })
      if (Date.now() > deadline) throw new Error('timed out waiting for another CLI build')
      await new Promise((r) => setTimeout(r, 500))
    }
  }
  try {
    const built = statSync(CLI, { throwIfNoEntry: false })
    // A build without the entry point's execute bit is not the one `npm run build` makes.
    if (
      built !== undefined &&
      (built.mode & 0o111) !== 0 &&
      built.mtimeMs > newestSource(join(REPO_ROOT, 'src'))
    )
      return
    const started = Date.now()
    // The package's own build, as a user runs it. tsc emits even when unrelated files have type
    // errors; the CLI only needs its own output.
    const r = spawnSync('npm', ['run', '--silent', 'build'], { cwd: REPO_ROOT, encoding: 'utf8' })
    if (!existsSync(CLI) || statSync(CLI).mtimeMs < started - 1000) {
      throw new Error(`build failed:\n${r.stdout}\n${r.stderr}`)
    }
  } finally {
    rmSync(lock, { recursive: true, force: true })
  }
}

function newestSource(dir: string): number {
  let newest = 0
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    newest = Math.max(newest, e.isDirectory() ? newestSource(p) : statSync(p).mtimeMs)
  }
  return newest
}

/** How a run of the built CLI ended, with what it printed. */
export interface CliRun {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * Starts the built CLI from the repository root, without colours.
 *
 * @param args - the command line after the entry point
 * @returns the child process, and `done`, which resolves when it has exited and closed its output
 */
export function startCli(args: readonly string[]): { child: ChildProcess; done: Promise<CliRun> } {
  return startProcess(process.execPath, [CLI, ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, NO_COLOR: '1' },
  })
}

/**
 * Starts a program with no input, collecting what it prints: the built CLI, or the tools an
 * end-to-end test drives (npm, git, an installed package's bin).
 *
 * @param command - the program
 * @param args - its arguments
 * @param options - its working directory and whole environment
 * @returns the child process, and `done`, which resolves when it has exited and closed its output
 */
export function startProcess(
  command: string,
  args: readonly string[],
  options: { readonly cwd: string; readonly env: NodeJS.ProcessEnv },
): { child: ChildProcess; done: Promise<CliRun> } {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', (d) => {
    stdout += d
  })
  child.stderr?.on('data', (d) => {
    stderr += d
  })
  const done = new Promise<CliRun>((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }))
  })
  return { child, done }
}
