/**
 * The scratch directory: private intermediate files of the engines of one process (write jobs,
 * checkpoint conversions, private copies of remote objects), deleted when done. A process killed
 * mid-job leaves its entries behind, so every entry is named `drlc-<pid>-...` after the process
 * that made it, and the first engine of a process sweeps the entries of processes that are gone.
 *
 * The sweep errs on the side of keeping: an entry whose pid runs (even a reused pid, or another
 * user's process), an entry of another user, an entry touched within the grace period (checked
 * on the entry and, for a directory, on what it holds) and any name it does not recognise stay.
 *
 * What the directory holds is read back and uploaded (checkpoints, written data files), so it must
 * be private: {@link ensureScratchDir} refuses a directory another user could write to, and a
 * checkpoint is checked against what DuckDB wrote before it is uploaded.
 */
import { chmod, lstat, mkdir, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { StorageError } from '../errors/index.js'
import { makeDirectories } from '../storage/make-directories.js'

/** Prefix of scratch entries: `drlc-<pid>-`. */
const ENTRY = /^drlc-(\d+)-/
/**
 * Names the scratch directory held before entries carried a pid: write-job directories,
 * checkpoint conversions and private copies (`<uuid>-<name>`).
 */
const LEGACY_ENTRY =
  /^(?:write-[A-Za-z0-9]{6}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?:\.checkpoint\.(?:json|parquet)|-.+))$/

/** Entries of dead processes younger than this stay (ms): 10 minutes. */
export const SCRATCH_GRACE_MS = 10 * 60_000
/** Entries without a pid in their name are swept only once this old (ms): one day. */
export const LEGACY_SCRATCH_GRACE_MS = 24 * 3_600_000

/**
 * The default scratch directory: `delta-rlc-scratch-<uid>` under the OS temp dir, one per user so
 * that no other account shares it.
 *
 * @returns the absolute path
 */
export function defaultScratchDir(): string {
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined
  return join(tmpdir(), uid === undefined ? 'delta-rlc-scratch' : `delta-rlc-scratch-${uid}`)
}

/**
 * Creates the scratch directory (mode 0700) or checks the one that exists: it must be a real
 * directory (not a link) of this user that no other user can write to. Another user able to
 * write there could replace a checkpoint between its write and its upload and so commit a table
 * state of their choosing. The default directory, which older versions created 0755, is made
 * 0700; a directory the caller chose is refused when others can write to it, never changed.
 *
 * @param dir - the scratch directory
 * @returns once the directory is usable
 * @throws {StorageError} when the directory is a link or not a directory, belongs to another
 *   user, or (a directory the caller chose) is writable by group or others
 */
export async function ensureScratchDir(dir: string): Promise<void> {
  const path = resolve(dir)
  // Level by level: Node's recursive mkdir spins on paths such as /proc/x.
  await makeDirectories(dirname(path))
  try {
    await mkdir(path, { mode: 0o700 })
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'EEXIST') throw err
  }
  const s = await lstat(path)
  const refuse = (why: string): never => {
    throw new StorageError(`Refusing the scratch directory ${path}: ${why}`, {
      path,
      hint: 'Remove it, or pass the engine option scratchDir (a directory of your own, mode 0700).',
    })
  }
  if (s.isSymbolicLink()) refuse('it is a symbolic link')
  if (!s.isDirectory()) refuse('it is not a directory')
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined
  if (uid !== undefined && s.uid !== uid) refuse(`it belongs to another user (uid ${s.uid})`)
  if (uid === undefined || (s.mode & 0o077) === 0) return
  if (path === resolve(defaultScratchDir())) await chmod(path, 0o700)
  else if ((s.mode & 0o022) !== 0)
    refuse(`group or others can write to it (mode ${(s.mode & 0o777).toString(8)})`)
}

/**
 * The name of a new scratch entry of this process.
 *
 * @param rest - what follows the pid (unique within the process, e.g. a UUID and a suffix)
 * @returns `drlc-<pid>-<rest>`
 */
export function scratchEntryName(rest: string): string {
  return `drlc-${process.pid}-${rest}`
}

/**
 * Whether a process runs: `kill(pid, 0)` succeeds, or is refused because the process belongs to
 * another user.
 *
 * @param pid - a process id
 * @returns false only when no such process exists
 */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as { code?: unknown } | null)?.code === 'EPERM'
  }
}

/** Options of {@link sweepScratchDir}. */
export interface ScratchSweepOptions {
  /** Keep entries of dead processes touched less than this long ago (default {@link SCRATCH_GRACE_MS}). */
  readonly graceMs?: number | undefined
  /** The same for entries without a pid (default {@link LEGACY_SCRATCH_GRACE_MS}). */
  readonly legacyGraceMs?: number | undefined
  /** The clock, ms since the epoch. */
  readonly now?: number | undefined
}

/**
 * Removes the entries that processes which no longer run left in a scratch directory (see the
 * module comment for what stays). Failures on single entries are skipped: the sweep is a
 * cleanup, and another sweeping process may race it.
 *
 * @param dir - the scratch directory; a missing one holds nothing
 * @param options - grace periods and clock
 * @returns the names removed
 */
export async function sweepScratchDir(dir: string, options: ScratchSweepOptions = {}): Promise<string[]> {
  const now = options.now ?? Date.now()
  const grace = options.graceMs ?? SCRATCH_GRACE_MS
  const legacyGrace = options.legacyGraceMs ?? LEGACY_SCRATCH_GRACE_MS
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined
  let names: string[]
  try {
    names = await readdir(dir)
  } catch {
    return []
  }
  const removed: string[] = []
  for (const name of names) {
    const pidText = ENTRY.exec(name)?.[1]
    let minAge: number
    if (pidText !== undefined) {
      const pid = Number(pidText)
      if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid || processAlive(pid)) continue
      minAge = grace
    } else if (LEGACY_ENTRY.test(name)) {
      minAge = legacyGrace
    } else {
      continue
    }
    const path = join(dir, name)
    try {
      const stats = await lstat(path)
      if (uid !== undefined && stats.uid !== uid) continue
      if (now - (await newestChange(path, stats.mtimeMs, stats.isDirectory())) < minAge) continue
      await rm(path, { recursive: true, force: true })
      removed.push(name)
    } catch {
      // Gone already, or not ours to remove: leave it.
    }
  }
  return removed
}

/** The latest modification time of an entry and, for a directory, of what it directly holds. */
async function newestChange(path: string, mtimeMs: number, isDirectory: boolean): Promise<number> {
  if (!isDirectory) return mtimeMs
  let newest = mtimeMs
  for (const child of await readdir(path)) {
    try {
      const m = (await lstat(join(path, child))).mtimeMs
      if (m > newest) newest = m
    } catch {
      // Removed meanwhile.
    }
  }
  return newest
}

const sweeps = new Map<string, Promise<void>>()

/**
 * Starts {@link sweepScratchDir} on `dir` once per process, in the background. It never fails
 * and never delays the caller.
 *
 * @param dir - the scratch directory
 * @returns the sweep, for callers (tests, `close()`) that want to wait for it
 */
export function sweepScratchDirOnce(dir: string): Promise<void> {
  const key = resolve(dir)
  let sweep = sweeps.get(key)
  if (sweep === undefined) {
    sweep = sweepScratchDir(key).then(
      () => undefined,
      () => undefined,
    )
    sweeps.set(key, sweep)
  }
  return sweep
}
