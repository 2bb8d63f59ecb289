/**
 * Prints the test files `npm test` runs, one a line: every `test/**\/*.test.ts` but the live-peer
 * tier under `test/peers/` (its own script, `npm run test:peers`, runs it), the known long ones
 * first (longest first), then the rest in path order.
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
 * Files at about twenty seconds or more, longest first. Figures: each file's suites in the full
 * CI run on 2 cores (test phase 809 s): crash safety 143 s (it keeps both cores busy), serial
 * equivalence 115 s, install 96 s, the benchmark smoke run 95 s, golden remote read 58 s,
 * real-size checkpointed 48 s, race disjoint 42 s, deep and long input 35 s, remote put-if-absent
 * race 30 s, advance snapshot 27 s, race faults 24 s, race HTML 20 s, expired log cleanup 20 s,
 * race hot keys 16 s. Files that shortened since are placed below their figure in that run:
 * CLI commands (99 s, then a subprocess per command; now in-process but for the
 * binary's own checks), remote failures (50 s; its two stores now run side by side and Azurite
 * stops at once), remote race (41 s; its three races side by side), and remote store failures
 * (23 s; its two stores side by side), now under the cut.
 */
const LONG_FIRST = [
  'test/e2e/crash-safety.test.ts',
  'test/e2e/serial-equivalence.test.ts',
  'test/e2e/install.test.ts',
  'test/e2e/bench-quick.test.ts',
  'test/golden/remote-read.test.ts',
  'test/e2e/real-size-checkpointed.test.ts',
  'test/e2e/cli-commands.test.ts',
  'test/e2e/race-disjoint.test.ts',
  'test/e2e/deep-and-long-input.test.ts',
  'test/contract/remote-store-race.test.ts',
  'test/e2e/remote-failures.test.ts',
  'test/unit/snapshot/advance-snapshot.test.ts',
  'test/e2e/remote-race.test.ts',
  'test/e2e/race-faults.test.ts',
  'test/e2e/race-html.test.ts',
  'test/e2e/log-cleanup-expired.test.ts',
  'test/e2e/race-hot-keys.test.ts',
]

/** The live-peer tier: Spark and delta-rs processes, on top of the main suite's budget. */
const PEER_TIER = join('test', 'peers')

function testFiles(dir: string): string[] {
  const found: string[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) {
      if (path === PEER_TIER) continue
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
