/**
 * Prints the test files `npm test` runs, one a line: every `test/**\/*.test.ts`, the known long
 * ones first (longest first), then the rest in path order.
 *
 * The runner starts files in the order given, two at a time. In path order a long file that sorts
 * late starts when most others are done, and one worker sits idle while it runs alone; started
 * first, the long files overlap each other and the short ones fill in around them. The list below
 * only orders: a file missing from it still runs, in path order, and a name that no longer exists
 * is ignored.
 *
 * Usage: `tsx scripts/test-files.ts` (the `test` script passes its output to `node --test`).
 */
import { readdirSync } from 'node:fs'
import { join } from 'node:path'

/**
 * Files measured at half a minute or more in a full run, longest first (crash-safety 125 s,
 * install 100 s, golden remote read 130 s under load 16, CLI commands 82 s, the benchmark smoke
 * run 80 s, serial equivalence 67 s, remote failures 60 s, remote race 53 s, ...).
 */
const LONG_FIRST = [
  'test/e2e/crash-safety.test.ts',
  'test/e2e/install.test.ts',
  'test/golden/remote-read.test.ts',
  'test/e2e/cli-commands.test.ts',
  'test/e2e/bench-quick.test.ts',
  'test/e2e/serial-equivalence.test.ts',
  'test/e2e/remote-failures.test.ts',
  'test/e2e/remote-race.test.ts',
  'test/unit/snapshot/advance-snapshot.test.ts',
  'test/e2e/race-disjoint.test.ts',
  'test/e2e/real-size-checkpointed.test.ts',
  'test/e2e/race-faults.test.ts',
  'test/e2e/deep-and-long-input.test.ts',
]

function testFiles(dir: string): string[] {
  const found: string[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) {
      for (const f of testFiles(path)) found.push(f)
    } else if (entry.isFile() && entry.name.endsWith('.test.ts')) {
      found.push(path)
    }
  }
  return found
}

const all = testFiles('test').sort()
const present = new Set(all)
const first = LONG_FIRST.filter((f) => present.has(f))
const early = new Set(first)
const ordered = first.concat(all.filter((f) => !early.has(f)))
process.stdout.write(`${ordered.join('\n')}\n`)
