/**
 * `npm run demo`: the full race, exactly `delta-rlc demo --full` (one implementation serves both,
 * so the command an installed package offers and the one a checkout runs never drift apart).
 *
 * Seven writer processes (two appenders, two DELETE writers, one UPDATE, one MERGE and one
 * OPTIMIZE) work on different rows that share data files, first with file-level conflict checking
 * (as open-source Delta), then with row-level reconciliation, on the same seeded workload. A
 * verifier replays every commit on a model afterwards; an HTML report is written next to the
 * tables. About a minute on two cores.
 *
 * Usage: `npm run demo [-- --duration 30s] [--dir DIR]`. The quick look (seconds) is
 * `delta-rlc demo`.
 */
process.argv.splice(2, 0, 'demo', '--full')
await import('../src/cli/main.js')
