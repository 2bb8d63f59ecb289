import { randomUUID } from 'node:crypto'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { ObjectStore } from '../storage/object-store.js'

/** A local file that holds an object's bytes, and how to let it go. */
export interface StagedFile {
  /** Absolute local path DuckDB can read. */
  readonly path: string
  /** Removes the copy when one was made; a no-op for files read in place. */
  release(): Promise<void>
}

/**
 * Gives the data plane a local path for an object: the file itself when the store is a local
 * directory, otherwise a private copy under `scratchDir`.
 *
 * @throws {FileNotFoundError} when the object does not exist
 */
export async function stageForRead(
  store: ObjectStore,
  key: string,
  scratchDir: string,
  signal?: AbortSignal,
): Promise<StagedFile> {
  if (store.localPath) {
    await store.head(key, { signal })
    return { path: store.localPath(key), release: async () => {} }
  }
  const bytes = await store.read(key, undefined, { signal })
  await mkdir(scratchDir, { recursive: true })
  const path = join(scratchDir, `${randomUUID()}-${key.slice(key.lastIndexOf('/') + 1)}`)
  await writeFile(path, bytes)
  return { path, release: () => rm(path, { force: true }) }
}
