/**
 * Run with a low descriptor limit (`ulimit -n`): opens the table given, uses up every file
 * descriptor left, then appends, and prints what the append failed with as one JSON line.
 */
import { openSync } from 'node:fs'
import { DeltaTable } from '../../src/table/delta-table.js'

const table = await DeltaTable.open(process.argv[2] as string)
// DuckDB and the code paths loaded before the descriptors run out.
for await (const _ of table.scan({ batchSize: 10 })) break
const held: number[] = []
for (;;) {
  try {
    held.push(openSync('/dev/null', 'r'))
  } catch {
    break
  }
}
const started = Date.now()
let report: Record<string, unknown> = { code: 'none' }
try {
  await table.append([{ id: -1n, s: 'x' }])
} catch (err) {
  const e = err as {
    code?: unknown
    retryable?: unknown
    resource?: unknown
    errno?: unknown
    message?: unknown
  }
  report = { code: e.code, retryable: e.retryable, resource: e.resource, errno: e.errno, message: e.message }
}
report.ms = Date.now() - started
process.stdout.write(`${JSON.stringify(report)}\n`)
process.exit(0)
