/**
 * Access to the Spark-written golden tables in `../shared/fixtures/delta-golden/` and their
 * documented preparation (README of that folder): DV file renames, the special-character
 * placeholder, commit mtimes for timestamp time travel, the truncated `_last_checkpoint`.
 * Tables are always copied to a temp dir first: the fixtures are never written.
 */
import { existsSync } from 'node:fs'
import { cp, mkdtemp, readFile, rename, rm, truncate, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..')

/** Folder of the golden tables, or undefined when `../shared` is absent (a user's own clone). */
export const GOLDEN_DIR: string | undefined = (() => {
  const dir = resolve(repoRoot, '../shared/fixtures/delta-golden')
  return existsSync(join(dir, 'expected.json')) ? dir : undefined
})()

/** The reason printed when golden tests skip. */
export const GOLDEN_SKIP = GOLDEN_DIR ? false : 'golden fixtures not found at ../shared/fixtures/delta-golden'

/** One table's entry in expected.json (the fields the tests use). */
export interface GoldenExpectation {
  readonly latestVersion: number | null
  readonly rowCount: number | null
  readonly partitionColumns: readonly string[]
  readonly expectError?: string
  readonly versions?: Readonly<Record<string, { rowCount?: number; activeFiles?: string[]; schema?: string }>>
  readonly activeFiles?: readonly string[]
  readonly columnMapping?: string
  readonly dvFileRenames?: Readonly<Record<string, string>>
  readonly logStats?: {
    numActiveFiles?: number
    sumNumRecords?: number | null
    numFilesWithDV?: number
    sumDvCardinality?: number
    checkpointVersion?: number
  }
  readonly expectedRows?: { columns: string[]; rows: unknown[][] }
}

/** expected.json, keyed by table name. */
export async function loadExpected(): Promise<Record<string, GoldenExpectation>> {
  if (!GOLDEN_DIR) return {}
  return JSON.parse(await readFile(join(GOLDEN_DIR, 'expected.json'), 'utf8'))
}

/** Start of the time-travel table's commits, per the fixture README. */
export const TIME_TRAVEL_START_MS = 1540415658000

/** A prepared private copy of a golden table. */
export interface PreparedTable {
  readonly dir: string
  cleanup(): Promise<void>
}

/**
 * Copies a golden table to a temp dir and applies its documented preparation.
 *
 * @param name - table folder name
 * @param options - `specialCharEncoded: false` fills the special-char template with the
 *   not-encoded (malformed) URI
 */
export async function prepareGoldenTable(
  name: string,
  options: { specialCharEncoded?: boolean } = {},
): Promise<PreparedTable> {
  if (!GOLDEN_DIR) throw new Error('golden fixtures are absent')
  const expected = (await loadExpected())[name]
  const base = await mkdtemp(join(tmpdir(), 'delta-rlc-golden-'))
  const dir = join(base, name)
  await cp(join(GOLDEN_DIR, name), dir, { recursive: true })
  for (const [from, to] of Object.entries(expected?.dvFileRenames ?? {})) {
    if (existsSync(join(dir, from))) await rename(join(dir, from), join(dir, to))
  }
  if (name === 'table-with-dv-special-char') {
    const log = join(dir, '_delta_log/00000000000000000000.json')
    const folder =
      options.specialCharEncoded === false
        ? `${dir}/folder&with%special char`
        : `${dir}/folder&with%25special%20char`
    await writeFile(log, (await readFile(log, 'utf8')).replaceAll('{{FOLDER_WITH_SPECIAL_CHAR}}', folder))
  }
  if (name === 'time-travel-start-start20-start40') {
    for (let v = 0; v < 3; v++) {
      const t = new Date(TIME_TRAVEL_START_MS + v * 20 * 60_000)
      await utimes(join(dir, `_delta_log/0000000000000000000${v}.json`), t, t)
    }
  }
  if (name === 'corrupted-last-checkpoint') await truncate(join(dir, '_delta_log/_last_checkpoint'), 0)
  return { dir, cleanup: () => rm(base, { recursive: true, force: true }) }
}
