/**
 * Creating a local directory and its missing parents, one level at a time.
 *
 * Node's `mkdir(dir, { recursive: true })` never returns on a path whose parent cannot hold new
 * directories while `mkdir(2)` keeps answering ENOENT there (`/proc/x/t`: procfs refuses new
 * entries with ENOENT, and Node's recursion takes ENOENT to mean "create the parent first", again
 * and again). This walk looks up which levels are missing first, then creates each one once, so
 * every path that cannot be created fails at once with the system's own error.
 */
import { mkdir, stat } from 'node:fs/promises'
import { dirname } from 'node:path'

/**
 * Creates `dir` and every missing parent. A directory that exists, or that a concurrent caller
 * creates meanwhile, is fine.
 *
 * @param dir - an absolute or relative local path
 * @param mode - the mode of the directories created (as `mkdir`'s)
 * @throws the system error (`ENOENT`, `ENOTDIR`, `EACCES`, `EROFS`, ...) of the first level
 *   that cannot be created or is not a directory; its `path` names that level
 */
export async function makeDirectories(dir: string, mode?: number): Promise<void> {
  const missing: string[] = []
  for (let at = dir; ; ) {
    const kind = await kindOf(at)
    if (kind === 'directory') break
    if (kind === 'other') throw notADirectory(at)
    missing.push(at)
    const parent = dirname(at)
    // The root itself missing: nothing left to walk up to; mkdir reports why below.
    if (parent === at) break
    at = parent
  }
  for (let i = missing.length - 1; i >= 0; i--) {
    const level = missing[i] as string
    try {
      await mkdir(level, mode === undefined ? undefined : { mode })
    } catch (err) {
      if (errnoOf(err) === 'EEXIST' && (await kindOf(level)) === 'directory') continue
      throw err
    }
  }
}

async function kindOf(path: string): Promise<'directory' | 'other' | 'missing'> {
  try {
    return (await stat(path)).isDirectory() ? 'directory' : 'other'
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return 'missing'
    throw err
  }
}

/** The error `mkdir(2)` gives for a level that exists and is not a directory. */
function notADirectory(path: string): NodeJS.ErrnoException {
  const err: NodeJS.ErrnoException = new Error(`ENOTDIR: not a directory, mkdir '${path}'`)
  err.code = 'ENOTDIR'
  err.errno = -20
  err.syscall = 'mkdir'
  err.path = path
  return err
}

function errnoOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : undefined
}
