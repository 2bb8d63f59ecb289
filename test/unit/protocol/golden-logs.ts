/**
 * Read-only access to the `_delta_log/` folders of the Spark-written golden tables in
 * `../shared/fixtures/delta-golden/`, for the protocol and log unit tests. Nothing is written.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')

/** The golden tables folder. */
export const GOLDEN_DIR = resolve(repoRoot, '../shared/fixtures/delta-golden')

/** Skip reason for tests that need the fixtures, or `false` when they are present. */
export const GOLDEN_SKIP: string | false = existsSync(join(GOLDEN_DIR, 'expected.json'))
  ? false
  : 'golden fixtures not found at ../shared/fixtures/delta-golden'

/** @returns the names of the golden tables that have a `_delta_log/` */
export function goldenTables(): string[] {
  if (GOLDEN_SKIP) return []
  return readdirSync(GOLDEN_DIR)
    .filter((t) => existsSync(join(GOLDEN_DIR, t, '_delta_log')))
    .sort()
}

/** @returns the file names directly inside a table's `_delta_log/` */
export function logFileNames(table: string): string[] {
  const dir = join(GOLDEN_DIR, table, '_delta_log')
  return readdirSync(dir)
    .filter((n) => statSync(join(dir, n)).isFile())
    .sort()
}

/** @returns the listing of a table's `_delta_log/` shaped like store `FileMeta`s */
export function logListing(table: string): { key: string; size: number; lastModified: number }[] {
  const dir = join(GOLDEN_DIR, table, '_delta_log')
  return logFileNames(table).map((n) => {
    const st = statSync(join(dir, n))
    return { key: `_delta_log/${n}`, size: st.size, lastModified: st.mtimeMs }
  })
}

/** @returns a log file's text */
export function readLogFile(table: string, name: string): string {
  return readFileSync(join(GOLDEN_DIR, table, '_delta_log', name), 'utf8')
}

/** @returns the parsed `expected.json` */
export function goldenExpected(): Record<string, { latestVersion: number | null; expectError?: string }> {
  return JSON.parse(readFileSync(join(GOLDEN_DIR, 'expected.json'), 'utf8'))
}
